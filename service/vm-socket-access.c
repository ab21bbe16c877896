/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm-socket-access.c — see vm-socket-access.h.  libacl reads and writes the
 * ACLs in-process, in the queue's thread, never in the service's main thread.
 * Each change is read-modify-write of the path's whole access ACL: the mask
 * grows by what QEMU's user needs only (not recalculated as setfacl(1) does,
 * which would let other entries the mask held back do more), and the whole
 * ACL before and after is kept, so that the give-back restores it exactly. */
#include "config.h"

#include "vm-socket-access.h"
#include "errors.h"

#include <acl/libacl.h>
#include <errno.h>
#include <glib/gi18n.h>
#include <grp.h>
#include <pwd.h>
#include <sys/acl.h>
#include <sys/stat.h>
#include <unistd.h>

G_DEFINE_AUTO_CLEANUP_FREE_FUNC(acl_t, acl_free, NULL)

/* Permissions as ACL_READ | ACL_WRITE | ACL_EXECUTE bits. */
#define PERM_RW (ACL_READ | ACL_WRITE)
#define PERM_X ACL_EXECUTE

/* One path's ACL entry for one user, as Sluice changed it. */
typedef struct {
        char *key;        /* "uid:path" */
        char *path;
        uid_t uid;
        gboolean changed; /* FALSE: the entry already allowed enough, nothing to undo */
        char *acl_before; /* changed: the path's whole ACL before (acl_to_text) ... */
        char *acl_after;  /* ... and as Sluice left it, to tell whether someone changed it since */
        guint users;      /* devices that need it */
} AclEntry;

/* What one device (domain UUID, tag) holds. */
typedef struct {
        GPtrArray *entries; /* AclEntry *, owned by granted */
} DeviceGrant;

static GMutex access_lock;
static GHashTable *granted; /* "uid:path" → AclEntry * */
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

static void set_acl_error(GError **error, uid_t uid, const char *path, const char *why)
{
        g_autofree char *who = user_name(uid);

        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_PERMISSION_DENIED,
                    _("QEMU runs as user “%s” and cannot reach “%s”, and Sluice could not "
                      "grant access with an ACL (%s). Use a file system with ACL support, "
                      "or run the VM in qemu:///session."),
                    who, path, why);
}

static guint entry_perms(acl_entry_t entry)
{
        acl_permset_t permset;
        guint perms = 0;

        if (acl_get_permset(entry, &permset) < 0)
                return 0;
        if (acl_get_perm(permset, ACL_READ) == 1)
                perms |= ACL_READ;
        if (acl_get_perm(permset, ACL_WRITE) == 1)
                perms |= ACL_WRITE;
        if (acl_get_perm(permset, ACL_EXECUTE) == 1)
                perms |= ACL_EXECUTE;
        return perms;
}

/* The entry of the given type; of ACL_USER: the one for uid.  NULL: none. */
static acl_entry_t find_entry(acl_t acl, acl_tag_t type, uid_t uid)
{
        acl_entry_t entry;

        for (int r = acl_get_entry(acl, ACL_FIRST_ENTRY, &entry); r == 1;
             r = acl_get_entry(acl, ACL_NEXT_ENTRY, &entry)) {
                acl_tag_t tag;
                uid_t *qualifier;
                gboolean match;

                if (acl_get_tag_type(entry, &tag) < 0 || tag != type)
                        continue;
                if (type != ACL_USER)
                        return entry;
                qualifier = acl_get_qualifier(entry);
                match = qualifier && *qualifier == uid;
                acl_free(qualifier);
                if (match)
                        return entry;
        }
        return NULL;
}

/* Whether the ACL has entries for named users or groups. */
static gboolean has_named_entries(acl_t acl)
{
        acl_entry_t entry;

        for (int r = acl_get_entry(acl, ACL_FIRST_ENTRY, &entry); r == 1;
             r = acl_get_entry(acl, ACL_NEXT_ENTRY, &entry)) {
                acl_tag_t tag;

                if (acl_get_tag_type(entry, &tag) == 0 && (tag == ACL_USER || tag == ACL_GROUP))
                        return TRUE;
        }
        return FALSE;
}

/* Reads path's entry for uid: *ret_had, *ret_perms; *ret_effective: what
 * the mask leaves of it (0 when there is no entry). */
