/* SPDX-License-Identifier: GPL-2.0-or-later */
/* log.h — leveled logging to stderr for sluice-fs.
 *
 * The data plane logs sparingly: errors and state changes at info, one line
 * per FUSE request at debug (the request trace).  log_debug() costs one
 * branch when debug is off, so it may sit on the hot path. */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

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

/* Rate limiting for lines a guest can trigger at will (refused requests):
 * at most LOG_RATELIMIT_BURST lines per LOG_RATELIMIT_INTERVAL_USEC for each
 * limiter; the first line after a quiet stretch says how many were dropped.
 * One static limiter per kind of message:
 *   static struct log_ratelimit rl = LOG_RATELIMIT_INIT;
 *   log_ratelimited(&rl, LOG_LEVEL_WARNING, "refused ...", ...); */
#define LOG_RATELIMIT_BURST          10
#define LOG_RATELIMIT_INTERVAL_USEC  (60 * 1000000ull)

struct log_ratelimit {
        pthread_mutex_t mutex;
        uint64_t window_start_usec;
        unsigned in_window;          /* lines logged in the current window */
        unsigned suppressed;         /* lines dropped since the last one logged */
};
#define LOG_RATELIMIT_INIT { .mutex = PTHREAD_MUTEX_INITIALIZER }

/* The decision alone, at time now_usec: true when a line may be logged; then
 * *ret_suppressed is the number dropped before it (and reset). */
bool log_ratelimit_pass(struct log_ratelimit *rl, uint64_t now_usec, unsigned *ret_suppressed);

void log_ratelimited(struct log_ratelimit *rl, enum log_level level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
