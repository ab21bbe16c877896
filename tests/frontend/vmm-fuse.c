/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vmm-fuse.c — typed FUSE requests of the test VMM, laid out the way the
 * Linux 6.1 virtio-fs driver lays them out (FUSE 7.38): one readable segment
 * per argument, the out header and the reply in writable segments. */
#include "vmm.h"

#include <errno.h>
#include <string.h>

static size_t name_len(const char *name)
{
        return strlen(name) + 1;  /* names travel with their NUL */
}

int vmm_init(struct vmm *v, struct fuse_init_out *ret)
{
        struct fuse_init_in in = {
                .major = FUSE_KERNEL_VERSION,
                .minor = FUSE_KERNEL_MINOR_VERSION,
                .max_readahead = 128 * 1024,
                /* What Linux 6.1 offers, minus what changes the wire format of
                 * other requests (SECURITY_CTX, HAS_INODE_DAX in flags2). */
                .flags = FUSE_ASYNC_READ | FUSE_POSIX_LOCKS | FUSE_ATOMIC_O_TRUNC |
                         FUSE_EXPORT_SUPPORT | FUSE_BIG_WRITES | FUSE_DONT_MASK |
                         FUSE_FLOCK_LOCKS | FUSE_AUTO_INVAL_DATA | FUSE_DO_READDIRPLUS |
                         FUSE_READDIRPLUS_AUTO | FUSE_ASYNC_DIO | FUSE_PARALLEL_DIROPS |
                         FUSE_HANDLE_KILLPRIV | FUSE_ABORT_ERROR | FUSE_MAX_PAGES |
                         FUSE_CACHE_SYMLINKS | FUSE_EXPLICIT_INVAL_DATA | FUSE_SETXATTR_EXT |
                         FUSE_INIT_EXT,
        };
        struct fuse_init_out out = { 0 };
        size_t len = 0;
        int r = vmm_call(v, FUSE_INIT, 0, &in, sizeof(in), NULL, 0, NULL, 0, &out, sizeof(out), &len);
        if (r < 0)
                return r;
        if (len < 24 || out.major != FUSE_KERNEL_VERSION)  /* FUSE_COMPAT_22_INIT_OUT_SIZE */
                return -EPROTO;
        vmm_set_init_flags(v, out.flags);
        if (ret)
                *ret = out;
        return 0;
}

int vmm_destroy(struct vmm *v)
{
        return vmm_call(v, FUSE_DESTROY, 0, NULL, 0, NULL, 0, NULL, 0, NULL, 0, NULL);
}

int vmm_lookup(struct vmm *v, uint64_t parent, const char *name, struct fuse_entry_out *ret)
{
        struct fuse_entry_out out = { 0 };
        int r = vmm_call(v, FUSE_LOOKUP, parent, name, name_len(name), NULL, 0, NULL, 0,
                         &out, sizeof(out), NULL);
        if (ret)
                *ret = out;
        return r;
}

int vmm_forget(struct vmm *v, uint64_t nodeid, uint64_t nlookup)
{
        struct fuse_forget_in in = { .nlookup = nlookup };
        struct vmm_op op = { .hiprio = true, .opcode = FUSE_FORGET, .nodeid = nodeid,
                             .no_reply = true, .arg_cnt = 1, .arg = { { &in, sizeof(in) } } };
        return vmm_op_run(v, &op);
}

int vmm_getattr(struct vmm *v, uint64_t nodeid, struct fuse_attr *ret)
{
        struct fuse_getattr_in in = { 0 };
        struct fuse_attr_out out = { 0 };
        int r = vmm_call(v, FUSE_GETATTR, nodeid, &in, sizeof(in), NULL, 0, NULL, 0,
                         &out, sizeof(out), NULL);
        if (ret)
                *ret = out.attr;
        return r;
}

int vmm_setattr(struct vmm *v, uint64_t nodeid, const struct fuse_setattr_in *in, struct fuse_attr *ret)
{
        struct fuse_attr_out out = { 0 };
        int r = vmm_call(v, FUSE_SETATTR, nodeid, in, sizeof(*in), NULL, 0, NULL, 0,
                         &out, sizeof(out), NULL);
        if (ret)
                *ret = out.attr;
        return r;
}

