/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-credentials.c — a request's credentials live on its thread only
 * (credentials.c).  Needs root (skips otherwise): as root, files a switched
 * thread creates belong to the request's user, other threads stay root, and
 * leaving the scope gives root's powers back. */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <pthread.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include "credentials.h"

static char *tmp;

struct other_thread {
        pthread_barrier_t entered, created;
        char *path;
};

static void *other_thread_main(void *arg)
{
        struct other_thread *o = arg;

        pthread_barrier_wait(&o->entered);
        int fd = open(o->path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        if (fd >= 0)
                close(fd);
        pthread_barrier_wait(&o->created);
        return NULL;
}

static void test_switch(void)
{
        if (geteuid() != 0) {
                g_test_skip("needs root");
                return;
        }
        g_assert_cmpint(creds_init(), ==, 1);
        g_assert_true(creds_root_mode());

        g_autofree char *secret = g_build_filename(tmp, "secret", NULL);
        g_autofree char *mine = g_build_filename(tmp, "mine", NULL);
        g_autofree char *theirs = g_build_filename(tmp, "theirs", NULL);
        g_assert_true(g_file_set_contents(secret, "root only", -1, NULL));
        g_assert_cmpint(chmod(secret, 0600), ==, 0);

        struct other_thread o = { .path = theirs };
        pthread_t t;
        pthread_barrier_init(&o.entered, NULL, 2);
        pthread_barrier_init(&o.created, NULL, 2);
        g_assert_cmpint(pthread_create(&t, NULL, other_thread_main, &o), ==, 0);
        {
                _cleanup_creds_ scope;

                g_assert_cmpint(creds_enter(1234, 4321, NULL, 0, &scope), ==, 0);
                g_assert_true(scope.active);
                pthread_barrier_wait(&o.entered);
                int fd = open(mine, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
                g_assert_cmpint(fd, >=, 0);
                close(fd);
                /* CAP_DAC_OVERRIDE went with fsuid 0. */
                g_assert_cmpint(open(secret, O_RDONLY | O_CLOEXEC), ==, -1);
                g_assert_cmpint(errno, ==, EACCES);
                pthread_barrier_wait(&o.created);
        }
        pthread_join(t, NULL);
        struct stat st;
        g_assert_cmpint(stat(mine, &st), ==, 0);
        g_assert_cmpuint(st.st_uid, ==, 1234);
        g_assert_cmpuint(st.st_gid, ==, 4321);
        /* The other thread created at the same time, as root. */
        g_assert_cmpint(stat(theirs, &st), ==, 0);
        g_assert_cmpuint(st.st_uid, ==, 0);
        g_assert_cmpuint(st.st_gid, ==, 0);
        /* Root again after the scope. */
        int fd = open(secret, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        close(fd);
}

static void test_supplementary_group(void)
{
        if (geteuid() != 0) {
                g_test_skip("needs root");
                return;
        }
        g_assert_cmpint(creds_init(), ==, 1);
        g_autofree char *dir = g_build_filename(tmp, "group-dir", NULL);
        g_autofree char *inside = g_build_filename(dir, "f", NULL);
        g_assert_cmpint(g_mkdir(dir, 0770), ==, 0);
        g_assert_cmpint(chown(dir, 0, 777), ==, 0);
        g_assert_cmpint(chmod(dir, 0770), ==, 0);   /* not what the umask left */
        {
                _cleanup_creds_ scope;

                g_assert_cmpint(creds_enter(1234, 1234, NULL, 0, &scope), ==, 0);
                g_assert_cmpint(open(inside, O_CREAT | O_WRONLY | O_CLOEXEC, 0644), ==, -1);
                g_assert_cmpint(errno, ==, EACCES);
        }
        {
                const gid_t groups[] = { 777 };
                _cleanup_creds_ scope;

                g_assert_cmpint(creds_enter(1234, 1234, groups, 1, &scope), ==, 0);
                int fd = open(inside, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
                g_assert_cmpint(fd, >=, 0);
                close(fd);
        }
        /* The group went with the scope. */
        gid_t now[4];
        g_assert_cmpint(getgroups(4, now), ==, 0);
}

static void test_refused_ids(void)
{
        if (geteuid() != 0) {
                g_test_skip("needs root");
                return;
        }
        g_assert_cmpint(creds_init(), ==, 1);
        struct creds_scope scope;
        g_assert_cmpint(creds_enter((uid_t)-1, 5, NULL, 0, &scope), ==, -EPERM);
        g_assert_false(scope.active);
        g_assert_cmpint(creds_enter(5, (gid_t)-1, NULL, 0, &scope), ==, -EPERM);
        g_assert_false(scope.active);
        g_assert_cmpint(setfsuid((uid_t)-1), ==, 0);   /* still root */
        g_assert_cmpint(setfsgid((gid_t)-1), ==, 0);
}

/* A thread made while its creator is inside a scope starts with the
 * requester's ids: its own scopes must switch from those, not from root's. */
static void *inherited_main(void *arg)
{
        uid_t *ids = arg;

        {
                _cleanup_creds_ scope;

                if (creds_enter(0, 0, NULL, 0, &scope) < 0)
                        return NULL;
                ids[0] = (uid_t)setfsuid((uid_t)-1);
                ids[1] = (uid_t)setfsgid((gid_t)-1);
        }
        ids[2] = (uid_t)setfsuid((uid_t)-1);
        return NULL;
}

/* Switches to the ids a thread has already are skipped (no system call, the
 * same result); everything else still switches and comes back. */
static void test_same_ids(void)
{
        if (geteuid() != 0) {
                g_test_skip("needs root");
                return;
        }
        g_assert_cmpint(creds_init(), ==, 1);
        g_autofree char *secret = g_build_filename(tmp, "secret-same", NULL);
        g_assert_true(g_file_set_contents(secret, "root only", -1, NULL));
        g_assert_cmpint(chmod(secret, 0600), ==, 0);
        {
                _cleanup_creds_ scope;

                g_assert_cmpint(creds_enter(0, 0, NULL, 0, &scope), ==, 0);
                g_assert_cmpint(setfsuid((uid_t)-1), ==, 0);
        }
        for (int n = 0; n < 2; n++) {
                _cleanup_creds_ scope;

                g_assert_cmpint(creds_enter(1234, 0, NULL, 0, &scope), ==, 0);
                g_assert_cmpint(setfsuid((uid_t)-1), ==, 1234);
                g_assert_cmpint(setfsgid((gid_t)-1), ==, 0);
                g_assert_cmpint(open(secret, O_RDONLY | O_CLOEXEC), ==, -1);
                g_assert_cmpint(errno, ==, EACCES);
        }
        g_assert_cmpint(setfsuid((uid_t)-1), ==, 0);
        {
                _cleanup_creds_ scope;
                uid_t ids[3] = { 1, 1, 1 };
                pthread_t t;

                g_assert_cmpint(creds_enter(1234, 4321, NULL, 0, &scope), ==, 0);
                g_assert_cmpint(pthread_create(&t, NULL, inherited_main, ids), ==, 0);
                pthread_join(t, NULL);
                g_assert_cmpuint(ids[0], ==, 0);      /* root inside its scope */
                g_assert_cmpuint(ids[1], ==, 0);
                g_assert_cmpuint(ids[2], ==, 1234);   /* and what it started with after */
        }
        g_assert_cmpint(setfsuid((uid_t)-1), ==, 0);
        g_assert_cmpint(setfsgid((gid_t)-1), ==, 0);
        int fd = open(secret, O_RDONLY | O_CLOEXEC);
        g_assert_cmpint(fd, >=, 0);
        close(fd);
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        tmp = g_dir_make_tmp("sluice-creds-XXXXXX", NULL);
        g_assert_nonnull(tmp);
        g_chmod(tmp, 0777);
        g_test_add_func("/credentials/switch", test_switch);
        g_test_add_func("/credentials/same-ids", test_same_ids);
        g_test_add_func("/credentials/supplementary-group", test_supplementary_group);
        g_test_add_func("/credentials/refused-ids", test_refused_ids);
        int r = g_test_run();
        g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", tmp);
        (void)!system(cmd);
        return r;
}
