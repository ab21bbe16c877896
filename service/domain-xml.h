/* SPDX-License-Identifier: GPL-2.0-or-later */
/* domain-xml.h — reading and writing libvirt domain XML for Sluice: what a
 * domain's XML says (shared memory, OS, QEMU's user, virtiofs devices, the
 * guest agent's channel, the AppArmor or SELinux confinement), the
 * <filesystem> device Sluice hot-plugs, and the shared-memory and
 * guest-agent rewrites of a persistent definition.  Pure functions over
 * strings (libxml2), no libvirt calls, so they can be tested without a
 * hypervisor. */
#pragma once

#include <glib.h>

#include "confinement-model.h"

G_BEGIN_DECLS

/* The QEMU guest agent's channel: <channel><target type='virtio'
 * name='org.qemu.guest_agent.0' state=…/></channel> in <devices>. */
typedef enum {
        SLUICE_DOMAIN_AGENT_CHANNEL_NONE,         /* no such channel */
        SLUICE_DOMAIN_AGENT_CHANNEL_PRESENT,      /* there, no state (inactive XML) */
        SLUICE_DOMAIN_AGENT_CHANNEL_CONNECTED,    /* live XML: an agent opened the port */
        SLUICE_DOMAIN_AGENT_CHANNEL_DISCONNECTED, /* live XML: nobody on the guest side */
} SluiceDomainAgentChannel;

#define SLUICE_DOMAIN_AGENT_CHANNEL_NAME "org.qemu.guest_agent.0"

typedef struct {
        /* libvirt's own rule for vhost-user devices: the memory (every NUMA
         * cell) has shared access */
        gboolean shared_memory;
        /* <metadata><libosinfo:libosinfo><libosinfo:os id=…/>: the libosinfo
         * id URL, e.g. "http://microsoft.com/win/11"; NULL when absent */
        char *os_id;
        /* uid of QEMU's DAC label in the live XML ("+64055:+64055" or a user
         * name); -1 when the XML has none */
        gint64 dac_uid;
        /* the live XML's AppArmor or SELinux <seclabel>: NONE when it has
         * none or type='none' (QEMU unconfined); its <label>
         * ("libvirt-UUID", "system_u:system_r:svirt_tcg_t:s0:c12,c34"),
         * NULL when the XML names none */
        SluiceConfinementModel confinement;
        char *confinement_label;
        /* every <filesystem> device: target dir (tag) → its details */
        GHashTable *filesystems; /* char *tag → SluiceDomainFilesystem * */
        SluiceDomainAgentChannel agent_channel;
} SluiceDomainXml;

typedef struct {
        char *tag;
        char *socket;  /* <source socket=…>, NULL for libvirt-launched ones */
        char *alias;   /* <alias name=…>, NULL in inactive XML */
} SluiceDomainFilesystem;

void sluice_domain_xml_free(SluiceDomainXml *info);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(SluiceDomainXml, sluice_domain_xml_free)

/* Parses a domain's XML; NULL with a G_MARKUP_ERROR when it is not XML. */
SluiceDomainXml *sluice_domain_xml_parse(const char *xml, GError **error);

/* "http://microsoft.com/win/11" → "win11", "http://debian.org/debian/12" →
 * "debian12" (libosinfo's short-id convention: the last two path segments);
 * "" for NULL or anything else. */
char *sluice_domain_xml_os_short_id(const char *os_id);

/* Checks a tag (1..36 bytes of UTF-8, no control characters) and a socket
 * path (absolute, UTF-8, no control characters, fits sun_path).  Returns
 * FALSE with SLUICE_ERROR_INVALID_ARGUMENT. */
gboolean sluice_domain_xml_check_tag(const char *tag, GError **error);
gboolean sluice_domain_xml_check_socket(const char *socket_path, GError **error);

/* The device Sluice hot-plugs, with both values XML-escaped. */
char *sluice_domain_xml_filesystem(const char *socket_path, const char *tag);

/* Rewrites an inactive domain definition so that its memory is memfd-backed
 * and shared, keeping everything else.  Returns the new XML, or NULL with
 * SLUICE_ERROR_UNSUPPORTED (and a reason) for layouts it cannot handle.
 * *changed is FALSE when the definition already had shared memory (the XML is
 * then returned unchanged). */
char *sluice_domain_xml_enable_shared_memory(const char *xml, gboolean *changed,
                                             GError **error);

/* Adds the guest agent's channel (<channel type='unix'><target
 * type='virtio' name='org.qemu.guest_agent.0'/></channel>, libvirt picks
 * the socket and adds the virtio-serial controller) to an inactive domain
 * definition, keeping everything else.  *changed is FALSE when it has the
 * channel already (the XML is then returned unchanged).  NULL with a
 * G_MARKUP_ERROR when it is not domain XML. */
char *sluice_domain_xml_enable_guest_agent(const char *xml, gboolean *changed, GError **error);

G_END_DECLS
