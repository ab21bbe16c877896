/* SPDX-License-Identifier: GPL-2.0-or-later */
/* control-client.c — see control-client.h. */
#include "control-client.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define WORKER1_PATH "/org/sluice/Worker1"
#define WORKER1_IFACE "org.sluice.Worker1"
/* how long a worker may take to set up (sandbox, sockets) under sanitizers */
#define START_TIMEOUT_US (30 * G_USEC_PER_SEC)

sd_bus *control_client_start(Harness *h)
{
        g_autofree char *opt = NULL;
        gint64 deadline = g_get_monotonic_time() + START_TIMEOUT_US;
        struct stat st;
        sd_bus *bus = NULL;
        int sv[2];

        g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
        opt = g_strdup_printf("--control-fd=%d", sv[1]);
        {
                const char *const extra[] = { opt, NULL };
                g_autoptr(GPtrArray) argv = harness_daemon_argv(h, TRUE, extra);

                h->pid = harness_spawn(argv, sv[1]);
                close(sv[1]);
        }
        /* the worker listens once it is set up: then it serves both */
        while (lstat(h->socket, &st) < 0) {
                harness_assert_alive(h);
                g_assert_cmpint(g_get_monotonic_time(), <, deadline);
                g_usleep(10000);
        }
        g_assert_cmpint(sd_bus_new(&bus), >=, 0);
        g_assert_cmpint(sd_bus_set_fd(bus, sv[0], sv[0]), >=, 0);
        g_assert_cmpint(sd_bus_start(bus), >=, 0);
        return bus;
}

char *control_client_get(sd_bus *bus, const char *property)
{
        sd_bus_error error = SD_BUS_ERROR_NULL;
        char *value = NULL;
        int r = sd_bus_get_property_string(bus, NULL, WORKER1_PATH, WORKER1_IFACE, property, &error, &value);

        if (r < 0)
                g_error("Get %s: %s", property, error.message != NULL ? error.message : strerror(-r));
        sd_bus_error_free(&error);
        {
                char *copy = g_strdup(value);

                free(value);
                return copy;
        }
}

int control_client_set_names(sd_bus *bus, const char *names, const char *case_, char **error_name)
{
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int r = sd_bus_call_method(bus, NULL, WORKER1_PATH, WORKER1_IFACE, "SetNames", &error, &reply, "ss",
                                   names, case_);

        if (error_name != NULL)
                *error_name = r < 0 && error.name != NULL ? g_strdup(error.name) : NULL;
        sd_bus_error_free(&error);
        sd_bus_message_unref(reply);
        return r < 0 ? r : 0;
}
