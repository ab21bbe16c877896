/* SPDX-License-Identifier: GPL-2.0-or-later */
/* service-fd-store.c — sluice-service's own fd store (service-fd-store.h). */
#include "config.h"

#include "service-fd-store.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <glib/gi18n.h>
#include <systemd/sd-daemon.h>

#include "errors.h"
#include "share-tag.h"

typedef struct {
        char *name;     /* the worker's name: "conn", "mem-0" … */
        int fd;
} TakenFd;

static void taken_fd_free(gpointer data)
{
        TakenFd *t = data;

        if (t->fd >= 0)
                close(t->fd);
        g_free(t->name);
        g_free(t);
}

/* One per process, as LISTEN_FDS and $NOTIFY_SOCKET are: tag → GPtrArray
 * of TakenFd, in the order systemd passed them (the order they were
 * stored, which the worker's store keeps). */
static GHashTable *taken;

static gboolean split_name(const char *full, char **tag, char **name)
{
        const char *dot = strrchr(full, '.');
        g_autofree char *t = NULL;

        if (dot == NULL || dot == full)
                return FALSE;
        t = g_strndup(full, dot - full);
        if (!sluice_share_tag_check(t, NULL) || !sluice_worker_fd_store_name_is_valid(dot + 1))
                return FALSE;
        *tag = g_steal_pointer(&t);
        *name = g_strdup(dot + 1);
        return TRUE;
}

void sluice_service_fd_store_take(int first_fd, int n, char **names)
{
        g_autoptr(GHashTable) removed = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
        guint taken_n = 0;

        if (taken == NULL)
                taken = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                              (GDestroyNotify)g_ptr_array_unref);
        for (int i = 0; i < n; i++) {
                int fd = first_fd + i;
                const char *full = names != NULL && names[i] != NULL ? names[i] : "";
                g_autofree char *tag = NULL, *name = NULL;
                GPtrArray *list;
                TakenFd *t;

                /* each name once: FDSTOREREMOVE removes every fd of a name */
                if (sluice_service_fd_store_available() && *full != '\0' &&
                    g_hash_table_add(removed, g_strdup(full))) {
                        g_autofree char *message = g_strdup_printf("FDSTOREREMOVE=1\nFDNAME=%s", full);
                        int r = sd_notify(0, message);

                        if (r < 0)
                                g_warning("Could not remove \"%s\" from the unit's fd store: %s",
                                          full, g_strerror(-r));
                }
                if (!split_name(full, &tag, &name)) {
                        g_autofree char *shown = sluice_share_tag_printable(full);

                        g_message("Closing an fd passed by systemd with a name that is no share's: \"%s\"",
                                  shown);
                        close(fd);
                        continue;
                }
                list = g_hash_table_lookup(taken, tag);
                if (list == NULL) {
                        list = g_ptr_array_new_with_free_func(taken_fd_free);
                        g_hash_table_insert(taken, g_strdup(tag), list);
                }
                t = g_new0(TakenFd, 1);
                t->name = g_steal_pointer(&name);
                t->fd = fd;
                g_ptr_array_add(list, t);
                taken_n++;
        }
        if (taken_n > 0)
                g_message("Took %u fd(s) of %u share(s) back from the unit's fd store", taken_n,
                          g_hash_table_size(taken));
}

void sluice_service_fd_store_init(void)
{
        char **names = NULL;
        int n;

        /* unsets LISTEN_* (no child may take them for its own) and marks the
         * fds close-on-exec */
        n = sd_listen_fds_with_names(1, &names);
        if (n < 0)
                g_warning("The fds systemd passed cannot be read: %s", g_strerror(-n));
        else if (n > 0)
                sluice_service_fd_store_take(SD_LISTEN_FDS_START, n, names);
        g_strfreev(names);
}

void sluice_service_fd_store_reset(void)
{
        g_clear_pointer(&taken, g_hash_table_unref);
}

gboolean sluice_service_fd_store_available(void)
{
        const char *socket = g_getenv("NOTIFY_SOCKET");

        return socket != NULL && *socket != '\0';
}

gboolean sluice_service_fd_store_has(const char *tag)
{
        return taken != NULL && g_hash_table_contains(taken, tag);
}

void sluice_service_fd_store_give(const char *tag, SluiceWorkerFdStore *store)
{
        g_autoptr(GPtrArray) list = NULL;
        gpointer key = NULL, value = NULL;

        if (taken == NULL || !g_hash_table_steal_extended(taken, tag, &key, &value))
                return;
        g_free(key);
        list = value;
        for (guint i = 0; i < list->len; i++) {
                TakenFd *t = list->pdata[i];

                sluice_worker_fd_store_add(store, t->name, t->fd);
                t->fd = -1;
        }
        g_message("%s: %u fd(s) from before the service's restart go to its worker", tag, list->len);
}

void sluice_service_fd_store_drop(const char *tag)
{
        GPtrArray *list = taken != NULL ? g_hash_table_lookup(taken, tag) : NULL;

        if (list == NULL)
                return;
        g_message("Closing %u fd(s) kept for share \"%s\": no worker took them", list->len, tag);
        g_hash_table_remove(taken, tag);
}

void sluice_service_fd_store_drop_unknown(gboolean (*known)(const char *tag, gpointer data),
                                          gpointer data)
{
        GHashTableIter iter;
        gpointer key, value;

        if (taken == NULL)
                return;
        g_hash_table_iter_init(&iter, taken);
        while (g_hash_table_iter_next(&iter, &key, &value)) {
                if (known(key, data))
                        continue;
                g_message("Closing %u fd(s) kept for share \"%s\", which no longer exists",
                          ((GPtrArray *)value)->len, (const char *)key);
                g_hash_table_iter_remove(&iter);
        }
}

typedef struct {
        const char *tag;
        GError *error;
} PushState;

static void push_one(const char *name, int fd, gpointer data)
{
        PushState *p = data;
        g_autofree char *message = NULL;
        int r;

        if (p->error != NULL)
                return;
        message = g_strdup_printf("FDSTORE=1\nFDNAME=%s.%s", p->tag, name);
        r = sd_pid_notify_with_fds(0, 0, message, &fd, 1);
        if (r <= 0)
                g_set_error(&p->error, SLUICE_ERROR, SLUICE_ERROR_FAILED,
                            _("Could not keep the fd “%s” of “%s” in the service’s fd store: %s"),
                            name, p->tag, r == 0 ? _("no store ($NOTIFY_SOCKET)") : g_strerror(-r));
}

gboolean sluice_service_fd_store_push(const char *tag, SluiceWorkerFdStore *store, GError **error)
{
        PushState p = { .tag = tag };

        /* in the worker's order: an fd before the state that names it
         * (protocol.md), so a push cut short reads as torn, never as whole */
        sluice_worker_fd_store_foreach(store, push_one, &p);
        if (p.error != NULL) {
                g_propagate_error(error, p.error);
                return FALSE;
        }
        return TRUE;
}
