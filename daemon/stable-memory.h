/* SPDX-License-Identifier: GPL-2.0-or-later */
/* stable-memory.h — memory that lock-free readers may touch after its
 * objects are gone (the slot tables, inode structs and hash buckets of
 * inode.h).
 *
 * It comes straight from mmap(), so that whole pages can be given back with
 * MADV_DONTNEED once nothing lives there: the pages stay mapped, so a late
 * reader never faults, and they read as zeros from then on, which every such
 * reader takes as "nothing here" (a NULL slot item, an object whose refs is
 * 0).  That is how a table that held a million inodes shrinks back after the
 * FORGETs.  Thread-safe. */
#pragma once

#include <stddef.h>

/* The page size the tables count in: what they give back is whole units. */
#define STABLE_UNIT_BYTES 4096u

/* bytes of zeroed memory, or NULL; munmap() it. */
void *stable_map_zeroed(size_t bytes);
/* Gives the pages of [p, p + bytes) back; they read as zeros from now on.
 * Only where pages are STABLE_UNIT_BYTES: with larger pages the kernel would
 * round up over live neighbours, so nothing goes. */
void stable_release(void *p, size_t bytes);
