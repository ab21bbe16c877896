/* sa-graph: a small throughput chart drawn with GtkSnapshot + cairo.
 *
 * It redraws only when the share reports a new Stats sample (no timer), so
 * an idle share costs nothing.  The x axis is the service's sample clock:
 * the newest sample sits at the right edge, 60 s back at the left. */
#include "config.h"

#include <glib/gi18n.h>
#include <math.h>

#include "sa-format.h"
#include "sa-graph.h"

struct _SaGraph {
  GtkWidget parent_instance;
  SaShare *share;
  gulong stats_id;
};

G_DEFINE_TYPE(SaGraph, sa_graph, GTK_TYPE_WIDGET)

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

static void trace_line(cairo_t *cr, const SaSample *s, guint n, gboolean write,
                       gint64 now, double w, double h, double max)
{
  gboolean first = TRUE;
  for (guint i = 0; i < n; i++) {
    double age = (double)(now - s[i].time_us) / (double)SA_SHARE_WINDOW_US;
    if (age > 1.05)
      continue;
    double v = write ? s[i].write_per_sec : s[i].read_per_sec;
    double x = w * (1.0 - age);
    double y = h - (v / max) * (h - 2) - 1;
    if (first)
      cairo_move_to(cr, x, y);
    else
      cairo_line_to(cr, x, y);
    first = FALSE;
  }
}

static void draw_series(cairo_t *cr, const SaSample *s, guint n, gboolean write, gint64 now,
                        double w, double h, double max, const GdkRGBA *color)
{
  if (n < 2)
    return;
  /* Area under the line, translucent, then the line itself. */
  trace_line(cr, s, n, write, now, w, h, max);
  cairo_line_to(cr, w, h);
  double first_x = w * (1.0 - (double)(now - s[0].time_us) / (double)SA_SHARE_WINDOW_US);
  cairo_line_to(cr, MAX(first_x, 0), h);
  cairo_close_path(cr);
  cairo_set_source_rgba(cr, color->red, color->green, color->blue, 0.18);
  cairo_fill(cr);
  trace_line(cr, s, n, write, now, w, h, max);
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
  double max = 0;
  for (guint i = 0; i < n; i++)
    max = MAX(max, MAX(samples[i].read_per_sec, samples[i].write_per_sec));
  max = nice_ceiling(max * 1.1);
  if (n > 0) {
    gint64 now = samples[n - 1].time_us;
    cairo_rectangle(cr, 0, 0, w, h);
    cairo_clip(cr);
    draw_series(cr, samples, n, FALSE, now, w, h, max, &read_color);
    draw_series(cr, samples, n, TRUE, now, w, h, max, &write_color);
  }
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
}

static void sa_graph_dispose(GObject *object)
{
  sa_graph_set_share(SA_GRAPH(object), NULL);
  G_OBJECT_CLASS(sa_graph_parent_class)->dispose(object);
}

static void sa_graph_class_init(SaGraphClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  G_OBJECT_CLASS(klass)->dispose = sa_graph_dispose;
  widget_class->snapshot = sa_graph_snapshot;
  widget_class->measure = sa_graph_measure;
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
