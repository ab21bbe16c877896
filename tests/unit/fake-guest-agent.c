/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fake-guest-agent.c — a pretend guest behind virDomainQemuAgentCommand;
 * see fake-guest-agent.h. */
#include <string.h>

#include <json-glib/json-glib.h>
#include <libvirt/libvirt-qemu.h>
#include <libvirt/virterror.h>

#include "fake-guest-agent.h"

typedef struct {
        GByteArray *data;
        guint mode;
} FakeFile;

typedef struct {
        char *path;
        gsize pos;
} FakeHandle;

typedef struct {
        int code;
        GString *out;
        GString *err;
} FakeRun;

static struct {
        GHashTable *files;      /* path → FakeFile */
        GHashTable *handles;    /* handle → FakeHandle */
        GHashTable *runs;       /* pid → FakeRun */
        gint64 next_handle;
        gint64 next_pid;
        gssize space;
        char *fail_command;
        guint fail_nth;
        guint fail_seen;
        char *fail_message;
        GPtrArray *log;
        virError last_error;
        char *last_message;
} guest;

static void file_free(gpointer p)
{
        FakeFile *f = p;

        g_byte_array_unref(f->data);
        g_free(f);
}

static void handle_free(gpointer p)
{
        FakeHandle *h = p;

        g_free(h->path);
        g_free(h);
}

static void run_free(gpointer p)
{
        FakeRun *r = p;

        g_string_free(r->out, TRUE);
        g_string_free(r->err, TRUE);
        g_free(r);
}

void fake_guest_reset(void)
{
        g_clear_pointer(&guest.files, g_hash_table_unref);
        g_clear_pointer(&guest.handles, g_hash_table_unref);
        g_clear_pointer(&guest.runs, g_hash_table_unref);
        g_clear_pointer(&guest.fail_command, g_free);
        g_clear_pointer(&guest.fail_message, g_free);
        g_clear_pointer(&guest.log, g_ptr_array_unref);
        guest.files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, file_free);
        guest.handles = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, handle_free);
        guest.runs = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, run_free);
        guest.log = g_ptr_array_new_with_free_func(g_free);
        guest.next_handle = 1000;
        guest.next_pid = 4000;
        guest.space = -1;
        guest.fail_nth = guest.fail_seen = 0;
}

static FakeFile *file_get(const char *path)
{
        return guest.files != NULL ? g_hash_table_lookup(guest.files, path) : NULL;
}

static FakeFile *file_create(const char *path, guint mode)
{
        FakeFile *f = g_new0(FakeFile, 1);

        f->data = g_byte_array_new();
        f->mode = mode;
        g_hash_table_replace(guest.files, g_strdup(path), f);
        return f;
}

void fake_guest_put_file(const char *path, const char *data, gssize len, guint mode)
{
        FakeFile *f = file_create(path, mode);

        g_byte_array_append(f->data, (const guint8 *)data, len < 0 ? (guint)strlen(data) : (guint)len);
}

GBytes *fake_guest_get_file(const char *path, guint *mode)
{
        FakeFile *f = file_get(path);

        if (f == NULL)
                return NULL;
        if (mode != NULL)
                *mode = f->mode;
        return g_bytes_new(f->data->data, f->data->len);
}

void fake_guest_set_space(gssize bytes)
{
        guest.space = bytes;
}

void fake_guest_fail(const char *command, guint nth, const char *message)
{
        g_free(guest.fail_command);
        g_free(guest.fail_message);
        guest.fail_command = g_strdup(command);
        guest.fail_message = g_strdup(message);
        guest.fail_nth = nth;
        guest.fail_seen = 0;
}

gboolean fake_guest_saw(const char *line)
{
        for (guint i = 0; guest.log != NULL && i < guest.log->len; i++)
                if (strcmp(g_ptr_array_index(guest.log, i), line) == 0)
                        return TRUE;
        return FALSE;
}

/* What the guest's file system can still take. */
static gsize space_left(void)
{
        GHashTableIter it;
        gpointer value;
        gsize used = 0;

        if (guest.space < 0)
                return G_MAXSIZE;
        g_hash_table_iter_init(&it, guest.files);
        while (g_hash_table_iter_next(&it, NULL, &value))
                used += ((FakeFile *)value)->data->len;
        return (gsize)guest.space > used ? (gsize)guest.space - used : 0;
}

