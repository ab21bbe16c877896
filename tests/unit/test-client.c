/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-client.c — the client library (common/) every program speaks the API
 * through: each SLUICE_ERROR code crosses D-Bus as a name the API's XML
 * documents and comes back as the same code with the person's message alone,
 * and the state words cover every state the API names. */
#include "config.h"

#include <string.h>

#include <gio/gio.h>

#include "confinement-model.h"
#include "errors.h"
#include "guest-place.h"
#include "sluice-names.h"
#include "state-labels.h"
#include "wire-enums.h"

static char *api_xml(void)
{
        const char *top = g_getenv("SLUICE_SOURCE_ROOT");
        g_autofree char *path = g_build_filename(top != NULL ? top : "../..", "data",
                                                 "org.sluice.Sluice1.xml", NULL);
        g_autoptr(GError) error = NULL;
        char *xml = NULL;

        g_assert_true(g_file_get_contents(path, &xml, NULL, &error));
        g_assert_no_error(error);
        return xml;
}

/* A service's GError becomes a named D-Bus error the XML lists, and a client
 * gets the same code back with the sentence meant for the user. */
static void test_error_names(void)
{
        g_autofree char *xml = api_xml();

        for (int code = 0; code <= SLUICE_ERROR_FAILED; code++) {
                g_autoptr(GError) sent = g_error_new(SLUICE_ERROR, code, "What went wrong %d; what to do.",
                                                     code);
                g_autofree char *name = g_dbus_error_encode_gerror(sent);
                g_autofree char *listed = NULL;
                g_autoptr(GError) got = NULL;
                g_autofree char *message = NULL;

                g_assert_true(g_str_has_prefix(name, SLUICE_ERROR_NAME_PREFIX));
                /* documented in the API as ".Name" followed by a space */
                listed = g_strdup_printf("    .%s ", name + strlen(SLUICE_ERROR_NAME_PREFIX));
                if (strstr(xml, listed) == NULL)
                        g_error("%s (code %d) is not documented in data/org.sluice.Sluice1.xml", name, code);

                got = g_dbus_error_new_for_dbus_error(name, sent->message);
                g_assert_error(got, SLUICE_ERROR, code);
                g_assert_true(g_dbus_error_is_remote_error(got));
                message = sluice_error_dup_user_message(got);
                g_assert_cmpstr(message, ==, sent->message);
        }
}

/* A name another service version might send maps to no code of ours, and the
 * person still reads the message. */
static void test_error_unknown_name(void)
{
        g_autoptr(GError) got = g_dbus_error_new_for_dbus_error(SLUICE_ERROR_NAME_PREFIX "Newer",
                                                                "Something new went wrong.");
        g_autofree char *message = sluice_error_dup_user_message(got);

        g_assert_false(g_error_matches(got, SLUICE_ERROR, SLUICE_ERROR_FAILED));
        g_assert_cmpstr(message, ==, "Something new went wrong.");
}

/* Every Share.State the API names has a word of its own; a state this build
 * does not know is shown as it is rather than hidden. */
static void test_state_labels(void)
{
        static const char *const share_states[] = { "stopped", "starting", "running", "attached", "failed" };
        g_autofree char *xml = api_xml();
        g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);

        for (gsize i = 0; i < G_N_ELEMENTS(share_states); i++) {
                g_autofree char *quoted = g_strdup_printf("\"%s\" (", share_states[i]);
                const char *label = sluice_share_state_label(share_states[i]);

                /* the API documents it: State: "stopped" (no worker), ... */
                g_assert_nonnull(strstr(xml, quoted));

                g_assert_nonnull(label);
                g_assert_cmpstr(label, !=, "");
                g_assert_cmpstr(label, !=, share_states[i]);
                g_assert_false(g_hash_table_contains(seen, label));
                g_hash_table_add(seen, (gpointer)label);
        }
        g_assert_cmpstr(sluice_share_state_label("hibernating"), ==, "hibernating");
        g_assert_cmpstr(sluice_vm_state_label("shutoff"), !=, "shutoff");
        g_assert_cmpstr(sluice_vm_state_label("hibernating"), ==, "hibernating");
        /* the guest agent: a label for each word, distinct; the guest side:
         * what Sluice is doing there, nothing for "mounted" or "" (the
         * place, or nothing, is shown then) */
        g_assert_cmpstr(sluice_guest_agent_label("disconnected"), !=, "disconnected");
        g_assert_cmpstr(sluice_guest_agent_label("ready"), !=, sluice_guest_agent_label("restricted"));
        g_assert_cmpstr(sluice_guest_agent_label("hibernating"), ==, "hibernating");
        g_assert_cmpstr(sluice_guest_agent_label(NULL), ==, "");
        g_assert_cmpstr(sluice_guest_state_label("mounting"), !=, "");
        g_assert_cmpstr(sluice_guest_state_label("unmounting"), !=, sluice_guest_state_label("mounting"));
        g_assert_cmpstr(sluice_guest_state_label("failed"), !=, "");
        g_assert_cmpstr(sluice_guest_state_label("mounted"), ==, "");
        g_assert_cmpstr(sluice_guest_state_label(""), ==, "");
        g_assert_cmpstr(sluice_guest_state_label("teleporting"), ==, "teleporting");
}

/* Every state word round-trips through its enum and is one the API's XML
 * documents (quoted); a word this build does not know is refused and leaves
 * the result alone, and an out-of-range value never reads past a table. */
