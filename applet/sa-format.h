/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-format: how numbers and states read in the applet (one place, translatable). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* "12.3 MB/s" (decimal megabytes, as GNOME shows sizes). */
char *sa_format_rate(double bytes_per_sec);
/* "1,234 ops/s" */
char *sa_format_ops(double ops_per_sec);
/* "850 µs" / "12.5 ms" */
char *sa_format_latency(guint64 microseconds);
/* The folder's display name: its basename, or the path for "/". */
char *sa_format_folder_name(const char *path);

G_END_DECLS
