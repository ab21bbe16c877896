/* log.h — leveled logging to stderr for sluice-fs.
 *
 * The data plane logs sparingly: errors and state changes at info, one line
 * per FUSE request at debug (the request trace).  log_debug() costs one
 * branch when debug is off, so it may sit on the hot path. */
#pragma once

#include <stdbool.h>

enum log_level {
        LOG_LEVEL_ERROR = 0,
        LOG_LEVEL_WARNING,
        LOG_LEVEL_INFO,
        LOG_LEVEL_DEBUG,
};

extern enum log_level log_max_level;

/* Parses "error", "warning", "info" or "debug"; returns -EINVAL otherwise. */
int log_parse_level(const char *s, enum log_level *ret);
void log_set_level(enum log_level level);

void log_msg(enum log_level level, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

#define log_error(...)   log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_LEVEL_WARNING, __VA_ARGS__)
#define log_info(...)                                                   \
        do { if (log_max_level >= LOG_LEVEL_INFO) log_msg(LOG_LEVEL_INFO, __VA_ARGS__); } while (0)
#define log_debug(...)                                                  \
        do { if (__builtin_expect(log_max_level >= LOG_LEVEL_DEBUG, 0)) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__); } while (0)
#define log_debug_enabled() (log_max_level >= LOG_LEVEL_DEBUG)
