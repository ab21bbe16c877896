/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-format: number, rate and state wording. */
#include "config.h"

#include <glib/gi18n.h>

#include "sa-format.h"

char *sa_format_rate(double bytes_per_sec)
{
  double mb = bytes_per_sec / 1e6;
  if (mb < 0)
    mb = 0;
  /* Translators: throughput in decimal megabytes per second */
  return g_strdup_printf(_("%.1f MB/s"), mb);
}

char *sa_format_ops(double ops_per_sec)
{
  if (ops_per_sec < 0)
    ops_per_sec = 0;
  /* Translators: file-system requests per second */
  return g_strdup_printf(_("%.0f ops/s"), ops_per_sec);
}

char *sa_format_latency(guint64 us)
{
  if (us < 1000) {
    g_autofree char *number = g_strdup_printf("%" G_GUINT64_FORMAT, us);
    /* Translators: a latency in microseconds; %s is the number */
    return g_strdup_printf(_("%s µs"), number);
  }
  /* Translators: a latency in milliseconds */
  return g_strdup_printf(_("%.1f ms"), (double)us / 1000.0);
}

char *sa_format_folder_name(const char *path)
{
  g_autofree char *base = g_path_get_basename(path != NULL && *path ? path : "/");
  if (g_str_equal(base, "/") || g_str_equal(base, "."))
    return g_strdup(path != NULL && *path ? path : "/");
  return g_steal_pointer(&base);
}