int vmm_readlink(struct vmm *v, uint64_t nodeid, char *buf, size_t size)
{
        size_t len = 0;
        if (size == 0)
                return -EINVAL;
        int r = vmm_call(v, FUSE_READLINK, nodeid, NULL, 0, NULL, 0, NULL, 0, buf, size - 1, &len);
        buf[r == 0 ? len : 0] = '\0';
        return r;
}

int vmm_symlink(struct vmm *v, uint64_t parent, const char *name, const char *target,
                struct fuse_entry_out *ret)
{
        struct fuse_entry_out out = { 0 };
        int r = vmm_call(v, FUSE_SYMLINK, parent, name, name_len(name), target, name_len(target),
                         NULL, 0, &out, sizeof(out), NULL);
        if (ret)
                *ret = out;
        return r;
}

int vmm_mknod(struct vmm *v, uint64_t parent, const char *name, uint32_t mode, uint32_t rdev,
              struct fuse_entry_out *ret)
{
        struct fuse_mknod_in in = { .mode = mode, .rdev = rdev };
        struct fuse_entry_out out = { 0 };
        int r = vmm_call(v, FUSE_MKNOD, parent, &in, sizeof(in), name, name_len(name), NULL, 0,
                         &out, sizeof(out), NULL);
        if (ret)
                *ret = out;
        return r;
}

int vmm_mkdir(struct vmm *v, uint64_t parent, const char *name, uint32_t mode,
              struct fuse_entry_out *ret)
{
        struct fuse_mkdir_in in = { .mode = mode };
        struct fuse_entry_out out = { 0 };
        int r = vmm_call(v, FUSE_MKDIR, parent, &in, sizeof(in), name, name_len(name), NULL, 0,
                         &out, sizeof(out), NULL);
        if (ret)
                *ret = out;
        return r;
}

int vmm_unlink(struct vmm *v, uint64_t parent, const char *name)
{
        return vmm_call(v, FUSE_UNLINK, parent, name, name_len(name), NULL, 0, NULL, 0, NULL, 0, NULL);
}

int vmm_rmdir(struct vmm *v, uint64_t parent, const char *name)
{
        return vmm_call(v, FUSE_RMDIR, parent, name, name_len(name), NULL, 0, NULL, 0, NULL, 0, NULL);
}

int vmm_rename(struct vmm *v, uint64_t olddir, const char *oldname, uint64_t newdir,
               const char *newname, uint32_t flags)
{
        if (flags == 0) {
                struct fuse_rename_in in = { .newdir = newdir };
                return vmm_call(v, FUSE_RENAME, olddir, &in, sizeof(in), oldname, name_len(oldname),
                                newname, name_len(newname), NULL, 0, NULL);
        }
        struct fuse_rename2_in in = { .newdir = newdir, .flags = flags };
        return vmm_call(v, FUSE_RENAME2, olddir, &in, sizeof(in), oldname, name_len(oldname),
                        newname, name_len(newname), NULL, 0, NULL);
}

int vmm_link(struct vmm *v, uint64_t nodeid, uint64_t newparent, const char *newname,
             struct fuse_entry_out *ret)
{
        struct fuse_link_in in = { .oldnodeid = nodeid };
        struct fuse_entry_out out = { 0 };
        int r = vmm_call(v, FUSE_LINK, newparent, &in, sizeof(in), newname, name_len(newname),
                         NULL, 0, &out, sizeof(out), NULL);
        if (ret)
                *ret = out;
        return r;
}

static int open_common(struct vmm *v, uint32_t opcode, uint64_t nodeid, uint32_t flags, uint64_t *ret_fh)
{
        struct fuse_open_in in = { .flags = flags };
        struct fuse_open_out out = { 0 };
        int r = vmm_call(v, opcode, nodeid, &in, sizeof(in), NULL, 0, NULL, 0, &out, sizeof(out), NULL);
        if (ret_fh)
                *ret_fh = out.fh;
        return r;
}

int vmm_open(struct vmm *v, uint64_t nodeid, uint32_t flags, uint64_t *ret_fh)
{
        return open_common(v, FUSE_OPEN, nodeid, flags, ret_fh);
}

int vmm_opendir(struct vmm *v, uint64_t nodeid, uint64_t *ret_fh)
{
        return open_common(v, FUSE_OPENDIR, nodeid, 0, ret_fh);
}