static void test_wire_enums(void)
{
        g_autofree char *xml = api_xml();
        SluiceWireShareState s = SLUICE_WIRE_SHARE_FAILED;
        SluiceWireGuestState g;
        SluiceWireGuestAgent a;
        SluiceWireVmState v;
        SluiceWireGuestOs o;
        SluiceWireEvent e;

#define CHECK_WORDS(prefix, last, var)                                                   \
        for (int i = 0; i <= (int)(last); i++) {                                          \
                const char *w = prefix##_name(i);                                         \
                g_autofree char *quoted = g_strdup_printf("\"%s\"", w);                    \
                                                                                          \
                g_assert_nonnull(strstr(xml, quoted));                                    \
                g_assert_true(prefix##_parse(w, &var));                                   \
                g_assert_cmpint(var, ==, i);                                              \
                g_assert_true(prefix##_is(w, i));                                         \
        }
        CHECK_WORDS(sluice_wire_share_state, SLUICE_WIRE_SHARE_FAILED, s)
        CHECK_WORDS(sluice_wire_guest_state, SLUICE_WIRE_GUEST_FAILED, g)
        CHECK_WORDS(sluice_wire_guest_agent, SLUICE_WIRE_AGENT_RESTRICTED, a)
        CHECK_WORDS(sluice_wire_vm_state, SLUICE_WIRE_VM_OTHER, v)
        CHECK_WORDS(sluice_wire_guest_os, SLUICE_WIRE_GUEST_OS_WINDOWS, o)
        CHECK_WORDS(sluice_wire_event, SLUICE_WIRE_EVENT_RESUMED, e)
#undef CHECK_WORDS

        g_assert_cmpstr(sluice_wire_guest_state_name(SLUICE_WIRE_GUEST_MOUNTED), ==, "mounted");
        g_assert_cmpstr(sluice_wire_guest_state_name(SLUICE_WIRE_GUEST_IDLE), ==, "");
        s = SLUICE_WIRE_SHARE_FAILED;
        g_assert_false(sluice_wire_share_state_parse("hibernating", &s));
        g_assert_false(sluice_wire_share_state_parse(NULL, &s));
        g_assert_false(sluice_wire_share_state_parse("Running", &s));
        g_assert_cmpint(s, ==, SLUICE_WIRE_SHARE_FAILED);
        g_assert_false(sluice_wire_guest_state_is(NULL, SLUICE_WIRE_GUEST_IDLE));
        g_assert_false(sluice_wire_guest_agent_is("ready ", SLUICE_WIRE_AGENT_READY));
        g_assert_cmpstr(sluice_wire_vm_state_name((SluiceWireVmState)77), ==, "running");
}

/* A drive is a letter and a colon, nothing more; anything else is a path. */
/* Vm.Confinement's words and the enum, both ways; a newer service's word is refused. */
static void test_confinement_model(void)
{
        static const SluiceConfinementModel models[] = {
                SLUICE_CONFINEMENT_MODEL_NONE, SLUICE_CONFINEMENT_MODEL_APPARMOR, SLUICE_CONFINEMENT_MODEL_SELINUX,
        };
        SluiceConfinementModel model = SLUICE_CONFINEMENT_MODEL_SELINUX;

        for (gsize i = 0; i < G_N_ELEMENTS(models); i++) {
                SluiceConfinementModel back;

                g_assert_true(sluice_confinement_model_from_wire(sluice_confinement_model_to_wire(models[i]), &back));
                g_assert_cmpint(back, ==, models[i]);
        }
        g_assert_cmpstr(sluice_confinement_model_to_wire(SLUICE_CONFINEMENT_MODEL_APPARMOR), ==, "apparmor");
        g_assert_cmpstr(sluice_confinement_model_label(SLUICE_CONFINEMENT_MODEL_SELINUX), ==, "SELinux");
        g_assert_false(sluice_confinement_model_from_wire("smack", &model));
        g_assert_false(sluice_confinement_model_from_wire(NULL, &model));
        g_assert_cmpint(model, ==, SLUICE_CONFINEMENT_MODEL_SELINUX);
}

static void test_guest_place(void)
{
        g_autofree char *drive = sluice_guest_place_sentence("Dropbox", "Z:", "win11");
        g_autofree char *path = sluice_guest_place_sentence("docs", "/mnt/docs", "debian");

        g_assert_true(sluice_guest_place_is_drive("Z:"));
        g_assert_true(sluice_guest_place_is_drive("d:"));
        g_assert_false(sluice_guest_place_is_drive("/mnt/z:"));
        g_assert_false(sluice_guest_place_is_drive("Z:\\share"));
        g_assert_false(sluice_guest_place_is_drive("1:"));
        g_assert_false(sluice_guest_place_is_drive(""));
        g_assert_cmpstr(drive, ==, "“Dropbox” is drive Z: in win11");
        g_assert_cmpstr(path, ==, "“docs” is at /mnt/docs in debian");
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/client/error-names", test_error_names);
        g_test_add_func("/client/error-unknown-name", test_error_unknown_name);
        g_test_add_func("/client/state-labels", test_state_labels);
        g_test_add_func("/client/wire-enums", test_wire_enums);
        g_test_add_func("/client/guest-place", test_guest_place);
        g_test_add_func("/client/confinement-model", test_confinement_model);
        return g_test_run();
}
