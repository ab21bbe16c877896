/* vm-socket-access.c — see vm-socket-access.h.  getfacl/setfacl (package
 * "acl") do the ACL work: libacl's headers are not a build dependency.  The
 * tools run in the queue's thread, never in the service's main thread. */
#include "config.h"

#include "vm-socket-access.h"
#include "errors.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

/* One path's ACL entry for one user, as Sluice changed it. */
typedef struct {
        char *key;        /* "uid:path" */
        char *path;
        uid_t uid;
        char *before;     /* the entry's permissions before ("r-x"); NULL: there was none */
        gboolean changed; /* FALSE: the entry already allowed enough, nothing to undo */
        guint users;      /* devices that need it */
} AclEntry;

/* What one device (domain UUID, tag) holds. */
typedef struct {
        GPtrArray *entries; /* AclEntry *, owned by acl_entries */
} DeviceGrant;

static GMutex access_lock;
static GHashTable *acl_entries; /* "uid:path" → AclEntry * */
static GHashTable *devices;     /* "uuid\ntag" → DeviceGrant * */

static char *user_name(uid_t uid)
{
        struct passwd *pw = getpwuid(uid);

        return pw ? g_strdup(pw->pw_name) : g_strdup_printf("%u", (unsigned)uid);
}

/* Whether uid belongs to gid (primary or supplementary group). */
static gboolean user_in_group(uid_t uid, gid_t gid)
{
        struct passwd *pw = getpwuid(uid);
        gid_t groups[256];
        int n = G_N_ELEMENTS(groups);

        if (!pw)
                return FALSE;
        if (pw->pw_gid == gid)
                return TRUE;
        if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) < 0)
                return FALSE;
        for (int i = 0; i < n; i++)
                if (groups[i] == gid)
                        return TRUE;
        return FALSE;
}

/* By the mode bits alone (an ACL entry of ours is looked at separately). */
static gboolean can_search(const struct stat *st, uid_t uid)
{
        if (st->st_uid == uid)
                return (st->st_mode & S_IXUSR) != 0;
        if ((st->st_mode & S_IXGRP) && user_in_group(uid, st->st_gid))
                return TRUE;
        return (st->st_mode & S_IXOTH) != 0;
}

/* Runs getfacl/setfacl; on failure *ret_why says why (owned by the caller). */
static gboolean run_acl_tool(const char *const *argv, char **ret_out, char **ret_why)
{
        g_autofree char *out = NULL;
        g_autofree char *err_out = NULL;
        g_autoptr(GError) spawn_error = NULL;
        int status = 0;

        if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &err_out,
                          &status, &spawn_error)) {
                *ret_why = g_strdup(spawn_error->message);
                return FALSE;
        }
        if (!g_spawn_check_wait_status(status, NULL)) {
                *ret_why = err_out ? g_strdup(g_strstrip(err_out)) : g_strdup("");
                return FALSE;
        }
        if (ret_out)
                *ret_out = g_steal_pointer(&out);
        return TRUE;
}

static void set_acl_error(GError **error, uid_t uid, const char *path, const char *why)
{
        g_autofree char *who = user_name(uid);

        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_PERMISSION_DENIED,
                    _("QEMU runs as user “%s” and cannot reach “%s”, and Sluice could not "
                      "grant access with an ACL (%s). Install the “acl” package, use a file "
                      "system with ACL support, or run the VM in qemu:///session."),
                    who, path, why);
}

static char *getfacl(const char *path, char **ret_why)
{
        const char *argv[] = { "getfacl", "--numeric", "--absolute-names", "--omit-header", "--", path, NULL };
        char *out = NULL;

        return run_acl_tool(argv, &out, ret_why) ? out : NULL;
}

/* Reads path's entry for uid: *ret_perms ("r-x"), NULL when it has none;
 * *ret_effective: what the mask leaves of it. */
