/* SPDX-License-Identifier: GPL-2.0-or-later */
/* notify.c — sd_notify(3) messages of sluice-fs (notify.h).
 *
 * The messages go out from the main thread after the sandbox is up: sandbox.c
 * lets the one datagram socket sd_notify() makes through when $NOTIFY_SOCKET
 * is set, and does not scope abstract sockets away when it names one. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-daemon.h>

#include "log.h"
#include "notify.h"

/* Longer STATUS= lines are cut: a folder's name may be long. */
#define NOTIFY_STATUS_MAX 512

int notify_watchdog_setup(sd_event *event)
{
        int r = sd_event_set_watchdog(event, 1);

        if (r < 0)
                return r;
        if (r > 0)
                log_debug("watchdog: pinging systemd from the event loop");
        return 0;
}

__attribute__((format(printf, 2, 0)))
static void notify_with_status(const char *prefix, const char *status_format, va_list args)
{
        char status[NOTIFY_STATUS_MAX];
        char message[sizeof(status) + 32];
        int r;

        (void)vsnprintf(status, sizeof(status), status_format, args);
        /* One message, one line each: a newline in a name would start a field. */
        for (char *p = status; *p; p++)
                if (*p == '\n')
                        *p = ' ';
        (void)snprintf(message, sizeof(message), "%sSTATUS=%s", prefix, status);
        r = sd_notify(0, message);
        if (r < 0)
                log_warning("cannot notify the service manager: %s", strerror(-r));
}

void notify_ready(const char *status_format, ...)
{
        va_list args;

        va_start(args, status_format);
        notify_with_status("READY=1\n", status_format, args);
        va_end(args);
}

void notify_status(const char *status_format, ...)
{
        va_list args;

        va_start(args, status_format);
        notify_with_status("", status_format, args);
        va_end(args);
}

void notify_stopping(void)
{
        (void)sd_notify(0, "STOPPING=1\nSTATUS=Stopping");
}
