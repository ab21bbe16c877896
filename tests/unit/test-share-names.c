/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-share-names.c — Share.Names/Case resolved by the VM's OS
 * (service/share-names.c) into what the worker serves. */
#include "config.h"

#include <glib.h>

#include "share-names.h"

static void check(const char *names, const char *case_, gboolean windows, SluiceWireNames want_names,
                  SluiceWireCase want_case)
{
        SluiceShareServed served = sluice_share_names_resolve(names, case_, windows);

        g_assert_cmpstr(sluice_wire_names_name(served.names), ==, sluice_wire_names_name(want_names));
        g_assert_cmpstr(sluice_wire_case_name(served.case_), ==, sluice_wire_case_name(want_case));
}

/* "" follows the OS: a Windows guest gets WinFsp's names and no case */
static void test_default_follows_os(void)
{
        check("", "", TRUE, SLUICE_WIRE_NAMES_WINDOWS, SLUICE_WIRE_CASE_INSENSITIVE);
        check("", "", FALSE, SLUICE_WIRE_NAMES_POSIX, SLUICE_WIRE_CASE_SENSITIVE);
        check(NULL, NULL, TRUE, SLUICE_WIRE_NAMES_WINDOWS, SLUICE_WIRE_CASE_INSENSITIVE);
}

/* the person's choice wins, each setting on its own */
static void test_choice_wins(void)
{
        check("posix", "", TRUE, SLUICE_WIRE_NAMES_POSIX, SLUICE_WIRE_CASE_INSENSITIVE);
        check("", "sensitive", TRUE, SLUICE_WIRE_NAMES_WINDOWS, SLUICE_WIRE_CASE_SENSITIVE);
        check("windows", "insensitive", FALSE, SLUICE_WIRE_NAMES_WINDOWS, SLUICE_WIRE_CASE_INSENSITIVE);
        check("windows", "", FALSE, SLUICE_WIRE_NAMES_WINDOWS, SLUICE_WIRE_CASE_SENSITIVE);
}

/* a word nobody knows (a hand-edited file that slipped through) is the default, never served as is */
static void test_unknown_is_default(void)
{
        check("Windows", "yes", TRUE, SLUICE_WIRE_NAMES_WINDOWS, SLUICE_WIRE_CASE_INSENSITIVE);
        check("dos", "INSENSITIVE", FALSE, SLUICE_WIRE_NAMES_POSIX, SLUICE_WIRE_CASE_SENSITIVE);
}

/* the words on the wire, both ways */
static void test_words(void)
{
        SluiceWireNames n;
        SluiceWireCase c;

        g_assert_true(sluice_wire_names_parse("", &n) && n == SLUICE_WIRE_NAMES_DEFAULT);
        g_assert_true(sluice_wire_names_parse("windows", &n) && n == SLUICE_WIRE_NAMES_WINDOWS);
        g_assert_false(sluice_wire_names_parse("win", &n));
        g_assert_true(sluice_wire_case_parse("insensitive", &c) && c == SLUICE_WIRE_CASE_INSENSITIVE);
        g_assert_false(sluice_wire_case_parse(NULL, &c));
        g_assert_cmpstr(sluice_wire_event_name(SLUICE_WIRE_EVENT_LETTER_CHANGED), ==, "letter-changed");
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        g_test_add_func("/share-names/default-follows-os", test_default_follows_os);
        g_test_add_func("/share-names/choice-wins", test_choice_wins);
        g_test_add_func("/share-names/unknown-is-default", test_unknown_is_default);
        g_test_add_func("/share-names/words", test_words);
        return g_test_run();
}
