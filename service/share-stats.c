/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-stats.c — see share-stats.h. */
#include "config.h"

#include "share-stats.h"
#include "stats.h"
#include "worker-control.h"

struct _SluiceShareStats {
        GObject parent_instance;

        SluiceShare *iface;
        char *tag;
        SluiceWorker *worker;
        guint stats_interval_ms;
        guint stats_source;
        gboolean stats_in_flight;
        SluiceStatsSampler sampler;
        GVariant *last_stats;
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

static void on_stats(GObject *source, GAsyncResult *result, gpointer user_data)
{
        g_autoptr(SluiceShareStats) self = user_data;
        g_autoptr(GError) error = NULL;
        g_autoptr(GVariant) raw = sluice_worker_control_get_stats_finish(SLUICE_WORKER1(source),
                                                                         result, &error);

        self->stats_in_flight = FALSE;
        if (raw == NULL) {
                g_debug("No stats from the worker of %s: %s", self->tag, error->message);
                return;
        }
        /* The worker may have stopped meanwhile: its stats are gone with it.  A
         * late answer of a replaced worker would be counted twice. */
        if (self->stats_source == 0 || self->worker == NULL ||
            (gpointer)source != (gpointer)sluice_worker_get_control(self->worker))
                return;
        publish_stats(self, sluice_stats_sample(&self->sampler, raw, g_get_monotonic_time()));
}

static gboolean on_stats_tick(gpointer user_data)
{
        SluiceShareStats *self = user_data;
        SluiceWorker1 *control = self->worker != NULL ? sluice_worker_get_control(self->worker) : NULL;

        if (control != NULL && !self->stats_in_flight) {
                self->stats_in_flight = TRUE;
                sluice_worker_control_get_stats_async(control, NULL, on_stats, g_object_ref(self));
        }
        return G_SOURCE_CONTINUE;
}

void sluice_share_stats_start(SluiceShareStats *self, SluiceWorker *worker, gboolean restarted)
{
        if (self->stats_source != 0)
                return;
        g_set_object(&self->worker, worker);
        if (restarted)
                sluice_stats_sampler_new_worker(&self->sampler);
        else
                sluice_stats_sampler_begin(&self->sampler, g_get_real_time());
        self->stats_source = g_timeout_add(self->stats_interval_ms, on_stats_tick, self);
        on_stats_tick(self);
}

void sluice_share_stats_stop(SluiceShareStats *self)
{
        if (self->stats_source != 0) {
                g_source_remove(self->stats_source);
                self->stats_source = 0;
        }
        publish_stats(self, g_variant_new("a{sv}", NULL));
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

static void sluice_share_stats_dispose(GObject *object)
{
        SluiceShareStats *self = SLUICE_SHARE_STATS(object);

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
        G_OBJECT_CLASS(sluice_share_stats_parent_class)->finalize(object);
}

static void sluice_share_stats_class_init(SluiceShareStatsClass *klass)
{
        G_OBJECT_CLASS(klass)->dispose = sluice_share_stats_dispose;
        G_OBJECT_CLASS(klass)->finalize = sluice_share_stats_finalize;
}

static void sluice_share_stats_init(SluiceShareStats *self)
{
}
