/* SPDX-License-Identifier: GPL-2.0-or-later */
/* win-names.c — see win-names.h. */
#include "win-names.h"

#include <errno.h>
#include <string.h>

size_t winname_to_guest(const char *host, size_t len, char *out)
{
        memcpy(out, host, len);
        out[len] = '\0';
        return len;
}

ssize_t winname_to_host(const char *guest, size_t len, char *out, size_t size)
{
        if (len + 1 > size)
                return -ENAMETOOLONG;
        memcpy(out, guest, len);
        out[len] = '\0';
        return (ssize_t)len;
}
