/* SPDX-License-Identifier: GPL-2.0-or-later */
/* case-miss.c — the folded lookups of --case=insensitive in a big folder,
 * for counting their instructions (bench/case-miss.sh runs it under
 * callgrind, collecting inside first_lookup or later_lookups only).
 *
 *   case-miss --make DIR COUNT   fills the new folder DIR with COUNT empty
 *                                files, File-000000.txt …
 *   case-miss DIR COUNT N        N + 1 folded lookups in DIR, made so
 *                                (names in upper case: none matches
 *                                exactly): first_lookup() builds the
 *                                folder's index, later_lookups() does N
 *                                uses it; fails unless every one finds
 *                                its file and only the first scans */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "folder-index.h"

static int make(const char *dir, long count)
{
        if (mkdir(dir, 0755) < 0) {
                fprintf(stderr, "case-miss: mkdir %s: %s\n", dir, strerror(errno));
                return 1;
        }
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return 1;
        for (long i = 0; i < count; i++) {
                char name[32];
                snprintf(name, sizeof(name), "File-%06ld.txt", i);
                int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                if (fd < 0) {
                        fprintf(stderr, "case-miss: %s: %s\n", name, strerror(errno));
                        return 1;
                }
                close(fd);
        }
        close(dfd);
        return 0;
}

/* The index keeps a scan only when the folder's last change is older than
 * the clock's tick: wait (at most 2 s) for that, so the first lookup's
 * index is the one the others use. */
static int wait_settled(int fd)
{
        for (int i = 0; i < 2000; i++) {
                struct stat st;
                struct timespec now, pause = { 0, 1000000 };
                if (fstat(fd, &st) < 0 || clock_gettime(CLOCK_REALTIME_COARSE, &now) < 0)
                        return -1;
                if (now.tv_sec > st.st_ctim.tv_sec + 1 ||
                    (now.tv_sec >= st.st_ctim.tv_sec && now.tv_sec >= st.st_mtim.tv_sec &&
                     (now.tv_sec > st.st_ctim.tv_sec || now.tv_nsec > st.st_ctim.tv_nsec) &&
                     (now.tv_sec > st.st_mtim.tv_sec || now.tv_nsec > st.st_mtim.tv_nsec)))
                        return 0;
                nanosleep(&pause, NULL);
        }
        return -1;
}

/* The names looked up (in upper case) and the files they must find. */
struct probe {
        char name[32], want[32];
};

/* One folded lookup; -1 unless it finds its file. */
static int lookup(struct findex *ix, int fd, const struct probe *p)
{
        char out[FINDEX_NAME_SIZE];
        int r = findex_lookup(ix, fd, p->name, strlen(p->name), out);
        if (r != FINDEX_ONE || strcmp(out, p->want) != 0) {
                fprintf(stderr, "case-miss: %s answered %d (%s)\n", p->name, r, r == FINDEX_ONE ? out : "");
                return -1;
        }
        return 0;
}

/* Two functions, so that callgrind --toggle-collect counts either alone:
 * the first lookup (it scans the folder) and the later ones. */
__attribute__((noinline)) static int first_lookup(struct findex *ix, int fd, const struct probe *p)
{
        return lookup(ix, fd, p);
}

__attribute__((noinline)) static int later_lookups(struct findex *ix, int fd, const struct probe *p, long n)
{
        for (long i = 0; i < n; i++)
                if (lookup(ix, fd, &p[i]) < 0)
                        return -1;
        return 0;
}

int main(int argc, char **argv)
{
        if (argc == 4 && strcmp(argv[1], "--make") == 0)
                return make(argv[2], atol(argv[3]));
        if (argc != 4) {
                fprintf(stderr, "usage: case-miss --make DIR COUNT | case-miss DIR COUNT N\n");
                return 2;
        }
        long count = atol(argv[2]), n = atol(argv[3]);
        if (count <= 0 || n < 0)
                return 2;
        int fd = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || wait_settled(fd) < 0) {
                fprintf(stderr, "case-miss: %s: cannot open, or it keeps changing\n", argv[1]);
                return 1;
        }
        struct probe *probes = calloc((size_t)n + 1, sizeof(*probes));
        if (!probes)
                return 1;
        for (long i = 0; i <= n; i++) {
                long k = (i * 7919) % count;
                snprintf(probes[i].name, sizeof(probes[i].name), "FILE-%06ld.TXT", k);
                snprintf(probes[i].want, sizeof(probes[i].want), "File-%06ld.txt", k);
        }
        struct findex *ix = findex_new(NULL);
        if (!ix || first_lookup(ix, fd, &probes[0]) < 0)
                return 1;
        if (later_lookups(ix, fd, &probes[1], n) < 0)
                return 1;
        free(probes);
        struct findex_stats s;
        findex_get_stats(ix, &s);
        printf("lookups %ld scans %llu hits %llu names %zu bytes %zu\n", n + 1,
               (unsigned long long)s.scans, (unsigned long long)s.hits, s.names, s.bytes);
        findex_free(ix);
        close(fd);
        return s.scans == 1 ? 0 : 1;
}
