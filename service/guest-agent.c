/* SPDX-License-Identifier: GPL-2.0-or-later */
/* guest-agent.c — commands to the QEMU guest agent; see guest-agent.h. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include <glib/gi18n.h>
#include <libvirt/libvirt-qemu.h>
#include <libvirt/virterror.h>

#include "guest-agent.h"
#include "printable.h"

G_DEFINE_QUARK(sluice-guest-agent-error-quark, sluice_guest_agent_error)

/* guest-exec-status is asked again after this long while the program runs */
#define EXEC_POLL_US (50 * 1000)
/* one guest-file-read asks for this much (qemu-ga's limit is 48 MiB) */
#define FILE_CHUNK (64 * 1024)

/* The calling thread's operation deadline (monotonic µs), 0 when none:
 * each operation runs in a thread of its own (vm-guest.c). */
static _Thread_local gint64 operation_deadline;

void sluice_guest_agent_set_deadline(int seconds)
{
        operation_deadline = seconds > 0 ? g_get_monotonic_time() + (gint64)seconds * G_USEC_PER_SEC : 0;
}

/* TIMEOUT_S cut to what the thread's deadline leaves (at least 1 s), or
 * 0 with ERROR set when it has passed. */
static int time_left(const char *command, int timeout_s, GError **error)
{
        gint64 left;

        if (operation_deadline == 0)
                return timeout_s;
        left = operation_deadline - g_get_monotonic_time();
        if (left <= 0) {
                g_set_error(error, SLUICE_GUEST_AGENT_ERROR, SLUICE_GUEST_AGENT_ERROR_TIMEOUT,
                            _("%s: the guest did not answer within the %d s this operation may take"), command,
                            SLUICE_GUEST_OPERATION_TIMEOUT_S);
                return 0;
        }
        return (int)MIN((gint64)timeout_s, MAX((left + G_USEC_PER_SEC - 1) / G_USEC_PER_SEC, 1));
}

void sluice_guest_exec_clear(SluiceGuestExec *result)
{
        g_clear_pointer(&result->out, g_free);
        g_clear_pointer(&result->err, g_free);
        result->out_len = result->err_len = 0;
}

void sluice_guest_agent_info_clear(SluiceGuestAgentInfo *info)
{
        g_clear_pointer(&info->os_name, g_free);
        g_clear_pointer(&info->version, g_free);
        g_clear_pointer(&info->blocked, g_free);
}

char *sluice_guest_agent_printable(const char *text, gsize len, gsize max_chars)
{
        return sluice_printable(text, text != NULL ? (gssize)len : 0, max_chars);
}

/* The most of libvirt's or the guest's words an agent error's sentence quotes. */
#define SENTENCE_QUOTE_MAX_CHARS 300

