/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-graph: a small throughput chart drawn with GtkSnapshot + cairo.
 *
 * The x axis is real time: the right edge is now (g_get_monotonic_time(), the
 * clock of the samples' "timestamp-us" on the same host), the left edge 60 s
 * ago.  The service publishes Stats only when something changed, so seconds
 * without a sample are drawn as zero.  To scroll, a 1 s timer only redraws
 * (no D-Bus), and only while the graph is mapped and traffic is in view: an
 * idle applet wakes for nothing. */
#include "config.h"

#include <glib/gi18n.h>
#include <math.h>
#include <stdlib.h>

#include "sa-format.h"
#include "sa-graph.h"

/* Redraws while scrolling: the line moves width/60 px a second. */
#define SCROLL_INTERVAL_MS 1000
/* The service samples once a second by default; faster when configured. */
#define MAX_STEP_US G_USEC_PER_SEC
#define MIN_STEP_US (50 * 1000)

struct _SaGraph {
  GtkWidget parent_instance;
  SaShare *share;
  gulong stats_id;
  guint scroll_id;    /* the redraw timer, 0 when nothing moves */
};

G_DEFINE_TYPE(SaGraph, sa_graph, GTK_TYPE_WIDGET)

typedef struct {
  gint64 time_us;
  double read, write;
} Point;

static int compare_gint64(gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;
  return x < y ? -1 : x > y;
}

/* The service's sampling interval: the median distance between samples (one
 * odd pair, as around a worker restart, must not shrink it), at most 1 s. */
static gint64 sample_step(const SaSample *s, guint n)
{
  gint64 deltas[SA_SHARE_HISTORY];
  guint count = 0;
  for (guint i = 1; i < n && count < G_N_ELEMENTS(deltas); i++)
    if (s[i].time_us > s[i - 1].time_us)
      deltas[count++] = s[i].time_us - s[i - 1].time_us;
  if (count == 0)
    return MAX_STEP_US;
  qsort(deltas, count, sizeof(deltas[0]), compare_gint64);
  return CLAMP(deltas[count / 2], MIN_STEP_US, MAX_STEP_US);
}

static void add_point(GArray *points, gint64 time_us, double read, double write)
{
  Point p = { time_us, read, write };
  g_array_append_val(points, p);
}

/* The samples with the seconds nobody reported filled in as zero: after a
 * gap the line drops to zero one step after the last sample, stays there and
 * rises one step before the next; after the newest sample it runs on to now. */
static GArray *build_points(const SaSample *s, guint n, gint64 now)
{
  GArray *points = g_array_sized_new(FALSE, FALSE, sizeof(Point), 3 * n + 2);
  gint64 step = sample_step(s, n), gap = step + step / 2;
  for (guint i = 0; i < n; i++) {
    if (i > 0 && s[i].time_us - s[i - 1].time_us > gap) {
      add_point(points, s[i - 1].time_us + step, 0, 0);
      if (s[i].time_us - step > s[i - 1].time_us + step)
        add_point(points, s[i].time_us - step, 0, 0);
    }
    add_point(points, s[i].time_us, s[i].read_per_sec, s[i].write_per_sec);
  }
  if (n > 0 && now - s[n - 1].time_us > gap) {
    add_point(points, s[n - 1].time_us + step, 0, 0);
    add_point(points, now, 0, 0);
  }
  return points;
}

/* Whether anything but zero is drawn between @now - 60 s and @now. */
static gboolean traffic_in_view(SaGraph *self, gint64 now)
{
  const SaSample *s = NULL;
  guint n = self->share != NULL ? sa_share_get_history(self->share, &s) : 0;
  /* A sample's line reaches one step (at most 1 s) past it. */
  gint64 oldest = now - SA_SHARE_WINDOW_US - MAX_STEP_US;
  for (guint i = n; i-- > 0 && s[i].time_us >= oldest;)
    if (s[i].read_per_sec > 0 || s[i].write_per_sec > 0)
      return TRUE;
  return FALSE;
}

static gboolean on_scroll(gpointer user_data);

/* Runs the redraw timer exactly while it would change what is shown. */
static void update_scroll(SaGraph *self)
{
  gboolean wanted = gtk_widget_get_mapped(GTK_WIDGET(self)) &&
                    traffic_in_view(self, g_get_monotonic_time());
  if (wanted && self->scroll_id == 0)
    self->scroll_id = g_timeout_add(SCROLL_INTERVAL_MS, on_scroll, self);
  else if (!wanted)
    g_clear_handle_id(&self->scroll_id, g_source_remove);
}

static gboolean on_scroll(gpointer user_data)
{
  SaGraph *self = user_data;
  gtk_widget_queue_draw(GTK_WIDGET(self));
  /* This redraw already shows the last traffic gone; then stop. */
  if (gtk_widget_get_mapped(GTK_WIDGET(self)) && traffic_in_view(self, g_get_monotonic_time()))
    return G_SOURCE_CONTINUE;
  self->scroll_id = 0;
  return G_SOURCE_REMOVE;
}

/* Rounds the scale up to 1, 2 or 5 × 10^n MB/s so grid labels read well. */
static double nice_ceiling(double v)
{
  if (v <= 1e6)
    return 1e6;
  double exp10 = pow(10, floor(log10(v)));
  double m = v / exp10;
  double step = m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10;
  return step * exp10;
}

static double point_x(const Point *p, gint64 now, double w)
{
  return w * (1.0 - (double)(now - p->time_us) / (double)SA_SHARE_WINDOW_US);
}

static void trace_line(cairo_t *cr, const GArray *points, gboolean write, gint64 now,
                       double w, double h, double max)
{
  for (guint i = 0; i < points->len; i++) {
    const Point *p = &g_array_index(points, Point, i);
    double v = write ? p->write : p->read;
    double x = point_x(p, now, w);
    double y = h - (v / max) * (h - 2) - 1;
    if (i == 0)
      cairo_move_to(cr, x, y);
    else
      cairo_line_to(cr, x, y);
  }
}

static void draw_series(cairo_t *cr, const GArray *points, gboolean write, gint64 now,
                        double w, double h, double max, const GdkRGBA *color)
{
  if (points->len < 2)
    return;
  /* Area under the line, translucent, then the line itself. */
  trace_line(cr, points, write, now, w, h, max);
  cairo_line_to(cr, point_x(&g_array_index(points, Point, points->len - 1), now, w), h);
  cairo_line_to(cr, point_x(&g_array_index(points, Point, 0), now, w), h);
  cairo_close_path(cr);
  cairo_set_source_rgba(cr, color->red, color->green, color->blue, 0.18);
  cairo_fill(cr);
  trace_line(cr, points, write, now, w, h, max);
  cairo_set_source_rgba(cr, color->red, color->green, color->blue, 1.0);
  cairo_set_line_width(cr, 2.0);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  cairo_stroke(cr);
}

static void sa_graph_snapshot(GtkWidget *widget, GtkSnapshot *snapshot)
{
  SaGraph *self = SA_GRAPH(widget);
  double w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
  if (w < 4 || h < 4)
    return;

  GdkRGBA fg;
  /* gtk_widget_get_color() is GTK 4.10; 4.8 has the style context. */
  gtk_style_context_get_color(gtk_widget_get_style_context(widget), &fg);
  /* GNOME palette: blue 3 for reads, orange 3 for writes. */
  const GdkRGBA read_color = { 0.21, 0.52, 0.89, 1 };
  const GdkRGBA write_color = { 0.90, 0.38, 0.00, 1 };

  cairo_t *cr = gtk_snapshot_append_cairo(snapshot, &GRAPHENE_RECT_INIT(0, 0, w, h));

  /* Background card and grid: quartiles of the scale, every 15 s. */
  cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, 0.04);
  cairo_rectangle(cr, 0, 0, w, h);
  cairo_fill(cr);
  cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, 0.10);
  cairo_set_line_width(cr, 1);
  for (int i = 1; i < 4; i++) {
    double y = floor(h * i / 4.0) + 0.5;
    cairo_move_to(cr, 0, y);
    cairo_line_to(cr, w, y);
    double x = floor(w * i / 4.0) + 0.5;
    cairo_move_to(cr, x, 0);
    cairo_line_to(cr, x, h);
  }
  cairo_stroke(cr);

  const SaSample *samples = NULL;
  guint n = self->share != NULL ? sa_share_get_history(self->share, &samples) : 0;
  gint64 now = g_get_monotonic_time();
  /* Another host's clock (or one ahead of ours) must not push the newest
   * sample off the right edge. */
  if (n > 0 && samples[n - 1].time_us > now)
    now = samples[n - 1].time_us;
  g_autoptr(GArray) points = build_points(samples, n, now);
  /* The scale fits what is in view, not traffic that scrolled away. */
  double max = 0;
  for (guint i = 0; i < points->len; i++) {
    const Point *p = &g_array_index(points, Point, i);
    if (p->time_us >= now - SA_SHARE_WINDOW_US - MAX_STEP_US)
      max = MAX(max, MAX(p->read, p->write));
  }
  max = nice_ceiling(max * 1.1);
  cairo_rectangle(cr, 0, 0, w, h);
  cairo_clip(cr);
  draw_series(cr, points, FALSE, now, w, h, max, &read_color);
  draw_series(cr, points, TRUE, now, w, h, max, &write_color);
  cairo_destroy(cr);

  /* Scale label, top left. */
  g_autofree char *label = sa_format_rate(max);
  PangoLayout *layout = gtk_widget_create_pango_layout(widget, label);
  PangoAttrList *attrs = pango_attr_list_new();
  pango_attr_list_insert(attrs, pango_attr_scale_new(0.75));
  pango_layout_set_attributes(layout, attrs);
  pango_attr_list_unref(attrs);
  gtk_snapshot_save(snapshot);
  gtk_snapshot_translate(snapshot, &GRAPHENE_POINT_INIT(4, 2));
  GdkRGBA dim = fg;
  dim.alpha = 0.55;
  gtk_snapshot_append_layout(snapshot, layout, &dim);
  gtk_snapshot_restore(snapshot);
  g_object_unref(layout);
}

