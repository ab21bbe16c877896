/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz-util.h — what the libFuzzer targets share: a cursor over the input
 * (every read past its end gives zeros, so any input is a valid one), the
 * fd-leak check, and quieting the daemon's log. */
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

/* libFuzzer's entry point (each target defines it). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz_input {
        const uint8_t *p;
        size_t left;
};

static inline void fz_bytes(struct fz_input *in, void *dst, size_t n)
{
        size_t have = n < in->left ? n : in->left;

        if (have)
                memcpy(dst, in->p, have);
        if (have < n)
                memset((uint8_t *)dst + have, 0, n - have);
        in->p += have;
        in->left -= have;
}

static inline uint8_t fz_u8(struct fz_input *in)
{
        uint8_t v;

        fz_bytes(in, &v, 1);
        return v;
}

static inline uint16_t fz_u16(struct fz_input *in)
{
        uint16_t v;

        fz_bytes(in, &v, 2);
        return v;
}

static inline uint32_t fz_u32(struct fz_input *in)
{
        uint32_t v;

        fz_bytes(in, &v, 4);
        return v;
}

static inline unsigned fz_count_fds(void)
{
        DIR *d = opendir("/proc/self/fd");
        unsigned n = 0;

        if (!d)
                abort();
        while (readdir(d))
                n++;
        closedir(d);
        return n;
}

/* Every FZ_FD_CHECK_EVERY inputs: the fds open between inputs must not grow
 * beyond what they were at the first check.  libFuzzer itself opens a few
 * now and then (corpus files it writes), hence the slack; a leak of one fd
 * per input grows them by FZ_FD_CHECK_EVERY between two checks. */
#define FZ_FD_CHECK_EVERY 256
#define FZ_FD_SLACK       16

static inline void fz_print_fds(void)
{
        DIR *d = opendir("/proc/self/fd");
        struct dirent *e;

        if (!d)
                return;
        while ((e = readdir(d))) {
                char link[256];
                ssize_t n = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);

                if (n < 0)
                        continue;
                link[n] = '\0';
                fprintf(stderr, "  fd %s -> %s\n", e->d_name, link);
        }
        closedir(d);
}

static inline void fz_check_fds(unsigned long *runs, unsigned *baseline)
{
        unsigned n;

        if ((*runs)++ % FZ_FD_CHECK_EVERY)
                return;
        n = fz_count_fds();
        if (*baseline == 0) {
                *baseline = n;
                return;
        }
        if (n > *baseline + FZ_FD_SLACK) {
                fprintf(stderr, "fuzz: %u fds open between inputs, %u at the first check: a leak\n",
                        n, *baseline);
                fz_print_fds();
                abort();
        }
}

/* The daemon logs refused messages at warning and broken ones at error; at
 * fuzzing speed that is noise, so only errors stay (run with
 * -close_fd_mask=2 to drop those too: libFuzzer keeps its own reports).
 * SLUICE_FUZZ_LOG=debug|info|warning brings the rest back. */
static inline void fz_quiet_log(void)
{
        enum log_level level = LOG_LEVEL_ERROR;
        const char *e = getenv("SLUICE_FUZZ_LOG");

        if (e)
                (void)log_parse_level(e, &level);
        log_set_level(level);
}

/* Empties the current directory, descending with fchdir(): a tree the guest
 * built deeper than PATH_MAX has no path nftw() could stat.  Symlinks are
 * removed, never entered (O_NOFOLLOW). */
static inline void fz_empty_cwd(void)
{
        DIR *d = opendir(".");
        struct dirent *de;
        char **names = NULL;
        size_t n = 0;

        if (!d)
                return;
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
                        char **more = realloc(names, (n + 1) * sizeof(*names));

                        if (!more || !(more[n] = strdup(de->d_name)))
                                abort();
                        names = more;
                        n++;
                }
        closedir(d);
        for (size_t i = 0; i < n; i++) {
                int fd = open(names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                if (fd >= 0) {
                        bool in = fchdir(fd) == 0;

                        close(fd);      /* no fd per level: a deep tree would use them up */
                        if (in) {
                                fz_empty_cwd();
                                if (chdir("..") < 0)
                                        abort();
                        }
                        (void)rmdir(names[i]);
                } else {
                        (void)unlink(names[i]);
                }
                free(names[i]);
        }
        free(names);
}

/* Empties a directory (as root: whatever modes the guest gave its files). */
static inline void fz_empty_dir(const char *path)
{
        int here = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);

        if (here < 0)
                abort();
        if (chdir(path) == 0)
                fz_empty_cwd();
        if (fchdir(here) < 0)
                abort();
        close(here);
}

/* Files the guest makes in the scratch share stay small: without a bound the
 * fuzzer soon finds FALLOCATE and SETATTR sizes of gigabytes, and then spends
 * its time in the kernel allocating and freeing tmpfs pages.  Past the limit
 * the daemon gets EFBIG (SIGXFSZ is ignored), as on a full file system. */
#define FZ_FILE_SIZE_MAX (4 * 1024 * 1024)

static inline void fz_limit_file_size(void)
{
        struct rlimit rl = { FZ_FILE_SIZE_MAX, FZ_FILE_SIZE_MAX };

        (void)signal(SIGXFSZ, SIG_IGN);
        if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
                abort();
}

/* The per-process scratch directory of a target that needs one:
 * $TMPDIR/NAME-XXXXXX, removed with everything in it when the process exits.
 * Also quiets the log and bounds file sizes, which such targets want too. */
static inline char *fz_scratch_path(void)
{
        static char path[4096];

        return path;
}

static inline void fz_remove_scratch(void)
{
        fz_empty_dir(fz_scratch_path());
        (void)rmdir(fz_scratch_path());
}

static inline const char *fz_make_scratch(const char *name)
{
        char *path = fz_scratch_path();

        fz_quiet_log();
        fz_limit_file_size();
        snprintf(path, 4096, "%s/%s-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
        if (!mkdtemp(path))
                abort();
        atexit(fz_remove_scratch);
        return path;
}