char *sluice_guest_agent_error_sentence(const GError *error, const char *what, const char *disabled_advice)
{
        g_autofree char *said = sluice_printable(error->message, -1, SENTENCE_QUOTE_MAX_CHARS);
        g_autofree char *message = NULL;

        if (error->domain != SLUICE_GUEST_AGENT_ERROR)
                /* TRANSLATORS: what failed ("Mounting “docs” in “vm1” failed"), then why */
                message = g_strdup_printf(_("%s: %s"), what, said);
        else switch ((SluiceGuestAgentError)error->code) {
        case SLUICE_GUEST_AGENT_ERROR_DISABLED:
                if (disabled_advice != NULL)
                        /* TRANSLATORS: what failed, what libvirt said, then what to do */
                        message = g_strdup_printf(_("%s: the guest agent refused (%s). %s"), what, said,
                                                  disabled_advice);
                else
                        /* TRANSLATORS: what failed, then what libvirt said */
                        message = g_strdup_printf(_("%s: the guest agent's policy refuses the command (%s). Allow "
                                                    "guest-exec, guest-exec-status and the guest-file commands in "
                                                    "the guest, then restart qemu-guest-agent."),
                                                  what, said);
                break;
        case SLUICE_GUEST_AGENT_ERROR_TIMEOUT:
                /* TRANSLATORS: what failed, then what libvirt said */
                message = g_strdup_printf(_("%s: the guest agent did not answer in time (%s). The guest may be "
                                            "busy; try again, or restart qemu-guest-agent in the guest."),
                                          what, said);
                break;
        case SLUICE_GUEST_AGENT_ERROR_NOT_CONFIGURED:
                /* TRANSLATORS: what failed, then what libvirt said */
                message = g_strdup_printf(_("%s: the VM has no guest agent channel (%s). Enable the guest agent "
                                            "for this VM and restart it."),
                                          what, said);
                break;
        case SLUICE_GUEST_AGENT_ERROR_NOT_CONNECTED:
                /* TRANSLATORS: what failed, then what libvirt said */
                message = g_strdup_printf(_("%s: the guest agent does not answer (%s). Check that "
                                            "qemu-guest-agent runs in the guest."),
                                          what, said);
                break;
        case SLUICE_GUEST_AGENT_ERROR_PROTOCOL:
                /* TRANSLATORS: what failed, then what was wrong with the answer */
                message = g_strdup_printf(_("%s: the guest agent's answer was not usable (%s)."), what, said);
                break;
        case SLUICE_GUEST_AGENT_ERROR_FAILED:
        default:
                /* TRANSLATORS: what failed, then what the guest said */
                message = g_strdup_printf(_("%s: the guest said: %s"), what, said);
                break;
        }
        return sluice_printable(message, -1, SLUICE_GUEST_AGENT_MESSAGE_MAX_CHARS);
}

gboolean sluice_guest_agent_error_is_gone(const GError *error)
{
        return g_error_matches(error, SLUICE_GUEST_AGENT_ERROR, SLUICE_GUEST_AGENT_ERROR_NOT_CONNECTED) ||
               g_error_matches(error, SLUICE_GUEST_AGENT_ERROR, SLUICE_GUEST_AGENT_ERROR_TIMEOUT);
}

void sluice_guest_agent_set_error(GError **error, GQuark domain, gint code, const char *format, ...)
{
        g_autofree char *raw = NULL;
        g_autofree char *message = NULL;
        va_list args;

        if (error == NULL)
                return;
        va_start(args, format);
        raw = g_strdup_vprintf(format, args);
        va_end(args);
        message = sluice_guest_agent_printable(raw, strlen(raw), SLUICE_GUEST_AGENT_MESSAGE_MAX_CHARS);
        g_set_error_literal(error, domain, code, message);
}

/* libvirt's last error as ours: which kind decides what Sluice tells the user. */
static void set_error_from_libvirt(GError **error, const char *command)
{
        virErrorPtr e = virGetLastError();
        const char *message = e != NULL && e->message != NULL ? e->message : _("unknown error");
        int code = e != NULL ? e->code : VIR_ERR_INTERNAL_ERROR;
        SluiceGuestAgentError kind = SLUICE_GUEST_AGENT_ERROR_FAILED;

        if (code == VIR_ERR_ARGUMENT_UNSUPPORTED || strstr(message, "not configured") != NULL)
                kind = SLUICE_GUEST_AGENT_ERROR_NOT_CONFIGURED;
        else if (strstr(message, "has been disabled") != NULL || strstr(message, "CommandNotFound") != NULL ||
                 strstr(message, "command not found") != NULL || strstr(message, "not supported") != NULL)
                kind = SLUICE_GUEST_AGENT_ERROR_DISABLED;
        else if (strstr(message, "didn't respond") != NULL || strstr(message, "timed out") != NULL ||
                 strstr(message, "Timed out") != NULL)
                kind = SLUICE_GUEST_AGENT_ERROR_TIMEOUT;
        else if (code == VIR_ERR_AGENT_UNRESPONSIVE || code == VIR_ERR_AGENT_UNSYNCED ||
                 code == VIR_ERR_OPERATION_INVALID)
                kind = SLUICE_GUEST_AGENT_ERROR_NOT_CONNECTED;
        /* libvirt's message repeats the agent's "desc" as the guest wrote it */
        sluice_guest_agent_set_error(error, SLUICE_GUEST_AGENT_ERROR, kind, "%s: %s", command, message);
}

