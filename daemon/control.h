/* SPDX-License-Identifier: GPL-2.0-or-later */
/* control.h — org.sluice.Worker1 on the private control connection.
 *
 * sluice-service passes one end of a socketpair as --control-fd; the worker
 * serves org.sluice.Worker1 (data/org.sluice.Worker1.xml) on it with sd-bus as
 * a peer-to-peer server, in the main thread's sd-event loop.  When the service
 * closes its end, the worker has lost its supervisor and exits. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "fs-session.h"
#include "peer.h"
#include "stats.h"

struct control;

/* Takes ownership of fd.  on_lost runs (once) when the peer hangs up.
 * SetPeerPid changes *peers (it must outlive the control). */
int control_start(sd_event *event, int fd, struct fs_session *session, struct stats *stats,
                  struct peer_policy *peers, void (*on_lost)(void *userdata), void *userdata,
                  struct control **ret);
/* Tells the service a frontend was refused (the PeerRefused signal); c may be NULL. */
void control_peer_refused(struct control *c, pid_t pid, uid_t uid, const char *reason);
/* Tells the service whether a frontend is connected (PropertiesChanged on Connected). */
void control_set_connected(struct control *c, bool connected);
/* What this worker took over from the one before it (Worker1.Resume). */
struct control_resume {
        bool had_state;          /* false: started fresh with nothing stored (an empty dict) */
        bool resumed;
        bool handed_over;
        char why_not[256];
        uint32_t replayed, failed;
};
/* Set once, before the event loop runs (the property is constant); c may be NULL. */
void control_set_resume(struct control *c, const struct control_resume *r);
void control_free(struct control *c);
