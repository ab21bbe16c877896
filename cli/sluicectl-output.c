/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sluicectl-output.c — what sluicectl prints: JSON documents for scripts
 * (--json) and aligned tables for people. */
#include "config.h"

#include <string.h>

#include <glib/gi18n.h>

#include "sluicectl.h"

void ctl_print_json(JsonNode *node)
{
        g_autoptr(JsonGenerator) generator = json_generator_new();
        g_autofree char *text = NULL;

        json_generator_set_root(generator, node);
        json_generator_set_pretty(generator, FALSE);
        text = json_generator_to_data(generator, NULL);
        g_print("%s\n", text);
}

JsonNode *ctl_share_to_json(SluiceShare *share)
{
        g_autoptr(JsonBuilder) b = json_builder_new();

        json_builder_begin_object(b);
        json_builder_set_member_name(b, "id");
        json_builder_add_string_value(b, ctl_share_id(share));
        json_builder_set_member_name(b, "object_path");
        json_builder_add_string_value(b, g_dbus_proxy_get_object_path(G_DBUS_PROXY(share)));
#define STRING_MEMBER(name, getter)                                     \
        json_builder_set_member_name(b, name);                          \
        json_builder_add_string_value(b, getter(share) ?: "")
        STRING_MEMBER("path", sluice_share_get_path);
        STRING_MEMBER("tag", sluice_share_get_tag);
        STRING_MEMBER("vm", sluice_share_get_vm);
        STRING_MEMBER("state", sluice_share_get_state);
        STRING_MEMBER("error", sluice_share_get_error);
        STRING_MEMBER("socket_path", sluice_share_get_socket_path);
        STRING_MEMBER("guest_hint", sluice_share_get_guest_hint);
        STRING_MEMBER("guest_path", sluice_share_get_guest_path);
        STRING_MEMBER("guest_state", sluice_share_get_guest_state);
        STRING_MEMBER("mount_point", sluice_share_get_mount_point);
        STRING_MEMBER("names", sluice_share_get_names);
        STRING_MEMBER("case", sluice_share_get_case);
        STRING_MEMBER("served_names", sluice_share_get_served_names);
        STRING_MEMBER("served_case", sluice_share_get_served_case);
#undef STRING_MEMBER
        json_builder_set_member_name(b, "read_only");
        json_builder_add_boolean_value(b, sluice_share_get_read_only(share));
        json_builder_set_member_name(b, "autostart");
        json_builder_add_boolean_value(b, sluice_share_get_autostart(share));
        json_builder_set_member_name(b, "auto_mount");
        json_builder_add_boolean_value(b, sluice_share_get_auto_mount(share));
        json_builder_set_member_name(b, "mount_at_boot");
        json_builder_add_boolean_value(b, sluice_share_get_mount_at_boot(share));
        json_builder_end_object(b);
        return json_builder_get_root(b);
}

void ctl_print_share_json(SluiceShare *share)
{
        g_autoptr(JsonNode) node = ctl_share_to_json(share);

        ctl_print_json(node);
}

int ctl_print_done(Ctl *ctl, SluiceShare *share, const char *hint)
{
        if (ctl->json) {
                g_autoptr(JsonBuilder) b = json_builder_new();
                g_autoptr(JsonNode) root = NULL;

                json_builder_begin_object(b);
                json_builder_set_member_name(b, "object_path");
                json_builder_add_string_value(b, g_dbus_proxy_get_object_path(G_DBUS_PROXY(share)));
                json_builder_set_member_name(b, "tag");
                json_builder_add_string_value(b, sluice_share_get_tag(share));
                if (hint != NULL) {
                        json_builder_set_member_name(b, "guest_hint");
                        json_builder_add_string_value(b, hint);
                        json_builder_set_member_name(b, "guest_path");
                        json_builder_add_string_value(b, sluice_share_get_guest_path(share) ?: "");
                }
                json_builder_set_member_name(b, "ok");
                json_builder_add_boolean_value(b, TRUE);
                json_builder_end_object(b);
                root = json_builder_get_root(b);
                ctl_print_json(root);
        } else if (hint != NULL) {
                g_print("%s\n", hint);
        }
        return EXIT_OK;
}