JsonNode *sluice_guest_agent_call(virDomainPtr domain, const char *command, JsonObject *arguments,
                                  int timeout_s, GError **error)
{
        g_autoptr(JsonBuilder) b = json_builder_new();
        g_autoptr(JsonNode) request = NULL;
        g_autoptr(JsonParser) parser = json_parser_new();
        g_autofree char *text = NULL;
        g_autofree char *reply = NULL;
        JsonNode *root;
        JsonObject *object;
        JsonNode *value;

        timeout_s = time_left(command, timeout_s, error);
        if (timeout_s == 0)
                return NULL;
        json_builder_begin_object(b);
        json_builder_set_member_name(b, "execute");
        json_builder_add_string_value(b, command);
        if (arguments != NULL) {
                json_builder_set_member_name(b, "arguments");
                json_builder_add_value(b, json_node_init_object(json_node_alloc(), arguments));
        }
        json_builder_end_object(b);
        request = json_builder_get_root(b);
        text = json_to_string(request, FALSE);

        reply = virDomainQemuAgentCommand(domain, text, timeout_s, 0);
        if (reply == NULL) {
                set_error_from_libvirt(error, command);
                return NULL;
        }
        if (!json_parser_load_from_data(parser, reply, -1, NULL) ||
            (root = json_parser_get_root(parser)) == NULL || !JSON_NODE_HOLDS_OBJECT(root)) {
                g_set_error(error, SLUICE_GUEST_AGENT_ERROR, SLUICE_GUEST_AGENT_ERROR_PROTOCOL,
                            _("%s: the guest agent's reply is not a JSON object"), command);
                return NULL;
        }
        object = json_node_get_object(root);
        if (json_object_has_member(object, "error")) {
                JsonNode *e = json_object_get_member(object, "error");
                const char *desc = JSON_NODE_HOLDS_OBJECT(e)
                        ? json_object_get_string_member_with_default(json_node_get_object(e), "desc", NULL)
                        : NULL;
                g_autofree char *said = sluice_guest_agent_printable(desc, desc != NULL ? strlen(desc) : 0, 200);

                sluice_guest_agent_set_error(error, SLUICE_GUEST_AGENT_ERROR,
                                             desc != NULL && strstr(desc, "has been disabled") != NULL
                                                     ? SLUICE_GUEST_AGENT_ERROR_DISABLED
                                                     : SLUICE_GUEST_AGENT_ERROR_FAILED,
                                             "%s: %s", command, said);
                return NULL;
        }
        value = json_object_get_member(object, "return");
        if (value == NULL) {
                g_set_error(error, SLUICE_GUEST_AGENT_ERROR, SLUICE_GUEST_AGENT_ERROR_PROTOCOL,
                            _("%s: the guest agent's reply has no result"), command);
                return NULL;
        }
        return json_node_copy(value);
}

static JsonObject *return_object(JsonNode *node, const char *command, GError **error)
{
        if (node == NULL || !JSON_NODE_HOLDS_OBJECT(node)) {
                g_set_error(error, SLUICE_GUEST_AGENT_ERROR, SLUICE_GUEST_AGENT_ERROR_PROTOCOL,
                            _("%s: the guest agent's result is not an object"), command);
                return NULL;
        }
        return json_node_get_object(node);
}

/* An integer member, or FALSE when it is missing or not an integer. */
static gboolean get_int(JsonObject *o, const char *name, gint64 *value)
{
        JsonNode *n = json_object_get_member(o, name);

        if (n == NULL || !JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_INT64)
                return FALSE;
        *value = json_node_get_int(n);
        return TRUE;
}

