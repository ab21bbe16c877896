/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sluice-test-vmm — one FUSE operation against a vhost-user-fs backend, from
 * the command line, as a guest would do it (the test VMM of vmm.h).
 *
 *   sluice-test-vmm [--timeout=MS] --socket PATH COMMAND [ARGS]
 *
 * Commands (NAME is a path relative to the share's root, '/' separated):
 *   write NAME TEXT   create or truncate NAME and write TEXT (no newline added)
 *   read NAME         print NAME's content to stdout
 *   ls [DIR]          print the names in DIR (default the root), one a line,
 *                     without "." and ".."
 *   stat NAME         print "size=N mode=0OOOO type=file|dir|symlink|other"
 *   mkdir NAME        create directory NAME (mode 0755)
 *   rm NAME           unlink NAME
 *   session           one connection for many commands: reads "COMMAND ARGS"
 *                     lines from stdin (the rest of a write line is TEXT),
 *                     answers each with its output (a read's ends with a
 *                     newline here) and a line "ok" or
 *                     "error: <errno name>"; ends at EOF.  A frontend that stays
 *                     connected, as a guest's mount does (tests/service).
 *
 * Each run is one connection: vhost-user set-up, FUSE INIT, the operation,
 * then the queues are stopped and the socket closed (the backend sees a
 * frontend disconnect).  Exit status 0 on success; on a FUSE error it prints
 * "error: <errno name>" (e.g. "error: EROFS") on stderr and exits 1; a
 * transport failure (no backend, timeout) prints "error: <errno name>: <what>"
 * and exits 1 too; usage errors exit 2.  Used by tests/service to watch a live
 * share (read-only toggle, moving stats) without booting a guest. */
#include "vmm.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int usage(void)
{
        fprintf(stderr, "usage: sluice-test-vmm [--timeout=MS] --socket PATH "
                        "write NAME TEXT | read NAME | ls [DIR] | stat NAME | mkdir NAME | rm NAME | session\n");
        return 2;
}

static int fail(int err)
{
        const char *name = strerrorname_np(-err);
        fprintf(stderr, "error: %s\n", name ? name : "EIO");
        return 1;
}

/* Splits NAME into its parent's node (looked up) and the last component. */
static int parent_of(struct vmm *v, const char *path, uint64_t *ret_parent, const char **ret_name)
{
        const char *slash = strrchr(path, '/');
        if (!slash) {
                *ret_parent = VMM_ROOT;
                *ret_name = path;
                return 0;
        }
        char *dir = strndup(path, (size_t)(slash - path));
        if (!dir)
                return -ENOMEM;
        struct fuse_entry_out e;
        int r = vmm_lookup_path(v, dir, &e);
        free(dir);
        *ret_parent = e.nodeid;
        *ret_name = slash + 1;
        return r;
}

static int cmd_write(struct vmm *v, const char *path, const char *text)
{
        uint64_t parent, fh;
        const char *name;
        struct fuse_entry_out e;
        int r = parent_of(v, path, &parent, &name);
        if (r < 0)
                return r;
        r = vmm_create(v, parent, name, O_WRONLY | O_CREAT | O_TRUNC, S_IFREG | 0644, &e, &fh);
        if (r < 0)
                return r;
        size_t len = strlen(text);
        uint32_t written = 0;
        r = vmm_write(v, e.nodeid, fh, 0, text, len, &written);
        if (r == 0 && written != len)
                r = -EIO;
        int r2 = vmm_flush(v, e.nodeid, fh);
        (void)vmm_release(v, e.nodeid, fh);
        return r < 0 ? r : r2;
}

static int cmd_read(struct vmm *v, const char *path)
{
        struct fuse_entry_out e;
        uint64_t fh;
        int r = vmm_lookup_path(v, path, &e);
        if (r < 0)
                return r;
        r = vmm_open(v, e.nodeid, O_RDONLY, &fh);
        if (r < 0)
                return r;
        static char buf[128 * 1024];
        uint64_t off = 0;
        for (;;) {
                size_t got = 0;
                r = vmm_read(v, e.nodeid, fh, off, buf, sizeof(buf), &got);
                if (r < 0 || got == 0)
                        break;
                fwrite(buf, 1, got, stdout);
                off += got;
        }
        (void)vmm_release(v, e.nodeid, fh);
        return r;
}

static void print_name(const struct fuse_dirent *d, const char *name,
                       const struct fuse_entry_out *entry, void *userdata)
{
        if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0)
                printf("%s\n", name);
}

static void note_offset(const struct fuse_dirent *d, const char *name,
                        const struct fuse_entry_out *entry, void *userdata)
{
        *(uint64_t *)userdata = d->off;
}