static gboolean acl_read(const char *path, uid_t uid, char **ret_perms, char **ret_effective,
                         GError **error)
{
        g_autofree char *why = NULL;
        g_autofree char *out = getfacl(path, &why);
        g_autofree char *prefix = g_strdup_printf("user:%u:", (unsigned)uid);
        g_auto(GStrv) lines = NULL;

        *ret_perms = *ret_effective = NULL;
        if (!out) {
                set_acl_error(error, uid, path, why);
                return FALSE;
        }
        lines = g_strsplit(out, "\n", -1);
        for (char **l = lines; *l; l++) {
                char *effective;

                if (!g_str_has_prefix(*l, prefix))
                        continue;
                effective = strstr(*l, "#effective:");
                if (effective)
                        *ret_effective = g_strdup(g_strstrip(effective + strlen("#effective:")));
                *ret_perms = g_strndup(*l + strlen(prefix), 3);
                if (!*ret_effective)
                        *ret_effective = g_strdup(*ret_perms);
                break;
        }
        return TRUE;
}

/* Whether the ACL still has entries for named users or groups. */
static gboolean acl_has_named_entries(const char *path)
{
        g_autofree char *why = NULL;
        g_autofree char *out = getfacl(path, &why);
        g_auto(GStrv) lines = NULL;

        if (!out)
                return TRUE; /* do not touch what cannot be read */
        lines = g_strsplit(out, "\n", -1);
        for (char **l = lines; *l; l++)
                if ((g_str_has_prefix(*l, "user:") && (*l)[5] != ':') ||
                    (g_str_has_prefix(*l, "group:") && (*l)[6] != ':'))
                        return TRUE;
        return FALSE;
}

static gboolean has_all(const char *perms, const char *needed)
{
        for (const char *c = needed; *c; c++)
                if (!perms || !strchr(perms, *c))
                        return FALSE;
        return TRUE;
}

/* "r-x" ∪ "w" → "rwx" */
static char *perms_union(const char *a, const char *b)
{
        static const char order[] = "rwx";
        char out[4] = "---";

        for (int i = 0; i < 3; i++)
                if ((a && strchr(a, order[i])) || strchr(b, order[i]))
                        out[i] = order[i];
        return g_strdup(out);
}

static gboolean setfacl_entry(const char *path, uid_t uid, const char *perms, char **ret_why)
{
        g_autofree char *entry = g_strdup_printf("u:%u:%s", (unsigned)uid, perms);
        const char *argv[] = { "setfacl", "-m", entry, "--", path, NULL };

        return run_acl_tool(argv, NULL, ret_why);
}

static void acl_entry_free(gpointer data)
{
        AclEntry *e = data;

        g_free(e->key);
        g_free(e->path);
        g_free(e->before);
        g_free(e);
}

/* Puts an entry back as it was before Sluice changed it. */
static void acl_undo(AclEntry *e)
{
        g_autofree char *why = NULL;
        g_autofree char *entry = NULL;
        struct stat st;

        if (!e->changed || lstat(e->path, &st) < 0) /* a socket takes its ACL with it */
                return;
        if (e->before) {
                if (!setfacl_entry(e->path, e->uid, e->before, &why))
                        g_message("Cannot restore the ACL entry of user %u on %s: %s", (unsigned)e->uid,
                                  e->path, why);
                return;
        }
        entry = g_strdup_printf("u:%u", (unsigned)e->uid);
        const char *argv[] = { "setfacl", "-x", entry, "--", e->path, NULL };
        if (!run_acl_tool(argv, NULL, &why)) {
                g_message("Cannot remove the ACL entry of user %u from %s: %s", (unsigned)e->uid,
                          e->path, why);
                return;
        }
        /* the mask setfacl made for our entry goes too, once nothing else needs it */
        if (!acl_has_named_entries(e->path)) {
                const char *mask_argv[] = { "setfacl", "-x", "m::", "--", e->path, NULL };
                g_clear_pointer(&why, g_free);
                if (!run_acl_tool(mask_argv, NULL, &why))
                        g_debug("Cannot drop the ACL mask of %s: %s", e->path, why);
        }
}

/* Takes a share of path's entry for uid with at least the needed permissions. */
static AclEntry *acl_take(const char *path, uid_t uid, const char *needed, GError **error)
{
        g_autofree char *key = g_strdup_printf("%u:%s", (unsigned)uid, path);
        g_autofree char *before = NULL;
        g_autofree char *effective = NULL;
        g_autofree char *why = NULL;
        AclEntry *e = g_hash_table_lookup(acl_entries, key);

        if (e) {
                e->users++;
                return e;
        }
        if (!acl_read(path, uid, &before, &effective, error))
                return NULL;
        e = g_new0(AclEntry, 1);
        e->path = g_strdup(path);
        e->uid = uid;
        e->users = 1;
        if (!has_all(effective, needed)) {
                g_autofree char *merged = perms_union(before, needed);
                if (!setfacl_entry(path, uid, merged, &why)) {
                        set_acl_error(error, uid, path, why);
                        acl_entry_free(e);
                        return NULL;
                }
                e->changed = TRUE;
        }
        e->before = g_steal_pointer(&before);
        e->key = g_steal_pointer(&key);
        g_hash_table_insert(acl_entries, e->key, e);
        return e;
}

