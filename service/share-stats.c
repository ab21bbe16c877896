/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-stats.c — see share-stats.h. */
#include "config.h"

#include "share-stats.h"
#include "stats.h"
#include "worker-control.h"

/* A client's watch: its unique name, watched on the bus so that the watch
 * ends when the client does. */
typedef struct {
        SluiceShareStats *owner;   /* not a reference: the owner unwatches before it goes */
        char *client;
} Watcher;

struct _SluiceShareStats {
        GObject parent_instance;

        SluiceShare *iface;
        char *tag;
        SluiceWorker *worker;
        gboolean running;           /* between start and stop */
        guint stats_interval_ms;
        guint stats_source;         /* the sampling timer: only while someone looks */
        gboolean stats_in_flight;
        gint64 request_sent_us;     /* monotonic: when the request in flight was sent */
        SluiceStatsSampler sampler;
        GVariant *last_stats;
        GHashTable *watchers;       /* unique bus name → g_bus_watch_name id */
        GList *waiters;             /* GTask of sample_async; task data: when asked (gint64 *) */
};

G_DEFINE_TYPE(SluiceShareStats, sluice_share_stats, G_TYPE_OBJECT)

static void publish_stats(SluiceShareStats *self, GVariant *stats)
{
        g_autoptr(GVariant) sunk = g_variant_ref_sink(stats);

        if (!sluice_stats_differ(self->last_stats, sunk))
                return;
        g_clear_pointer(&self->last_stats, g_variant_unref);
        self->last_stats = g_variant_ref(sunk);
        if (self->iface != NULL)
                sluice_share_set_stats(self->iface, sunk);
}

static GVariant *current_stats(SluiceShareStats *self)
{
        return self->last_stats != NULL ? g_variant_ref(self->last_stats)
                                        : g_variant_ref_sink(g_variant_new("a{sv}", NULL));
}

/* Answers the waiters that asked before SENT_US (every one when SENT_US is
 * G_MAXINT64) with the current Stats. */
static void answer_waiters(SluiceShareStats *self, gint64 sent_us)
{
        GList *keep = NULL;

        for (GList *l = self->waiters; l != NULL; l = l->next) {
                GTask *task = l->data;

                if (*(gint64 *)g_task_get_task_data(task) <= sent_us) {
                        g_task_return_pointer(task, current_stats(self), (GDestroyNotify)g_variant_unref);
                        g_object_unref(task);
                } else {
                        keep = g_list_prepend(keep, task);
                }
        }
        g_list_free(self->waiters);
        self->waiters = g_list_reverse(keep);
}

static gboolean on_stats_tick(gpointer user_data);

/* The timer runs only while a client watches or waits for a sample: an
 * unwatched share costs neither the service nor its worker a wake-up. */
static void update_sampling(SluiceShareStats *self)
{
        gboolean wanted = self->running && self->worker != NULL &&
                          (g_hash_table_size(self->watchers) > 0 || self->waiters != NULL);

        if (wanted && self->stats_source == 0) {
                self->stats_source = g_timeout_add(self->stats_interval_ms, on_stats_tick, self);
                on_stats_tick(self);
        } else if (!wanted && self->stats_source != 0) {
                g_source_remove(self->stats_source);
                self->stats_source = 0;
        }
}

static void on_stats(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceShareStats) self = user_data;
        g_autoptr(GError) error = NULL;
        g_autoptr(GVariant) raw = sluice_worker_control_get_stats_finish(SLUICE_WORKER1(source),
                                                                         result, &error);
        gint64 now = g_get_monotonic_time();
        gboolean rates_fresh;

        self->stats_in_flight = FALSE;
        if (raw == NULL) {
                g_debug("No stats from the worker of %s: %s", self->tag, error->message);
                /* a caller gets the last sample rather than waiting for the bus's timeout */
                answer_waiters(self, G_MAXINT64);
                update_sampling(self);
                return;
        }
        /* The worker may have stopped meanwhile: its stats are gone with it.  A
         * late answer of a replaced worker would be counted twice. */
        if (!self->running || self->worker == NULL ||
            (gpointer)source != (gpointer)sluice_worker_get_control(self->worker))
                return;
        /* rates over an interval much longer than the sampling interval (the
         * share was not watched) are an average nobody asked for */
        rates_fresh = self->sampler.have_previous &&
                      now - self->sampler.previous_time_us <= 2 * (gint64)self->stats_interval_ms * 1000;
        publish_stats(self, sluice_stats_sample(&self->sampler, raw, now));
        if (rates_fresh)
                answer_waiters(self, self->request_sent_us);
        update_sampling(self);
}

static void request_sample(SluiceShareStats *self)
{
        SluiceWorker1 *control = self->worker != NULL ? sluice_worker_get_control(self->worker) : NULL;

        if (control != NULL && !self->stats_in_flight) {
                self->stats_in_flight = TRUE;
                self->request_sent_us = g_get_monotonic_time();
                sluice_worker_control_get_stats_async(control, NULL, on_stats, g_object_ref(self));
        }
}

static gboolean on_stats_tick(gpointer user_data)
{
        request_sample(user_data);
        return G_SOURCE_CONTINUE;
}

void sluice_share_stats_count_crash(SluiceShareStats *self)
{
        sluice_stats_sampler_count_crash(&self->sampler);
}

