/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pt-dir.c — directory handles: OPENDIR, READDIR, READDIRPLUS, RELEASEDIR,
 * FSYNCDIR. */
#include "pt-internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "confine.h"
#include "pt-name.h"

/* The directory `dir` (the dispatcher checked its type) opened for reading
 * through our own fd's magic link in /proc/self/fd.  confine_reopen() would
 * first fstat the O_PATH fd to refuse a symlink and afterwards compare
 * (st_dev, st_ino): an inode's type never changes, and the magic link of an
 * fd we hold leads to exactly the object that fd holds (O_DIRECTORY makes the
 * kernel refuse anything else on top), so both are known already: two
 * system calls fewer per OPENDIR. */
static int reopen_dir(struct pt_fs *fs, const struct inode *dir)
{
        char name[16];
        int fd;

        if (dir->type != S_IFDIR)
                return -ENOTDIR;
        confine_fd_name(name, sizeof(name), dir->fd);
        fd = openat(fs->proc_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
        return fd >= 0 ? fd : -errno;
}

int pt_opendir(struct pt_fs *fs, struct freq *r, struct inode *dir)
{
        struct fuse_open_out out = { 0 };
        int fd, err;

        PT_NEED_FD(fs, dir);
        if ((err = pt_check_access(fs, r, dir, R_OK)) < 0 ||
            (err = pt_check_inside_unconfined(fs, dir)) < 0)
                return err;
        fd = pt_fd_keep(fs, reopen_dir(fs, dir));
        if (fd < 0)
                return fd;
        err = handle_add(fs->handles, fd, dir, true, O_RDONLY | O_DIRECTORY, &out.fh);
        if (err < 0)
                return err;
        if (fs->cache == FS_CACHE_ALWAYS)
                out.open_flags = FOPEN_KEEP_CACHE | FOPEN_CACHE_DIR;
        return pt_reply(r, &out, sizeof(out));
}

static bool is_dot_or_dotdot(const char *n)
{
        return n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'));
}

/* Linux's getdents64 record (glibc's struct dirent64 has a fixed-size name). */
struct linux_dirent64 {
        uint64_t d_ino;
        int64_t d_off;
        unsigned short d_reclen;
        unsigned char d_type;
        char d_name[];
};

/* The largest record getdents64 makes: a 255-byte name, its NUL, aligned to 8. */
#define DIRENT64_MAX ((offsetof(struct linux_dirent64, d_name) + 256 + 7) & ~(size_t)7)

/* READDIR/READDIRPLUS: seek the directory fd to the guest's offset (a cookie
 * we handed out as d_off), read a batch with getdents64 into the worker's
 * scratch and pack entries straight into the guest's reply buffer.  Entries
 * read but not sent are read again next time: no per-handle buffer. */
static int do_readdir(struct pt_fs *fs, struct freq *r, bool plus)
{
        PT_ARG(fuse_read_in, in, r);
        _cleanup_href_ h = PT_DIR(fs, in->fh);
        const size_t hdr = sizeof(struct fuse_out_header);
        size_t max, used = 0, chunk;
        bool full = false, last;
        int err = 0;

        if (!h.p)
                return -EBADF;
        if (r->out_size < hdr)
                return -EINVAL;
        if (in->offset > (uint64_t)INT64_MAX)
                return -EINVAL;
        max = r->out_size - hdr;
        if (max > in->size)
                max = in->size;
        /* A host record is about as big as a dirent, a quarter of a direntplus. */
        chunk = plus ? max / 4 : max;
        if (chunk < 1024)
                chunk = 1024;
        if (chunk > FREQ_XATTR_SIZE_MAX)
                chunk = FREQ_XATTR_SIZE_MAX;

        pthread_mutex_lock(&h.p->dir_mutex);
        if (lseek(h.p->fd, (off_t)in->offset, SEEK_SET) < 0)
                err = -errno;
        while (err == 0 && !full) {
                ssize_t n = getdents64(h.p->fd, r->buf, chunk);
                size_t pos = 0;

                if (n < 0) {
                        if (used == 0)
                                err = -errno;
                        break;
                }
                if (n == 0)
                        break;
                /* Room left for the longest record: the kernel stopped at the
                 * end of the directory, and another getdents64 would only say
                 * so.  What this batch gives is the reply, unless it gave
                 * nothing (an empty reply is the end for the guest; a short
                 * one is not: it asks again from the last offset). */
                last = chunk - (size_t)n >= DIRENT64_MAX;
                while (pos < (size_t)n) {
                        const struct linux_dirent64 *de = (const void *)(r->buf + pos);
                        union {
                                struct fuse_direntplus p;
                                uint8_t bytes[sizeof(struct fuse_direntplus) + PT_NAME_GUEST_MAX + 8];
                        } ent;
                        const char *host_name = de->d_name;
                        char host_copy[FREQ_NAME_MAX + 1];
                        struct fuse_dirent *d = plus ? &ent.p.dirent : (struct fuse_dirent *)ent.bytes;
                        size_t name_off = plus ? FUSE_NAME_OFFSET_DIRENTPLUS : FUSE_NAME_OFFSET;
                        size_t namelen, size, rec;

                        rec = de->d_reclen;
                        if (rec < offsetof(struct linux_dirent64, d_name) + 1 || rec > (size_t)n - pos) {
                                err = used ? 0 : -EIO;
                                full = true;
                                break;
                        }
                        pos += rec;
                        namelen = strnlen(de->d_name, rec - offsetof(struct linux_dirent64, d_name));
                        if (namelen == 0 || namelen > FREQ_NAME_MAX)
                                continue;
                        if (r->name_modes & PT_NAMES_WINDOWS) {
                                /* The lookup below wants the host name, the guest its own form. */
                                memcpy(host_copy, de->d_name, namelen);
                                host_copy[namelen] = '\0';
                                host_name = host_copy;
                                namelen = pt_name_to_guest(r->name_modes, host_copy, namelen,
                                                           (char *)&ent + name_off);
                        }
                        size = FUSE_DIRENT_ALIGN(name_off + namelen);
                        if (used + size > max) {
                                if (used == 0)
                                        err = -EINVAL;   /* the guest's buffer cannot take one entry */
                                full = true;
                                break;
                        }
                        /* Every header field is set below (a direntplus's entry by
                         * the lookup or here); only the name's padding needs zeros:
                         * the record's last 8 bytes, all at or after name_off. */
                        if (host_name == de->d_name) {
                                memset((uint8_t *)&ent + size - 8, 0, 8);
                                memcpy((uint8_t *)&ent + name_off, de->d_name, namelen);
                                /* NUL-terminated for pt_lookup_entry() even when the record ends with the name. */
                                ent.bytes[name_off + namelen] = '\0';
                                host_name = (const char *)&ent + name_off;
                        } else {
                                /* The padding after the mapped name's NUL. */
                                memset((uint8_t *)&ent + name_off + namelen, 0,
                                       size - name_off - namelen);
                        }
                        if (plus && !is_dot_or_dotdot(host_name)) {
                                /* Counts a lookup: the kernel instantiates the dentry. */
                                int lerr = pt_lookup_entry(fs, h.p->inode, host_name,
                                                     &ent.p.entry_out);

                                if (lerr == -ENOENT)
                                        continue;       /* removed meanwhile */
                                if (lerr == -EACCES) {
                                        /* Listed, not entered (a pseudo file system's mount,
                                         * a directory without search permission): nodeid 0,
                                         * the kernel makes no dentry and a LOOKUP says why. */
                                        memset(&ent.p.entry_out, 0, sizeof(ent.p.entry_out));
                                        ent.p.entry_out.attr.ino = de->d_ino;
                                        ent.p.entry_out.attr.mode = (uint32_t)DTTOIF(de->d_type);
                                        lerr = 0;
                                }
                                if (lerr < 0) {
                                        err = used ? 0 : lerr;
                                        full = true;
                                        break;
                                }
                        } else if (plus) {
                                /* nodeid 0: the kernel makes no dentry for "." and "..". */
                                memset(&ent.p.entry_out, 0, sizeof(ent.p.entry_out));
                                ent.p.entry_out.attr.ino = de->d_ino;
                                ent.p.entry_out.attr.mode = (uint32_t)DTTOIF(de->d_type);
                        }
                        d->ino = de->d_ino;
                        d->off = (uint64_t)de->d_off;
                        d->namelen = (uint32_t)namelen;
                        d->type = de->d_type;
                        if (!freq_put(r, hdr + used, &ent, size)) {
                                if (plus && ent.p.entry_out.nodeid)
                                        inode_forget(fs->inodes, ent.p.entry_out.nodeid, 1);
                                err = used ? 0 : -EIO;
                                full = true;
                                break;
                        }
                        used += size;
                }
                if (last && used > 0)
                        break;
        }
        pthread_mutex_unlock(&h.p->dir_mutex);
        return err < 0 ? err : pt_reply_payload(r, used);
}

int pt_readdir(struct pt_fs *fs, struct freq *r, struct inode *unused)
{
        return do_readdir(fs, r, false);
}

int pt_readdirplus(struct pt_fs *fs, struct freq *r, struct inode *unused)
{
        return do_readdir(fs, r, true);
}

int pt_releasedir(struct pt_fs *fs, struct freq *r, struct inode *unused)
{
        PT_ARG(fuse_release_in, in, r);

        if (handle_release(fs->handles, in->fh, true) < 0)
                return -EBADF;
        return pt_reply_ok(r);
}

int pt_fsyncdir(struct pt_fs *fs, struct freq *r, struct inode *unused)
{
        return pt_sync_handle(fs, r, true);
}
