/* SPDX-License-Identifier: GPL-2.0-or-later */
/* notify.h — sluice-fs's side of systemd's readiness protocol (sd_notify(3)),
 * so that a unit with Type=notify (data/sluice-fs@.service.in) knows when the
 * worker is ready, what it is doing and when it stops.  Without
 * $NOTIFY_SOCKET every call does nothing. */
#pragma once

#include <systemd/sd-event.h>

/* With WatchdogSec= set ($WATCHDOG_USEC for this pid), the event loop itself
 * sends WATCHDOG=1 (every half to three quarters of the interval): a main
 * loop that hangs stops the pings.  Returns 0 or -errno. */
int notify_watchdog_setup(sd_event *event);

/* READY=1 with a STATUS= line; call once the socket listens. */
void notify_ready(const char *status_format, ...) __attribute__((format(printf, 1, 2)));

/* A STATUS= line (systemctl status shows the last one). */
void notify_status(const char *status_format, ...) __attribute__((format(printf, 1, 2)));

/* STOPPING=1: the worker is shutting down. */
void notify_stopping(void);