/* Writes DATA at POS of F as far as there is space; FALSE when not all of it fitted. */
static gboolean file_write(FakeFile *f, gsize pos, const guint8 *data, gsize len, gsize *written)
{
        gsize end = pos + len, grow = end > f->data->len ? end - f->data->len : 0, fits = len;

        if (grow > space_left())
                fits = len - (grow - space_left());
        if (pos + fits > f->data->len)
                g_byte_array_set_size(f->data, (guint)(pos + fits));
        memcpy(f->data->data + pos, data, fits);
        *written = fits;
        return fits == len;
}

/* The libvirt side of a failure: NULL, and MESSAGE as its last error. */
static char *libvirt_fails(const char *message)
{
        g_free(guest.last_message);
        guest.last_message = g_strdup(message);
        memset(&guest.last_error, 0, sizeof(guest.last_error));
        guest.last_error.code = VIR_ERR_INTERNAL_ERROR;
        guest.last_error.domain = VIR_FROM_QEMU;
        guest.last_error.level = VIR_ERR_ERROR;
        guest.last_error.message = guest.last_message;
        return NULL;
}

/* An agent's {"error": …} as libvirt reports it. */
static char *agent_error(const char *command, const char *desc)
{
        g_autofree char *message =
                g_strdup_printf("internal error: unable to execute QEMU agent command '%s': %s", command, desc);

        return libvirt_fails(message);
}

/* libvirt's last error: the fake's own, so that the service reads what a
 * failure above left (libvirt has no public call to set it). */
virErrorPtr virGetLastError(void)
{
        return guest.last_message != NULL ? &guest.last_error : NULL;
}

static char *reply(JsonBuilder *b)
{
        g_autoptr(JsonNode) root = json_builder_get_root(b);
        g_autoptr(JsonGenerator) gen = json_generator_new();

        json_generator_set_root(gen, root);
        return json_generator_to_data(gen, NULL);
}

static char *reply_int(gint64 value)
{
        g_autoptr(JsonBuilder) b = json_builder_new();

        json_builder_begin_object(b);
        json_builder_set_member_name(b, "return");
        json_builder_add_int_value(b, value);
        json_builder_end_object(b);
        return reply(b);
}

static char *reply_empty(void)
{
        return g_strdup("{\"return\":{}}");
}

static char *file_open(JsonObject *args)
{
        const char *path = json_object_get_string_member_with_default(args, "path", "");
        const char *mode = json_object_get_string_member_with_default(args, "mode", "r");
        FakeFile *f = file_get(path);
        FakeHandle *h;
        gint64 *key;

        if (strcmp(mode, "r") == 0 && f == NULL) {
                g_autofree char *desc = g_strdup_printf("failed to open file '%s' (mode: 'r'): No such file or directory",
                                                        path);
                return agent_error("guest-file-open", desc);
        }
        if (strcmp(mode, "w") == 0) {
                if (f == NULL)
                        f = file_create(path, 0600);    /* the strictest mode an agent may give a new file */
                g_byte_array_set_size(f->data, 0);
        }
        h = g_new0(FakeHandle, 1);
        h->path = g_strdup(path);
        key = g_new(gint64, 1);
        *key = guest.next_handle++;
        g_hash_table_insert(guest.handles, key, h);
        return reply_int(*key);
}

static FakeHandle *handle_of(JsonObject *args)
{
        gint64 key = json_object_get_int_member_with_default(args, "handle", -1);

        return g_hash_table_lookup(guest.handles, &key);
}

static char *file_read(JsonObject *args)
{
        FakeHandle *h = handle_of(args);
        gint64 count = json_object_get_int_member_with_default(args, "count", 4096);
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autofree char *b64 = NULL;
        FakeFile *f;
        gsize n;

        if (h == NULL || (f = file_get(h->path)) == NULL)
                return agent_error("guest-file-read", "handle not found");
        n = MIN((gsize)count, f->data->len - MIN(h->pos, f->data->len));
        b64 = g_base64_encode(f->data->data + h->pos, n);
        h->pos += n;
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "return");
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "count");
        json_builder_add_int_value(b, (gint64)n);
        json_builder_set_member_name(b, "buf-b64");
        json_builder_add_string_value(b, b64);
        json_builder_set_member_name(b, "eof");
        json_builder_add_boolean_value(b, h->pos >= f->data->len);
        json_builder_end_object(b);
        json_builder_end_object(b);
        return reply(b);
}

