/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-agent.h — commands to the QEMU guest agent (qemu-ga) in a VM,
 * through libvirt's virDomainQemuAgentCommand (libvirt-qemu).
 *
 * Every function blocks on libvirtd and on the guest: call them from a
 * worker thread (GTask), never from the main thread.  Each command waits at
 * most its timeout, so a hung agent costs a thread for that long and then an
 * error, never a stuck service.
 *
 * What the guest answers is untrusted: replies are parsed with json-glib,
 * every member is checked for its type, sizes are bounded, and nothing of it
 * is used here as a command, a host path or markup.  Every GError from here
 * has a printable, bounded message, libvirt's included (it repeats what the
 * agent said).  Commands are built
 * from an argument vector (guest-exec runs a program directly, no shell).
 *
 * libvirt marks a domain that received a command through this API as
 * "tainted" (custom-ga-command) in its log: harmless, but it shows up in
 * /var/log/libvirt/qemu/VM.log and in `virsh dominfo`-style reports. */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <libvirt/libvirt.h>

#include "wire-enums.h"


G_BEGIN_DECLS

#define SLUICE_GUEST_AGENT_ERROR (sluice_guest_agent_error_quark())
GQuark sluice_guest_agent_error_quark(void);

typedef enum {
        SLUICE_GUEST_AGENT_ERROR_NOT_CONFIGURED, /* the domain has no agent channel */
        SLUICE_GUEST_AGENT_ERROR_NOT_CONNECTED,  /* no agent answers on it (not installed, not started) */
        SLUICE_GUEST_AGENT_ERROR_TIMEOUT,        /* it did not answer in time */
        SLUICE_GUEST_AGENT_ERROR_DISABLED,       /* the agent's policy blocks the command */
        SLUICE_GUEST_AGENT_ERROR_FAILED,         /* the agent reported an error running it */
        SLUICE_GUEST_AGENT_ERROR_PROTOCOL,       /* a reply Sluice cannot use (malformed, too large) */
} SluiceGuestAgentError;

/* How long one agent command may take (seconds). */
#define SLUICE_GUEST_AGENT_TIMEOUT_S 10
/* How long one whole guest operation (an unmount with its reads of
 * /proc/mounts, a mount, an /etc/fstab edit) may take, all its agent
 * commands together (seconds): a Stop stays within 15 s whatever the
 * guest does. */
#define SLUICE_GUEST_OPERATION_TIMEOUT_S 10
/* guest-file-read calls one file may take beyond what its size needs: an
 * agent that answers a byte at a time ends with PROTOCOL, not in months. */
#define SLUICE_GUEST_AGENT_FILE_EXTRA_READS 64
/* The most a guest file read through the agent may hold (/proc/mounts, /etc/fstab). */
#define SLUICE_GUEST_AGENT_FILE_MAX (1024 * 1024)
/* The most output a guest-exec keeps of each stream. */
#define SLUICE_GUEST_AGENT_OUTPUT_MAX (64 * 1024)

/* Gives the calling thread's agent commands from now on one deadline in
 * all, SECONDS from now (0: none, as at the start).  Each command then
 * waits at most what is left, and once it has passed every command fails
 * at once with TIMEOUT, so that no loop over the guest's answers (polling
 * a program, reading a file) outlives the operation. */
void sluice_guest_agent_set_deadline(int seconds);

/* Sends COMMAND with ARGUMENTS (may be NULL) and returns the reply's
 * "return" member (a new node; never NULL on success).  At most TIMEOUT_S
 * seconds, and never past the thread's deadline. */
JsonNode *sluice_guest_agent_call(virDomainPtr domain, const char *command, JsonObject *arguments,
                                  int timeout_s, GError **error);

typedef struct {
        int exit_code;      /* the program's exit status; -1 when a signal ended it */
        int signal;         /* the signal that ended it, or 0 */
        char *out;          /* its standard output, NUL-terminated (binary safe up to out_len) */
        gsize out_len;
        char *err;          /* its standard error, likewise */
        gsize err_len;
} SluiceGuestExec;

void sluice_guest_exec_clear(SluiceGuestExec *result);

/* Runs ARGV[0] (an absolute path in the guest) with ARGV, no shell, output
 * captured; waits until it exits, at most TIMEOUT_S seconds in all.
 * TRUE when it ran (whatever its exit status): look at RESULT. */
gboolean sluice_guest_agent_exec(virDomainPtr domain, const char *const *argv, int timeout_s,
                                 SluiceGuestExec *result, GError **error);