static void acl_release(AclEntry *e)
{
        if (--e->users > 0)
                return;
        acl_undo(e);
        g_hash_table_remove(acl_entries, e->key);
}

static void device_grant_free(gpointer data)
{
        DeviceGrant *grant = data;

        /* folders after the socket: the reverse of the order they were taken in */
        for (guint i = grant->entries->len; i > 0; i--)
                acl_release(grant->entries->pdata[i - 1]);
        g_ptr_array_unref(grant->entries);
        g_free(grant);
}

static void ensure_tables(void)
{
        if (!acl_entries) {
                acl_entries = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, acl_entry_free);
                devices = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, device_grant_free);
        }
}

static gboolean acl_allows(const char *path, uid_t uid, const char *needed)
{
        g_autofree char *perms = NULL;
        g_autofree char *effective = NULL;

        return acl_read(path, uid, &perms, &effective, NULL) && has_all(effective, needed);
}

static gboolean grant_folders(DeviceGrant *grant, const char *socket_path, uid_t uid, GError **error)
{
        g_autofree char *dir = g_path_get_dirname(socket_path);
        struct stat st;

        /* every directory above the socket must be searchable by QEMU's user */
        for (;;) {
                g_autofree char *parent = NULL;

                if (stat(dir, &st) < 0) {
                        int err = errno;
                        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_PERMISSION_DENIED,
                                    _("Cannot check access to “%s”: %s"), dir, g_strerror(err));
                        return FALSE;
                }
                if (!can_search(&st, uid) && st.st_uid != geteuid()) {
                        /* someone else's folder: fine if its ACL already lets the user in */
                        if (!acl_allows(dir, uid, "x")) {
                                g_autofree char *who = user_name(uid);
                                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_PERMISSION_DENIED,
                                            _("QEMU runs as user “%s”, which cannot enter “%s”, and that "
                                              "folder belongs to someone else. Give that user search access "
                                              "to it, or run the VM in qemu:///session."),
                                            who, dir);
                                return FALSE;
                        }
                } else if (!can_search(&st, uid)) {
                        AclEntry *e = acl_take(dir, uid, "x", error);
                        if (!e)
                                return FALSE;
                        g_ptr_array_add(grant->entries, e);
                }
                if (g_str_equal(dir, "/"))
                        return TRUE;
                parent = g_path_get_dirname(dir);
                g_free(dir);
                dir = g_steal_pointer(&parent);
        }
}

static gboolean do_grant(const char *domain_uuid, const char *tag, const char *socket_path, uid_t uid,
                         GError **error)
{
        g_autoptr(GMutexLocker) locker = NULL;
        g_autofree char *key = NULL;
        DeviceGrant *grant;
        AclEntry *e;

        if (uid == geteuid())
                return TRUE;
        locker = g_mutex_locker_new(&access_lock);
        ensure_tables();
        key = g_strdup_printf("%s\n%s", domain_uuid, tag);
        /* the device again (a worker restarted): give back first, then take anew */
        g_hash_table_remove(devices, key);

        grant = g_new0(DeviceGrant, 1);
        grant->entries = g_ptr_array_new();
        e = acl_take(socket_path, uid, "rw", error);
        if (e)
                g_ptr_array_add(grant->entries, e);
        if (!e || !grant_folders(grant, socket_path, uid, error)) {
                device_grant_free(grant);
                return FALSE;
        }
        g_hash_table_insert(devices, g_steal_pointer(&key), grant);
        return TRUE;
}

