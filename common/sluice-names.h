/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sluice-names.h — where org.sluice.Sluice1 lives on the session bus: the
 * bus name, the object paths and the interface names, written once for the
 * service, its clients and the tests (data/org.sluice.Sluice1.xml is the API
 * itself; these are the addresses the XML does not say). */
#pragma once

#define SLUICE_BUS_NAME "org.sluice.Sluice1"

/* The Manager interface and the ObjectManager every share and VM is under. */
#define SLUICE_OBJECT_ROOT "/org/sluice/Sluice1"
#define SLUICE_MANAGER_PATH SLUICE_OBJECT_ROOT
/* A share is SLUICE_SHARE_PATH_PREFIX "<id>"; a VM is SLUICE_VM_PATH_PREFIX
 * followed by its UUID's hex digits in lower case. */
#define SLUICE_SHARE_PATH_PREFIX SLUICE_OBJECT_ROOT "/share/"
#define SLUICE_VM_PATH_PREFIX SLUICE_OBJECT_ROOT "/vm/"

#define SLUICE_MANAGER_INTERFACE SLUICE_BUS_NAME ".Manager"
#define SLUICE_SHARE_INTERFACE SLUICE_BUS_NAME ".Share"
#define SLUICE_VM_INTERFACE SLUICE_BUS_NAME ".Vm"
/* The named D-Bus errors (errors.h) are SLUICE_ERROR_NAME_PREFIX "NotFound", … */
#define SLUICE_ERROR_NAME_PREFIX SLUICE_BUS_NAME ".Error."