static gboolean get_bool(JsonObject *o, const char *name)
{
        JsonNode *n = json_object_get_member(o, name);

        return n != NULL && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_BOOLEAN &&
               json_node_get_boolean(n);
}

static const char *get_string(JsonObject *o, const char *name)
{
        JsonNode *n = json_object_get_member(o, name);

        if (n == NULL || !JSON_NODE_HOLDS_VALUE(n) || json_node_get_value_type(n) != G_TYPE_STRING)
                return NULL;
        return json_node_get_string(n);
}

/* Decodes base64 member NAME (at most MAX bytes kept) into a NUL-terminated buffer. */
static char *get_base64(JsonObject *o, const char *name, gsize max, gsize *len)
{
        const char *b64 = get_string(o, name);
        guchar *data;
        gsize n = 0;
        char *out;

        *len = 0;
        if (b64 == NULL)
                return g_strdup("");
        data = g_base64_decode(b64, &n);
        n = MIN(n, max);
        out = g_malloc(n + 1);
        memcpy(out, data, n);
        out[n] = '\0';
        g_free(data);
        *len = n;
        return out;
}

gboolean sluice_guest_agent_exec(virDomainPtr domain, const char *const *argv, int timeout_s,
                                 SluiceGuestExec *result, GError **error)
{
        g_autoptr(JsonObject) args = json_object_new();
        g_autoptr(JsonArray) arg = json_array_new();
        g_autoptr(JsonNode) started = NULL;
        JsonObject *o;
        gint64 pid;
        gint64 deadline = g_get_monotonic_time() + (gint64)timeout_s * G_USEC_PER_SEC;

        g_return_val_if_fail(argv != NULL && argv[0] != NULL, FALSE);
        memset(result, 0, sizeof(*result));
        json_object_set_string_member(args, "path", argv[0]);
        for (guint i = 1; argv[i] != NULL; i++)
                json_array_add_string_element(arg, argv[i]);
        json_object_set_array_member(args, "arg", json_array_ref(arg));
        json_object_set_boolean_member(args, "capture-output", TRUE);
        started = sluice_guest_agent_call(domain, "guest-exec", args, MIN(timeout_s, SLUICE_GUEST_AGENT_TIMEOUT_S),
                                          error);
        if (started == NULL || (o = return_object(started, "guest-exec", error)) == NULL)
                return FALSE;
        if (!get_int(o, "pid", &pid)) {
                g_set_error(error, SLUICE_GUEST_AGENT_ERROR, SLUICE_GUEST_AGENT_ERROR_PROTOCOL,
                            _("guest-exec: the guest agent gave no process id"));
                return FALSE;
        }
        for (;;) {
                g_autoptr(JsonObject) status_args = json_object_new();
                g_autoptr(JsonNode) status = NULL;
                gint64 left = (deadline - g_get_monotonic_time()) / G_USEC_PER_SEC;
                gint64 code = 0, sig = 0;

                json_object_set_int_member(status_args, "pid", pid);
                status = sluice_guest_agent_call(domain, "guest-exec-status", status_args,
                                                 (int)CLAMP(left, 1, SLUICE_GUEST_AGENT_TIMEOUT_S), error);
                if (status == NULL || (o = return_object(status, "guest-exec-status", error)) == NULL)
                        return FALSE;
                if (get_bool(o, "exited")) {
                        if (get_int(o, "signal", &sig) && sig != 0) {
                                result->exit_code = -1;
                                result->signal = (int)sig;
                        } else {
                                (void)get_int(o, "exitcode", &code);
                                result->exit_code = (int)code;
                        }
                        result->out = get_base64(o, "out-data", SLUICE_GUEST_AGENT_OUTPUT_MAX, &result->out_len);
                        result->err = get_base64(o, "err-data", SLUICE_GUEST_AGENT_OUTPUT_MAX, &result->err_len);
                        {
                                g_autofree char *line = g_strjoinv(" ", (char **)argv);
                                g_autofree char *said = sluice_guest_agent_printable(
                                        result->err_len > 0 ? result->err : result->out,
                                        result->err_len > 0 ? result->err_len : result->out_len, 120);

                                g_debug("guest: %s: exit %d%s%s", line, result->exit_code, *said ? ": " : "", said);
                        }
                        return TRUE;
                }
                if (g_get_monotonic_time() >= deadline) {
                        g_set_error(error, SLUICE_GUEST_AGENT_ERROR, SLUICE_GUEST_AGENT_ERROR_TIMEOUT,
                                    _("%s did not finish in the guest within %d s"), argv[0], timeout_s);
                        return FALSE;
                }
                g_usleep(EXEC_POLL_US);
        }
}

