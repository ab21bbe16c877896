/* SPDX-License-Identifier: GPL-2.0-or-later */
/* util.h — the daemon's small shared helpers: scoped cleanup in the systemd
 * style, so error paths are plain `return -errno;` with no goto ladders.
 *
 *   _cleanup_close_ int fd = openat(...);    closed when fd goes out of scope
 *   _cleanup_free_ char *p = malloc(...);     freed likewise
 *   return TAKE_FD(fd);                        hands ownership on: no close */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

static inline void util_closep(int *fd)
{
        if (*fd >= 0) {
                int saved = errno;   /* a cleanup must not clobber the errno being returned */
                (void) close(*fd);
                errno = saved;
        }
}

static inline void util_freep(void *p)
{
        free(*(void **) p);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_close_ _cleanup_(util_closep)
#define _cleanup_free_ _cleanup_(util_freep)

/* Returns the value of a variable and resets it, so its cleanup does nothing. */
#define TAKE_FD(fd) ({ int _fd = (fd); (fd) = -1; _fd; })
#define TAKE_PTR(p) ({ __typeof__(p) _p = (p); (p) = NULL; _p; })

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

/* Closes every fd of the process but `x` and `y` (in either order, distinct):
 * what a helper process forked from the worker keeps of it. */
static inline void util_close_all_but(int x, int y)
{
        const int a = x < y ? x : y, b = x < y ? y : x;

        if (a > 0)
                (void)close_range(0, (unsigned)a - 1, 0);
        if (b > a + 1)
                (void)close_range((unsigned)a + 1, (unsigned)b - 1, 0);
        (void)close_range((unsigned)b + 1, ~0U, 0);
}

/* The struct that holds `ptr` as its member `member`. */
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
