/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sluicectl-find.c — a share or a VM by the name a person gives it (a tag,
 * an id, an object path; a VM's name or UUID), and the shares in the order
 * `list` shows them. */
#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "sluicectl.h"

gint ctl_compare_objects(gconstpointer a, gconstpointer b)
{
        const char *pa = g_dbus_object_get_object_path(G_DBUS_OBJECT(a));
        const char *pb = g_dbus_object_get_object_path(G_DBUS_OBJECT(b));

        /* Shares in id order: compare the numeric tails. */
        if (g_str_has_prefix(pa, SLUICE_SHARE_PATH_PREFIX) && g_str_has_prefix(pb, SLUICE_SHARE_PATH_PREFIX)) {
                guint64 ia = g_ascii_strtoull(pa + strlen(SLUICE_SHARE_PATH_PREFIX), NULL, 10);
                guint64 ib = g_ascii_strtoull(pb + strlen(SLUICE_SHARE_PATH_PREFIX), NULL, 10);

                if (ia != ib)
                        return ia < ib ? -1 : 1;
        }
        return strcmp(pa, pb);
}

GList *ctl_shares(Ctl *ctl)
{
        GList *objects = g_dbus_object_manager_get_objects(ctl->objects);
        GList *shares = NULL;

        for (GList *l = objects; l != NULL; l = l->next) {
                SluiceShare *share = sluice_object_get_share(SLUICE_OBJECT(l->data));

                if (share != NULL) {
                        shares = g_list_prepend(shares, g_object_ref(l->data));
                        g_object_unref(share);
                }
        }
        g_list_free_full(objects, g_object_unref);
        return g_list_sort(shares, ctl_compare_objects);
}

const char *ctl_share_id(SluiceShare *share)
{
        const char *path = g_dbus_proxy_get_object_path(G_DBUS_PROXY(share));

        return g_str_has_prefix(path, SLUICE_SHARE_PATH_PREFIX) ? path + strlen(SLUICE_SHARE_PATH_PREFIX) : path;
}

/* SHARE: an object path, an id or a tag. */
SluiceShare *ctl_find_share(Ctl *ctl, const char *name, GError **error)
{
        g_autolist(GObject) shares = ctl_shares(ctl);
        gboolean numeric = *name != '\0' && strspn(name, "0123456789") == strlen(name);

        for (GList *l = shares; l != NULL; l = l->next) {
                SluiceShare *share = sluice_object_get_share(SLUICE_OBJECT(l->data));
                const char *path = g_dbus_proxy_get_object_path(G_DBUS_PROXY(share));

                if (g_strcmp0(path, name) == 0 || (numeric && g_strcmp0(ctl_share_id(share), name) == 0) ||
                    g_strcmp0(sluice_share_get_tag(share), name) == 0) {
                        g_dbus_proxy_set_default_timeout(G_DBUS_PROXY(share), CTL_CALL_TIMEOUT_MS);
                        return share;
                }
                g_object_unref(share);
        }
        g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_FOUND,
                    _("There is no share “%s”: see the shares with “sluicectl list”"), name);
        return NULL;
}

/* By name first: what `sluicectl vms` shows; a UUID in any case. */
SluiceVm *ctl_find_vm(Ctl *ctl, const char *name, GError **error)
{
        g_autolist(GObject) objects = g_dbus_object_manager_get_objects(ctl->objects);
        g_autoptr(GString) known = g_string_new(NULL);

        for (GList *l = objects; l != NULL; l = l->next) {
                g_autoptr(SluiceVm) vm = sluice_object_get_vm(SLUICE_OBJECT(l->data));

                if (vm == NULL)
                        continue;
                if (g_strcmp0(sluice_vm_get_name(vm), name) == 0 ||
                    g_ascii_strcasecmp(sluice_vm_get_uuid(vm) ?: "", name) == 0 ||
                    g_strcmp0(g_dbus_object_get_object_path(l->data), name) == 0)
                        return g_steal_pointer(&vm);
                g_string_append_printf(known, "%s%s", known->len > 0 ? ", " : "", sluice_vm_get_name(vm));
        }
        if (known->len > 0)
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_FOUND, _("There is no VM “%s”; there are: %s."),
                            name, known->str);
        else
                g_set_error(error, SLUICE_ERROR, SLUICE_ERROR_NOT_FOUND,
                            _("There is no VM “%s” (sluice-service looks in qemu:///session and qemu:///system)."),
                            name);
        return NULL;
}

gboolean ctl_parse_uint(const char *text, guint64 min, guint64 max, guint64 *out)
{
        return text != NULL && g_ascii_string_to_unsigned(text, 10, min, max, out, NULL);
}

SluiceShare *ctl_fresh_share(SluiceShare *share, GError **error)
{
        SluiceShare *fresh = sluice_share_proxy_new_sync(g_dbus_proxy_get_connection(G_DBUS_PROXY(share)),
                                                         G_DBUS_PROXY_FLAGS_NONE, SLUICE_BUS_NAME,
                                                         g_dbus_proxy_get_object_path(G_DBUS_PROXY(share)),
                                                         NULL, error);

        if (fresh != NULL)
                g_dbus_proxy_set_default_timeout(G_DBUS_PROXY(fresh), CTL_CALL_TIMEOUT_MS);
        return fresh;
}
