/* SPDX-License-Identifier: GPL-2.0-or-later */
/* domain-xml-doc.h — the libxml2 steps every reader and writer of libvirt
 * domain XML in the service shares (domain-xml.c implements them): read a
 * document (refusing anything that is not a <domain>, fetching nothing it
 * points to), find or add a child element, write it back.  Kept apart from
 * domain-xml.h so that only the files that walk the tree see libxml2. */
#pragma once

#include <glib.h>
#include <libxml/tree.h>

G_BEGIN_DECLS

G_DEFINE_AUTOPTR_CLEANUP_FUNC(xmlDoc, xmlFreeDoc)

/* XML as a document whose root is <domain>; NULL and G_MARKUP_ERROR_PARSE otherwise. */
xmlDoc *sluice_domain_xml_read(const char *xml, GError **error);
/* PARENT's first child element named NAME; NULL when there is none (or no PARENT). */
xmlNode *sluice_domain_xml_child(xmlNode *parent, const char *name);
/* PARENT's first child element named NAME, added when there is none. */
xmlNode *sluice_domain_xml_ensure_child(xmlNode *parent, const char *name);
/* DOC as text again. */
char *sluice_domain_xml_write(xmlDoc *doc, GError **error);

G_END_DECLS
