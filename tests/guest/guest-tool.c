/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-tool.c — the few file-system calls busybox lacks, for guest workloads.
 *
 * Built static by build-image.sh and installed in the initramfs as
 * /bin/sluice-guest-tool.  Busybox has no setfattr/getfattr, no flock(1) and
 * no renameat2, so the workloads call this instead.  Every subcommand exits 0
 * on success; on failure it prints "ERRNO_NAME: message" (e.g. "EROFS:
 * Read-only file system") on stderr and exits 1, so scripts can check which
 * error a call failed with.
 *
 *   sluice-guest-tool setxattr FILE NAME VALUE
 *   sluice-guest-tool getxattr FILE NAME          prints the value
 *   sluice-guest-tool listxattr FILE              prints one name per line
 *   sluice-guest-tool removexattr FILE NAME
 *   sluice-guest-tool flock FILE                  exclusive flock, then checks that a second
 *                                                 open file description cannot take it
 *   sluice-guest-tool posixlock FILE              fcntl write lock held by a child process;
 *                                                 checks F_GETLK reports it (with the child's
 *                                                 pid, or 0) and F_SETLK conflicts
 *   sluice-guest-tool rename-noreplace OLD NEW
 *   sluice-guest-tool rename-exchange A B
 *   sluice-guest-tool open-write FILE             open(O_WRONLY) and close
 *   sluice-guest-tool posixlock-pid FILE          as posixlock, but F_GETLK must name the
 *                                                 child's pid exactly
 *   sluice-guest-tool setcap FILE                 gives FILE a file capability (CAP_SETUID,
 *                                                 effective): a well-formed security.capability
 *   sluice-guest-tool as UID GID CMD [ARG...]     runs CMD as that guest user (no
 *                                                 supplementary groups); busybox has no su
 *                                                 without a passwd file
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static const char *errno_name(int e)
{
        switch (e) {
        case EROFS: return "EROFS";
        case EPERM: return "EPERM";
        case EACCES: return "EACCES";
        case ENOENT: return "ENOENT";
        case EEXIST: return "EEXIST";
        case ENODATA: return "ENODATA";
        case ENOTSUP: return "ENOTSUP";
        case ENOSYS: return "ENOSYS";
        case EINVAL: return "EINVAL";
        case EAGAIN: return "EAGAIN";
        case EBADF: return "EBADF";
        case ENOTDIR: return "ENOTDIR";
        case EISDIR: return "EISDIR";
        case ENOTEMPTY: return "ENOTEMPTY";
        case EIO: return "EIO";
        default: return "E?";
        }
}

static int fail(const char *what)
{
        int e = errno;
        fprintf(stderr, "%s: %s: %s\n", errno_name(e), what, strerror(e));
        return 1;
}

static int do_getxattr(const char *file, const char *name)
{
        char buf[65536];
        ssize_t n = getxattr(file, name, buf, sizeof(buf));
        if (n < 0)
                return fail("getxattr");
        fwrite(buf, 1, (size_t)n, stdout);
        putchar('\n');
        return 0;
}

static int do_listxattr(const char *file)
{
        char buf[65536];
        ssize_t n = listxattr(file, buf, sizeof(buf));
        if (n < 0)
                return fail("listxattr");
        for (ssize_t i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
                puts(buf + i);
        return 0;
}

/* Two open file descriptions of one file: the second may not take an
 * exclusive flock while the first holds it, and may once it is released. */
static int do_flock(const char *file)
{
        int a = open(file, O_RDWR);
        int b = open(file, O_RDWR);
        if (a < 0 || b < 0)
                return fail("open");
        if (flock(a, LOCK_EX | LOCK_NB) < 0)
                return fail("flock first");
        if (flock(b, LOCK_EX | LOCK_NB) == 0) {
                fprintf(stderr, "second exclusive flock succeeded while the first was held\n");
                return 1;
        }
        if (errno != EWOULDBLOCK)
                return fail("flock second (expected EWOULDBLOCK)");
        if (flock(a, LOCK_UN) < 0)
                return fail("unlock");
        if (flock(b, LOCK_EX | LOCK_NB) < 0)
                return fail("flock second after unlock");
        close(a);
        close(b);
        return 0;
}

/* A child holds a write lock on bytes 0..99; the parent must see it with
 * F_GETLK (with the child's pid) and fail to take a conflicting lock. */
static int do_posixlock(const char *file, int strict)
{
        int ready[2], done[2];
        if (pipe(ready) < 0 || pipe(done) < 0)
                return fail("pipe");
        pid_t pid = fork();
        if (pid < 0)
                return fail("fork");
        if (pid == 0) {
                char c = 0;
                int fd = open(file, O_RDWR);
                struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 100 };
                if (fd < 0 || fcntl(fd, F_SETLK, &fl) < 0)
                        _exit(fail("child lock"));
                if (write(ready[1], &c, 1) != 1 || read(done[0], &c, 1) != 1)
                        _exit(1);
                _exit(0);
        }
        char c = 0;
        int rc = 1;
        if (read(ready[0], &c, 1) != 1) {
                fprintf(stderr, "child could not take the lock\n");
                goto out;
        }
        int fd = open(file, O_RDWR);
        if (fd < 0) {
                fail("open");
                goto out;
        }
        struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 50, .l_len = 10 };
        if (fcntl(fd, F_GETLK, &fl) < 0) {
                fail("F_GETLK");
        } else if (fl.l_type != F_WRLCK || (fl.l_pid != pid && (strict || fl.l_pid != 0))) {
                /* pid 0 is tolerated: daemons that keep locks as host OFD locks
                 * (virtiofsd with posix_lock) cannot tell the owner's pid. */
                fprintf(stderr, "F_GETLK: type %d pid %d, expected the child's (%d) write lock\n",
                        fl.l_type, (int)fl.l_pid, (int)pid);
        } else {
                fl = (struct flock){ .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
                if (fcntl(fd, F_SETLK, &fl) == 0)
                        fprintf(stderr, "conflicting F_SETLK succeeded\n");
                else if (errno != EAGAIN && errno != EACCES)
                        fail("F_SETLK (expected EAGAIN)");
                else
                        rc = 0;
        }
        close(fd);
out:
        if (write(done[1], &c, 1) != 1)
                rc = 1;
        int status;
        waitpid(pid, &status, 0);
        return rc;
}

/* write-as UID GID FILE TEXT: creates FILE as an ordinary guest user (busybox
 * has no su without a passwd file), to show what --translate-uid is for. */
static int do_write_as(const char *uid, const char *gid, const char *path, const char *text)
{
        int fd;

        if (setgroups(0, NULL) < 0 || setgid((gid_t)atoi(gid)) < 0 || setuid((uid_t)atoi(uid)) < 0)
                return fail("setuid");
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0)
                return fail("open");
        if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
                close(fd);
                return fail("write");
        }
        return close(fd) < 0 ? fail("close") : 0;
}

