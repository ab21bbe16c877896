/* SPDX-License-Identifier: GPL-2.0-or-later */
/* state-size — what the `tables` memfd (daemon/table-state.h) of a session
 * holding many inodes costs: records written as the inode table writes
 * them, one per inode, named as the files of a real tree are named.
 *
 *   state-size [-n N] [DIR]
 *
 * Walks DIR (default /usr) for names, repeating them until N inodes
 * (default 1,000,000) are recorded, then prints the memory the memfd holds
 * (its allocated blocks: holes are free) and its size, with the share of
 * names too long for a record.  A benchmark: nothing fails on a figure. */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "table-state.h"

static char **names;
static size_t n_names, cap_names;

static int collect(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
        const char *base = path + ftw->base;
        char *copy;

        (void) sb;
        (void) flag;
        if (!base[0] || n_names >= 4000000)
                return 0;
        if (n_names == cap_names) {
                size_t cap = cap_names ? cap_names * 2 : 4096;
                char **p = realloc(names, cap * sizeof(*p));

                if (!p)
                        return 1;
                names = p;
                cap_names = cap;
        }
        copy = strdup(base);
        if (!copy)
                return 1;
        names[n_names++] = copy;
        return 0;
}

int main(int argc, char **argv)
{
        const char *dir = "/usr";
        unsigned long n = 1000000, long_names = 0;
        struct tstate *st;
        uint64_t allocated, size;
        int opt, fd, r;

        while ((opt = getopt(argc, argv, "n:")) != -1) {
                if (opt != 'n') {
                        fprintf(stderr, "usage: %s [-n N] [DIR]\n", argv[0]);
                        return 2;
                }
                n = strtoul(optarg, NULL, 10);
        }
        if (optind < argc)
                dir = argv[optind];
        if (nftw(dir, collect, 64, FTW_PHYS) != 0 || n_names == 0) {
                fprintf(stderr, "state-size: no names under %s\n", dir);
                return 1;
        }
        if (n == 0 || n > (1ul << 29)) {
                fprintf(stderr, "state-size: -n must be between 1 and %lu\n", 1ul << 29);
                return 2;
        }
        r = tstate_new(&st, &fd);
        if (r < 0) {
                fprintf(stderr, "state-size: %s\n", strerror(-r));
                return 1;
        }
        for (unsigned long i = 0; i < n; i++) {
                struct tstate_inode rec = {
                        .gen = (uint32_t)i + 1, .dev = 1, .ino = i + 2, .type = S_IFREG, .nlookup = 1,
                        .parent_idx = 1,
                };
                const char *name = names[i % n_names];

                rec.name_len = strlen(name);
                if (rec.name_len > TSTATE_NAME_MAX)
                        continue;
                memcpy(rec.name, name, rec.name_len + 1);
                long_names += rec.name_len > TSTATE_NAME_INLINE;
                tstate_inode_write(st, (uint32_t)i + 2, &rec, true);
        }
        tstate_size(st, &allocated, &size);
        printf("%lu inodes (names from %zu entries of %s, %.1f %% longer than %u bytes): "
               "%.1f MiB in memory, %.1f MiB file size, %.1f bytes an inode%s\n",
               n, n_names, dir, 100.0 * (double)long_names / (double)n, TSTATE_NAME_INLINE,
               (double)allocated / 1048576.0, (double)size / 1048576.0, (double)allocated / (double)n,
               tstate_broken(st) ? " (BROKEN: out of memory)" : "");
        tstate_free(st);
        close(fd);
        return 0;
}
