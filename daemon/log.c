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

void log_msg(enum log_level level, const char *fmt, ...)
{
        char line[1024];
        int saved_errno = errno;
        struct timespec ts;
        va_list ap;
        int n;

        if (level > log_max_level)
                return;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        n = snprintf(line, sizeof(line), "sluice-fs[%d] %5lld.%06ld %s: ", (int)getpid(),
                     (long long)ts.tv_sec, ts.tv_nsec / 1000, level_names[level]);
        if (n < 0)
                n = 0;
        va_start(ap, fmt);
        vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
        va_end(ap);
        /* One write() per line so that lines of different queue threads never interleave. */
        n = (int)strnlen(line, sizeof(line) - 2);
        line[n++] = '\n';
        (void)!write(STDERR_FILENO, line, (size_t)n);
        errno = saved_errno;
}