/* Opens PATH in the guest with MODE; the handle, or -1. */
static gint64 file_open(virDomainPtr domain, const char *path, const char *mode, GError **error)
{
        g_autoptr(JsonObject) args = json_object_new();
        g_autoptr(JsonNode) reply = NULL;
        gint64 handle;

        json_object_set_string_member(args, "path", path);
        json_object_set_string_member(args, "mode", mode);
        reply = sluice_guest_agent_call(domain, "guest-file-open", args, SLUICE_GUEST_AGENT_TIMEOUT_S, error);
        if (reply == NULL)
                return -1;
        if (!JSON_NODE_HOLDS_VALUE(reply) || json_node_get_value_type(reply) != G_TYPE_INT64) {
                g_set_error(error, SLUICE_GUEST_AGENT_ERROR, SLUICE_GUEST_AGENT_ERROR_PROTOCOL,
                            _("guest-file-open: the guest agent gave no file handle"));
                return -1;
        }
        handle = json_node_get_int(reply);
        return handle;
}

static void file_close(virDomainPtr domain, gint64 handle)
{
        g_autoptr(JsonObject) args = json_object_new();
        g_autoptr(JsonNode) reply = NULL;

        json_object_set_int_member(args, "handle", handle);
        reply = sluice_guest_agent_call(domain, "guest-file-close", args, SLUICE_GUEST_AGENT_TIMEOUT_S, NULL);
}

GBytes *sluice_guest_agent_read_file(virDomainPtr domain, const char *path, gsize max, GError **error)
{
        g_autoptr(GByteArray) data = g_byte_array_new();
        gint64 deadline = g_get_monotonic_time() + (gint64)SLUICE_GUEST_AGENT_TIMEOUT_S * G_USEC_PER_SEC;
        /* what a file of MAX bytes needs, and some slack for short reads */
        gsize reads_max = max / FILE_CHUNK + 1 + SLUICE_GUEST_AGENT_FILE_EXTRA_READS;
        gint64 handle = file_open(domain, path, "r", error);

        if (handle < 0)
                return NULL;
        for (gsize reads = 0;; reads++) {
                g_autoptr(JsonObject) args = json_object_new();
                g_autoptr(JsonNode) reply = NULL;
                g_autofree guchar *chunk = NULL;
                const char *b64;
                JsonObject *o;
                gsize n = 0;

                /* a byte budget alone lets an agent that sends one byte per
                 * reply keep this loop going for a million calls */
                if (reads == reads_max) {
                        file_close(domain, handle);
                        g_set_error(error, SLUICE_GUEST_AGENT_ERROR, SLUICE_GUEST_AGENT_ERROR_PROTOCOL,
                                    _("%s in the guest did not end after %zu reads (%u bytes): the guest agent "
                                      "sends it in pieces too small"), path, reads, data->len);
                        return NULL;
                }
                if (g_get_monotonic_time() >= deadline) {
                        file_close(domain, handle);
                        g_set_error(error, SLUICE_GUEST_AGENT_ERROR, SLUICE_GUEST_AGENT_ERROR_TIMEOUT,
                                    _("reading %s in the guest took more than %d s"), path,
                                    SLUICE_GUEST_AGENT_TIMEOUT_S);
                        return NULL;
                }
                json_object_set_int_member(args, "handle", handle);
                json_object_set_int_member(args, "count", FILE_CHUNK);
                reply = sluice_guest_agent_call(domain, "guest-file-read", args,
                                                (int)CLAMP((deadline - g_get_monotonic_time()) / G_USEC_PER_SEC, 1,
                                                           SLUICE_GUEST_AGENT_TIMEOUT_S),
                                                error);
                if (reply == NULL || (o = return_object(reply, "guest-file-read", error)) == NULL) {
                        file_close(domain, handle);
                        return NULL;
                }
                b64 = get_string(o, "buf-b64");
                if (b64 != NULL && *b64 != '\0')
                        chunk = g_base64_decode(b64, &n);
                if (data->len + n > max) {
                        file_close(domain, handle);
                        g_set_error(error, SLUICE_GUEST_AGENT_ERROR, SLUICE_GUEST_AGENT_ERROR_PROTOCOL,
                                    _("%s in the guest is larger than %zu bytes"), path, max);
                        return NULL;
                }
                g_byte_array_append(data, chunk != NULL ? chunk : (const guchar *)"", (guint)n);
                /* a read that returns nothing also ends it: an agent that never says eof */
                if (get_bool(o, "eof") || n == 0)
                        break;
        }
        file_close(domain, handle);
        return g_byte_array_free_to_bytes(g_steal_pointer(&data));
}