/* The guest file PATH whole; more than MAX bytes, or more guest-file-read
 * calls than MAX bytes need (in 64 KiB reads) plus
 * SLUICE_GUEST_AGENT_FILE_EXTRA_READS, is a PROTOCOL error; more than
 * SLUICE_GUEST_AGENT_TIMEOUT_S in all (or the thread's deadline) TIMEOUT. */
GBytes *sluice_guest_agent_read_file(virDomainPtr domain, const char *path, gsize max, GError **error);
/* Replaces the guest file PATH with DATA (mode "w": created when missing). */
gboolean sluice_guest_agent_write_file(virDomainPtr domain, const char *path, GBytes *data, GError **error);

/* How much of a file went into the guest so far (DONE of TOTAL bytes). */
typedef void (*SluiceGuestAgentProgress)(gsize done, gsize total, gpointer user_data);
/* The most one guest-file-write carries of a streamed file: 64 KiB in
 * base64, a request size every agent takes. */
#define SLUICE_GUEST_AGENT_WRITE_CHUNK (48 * 1024)

/* Replaces the guest file PATH with SIZE bytes read from FD (a host file,
 * from its start), in guest-file-write calls of at most
 * SLUICE_GUEST_AGENT_WRITE_CHUNK bytes; PROGRESS (may be NULL) after each.
 * A host file that ends early or a guest that takes less than it was
 * given, or nothing, is an error; each call waits at most
 * SLUICE_GUEST_AGENT_TIMEOUT_S, the whole at most the thread's deadline. */
gboolean sluice_guest_agent_write_from_fd(virDomainPtr domain, const char *path, int fd, gsize size,
                                          SluiceGuestAgentProgress progress, gpointer user_data, GError **error);

typedef struct {
        SluiceWireGuestOs os_type;
        char *os_name;          /* "Debian GNU/Linux 12 (bookworm)", "Linux 6.1.0-28-amd64", "" */
        char *version;          /* the agent's version ("7.2.0") */
        gboolean can_exec;      /* guest-exec and guest-exec-status are enabled */
        gboolean can_file;      /* guest-file-open/read/write/close are enabled */
        char *blocked;          /* the needed commands the agent's policy blocks, comma-separated, or NULL */
} SluiceGuestAgentInfo;

void sluice_guest_agent_info_clear(SluiceGuestAgentInfo *info);

/* Asks the agent what it is and allows (guest-info, guest-get-osinfo).
 * An error when no agent answers. */
gboolean sluice_guest_agent_probe(virDomainPtr domain, SluiceGuestAgentInfo *info, GError **error);

/* Pure helpers, for the probe and the unit tests. */
/* From a guest-get-osinfo "return" object. */
SluiceWireGuestOs sluice_guest_agent_os_type_from(JsonObject *osinfo, char **os_name);
/* From a guest-info "return" object: fills can_exec, can_file, blocked, version. */
void sluice_guest_agent_info_from(JsonObject *guest_info, SluiceGuestAgentInfo *info);
/* A printable, single-line, bounded copy of text from the guest (for an
 * Error or a log line): sluice_printable (printable.h), the one rule. */
char *sluice_guest_agent_printable(const char *text, gsize len, gsize max_chars);

/* The most characters of an error message that quotes a guest. */
#define SLUICE_GUEST_AGENT_MESSAGE_MAX_CHARS 1000

/* Sets ERROR to FORMAT and its arguments, the whole message then made
 * printable and bounded as above (SLUICE_GUEST_AGENT_MESSAGE_MAX_CHARS).
 * Every error of guest-*.c is made here, so that a quote of the guest that
 * skipped sluice_guest_agent_printable still cannot put terminal escapes or
 * invalid UTF-8 into a share's Error (a D-Bus string must be UTF-8). */
void sluice_guest_agent_set_error(GError **error, GQuark domain, gint code, const char *format, ...)
        G_GNUC_PRINTF(4, 5);

/* The one wording of an agent error for a person: WHAT failed (a whole
 * sentence: "Mounting “docs” in “vm1” failed"), what libvirt or the guest
 * said (ERROR's message, quoted printable and bounded) and what to do for
 * ERROR's code.  DISABLED_ADVICE: what to do when the agent's policy
 * blocks the command (NULL: a general advice).  An ERROR of another domain
 * is quoted after WHAT.  A new string, printable and bounded. */
char *sluice_guest_agent_error_sentence(const GError *error, const char *what, const char *disabled_advice);

/* Whether ERROR says the agent is not there (any more) or hangs: what the
 * VM says of its agent is then out of date. */
gboolean sluice_guest_agent_error_is_gone(const GError *error);

G_END_DECLS
