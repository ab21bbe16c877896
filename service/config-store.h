/* SPDX-License-Identifier: GPL-2.0-or-later */
/* config-store.h — the persisted list of shares: $XDG_CONFIG_HOME/sluice/shares.ini.
 *
 * One group per share, "[share N]" where N is the share's id, with the keys
 * path, tag, vm, read-only, autostart, cache, queues, auto-mount,
 * mount-point, mount-at-boot, names, case, guest-letter.  Written atomically
 * (g_file_set_contents) on every change.  Loading is forgiving: each bad
 * entry gets one log line and is skipped, the good ones load, and a file
 * with bad entries is first copied aside as shares.ini.bad-<timestamp>.
 * A tag a guest cannot take (share-tag.h: one written by an older Sluice,
 * or by hand) is not a reason to lose the share: it gets a valid tag made
 * from the old one (or the folder's name), with a log line naming both.
 * A path in a place that may not be shared (share-path.h) is skipped.
 * guest-letter is not a setting but a memory: the drive letter a Windows
 * guest first gave a share whose mount-point is "", so that every later
 * mount (after a reboot too) asks for that letter again.
 * The guest settings (auto-mount, mount-point, mount-at-boot, names, case,
 * guest-letter) came later and
 * cost no share: a file without them gets their defaults, and a bad value
 * is dropped with a log line, the share keeping the default. */
#pragma once

#include <glib.h>

#include "share-path.h"
#include "share-tag.h"

G_BEGIN_DECLS

#define SLUICE_QUEUES_MAX 64

typedef struct {
        guint id;
        char *path;
        char *tag;
        char *vm;          /* "" = not assigned */
        char *cache;       /* auto|always|never */
        gboolean readonly;
        gboolean autostart;
        guint queues;
        gboolean auto_mount;    /* mount in the guest through its agent (default TRUE) */
        char *mount_point;      /* where in the guest: "" = the OS's default */
        gboolean mount_at_boot; /* Linux guests: a marked /etc/fstab line (default FALSE) */
        char *names;            /* Share.Names: "" (the VM's OS decides), posix, windows */
        char *case_;            /* Share.Case: "" (the VM's OS decides), sensitive, insensitive */
        char *guest_letter;     /* the drive Windows first gave ("Z:"), "" when none yet */
        SluiceFolderId folder;  /* not saved: the folder checked in this run (share-path.h) */
} SluiceShareConfig;

SluiceShareConfig *sluice_share_config_new(void);
SluiceShareConfig *sluice_share_config_copy(const SluiceShareConfig *config);
void sluice_share_config_free(SluiceShareConfig *config);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SluiceShareConfig, sluice_share_config_free)

/* Checks of values that do not need the file system (SLUICE_ERROR_INVALID_ARGUMENT;
 * tags: sluice_share_tag_check). */
gboolean sluice_config_check_vm(const char *vm, GError **error);
gboolean sluice_config_check_cache(const char *cache, GError **error);
gboolean sluice_config_check_queues(guint64 queues, GError **error);
/* Share.MountPoint: "" (the guest OS's default), a Linux guest's mount
 * point or a Windows drive "X:", by the one rule of guest-os.h
 * (sluice_guest_os_check_place); which guest will take it is not known
 * here, so either is taken. */
gboolean sluice_config_check_mount_point(const char *mount_point, GError **error);
/* Share.Names: "", "posix" or "windows"; Share.Case: "", "sensitive" or
 * "insensitive" (wire-enums.h).  INVALID_ARGUMENT with a sentence otherwise. */
gboolean sluice_config_check_names(const char *names, GError **error);
gboolean sluice_config_check_case(const char *case_, GError **error);

/* The file's path: $XDG_CONFIG_HOME/sluice/shares.ini. */
char *sluice_config_default_path(void);

/* Returns the good entries (SluiceShareConfig *), sorted by id.  A missing
 * file is an empty list; only an unreadable file is an error. */
GPtrArray *sluice_config_load(const char *file, GError **error);
/* Writes entries (SluiceShareConfig *) atomically, creating the directory. */
gboolean sluice_config_save(const char *file, GPtrArray *entries, GError **error);

G_END_DECLS
