/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pt-name-case.c — --case=insensitive: which host name a guest's name means
 * (pt_name_case_resolve(), pt-name.h). */
#include "pt-name.h"

int pt_name_case_resolve(struct pt_fs *fs, struct inode *dir, enum pt_name_use use,
                         struct pt_name *name)
{
        /* Not implemented yet: the name is used as the guest spelled it. */
        (void) fs;
        (void) dir;
        (void) use;
        (void) name;
        return 0;
}
