/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fake-guest-agent.h — a pretend guest behind libvirt's
 * virDomainQemuAgentCommand, for unit tests of guest-*.c's procedures.
 * Linked into a test program, its definition of that function is the one
 * the service's library calls (the domain pointer is not looked at).
 *
 * It keeps files (guest-file-open/read/write/close, created 0600 as
 * qemu-ga does) and runs a few programs as /bin/NAME: cp -p, mv -f, rm -f,
 * readlink -f, chmod.  It can be made to fail as a real guest does: a full
 * disk, or an agent command failing the way libvirt reports it (NULL and
 * libvirt's last error set to a message of the test's choosing).
 *
 * Not thread-safe: the tests call the procedures on their own thread. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Forgets every file, fault and logged request. */
void fake_guest_reset(void);
/* Puts a file (LEN -1: DATA is a string) with MODE into the guest. */
void fake_guest_put_file(const char *path, const char *data, gssize len, guint mode);
/* A file's contents, or NULL when the guest has none; MODE may be NULL. */
GBytes *fake_guest_get_file(const char *path, guint *mode);
/* The guest's file system holds at most BYTES of file data in all (a full
 * disk: writes beyond fail with ENOSPC after writing what fits); -1: no limit. */
void fake_guest_set_space(gssize bytes);
/* The NTH call of agent command COMMAND (0: every call) fails as libvirt
 * reports an agent's error: MESSAGE as libvirt's last error.  A NULL
 * COMMAND: nothing fails. */
void fake_guest_fail(const char *command, guint nth, const char *message);
/* Whether a request was seen, as a line: "guest-file-open /etc/fstab w",
 * "guest-exec /bin/mv -f /etc/.fstab.sluice /etc/fstab". */
gboolean fake_guest_saw(const char *line);

G_END_DECLS