static void sa_graph_measure(GtkWidget *widget, GtkOrientation orientation, int for_size,
                             int *minimum, int *natural, int *min_baseline, int *nat_baseline)
{
  if (orientation == GTK_ORIENTATION_HORIZONTAL) {
    *minimum = 120;
    *natural = 360;
  } else {
    *minimum = 48;
    *natural = 64;
  }
}

static void on_stats(SaShare *share, gpointer user_data)
{
  gtk_widget_queue_draw(GTK_WIDGET(user_data));
  update_scroll(user_data);
}

static void sa_graph_map(GtkWidget *widget)
{
  GTK_WIDGET_CLASS(sa_graph_parent_class)->map(widget);
  /* Time passed while hidden: show now, then scroll if anything moves. */
  gtk_widget_queue_draw(widget);
  update_scroll(SA_GRAPH(widget));
}

static void sa_graph_unmap(GtkWidget *widget)
{
  g_clear_handle_id(&SA_GRAPH(widget)->scroll_id, g_source_remove);
  GTK_WIDGET_CLASS(sa_graph_parent_class)->unmap(widget);
}

void sa_graph_set_share(SaGraph *self, SaShare *share)
{
  if (self->share != NULL) {
    g_clear_signal_handler(&self->stats_id, self->share);
    g_clear_object(&self->share);
  }
  if (share != NULL) {
    self->share = g_object_ref(share);
    self->stats_id = g_signal_connect(share, "stats", G_CALLBACK(on_stats), self);
  }
  gtk_widget_queue_draw(GTK_WIDGET(self));
  update_scroll(self);
}

static void sa_graph_dispose(GObject *object)
{
  sa_graph_set_share(SA_GRAPH(object), NULL);
  g_clear_handle_id(&SA_GRAPH(object)->scroll_id, g_source_remove);
  G_OBJECT_CLASS(sa_graph_parent_class)->dispose(object);
}

static void sa_graph_class_init(SaGraphClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  G_OBJECT_CLASS(klass)->dispose = sa_graph_dispose;
  widget_class->snapshot = sa_graph_snapshot;
  widget_class->measure = sa_graph_measure;
  widget_class->map = sa_graph_map;
  widget_class->unmap = sa_graph_unmap;
  gtk_widget_class_set_css_name(widget_class, "sluice-graph");
  gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void sa_graph_init(SaGraph *self)
{
  gtk_widget_set_overflow(GTK_WIDGET(self), GTK_OVERFLOW_HIDDEN);
  gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                 _("Read and write throughput over the last minute"), -1);
}

GtkWidget *sa_graph_new(void)
{
  return g_object_new(SA_TYPE_GRAPH, NULL);
}