gboolean sluice_guest_agent_write_file(virDomainPtr domain, const char *path, GBytes *data, GError **error)
{
        gsize size = 0;
        const guchar *bytes = g_bytes_get_data(data, &size);
        gint64 handle = file_open(domain, path, "w", error);
        gsize done = 0;

        if (handle < 0)
                return FALSE;
        while (done < size) {
                g_autoptr(JsonObject) args = json_object_new();
                g_autoptr(JsonNode) reply = NULL;
                gsize n = MIN(size - done, (gsize)FILE_CHUNK);
                g_autofree char *b64 = g_base64_encode(bytes + done, n);
                JsonObject *o;
                gint64 count = 0;

                json_object_set_int_member(args, "handle", handle);
                json_object_set_string_member(args, "buf-b64", b64);
                reply = sluice_guest_agent_call(domain, "guest-file-write", args, SLUICE_GUEST_AGENT_TIMEOUT_S, error);
                if (reply == NULL || (o = return_object(reply, "guest-file-write", error)) == NULL) {
                        file_close(domain, handle);
                        return FALSE;
                }
                if (!get_int(o, "count", &count) || count <= 0 || (gsize)count > n) {
                        file_close(domain, handle);
                        g_set_error(error, SLUICE_GUEST_AGENT_ERROR, SLUICE_GUEST_AGENT_ERROR_PROTOCOL,
                                    _("writing %s in the guest stopped after %zu of %zu bytes"), path, done, size);
                        return FALSE;
                }
                done += (gsize)count;
        }
        {
                g_autoptr(JsonObject) args = json_object_new();
                g_autoptr(JsonNode) reply = NULL;

                json_object_set_int_member(args, "handle", handle);
                reply = sluice_guest_agent_call(domain, "guest-file-close", args, SLUICE_GUEST_AGENT_TIMEOUT_S, error);
                return reply != NULL;
        }
}

