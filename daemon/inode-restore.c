/* SPDX-License-Identifier: GPL-2.0-or-later */
/* inode-restore.c — the inode table and its state (table-state.h): keeping
 * the records from now on, and rebuilding a table from the records a
 * previous worker left, with the same nodeids (see inode.h).
 *
 * A state is untrusted (its writer served a guest): every record is checked
 * as a guest's request would be — names as a LOOKUP's, parents a tree
 * rooted at nodeid 1 with no cycle, every index inside the tables — and a
 * record that fails a check makes the whole state untrusted (-EBADMSG).  A
 * record a crash caught half written (TSTATE_WRITING) is not a lie but a
 * torn update: it is dropped, and with it every inode below it and every
 * handle of those (their nodeids answer EBADF, as after a FORGET). */
#include "inode-private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "table-state.h"
#include "util.h"

enum { MARK_NONE, MARK_VISITING, MARK_OK, MARK_DROPPED };

/* What the checks need of each record; 24 bytes a slot. */
struct rinfo {
        uint32_t gen;
        uint32_t parent_idx;
        uint32_t parent_gen;
        uint8_t state;
        uint8_t mark;
        bool is_dir;
        bool needed;
        uint64_t nlookup;
};

static bool name_ok(const char *name)
{
        return name[0] && strchr(name, '/') == NULL && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

void inode_table_set_state(struct inode_table *t, struct tstate *st)
{
        uint32_t next;

        slot_table_lock(&t->slots);
        t->state = st;
        next = slot_next(&t->slots);
        /* Parents before their children would be nicer, but a restore only
         * reads whole records, whatever their order. */
        for (uint32_t i = 1; i < next; i++) {
                struct inode *inode = table_inode(t, i);

                if (inode)
                        inode_state_write_locked(t, inode, false);
        }
        slot_table_unlock(&t->slots);
}

/* Resolves idx's chain up to the root: MARK_OK, MARK_DROPPED (a torn record
 * on the way), or -EBADMSG.  `stack` has room for every slot. */
static int resolve(struct rinfo *ri, uint32_t limit, uint32_t idx, uint32_t *stack, char *why,
                   size_t why_size)
{
        size_t n = 0;
        uint8_t result;

        for (;;) {
                struct rinfo *r = &ri[idx];

                if (r->mark == MARK_OK || r->mark == MARK_DROPPED) {
                        result = r->mark;
                        break;
                }
                if (r->mark == MARK_VISITING) {
                        (void) snprintf(why, why_size, "inode %u is its own ancestor", idx);
                        return -EBADMSG;
                }
                if (r->state == TSTATE_WRITING) {
                        result = MARK_DROPPED;
                        r->mark = MARK_DROPPED;
                        break;
                }
                if (idx == INODE_ROOT_ID || r->parent_idx == 0) {
                        result = MARK_OK;
                        r->mark = MARK_OK;
                        break;
                }
                r->mark = MARK_VISITING;
                stack[n++] = idx;
                if (r->parent_idx >= limit) {
                        (void) snprintf(why, why_size, "inode %u has parent %u, outside the table", idx,
                                        r->parent_idx);
                        return -EBADMSG;
                }
                {
                        struct rinfo *p = &ri[r->parent_idx];

                        if (p->state == TSTATE_FREE) {
                                (void) snprintf(why, why_size, "inode %u has parent %u, which is not in the table",
                                                idx, r->parent_idx);
                                return -EBADMSG;
                        }
                        if (p->state == TSTATE_LIVE && (p->gen != r->parent_gen || !p->is_dir)) {
                                (void) snprintf(why, why_size, "inode %u names parent %u wrongly", idx,
                                                r->parent_idx);
                                return -EBADMSG;
                        }
                }
                idx = r->parent_idx;
        }
        while (n)
                ri[stack[--n]].mark = result;
        return result;
}

/* Reads, checks and resolves every inode record; marks what must be rebuilt. */
static int check_records(struct inode_table *t, struct tstate *st, struct rinfo *ri, uint32_t limit,
                         uint32_t hlimit, char *why, size_t why_size)
{
        _cleanup_free_ uint32_t *stack = NULL;
        _cleanup_free_ struct tstate_inode *rec = malloc(sizeof(*rec));
        struct inode *root = table_inode(t, INODE_ROOT_ID);
        int r;

        if (!rec)
                return -ENOMEM;
        for (uint32_t i = 1; i < limit; i++) {
                unsigned state;

                if ((r = tstate_inode_read(st, i, &state, rec, why, why_size)) < 0)
                        return r;
                if (state > TSTATE_LIVE) {
                        (void) snprintf(why, why_size, "inode %u has state word %u", i, state);
                        return -EBADMSG;
                }
                ri[i].state = (uint8_t)state;
                if (state != TSTATE_LIVE)
                        continue;
                ri[i].gen = rec->gen;
                ri[i].parent_idx = rec->parent_idx;
                ri[i].parent_gen = rec->parent_gen;
                ri[i].nlookup = rec->nlookup;
                ri[i].is_dir = rec->type == S_IFDIR;
                if (i == INODE_ROOT_ID) {
                        if (rec->gen != 0 || rec->dev != root->dev || rec->ino != root->ino ||
                            rec->parent_idx != 0 || rec->name_len != 0) {
                                (void) snprintf(why, why_size, "the state is of another shared folder");
                                return -EBADMSG;
                        }
                        continue;
                }
                if (rec->gen == 0) {
                        (void) snprintf(why, why_size, "inode %u has generation 0", i);
                        return -EBADMSG;
                }
                if ((rec->parent_idx == 0) != (rec->name_len == 0) ||
                    (rec->name_len && !name_ok(rec->name))) {
                        (void) snprintf(why, why_size, "inode %u has a name a LOOKUP would refuse", i);
                        return -EBADMSG;
                }
                if (rec->parent_idx == i) {
                        (void) snprintf(why, why_size, "inode %u is its own ancestor", i);
                        return -EBADMSG;
                }
        }
        if (limit <= INODE_ROOT_ID || ri[INODE_ROOT_ID].state != TSTATE_LIVE) {
                (void) snprintf(why, why_size, "the state has no root inode");
                return -EBADMSG;
        }
        stack = malloc((size_t)limit * sizeof(*stack));
        if (!stack)
                return -ENOMEM;
        for (uint32_t i = 1; i < limit; i++) {
                if (ri[i].state == TSTATE_FREE)
                        continue;
                if ((r = resolve(ri, limit, i, stack, why, why_size)) < 0)
                        return r;
                if (r == MARK_OK && ri[i].nlookup > 0)
                        ri[i].needed = true;
        }
        /* Inodes open handles hold. */
        for (uint32_t i = 0; i < hlimit; i++) {
                struct tstate_handle h;
                unsigned state;
                uint32_t idx;

                if ((r = tstate_handle_read(st, i, &state, &h, why, why_size)) < 0)
                        return r;
                if (state > TSTATE_LIVE) {
                        (void) snprintf(why, why_size, "handle %u has state word %u", i, state);
                        return -EBADMSG;
                }
                if (state != TSTATE_LIVE)
                        continue;
                idx = (uint32_t)h.nodeid;
                if (i < 2 || h.gen == 0 || idx == 0 || idx >= limit || ri[idx].state == TSTATE_FREE ||
                    (ri[idx].state == TSTATE_LIVE && (ri[idx].gen != (uint32_t)(h.nodeid >> 32) ||
                                                      ri[idx].is_dir != h.is_dir))) {
                        (void) snprintf(why, why_size, "handle %u names an inode the state does not have", i);
                        return -EBADMSG;
                }
                if (ri[idx].mark == MARK_OK)
                        ri[idx].needed = true;
        }
        /* A needed inode needs its parents (they are MARK_OK: resolved above). */
        for (uint32_t i = 1; i < limit; i++) {
                for (uint32_t j = i; ri[j].needed && j != INODE_ROOT_ID && ri[j].parent_idx; ) {
                        uint32_t p = ri[j].parent_idx;

                        if (ri[p].needed)
                                break;
                        ri[p].needed = true;
                        j = p;
                }
        }
        return 0;
}

/* Rebuilds the records marked needed: structs in their slots, then names. */
static int rebuild(struct inode_table *t, struct tstate *st, struct rinfo *ri, uint32_t limit)
{
        _cleanup_free_ struct tstate_inode *rec = malloc(sizeof(*rec));
        struct inode *old_parent;
        uint32_t want;
        unsigned state;

        if (!rec)
                return -ENOMEM;
        for (uint32_t i = INODE_ROOT_ID + 1; i < limit; i++) {
                struct inode *inode;

                if (!ri[i].needed)
                        continue;
                if (tstate_inode_read(st, i, &state, rec, NULL, 0) < 0 || state != TSTATE_LIVE)
                        return -EBADMSG;   /* changed under us: another process writes it */
                inode = inode_alloc(t, -1, (dev_t)rec->dev, (ino_t)rec->ino, rec->type);
                if (!inode)
                        return -ENOMEM;
                if (!slot_place(&t->slots, i, rec->gen, inode)) {
                        inode_pool_free(&t->pool, inode);
                        return -ENOMEM;
                }
                inode->nodeid = ((uint64_t)rec->gen << 32) | i;
                inode->birth = rec->birth;
                if (!rec->birth)
                        inode->handle_hash = rec->handle_hash;
                atomic_store_explicit(&inode->nlookup, rec->nlookup, memory_order_relaxed);
                /* The table's reference while the guest holds lookups; the
                 * kids' and handles' come as they are linked. */
                atomic_store_explicit(&inode->refs, rec->nlookup ? 1 : 0, memory_order_relaxed);
                if (rec->stale)
                        inode->stale = true;
                else
                        inode_hash_insert_locked(t, inode);
                if (!rec->parent_idx)
                        inode->keep_fd = true;   /* no name to reopen it by: ESTALE when used */
        }
        slot_table_settle(&t->slots);
        want = t->n_buckets;
        while (want < t->slots.used && want <= SLOT_MAX / 2)
                want *= 2;
        if (want != t->n_buckets)
                inode_hash_resize_locked(t, want);
        for (uint32_t i = INODE_ROOT_ID + 1; i < limit; i++) {
                struct inode *inode, *parent;

                if (!ri[i].needed || !ri[i].parent_idx)
                        continue;
                if (tstate_inode_read(st, i, &state, rec, NULL, 0) < 0 || state != TSTATE_LIVE)
                        return -EBADMSG;
                inode = table_inode(t, i);
                parent = table_inode(t, ri[i].parent_idx);
                old_parent = inode_set_name_locked(t, inode, parent, rec->name, false);
                if (!inode_name(inode) || inode->parent != parent || old_parent)
                        return -ENOMEM;
        }
        return 0;
}

int inode_table_restore(struct inode_table *t, struct tstate *st, char *why, size_t why_size)
{
        uint32_t limit = tstate_inode_limit(st), hlimit = tstate_handle_limit(st);
        _cleanup_free_ struct rinfo *ri = NULL;
        int r;

        if (limit == 0) {
                (void) snprintf(why, why_size, "the state has no inode records");
                return -EBADMSG;
        }
        ri = calloc(limit, sizeof(*ri));
        if (!ri)
                return -ENOMEM;
        slot_table_lock(&t->slots);
        if (t->slots.used != 1) {
                slot_table_unlock(&t->slots);
                (void) snprintf(why, why_size, "the session already has inodes");
                return -EBUSY;
        }
        r = check_records(t, st, ri, limit, hlimit, why, why_size);
        if (r == 0) {
                r = rebuild(t, st, ri, limit);
                if (r < 0)
                        (void) snprintf(why, why_size, "rebuilding the inode table: %s", strerror(-r));
        }
        if (r == 0) {
                /* The records of what was not rebuilt (torn, or held by no
                 * one any more) go, so that the state is the table again. */
                for (uint32_t i = INODE_ROOT_ID + 1; i < limit; i++)
                        if (ri[i].state != TSTATE_FREE && !ri[i].needed)
                                tstate_inode_clear(st, i);
                r = tstate_take_long_names(st);
                if (r < 0)
                        (void) snprintf(why, why_size, "out of memory");
                else
                        t->state = st;
        }
        slot_table_unlock(&t->slots);
        return r;
}

struct inode *inode_restored(struct inode_table *t, uint64_t nodeid)
{
        struct inode *inode = slot_find(&t->slots, nodeid);

        return inode && inode->nodeid == nodeid ? inode : NULL;
}