static int create_common(struct vmm *v, uint32_t opcode, uint64_t parent, const char *name,
                         uint32_t flags, uint32_t mode, struct fuse_entry_out *ret_entry,
                         uint64_t *ret_fh)
{
        struct fuse_create_in in = { .flags = flags, .mode = mode };
        struct { struct fuse_entry_out e; struct fuse_open_out o; } out = { 0 };
        int r = vmm_call(v, opcode, parent, &in, sizeof(in), name, name_len(name), NULL, 0,
                         &out, sizeof(out), NULL);
        if (ret_entry)
                *ret_entry = out.e;
        if (ret_fh)
                *ret_fh = out.o.fh;
        return r;
}

int vmm_create(struct vmm *v, uint64_t parent, const char *name, uint32_t flags, uint32_t mode,
               struct fuse_entry_out *ret_entry, uint64_t *ret_fh)
{
        return create_common(v, FUSE_CREATE, parent, name, flags, mode, ret_entry, ret_fh);
}

int vmm_tmpfile(struct vmm *v, uint64_t parent, uint32_t flags, uint32_t mode,
                struct fuse_entry_out *ret_entry, uint64_t *ret_fh)
{
        /* The kernel sends the name of the dentry vfs_tmpfile() made: "/". */
        return create_common(v, FUSE_TMPFILE, parent, "/", flags, mode, ret_entry, ret_fh);
}

int vmm_read(struct vmm *v, uint64_t nodeid, uint64_t fh, uint64_t offset, void *buf,
             size_t size, size_t *ret_len)
{
        struct fuse_read_in in = { .fh = fh, .offset = offset, .size = (uint32_t)size };
        return vmm_call(v, FUSE_READ, nodeid, &in, sizeof(in), NULL, 0, NULL, 0, buf, size, ret_len);
}

int vmm_write(struct vmm *v, uint64_t nodeid, uint64_t fh, uint64_t offset, const void *buf,
              size_t size, uint32_t *ret_written)
{
        struct fuse_write_in in = { .fh = fh, .offset = offset, .size = (uint32_t)size };
        struct fuse_write_out out = { 0 };
        int r = vmm_call(v, FUSE_WRITE, nodeid, &in, sizeof(in), buf, size, NULL, 0,
                         &out, sizeof(out), NULL);
        if (ret_written)
                *ret_written = out.size;
        return r;
}

int vmm_flush(struct vmm *v, uint64_t nodeid, uint64_t fh)
{
        struct fuse_flush_in in = { .fh = fh };
        return vmm_call(v, FUSE_FLUSH, nodeid, &in, sizeof(in), NULL, 0, NULL, 0, NULL, 0, NULL);
}

int vmm_release(struct vmm *v, uint64_t nodeid, uint64_t fh)
{
        struct fuse_release_in in = { .fh = fh };
        return vmm_call(v, FUSE_RELEASE, nodeid, &in, sizeof(in), NULL, 0, NULL, 0, NULL, 0, NULL);
}

int vmm_releasedir(struct vmm *v, uint64_t nodeid, uint64_t fh)
{
        struct fuse_release_in in = { .fh = fh };
        return vmm_call(v, FUSE_RELEASEDIR, nodeid, &in, sizeof(in), NULL, 0, NULL, 0, NULL, 0, NULL);
}

int vmm_fsync(struct vmm *v, uint64_t nodeid, uint64_t fh, bool datasync)
{
        struct fuse_fsync_in in = { .fh = fh, .fsync_flags = datasync ? 1 : 0 };
        return vmm_call(v, FUSE_FSYNC, nodeid, &in, sizeof(in), NULL, 0, NULL, 0, NULL, 0, NULL);
}

int vmm_fsyncdir(struct vmm *v, uint64_t nodeid, uint64_t fh)
{
        struct fuse_fsync_in in = { .fh = fh };
        return vmm_call(v, FUSE_FSYNCDIR, nodeid, &in, sizeof(in), NULL, 0, NULL, 0, NULL, 0, NULL);
}