static void do_revoke(const char *domain_uuid, const char *tag)
{
        g_autoptr(GMutexLocker) locker = g_mutex_locker_new(&access_lock);
        GHashTableIter iter;
        gpointer key;
        size_t uuid_len = strlen(domain_uuid);

        if (!devices)
                return;
        if (tag) {
                g_autofree char *device = g_strdup_printf("%s\n%s", domain_uuid, tag);
                g_hash_table_remove(devices, device);
                return;
        }
        g_hash_table_iter_init(&iter, devices);
        while (g_hash_table_iter_next(&iter, &key, NULL))
                if (strncmp(key, domain_uuid, uuid_len) == 0 && ((const char *)key)[uuid_len] == '\n')
                        g_hash_table_iter_remove(&iter);
}

static void do_revoke_all(void)
{
        g_autoptr(GMutexLocker) locker = g_mutex_locker_new(&access_lock);

        if (devices)
                g_hash_table_remove_all(devices);
}

/* ---- the queue: every change runs in one thread of its own, in order ---------- */

typedef enum { JOB_GRANT, JOB_REVOKE, JOB_REVOKE_ALL } JobKind;

typedef struct {
        JobKind kind;
        char *uuid;
        char *tag;
        char *socket_path;
        uid_t uid;
        gboolean wait;     /* someone waits for it (and frees it) */
        gboolean done;
        gboolean ok;
        GError *error;
} AccessJob;

static GMutex job_lock;
static GCond job_done;

static void job_free(AccessJob *job)
{
        g_free(job->uuid);
        g_free(job->tag);
        g_free(job->socket_path);
        g_clear_error(&job->error);
        g_free(job);
}

static void run_job(gpointer data, gpointer pool_data)
{
        AccessJob *job = data;

        switch (job->kind) {
        case JOB_GRANT:
                job->ok = do_grant(job->uuid, job->tag, job->socket_path, job->uid, &job->error);
                break;
        case JOB_REVOKE:
                do_revoke(job->uuid, job->tag);
                job->ok = TRUE;
                break;
        case JOB_REVOKE_ALL:
                do_revoke_all();
                job->ok = TRUE;
                break;
        }
        if (!job->wait) {
                job_free(job);
                return;
        }
        g_mutex_lock(&job_lock);
        job->done = TRUE;
        g_cond_broadcast(&job_done);
        g_mutex_unlock(&job_lock);
}

/* One thread: the jobs run in the order they were queued, so a revoke queued
 * before a grant (a VM that stopped and starts again) is done before it. */
static GThreadPool *job_queue(void)
{
        static GThreadPool *pool;

        if (g_once_init_enter(&pool)) {
                GThreadPool *p = g_thread_pool_new(run_job, NULL, 1, FALSE, NULL);

                g_assert(p != NULL); /* non-exclusive pools are created lazily: no error */
                g_once_init_leave(&pool, p);
        }
        return pool;
}

static gboolean queue_job(AccessJob *job, GError **error)
{
        gboolean ok;

        if (!job->wait) {
                (void)g_thread_pool_push(job_queue(), job, NULL);
                return TRUE;
        }
        (void)g_thread_pool_push(job_queue(), job, NULL);
        g_mutex_lock(&job_lock);
        while (!job->done)
                g_cond_wait(&job_done, &job_lock);
        g_mutex_unlock(&job_lock);
        ok = job->ok;
        if (!ok && job->error)
                g_propagate_error(error, g_steal_pointer(&job->error));
        job_free(job);
        return ok;
}

gboolean sluice_socket_access_grant(const char *domain_uuid, const char *tag,
                                    const char *socket_path, uid_t uid, GError **error)
{
        AccessJob *job = g_new0(AccessJob, 1);

        if (uid == geteuid()) {
                job_free(job);
                return TRUE;
        }
        job->kind = JOB_GRANT;
        job->uuid = g_strdup(domain_uuid);
        job->tag = g_strdup(tag);
        job->socket_path = g_strdup(socket_path);
        job->uid = uid;
        job->wait = TRUE;
        return queue_job(job, error);
}

void sluice_socket_access_revoke(const char *domain_uuid, const char *tag)
{
        AccessJob *job = g_new0(AccessJob, 1);

        job->kind = JOB_REVOKE;
        job->uuid = g_strdup(domain_uuid);
        job->tag = g_strdup(tag);
        (void)queue_job(job, NULL);
}

void sluice_socket_access_revoke_all(void)
{
        AccessJob *job = g_new0(AccessJob, 1);

        job->kind = JOB_REVOKE_ALL;
        job->wait = TRUE;
        (void)queue_job(job, NULL);
}
