/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pt-name.c — see pt-name.h. */
#include "pt-name.h"

#include <errno.h>
#include <string.h>

#include "confine.h"
#include "win-names.h"

/* Any mode but posix + sensitive (pt_name_from_guest() does that one). */
int pt_name_from_guest_mapped(struct pt_fs *fs, struct freq *r, struct inode *dir, size_t *pos,
                              enum pt_name_use use, struct pt_name *ret)
{
        const unsigned modes = r->name_modes;
        const char *sent;
        int len;

        if (!(modes & PT_NAMES_WINDOWS)) {
                len = freq_name(r, pos, &ret->name);
                if (len < 0)
                        return len;
                ret->len = (size_t)len;
        } else {
                /* A mapped name is longer than the host name it stands for
                 * (three bytes for one): its limit is the guest form's. */
                ssize_t n;

                len = freq_string(r, pos, PT_NAME_GUEST_MAX, &sent);
                if (len < 0)
                        return len;
                n = winname_to_host(sent, (size_t)len, ret->buf, sizeof(ret->buf));
                if (n < 0)
                        return (int)n;
                /* The decoded name is what reaches the host: it is checked as
                 * any name is (never "", ".", "..", a '/' or a NUL). */
                if ((len = confine_check_name(ret->buf, (size_t)n)) < 0)
                        return len;
                ret->name = ret->buf;
                ret->len = (size_t)n;
        }
        if (modes & PT_CASE_INSENSITIVE) {
                /* The hook may read dir: its descriptor is made valid first. */
                int err = inode_fd(fs->inodes, dir);

                return err < 0 ? err : pt_name_case_resolve(fs, dir, use, ret);
        }
        return 0;
}

size_t pt_name_to_guest(unsigned modes, const char *host, size_t len, char *out)
{
        if (modes & PT_NAMES_WINDOWS)
                return winname_to_guest(host, len, out);
        memcpy(out, host, len);
        out[len] = '\0';
        return len;
}