static int cmd_ls(struct vmm *v, const char *path)
{
        struct fuse_entry_out e = { .nodeid = VMM_ROOT };
        uint64_t fh;
        int r = path ? vmm_lookup_path(v, path, &e) : 0;
        if (r < 0)
                return r;
        r = vmm_opendir(v, e.nodeid, &fh);
        if (r < 0)
                return r;
        static char buf[64 * 1024];
        uint64_t off = 0;
        for (;;) {
                size_t got = 0;
                r = vmm_readdir(v, e.nodeid, fh, off, false, buf, sizeof(buf), &got);
                if (r < 0 || got == 0)
                        break;
                r = vmm_dirents_foreach(buf, got, false, print_name, NULL);
                if (r == 0)
                        r = vmm_dirents_foreach(buf, got, false, note_offset, &off);
                if (r < 0)
                        break;
        }
        (void)vmm_releasedir(v, e.nodeid, fh);
        return r;
}

static int cmd_stat(struct vmm *v, const char *path)
{
        struct fuse_entry_out e;
        int r = vmm_lookup_path(v, path, &e);
        if (r < 0)
                return r;
        uint32_t m = e.attr.mode;
        printf("size=%llu mode=%04o type=%s\n", (unsigned long long)e.attr.size, m & 07777,
               S_ISREG(m) ? "file" : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "symlink" : "other");
        return 0;
}

static int cmd_mkdir(struct vmm *v, const char *path)
{
        uint64_t parent;
        const char *name;
        int r = parent_of(v, path, &parent, &name);
        return r < 0 ? r : vmm_mkdir(v, parent, name, 0755, NULL);
}

static int cmd_rm(struct vmm *v, const char *path)
{
        uint64_t parent;
        const char *name;
        int r = parent_of(v, path, &parent, &name);
        return r < 0 ? r : vmm_unlink(v, parent, name);
}

static bool command_ok(const char *cmd, int nargs)
{
        return (strcmp(cmd, "write") == 0 && nargs == 2) ||
               (strcmp(cmd, "ls") == 0 && nargs <= 1) ||
               ((strcmp(cmd, "read") == 0 || strcmp(cmd, "stat") == 0 ||
                 strcmp(cmd, "mkdir") == 0 || strcmp(cmd, "rm") == 0) && nargs == 1);
}

static int run_command(struct vmm *v, const char *cmd, int nargs, char **args)
{
        if (strcmp(cmd, "write") == 0)
                return cmd_write(v, args[0], args[1]);
        if (strcmp(cmd, "read") == 0)
                return cmd_read(v, args[0]);
        if (strcmp(cmd, "ls") == 0)
                return cmd_ls(v, nargs ? args[0] : NULL);
        if (strcmp(cmd, "stat") == 0)
                return cmd_stat(v, args[0]);
        if (strcmp(cmd, "mkdir") == 0)
                return cmd_mkdir(v, args[0]);
        return cmd_rm(v, args[0]);
}

static int run_session(struct vmm *v)
{
        char line[4096];

        while (fgets(line, sizeof(line), stdin)) {
                char *args[2] = { NULL, NULL };
                char *save = NULL;
                line[strcspn(line, "\n")] = '\0';
                char *cmd = strtok_r(line, " ", &save);
                int nargs = 0;
                if (!cmd)
                        continue;
                if ((args[0] = strtok_r(NULL, " ", &save)) != NULL)
                        nargs++;
                if (nargs && save && *save) {
                        args[1] = save;   /* the rest of the line, spaces and all */
                        nargs++;
                }
                int r = command_ok(cmd, nargs) ? run_command(v, cmd, nargs, args) : -EINVAL;
                if (r < 0)
                        printf("error: %s\n", strerrorname_np(-r) ?: "EIO");
                else
                        printf("%sok\n", strcmp(cmd, "read") == 0 ? "\n" : "");
                fflush(stdout);
        }
        return 0;
}

int main(int argc, char **argv)
{
        static const struct option longopts[] = {
                { "socket", required_argument, NULL, 's' },
                { "timeout", required_argument, NULL, 't' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        const char *socket_path = NULL;
        struct vmm_config cfg = { .mem_size = 64u << 20, .queue_size = 256 };
        int c;
        while ((c = getopt_long(argc, argv, "+s:t:h", longopts, NULL)) != -1) {
                switch (c) {
                case 's':
                        socket_path = optarg;
                        break;
                case 't':
                        cfg.timeout_ms = atoi(optarg);
                        if (cfg.timeout_ms <= 0)
                                return usage();
                        break;
                case 'h':
                        usage();
                        return 0;
                default:
                        return usage();
                }
        }
        if (!socket_path || optind >= argc)
                return usage();
        const char *cmd = argv[optind];
        int nargs = argc - optind - 1;
        char **args = argv + optind + 1;
        bool session = strcmp(cmd, "session") == 0 && nargs == 0;
        if (!session && !command_ok(cmd, nargs))
                return usage();

        struct vmm *v;
        int r = vmm_connect(socket_path, &cfg, &v);
        if (r < 0) {
                fprintf(stderr, "error: %s: cannot set up vhost-user on %s\n",
                        strerrorname_np(-r) ?: "EIO", socket_path);
                return 1;
        }
        r = vmm_init(v, NULL);
        if (r < 0) {
                vmm_free(v);
                return fail(r);
        }
        r = session ? run_session(v) : run_command(v, cmd, nargs, args);
        fflush(stdout);
        vmm_free(v);
        return r < 0 ? fail(r) : 0;
}
