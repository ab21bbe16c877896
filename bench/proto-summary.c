/* SPDX-License-Identifier: GPL-2.0-or-later */
/* proto-summary.c — the protocol benchmark's summary: every figure of
 * raw.tsv (rep, label, group, row, unit, better, value) gathered by row and
 * daemon; medians, ± half the range, ratios of the primary daemon to each
 * peer (> 1 = primary better), and the performance targets computed from the
 * medians.  Writes results.md and results.json next to raw.tsv. */
#include "proto-bench.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define MAX_LABELS 8
#define MAX_ROWS   256
#define MAX_REPS   16

struct cell {
        double v[MAX_REPS];
        unsigned n;
        char text[160];
};

struct srow {
        char group[16], row[96], unit[16], better[4];
        struct cell cell[MAX_LABELS];
};

static char labels[MAX_LABELS][32];
static unsigned nlabels;
static struct srow srows[MAX_ROWS];
static unsigned nsrows;

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

static double cell_median(const struct cell *c)
{
        double v[MAX_REPS];
        if (c->n == 0)
                return NAN;
        memcpy(v, c->v, c->n * sizeof(double));
        qsort(v, c->n, sizeof(double), cmp_double);
        return c->n % 2 ? v[c->n / 2] : (v[c->n / 2 - 1] + v[c->n / 2]) / 2;
}

/* ± half the range, in % of the median */
static double cell_spread(const struct cell *c)
{
        double lo = INFINITY, hi = -INFINITY, m = cell_median(c);
        for (unsigned i = 0; i < c->n; i++) {
                lo = fmin(lo, c->v[i]);
                hi = fmax(hi, c->v[i]);
        }
        return c->n > 1 && m != 0 ? (hi - lo) / 2 / fabs(m) * 100 : 0;
}

static void fmt_value(char *buf, size_t size, double v)
{
        if (isnan(v))
                snprintf(buf, size, "–");
        else if (fabs(v) >= 100000)
                snprintf(buf, size, "%.0fk", v / 1000);
        else if (fabs(v) >= 10000)
                snprintf(buf, size, "%.1fk", v / 1000);
        else if (fabs(v) >= 100)
                snprintf(buf, size, "%.0f", v);
        else
                snprintf(buf, size, "%.3g", v);
}

static int label_index(const char *l)
{
        for (unsigned i = 0; i < nlabels; i++)
                if (strcmp(labels[i], l) == 0)
                        return (int)i;
        if (nlabels == MAX_LABELS)
                return -1;
        snprintf(labels[nlabels], sizeof(labels[0]), "%s", l);
        return (int)nlabels++;
}

static struct srow *row_get(const char *group, const char *row, const char *unit, const char *better)
{
        for (unsigned i = 0; i < nsrows; i++)
                if (strcmp(srows[i].group, group) == 0 && strcmp(srows[i].row, row) == 0)
                        return &srows[i];
        if (nsrows == MAX_ROWS)
                return NULL;
        struct srow *r = &srows[nsrows++];
        snprintf(r->group, sizeof(r->group), "%s", group);
        snprintf(r->row, sizeof(r->row), "%s", row);
        snprintf(r->unit, sizeof(r->unit), "%s", unit);
        snprintf(r->better, sizeof(r->better), "%s", better);
        return r;
}

static const struct { const char *g, *t; } titles[] = {
                { "lat", "GETATTR of the root, one request outstanding" },
                { "ops", "Requests per second at 1, 4, 16 outstanding (one queue)" },
                { "io", "READ / WRITE of one page-cache-hot file, one outstanding" },
                { "create", "CREATE + RELEASE + UNLINK, one outstanding" },
                { "notify", "Notification suppression: GETATTR at one outstanding by frontend mode" },
                { "win", "Windows-shaped copy (virtio-win viofs: one request at a time, 4 KiB descriptors in one indirect table, GETATTR after each WRITE)" },
                { "mq", "Request queues, one frontend thread each (daemons that offer them)" },
                { "cpu", "Daemon CPU per request (utime+stime of the process / requests)" },
                { "mem", "Memory and descriptors" },
                { "targets", "The performance targets, from the medians above" },
};
#define NTITLES (sizeof(titles) / sizeof(titles[0]))

