/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-graph: read and write MB/s of one share over the last 60 s. */
#pragma once

#include <gtk/gtk.h>
#include "sa-share.h"

G_BEGIN_DECLS

#define SA_TYPE_GRAPH (sa_graph_get_type())
G_DECLARE_FINAL_TYPE(SaGraph, sa_graph, SA, GRAPH, GtkWidget)

GtkWidget *sa_graph_new(void);
/* Follows @share's "stats" signal: one redraw per sample, plus one a second
 * while mapped and traffic of the last 60 s is in view (it scrolls). */
void sa_graph_set_share(SaGraph *self, SaShare *share);

G_END_DECLS
