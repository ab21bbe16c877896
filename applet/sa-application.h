/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sa-application: the single-instance application — owns the service client,
 * the tray icon, notifications and the window. */
#pragma once

#include <adwaita.h>
#include "sa-client.h"

G_BEGIN_DECLS

#define SA_APPLICATION_ID "org.sluice.Applet"

#define SA_TYPE_APPLICATION (sa_application_get_type())
G_DECLARE_FINAL_TYPE(SaApplication, sa_application, SA, APPLICATION, AdwApplication)

SaApplication *sa_application_new(void);
SaClient *sa_application_get_client(SaApplication *self);

G_END_DECLS