static const char *group_title(const char *g)
{
        for (size_t i = 0; i < NTITLES; i++)
                if (strcmp(titles[i].g, g) == 0)
                        return titles[i].t;
        return g;
}

/* the group's place in the tables; NULL or unknown: after all the others */
static int group_rank(const char *g)
{
        for (size_t i = 0; g && i < NTITLES; i++)
                if (strcmp(titles[i].g, g) == 0)
                        return (int)i;
        return (int)NTITLES;
}

static void json_str(FILE *f, const char *s)
{
        fputc('"', f);
        for (; *s; s++) {
                if (*s == '"' || *s == '\\')
                        fprintf(f, "\\%c", *s);
                else if ((unsigned char)*s < 0x20)
                        fprintf(f, "\\u%04x", *s);
                else
                        fputc(*s, f);
        }
        fputc('"', f);
}

static double median_of(const char *group, const char *row, const char *label)
{
        int li = -1;
        for (unsigned i = 0; i < nlabels; i++)
                if (strcmp(labels[i], label) == 0)
                        li = (int)i;
        for (unsigned i = 0; i < nsrows && li >= 0; i++)
                if (strcmp(srows[i].group, group) == 0 && strcmp(srows[i].row, row) == 0)
                        return cell_median(&srows[i].cell[li]);
        return NAN;
}

static void derived(const char *row, const char *better, unsigned label, double value)
{
        struct srow *r;
        if (isnan(value) || isinf(value) || !(r = row_get("targets", row, "x", better)))
                return;
        r->cell[label].v[0] = value;
        r->cell[label].n = 1;
}

/* The performance targets (bench/README.md), from the medians: each daemon against the bare
 * syscalls, and sluice-fs's polling against --poll-us=0 and Rust virtiofsd. */
static void add_targets(void)
{
        double fstat_us = 1e6 / median_of("ops", "getattr qd1", "bare");
        double pread = median_of("io", "read 1m", "bare"), pwrite = median_of("io", "write 1m", "bare");
        unsigned n = nlabels;
        for (unsigned l = 0; l < n; l++) {
                const char *d = labels[l];
                if (strcmp(d, "bare") == 0)
                        continue;
                derived("GETATTR qd16: wall time per request / bare fstat (≤ 3)", "lo", l,
                        1e6 / median_of("ops", "getattr qd16", d) / fstat_us);
                derived("GETATTR qd16: daemon CPU per request / bare fstat", "lo", l,
                        median_of("cpu", "getattr qd16", d) / fstat_us);
                derived("READ 1 MiB / bare pread (≥ 0.7)", "hi", l, median_of("io", "read 1m", d) / pread);
                derived("WRITE 1 MiB / bare pwrite (≥ 0.7)", "hi", l, median_of("io", "write 1m", d) / pwrite);
        }
        for (unsigned l = 0; l < n; l++) {
                const char *d = labels[l];
                char row[96];
                for (unsigned q = 2; q <= 4; q *= 2) {
                        char more[64];
                        snprintf(more, sizeof(more), "getattr qd16 per queue, %u queues", q);
                        snprintf(row, sizeof(row), "GETATTR qd16: %u queues / 1 queue (≥ 1.5 for 2)", q);
                        derived(row, "hi", l, median_of("mq", more, d) /
                                                      median_of("mq", "getattr qd16 per queue, 1 queue", d));
                        snprintf(more, sizeof(more), "read 128k qd1 per queue, %u queues", q);
                        snprintf(row, sizeof(row), "READ 128k: %u queues / 1 queue", q);
                        derived(row, "hi", l, median_of("mq", more, d) /
                                                      median_of("mq", "read 128k qd1 per queue, 1 queue", d));
                }
        }
        int p = -1;
        for (unsigned l = 0; l < n; l++)
                if (strcmp(labels[l], pb_opt.primary) == 0)
                        p = (int)l;
        if (p < 0)
                return;
        double p50 = median_of("lat", "getattr p50", pb_opt.primary);
        derived("GETATTR p50 qd1: sluice / sluice-poll0 (≤ 0.6)", "lo", (unsigned)p,
                p50 / median_of("lat", "getattr p50", "sluice-poll0"));
        derived("GETATTR p50 qd1: sluice / virtiofsd (≤ 0.8)", "lo", (unsigned)p,
                p50 / median_of("lat", "getattr p50", "virtiofsd"));
        derived("GETATTR qd16 ops/s: sluice / virtiofsd (≥ 2.5)", "hi", (unsigned)p,
                median_of("ops", "getattr qd16", pb_opt.primary) / median_of("ops", "getattr qd16", "virtiofsd"));
        derived("GETATTR qd16 ops/s: sluice / legacy (≥ 2)", "hi", (unsigned)p,
                median_of("ops", "getattr qd16", pb_opt.primary) / median_of("ops", "getattr qd16", "legacy"));
        derived("copy 1 MiB: sluice / fastest peer (≥ 1)", "hi", (unsigned)p,
                median_of("win", "copy, 1 MiB writes", pb_opt.primary) /
                        fmax(fmax(median_of("win", "copy, 1 MiB writes", "virtiofsd"),
                                  median_of("win", "copy, 1 MiB writes", "legacy")),
                             median_of("win", "copy, 1 MiB writes", "sluice-poll0")));
}

