/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sluicectl-stats.c — "stats SHARE [--watch [--count N]]": a fresh sample
 * once (Share.SampleStats), or, watching (Share.WatchStats: the service
 * samples only while someone watches), each new value as the service
 * publishes it. */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include <glib-unix.h>
#include <glib/gi18n.h>

#include "sluicectl.h"
#include "state-labels.h"

static guint64 stat_u64(GVariant *stats, const char *key)
{
        guint64 value = 0;

        (void)g_variant_lookup(stats, key, "t", &value);
        return value;
}

static double stat_double(GVariant *stats, const char *key)
{
        double value = 0;

        (void)g_variant_lookup(stats, key, "d", &value);
        return value;
}

/* When the totals began (Share.Stats "since-us"): a time of day, with the
 * date when it is not today. */
static void print_stats_since(guint64 since_us)
{
        g_autoptr(GDateTime) since = NULL;
        g_autoptr(GDateTime) now = g_date_time_new_now_local();
        g_autofree char *when = NULL;

        if (since_us == 0)
                return;
        since = g_date_time_new_from_unix_local((gint64)(since_us / G_USEC_PER_SEC));
        if (since == NULL)
                return;
        when = g_date_time_format(since, g_date_time_get_day_of_year(since) ==
                                                 g_date_time_get_day_of_year(now) &&
                                         g_date_time_get_year(since) == g_date_time_get_year(now)
                                         ? "%H:%M:%S" : "%Y-%m-%d %H:%M:%S");
        /* Translators: %s is a time ("14:02:11") or a date and time */
        g_print(_("  totals since %s\n"), when);
}

static void print_stats(Ctl *ctl, SluiceShare *share, GVariant *stats)
{
        g_autoptr(GVariant) queues = NULL;
        g_autofree char *read_rate = NULL, *write_rate = NULL, *read_total = NULL, *write_total = NULL;

        if (ctl->json) {
                g_autoptr(JsonBuilder) b = json_builder_new();
                g_autoptr(JsonNode) root = NULL;

                json_builder_begin_object(b);
                json_builder_set_member_name(b, "tag");
                json_builder_add_string_value(b, sluice_share_get_tag(share));
                json_builder_set_member_name(b, "state");
                json_builder_add_string_value(b, sluice_share_get_state(share));
                json_builder_set_member_name(b, "stats");
                json_builder_add_value(b, json_gvariant_serialize(stats));
                json_builder_end_object(b);
                root = json_builder_get_root(b);
                ctl_print_json(root);
                return;
        }
        if (g_variant_n_children(stats) == 0) {
                /* Translators: the second %s is a share state ("Stopped", "Failed") */
                g_print(_("%s: no stats (share state: %s)\n"), sluice_share_get_tag(share),
                        sluice_share_state_label(sluice_share_get_state(share)));
                return;
        }
        read_rate = g_format_size((guint64)stat_double(stats, "read-bytes-per-sec"));
        write_rate = g_format_size((guint64)stat_double(stats, "write-bytes-per-sec"));
        read_total = g_format_size(stat_u64(stats, "bytes-read"));
        write_total = g_format_size(stat_u64(stats, "bytes-written"));
        g_print(_("%s: read %s/s (%s total), write %s/s (%s total), %.0f ops/s (%" PRIu64
                  " total), %" PRIu64 " errors, latency p50 %" PRIu64
                  " µs p99 %" PRIu64 " µs\n"),
                sluice_share_get_tag(share), read_rate, read_total, write_rate, write_total,
                stat_double(stats, "ops-per-sec"), stat_u64(stats, "requests"),
                stat_u64(stats, "errors"), stat_u64(stats, "latency-p50-us"),
                stat_u64(stats, "latency-p99-us"));
        print_stats_since(stat_u64(stats, "since-us"));
        queues = g_variant_lookup_value(stats, "queues", G_VARIANT_TYPE("aa{sv}"));
        for (gsize i = 0; queues != NULL && i < g_variant_n_children(queues); i++) {
                g_autoptr(GVariant) q = g_variant_get_child_value(queues, i);
                guint32 index = 0;

                (void)g_variant_lookup(q, "index", "u", &index);
                g_print(_("  queue %u%s: %" PRIu64 " requests, %" PRIu64
                          " kicks, %" PRIu64 " polled, %" PRIu64
                          " batches, %" PRIu64 " in flight\n"),
                        index, index == 0 ? _(" (hiprio)") : "", stat_u64(q, "requests"),
                        stat_u64(q, "kicks"), stat_u64(q, "polled"), stat_u64(q, "batches"),
                        stat_u64(q, "in-flight"));
        }
}

typedef struct {
        Ctl *ctl;
        SluiceShare *share;
        GMainLoop *loop;
        guint64 remaining;   /* 0 = until interrupted */
        guint64 printed_us;  /* "timestamp-us" of the sample printed last */
        int status;
} Watch;

