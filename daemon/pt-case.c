/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pt-case.c — case-insensitive names of a request (see pt-case.h). */
#include "pt-case.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

int pt_case_resolve(struct findex *ix, int dir_fd, const char *name, enum pt_case_intent intent,
                    char buf[FINDEX_NAME_SIZE], const char **ret_name)
{
        struct stat st;

        *ret_name = name;
        /* as spelled first: the common case, and the only way to reach a twin */
        if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
                return 0;
        int match = findex_lookup(ix, dir_fd, name, strlen(name), buf);
        switch (match) {
        case FINDEX_ONE:
                if (intent == PT_CASE_MAKE_EXCL)
                        return -EEXIST;
                *ret_name = buf;
                return 0;
        case FINDEX_MANY:
                return intent == PT_CASE_FIND ? 0 : -EEXIST;
        default:
                /* FINDEX_NONE, or a folder we cannot list: the name as given
                 * (the operation then says what it says for it) */
                return 0;
        }
}
