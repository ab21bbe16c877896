/* SPDX-License-Identifier: GPL-2.0-or-later */
/* log.c — see log.h. */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum log_level log_max_level = LOG_LEVEL_INFO;

static const char *const level_names[] = {
        [LOG_LEVEL_ERROR] = "error",
        [LOG_LEVEL_WARNING] = "warning",
        [LOG_LEVEL_INFO] = "info",
        [LOG_LEVEL_DEBUG] = "debug",
};

int log_parse_level(const char *s, enum log_level *ret)
{
        for (unsigned i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
                if (strcmp(s, level_names[i]) == 0) {
                        *ret = (enum log_level)i;
                        return 0;
                }
        return -EINVAL;
}

void log_set_level(enum log_level level)
{
        log_max_level = level;
}

/* One line: the prefix, the message and an optional suffix, in one write(). */
__attribute__((format(printf, 3, 0)))
static void log_vmsg(enum log_level level, const char *suffix, const char *fmt, va_list ap)
{
        char line[1024];
        int saved_errno = errno;
        struct timespec ts;
        int n;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        n = snprintf(line, sizeof(line), "sluice-fs[%d] %5lld.%06ld %s: ", (int)getpid(),
                     (long long)ts.tv_sec, ts.tv_nsec / 1000, level_names[level]);
        if (n < 0)
                n = 0;
        vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
        if (suffix) {
                n = (int)strnlen(line, sizeof(line) - 1);
                snprintf(line + n, sizeof(line) - (size_t)n, "%s", suffix);
        }
        /* One write() per line so that lines of different queue threads never interleave. */
        n = (int)strnlen(line, sizeof(line) - 2);
        line[n++] = '\n';
        (void)!write(STDERR_FILENO, line, (size_t)n);
        errno = saved_errno;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
        va_list ap;

        if (level > log_max_level)
                return;
        va_start(ap, fmt);
        log_vmsg(level, NULL, fmt, ap);
        va_end(ap);
}

bool log_ratelimit_pass(struct log_ratelimit *rl, uint64_t now_usec, unsigned *ret_suppressed)
{
        bool pass;

        pthread_mutex_lock(&rl->mutex);
        if (rl->in_window == 0 || now_usec - rl->window_start_usec >= LOG_RATELIMIT_INTERVAL_USEC) {
                rl->window_start_usec = now_usec;
                rl->in_window = 0;
        }
        pass = rl->in_window < LOG_RATELIMIT_BURST;
        if (pass) {
                rl->in_window++;
                *ret_suppressed = rl->suppressed;
                rl->suppressed = 0;
        } else {
                rl->suppressed++;
        }
        pthread_mutex_unlock(&rl->mutex);
        return pass;
}

void log_ratelimited(struct log_ratelimit *rl, enum log_level level, const char *fmt, ...)
{
        char suffix[80] = "";
        struct timespec ts;
        unsigned suppressed;
        va_list ap;

        if (level > log_max_level)
                return;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if (!log_ratelimit_pass(rl, (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000,
                                &suppressed))
                return;
        if (suppressed)
                snprintf(suffix, sizeof(suffix), " (%u similar messages suppressed before this one)",
                         suppressed);
        va_start(ap, fmt);
        log_vmsg(level, suffix, fmt, ap);
        va_end(ap);
}