static gboolean path_acl_read(const char *path, uid_t uid, gboolean *ret_had, guint *ret_perms,
                         guint *ret_effective, GError **error)
{
        g_auto(acl_t) acl = acl_get_file(path, ACL_TYPE_ACCESS);
        acl_entry_t entry, mask;

        *ret_had = FALSE;
        *ret_perms = *ret_effective = 0;
        if (!acl) {
                set_acl_error(error, uid, path, g_strerror(errno));
                return FALSE;
        }
        entry = find_entry(acl, ACL_USER, uid);
        if (!entry)
                return TRUE;
        *ret_had = TRUE;
        *ret_perms = *ret_effective = entry_perms(entry);
        mask = find_entry(acl, ACL_MASK, 0);
        if (mask)
                *ret_effective &= entry_perms(mask);
        return TRUE;
}

/* The entry in acl with the tag and (for named entries) the qualifier of
 * like, which belongs to another ACL.  NULL: none. */
static acl_entry_t find_like(acl_t acl, acl_entry_t like)
{
        acl_tag_t tag;
        id_t *qualifier;
        acl_entry_t entry;

        if (acl_get_tag_type(like, &tag) < 0)
                return NULL;
        if (tag != ACL_USER && tag != ACL_GROUP)
                return find_entry(acl, tag, 0);
        qualifier = acl_get_qualifier(like);
        if (!qualifier)
                return NULL;
        for (int r = acl_get_entry(acl, ACL_FIRST_ENTRY, &entry); r == 1;
             r = acl_get_entry(acl, ACL_NEXT_ENTRY, &entry)) {
                acl_tag_t other;
                id_t *q;
                gboolean match;

                if (acl_get_tag_type(entry, &other) < 0 || other != tag)
                        continue;
                q = acl_get_qualifier(entry);
                match = q && *q == *qualifier;
                acl_free(q);
                if (match) {
                        acl_free(qualifier);
                        return entry;
                }
        }
        acl_free(qualifier);
        return NULL;
}

static gboolean set_perms(acl_entry_t entry, guint perms)
{
        acl_permset_t permset;

        if (acl_get_permset(entry, &permset) < 0 || acl_clear_perms(permset) < 0)
                return FALSE;
        for (guint bit = ACL_EXECUTE; bit <= ACL_READ; bit <<= 1)
                if ((perms & bit) && acl_add_perm(permset, bit) < 0)
                        return FALSE;
        return acl_set_permset(entry, permset) == 0;
}

/* Whether entry is in the group class (the mask limits it) and is not uid's. */
static gboolean is_other_group_class(acl_entry_t entry, uid_t uid)
{
        acl_tag_t tag;
        uid_t *qualifier;
        gboolean ours;

        if (acl_get_tag_type(entry, &tag) < 0)
                return FALSE;
        if (tag == ACL_GROUP_OBJ || tag == ACL_GROUP)
                return TRUE;
        if (tag != ACL_USER)
                return FALSE;
        qualifier = acl_get_qualifier(entry);
        ours = qualifier && *qualifier == uid;
        acl_free(qualifier);
        return !ours;
}

/* path's access ACL as text (canonical: as the kernel stores it), or NULL. */
static char *acl_text_of(const char *path)
{
        g_auto(acl_t) acl = acl_get_file(path, ACL_TYPE_ACCESS);
        char *text, *copy;

        if (!acl || !(text = acl_to_text(acl, NULL)))
                return NULL;
        copy = g_strdup(text);
        acl_free(text);
        return copy;
}

/* Gives uid the needed permissions on path, and nobody anything more: the
 * mask grows by what uid needs only, and each other entry of the group class
 * that the wider mask would let do more is cut to what it could do before.
 * *ret_before / *ret_after: the whole ACL before and after, as text. */