static char *file_write_cmd(JsonObject *args)
{
        FakeHandle *h = handle_of(args);
        const char *b64 = json_object_get_string_member_with_default(args, "buf-b64", "");
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autofree guchar *data = NULL;
        gsize len = 0, written = 0;
        FakeFile *f;

        if (h == NULL || (f = file_get(h->path)) == NULL)
                return agent_error("guest-file-write", "handle not found");
        data = g_base64_decode(b64, &len);
        if (!file_write(f, h->pos, data, len, &written)) {
                h->pos += written;
                return agent_error("guest-file-write", "failed to write to file: No space left on device");
        }
        h->pos += written;
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "return");
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "count");
        json_builder_add_int_value(b, (gint64)written);
        json_builder_set_member_name(b, "eof");
        json_builder_add_boolean_value(b, FALSE);
        json_builder_end_object(b);
        json_builder_end_object(b);
        return reply(b);
}

static char *file_close(JsonObject *args)
{
        gint64 key = json_object_get_int_member_with_default(args, "handle", -1);

        if (!g_hash_table_remove(guest.handles, &key))
                return agent_error("guest-file-close", "handle not found");
        return reply_empty();
}

/* ---- the programs ---- */

static int prog_cp(const char *const *a, int n, FakeRun *r)
{
        FakeFile *from, *to;
        gsize written = 0;

        if (n != 3 || strcmp(a[0], "-p") != 0) {
                g_string_append(r->err, "cp: unexpected arguments\n");
                return 1;
        }
        if ((from = file_get(a[1])) == NULL) {
                g_string_append_printf(r->err, "cp: cannot stat '%s': No such file or directory\n", a[1]);
                return 1;
        }
        {
                g_autoptr(GByteArray) copy = g_byte_array_sized_new(from->data->len);
                guint mode = from->mode;

                g_byte_array_append(copy, from->data->data, from->data->len);
                to = file_get(a[2]);
                if (to == NULL)
                        to = file_create(a[2], mode);
                g_byte_array_set_size(to->data, 0);
                to->mode = mode;
                if (!file_write(to, 0, copy->data, copy->len, &written)) {
                        g_string_append_printf(r->err, "cp: error writing '%s': No space left on device\n", a[2]);
                        return 1;
                }
        }
        return 0;
}

static int prog_mv(const char *const *a, int n, FakeRun *r)
{
        gpointer key, value;

        if (n != 3 || strcmp(a[0], "-f") != 0) {
                g_string_append(r->err, "mv: unexpected arguments\n");
                return 1;
        }
        if (!g_hash_table_steal_extended(guest.files, a[1], &key, &value)) {
                g_string_append_printf(r->err, "mv: cannot stat '%s': No such file or directory\n", a[1]);
                return 1;
        }
        g_free(key);
        g_hash_table_replace(guest.files, g_strdup(a[2]), value);
        return 0;
}

static int prog_rm(const char *const *a, int n, FakeRun *r)
{
        if (n != 2 || strcmp(a[0], "-f") != 0) {
                g_string_append(r->err, "rm: unexpected arguments\n");
                return 1;
        }
        g_hash_table_remove(guest.files, a[1]);
        return 0;
}

static int prog_readlink(const char *const *a, int n, FakeRun *r)
{
        if (n != 2 || strcmp(a[0], "-f") != 0) {
                g_string_append(r->err, "readlink: unexpected arguments\n");
                return 1;
        }
        g_string_append_printf(r->out, "%s\n", a[1]);   /* no links in this guest */
        return 0;
}

static int prog_chmod(const char *const *a, int n, FakeRun *r)
{
        FakeFile *f;

        if (n != 2 || (f = file_get(a[1])) == NULL) {
                g_string_append(r->err, "chmod: cannot access the file\n");
                return 1;
        }
        f->mode = (guint)g_ascii_strtoull(a[0], NULL, 8);
        return 0;
}

static const struct {
        const char *path;
        int (*run)(const char *const *args, int n, FakeRun *r);
} programs[] = {
        { "/bin/cp", prog_cp },
        { "/bin/mv", prog_mv },
        { "/bin/rm", prog_rm },
        { "/bin/readlink", prog_readlink },
        { "/bin/chmod", prog_chmod },
};

