/* SPDX-License-Identifier: GPL-2.0-or-later */
/* share-notice.c — what a share tells its user: the Error property (what
 * went wrong, else what keeps the share from its VM or its guest) and the
 * Event signal.  Called by the driver and by the actions (share-private.h);
 * it calls neither back. */
#include "config.h"

#include <glib/gi18n.h>

#include "share-private.h"
#include "vm-guest.h"

/* Why Sluice leaves the guest alone although the share should be mounted
 * there: plugged in, AutoMount on, but the guest's agent blocks what
 * mounting needs (RHEL's default policy); NULL otherwise. */
static char *guest_refusal(SluiceSharedFolder *self)
{
        g_autofree char *why = NULL;

        if (self->vms == NULL || !self->config->auto_mount ||
            self->machine.attachment.state != SLUICE_SHARE_ATTACHMENT_PLUGGED ||
            sluice_vm_manager_guest_agent(self->vms, self->config->vm) != SLUICE_WIRE_AGENT_RESTRICTED)
                return NULL;
        why = sluice_vm_manager_guest_agent_message(self->vms, self->config->vm);
        return g_strdup_printf(_("Sluice cannot mount “%s” in %s by itself: %s Until then, mount it there by hand: %s"),
                               self->config->tag, self->config->vm, why != NULL ? why : "",
                               sluice_share_get_guest_hint(self->iface));
}

void sluice_shared_folder_publish_error(SluiceSharedFolder *self)
{
        g_autofree char *notice = NULL;

        if (self->error != NULL) {
                sluice_share_set_error(self->iface, self->error);
                return;
        }
        if (self->waiting_for_vm)
                notice = g_strdup_printf(_("Waiting for VM “%s”: libvirt does not know it. Define it again, or choose another VM (sluicectl set %s vm NAME)"),
                                         self->config->vm, self->config->tag);
        else
                notice = guest_refusal(self);
        sluice_share_set_error(self->iface, notice != NULL ? notice : "");
}

void sluice_shared_folder_set_error(SluiceSharedFolder *self, const char *message)
{
        g_free(self->error);
        self->error = message != NULL && *message != '\0' ? g_strdup(message) : NULL;
        sluice_shared_folder_publish_error(self);
}

void sluice_shared_folder_vms_changed(SluiceSharedFolder *self)
{
        gboolean waiting = self->vms != NULL && *self->config->vm != '\0' &&
                sluice_vm_manager_presence(self->vms, self->config->vm) == SLUICE_VM_PRESENCE_UNKNOWN;

        if (waiting == self->waiting_for_vm)
                return;
        self->waiting_for_vm = waiting;
        if (waiting)
                g_message("%s: waiting for VM %s, which libvirt does not know", self->config->tag,
                          self->config->vm);
        sluice_shared_folder_publish_error(self);
}

void sluice_shared_folder_emit_event(SluiceSharedFolder *self, SluiceWireEvent event, const char *message)
{
        g_message("%s: %s", self->config->tag, message);
        sluice_share_emit_event(self->iface, sluice_wire_event_name(event), message);
}

char *sluice_shared_folder_resumed_sentence(SluiceSharedFolder *self)
{
        GVariant *resume = self->worker != NULL ? sluice_worker_get_resume(self->worker) : NULL;
        const char *tag = self->config->tag;
        gboolean handed_over = FALSE;
        guint32 replayed = 0, failed = 0;
        /* guint, not G_GUINT64_FORMAT: xgettext cuts a msgid at a macro */
        guint ms = self->worker != NULL
                ? (guint)MIN((guint64)sluice_worker_get_resume_pause_us(self->worker) / 1000, G_MAXUINT)
                : 0;
        g_autofree char *requests = NULL;

        if (resume != NULL) {
                (void)g_variant_lookup(resume, "handed-over", "b", &handed_over);
                (void)g_variant_lookup(resume, "replayed", "u", &replayed);
                (void)g_variant_lookup(resume, "failed", "u", &failed);
        }
        if (handed_over)
                return g_strdup_printf(_("The worker of “%s” was restarted in %u ms without interrupting the guest"), tag, ms);
        /* TRANSLATORS: the end of "“docs” recovered from a worker crash in 38 ms; …" */
        requests = g_strdup_printf(ngettext("%u request answered again, %u failed",
                                            "%u requests answered again, %u failed", replayed),
                                   replayed, failed);
        /* TRANSLATORS: %s is the share's tag, then milliseconds, then "2 requests answered again, 0 failed" */
        return g_strdup_printf(_("“%s” recovered from a worker crash in %u ms; %s"),
                               tag, ms, requests);
}

guint32 sluice_shared_folder_resume_failed(SluiceSharedFolder *self)
{
        GVariant *resume = self->worker != NULL ? sluice_worker_get_resume(self->worker) : NULL;
        guint32 failed = 0;

        if (resume != NULL)
                (void)g_variant_lookup(resume, "failed", "u", &failed);
        return failed;
}
