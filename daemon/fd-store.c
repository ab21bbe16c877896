/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fd-store.c — see fd-store.h. */
#include "fd-store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "log.h"

/* The keeper accepts at most 512 fds per worker (protocol): no more come back. */
#define FDSTORE_MAX_PASSED 512

struct passed_fd {
        int fd;               /* -1 once taken or closed */
        char name[FDSTORE_NAME_MAX + 1];
};

static bool enabled;
static struct passed_fd passed[FDSTORE_MAX_PASSED];
static unsigned n_passed;

bool fdstore_name_valid(const char *name)
{
        size_t n = strlen(name);

        if (n == 0 || n > FDSTORE_NAME_MAX)
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = name[i];

                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-'))
                        return false;
        }
        return true;
}

void fdstore_name(char *buf, size_t size, const char *prefix, unsigned n)
{
        snprintf(buf, size, "%s-%u", prefix, n);
}

int fdstore_init(bool on)
{
        char **names = NULL;
        int n;

        enabled = on;
        if (!on)
                return 0;
        /* 1: unset LISTEN_* so that no helper we start sees them. */
        n = sd_listen_fds_with_names(1, &names);
        if (n < 0) {
                log_error("cannot read the stored fds ($LISTEN_FDS): %s", strerror(-n));
                return n;
        }
        for (int i = 0; i < n; i++) {
                int fd = SD_LISTEN_FDS_START + i;
                const char *name = names && names[i] ? names[i] : "";

                if ((unsigned)i >= FDSTORE_MAX_PASSED || !fdstore_name_valid(name)) {
                        log_warning("stored fd %d has the name '%s', which is not one of ours; closed",
                                    fd, name);
                        close(fd);
                        continue;
                }
                passed[n_passed].fd = fd;
                snprintf(passed[n_passed].name, sizeof(passed[n_passed].name), "%s", name);
                n_passed++;
        }
        if (names) {
                for (int i = 0; names[i]; i++)
                        free(names[i]);
                free(names);
        }
        if (n > 0)
                log_info("the keeper passed %d stored fd%s", n, n == 1 ? "" : "s");
        return n;
}

bool fdstore_enabled(void)
{
        return enabled;
}

int fdstore_take(const char *name)
{
        for (unsigned i = 0; i < n_passed; i++)
                if (passed[i].fd >= 0 && strcmp(passed[i].name, name) == 0) {
                        int fd = passed[i].fd;

                        passed[i].fd = -1;
                        return fd;
                }
        return -ENOENT;
}

bool fdstore_has(const char *name)
{
        for (unsigned i = 0; i < n_passed; i++)
                if (passed[i].fd >= 0 && strcmp(passed[i].name, name) == 0)
                        return true;
        return false;
}

void fdstore_close_untaken(void)
{
        for (unsigned i = 0; i < n_passed; i++)
                if (passed[i].fd >= 0) {
                        log_debug("stored fd '%s' is not used; closed", passed[i].name);
                        close(passed[i].fd);
                        passed[i].fd = -1;
                }
}

void fdstore_drop_all_but(const char *keep)
{
        for (unsigned i = 0; i < n_passed; i++) {
                if (strcmp(passed[i].name, keep) == 0)
                        continue;
                (void)fdstore_remove(passed[i].name);
                if (passed[i].fd >= 0) {
                        close(passed[i].fd);
                        passed[i].fd = -1;
                }
        }
}

int fdstore_store(const char *name, int fd)
{
        char msg[64 + FDSTORE_NAME_MAX];
        int r;

        if (!enabled || fd < 0)
                return 0;
        snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=%s", name);
        r = sd_pid_notify_with_fds(0, 0, msg, &fd, 1);
        if (r < 0) {
                log_warning("cannot store fd '%s' with the keeper: %s", name, strerror(-r));
                return r;
        }
        return 0;
}

int fdstore_remove(const char *name)
{
        char msg[64 + FDSTORE_NAME_MAX];
        int r;

        if (!enabled)
                return 0;
        snprintf(msg, sizeof(msg), "FDSTOREREMOVE=1\nFDNAME=%s", name);
        r = sd_notify(0, msg);
        if (r < 0) {
                log_warning("cannot remove fd '%s' from the keeper's store: %s", name, strerror(-r));
                return r;
        }
        return 0;
}

int fdstore_replace(const char *name, int fd)
{
        (void)fdstore_remove(name);
        return fdstore_store(name, fd);
}