/* remove, stop, attach, detach: SHARE is the only argument. */

/* Terminal columns @text takes: CJK wide characters two, combining marks
 * and other zero-width characters none (bytes and characters both lie). */
static gsize text_width(const char *text)
{
        gsize width = 0;

        for (const char *p = text; *p != '\0'; p = g_utf8_next_char(p)) {
                gunichar c = g_utf8_get_char(p);

                if (!g_unichar_iszerowidth(c))
                        width += g_unichar_iswide(c) ? 2 : 1;
        }
        return width;
}

char *ctl_printable(const char *text)
{
        g_autofree char *valid = g_utf8_make_valid(text != NULL ? text : "", -1);
        GString *cell = g_string_sized_new(strlen(valid));

        for (const char *p = valid; *p != '\0'; p = g_utf8_next_char(p)) {
                gunichar c = g_utf8_get_char(p);

                g_string_append_unichar(cell, g_unichar_iscntrl(c) ? 0xFFFD : c);
        }
        return g_string_free(cell, FALSE);
}

typedef struct {
        char **cells;   /* table->columns of them */
        GPtrArray *notes; /* lines of their own under the row (char *) */
} TableRow;

struct _CtlTable {
        guint columns;
        GPtrArray *rows;        /* of TableRow; the first is the header */
};

static void table_row_free(gpointer data)
{
        TableRow *row = data;

        g_strfreev(row->cells);
        g_ptr_array_unref(row->notes);
        g_free(row);
}

static void table_add_valist(CtlTable *table, const char *note, va_list args)
{
        TableRow *row = g_new0(TableRow, 1);

        row->cells = g_new0(char *, table->columns + 1);
        for (guint c = 0; c < table->columns; c++)
                row->cells[c] = ctl_printable(va_arg(args, const char *));
        row->notes = g_ptr_array_new_with_free_func(g_free);
        g_ptr_array_add(table->rows, row);
        ctl_table_add_note(table, note);
}

void ctl_table_add_note(CtlTable *table, const char *note)
{
        TableRow *row = g_ptr_array_index(table->rows, table->rows->len - 1);

        if (note != NULL && *note != '\0')
                g_ptr_array_add(row->notes, ctl_printable(note));
}

void ctl_table_add(CtlTable *table, const char *note, ...)
{
        va_list args;

        va_start(args, note);
        table_add_valist(table, note, args);
        va_end(args);
}

CtlTable *ctl_table_new(guint columns, ...)
{
        CtlTable *table = g_new0(CtlTable, 1);
        va_list args;

        table->columns = columns;
        table->rows = g_ptr_array_new_with_free_func(table_row_free);
        va_start(args, columns);
        table_add_valist(table, NULL, args);
        va_end(args);
        return table;
}

void ctl_table_free(CtlTable *table)
{
        g_ptr_array_unref(table->rows);
        g_free(table);
}
void ctl_table_print(CtlTable *table)
{
        g_autofree gsize *widths = g_new0(gsize, table->columns);
        g_autoptr(GString) line = g_string_new(NULL);

        for (guint r = 0; r < table->rows->len; r++) {
                TableRow *row = g_ptr_array_index(table->rows, r);

                for (guint c = 0; c < table->columns; c++)
                        widths[c] = MAX(widths[c], text_width(row->cells[c]));
        }
        for (guint r = 0; r < table->rows->len; r++) {
                TableRow *row = g_ptr_array_index(table->rows, r);

                g_string_truncate(line, 0);
                for (guint c = 0; c < table->columns; c++) {
                        g_string_append(line, row->cells[c]);
                        if (c + 1 == table->columns)
                                break;
                        for (gsize w = text_width(row->cells[c]); w <= widths[c]; w++)
                                g_string_append_c(line, ' ');
                }
                g_print("%s\n", line->str);
                /* Notes start under the second column. */
                for (guint n = 0; n < row->notes->len; n++)
                        g_print("%*s%s\n", (int)widths[0] + 1, "", (const char *)row->notes->pdata[n]);
        }
}
