/* SPDX-License-Identifier: GPL-2.0-or-later */
/* resume-state.c — see resume-state.h. */
#include "resume-state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

/* FNV-1a over the configuration after its checksum field: enough to tell a
 * torn or garbage copy, which is all it is for (the state is the worker's
 * own; what it names is checked again on resume). */
uint64_t rstate_checksum(const struct rstate_config *c)
{
        const uint8_t *p = (const uint8_t *)&c->features;
        const uint8_t *end = (const uint8_t *)(c + 1);
        uint64_t h = 0xcbf29ce484222325ull ^ c->generation;

        for (; p < end; p++) {
                h ^= *p;
                h *= 0x100000001b3ull;
        }
        return h;
}

static int map_state(int fd, struct rstate **ret)
{
        struct rstate *s = calloc(1, sizeof(*s));
        void *p;

        if (!s)
                return -ENOMEM;
        p = mmap(NULL, sizeof(struct rstate_file), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
                int e = errno;

                free(s);
                return -e;
        }
        s->fd = fd;
        s->file = p;
        *ret = s;
        return 0;
}

int rstate_create(struct rstate **ret)
{
        struct rstate *s = NULL;
        int fd, r;

        fd = memfd_create("sluice-fs-state", MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (fd < 0)
                return -errno;
        if (ftruncate(fd, sizeof(struct rstate_file)) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        /* Nobody may shrink it under a mapping (SIGBUS). */
        (void)fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
        r = map_state(fd, &s);
        if (r < 0) {
                close(fd);
                return r;
        }
        s->file->magic = RSTATE_MAGIC;
        s->file->version = RSTATE_VERSION;
        s->file->size = sizeof(struct rstate_file);
        rstate_commit(s);
        *ret = s;
        return 0;
}

static int bad(char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *why, size_t size, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        (void)vsnprintf(why, size, fmt, ap);
        va_end(ap);
        return -EBADMSG;
}

static int check_config(const struct rstate_config *c, char *why, size_t size)
{
        if (rstate_checksum(c) != c->checksum)
                return bad(why, size, "the stored state's checksum does not match (a torn write)");
        if (c->n_rings > RSTATE_MAX_RINGS)
                return bad(why, size, "the stored state names %u rings", c->n_rings);
        if (c->n_regions > GM_MAX_REGIONS)
                return bad(why, size, "the stored state names %u memory regions", c->n_regions);
        for (unsigned i = 0; i < c->n_regions; i++)
                if (c->regions[i].slot >= GM_MAX_REGIONS || c->regions[i].fd_slot >= GM_MAX_REGIONS)
                        return bad(why, size, "the stored state names memory slot %u (fd %u)",
                                   c->regions[i].slot, c->regions[i].fd_slot);
        for (unsigned i = 0; i < c->n_rings; i++) {
                uint32_t num = c->rings[i].num;

                if (num > VQ_MAX_SIZE || (num & (num - 1)))
                        return bad(why, size, "the stored state has ring %u of size %u", i, num);
        }
        return 0;
}

int rstate_open(int fd, struct rstate **ret, char *why, size_t why_size)
{
        struct rstate *s = NULL;
        struct stat st;
        const struct rstate_file *f;
        int r;

        if (fstat(fd, &st) < 0) {
                r = -errno;
                close(fd);
                return bad(why, why_size, "cannot look at the stored state: %s", strerror(-r));
        }
        if (!S_ISREG(st.st_mode) || st.st_size != (off_t)sizeof(struct rstate_file)) {
                close(fd);
                return bad(why, why_size, "the stored state is %lld bytes, not %zu (another version)",
                           (long long)st.st_size, sizeof(struct rstate_file));
        }
        r = map_state(fd, &s);
        if (r < 0) {
                close(fd);
                return bad(why, why_size, "cannot map the stored state: %s", strerror(-r));
        }
        f = s->file;
        if (f->magic != RSTATE_MAGIC)
                r = bad(why, why_size, "the stored state is not one (wrong magic number)");
        else if (f->version != RSTATE_VERSION || f->size != sizeof(struct rstate_file))
                r = bad(why, why_size, "the stored state has version %u; this worker reads %u",
                        f->version, RSTATE_VERSION);
        else if (f->active > 1)
                r = bad(why, why_size, "the stored state's active copy is %u", f->active);
        else
                r = check_config(&f->config[f->active], why, why_size);
        if (r < 0) {
                rstate_free(s);
                return r;
        }
        s->work = f->config[f->active];
        *ret = s;
        return 0;
}

void rstate_free(struct rstate *s)
{
        if (!s)
                return;
        if (s->file)
                munmap(s->file, sizeof(*s->file));
        if (s->fd >= 0)
                close(s->fd);
        free(s);
}

int rstate_fd(const struct rstate *s)
{
        return s->fd;
}

void rstate_commit(struct rstate *s)
{
        struct rstate_file *f = s->file;
        uint32_t next = f->active ? 0 : 1;

        s->work.generation = f->config[f->active].generation + 1;
        s->work.checksum = rstate_checksum(&s->work);
        f->config[next] = s->work;
        /* The copy is whole before it becomes the active one: a SIGKILL in
         * between leaves the old copy active.  (Ordering for a successor
         * after our death needs only the compiler to keep program order.) */
        __atomic_store_n(&f->active, next, __ATOMIC_RELEASE);
}

void rstate_clear_device(struct rstate *s)
{
        memset(&s->work, 0, sizeof(s->work));
        rstate_commit(s);
        memset(s->file->rings, 0, sizeof(s->file->rings));
}

struct rstate_ring *rstate_ring(struct rstate *s, unsigned i)
{
        return i < RSTATE_MAX_RINGS ? &s->file->rings[i] : NULL;
}

void rstate_set_handed_over(struct rstate *s, bool v)
{
        __atomic_store_n(&s->file->handed_over, v ? 1u : 0u, __ATOMIC_RELEASE);
}

bool rstate_handed_over(const struct rstate *s)
{
        return __atomic_load_n(&s->file->handed_over, __ATOMIC_ACQUIRE) == 1;
}