static void on_stats_changed(GObject *object, GParamSpec *pspec, gpointer user_data)
{
        Watch *watch = user_data;
        GVariant *stats = sluice_share_get_stats(watch->share);
        guint64 timestamp = 0;

        if (stats == NULL)
                return;
        /* a sample published before the one SampleStats gave arrives after it */
        if (g_variant_lookup(stats, "timestamp-us", "t", &timestamp) && timestamp != 0 &&
            timestamp <= watch->printed_us)
                return;
        watch->printed_us = MAX(watch->printed_us, timestamp);
        print_stats(watch->ctl, watch->share, stats);
        if (watch->remaining > 0 && --watch->remaining == 0)
                g_main_loop_quit(watch->loop);
}

static void on_owner_changed(GObject *object, GParamSpec *pspec, gpointer user_data)
{
        Watch *watch = user_data;
        g_autofree char *owner = g_dbus_proxy_get_name_owner(G_DBUS_PROXY(object));

        if (owner == NULL) {
                g_printerr("sluicectl: %s\n", _("sluice-service stopped"));
                watch->status = EXIT_FAILED;
                g_main_loop_quit(watch->loop);
        }
}

static gboolean on_interrupt(gpointer user_data)
{
        g_main_loop_quit(((Watch *)user_data)->loop);
        return G_SOURCE_REMOVE;
}

/* A service started before an upgrade has no WatchStats or SampleStats: it
 * samples all the time, so its Stats property is current.  OK: the call
 * succeeded or the method is not there (ERROR cleared). */
static gboolean call_or_older_service(gboolean ok, GError **error)
{
        if (ok)
                return TRUE;
        if (!g_error_matches(*error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_METHOD))
                return FALSE;
        g_clear_error(error);
        return TRUE;
}

int ctl_cmd_stats(Ctl *ctl, int argc, char **argv)
{
        g_autoptr(SluiceShare) share = NULL;
        g_autoptr(GError) error = NULL;
        g_autoptr(GVariant) stats = NULL;
        g_autoptr(GMainLoop) loop = NULL;
        const char *name = NULL;
        gboolean watch_mode = FALSE;
        guint64 count = 0;
        Watch watch = { 0 };

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--watch") == 0)
                        watch_mode = TRUE;
                else if (strcmp(argv[i], "--count") == 0) {
                        if (!ctl_parse_uint(i + 1 < argc ? argv[i + 1] : NULL, 1, G_MAXUINT32, &count))
                                return ctl_usage_error(_("--count needs a positive number"));
                        i++;
                } else if (argv[i][0] == '-')
                        return ctl_usage_error(_("Unknown option “%s” for “stats”"), argv[i]);
                else if (name == NULL)
                        name = argv[i];
                else
                        return ctl_usage_error(_("“stats” takes one SHARE"));
        }
        if (name == NULL)
                return ctl_usage_error(_("“stats” needs a SHARE (a tag, id or object path)"));
        if (count > 0 && !watch_mode)
                return ctl_usage_error(_("--count goes with --watch"));
        share = ctl_find_share(ctl, name, &error);
        if (share == NULL)
                return ctl_fail(error);
        loop = g_main_loop_new(NULL, FALSE);
        watch = (Watch){ .ctl = ctl, .share = share, .loop = loop, .remaining = count };
        if (watch_mode) {
                /* watching first: no sample published between the two calls is missed */
                g_signal_connect(share, "notify::stats", G_CALLBACK(on_stats_changed), &watch);
                g_signal_connect(share, "notify::g-name-owner", G_CALLBACK(on_owner_changed), &watch);
        }
        /* the service samples only while someone watches: ask for a fresh one */
        if ((watch_mode && !call_or_older_service(sluice_share_call_watch_stats_sync(share, NULL, &error),
                                                  &error)) ||
            !call_or_older_service(sluice_share_call_sample_stats_sync(share, &stats, NULL, &error),
                                   &error)) {
                g_signal_handlers_disconnect_by_data(share, &watch);
                return ctl_fail(error);
        }
        if (stats == NULL)
                stats = sluice_share_dup_stats(share);
        if (stats == NULL)
                stats = g_variant_ref_sink(g_variant_new("a{sv}", NULL));
        (void)g_variant_lookup(stats, "timestamp-us", "t", &watch.printed_us);
        print_stats(ctl, share, stats);
        if (!watch_mode)
                return EXIT_OK;

        g_unix_signal_add(SIGINT, on_interrupt, &watch);
        g_unix_signal_add(SIGTERM, on_interrupt, &watch);
        g_main_loop_run(loop);
        g_signal_handlers_disconnect_by_data(share, &watch);
        return watch.status;
}
