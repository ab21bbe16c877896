/* SPDX-License-Identifier: GPL-2.0-or-later */
/* harness.h — runs the backend under test for the frontend suites.
 *
 * The backend is $SLUICE_FS, by default $SLUICE_BUILD_ROOT/daemon/sluice-fs.
 * QEMU's legacy C virtiofsd (/usr/lib/qemu/virtiofsd) works too, for checking
 * the test VMM itself: sluice-fs option spellings are translated, and tests
 * of sluice-fs's own behaviour skip (harness_require_sluice()).
 *
 * Each harness has a temp directory holding share/ (the shared folder),
 * outside/ (a canary file confinement attacks must not touch) and the
 * socket.  Run as root with $SLUICE_TEST_USER set, the daemon runs as that
 * user and the directory belongs to it.  The daemon dies with the test
 * (PR_SET_PDEATHSIG) and is killed on harness_free().  $SLUICE_FS_EXTRA_ARGS
 * (space-separated) is appended to every daemon's options, for debugging. */
#pragma once

#include <glib.h>
#include <stdbool.h>
#include <sys/types.h>

#include "vmm.h"

typedef struct {
        char *dir;          /* temp root */
        char *share;        /* dir/share: the shared folder */
        char *outside;      /* dir/outside: holds "canary" */
        char *socket;       /* dir/fs.sock */
        char *canary_snapshot;
        GPid pid;           /* 0 when not running */
        struct vmm *vmm;    /* the connection of harness_connect() */
} Harness;

const char *harness_daemon_path(void);
gboolean harness_is_legacy(void);
/* Skips the current test (returns FALSE) when the backend is the legacy daemon. */
gboolean harness_require_sluice(const char *why);

Harness *harness_new(void);
void harness_free(Harness *h);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Harness, harness_free)

/* argv for the daemon: sluice-fs spellings (--readonly, --xattr, --queues=N,
 * --fd=N…) added to --socket-path and --shared-dir.  With use_socket FALSE
 * no --socket-path is given (for --fd; harness_spawn() keeps that fd open). */
GPtrArray *harness_daemon_argv(Harness *h, gboolean use_socket, const char *const *extra);
/* Starts the daemon with extra options and waits for its socket. */
void harness_start(Harness *h, const char *const *extra);
/* The same for an argv of harness_daemon_argv() the caller changed (say, run
 * through prlimit(1)): it must create h->socket. */
void harness_start_argv(Harness *h, GPtrArray *argv);
/* Starts argv with stdin/out/err inherited, as the test user; keep_fd stays open in the child. */
GPid harness_spawn(GPtrArray *argv, int keep_fd);
/* Runs argv to completion as the daemon's user (stdout and stderr captured,
 * killed after 30 s); returns its wait status. */
int harness_run(const char *const *argv, char **ret_out, char **ret_err);
/* Connects a new VMM (cfg may be NULL) and sends FUSE INIT; asserts success. */
struct vmm *harness_connect(Harness *h, const struct vmm_config *cfg);
/* harness_start + harness_connect into h->vmm. */
void harness_up(Harness *h, const char *const *extra);

/* Waits up to timeout_ms for the daemon to exit; TRUE and its wait status if it did. */
gboolean harness_wait_exit(Harness *h, int timeout_ms, int *ret_status);
gboolean harness_daemon_alive(Harness *h);
/* Whether the running daemon lives in a mount namespace of its own: a root
 * worker pivoted into the share (and, where nothing stops it, sealed there:
 * mount-namespace.h); FALSE in sanitizer builds, which leave it out. */
gboolean harness_daemon_pivoted(Harness *h);
/* Whether the running daemon has a metadata helper (daemon/metadata-helper.h):
 * a child named sluice-fs-meta in a user namespace of its own.  A desktop
 * user's worker starts one before it serves, unless a sanitizer build or the
 * system (unprivileged user namespaces refused) leaves it out. */
gboolean harness_daemon_metadata_helper(Harness *h);
/* Asserts the daemon is alive (did not crash). */
void harness_assert_alive(Harness *h);
/* Asserts the daemon exits with status 0 within timeout_ms (after `what`). */
void harness_assert_clean_exit(Harness *h, int timeout_ms, const char *what);

/* Host-side helpers; rel is relative to the share. */
char *harness_path(Harness *h, const char *rel);
void harness_write(Harness *h, const char *rel, const char *content);
char *harness_read(Harness *h, const char *rel);   /* NULL if missing */
void harness_mkdir(Harness *h, const char *rel);
void harness_symlink(Harness *h, const char *target, const char *rel);
void harness_chown_to_user(const char *path);
/* A stable text description of a tree: every entry's path, type, mode, size,
 * content checksum or link target. */
char *harness_snapshot(const char *dir);
/* Asserts nothing changed outside the share (canary and its directory). */
void harness_assert_outside_untouched(Harness *h);

/* Later daemons run as root (TRUE) or as the test user again (FALSE): a worker
 * started by root, as libvirt's <binary> route starts it.  Skips the test and
 * returns FALSE when the test does not run as root.  harness_daemon_uid()
 * still names the test user: it owns the harness's directories either way. */
gboolean harness_daemon_as_root(gboolean as_root);

/* The user the daemon runs as (the test user, or ourselves). */
uid_t harness_daemon_uid(void);
gid_t harness_daemon_gid(void);

/* Checks an errno-style result.  Like g_assert_cmp*() under
 * g_test_set_nonfatal_assertions() (every frontend test program sets it), a
 * mismatch fails the test and carries on, so one run lists every failure. */
#define assert_errno(expr, expected)                                                     \
        do {                                                                             \
                int r__ = (expr);                                                        \
                int e__ = (expected);                                                    \
                if (r__ != e__) {                                                        \
                        g_test_message("FAIL %s:%d: %s = %d (%s), expected %d (%s)",      \
                                       __FILE__, __LINE__, #expr, r__,                   \
                                       r__ ? strerrorname_np(-r__) : "0", e__,           \
                                       e__ ? strerrorname_np(-e__) : "0");               \
                        g_test_fail();                                                   \
                }                                                                        \
        } while (0)
#define assert_ok(expr) assert_errno((expr), 0)

/* g_test_init() plus the nonfatal assertions of assert_errno(). */
void harness_test_init(int *argc, char ***argv);