/* One guest-file-write of N bytes of DATA; FALSE unless the guest took them all. */
static gboolean write_chunk(virDomainPtr domain, gint64 handle, const char *path, const guchar *data, gsize n,
                            gsize done, gsize size, GError **error)
{
        g_autoptr(JsonObject) args = json_object_new();
        g_autoptr(JsonNode) reply = NULL;
        g_autofree char *b64 = g_base64_encode(data, n);
        JsonObject *o;
        gint64 count = 0;

        json_object_set_int_member(args, "handle", handle);
        json_object_set_string_member(args, "buf-b64", b64);
        reply = sluice_guest_agent_call(domain, "guest-file-write", args, SLUICE_GUEST_AGENT_TIMEOUT_S, error);
        if (reply == NULL || (o = return_object(reply, "guest-file-write", error)) == NULL)
                return FALSE;
        /* a short write is not resumed: a guest that takes less is out of space or lying */
        if (!get_int(o, "count", &count) || count < 0 || (gsize)count != n) {
                g_set_error(error, SLUICE_GUEST_AGENT_ERROR, SLUICE_GUEST_AGENT_ERROR_PROTOCOL,
                            _("writing %s in the guest stopped after %zu of %zu bytes"), path, done, size);
                return FALSE;
        }
        return TRUE;
}

gboolean sluice_guest_agent_write_from_fd(virDomainPtr domain, const char *path, int fd, gsize size,
                                          SluiceGuestAgentProgress progress, gpointer user_data, GError **error)
{
        g_autofree guchar *buf = g_malloc(SLUICE_GUEST_AGENT_WRITE_CHUNK);
        gint64 handle = file_open(domain, path, "w", error);
        gsize done = 0;

        if (handle < 0)
                return FALSE;
        while (done < size) {
                gsize want = MIN(size - done, (gsize)SLUICE_GUEST_AGENT_WRITE_CHUNK);
                ssize_t got;

                do
                        got = pread(fd, buf, want, (off_t)done);
                while (got < 0 && errno == EINTR);
                if (got <= 0) {
                        int e = got < 0 ? errno : 0;

                        file_close(domain, handle);
                        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e != 0 ? e : EIO),
                                    _("reading the file to copy into the guest failed after %zu of %zu bytes: %s"),
                                    done, size, e != 0 ? g_strerror(e) : _("it is shorter than it was"));
                        return FALSE;
                }
                if (!write_chunk(domain, handle, path, buf, (gsize)got, done, size, error)) {
                        file_close(domain, handle);
                        return FALSE;
                }
                done += (gsize)got;
                if (progress != NULL)
                        progress(done, size, user_data);
        }
        {
                g_autoptr(JsonObject) args = json_object_new();
                g_autoptr(JsonNode) reply = NULL;

                json_object_set_int_member(args, "handle", handle);
                reply = sluice_guest_agent_call(domain, "guest-file-close", args, SLUICE_GUEST_AGENT_TIMEOUT_S, error);
                return reply != NULL;
        }
}

SluiceWireGuestOs sluice_guest_agent_os_type_from(JsonObject *osinfo, char **os_name)
{
        const char *id = get_string(osinfo, "id");
        const char *pretty = get_string(osinfo, "pretty-name");
        const char *kernel_name = get_string(osinfo, "kernel-name");  /* not in every agent */
        const char *kernel_release = get_string(osinfo, "kernel-release");
        const char *machine = get_string(osinfo, "machine");
        SluiceWireGuestOs type = SLUICE_WIRE_GUEST_OS_UNKNOWN;
        g_autofree char *name = NULL;

        if (g_strcmp0(id, "mswindows") == 0)
                type = SLUICE_WIRE_GUEST_OS_WINDOWS;
        else if (id != NULL || g_strcmp0(kernel_name, "Linux") == 0 ||
                 (kernel_release != NULL && machine != NULL && strchr(kernel_release, '.') != NULL &&
                  g_str_has_prefix(machine, "x86_64")))
                /* Linux's qemu-ga reports os-release's id (debian, fedora …)
                 * when there is one, and always uname's release and machine */
                type = SLUICE_WIRE_GUEST_OS_LINUX;

        if (pretty != NULL && *pretty != '\0')
                name = g_strdup(pretty);
        else if (get_string(osinfo, "name") != NULL && get_string(osinfo, "version") != NULL)
                name = g_strdup_printf("%s %s", get_string(osinfo, "name"), get_string(osinfo, "version"));
        else if (type == SLUICE_WIRE_GUEST_OS_LINUX && kernel_release != NULL)
                name = g_strdup_printf("Linux %s", kernel_release);
        if (os_name != NULL)
                *os_name = sluice_guest_agent_printable(name, name != NULL ? strlen(name) : 0, 80);
        return type;
}