static gboolean path_acl_grant(const char *path, uid_t uid, guint needed, char **ret_before,
                               char **ret_after, char **ret_why)
{
        g_auto(acl_t) acl = acl_get_file(path, ACL_TYPE_ACCESS);
        g_autofree char *before = NULL;
        acl_entry_t entry, mask, e;

        if (!acl || !(before = acl_text_of(path)))
                goto fail;
        entry = find_entry(acl, ACL_USER, uid);
        if (!entry && (acl_create_entry(&acl, &entry) < 0 || acl_set_tag_type(entry, ACL_USER) < 0 ||
                       acl_set_qualifier(entry, &uid) < 0 || !set_perms(entry, 0)))
                goto fail;
        if (!set_perms(entry, entry_perms(entry) | needed))
                goto fail;
        mask = find_entry(acl, ACL_MASK, 0);
        if (mask) {
                guint old_mask = entry_perms(mask), new_mask = old_mask | needed;

                for (int r = acl_get_entry(acl, ACL_FIRST_ENTRY, &e); r == 1;
                     r = acl_get_entry(acl, ACL_NEXT_ENTRY, &e)) {
                        guint perms = entry_perms(e);

                        if (is_other_group_class(e, uid) && (perms & new_mask) != (perms & old_mask) &&
                            !set_perms(e, perms & old_mask))
                                goto fail;
                }
                if (!set_perms(mask, new_mask))
                        goto fail;
        } else {
                /* a minimal ACL: the owning group is all the group class there is */
                acl_entry_t group = find_entry(acl, ACL_GROUP_OBJ, 0);

                if (!group || acl_create_entry(&acl, &mask) < 0 || acl_set_tag_type(mask, ACL_MASK) < 0 ||
                    !set_perms(mask, entry_perms(group) | needed))
                        goto fail;
        }
        if (acl_valid(acl) < 0 || acl_set_file(path, ACL_TYPE_ACCESS, acl) < 0)
                goto fail;
        if (!(*ret_after = acl_text_of(path)))
                goto fail;
        *ret_before = g_steal_pointer(&before);
        return TRUE;
fail:
        *ret_why = g_strdup(g_strerror(errno ? errno : EINVAL));
        return FALSE;
}

/* Gives back a grant.  Unchanged since (text == after): the ACL as it was
 * before, exactly.  Changed by someone meanwhile: their changes stay; uid's
 * entry goes back (if still as granted), and the mask and the entries the
 * grant cut are put back only if the mask is still the grant's, so that
 * nothing ends up allowed that neither they nor the ACL before allowed. */
static gboolean path_acl_give_back(const char *path, uid_t uid, const char *before_text,
                                   const char *after_text, char **ret_why)
{
        g_autofree char *now_text = acl_text_of(path);
        g_auto(acl_t) now = NULL;
        g_auto(acl_t) before = NULL;
        g_auto(acl_t) after = NULL;
        acl_entry_t entry, e, mask_now, mask_after, mask_before;

        if (!now_text)
                goto fail;
        if (g_str_equal(now_text, after_text)) {
                before = acl_from_text(before_text);
                if (!before || acl_set_file(path, ACL_TYPE_ACCESS, before) < 0)
                        goto fail;
                return TRUE;
        }
        g_message("The ACL of %s changed since Sluice granted user %u access: giving back only what "
                  "is still as Sluice set it", path, (unsigned)uid);
        now = acl_get_file(path, ACL_TYPE_ACCESS);
        before = acl_from_text(before_text);
        after = acl_from_text(after_text);
        if (!now || !before || !after)
                goto fail;
        entry = find_entry(now, ACL_USER, uid);
        e = find_entry(after, ACL_USER, uid);
        if (entry && e && entry_perms(entry) == entry_perms(e)) {
                acl_entry_t old = find_entry(before, ACL_USER, uid);

                if (old ? !set_perms(entry, entry_perms(old)) : acl_delete_entry(now, entry) < 0)
                        goto fail;
        }
        mask_now = find_entry(now, ACL_MASK, 0);
        mask_after = find_entry(after, ACL_MASK, 0);
        mask_before = find_entry(before, ACL_MASK, 0);
        if (mask_now && mask_after && entry_perms(mask_now) == entry_perms(mask_after)) {
                for (int r = acl_get_entry(now, ACL_FIRST_ENTRY, &e); r == 1;
                     r = acl_get_entry(now, ACL_NEXT_ENTRY, &e)) {
                        acl_entry_t as_granted, old;

                        if (!is_other_group_class(e, uid) || !(as_granted = find_like(after, e)) ||
                            !(old = find_like(before, e)) || entry_perms(e) != entry_perms(as_granted))
                                continue;
                        if (!set_perms(e, entry_perms(old)))
                                goto fail;
                }
                if (mask_before) {
                        if (!set_perms(mask_now, entry_perms(mask_before)))
                                goto fail;
                } else if (!has_named_entries(now) && acl_delete_entry(now, mask_now) < 0) {
                        goto fail;
                }
        }
        if (acl_valid(now) < 0 || acl_set_file(path, ACL_TYPE_ACCESS, now) < 0)
                goto fail;
        return TRUE;
fail:
        *ret_why = g_strdup(g_strerror(errno ? errno : EINVAL));
        return FALSE;
}