int vmm_readdir(struct vmm *v, uint64_t nodeid, uint64_t fh, uint64_t offset, bool plus,
                void *buf, size_t size, size_t *ret_len)
{
        struct fuse_read_in in = { .fh = fh, .offset = offset, .size = (uint32_t)size };
        return vmm_call(v, plus ? FUSE_READDIRPLUS : FUSE_READDIR, nodeid, &in, sizeof(in),
                        NULL, 0, NULL, 0, buf, size, ret_len);
}

int vmm_dirents_foreach(const void *buf, size_t len, bool plus, vmm_dirent_fn fn, void *userdata)
{
        const uint8_t *p = buf;
        size_t off = 0;
        while (off < len) {
                const struct fuse_entry_out *entry = NULL;
                size_t hdr = plus ? sizeof(struct fuse_direntplus) : sizeof(struct fuse_dirent);
                if (len - off < hdr)
                        return -EPROTO;
                const struct fuse_dirent *d;
                if (plus) {
                        const struct fuse_direntplus *dp = (const void *)(p + off);
                        entry = &dp->entry_out;
                        d = &dp->dirent;
                } else {
                        d = (const void *)(p + off);
                }
                if (d->namelen == 0 || d->namelen > 4096 || len - off - hdr < d->namelen)
                        return -EPROTO;
                char name[4097];
                memcpy(name, d->name, d->namelen);
                name[d->namelen] = '\0';
                fn(d, name, entry, userdata);
                size_t rec = plus ? FUSE_DIRENTPLUS_SIZE((const struct fuse_direntplus *)(p + off))
                                  : FUSE_DIRENT_SIZE(d);
                if (rec > len - off) {
                        /* The last record's padding may be cut off; nothing else may. */
                        if (hdr + d->namelen > len - off)
                                return -EPROTO;
                        break;
                }
                off += rec;
        }
        return 0;
}

int vmm_statfs(struct vmm *v, uint64_t nodeid, struct fuse_kstatfs *ret)
{
        struct fuse_statfs_out out = { 0 };
        int r = vmm_call(v, FUSE_STATFS, nodeid, NULL, 0, NULL, 0, NULL, 0, &out, sizeof(out), NULL);
        if (ret)
                *ret = out.st;
        return r;
}

int vmm_access(struct vmm *v, uint64_t nodeid, uint32_t mask)
{
        struct fuse_access_in in = { .mask = mask };
        return vmm_call(v, FUSE_ACCESS, nodeid, &in, sizeof(in), NULL, 0, NULL, 0, NULL, 0, NULL);
}

int vmm_setxattr(struct vmm *v, uint64_t nodeid, const char *name, const void *value,
                 size_t size, uint32_t flags)
{
        struct fuse_setxattr_in in = { .size = (uint32_t)size, .flags = flags };
        /* Without SETXATTR_EXT the struct is the 8-byte compat one. */
        size_t in_size = vmm_init_flags(v) & FUSE_SETXATTR_EXT ? sizeof(in)
                                                               : FUSE_COMPAT_SETXATTR_IN_SIZE;
        return vmm_call(v, FUSE_SETXATTR, nodeid, &in, in_size, name, name_len(name), value, size,
                        NULL, 0, NULL);
}

int vmm_getxattr(struct vmm *v, uint64_t nodeid, const char *name, void *buf, size_t size,
                 size_t *ret_len)
{
        struct fuse_getxattr_in in = { .size = (uint32_t)size };
        if (size == 0) {
                struct fuse_getxattr_out out = { 0 };
                int r = vmm_call(v, FUSE_GETXATTR, nodeid, &in, sizeof(in), name, name_len(name),
                                 NULL, 0, &out, sizeof(out), NULL);
                if (ret_len)
                        *ret_len = out.size;
                return r;
        }
        return vmm_call(v, FUSE_GETXATTR, nodeid, &in, sizeof(in), name, name_len(name), NULL, 0,
                        buf, size, ret_len);
}

int vmm_listxattr(struct vmm *v, uint64_t nodeid, void *buf, size_t size, size_t *ret_len)
{
        struct fuse_getxattr_in in = { .size = (uint32_t)size };
        if (size == 0) {
                struct fuse_getxattr_out out = { 0 };
                int r = vmm_call(v, FUSE_LISTXATTR, nodeid, &in, sizeof(in), NULL, 0, NULL, 0,
                                 &out, sizeof(out), NULL);
                if (ret_len)
                        *ret_len = out.size;
                return r;
        }
        return vmm_call(v, FUSE_LISTXATTR, nodeid, &in, sizeof(in), NULL, 0, NULL, 0, buf, size, ret_len);
}

