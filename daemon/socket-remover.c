/* SPDX-License-Identifier: GPL-2.0-or-later */
/* socket-remover.c — a helper process that removes a sealed root worker's
 * socket (socket-remover.h). */
#include "socket-remover.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

#define SOCKRM_REMOVE 'r'
#define SOCKRM_DONE 'd'

static _Noreturn void helper_main(int sock, int dir_fd, const char *name, dev_t dev, ino_t ino)
{
        struct stat st;
        char c = 0;
        ssize_t n;

        (void)prctl(PR_SET_NAME, "sluice-fs-sock", 0, 0, 0);
        util_close_all_but(sock, dir_fd);
        do
                n = read(sock, &c, 1);
        while (n < 0 && errno == EINTR);
        /* A request, or the worker gone: either way its socket goes. */
        if ((n == 0 || c == SOCKRM_REMOVE) &&
            fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == dev &&
            st.st_ino == ino)
                (void)unlinkat(dir_fd, name, 0);
        c = SOCKRM_DONE;
        (void)send(sock, &c, 1, MSG_NOSIGNAL);
        _exit(0);
}

int sockrm_start(int dir_fd, const char *name, dev_t dev, ino_t ino)
{
        int pair[2];
        pid_t pid;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0) {
                log_warning("socket remover: socketpair: %s", strerror(errno));
                return -errno;
        }
        pid = fork();
        if (pid < 0) {
                int r = -errno;

                log_warning("socket remover: fork: %s", strerror(-r));
                close(pair[0]);
                close(pair[1]);
                return r;
        }
        if (pid == 0)
                helper_main(pair[1], dir_fd, name, dev, ino);
        close(pair[1]);
        return pair[0];
}

void sockrm_remove(int fd)
{
        char c = SOCKRM_REMOVE;
        ssize_t n;

        if (fd < 0)
                return;
        if (send(fd, &c, 1, MSG_NOSIGNAL) == 1)
                do
                        n = recv(fd, &c, 1, 0);
                while (n < 0 && errno == EINTR);
        close(fd);
}