int main(int argc, char **argv)
{
        const char *cmd = argc > 1 ? argv[1] : "";

        if (!strcmp(cmd, "setxattr") && argc == 5)
                return setxattr(argv[2], argv[3], argv[4], strlen(argv[4]), 0) < 0 ? fail("setxattr") : 0;
        if (!strcmp(cmd, "getxattr") && argc == 4)
                return do_getxattr(argv[2], argv[3]);
        if (!strcmp(cmd, "listxattr") && argc == 3)
                return do_listxattr(argv[2]);
        if (!strcmp(cmd, "removexattr") && argc == 4)
                return removexattr(argv[2], argv[3]) < 0 ? fail("removexattr") : 0;
        if (!strcmp(cmd, "flock") && argc == 3)
                return do_flock(argv[2]);
        if (!strcmp(cmd, "posixlock") && argc == 3)
                return do_posixlock(argv[2], 0);
        if (!strcmp(cmd, "posixlock-pid") && argc == 3)
                return do_posixlock(argv[2], 1);
        if (!strcmp(cmd, "setcap") && argc == 3) {
                /* struct vfs_cap_data, revision 2: magic|effective, then permitted/inheritable pairs. */
                const unsigned int cap[5] = { 0x02000000u | 1u, 1u << 7 /* CAP_SETUID */, 0, 0, 0 };
                return setxattr(argv[2], "security.capability", cap, sizeof(cap), 0) < 0
                        ? fail("setxattr security.capability") : 0;
        }
        if (!strcmp(cmd, "as") && argc >= 5) {
                if (setgroups(0, NULL) < 0 || setgid((gid_t)atoi(argv[3])) < 0 ||
                    setuid((uid_t)atoi(argv[2])) < 0)
                        return fail("setuid");
                execvp(argv[4], argv + 4);
                return fail("exec");
        }
        if (!strcmp(cmd, "rename-noreplace") && argc == 4)
                return renameat2(AT_FDCWD, argv[2], AT_FDCWD, argv[3], RENAME_NOREPLACE) < 0
                        ? fail("renameat2") : 0;
        if (!strcmp(cmd, "rename-exchange") && argc == 4)
                return renameat2(AT_FDCWD, argv[2], AT_FDCWD, argv[3], RENAME_EXCHANGE) < 0
                        ? fail("renameat2") : 0;
        if (!strcmp(cmd, "open-write") && argc == 3) {
                int fd = open(argv[2], O_WRONLY);
                if (fd < 0)
                        return fail("open");
                close(fd);
                return 0;
        }
        if (!strcmp(cmd, "write-as") && argc == 6)
                return do_write_as(argv[2], argv[3], argv[4], argv[5]);
        fprintf(stderr, "usage: sluice-guest-tool setxattr|getxattr|listxattr|removexattr|flock|"
                "posixlock|posixlock-pid|rename-noreplace|rename-exchange|open-write|write-as|setcap|as ARGS…\n");
        return 2;
}
