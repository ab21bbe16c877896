/* SPDX-License-Identifier: GPL-2.0-or-later */
/* control-client.h — the service's end of a worker's control channel
 * (org.sluice.Worker1 over --control-fd), for the frontend tests that
 * switch a running worker as sluice-service does.
 *
 * sd-bus, not GDBus: GDBus runs a thread of its own whose locks (GLib's
 * futex mutexes) ThreadSanitizer cannot see, so the TSan pass would
 * report GLib's internals; sd-bus works in the caller's thread. */
#pragma once

#include <systemd/sd-bus.h>

#include "harness.h"

/* Starts H's worker with a control channel, waits until it listens and
 * returns the channel (the worker's pid in h->pid).  Asserts on failure. */
sd_bus *control_client_start(Harness *h);

/* Worker1's property PROPERTY (a string), newly allocated. */
char *control_client_get(sd_bus *bus, const char *property);

/* Worker1.SetNames(NAMES, CASE): 0, or -errno with the D-Bus error's name
 * in *ERROR_NAME (may be NULL) when the worker refused. */
int control_client_set_names(sd_bus *bus, const char *names, const char *case_, char **error_name);
