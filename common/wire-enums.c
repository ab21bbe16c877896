/* SPDX-License-Identifier: GPL-2.0-or-later */
/* wire-enums.c — see wire-enums.h.  Each table is indexed by its enum, so a
 * value added to an enum without its word fails the static assertions. */
#include "config.h"

#include <string.h>

#include "wire-enums.h"

static const char *const share_state_words[] = {
        [SLUICE_WIRE_SHARE_STOPPED] = "stopped",
        [SLUICE_WIRE_SHARE_STARTING] = "starting",
        [SLUICE_WIRE_SHARE_RUNNING] = "running",
        [SLUICE_WIRE_SHARE_ATTACHED] = "attached",
        [SLUICE_WIRE_SHARE_FAILED] = "failed",
};
G_STATIC_ASSERT(G_N_ELEMENTS(share_state_words) == SLUICE_WIRE_SHARE_FAILED + 1);

static const char *const guest_state_words[] = {
        [SLUICE_WIRE_GUEST_IDLE] = "",
        [SLUICE_WIRE_GUEST_MOUNTING] = "mounting",
        [SLUICE_WIRE_GUEST_MOUNTED] = "mounted",
        [SLUICE_WIRE_GUEST_UNMOUNTING] = "unmounting",
        [SLUICE_WIRE_GUEST_FAILED] = "failed",
};
G_STATIC_ASSERT(G_N_ELEMENTS(guest_state_words) == SLUICE_WIRE_GUEST_FAILED + 1);

static const char *const guest_agent_words[] = {
        [SLUICE_WIRE_AGENT_NONE] = "none",
        [SLUICE_WIRE_AGENT_DISCONNECTED] = "disconnected",
        [SLUICE_WIRE_AGENT_READY] = "ready",
        [SLUICE_WIRE_AGENT_RESTRICTED] = "restricted",
};
G_STATIC_ASSERT(G_N_ELEMENTS(guest_agent_words) == SLUICE_WIRE_AGENT_RESTRICTED + 1);

static const char *const vm_state_words[] = {
        [SLUICE_WIRE_VM_RUNNING] = "running",
        [SLUICE_WIRE_VM_PAUSED] = "paused",
        [SLUICE_WIRE_VM_SHUTOFF] = "shutoff",
        [SLUICE_WIRE_VM_CRASHED] = "crashed",
        [SLUICE_WIRE_VM_OTHER] = "other",
};
G_STATIC_ASSERT(G_N_ELEMENTS(vm_state_words) == SLUICE_WIRE_VM_OTHER + 1);

static const char *const guest_os_words[] = {
        [SLUICE_WIRE_GUEST_OS_UNKNOWN] = "",
        [SLUICE_WIRE_GUEST_OS_LINUX] = "linux",
        [SLUICE_WIRE_GUEST_OS_WINDOWS] = "windows",
};
G_STATIC_ASSERT(G_N_ELEMENTS(guest_os_words) == SLUICE_WIRE_GUEST_OS_WINDOWS + 1);

static const char *const event_words[] = {
        [SLUICE_WIRE_EVENT_ATTACHED] = "attached",
        [SLUICE_WIRE_EVENT_DETACHED] = "detached",
        [SLUICE_WIRE_EVENT_CRASHED] = "crashed",
        [SLUICE_WIRE_EVENT_RECOVERED] = "recovered",
        [SLUICE_WIRE_EVENT_FAILED] = "failed",
        [SLUICE_WIRE_EVENT_RESUMED] = "resumed",
        [SLUICE_WIRE_EVENT_LETTER_CHANGED] = "letter-changed",
};
G_STATIC_ASSERT(G_N_ELEMENTS(event_words) == SLUICE_WIRE_EVENT_LETTER_CHANGED + 1);

static const char *const names_words[] = {
        [SLUICE_WIRE_NAMES_DEFAULT] = "",
        [SLUICE_WIRE_NAMES_POSIX] = "posix",
        [SLUICE_WIRE_NAMES_WINDOWS] = "windows",
};
G_STATIC_ASSERT(G_N_ELEMENTS(names_words) == SLUICE_WIRE_NAMES_WINDOWS + 1);

static const char *const case_words[] = {
        [SLUICE_WIRE_CASE_DEFAULT] = "",
        [SLUICE_WIRE_CASE_SENSITIVE] = "sensitive",
        [SLUICE_WIRE_CASE_INSENSITIVE] = "insensitive",
};
G_STATIC_ASSERT(G_N_ELEMENTS(case_words) == SLUICE_WIRE_CASE_INSENSITIVE + 1);

/* The word at INDEX, or the table's first (its "nothing known") for an
 * index out of range: a caller's bad cast never reads past the table. */
static const char *word_at(const char *const *words, guint n_words, guint index)
{
        return index < n_words ? words[index] : words[0];
}

static gboolean word_index(const char *const *words, guint n_words, const char *word, guint *ret)
{
        if (word == NULL)
                return FALSE;
        for (guint i = 0; i < n_words; i++)
                if (strcmp(word, words[i]) == 0) {
                        *ret = i;
                        return TRUE;
                }
        return FALSE;
}

#define WIRE_ENUM_FUNCS(prefix, Type, words)                                              \
        const char *prefix##_name(Type value)                                             \
        {                                                                                 \
                return word_at(words, G_N_ELEMENTS(words), (guint)value);                  \
        }                                                                                 \
        gboolean prefix##_parse(const char *word, Type *ret)                              \
        {                                                                                 \
                guint i;                                                                  \
                                                                                          \
                if (!word_index(words, G_N_ELEMENTS(words), word, &i))                    \
                        return FALSE;                                                     \
                *ret = (Type)i;                                                           \
                return TRUE;                                                              \
        }                                                                                 \
        gboolean prefix##_is(const char *word, Type value)                                \
        {                                                                                 \
                Type parsed;                                                              \
                                                                                          \
                return prefix##_parse(word, &parsed) && parsed == value;                  \
        }

WIRE_ENUM_FUNCS(sluice_wire_share_state, SluiceWireShareState, share_state_words)
WIRE_ENUM_FUNCS(sluice_wire_guest_state, SluiceWireGuestState, guest_state_words)
WIRE_ENUM_FUNCS(sluice_wire_guest_agent, SluiceWireGuestAgent, guest_agent_words)
WIRE_ENUM_FUNCS(sluice_wire_vm_state, SluiceWireVmState, vm_state_words)
WIRE_ENUM_FUNCS(sluice_wire_guest_os, SluiceWireGuestOs, guest_os_words)
WIRE_ENUM_FUNCS(sluice_wire_event, SluiceWireEvent, event_words)
WIRE_ENUM_FUNCS(sluice_wire_names, SluiceWireNames, names_words)
WIRE_ENUM_FUNCS(sluice_wire_case, SluiceWireCase, case_words)