static void grant_entry_free(gpointer data)
{
        AclEntry *e = data;

        g_free(e->key);
        g_free(e->path);
        g_free(e->acl_before);
        g_free(e->acl_after);
        g_free(e);
}

/* Puts the path's ACL back as it was before Sluice changed it. */
static void grant_undo(AclEntry *e)
{
        g_autofree char *why = NULL;
        struct stat st;

        if (!e->changed || lstat(e->path, &st) < 0) /* a socket takes its ACL with it */
                return;
        if (!path_acl_give_back(e->path, e->uid, e->acl_before, e->acl_after, &why))
                g_message("Cannot give back the ACL entry of user %u on %s: %s", (unsigned)e->uid,
                          e->path, why);
}

/* Takes a share of path's entry for uid with at least the needed permissions. */
static AclEntry *grant_take(const char *path, uid_t uid, guint needed, GError **error)
{
        g_autofree char *key = g_strdup_printf("%u:%s", (unsigned)uid, path);
        g_autofree char *why = NULL;
        AclEntry *e = g_hash_table_lookup(granted, key);
        gboolean had;
        guint before, effective;

        if (e) {
                e->users++;
                return e;
        }
        if (!path_acl_read(path, uid, &had, &before, &effective, error))
                return NULL;
        e = g_new0(AclEntry, 1);
        e->path = g_strdup(path);
        e->uid = uid;
        e->users = 1;
        if ((effective & needed) != needed) {
                if (!path_acl_grant(path, uid, needed, &e->acl_before, &e->acl_after, &why)) {
                        set_acl_error(error, uid, path, why);
                        grant_entry_free(e);
                        return NULL;
                }
                e->changed = TRUE;
        }
        e->key = g_steal_pointer(&key);
        g_hash_table_insert(granted, e->key, e);
        return e;
}

static void grant_release(AclEntry *e)
{
        if (--e->users > 0)
                return;
        grant_undo(e);
        g_hash_table_remove(granted, e->key);
}

static void device_grant_free(gpointer data)
{
        DeviceGrant *grant = data;

        /* folders after the socket: the reverse of the order they were taken in */
        for (guint i = grant->entries->len; i > 0; i--)
                grant_release(grant->entries->pdata[i - 1]);
        g_ptr_array_unref(grant->entries);
        g_free(grant);
}

static void ensure_tables(void)
{
        if (!granted) {
                granted = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, grant_entry_free);
                devices = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, device_grant_free);
        }
}

static gboolean path_acl_allows(const char *path, uid_t uid, guint needed)
{
        gboolean had;
        guint perms, effective;

        return path_acl_read(path, uid, &had, &perms, &effective, NULL) && (effective & needed) == needed;
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
                        if (!path_acl_allows(dir, uid, PERM_X)) {
                                g_autofree char *who = user_name(uid);
                                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_PERMISSION_DENIED,
                                            _("QEMU runs as user “%s”, which cannot enter “%s”, and that "
                                              "folder belongs to someone else. Give that user search access "
                                              "to it, or run the VM in qemu:///session."),
                                            who, dir);
                                return FALSE;
                        }
                } else if (!can_search(&st, uid)) {
                        AclEntry *e;

                        /* other programs' sockets there rely on its 0700 (socket-dir.h) */
                        if (g_strcmp0(dir, g_getenv("XDG_RUNTIME_DIR")) == 0) {
                                g_autofree char *who = user_name(uid);
                                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_PERMISSION_DENIED,
                                            _("QEMU runs as user “%s”, which would need to enter your "
                                              "runtime folder “%s”: Sluice does not open it to another "
                                              "user. Restart sluice-service to move its sockets out."),
                                            who, dir);
                                return FALSE;
                        }
                        e = grant_take(dir, uid, PERM_X, error);
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
        e = grant_take(socket_path, uid, PERM_RW, error);
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
        /* never read: it holds the lock until the scope ends (clang warns
         * about an unread cleanup variable, gcc does not) */
        G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = g_mutex_locker_new(&access_lock);
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
        /* never read: it holds the lock until the scope ends (clang warns
         * about an unread cleanup variable, gcc does not) */
        G_GNUC_UNUSED g_autoptr(GMutexLocker) locker = g_mutex_locker_new(&access_lock);

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