int pb_summarize(const char *dir)
{
        char path[4096], line[1024];
        snprintf(path, sizeof(path), "%s/raw.tsv", dir);
        FILE *in = fopen(path, "re");
        if (!in)
                return pb_fail(-errno, path);
        while (fgets(line, sizeof(line), in)) {
                char *f[7], *rest = line, *p;
                unsigned n = 0;
                line[strcspn(line, "\n")] = '\0';
                if (line[0] == '#' || line[0] == '\0')
                        continue;
                /* strsep, not strtok: an empty field is a field */
                while (n < 7 && (p = strsep(&rest, "\t")))
                        f[n++] = p;
                if (n != 7)
                        continue;
                int li = label_index(f[1]);
                struct srow *r = row_get(f[2], f[3], f[4], f[5]);
                if (li < 0 || !r)
                        continue;
                struct cell *c = &r->cell[li];
                if (strcmp(f[4], "text") == 0) {
                        if (!c->text[0])
                                snprintf(c->text, sizeof(c->text), "%s", f[6]);
                        else if (!strstr(c->text, f[6]) && strlen(c->text) + strlen(f[6]) + 4 < sizeof(c->text))
                                strcat(strcat(c->text, " / "), f[6]);
                } else if (c->n < MAX_REPS) {
                        c->v[c->n++] = strtod(f[6], NULL);
                }
        }
        fclose(in);
        add_targets();
        int primary = -1;
        for (unsigned i = 0; i < nlabels; i++)
                if (strcmp(labels[i], pb_opt.primary) == 0)
                        primary = (int)i;

        snprintf(path, sizeof(path), "%s/results.md", dir);
        FILE *md = fopen(path, "we");
        snprintf(path, sizeof(path), "%s/results.json", dir);
        FILE *js = fopen(path, "we");
        if (!md || !js)
                return pb_fail(-errno, path);
        snprintf(path, sizeof(path), "%s/meta.txt", dir);
        FILE *meta = fopen(path, "re");
        fprintf(md, "## Protocol benchmark (bench/proto-run.sh)\n\n");
        fprintf(js, "{\n  \"meta\": [");
        if (meta) {
                bool first = true;
                while (fgets(line, sizeof(line), meta)) {
                        line[strcspn(line, "\n")] = '\0';
                        fprintf(md, "%s  \n", line);
                        fprintf(js, "%s\n    ", first ? "" : ",");
                        json_str(js, line);
                        first = false;
                }
                fclose(meta);
        }
        fprintf(md, "\nMedians ± half the range (%% of the median); ratio = %s / peer, > 1 = %s better.\n",
                pb_opt.primary, pb_opt.primary);
        fprintf(js, "],\n  \"primary\": ");
        json_str(js, pb_opt.primary);
        fprintf(js, ",\n  \"rows\": [");
        /* rows grouped, the groups in the order of the titles (unknown ones
         * last), rows in the order they first came */
        static struct srow sorted[MAX_ROWS];
        unsigned ns = 0;
        for (int rank = 0; rank <= group_rank(NULL); rank++)
                for (unsigned k = 0; k < nsrows; k++)
                        if (group_rank(srows[k].group) == rank)
                                sorted[ns++] = srows[k];
        memcpy(srows, sorted, ns * sizeof(*srows));
        const char *group = "";
        for (unsigned i = 0; i < nsrows; i++) {
                struct srow *r = &srows[i];
                bool text = strcmp(r->unit, "text") == 0;
                if (strcmp(group, r->group) != 0) {
                        group = r->group;
                        fprintf(md, "\n### %s\n\n| row | unit |", group_title(group));
                        for (unsigned l = 0; l < nlabels; l++)
                                fprintf(md, " %s |", labels[l]);
                        for (unsigned l = 0; l < nlabels; l++)
                                if ((int)l != primary && primary >= 0)
                                        fprintf(md, " %s/%s |", pb_opt.primary, labels[l]);
                        fprintf(md, "\n|---|---|");
                        for (unsigned l = 0; l < nlabels; l++)
                                fprintf(md, "---|");
                        for (unsigned l = 0; l < nlabels; l++)
                                if ((int)l != primary && primary >= 0)
                                        fprintf(md, "---|");
                        fprintf(md, "\n");
                }
                fprintf(md, "| %s | %s |", r->row, text ? "" : r->unit);
                fprintf(js, "%s\n    {\"group\": ", i ? "," : "");
                json_str(js, r->group);
                fprintf(js, ", \"row\": ");
                json_str(js, r->row);
                fprintf(js, ", \"unit\": ");
                json_str(js, r->unit);
                fprintf(js, ", \"better\": ");
                json_str(js, r->better);
                fprintf(js, ", \"daemons\": {");
                for (unsigned l = 0; l < nlabels; l++) {
                        struct cell *c = &r->cell[l];
                        char v[32];
                        fprintf(js, "%s", l ? ", " : "");
                        json_str(js, labels[l]);
                        if (text) {
                                fprintf(md, " %s |", c->text[0] ? c->text : "–");
                                fprintf(js, ": {\"text\": ");
                                json_str(js, c->text);
                                fprintf(js, "}");
                                continue;
                        }
                        double m = cell_median(c);
                        fmt_value(v, sizeof(v), m);
                        if (c->n > 1)
                                fprintf(md, " %s ±%.0f%% |", v, cell_spread(c));
                        else
                                fprintf(md, " %s |", v);
                        fprintf(js, ": {\"values\": [");
                        for (unsigned k = 0; k < c->n; k++)
                                fprintf(js, "%s%.6g", k ? ", " : "", c->v[k]);
                        if (c->n)
                                fprintf(js, "], \"median\": %.6g, \"spread_pct\": %.3g}", m, cell_spread(c));
                        else
                                fprintf(js, "]}");
                }
                fprintf(js, "}, \"ratio\": {");
                bool first = true;
                for (unsigned l = 0; l < nlabels && primary >= 0; l++) {
                        if ((int)l == primary)
                                continue;
                        double a = cell_median(&r->cell[primary]), b = cell_median(&r->cell[l]);
                        double ratio = strcmp(r->better, "lo") == 0 ? b / a : a / b;
                        /* counts and derived ratios have no "better" to divide */
                        if (text || isnan(ratio) || isinf(ratio) || strcmp(r->unit, "x") == 0 ||
                            strcmp(r->unit, "per req") == 0 || strcmp(r->unit, "queues") == 0) {
                                fprintf(md, " |");
                                continue;
                        }
                        fprintf(md, " %.2f |", ratio);
                        fprintf(js, "%s", first ? "" : ", ");
                        json_str(js, labels[l]);
                        fprintf(js, ": %.4g", ratio);
                        first = false;
                }
                fprintf(js, "}}");
                fprintf(md, "\n");
        }
        fprintf(js, "\n  ]\n}\n");
        fclose(md);
        fclose(js);
        snprintf(path, sizeof(path), "%s/results.md", dir);
        in = fopen(path, "re");
        while (in && fgets(line, sizeof(line), in))
                fputs(line, stdout);
        if (in)
                fclose(in);
        return 0;
}