int vmm_removexattr(struct vmm *v, uint64_t nodeid, const char *name)
{
        return vmm_call(v, FUSE_REMOVEXATTR, nodeid, name, name_len(name), NULL, 0, NULL, 0,
                        NULL, 0, NULL);
}

int vmm_getlk(struct vmm *v, uint64_t nodeid, uint64_t fh, uint64_t owner,
              const struct fuse_file_lock *lk, struct fuse_file_lock *ret)
{
        struct fuse_lk_in in = { .fh = fh, .owner = owner, .lk = *lk };
        struct fuse_lk_out out = { 0 };
        int r = vmm_call(v, FUSE_GETLK, nodeid, &in, sizeof(in), NULL, 0, NULL, 0,
                         &out, sizeof(out), NULL);
        if (ret)
                *ret = out.lk;
        return r;
}

int vmm_setlk(struct vmm *v, uint64_t nodeid, uint64_t fh, uint64_t owner,
              const struct fuse_file_lock *lk, bool wait, bool flock)
{
        struct fuse_lk_in in = { .fh = fh, .owner = owner, .lk = *lk,
                                 .lk_flags = flock ? FUSE_LK_FLOCK : 0 };
        return vmm_call(v, wait ? FUSE_SETLKW : FUSE_SETLK, nodeid, &in, sizeof(in), NULL, 0,
                        NULL, 0, NULL, 0, NULL);
}

int vmm_fallocate(struct vmm *v, uint64_t nodeid, uint64_t fh, uint32_t mode, uint64_t offset,
                  uint64_t length)
{
        struct fuse_fallocate_in in = { .fh = fh, .offset = offset, .length = length, .mode = mode };
        return vmm_call(v, FUSE_FALLOCATE, nodeid, &in, sizeof(in), NULL, 0, NULL, 0, NULL, 0, NULL);
}

int vmm_lseek(struct vmm *v, uint64_t nodeid, uint64_t fh, uint64_t offset, uint32_t whence,
              uint64_t *ret_offset)
{
        struct fuse_lseek_in in = { .fh = fh, .offset = offset, .whence = whence };
        struct fuse_lseek_out out = { 0 };
        int r = vmm_call(v, FUSE_LSEEK, nodeid, &in, sizeof(in), NULL, 0, NULL, 0,
                         &out, sizeof(out), NULL);
        if (ret_offset)
                *ret_offset = out.offset;
        return r;
}

int vmm_copy_file_range(struct vmm *v, uint64_t node_in, uint64_t fh_in, uint64_t off_in,
                        uint64_t node_out, uint64_t fh_out, uint64_t off_out, uint64_t len,
                        uint32_t *ret_copied)
{
        struct fuse_copy_file_range_in in = { .fh_in = fh_in, .off_in = off_in,
                                              .nodeid_out = node_out, .fh_out = fh_out,
                                              .off_out = off_out, .len = len };
        struct fuse_write_out out = { 0 };
        int r = vmm_call(v, FUSE_COPY_FILE_RANGE, node_in, &in, sizeof(in), NULL, 0, NULL, 0,
                         &out, sizeof(out), NULL);
        if (ret_copied)
                *ret_copied = out.size;
        return r;
}

int vmm_syncfs(struct vmm *v)
{
        struct fuse_syncfs_in in = { 0 };
        return vmm_call(v, FUSE_SYNCFS, VMM_ROOT, &in, sizeof(in), NULL, 0, NULL, 0, NULL, 0, NULL);
}

int vmm_lookup_path(struct vmm *v, const char *path, struct fuse_entry_out *ret)
{
        struct fuse_entry_out e = { .nodeid = VMM_ROOT };
        char comp[4096];
        while (*path) {
                while (*path == '/')
                        path++;
                size_t n = strcspn(path, "/");
                if (n == 0)
                        break;
                if (n >= sizeof(comp))
                        return -ENAMETOOLONG;
                memcpy(comp, path, n);
                comp[n] = '\0';
                path += n;
                int r = vmm_lookup(v, e.nodeid, comp, &e);
                if (r < 0)
                        return r;
        }
        if (ret)
                *ret = e;
        return 0;
}