void sluice_share_stats_start(SluiceShareStats *self, SluiceWorker *worker, gboolean restarted)
{
        if (self->running) {
                /* a resumed worker took over while the share ran on: its
                 * counters start afresh, the share's totals go on */
                if (restarted) {
                        g_set_object(&self->worker, worker);
                        sluice_stats_sampler_new_worker(&self->sampler);
                        request_sample(self);
                }
                return;
        }
        self->running = TRUE;
        g_set_object(&self->worker, worker);
        if (restarted)
                sluice_stats_sampler_new_worker(&self->sampler);
        else
                sluice_stats_sampler_begin(&self->sampler, g_get_real_time());
        /* a first sample, so that Stats says the share runs; then only on demand */
        request_sample(self);
        update_sampling(self);
}

void sluice_share_stats_stop(SluiceShareStats *self)
{
        self->running = FALSE;
        update_sampling(self);
        publish_stats(self, g_variant_new("a{sv}", NULL));
        answer_waiters(self, G_MAXINT64);
}

static void watcher_free(gpointer data)
{
        Watcher *w = data;

        g_free(w->client);
        g_free(w);
}

static void on_watcher_vanished(GDBusConnection *connection, const char *name, gpointer user_data)
{
        Watcher *w = user_data;

        /* removing unwatches the name: the Watcher is freed later, by GIO */
        sluice_share_stats_unwatch(w->owner, w->client);
}

void sluice_share_stats_watch(SluiceShareStats *self, GDBusConnection *connection, const char *client)
{
        Watcher *w;

        if (g_hash_table_contains(self->watchers, client))
                return;
        w = g_new0(Watcher, 1);
        w->owner = self;
        w->client = g_strdup(client);
        g_hash_table_insert(self->watchers, g_strdup(client),
                            GUINT_TO_POINTER(g_bus_watch_name_on_connection(
                                    connection, client, G_BUS_NAME_WATCHER_FLAGS_NONE, NULL,
                                    on_watcher_vanished, w, watcher_free)));
        g_debug("%s: %s watches the stats (%u watching)", self->tag, client,
                g_hash_table_size(self->watchers));
        update_sampling(self);
}

void sluice_share_stats_unwatch(SluiceShareStats *self, const char *client)
{
        if (!g_hash_table_remove(self->watchers, client))
                return;
        g_debug("%s: %s stopped watching the stats (%u watching)", self->tag, client,
                g_hash_table_size(self->watchers));
        update_sampling(self);
}

guint sluice_share_stats_n_watchers(SluiceShareStats *self)
{
        return g_hash_table_size(self->watchers);
}

void sluice_share_stats_sample_async(SluiceShareStats *self, GAsyncReadyCallback callback,
                                     gpointer user_data)
{
        GTask *task = g_task_new(self, NULL, callback, user_data);

        g_task_set_source_tag(task, sluice_share_stats_sample_async);
        if (!self->running || self->worker == NULL) {
                g_task_return_pointer(task, current_stats(self), (GDestroyNotify)g_variant_unref);
                g_object_unref(task);
                return;
        }
        g_task_set_task_data(task, g_memdup2(&(gint64){ g_get_monotonic_time() }, sizeof(gint64)),
                             g_free);
        self->waiters = g_list_append(self->waiters, task);
        request_sample(self);   /* at once, unless one is in flight: then the next tick's */
        update_sampling(self);
}

GVariant *sluice_share_stats_sample_finish(SluiceShareStats *self, GAsyncResult *result)
{
        g_return_val_if_fail(g_task_is_valid(result, self), NULL);
        return g_task_propagate_pointer(G_TASK(result), NULL);
}

SluiceShareStats *sluice_share_stats_new(SluiceShare *iface, guint interval_ms, const char *tag)
{
        SluiceShareStats *self = g_object_new(SLUICE_TYPE_SHARE_STATS, NULL);

        self->iface = iface;
        g_object_add_weak_pointer(G_OBJECT(iface), (gpointer *)&self->iface);
        self->stats_interval_ms = MAX(interval_ms, 50);
        self->tag = g_strdup(tag);
        return self;
}

static void unwatch_name(gpointer id)
{
        g_bus_unwatch_name(GPOINTER_TO_UINT(id));
}

static void sluice_share_stats_dispose(GObject *object)
{
        SluiceShareStats *self = SLUICE_SHARE_STATS(object);

        self->running = FALSE;
        answer_waiters(self, G_MAXINT64);
        g_hash_table_remove_all(self->watchers);
        if (self->stats_source != 0) {
                g_source_remove(self->stats_source);
                self->stats_source = 0;
        }
        if (self->iface != NULL) {
                g_object_remove_weak_pointer(G_OBJECT(self->iface), (gpointer *)&self->iface);
                self->iface = NULL;
        }
        g_clear_object(&self->worker);
        G_OBJECT_CLASS(sluice_share_stats_parent_class)->dispose(object);
}

static void sluice_share_stats_finalize(GObject *object)
{
        SluiceShareStats *self = SLUICE_SHARE_STATS(object);

        g_free(self->tag);
        g_clear_pointer(&self->last_stats, g_variant_unref);
        g_hash_table_unref(self->watchers);
        G_OBJECT_CLASS(sluice_share_stats_parent_class)->finalize(object);
}

static void sluice_share_stats_class_init(SluiceShareStatsClass *klass)
{
        G_OBJECT_CLASS(klass)->dispose = sluice_share_stats_dispose;
        G_OBJECT_CLASS(klass)->finalize = sluice_share_stats_finalize;
}

static void sluice_share_stats_init(SluiceShareStats *self)
{
        self->watchers = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, unwatch_name);
}