static char *exec_cmd(JsonObject *args)
{
        const char *path = json_object_get_string_member_with_default(args, "path", "");
        JsonArray *arg = json_object_has_member(args, "arg") ? json_object_get_array_member(args, "arg") : NULL;
        g_autoptr(GPtrArray) argv = g_ptr_array_new();
        FakeRun *r;
        gint64 *key;

        for (guint i = 0; arg != NULL && i < json_array_get_length(arg); i++)
                g_ptr_array_add(argv, (gpointer)json_array_get_string_element(arg, i));
        g_ptr_array_add(argv, NULL);
        for (gsize p = 0; p < G_N_ELEMENTS(programs); p++) {
                if (strcmp(path, programs[p].path) != 0)
                        continue;
                r = g_new0(FakeRun, 1);
                r->out = g_string_new(NULL);
                r->err = g_string_new(NULL);
                r->code = programs[p].run((const char *const *)argv->pdata, (int)argv->len - 1, r);
                key = g_new(gint64, 1);
                *key = guest.next_pid++;
                g_hash_table_insert(guest.runs, key, r);
                return g_strdup_printf("{\"return\":{\"pid\":%" G_GINT64_FORMAT "}}", *key);
        }
        {
                g_autofree char *desc = g_strdup_printf(
                        "Failed to execute child process “%s” (No such file or directory)", path);
                return agent_error("guest-exec", desc);
        }
}

static void add_b64(JsonBuilder *b, const char *name, const GString *s)
{
        g_autofree char *b64 = NULL;

        if (s->len == 0)
                return;
        b64 = g_base64_encode((const guchar *)s->str, s->len);
        json_builder_set_member_name(b, name);
        json_builder_add_string_value(b, b64);
}

static char *exec_status(JsonObject *args)
{
        gint64 pid = json_object_get_int_member_with_default(args, "pid", -1);
        FakeRun *r = g_hash_table_lookup(guest.runs, &pid);
        g_autoptr(JsonBuilder) b = json_builder_new();

        if (r == NULL)
                return agent_error("guest-exec-status", "Invalid parameter 'pid'");
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "return");
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "exited");
        json_builder_add_boolean_value(b, TRUE);
        json_builder_set_member_name(b, "exitcode");
        json_builder_add_int_value(b, r->code);
        add_b64(b, "out-data", r->out);
        add_b64(b, "err-data", r->err);
        json_builder_end_object(b);
        json_builder_end_object(b);
        return reply(b);
}

/* "guest-exec /bin/mv -f A B", "guest-file-open /etc/fstab w", "guest-file-write". */
static char *describe(const char *command, JsonObject *args)
{
        GString *line = g_string_new(command);

        if (strcmp(command, "guest-exec") == 0) {
                JsonArray *arg = json_object_has_member(args, "arg") ? json_object_get_array_member(args, "arg")
                                                                      : NULL;

                g_string_append_printf(line, " %s", json_object_get_string_member_with_default(args, "path", ""));
                for (guint i = 0; arg != NULL && i < json_array_get_length(arg); i++)
                        g_string_append_printf(line, " %s", json_array_get_string_element(arg, i));
        } else if (strcmp(command, "guest-file-open") == 0) {
                g_string_append_printf(line, " %s %s", json_object_get_string_member_with_default(args, "path", ""),
                                       json_object_get_string_member_with_default(args, "mode", "r"));
        }
        return g_string_free(line, FALSE);
}

char *virDomainQemuAgentCommand(virDomainPtr domain, const char *cmd, int timeout, unsigned int flags)
{
        g_autoptr(JsonParser) parser = json_parser_new();
        g_autoptr(JsonObject) empty = json_object_new();
        JsonObject *request, *args;
        const char *command;

        (void)domain;
        (void)timeout;
        (void)flags;
        if (guest.files == NULL)
                fake_guest_reset();
        g_assert_true(json_parser_load_from_data(parser, cmd, -1, NULL));
        request = json_node_get_object(json_parser_get_root(parser));
        command = json_object_get_string_member(request, "execute");
        args = json_object_has_member(request, "arguments") ? json_object_get_object_member(request, "arguments")
                                                             : empty;
        g_ptr_array_add(guest.log, describe(command, args));
        if (guest.fail_command != NULL && strcmp(command, guest.fail_command) == 0 &&
            (++guest.fail_seen == guest.fail_nth || guest.fail_nth == 0))
                return libvirt_fails(guest.fail_message);
        if (strcmp(command, "guest-file-open") == 0)
                return file_open(args);
        if (strcmp(command, "guest-file-read") == 0)
                return file_read(args);
        if (strcmp(command, "guest-file-write") == 0)
                return file_write_cmd(args);
        if (strcmp(command, "guest-file-close") == 0)
                return file_close(args);
        if (strcmp(command, "guest-exec") == 0)
                return exec_cmd(args);
        if (strcmp(command, "guest-exec-status") == 0)
                return exec_status(args);
        {
                g_autofree char *desc = g_strdup_printf("The command %s has not been found", command);

                return agent_error(command, desc);
        }
}