void sluice_guest_agent_info_from(JsonObject *guest_info, SluiceGuestAgentInfo *info)
{
        static const char *const exec_commands[] = { "guest-exec", "guest-exec-status" };
        static const char *const file_commands[] = { "guest-file-open", "guest-file-read", "guest-file-write",
                                                     "guest-file-close" };
        JsonNode *list = json_object_get_member(guest_info, "supported_commands");
        const char *version = get_string(guest_info, "version");
        g_autoptr(GHashTable) enabled = g_hash_table_new(g_str_hash, g_str_equal);
        g_autoptr(GPtrArray) blocked = g_ptr_array_new();

        g_free(info->version);
        info->version = sluice_guest_agent_printable(version, version != NULL ? strlen(version) : 0, 40);
        if (list != NULL && JSON_NODE_HOLDS_ARRAY(list)) {
                JsonArray *a = json_node_get_array(list);

                for (guint i = 0; i < json_array_get_length(a); i++) {
                        JsonNode *e = json_array_get_element(a, i);
                        const char *name;

                        if (!JSON_NODE_HOLDS_OBJECT(e))
                                continue;
                        name = get_string(json_node_get_object(e), "name");
                        if (name != NULL && get_bool(json_node_get_object(e), "enabled"))
                                g_hash_table_add(enabled, (gpointer)name);
                }
        }
        info->can_exec = TRUE;
        for (guint i = 0; i < G_N_ELEMENTS(exec_commands); i++)
                if (!g_hash_table_contains(enabled, exec_commands[i])) {
                        info->can_exec = FALSE;
                        g_ptr_array_add(blocked, (gpointer)exec_commands[i]);
                }
        info->can_file = TRUE;
        for (guint i = 0; i < G_N_ELEMENTS(file_commands); i++)
                if (!g_hash_table_contains(enabled, file_commands[i])) {
                        info->can_file = FALSE;
                        g_ptr_array_add(blocked, (gpointer)file_commands[i]);
                }
        g_clear_pointer(&info->blocked, g_free);
        if (blocked->len > 0) {
                g_ptr_array_add(blocked, NULL);
                info->blocked = g_strjoinv(", ", (char **)blocked->pdata);
        }
}

gboolean sluice_guest_agent_probe(virDomainPtr domain, SluiceGuestAgentInfo *info, GError **error)
{
        g_autoptr(JsonNode) ping = NULL;
        g_autoptr(JsonNode) gi = NULL;
        g_autoptr(JsonNode) os = NULL;
        JsonObject *o;

        memset(info, 0, sizeof(*info));
        ping = sluice_guest_agent_call(domain, "guest-ping", NULL, SLUICE_GUEST_AGENT_TIMEOUT_S, error);
        if (ping == NULL)
                return FALSE;
        gi = sluice_guest_agent_call(domain, "guest-info", NULL, SLUICE_GUEST_AGENT_TIMEOUT_S, error);
        if (gi == NULL || (o = return_object(gi, "guest-info", error)) == NULL)
                return FALSE;
        sluice_guest_agent_info_from(o, info);
        /* an agent too old for guest-get-osinfo (before 2.10) is taken for
         * an unknown OS, not an error */
        os = sluice_guest_agent_call(domain, "guest-get-osinfo", NULL, SLUICE_GUEST_AGENT_TIMEOUT_S, NULL);
        if (os != NULL && JSON_NODE_HOLDS_OBJECT(os))
                info->os_type = sluice_guest_agent_os_type_from(json_node_get_object(os), &info->os_name);
        if (info->os_name == NULL)
                info->os_name = g_strdup("");
        return TRUE;
}
