/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-properties.h — Share properties read from and written to the service
 * itself, where the generated proxy's own accessors fall short:
 *
 *  - its setters only log a refusal (a g_warning) and never tell the caller,
 *    so a client could not show why ReadOnly did not change;
 *  - its getters read the proxy's cache, which is behind the service until
 *    the PropertiesChanged that follows a method's reply is dispatched.
 *
 * The calls use the proxy's default timeout; errors are the service's named
 * errors (errors.h). */
#pragma once

#include <gio/gio.h>

#include "sluice-dbus.h"

G_BEGIN_DECLS

/* Properties.Set of ReadOnly / Autostart. */
void sluice_client_share_set_read_only(SluiceShare *share, gboolean read_only,
                                       GCancellable *cancellable, GAsyncReadyCallback callback,
                                       gpointer user_data);
void sluice_client_share_set_autostart(SluiceShare *share, gboolean autostart,
                                       GCancellable *cancellable, GAsyncReadyCallback callback,
                                       gpointer user_data);
gboolean sluice_client_share_set_finish(SluiceShare *share, GAsyncResult *result, GError **error);
gboolean sluice_client_share_set_read_only_sync(SluiceShare *share, gboolean read_only,
                                                GCancellable *cancellable, GError **error);
gboolean sluice_client_share_set_autostart_sync(SluiceShare *share, gboolean autostart,
                                                GCancellable *cancellable, GError **error);

/* Properties.Set of the guest settings AutoMount / MountPoint / MountAtBoot
 * (finish with sluice_client_share_set_finish); a refused MountPoint is
 * SLUICE_ERROR_INVALID_ARGUMENT with the service's reason. */
void sluice_client_share_set_auto_mount(SluiceShare *share, gboolean auto_mount,
                                        GCancellable *cancellable, GAsyncReadyCallback callback,
                                        gpointer user_data);
void sluice_client_share_set_mount_point(SluiceShare *share, const char *mount_point,
                                         GCancellable *cancellable, GAsyncReadyCallback callback,
                                         gpointer user_data);
void sluice_client_share_set_mount_at_boot(SluiceShare *share, gboolean mount_at_boot,
                                           GCancellable *cancellable, GAsyncReadyCallback callback,
                                           gpointer user_data);
gboolean sluice_client_share_set_auto_mount_sync(SluiceShare *share, gboolean auto_mount,
                                                 GCancellable *cancellable, GError **error);
gboolean sluice_client_share_set_mount_point_sync(SluiceShare *share, const char *mount_point,
                                                  GCancellable *cancellable, GError **error);
gboolean sluice_client_share_set_mount_at_boot_sync(SluiceShare *share, gboolean mount_at_boot,
                                                    GCancellable *cancellable, GError **error);

/* Properties.Set of Names / Case ("" follows the VM's OS); a refused word
 * is SLUICE_ERROR_INVALID_ARGUMENT with the service's reason. */
gboolean sluice_client_share_set_names_sync(SluiceShare *share, const char *names, GCancellable *cancellable,
                                            GError **error);
gboolean sluice_client_share_set_case_sync(SluiceShare *share, const char *case_, GCancellable *cancellable,
                                           GError **error);

/* Properties.Get of State / GuestHint: the value the service has now. */
char *sluice_client_share_fetch_state_sync(SluiceShare *share, GCancellable *cancellable,
                                           GError **error);
void sluice_client_share_fetch_guest_hint(SluiceShare *share, GCancellable *cancellable,
                                          GAsyncReadyCallback callback, gpointer user_data);
/* Returns the string fetched (never NULL on success). */
char *sluice_client_share_fetch_finish(SluiceShare *share, GAsyncResult *result, GError **error);

/* Properties.GetAll of GuestState and GuestPath: both in one answer, so the
 * path is the one that goes with that state (guest-path-settle.h waits for a
 * state that has settled).  A property missing or of the wrong type is
 * G_IO_ERROR_INVALID_DATA. */
void sluice_client_share_fetch_guest_place(SluiceShare *share, GCancellable *cancellable,
                                           GAsyncReadyCallback callback, gpointer user_data);
gboolean sluice_client_share_fetch_guest_place_finish(SluiceShare *share, GAsyncResult *result,
                                                      char **guest_state, char **guest_path,
                                                      GError **error);

/* Properties.Set of Names ("", "windows", "posix") / Case ("", "insensitive",
 * "sensitive") (finish with sluice_client_share_set_finish); a word the
 * service does not know is SLUICE_ERROR_INVALID_ARGUMENT. */
void sluice_client_share_set_names(SluiceShare *share, const char *names, GCancellable *cancellable,
                                   GAsyncReadyCallback callback, gpointer user_data);
void sluice_client_share_set_case(SluiceShare *share, const char *case_mode, GCancellable *cancellable,
                                  GAsyncReadyCallback callback, gpointer user_data);

G_END_DECLS
