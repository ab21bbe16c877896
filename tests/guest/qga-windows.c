/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qga-windows.c — a QEMU guest agent that answers as Windows' qemu-ga does,
 * for testing Sluice's Windows procedures in the Linux test guest.
 *
 *   sluice-qga-windows --port /dev/vportNpM [--record FILE] [--missing winfsp|viofs]...
 *                      [--error-escapes TAG]
 *
 * It speaks the agent protocol (one JSON object per request, answers one
 * per line) on the virtio-serial port and runs nothing: guest-exec of the
 * programs Sluice uses on Windows (sc.exe, reg.exe, WinFsp's launchctl,
 * PowerShell's volume list) is answered from a small model of a Windows
 * with virtio-win's VirtIO-FS service and WinFsp — installed unless
 * --missing says otherwise — with the text Windows prints (CRLF lines).
 * Every request is printed as "QGA-WIN: <request>" to stdout and appended
 * to the record file, so a test can assert what was run, in which order.
 * --error-escapes TAG: a guest-exec whose arguments name TAG fails with
 * what a broken or hostile agent might say (error_escapes below).
 * --msi-result CODE[,CODE…]: the exit codes of the next msiexec runs (1603
 * fails, 3010 installs and wants a restart); after them msiexec installs
 * and answers 0 (the section "msiexec, file writes, doctor").
 * --taken X: drive X: is a USB stick from the start (letters already taken).
 * Test-only commands (the section "reboot, registry, letters"):
 * "sluice-test-reboot" {"taken": "X"} reboots this pretend Windows (the
 * agent goes away and comes back; what Windows keeps and loses, below),
 * a USB stick at X: when given; "sluice-test-state" answers the model:
 * VirtioFsSvc, the drives and who serves them, the registry.
 *
 * A test tool, static and without libraries: its JSON reader is its own,
 * bounded, and answers malformed input with an error as qemu-ga does.
 *
 * With --os linux it is a Linux guest's agent instead, one that can lie
 * (the section "the Linux persona" below):
 *
 *   sluice-qga-windows --os linux --port DEV [--record FILE] [--lie MODE]
 *
 * Honest (MODE "none", the default) it really runs guest-exec's program and
 * really opens, reads and writes guest-file-* files, as qemu-ga does, so
 * that Sluice can mount a share through it.  The lies, for the tests of a
 * Stop that must not depend on the guest:
 *   busy            umount answers exit 32 "target is busy" (nothing runs)
 *   one-byte-reads  guest-file-read returns one byte, and never eof (it
 *                   starts the file over at its end)
 *   silent          ping, sync, info and osinfo are answered (the VM looks
 *                   ready); nothing else ever is
 *   garbage         anything but those is answered with malformed JSON
 * The test switches the mode with the command "sluice-test-lie" {"mode":
 * MODE}, which is answered in every mode. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* a guest-file-write of 48 KiB in base64 and its JSON, with room to spare */
#define REQUEST_MAX (256 * 1024)
#define DEPTH_MAX 32
#define OUTPUT_MAX 8192
#define EXECS_MAX 64
#define REG_MAX 32
#define INSTANCES_MAX 24

/* ---- a minimal JSON reader ---- */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jnode {
        enum jtype type;
        long long num;
        int boolean;
        char *str;              /* J_STR; a member's name in an object */
        char *key;
        struct jnode *child;    /* first element / member */
        struct jnode *next;
};

struct jparser {
        const char *p, *end;
        int depth;
};

static void jfree(struct jnode *n)
{
        while (n != NULL) {
                struct jnode *next = n->next;

                jfree(n->child);
                free(n->str);
                free(n->key);
                free(n);
                n = next;
        }
}

static void skip_ws(struct jparser *jp)
{
        while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\t' || *jp->p == '\n' || *jp->p == '\r'))
                jp->p++;
}

static int hexval(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

static void put_utf8(char *out, size_t *n, unsigned cp)
{
        if (cp < 0x80) {
                out[(*n)++] = (char)cp;
        } else if (cp < 0x800) {
                out[(*n)++] = (char)(0xc0 | (cp >> 6));
                out[(*n)++] = (char)(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
                out[(*n)++] = (char)(0xe0 | (cp >> 12));
                out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
                out[(*n)++] = (char)(0x80 | (cp & 0x3f));
        } else {
                out[(*n)++] = (char)(0xf0 | (cp >> 18));
                out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
                out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
                out[(*n)++] = (char)(0x80 | (cp & 0x3f));
        }
}

static int read_hex4(struct jparser *jp, unsigned *cp)
{
        *cp = 0;
        if (jp->end - jp->p < 4)
                return -1;
        for (int i = 0; i < 4; i++) {
                int v = hexval(jp->p[i]);

                if (v < 0)
                        return -1;
                *cp = *cp * 16 + (unsigned)v;
        }
        jp->p += 4;
        return 0;
}

/* A string after its opening quote; NULL when malformed. */
static char *parse_string(struct jparser *jp)
{
        /* Each input byte gives at most 4 output bytes (\uXXXX gives at most 3 for 6). */
        char *out = malloc((size_t)(jp->end - jp->p) * 4 + 1);
        size_t n = 0;

        if (out == NULL)
                return NULL;
        while (jp->p < jp->end) {
                char c = *jp->p++;

                if (c == '"') {
                        out[n] = '\0';
                        return out;
                }
                if ((unsigned char)c < 0x20)
                        break;
                if (c != '\\') {
                        out[n++] = c;
                        continue;
                }
                if (jp->p >= jp->end)
                        break;
                c = *jp->p++;
                switch (c) {
                case '"': case '\\': case '/': out[n++] = c; break;
                case 'b': out[n++] = '\b'; break;
                case 'f': out[n++] = '\f'; break;
                case 'n': out[n++] = '\n'; break;
                case 'r': out[n++] = '\r'; break;
                case 't': out[n++] = '\t'; break;
                case 'u': {
                        unsigned cp, lo;

                        if (read_hex4(jp, &cp) < 0)
                                goto bad;
                        if (cp >= 0xd800 && cp < 0xdc00 && jp->end - jp->p >= 6 && jp->p[0] == '\\' &&
                            jp->p[1] == 'u') {
                                jp->p += 2;
                                if (read_hex4(jp, &lo) < 0)
                                        goto bad;
                                cp = (lo >= 0xdc00 && lo < 0xe000) ? 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00)
                                                                   : 0xfffd;
                        } else if (cp >= 0xd800 && cp < 0xe000) {
                                cp = 0xfffd;
                        }
                        put_utf8(out, &n, cp);
                        break;
                }
                default:
                        goto bad;
                }
        }
bad:
        free(out);
        return NULL;
}

static struct jnode *parse_value(struct jparser *jp);

static struct jnode *new_node(enum jtype type)
{
        struct jnode *n = calloc(1, sizeof(*n));

        if (n != NULL)
                n->type = type;
        return n;
}

static struct jnode *parse_container(struct jparser *jp, int object)
{
        struct jnode *node = new_node(object ? J_OBJ : J_ARR);
        struct jnode **tail;

        if (node == NULL)
                return NULL;
        tail = &node->child;
        if (++jp->depth > DEPTH_MAX)
                goto bad;
        skip_ws(jp);
        if (jp->p < jp->end && *jp->p == (object ? '}' : ']')) {
                jp->p++;
                jp->depth--;
                return node;
        }
        for (;;) {
                char *key = NULL;
                struct jnode *v;

                skip_ws(jp);
                if (object) {
                        if (jp->p >= jp->end || *jp->p != '"')
                                goto bad;
                        jp->p++;
                        key = parse_string(jp);
                        if (key == NULL)
                                goto bad;
                        skip_ws(jp);
                        if (jp->p >= jp->end || *jp->p != ':') {
                                free(key);
                                goto bad;
                        }
                        jp->p++;
                }
                v = parse_value(jp);
                if (v == NULL) {
                        free(key);
                        goto bad;
                }
                v->key = key;
                *tail = v;
                tail = &v->next;
                skip_ws(jp);
                if (jp->p < jp->end && *jp->p == ',') {
                        jp->p++;
                        continue;
                }
                if (jp->p < jp->end && *jp->p == (object ? '}' : ']')) {
                        jp->p++;
                        jp->depth--;
                        return node;
                }
                goto bad;
        }
bad:
        jfree(node);
        return NULL;
}

static struct jnode *parse_value(struct jparser *jp)
{
        struct jnode *n;

        skip_ws(jp);
        if (jp->p >= jp->end)
                return NULL;
        switch (*jp->p) {
        case '{':
                jp->p++;
                return parse_container(jp, 1);
        case '[':
                jp->p++;
                return parse_container(jp, 0);
        case '"':
                jp->p++;
                n = new_node(J_STR);
                if (n != NULL && (n->str = parse_string(jp)) == NULL) {
                        free(n);
                        n = NULL;
                }
                return n;
        }
        if (jp->end - jp->p >= 4 && memcmp(jp->p, "true", 4) == 0) {
                jp->p += 4;
                n = new_node(J_BOOL);
                if (n != NULL)
                        n->boolean = 1;
                return n;
        }
        if (jp->end - jp->p >= 5 && memcmp(jp->p, "false", 5) == 0) {
                jp->p += 5;
                return new_node(J_BOOL);
        }
        if (jp->end - jp->p >= 4 && memcmp(jp->p, "null", 4) == 0) {
                jp->p += 4;
                return new_node(J_NULL);
        }
        if (*jp->p == '-' || (*jp->p >= '0' && *jp->p <= '9')) {
                int neg = *jp->p == '-';
                long long v = 0;

                if (neg)
                        jp->p++;
                if (jp->p >= jp->end || *jp->p < '0' || *jp->p > '9')
                        return NULL;
                while (jp->p < jp->end && *jp->p >= '0' && *jp->p <= '9') {
                        if (v < 100000000000000000LL)
                                v = v * 10 + (*jp->p - '0');
                        jp->p++;
                }
                /* fractions and exponents are read past; nothing here needs them */
                while (jp->p < jp->end && (strchr(".eE+-", *jp->p) != NULL || (*jp->p >= '0' && *jp->p <= '9')))
                        jp->p++;
                n = new_node(J_NUM);
                if (n != NULL)
                        n->num = neg ? -v : v;
                return n;
        }
        return NULL;
}

static struct jnode *jget(const struct jnode *obj, const char *key)
{
        if (obj == NULL || obj->type != J_OBJ)
                return NULL;
        for (struct jnode *m = obj->child; m != NULL; m = m->next)
                if (m->key != NULL && strcmp(m->key, key) == 0)
                        return m;
        return NULL;
}

static const char *jstr(const struct jnode *obj, const char *key)
{
        struct jnode *m = jget(obj, key);

        return m != NULL && m->type == J_STR ? m->str : NULL;
}

/* ---- answers ---- */

struct buf {
        char *data;
        size_t len, cap;
};

static void buf_add(struct buf *b, const char *s, size_t n)
{
        if (b->len + n + 1 > b->cap) {
                size_t cap = (b->len + n + 1) * 2;
                char *d = realloc(b->data, cap);

                if (d == NULL)
                        abort();
                b->data = d;
                b->cap = cap;
        }
        memcpy(b->data + b->len, s, n);
        b->len += n;
        b->data[b->len] = '\0';
}

static void buf_printf(struct buf *b, const char *fmt, ...)
{
        char tmp[4096];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
        va_end(ap);
        if (n > 0)
                buf_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static void buf_json_string(struct buf *b, const char *s)
{
        buf_add(b, "\"", 1);
        for (; *s != '\0'; s++) {
                unsigned char c = (unsigned char)*s;

                if (c == '"' || c == '\\') {
                        char e[2] = { '\\', (char)c };

                        buf_add(b, e, 2);
                } else if (c < 0x20) {
                        buf_printf(b, "\\u%04x", c);
                } else {
                        buf_add(b, s, 1);
                }
        }
        buf_add(b, "\"", 1);
}

static void buf_base64(struct buf *b, const char *data, size_t len)
{
        static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

        for (size_t i = 0; i < len; i += 3) {
                unsigned v = (unsigned char)data[i] << 16;
                char out[4];

                if (i + 1 < len)
                        v |= (unsigned char)data[i + 1] << 8;
                if (i + 2 < len)
                        v |= (unsigned char)data[i + 2];
                out[0] = abc[(v >> 18) & 63];
                out[1] = abc[(v >> 12) & 63];
                out[2] = i + 1 < len ? abc[(v >> 6) & 63] : '=';
                out[3] = i + 2 < len ? abc[v & 63] : '=';
                buf_add(b, out, 4);
        }
}

/* ---- the Windows being modelled ---- */

#define SVC_STOPPED 1
#define SVC_RUNNING 4

struct drive {
        char letter;            /* 0: free slot */
        char tag[64];
        char owner[64];         /* "service", a launcher instance's name, or "usb" (a stick) */
        int nocase;             /* virtiofs.exe -i: case-insensitive */
};

static struct {
        int viofs;              /* VirtIO-FS driver and VirtioFsSvc installed */
        int winfsp;             /* WinFsp and its launcher installed */
        int svc_state;
        int svc_auto;
        struct { char key[160]; char name[64]; char type[16]; char data[256]; } reg[REG_MAX];
        struct drive drives[INSTANCES_MAX];
} win;

static struct {
        long long pid;
        int exitcode;
        struct buf out, err;
} execs[EXECS_MAX];
static long long next_pid = 4242;

static void reg_set(const char *key, const char *name, const char *type, const char *data)
{
        int free_slot = -1;

        for (int i = 0; i < REG_MAX; i++) {
                if (win.reg[i].key[0] == '\0') {
                        if (free_slot < 0)
                                free_slot = i;
                        continue;
                }
                if (strcasecmp(win.reg[i].key, key) == 0 && strcasecmp(win.reg[i].name, name) == 0) {
                        free_slot = i;
                        break;
                }
        }
        if (free_slot < 0)
                return;
        snprintf(win.reg[free_slot].key, sizeof(win.reg[free_slot].key), "%s", key);
        snprintf(win.reg[free_slot].name, sizeof(win.reg[free_slot].name), "%s", name);
        snprintf(win.reg[free_slot].type, sizeof(win.reg[free_slot].type), "%s", type);
        snprintf(win.reg[free_slot].data, sizeof(win.reg[free_slot].data), "%s", data);
}

static int reg_find(const char *key, const char *name)
{
        for (int i = 0; i < REG_MAX; i++)
                if (win.reg[i].key[0] != '\0' && strcasecmp(win.reg[i].key, key) == 0 &&
                    strcasecmp(win.reg[i].name, name) == 0)
                        return i;
        return -1;
}

/* The registry key as reg.exe prints it: HKLM spelled out. */
static void reg_key_long(const char *key, char *out, size_t size)
{
        if (strncasecmp(key, "HKLM\\", 5) == 0)
                snprintf(out, size, "HKEY_LOCAL_MACHINE\\%s", key + 5);
        else
                snprintf(out, size, "%s", key);
}

static int letter_used(char letter)
{
        if (letter == 'C' || letter == 'D')     /* the system disk and virtio-win's CD */
                return 1;
        for (int i = 0; i < INSTANCES_MAX; i++)
                if (win.drives[i].letter == letter)
                        return 1;
        return 0;
}

/* WinFsp's mount: "*" the first free letter from Z: down, "X:" that one. */
static int mount_drive(const char *tag, const char *mount_point, const char *owner)
{
        char letter = 0;

        if (strcmp(mount_point, "*") == 0) {
                for (char l = 'Z'; l >= 'D'; l--)
                        if (!letter_used(l)) {
                                letter = l;
                                break;
                        }
        } else if (strlen(mount_point) == 2 && mount_point[1] == ':') {
                letter = (char)(mount_point[0] & ~0x20);
                if (letter < 'A' || letter > 'Z' || letter_used(letter))
                        letter = 0;
        }
        if (letter == 0)
                return -1;
        for (int i = 0; i < INSTANCES_MAX; i++) {
                if (win.drives[i].letter != 0)
                        continue;
                win.drives[i].letter = letter;
                snprintf(win.drives[i].tag, sizeof(win.drives[i].tag), "%s", tag);
                snprintf(win.drives[i].owner, sizeof(win.drives[i].owner), "%s", owner);
                return 0;
        }
        return -1;
}

static int drive_of_owner(const char *owner)
{
        for (int i = 0; i < INSTANCES_MAX; i++)
                if (win.drives[i].letter != 0 && strcmp(win.drives[i].owner, owner) == 0)
                        return i;
        return -1;
}

static const char *base_name(const char *path)
{
        const char *slash = strrchr(path, '\\');

        return slash != NULL ? slash + 1 : path;
}

static void sc_state_text(struct buf *out, const char *name, int state, int starting)
{
        static const char *const words[] = { "", "STOPPED", "START_PENDING", "STOP_PENDING", "RUNNING" };

        buf_printf(out, "\r\nSERVICE_NAME: %s \r\n", name);
        buf_printf(out, "        TYPE               : 10  WIN32_OWN_PROCESS  \r\n");
        buf_printf(out, "        STATE              : %d  %s \r\n", state, words[state]);
        if (state == SVC_RUNNING)
                buf_printf(out, "                                (STOPPABLE, NOT_PAUSABLE, ACCEPTS_SHUTDOWN)\r\n");
        else
                buf_printf(out, "                                (NOT_STOPPABLE, NOT_PAUSABLE, IGNORES_SHUTDOWN)\r\n");
        buf_printf(out, "        WIN32_EXIT_CODE    : 0  (0x0)\r\n");
        buf_printf(out, "        SERVICE_EXIT_CODE  : 0  (0x0)\r\n");
        buf_printf(out, "        CHECKPOINT         : 0x%d\r\n", starting ? 1 : 0);
        buf_printf(out, "        WAIT_HINT          : 0x%s\r\n", starting ? "7d0" : "0");
        if (starting)
                buf_printf(out, "        PID                : 2816\r\n        FLAGS              : \r\n");
}

/* ---- reboot, registry, letters ---- */

/* What this pretend Windows keeps across a reboot and what it loses, as
 * Windows does: the registry and the services' start types stay; every
 * WinFsp launcher instance is gone (the launcher starts none by itself) and
 * so is a running service not set to Automatic.  At "boot" an Automatic
 * VirtioFsSvc, started without arguments, reads HKLM\SOFTWARE\VirtIO-FS
 * (MountPoint, CaseInsensitive) and serves the first VirtIO-FS device: the
 * model sees no devices, so that is the share the service served last (a
 * VM's device order survives its reboot).  A USB stick at a letter takes
 * it before any service starts.  Meanwhile the agent is away: its port is
 * closed, which the host sees as the agent disconnecting. */
#define VIOFS_KEY "HKLM\\SOFTWARE\\VirtIO-FS"
#define LAUNCHER_KEY "HKLM\\SOFTWARE\\WOW6432Node\\WinFsp\\Services\\"
#define REBOOT_DOWN_US (1500 * 1000)

static int reboot_pending;
static char reboot_taken[8];
static char service_tag[64];    /* the share VirtioFsSvc served last */

static void service_served(const char *tag, int nocase)
{
        int k = drive_of_owner("service");

        if (tag != service_tag)
                snprintf(service_tag, sizeof(service_tag), "%s", tag);
        if (k >= 0)
                win.drives[k].nocase = nocase;
}

/* The registry entry of launcher class NAME's command line, -1 when not registered. */
static int launcher_class(const char *name)
{
        char key[160];

        if (strchr(name, '\\') != NULL)
                return -1;
        snprintf(key, sizeof(key), LAUNCHER_KEY "%s", name);
        return reg_find(key, "CommandLine");
}

static int reg_delete(const char *key, const char *name, struct buf *out, struct buf *err)
{
        int k = reg_find(key, name);

        if (k < 0) {
                buf_printf(err, "ERROR: The system was unable to find the specified registry key or value.\r\n");
                return 1;
        }
        memset(&win.reg[k], 0, sizeof(win.reg[k]));
        buf_printf(out, "The operation completed successfully.\r\n\r\n");
        return 0;
}

/* A USB stick at LETTER ("Y" or "Y:"); -1 when that is no drive letter. */
static int usb_stick(const char *letter)
{
        char mount_point[3] = { (char)(letter[0] & ~0x20), ':', '\0' };

        if (letter[0] == '\0' || (letter[1] != '\0' && strcmp(letter + 1, ":") != 0) || mount_point[0] < 'D' ||
            mount_point[0] > 'Z')
                return -1;
        return mount_drive("USB STICK", mount_point, "usb");
}

static void test_reboot_asked(const struct jnode *args, struct buf *reply)
{
        const char *taken = jstr(args, "taken");

        if (taken != NULL && (strlen(taken) == 0 || strlen(taken) > 2)) {
                buf_printf(reply, "{\"error\":{\"class\":\"GenericError\",\"desc\":\"taken: a drive letter\"}}");
                return;
        }
        snprintf(reboot_taken, sizeof(reboot_taken), "%s", taken != NULL ? taken : "");
        reboot_pending = 1;
        buf_printf(reply, "{\"return\":{}}");
}

/* The reboot itself, once its answer is out: the port closed, Windows
 * "restarted", the port opened again.  Returns the new descriptor. */
static int test_reboot(const char *port, int fd)
{
        int k;

        reboot_pending = 0;
        close(fd);
        usleep(REBOOT_DOWN_US);
        for (int i = 0; i < INSTANCES_MAX; i++)
                if (strcmp(win.drives[i].owner, "usb") != 0)
                        memset(&win.drives[i], 0, sizeof(win.drives[i]));
        for (int i = 0; i < EXECS_MAX; i++)
                execs[i].pid = 0;
        if (reboot_taken[0] != '\0' && usb_stick(reboot_taken) < 0)
                fprintf(stderr, "sluice-qga-windows: no USB stick at %s: the letter is in use\n", reboot_taken);
        win.svc_state = SVC_STOPPED;
        if (win.viofs && win.svc_auto) {
                win.svc_state = SVC_RUNNING;
                k = reg_find(VIOFS_KEY, "MountPoint");
                if (service_tag[0] != '\0') {
                        /* a letter taken now: virtiofs.exe cannot mount and stops */
                        if (mount_drive(service_tag, k >= 0 ? win.reg[k].data : "*", "service") < 0) {
                                win.svc_state = SVC_STOPPED;
                        } else {
                                k = reg_find(VIOFS_KEY, "CaseInsensitive");
                                service_served(service_tag, k >= 0 && strtoul(win.reg[k].data, NULL, 0) != 0);
                        }
                }
        }
        printf("QGA-WIN: rebooted\n");
        fflush(stdout);
        for (;;) {
                fd = open(port, O_RDWR | O_NOCTTY);
                if (fd >= 0)
                        return fd;
                usleep(100 * 1000);
        }
}

/* The model, for the tests' assertions. */
static void test_state(struct buf *reply)
{
        int first = 1;

        buf_printf(reply, "{\"return\":{\"service\":{\"running\":%s,\"automatic\":%s,\"tag\":",
                   win.svc_state == SVC_RUNNING ? "true" : "false", win.svc_auto ? "true" : "false");
        buf_json_string(reply, service_tag);
        buf_printf(reply, "},\"drives\":[");
        for (char l = 'D'; l <= 'Z'; l++)
                for (int i = 0; i < INSTANCES_MAX; i++) {
                        if (win.drives[i].letter != l)
                                continue;
                        buf_printf(reply, "%s{\"letter\":\"%c:\",\"tag\":", first ? "" : ",", l);
                        buf_json_string(reply, win.drives[i].tag);
                        buf_printf(reply, ",\"owner\":");
                        buf_json_string(reply, win.drives[i].owner);
                        buf_printf(reply, ",\"case-insensitive\":%s}", win.drives[i].nocase ? "true" : "false");
                        first = 0;
                }
        buf_printf(reply, "],\"registry\":[");
        first = 1;
        for (int i = 0; i < REG_MAX; i++) {
                if (win.reg[i].key[0] == '\0')
                        continue;
                buf_printf(reply, "%s{\"key\":", first ? "" : ",");
                buf_json_string(reply, win.reg[i].key);
                buf_printf(reply, ",\"name\":");
                buf_json_string(reply, win.reg[i].name);
                buf_printf(reply, ",\"type\":");
                buf_json_string(reply, win.reg[i].type);
                buf_printf(reply, ",\"data\":");
                buf_json_string(reply, win.reg[i].data);
                buf_printf(reply, "}");
                first = 0;
        }
        buf_printf(reply, "]}}");
}

static int sc_exe(const char *const *argv, int argc, struct buf *out)
{
        const char *cmd = argc > 0 ? argv[0] : "";
        const char *name = argc > 1 ? argv[1] : "";
        int viofs = strcasecmp(name, "VirtioFsSvc") == 0 && win.viofs;
        int winfsp = strcasecmp(name, "WinFsp.Launcher") == 0 && win.winfsp;

        if (strcasecmp(cmd, "query") != 0 && strcasecmp(cmd, "config") != 0 && strcasecmp(cmd, "start") != 0 &&
            strcasecmp(cmd, "stop") != 0) {
                buf_printf(out, "ERROR:  Unrecognized command\r\n\r\nDESCRIPTION:\r\n        SC is a command line program used for communicating with the\r\n        Service Control Manager and services.\r\n");
                return 1639;
        }
        if (!viofs && !winfsp) {
                buf_printf(out, "[SC] %s FAILED 1060:\r\n\r\nThe specified service does not exist as an installed service.\r\n\r\n",
                           strcasecmp(cmd, "query") == 0 ? "EnumQueryServicesStatus:OpenService" : "OpenService");
                return 1060;
        }
        if (strcasecmp(cmd, "query") == 0) {
                sc_state_text(out, winfsp ? "WinFsp.Launcher" : "VirtioFsSvc", winfsp ? SVC_RUNNING : win.svc_state, 0);
                return 0;
        }
        if (winfsp) {   /* Sluice only queries WinFsp's launcher */
                buf_printf(out, "[SC] OpenService FAILED 5:\r\n\r\nAccess is denied.\r\n\r\n");
                return 5;
        }
        if (strcasecmp(cmd, "config") == 0) {
                if (argc != 4 || strcasecmp(argv[2], "start=") != 0) {
                        buf_printf(out, "DESCRIPTION:\r\n        Modifies a service entry in the registry and Service Database.\r\n");
                        return 1639;
                }
                win.svc_auto = strcasecmp(argv[3], "auto") == 0;
                buf_printf(out, "[SC] ChangeServiceConfig SUCCESS\r\n");
                return 0;
        }
        if (strcasecmp(cmd, "start") == 0) {
                const char *tag = NULL, *mount_point = NULL;
                int k, nocase = 0;

                if (win.svc_state == SVC_RUNNING) {
                        buf_printf(out, "[SC] StartService FAILED 1056:\r\n\r\nAn instance of the service is already running.\r\n\r\n");
                        return 1056;
                }
                for (int i = 2; i < argc; i++) {
                        if (strcmp(argv[i], "-i") == 0)
                                nocase = 1;
                        else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc)
                                tag = argv[++i];
                        else if (strcmp(argv[i], "-m") == 0 && i + 1 < argc)
                                mount_point = argv[++i];
                }
                if (mount_point == NULL) {
                        k = reg_find("HKLM\\SOFTWARE\\VirtIO-FS", "MountPoint");
                        mount_point = k >= 0 ? win.reg[k].data : "*";
                }
                sc_state_text(out, "VirtioFsSvc", 2, 1);
                win.svc_state = SVC_RUNNING;
                /* Without a tag the service waits for the first device, which
                 * this model does not see: it runs without a drive. */
                if (tag != NULL && mount_drive(tag, mount_point, "service") < 0)
                        win.svc_state = SVC_STOPPED;    /* the letter was taken: it stops at once */
                else if (tag != NULL)
                        service_served(tag, nocase);
                return 0;
        }
        /* stop */
        if (win.svc_state != SVC_RUNNING) {
                buf_printf(out, "[SC] ControlService FAILED 1062:\r\n\r\nThe service has not been started.\r\n\r\n");
                return 1062;
        }
        sc_state_text(out, "VirtioFsSvc", 3, 0);
        win.svc_state = SVC_STOPPED;
        for (int k; (k = drive_of_owner("service")) >= 0;)
                win.drives[k].letter = 0;
        return 0;
}

static int reg_exe(const char *const *argv, int argc, struct buf *out, struct buf *err)
{
        const char *name = NULL, *type = "REG_SZ", *data = NULL;
        char long_key[200];

        if (argc < 2) {
                buf_printf(err, "ERROR: Invalid syntax.\r\nType \"REG /?\" for usage.\r\n");
                return 1;
        }
        for (int i = 2; i < argc; i++) {
                if (strcasecmp(argv[i], "/v") == 0 && i + 1 < argc)
                        name = argv[++i];
                else if (strcasecmp(argv[i], "/t") == 0 && i + 1 < argc)
                        type = argv[++i];
                else if (strcasecmp(argv[i], "/d") == 0 && i + 1 < argc)
                        data = argv[++i];
        }
        reg_key_long(argv[1], long_key, sizeof(long_key));
        if (strcasecmp(argv[0], "add") == 0 && name != NULL && data != NULL) {
                reg_set(argv[1], name, type, data);
                buf_printf(out, "The operation completed successfully.\r\n\r\n");
                return 0;
        }
        if (strcasecmp(argv[0], "query") == 0 && name != NULL) {
                int k = reg_find(argv[1], name);

                if (k < 0) {
                        buf_printf(err, "ERROR: The system was unable to find the specified registry key or value.\r\n");
                        return 1;
                }
                if (strcasecmp(win.reg[k].type, "REG_DWORD") == 0)     /* reg.exe prints a DWORD in hex */
                        buf_printf(out, "\r\n%s\r\n    %s    %s    0x%lx\r\n\r\n", long_key, win.reg[k].name,
                                   win.reg[k].type, strtoul(win.reg[k].data, NULL, 0));
                else
                        buf_printf(out, "\r\n%s\r\n    %s    %s    %s\r\n\r\n", long_key, win.reg[k].name,
                                   win.reg[k].type, win.reg[k].data);
                return 0;
        }
        if (strcasecmp(argv[0], "delete") == 0 && name != NULL)
                return reg_delete(argv[1], name, out, err);
        buf_printf(err, "ERROR: Invalid syntax.\r\nType \"REG %s /?\" for usage.\r\n", argv[0]);
        return 1;
}

/* launchctl prints LF lines (its own printf), "KO …" with exit status 0
 * when the launcher refused. */
static int launchctl_exe(const char *const *argv, int argc, struct buf *out, struct buf *err)
{
        if (argc == 5 && strcmp(argv[0], "start") == 0) {
                int k = launcher_class(argv[1]);

                if (k < 0 || !win.viofs) {
                        buf_printf(out, "KO launcher: error 2\n");     /* class not registered / no executable */
                        return 0;
                }
                if (drive_of_owner(argv[2]) >= 0) {
                        buf_printf(out, "KO launcher: error 183\n");   /* ERROR_ALREADY_EXISTS */
                        return 0;
                }
                if (strstr(win.reg[k].data, "-t %1") == NULL || mount_drive(argv[3], argv[4], argv[2]) < 0) {
                        buf_printf(out, "KO launcher: error 1067\n");  /* the file system exited at once */
                        return 0;
                }
                win.drives[drive_of_owner(argv[2])].nocase = strstr(win.reg[k].data, "-i ") != NULL;
                buf_printf(out, "OK\n");
                return 0;
        }
        if (argc == 3 && strcmp(argv[0], "stop") == 0) {
                int k = drive_of_owner(argv[2]);

                if (k < 0) {
                        buf_printf(out, "KO launcher: error 2\n");
                        return 0;
                }
                win.drives[k].letter = 0;
                buf_printf(out, "OK\n");
                return 0;
        }
        if (argc == 1 && strcmp(argv[0], "list") == 0) {
                buf_printf(out, "OK\n");
                for (int i = 0; i < INSTANCES_MAX; i++)
                        if (win.drives[i].letter != 0 && strcmp(win.drives[i].owner, "service") != 0)
                                buf_printf(out, "virtiofs %s\n", win.drives[i].owner);
                return 0;
        }
        buf_printf(err, "usage: launchctl COMMAND ARGS\n");
        return 87;
}

static int powershell_exe(const char *const *argv, int argc, struct buf *out, struct buf *err)
{
        const char *command = NULL;

        for (int i = 0; i + 1 < argc; i++)
                if (strcasecmp(argv[i], "-Command") == 0)
                        command = argv[i + 1];
        if (command == NULL || strstr(command, "[System.IO.DriveInfo]::GetDrives()") == NULL) {
                buf_printf(err, "The term is not recognized as the name of a cmdlet, function, script file, or operable program.\r\n");
                return 1;
        }
        buf_printf(out, "C:\\|NTFS|\r\nD:\\|CDFS|virtio-win-0.1.262\r\n");
        for (char l = 'E'; l <= 'Z'; l++)
                for (int i = 0; i < INSTANCES_MAX; i++)
                        if (win.drives[i].letter == l)
                                buf_printf(out, "%c:\\|%s|%s\r\n", l,
                                           strcmp(win.drives[i].owner, "usb") == 0 ? "FAT32" : "VirtIO-FS",
                                           win.drives[i].tag);
        return 0;
}

/* ---- msiexec, file writes, doctor ----
 * guest-file-open/write/close store what Sluice copies in for real, under
 * FILES_DIR (the guest's tmpfs), bounded; msiexec.exe /i PATH "installs"
 * what the MSI is for when PATH was written so and starts as an MSI, and
 * answers the codes --msi-result gives, one per run, then 0; the doctor's
 * questions (reg query of a whole key, sc qc, the driver's and WinFsp's
 * versions) are answered as Windows prints them. */

#define FILES_DIR "/tmp/sluice-qga-files"
#define FILES_MAX 8
#define FILE_SIZE_MAX (64L * 1024 * 1024)
#define MSI_RESULTS_MAX 8

static char *base64_decode(const char *b64, size_t *len);
static int write_all(int fd, const char *data, size_t len);

static struct {
        long long handle;       /* 0: free */
        int fd;
        char path[260];         /* the Windows path it was opened as */
        long size;
} win_files[FILES_MAX];
static long long win_next_handle = 1000;
static int msi_results[MSI_RESULTS_MAX], msi_results_n, msi_runs;

/* The host file that holds Windows path PATH: its characters but letters,
 * digits, '.', '-' made '_' (case folded, as Windows' names are). */
static void win_file_name(const char *path, char *out, size_t size)
{
        size_t n = (size_t)snprintf(out, size, "%s/", FILES_DIR);

        for (const char *p = path; *p != '\0' && n + 1 < size; p++) {
                char c = *p;

                if (c >= 'A' && c <= 'Z')
                        c = (char)(c - 'A' + 'a');
                out[n++] = ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-') ? c : '_';
        }
        out[n] = '\0';
}

static void win_error(struct buf *reply, const char *desc)
{
        buf_printf(reply, "{\"error\":{\"class\":\"GenericError\",\"desc\":");
        buf_json_string(reply, desc);
        buf_printf(reply, "}}");
}

static int win_file_slot(const struct jnode *args)
{
        const struct jnode *h = jget(args, "handle");

        for (int i = 0; h != NULL && h->type == J_NUM && i < FILES_MAX; i++)
                if (win_files[i].handle != 0 && win_files[i].handle == h->num)
                        return i;
        return -1;
}

static void win_file(const char *cmd, const struct jnode *args, struct buf *reply)
{
        char name[512];
        int k;

        if (strcmp(cmd, "guest-file-open") == 0) {
                const char *path = jstr(args, "path");
                const char *mode = jstr(args, "mode");
                int slot = -1;

                for (int i = 0; i < FILES_MAX && slot < 0; i++)
                        if (win_files[i].handle == 0)
                                slot = i;
                if (path == NULL || slot < 0) {
                        win_error(reply, path == NULL ? "Parameter 'path' is missing" : "too many open files");
                        return;
                }
                win_file_name(path, name, sizeof(name));
                (void)mkdir(FILES_DIR, 0700);
                win_files[slot].fd = open(name, mode != NULL && mode[0] != 'r' ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY,
                                          0600);
                if (win_files[slot].fd < 0) {
                        win_error(reply, "failed to open file: The system cannot find the file specified.");
                        return;
                }
                win_files[slot].handle = win_next_handle++;
                win_files[slot].size = 0;
                snprintf(win_files[slot].path, sizeof(win_files[slot].path), "%s", path);
                buf_printf(reply, "{\"return\":%lld}", win_files[slot].handle);
                return;
        }
        k = win_file_slot(args);
        if (k < 0) {
                win_error(reply, "handle does not exist");
                return;
        }
        if (strcmp(cmd, "guest-file-write") == 0) {
                const char *b64 = jstr(args, "buf-b64");
                size_t n = 0;
                char *data = b64 != NULL ? base64_decode(b64, &n) : NULL;

                /* bounded as a disk is: a file past the bound fails as a full one */
                if (data == NULL || win_files[k].size + (long)n > FILE_SIZE_MAX ||
                    write_all(win_files[k].fd, data, n) < 0) {
                        free(data);
                        win_error(reply, "failed to write to file: There is not enough space on the disk.");
                        return;
                }
                free(data);
                win_files[k].size += (long)n;
                buf_printf(reply, "{\"return\":{\"count\":%zu,\"eof\":false}}", n);
        } else if (strcmp(cmd, "guest-file-read") == 0) {
                buf_printf(reply, "{\"return\":{\"count\":0,\"buf-b64\":\"\",\"eof\":true}}");
        } else {        /* close */
                close(win_files[k].fd);
                win_files[k].handle = 0;
                buf_printf(reply, "{\"return\":{}}");
        }
}

/* msiexec.exe /i PATH /qn /norestart [ADDLOCAL=…]: Windows Installer's codes. */
static int msiexec_exe(const char *const *argv, int argc, struct buf *out, struct buf *err)
{
        const char *path = NULL, *addlocal = NULL;
        int quiet = 0, code;
        char name[512];
        unsigned char magic[8];
        static const unsigned char msi_magic[8] = { 0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1 };
        int fd;

        (void)out;
        (void)err;
        for (int i = 0; i < argc; i++) {
                if (strcasecmp(argv[i], "/i") == 0 && i + 1 < argc)
                        path = argv[++i];
                else if (strcasecmp(argv[i], "/qn") == 0)
                        quiet = 1;
                else if (strncasecmp(argv[i], "ADDLOCAL=", 9) == 0)
                        addlocal = argv[i] + 9;
        }
        if (path == NULL || !quiet)
                return 1639;    /* ERROR_INVALID_COMMAND_LINE; without /qn it would wait for a click */
        win_file_name(path, name, sizeof(name));
        fd = open(name, O_RDONLY);
        if (fd < 0)
                return 1619;    /* ERROR_INSTALL_PACKAGE_OPEN_FAILED */
        if (read(fd, magic, sizeof(magic)) != (ssize_t)sizeof(magic) || memcmp(magic, msi_magic, 8) != 0) {
                close(fd);
                return 1620;    /* ERROR_INSTALL_PACKAGE_INVALID */
        }
        close(fd);
        /* never the channel Sluice talks through */
        if (addlocal != NULL && (strstr(addlocal, "vioserial") != NULL || strstr(addlocal, "qemu") != NULL))
                return 1603;
        code = msi_runs < msi_results_n ? msi_results[msi_runs] : 0;
        msi_runs++;
        if (code != 0 && code != 3010 && code != 1641)
                return code;
        if (addlocal != NULL && strstr(addlocal, "FE_viofs_driver") != NULL) {
                win.viofs = 1;
                win.svc_state = SVC_STOPPED;
        } else if (strstr(base_name(path), "winfsp") != NULL) {
                win.winfsp = 1;
                reg_set("HKLM\\SOFTWARE\\WOW6432Node\\WinFsp", "InstallDir", "REG_SZ",
                        "C:\\Program Files (x86)\\WinFsp\\");
        } else {
                return 1603;
        }
        return code;
}

/* reg query KEY (no /v): every value of KEY as reg.exe lists them. */
static int reg_query_key(const char *key, struct buf *out, struct buf *err)
{
        char long_key[200];
        int any = 0;

        reg_key_long(key, long_key, sizeof(long_key));
        for (int i = 0; i < REG_MAX; i++) {
                if (win.reg[i].key[0] == '\0' || strcasecmp(win.reg[i].key, key) != 0)
                        continue;
                if (!any)
                        buf_printf(out, "\r\n%s\r\n", long_key);
                buf_printf(out, "    %s    %s    %s\r\n", win.reg[i].name, win.reg[i].type, win.reg[i].data);
                any = 1;
        }
        if (!any) {
                buf_printf(err, "ERROR: The system was unable to find the specified registry key or value.\r\n");
                return 1;
        }
        buf_printf(out, "\r\n");
        return 0;
}

/* sc.exe qc VirtioFsSvc: its configuration, the start type as the model has it. */
static int sc_qc(const char *name, struct buf *out)
{
        if (strcasecmp(name, "VirtioFsSvc") != 0 || !win.viofs) {
                buf_printf(out, "[SC] OpenService FAILED 1060:\r\n\r\nThe specified service does not exist as an installed service.\r\n\r\n");
                return 1060;
        }
        buf_printf(out, "[SC] QueryServiceConfig SUCCESS\r\n\r\nSERVICE_NAME: VirtioFsSvc\r\n");
        buf_printf(out, "        TYPE               : 10  WIN32_OWN_PROCESS \r\n");
        buf_printf(out, "        START_TYPE         : %s\r\n", win.svc_auto ? "2   AUTO_START" : "3   DEMAND_START");
        buf_printf(out, "        ERROR_CONTROL      : 1   NORMAL\r\n");
        buf_printf(out, "        BINARY_PATH_NAME   : \"C:\\Program Files\\Virtio-Win\\VioFS\\virtiofs.exe\"\r\n");
        buf_printf(out, "        DISPLAY_NAME       : VirtIO-FS Service\r\n");
        return 0;
}

/* The doctor's PowerShell questions; -1 when COMMAND is not one of them. */
static int doctor_powershell(const char *command, struct buf *out)
{
        if (strstr(command, "Win32_PnPSignedDriver") != NULL) {
                if (win.viofs)
                        buf_printf(out, "100.95.104.26200\r\n");
                return 0;
        }
        if (strstr(command, "Uninstall") != NULL && strstr(command, "WinFsp") != NULL) {
                if (win.winfsp)
                        buf_printf(out, "2.0.23075\r\n");
                return 0;
        }
        return -1;
}

/* Runs the program of this section that ARGV names, or returns -1 (not one of them). */
static int doctor_exec(const char *base, const char *const *argv, int argc, struct buf *out, struct buf *err)
{
        if (strcasecmp(base, "msiexec.exe") == 0)
                return msiexec_exe(argv, argc, out, err);
        if (strcasecmp(base, "reg.exe") == 0 && argc == 2 && strcasecmp(argv[0], "query") == 0)
                return reg_query_key(argv[1], out, err);
        if (strcasecmp(base, "sc.exe") == 0 && argc == 2 && strcasecmp(argv[0], "qc") == 0)
                return sc_qc(argv[1], out);
        if (strcasecmp(base, "powershell.exe") == 0)
                for (int i = 0; i + 1 < argc; i++)
                        if (strcasecmp(argv[i], "-Command") == 0)
                                return doctor_powershell(argv[i + 1], out);
        return -1;
}

/* --msi-result CODE[,CODE…]: what the next msiexec runs answer. */
static int set_msi_results(const char *list)
{
        char *end;

        for (const char *p = list; *p != '\0' && msi_results_n < MSI_RESULTS_MAX; p = *end == ',' ? end + 1 : end) {
                long code = strtol(p, &end, 10);

                if (end == p || code < 0 || code > 65535)
                        return -1;
                msi_results[msi_results_n++] = (int)code;
        }
        return 0;
}

static void doctor_model_init(void)
{
        reg_set("HKLM\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion", "ProductName", "REG_SZ", "Windows 10 Pro");
        reg_set("HKLM\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion", "DisplayVersion", "REG_SZ", "22H2");
        reg_set("HKLM\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion", "CurrentBuild", "REG_SZ", "19045");
}

/* --error-escapes TAG: the agent's error for a program run with TAG among
 * its arguments holds terminal escapes (a screen clear, a window title, a
 * colour), C1 controls (CSI, NEL), a bidi override and a lone surrogate,
 * which libvirt's JSON parser turns into bytes that are not UTF-8.  All
 * are valid JSON, so libvirt takes the reply and repeats the text. */
static const char *error_escapes_tag;

static int error_escapes(const char *const *argv, int argc, struct buf *reply)
{
        for (int i = 0; error_escapes_tag != NULL && i < argc; i++)
                if (strcmp(argv[i], error_escapes_tag) == 0) {
                        buf_printf(reply, "{\"error\":{\"class\":\"GenericError\",\"desc\":\"%s\"}}",
                                   "\\u001b[2J\\u001b]0;owned\\u0007access \\u009b31mdenied\\u0085 "
                                   "\\u202eexe.txt \\udc80 end");
                        return 1;
                }
        return 0;
}

/* guest-exec: the model's answer, or a qemu-ga error as for a program that is not there. */
static int guest_exec(const struct jnode *args, struct buf *reply)
{
        const char *path = jstr(args, "path");
        const struct jnode *arg = jget(args, "arg");
        const char *argv[32];
        int argc = 0, slot, code;
        const char *base;
        int present;

        if (path == NULL) {
                buf_printf(reply, "{\"error\":{\"class\":\"GenericError\",\"desc\":\"Parameter 'path' is missing\"}}");
                return 0;
        }
        if (arg != NULL && arg->type == J_ARR)
                for (const struct jnode *a = arg->child; a != NULL && argc < 31; a = a->next) {
                        if (a->type != J_STR) {
                                buf_printf(reply, "{\"error\":{\"class\":\"GenericError\",\"desc\":\"Invalid parameter type for 'arg', expected: string\"}}");
                                return 0;
                        }
                        argv[argc++] = a->str;
                }
        argv[argc] = NULL;
        if (error_escapes(argv, argc, reply))
                return 0;
        base = base_name(path);
        present = (strcasecmp(path, "C:\\Windows\\System32\\sc.exe") == 0) ||
                  (strcasecmp(path, "C:\\Windows\\System32\\reg.exe") == 0) ||
                  (strcasecmp(path, "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe") == 0) ||
                  (strcasecmp(path, "C:\\Windows\\System32\\msiexec.exe") == 0) ||
                  (win.winfsp && strcasecmp(path, "C:\\Program Files (x86)\\WinFsp\\bin\\launchctl-x64.exe") == 0);
        if (!present) {
                buf_printf(reply, "{\"error\":{\"class\":\"GenericError\",\"desc\":");
                {
                        struct buf d = { 0 };

                        buf_printf(&d, "Failed to execute child process \xe2\x80\x9c%s\xe2\x80\x9d (No such file or directory)", path);
                        buf_json_string(reply, d.data);
                        free(d.data);
                }
                buf_printf(reply, "}}");
                return 0;
        }
        slot = (int)(next_pid % EXECS_MAX);
        free(execs[slot].out.data);
        free(execs[slot].err.data);
        memset(&execs[slot], 0, sizeof(execs[slot]));
        execs[slot].pid = next_pid;
        if ((code = doctor_exec(base, argv, argc, &execs[slot].out, &execs[slot].err)) >= 0)
                ;       /* msiexec, file writes, doctor */
        else if (strcasecmp(base, "sc.exe") == 0)
                code = sc_exe(argv, argc, &execs[slot].out);
        else if (strcasecmp(base, "reg.exe") == 0)
                code = reg_exe(argv, argc, &execs[slot].out, &execs[slot].err);
        else if (strcasecmp(base, "launchctl-x64.exe") == 0)
                code = launchctl_exe(argv, argc, &execs[slot].out, &execs[slot].err);
        else
                code = powershell_exe(argv, argc, &execs[slot].out, &execs[slot].err);
        execs[slot].exitcode = code;
        buf_printf(reply, "{\"return\":{\"pid\":%lld}}", next_pid);
        next_pid++;
        return 0;
}

static void guest_exec_status(const struct jnode *args, struct buf *reply)
{
        const struct jnode *pid = jget(args, "pid");
        int slot;

        if (pid == NULL || pid->type != J_NUM || pid->num < 0 ||
            execs[(slot = (int)(pid->num % EXECS_MAX))].pid != pid->num || pid->num == 0) {
                buf_printf(reply, "{\"error\":{\"class\":\"GenericError\",\"desc\":\"Invalid parameter 'pid'\"}}");
                return;
        }
        buf_printf(reply, "{\"return\":{\"exitcode\":%d,\"exited\":true", execs[slot].exitcode);
        if (execs[slot].out.len > 0) {
                buf_printf(reply, ",\"out-data\":\"");
                buf_base64(reply, execs[slot].out.data, execs[slot].out.len);
                buf_printf(reply, "\"");
        }
        if (execs[slot].err.len > 0) {
                buf_printf(reply, ",\"err-data\":\"");
                buf_base64(reply, execs[slot].err.data, execs[slot].err.len);
                buf_printf(reply, "\"");
        }
        buf_printf(reply, "}}");
        /* qemu-ga forgets a process once its exit was reported */
        execs[slot].pid = 0;
}

static const char *const supported[] = {
        "guest-sync-delimited", "guest-sync", "guest-ping", "guest-info", "guest-get-osinfo",
        "guest-exec", "guest-exec-status", "guest-file-open", "guest-file-read", "guest-file-write",
        "guest-file-close", "guest-shutdown",
};

/* One request's answer into REPLY; DELIMIT set when a 0xFF goes first. */
static void answer(const struct jnode *req, struct buf *reply, int *delimit)
{
        const char *cmd = jstr(req, "execute");
        const struct jnode *args = jget(req, "arguments");

        *delimit = 0;
        if (cmd == NULL) {
                buf_printf(reply, "{\"error\":{\"class\":\"GenericError\",\"desc\":\"QMP input lacks member 'execute'\"}}");
                return;
        }
        if (strcmp(cmd, "guest-sync") == 0 || strcmp(cmd, "guest-sync-delimited") == 0) {
                const struct jnode *id = jget(args, "id");

                if (id == NULL || id->type != J_NUM) {
                        buf_printf(reply, "{\"error\":{\"class\":\"GenericError\",\"desc\":\"Parameter 'id' is missing\"}}");
                        return;
                }
                *delimit = strcmp(cmd, "guest-sync-delimited") == 0;
                buf_printf(reply, "{\"return\":%lld}", id->num);
        } else if (strcmp(cmd, "guest-ping") == 0) {
                buf_printf(reply, "{\"return\":{}}");
        } else if (strcmp(cmd, "guest-info") == 0) {
                buf_printf(reply, "{\"return\":{\"version\":\"9.2.0\",\"supported_commands\":[");
                for (size_t i = 0; i < sizeof(supported) / sizeof(supported[0]); i++)
                        buf_printf(reply, "%s{\"enabled\":true,\"name\":\"%s\",\"success-response\":true}",
                                   i > 0 ? "," : "", supported[i]);
                buf_printf(reply, "]}}");
        } else if (strcmp(cmd, "guest-get-osinfo") == 0) {
                buf_printf(reply, "{\"return\":{\"name\":\"Microsoft Windows\",\"kernel-release\":\"19045\","
                                  "\"version\":\"Microsoft Windows 10\",\"variant\":\"client\","
                                  "\"pretty-name\":\"Windows 10 Pro\",\"version-id\":\"10\",\"variant-id\":\"client\","
                                  "\"kernel-version\":\"10.0\",\"machine\":\"x86_64\",\"id\":\"mswindows\"}}");
        } else if (strcmp(cmd, "sluice-test-reboot") == 0) {
                test_reboot_asked(args, reply);
        } else if (strcmp(cmd, "sluice-test-state") == 0) {
                test_state(reply);
        } else if (strcmp(cmd, "guest-exec") == 0) {
                guest_exec(args, reply);
        } else if (strcmp(cmd, "guest-exec-status") == 0) {
                guest_exec_status(args, reply);
        } else if (strncmp(cmd, "guest-file-", 11) == 0 && strcmp(cmd, "guest-file-flush") != 0 &&
                   strcmp(cmd, "guest-file-seek") != 0) {
                win_file(cmd, args, reply);     /* msiexec, file writes, doctor */
        } else {
                struct buf d = { 0 };

                buf_printf(&d, "The command %s has not been found", cmd);
                buf_printf(reply, "{\"error\":{\"class\":\"CommandNotFound\",\"desc\":");
                buf_json_string(reply, d.data);
                buf_printf(reply, "}}");
                free(d.data);
        }
}

/* ---- the port ---- */

static FILE *record;
/* the most of one request note() prints */
#define NOTE_MAX 1024

static void note(const char *text, size_t len)
{
        char line[REQUEST_MAX + 16];
        size_t n = 0;

        n += (size_t)snprintf(line, sizeof(line), "QGA-WIN: ");
        /* a file's chunk is not worth a console line of its own size */
        if (len > NOTE_MAX) {
                n += (size_t)snprintf(line + n, sizeof(line) - n, "(%zu bytes) ", len);
                len = NOTE_MAX;
        }
        for (size_t i = 0; i < len && n + 2 < sizeof(line); i++) {
                unsigned char c = (unsigned char)text[i];

                line[n++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
        }
        line[n++] = '\n';
        fwrite(line, 1, n, stdout);
        fflush(stdout);
        if (record != NULL) {
                fwrite(line, 1, n, record);
                fflush(record);
        }
}

static int write_all(int fd, const char *data, size_t len)
{
        while (len > 0) {
                ssize_t n = write(fd, data, len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -1;
                data += n;
                len -= (size_t)n;
        }
        return 0;
}

static int linux_persona;
static int linux_answer(const struct jnode *req, struct buf *reply, int *delimit);

static void handle(int fd, const char *text, size_t len)
{
        struct jparser jp = { text, text + len, 0 };
        struct jnode *req;
        struct buf reply = { 0 };
        int delimit = 0;

        note(text, len);
        req = parse_value(&jp);
        skip_ws(&jp);
        if (req == NULL || req->type != J_OBJ || jp.p != jp.end) {
                buf_printf(&reply, "{\"error\":{\"class\":\"GenericError\",\"desc\":\"JSON parse error, invalid input\"}}");
        } else if (linux_persona) {
                if (!linux_answer(req, &reply, &delimit)) {
                        /* silent: this request is never answered */
                        jfree(req);
                        free(reply.data);
                        return;
                }
        } else {
                answer(req, &reply, &delimit);
        }
        jfree(req);
        buf_add(&reply, "\n", 1);
        if (delimit)
                (void)write_all(fd, "\xff", 1);
        (void)write_all(fd, reply.data, reply.len);
        free(reply.data);
}

/* ---- the Linux persona (--os linux) and its lies ----
 * Kept apart from the Windows model: nothing above calls into it but
 * handle() and main(). */

enum lie { LIE_NONE, LIE_BUSY, LIE_ONE_BYTE_READS, LIE_SILENT, LIE_GARBAGE };

static const char *const lie_names[] = { "none", "busy", "one-byte-reads", "silent", "garbage" };
static enum lie linux_lie;

#define LINUX_FILES_MAX 32
#define LINUX_READ_MAX (1024 * 1024)

static struct {
        long long handle;       /* 0: free slot */
        int fd;
} linux_files[LINUX_FILES_MAX];
static long long linux_next_handle = 1000;

static int linux_set_lie(const char *name)
{
        for (size_t i = 0; i < sizeof(lie_names) / sizeof(lie_names[0]); i++)
                if (strcmp(name, lie_names[i]) == 0) {
                        linux_lie = (enum lie)i;
                        return 0;
                }
        return -1;
}

static void linux_error(struct buf *reply, const char *desc)
{
        buf_printf(reply, "{\"error\":{\"class\":\"GenericError\",\"desc\":");
        buf_json_string(reply, desc);
        buf_printf(reply, "}}");
}

static int base64_value(char c)
{
        static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const char *p = c != '\0' ? strchr(abc, c) : NULL;

        return p != NULL ? (int)(p - abc) : -1;
}

/* Decodes B64 into a new buffer of *LEN bytes (padding and junk skipped). */
static char *base64_decode(const char *b64, size_t *len)
{
        char *out = malloc(strlen(b64) / 4 * 3 + 3);
        unsigned acc = 0;
        int bits = 0;

        *len = 0;
        if (out == NULL)
                abort();
        for (; *b64 != '\0'; b64++) {
                int v = base64_value(*b64);

                if (v < 0)
                        continue;
                acc = (acc << 6) | (unsigned)v;
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        out[(*len)++] = (char)((acc >> bits) & 0xff);
                }
        }
        return out;
}

/* FD's whole content (bounded) into B. */
static void slurp(int fd, struct buf *b)
{
        char chunk[4096];
        ssize_t n;

        lseek(fd, 0, SEEK_SET);
        while (b->len < OUTPUT_MAX && (n = read(fd, chunk, sizeof(chunk))) > 0)
                buf_add(b, chunk, (size_t)n);
}

/* guest-exec, for real: the program runs to its end here (the test's
 * programs are short), its output kept for guest-exec-status.  "busy":
 * umount without -l answers as a Linux whose mount is in use. */
static void linux_exec(const struct jnode *args, struct buf *reply)
{
        const char *path = jstr(args, "path");
        const struct jnode *arg = jget(args, "arg");
        char *argv[64];
        int argc = 0, lazy = 0, slot, status = 0;
        int out_fd, err_fd;
        char out_name[] = "/tmp/qga-out.XXXXXX", err_name[] = "/tmp/qga-err.XXXXXX";
        const char *base;
        pid_t pid;

        if (path == NULL) {
                linux_error(reply, "Parameter 'path' is missing");
                return;
        }
        argv[argc++] = (char *)path;
        if (arg != NULL && arg->type == J_ARR)
                for (const struct jnode *a = arg->child; a != NULL && argc < 63; a = a->next) {
                        if (a->type != J_STR) {
                                linux_error(reply, "Invalid parameter type for 'arg', expected: string");
                                return;
                        }
                        lazy |= strcmp(a->str, "-l") == 0;
                        argv[argc++] = a->str;
                }
        argv[argc] = NULL;
        base = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;
        slot = (int)(next_pid % EXECS_MAX);
        free(execs[slot].out.data);
        free(execs[slot].err.data);
        memset(&execs[slot], 0, sizeof(execs[slot]));
        if (linux_lie == LIE_BUSY && strcmp(base, "umount") == 0 && !lazy) {
                execs[slot].pid = next_pid;
                execs[slot].exitcode = 32;
                buf_printf(&execs[slot].err, "umount: %s: target is busy.\n", argc > 1 ? argv[argc - 1] : "");
                buf_printf(reply, "{\"return\":{\"pid\":%lld}}", next_pid++);
                return;
        }
        if (access(path, X_OK) != 0) {
                struct buf d = { 0 };

                buf_printf(&d, "Failed to execute child process \xe2\x80\x9c%s\xe2\x80\x9d (No such file or directory)",
                           path);
                linux_error(reply, d.data);
                free(d.data);
                return;
        }
        out_fd = mkstemp(out_name);
        err_fd = mkstemp(err_name);
        if (out_fd < 0 || err_fd < 0) {
                linux_error(reply, "cannot capture the output");
                return;
        }
        unlink(out_name);
        unlink(err_name);
        pid = fork();
        if (pid == 0) {
                int null = open("/dev/null", O_RDONLY);

                dup2(null, 0);
                dup2(out_fd, 1);
                dup2(err_fd, 2);
                execv(path, argv);
                _exit(127);
        }
        if (pid > 0)
                while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                        ;
        execs[slot].pid = next_pid;
        execs[slot].exitcode = pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : 1;
        slurp(out_fd, &execs[slot].out);
        slurp(err_fd, &execs[slot].err);
        close(out_fd);
        close(err_fd);
        buf_printf(reply, "{\"return\":{\"pid\":%lld}}", next_pid++);
}

static int linux_file_slot(const struct jnode *args)
{
        const struct jnode *h = jget(args, "handle");

        for (int i = 0; h != NULL && h->type == J_NUM && i < LINUX_FILES_MAX; i++)
                if (linux_files[i].handle != 0 && linux_files[i].handle == h->num)
                        return i;
        return -1;
}

static void linux_file(const char *cmd, const struct jnode *args, struct buf *reply)
{
        int slot;

        if (strcmp(cmd, "guest-file-open") == 0) {
                const char *path = jstr(args, "path"), *mode = jstr(args, "mode");
                int flags = O_RDONLY, fd;

                if (mode != NULL && mode[0] == 'w')
                        flags = O_WRONLY | O_CREAT | O_TRUNC;
                else if (mode != NULL && mode[0] == 'a')
                        flags = O_WRONLY | O_CREAT | O_APPEND;
                for (slot = 0; slot < LINUX_FILES_MAX && linux_files[slot].handle != 0; slot++)
                        ;
                if (path == NULL || slot == LINUX_FILES_MAX || (fd = open(path, flags | O_CLOEXEC, 0644)) < 0) {
                        struct buf d = { 0 };

                        buf_printf(&d, "failed to open file '%s' (mode: '%s'): %s", path != NULL ? path : "",
                                   mode != NULL ? mode : "r", strerror(errno));
                        linux_error(reply, d.data);
                        free(d.data);
                        return;
                }
                linux_files[slot].handle = linux_next_handle;
                linux_files[slot].fd = fd;
                buf_printf(reply, "{\"return\":%lld}", linux_next_handle++);
                return;
        }
        if ((slot = linux_file_slot(args)) < 0) {
                linux_error(reply, "handle does not exist");
                return;
        }
        if (strcmp(cmd, "guest-file-read") == 0) {
                const struct jnode *count = jget(args, "count");
                size_t want = count != NULL && count->type == J_NUM && count->num > 0 ? (size_t)count->num : 4096;
                char *data;
                ssize_t n;

                if (want > LINUX_READ_MAX)
                        want = LINUX_READ_MAX;
                if (linux_lie == LIE_ONE_BYTE_READS)
                        want = 1;
                data = malloc(want);
                if (data == NULL)
                        abort();
                n = read(linux_files[slot].fd, data, want);
                if (n == 0 && linux_lie == LIE_ONE_BYTE_READS) {
                        /* never the end: the file again, a byte at a time */
                        lseek(linux_files[slot].fd, 0, SEEK_SET);
                        n = read(linux_files[slot].fd, data, want);
                }
                if (n < 0) {
                        free(data);
                        linux_error(reply, strerror(errno));
                        return;
                }
                buf_printf(reply, "{\"return\":{\"count\":%zd,\"buf-b64\":\"", n);
                buf_base64(reply, data, (size_t)n);
                buf_printf(reply, "\",\"eof\":%s}}",
                           linux_lie != LIE_ONE_BYTE_READS && (size_t)n < want ? "true" : "false");
                free(data);
        } else if (strcmp(cmd, "guest-file-write") == 0) {
                const char *b64 = jstr(args, "buf-b64");
                size_t len = 0;
                char *data = base64_decode(b64 != NULL ? b64 : "", &len);
                ssize_t n = write(linux_files[slot].fd, data, len);

                free(data);
                if (n < 0)
                        linux_error(reply, strerror(errno));
                else
                        buf_printf(reply, "{\"return\":{\"count\":%zd,\"eof\":false}}", n);
        } else {
                close(linux_files[slot].fd);
                linux_files[slot].handle = 0;
                buf_printf(reply, "{\"return\":{}}");
        }
}

/* One request as the Linux persona; 0 when it is not answered (silent). */
static int linux_answer(const struct jnode *req, struct buf *reply, int *delimit)
{
        const char *cmd = jstr(req, "execute");
        const struct jnode *args = jget(req, "arguments");

        *delimit = 0;
        if (cmd == NULL) {
                linux_error(reply, "QMP input lacks member 'execute'");
                return 1;
        }
        if (strcmp(cmd, "sluice-test-lie") == 0) {
                const char *mode = jstr(args, "mode");

                if (mode == NULL || linux_set_lie(mode) < 0)
                        linux_error(reply, "unknown mode");
                else
                        buf_printf(reply, "{\"return\":{}}");
                return 1;
        }
        /* what tells the VM manager the agent is there and ready: always */
        if (strcmp(cmd, "guest-sync") == 0 || strcmp(cmd, "guest-sync-delimited") == 0 ||
            strcmp(cmd, "guest-ping") == 0 || strcmp(cmd, "guest-info") == 0) {
                answer(req, reply, delimit);
                return 1;
        }
        if (strcmp(cmd, "guest-get-osinfo") == 0) {
                buf_printf(reply, "{\"return\":{\"name\":\"Debian GNU/Linux\",\"kernel-release\":\"6.1.0-test\","
                                  "\"version\":\"12 (bookworm)\",\"pretty-name\":\"Debian GNU/Linux 12 (bookworm)\","
                                  "\"version-id\":\"12\",\"kernel-version\":\"#1 SMP\",\"machine\":\"x86_64\","
                                  "\"id\":\"debian\"}}");
                return 1;
        }
        if (linux_lie == LIE_SILENT)
                return 0;
        if (linux_lie == LIE_GARBAGE) {
                buf_printf(reply, "{\"return\": {\"pid\": 12,, ]");
                return 1;
        }
        if (strcmp(cmd, "guest-exec") == 0)
                linux_exec(args, reply);
        else if (strcmp(cmd, "guest-exec-status") == 0)
                guest_exec_status(args, reply);
        else if (strncmp(cmd, "guest-file-", 11) == 0 && strcmp(cmd, "guest-file-flush") != 0 &&
                 strcmp(cmd, "guest-file-seek") != 0)
                linux_file(cmd, args, reply);
        else
                answer(req, reply, delimit);
        return 1;
}

/* ---- main ---- */

static void usage(void)
{
        fprintf(stderr, "usage: sluice-qga-windows --port DEVICE [--record FILE] [--missing winfsp|viofs]... "
                        "[--error-escapes TAG] [--msi-result CODE[,CODE...]] [--taken X]\n"
                        "       sluice-qga-windows --os linux --port DEVICE [--record FILE] "
                        "[--lie none|busy|one-byte-reads|silent|garbage]\n");
        exit(2);
}

int main(int argc, char **argv)
{
        const char *port = NULL;
        static char request[REQUEST_MAX];
        size_t have = 0, stray = 0;
        char stray_text[256];
        int depth = 0, in_string = 0, escaped = 0, fd;

        win.viofs = 1;
        win.winfsp = 1;
        win.svc_state = SVC_STOPPED;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
                        port = argv[++i];
                } else if (strcmp(argv[i], "--record") == 0 && i + 1 < argc) {
                        record = fopen(argv[++i], "a");
                        if (record == NULL) {
                                perror(argv[i]);
                                return 1;
                        }
                } else if (strcmp(argv[i], "--os") == 0 && i + 1 < argc) {
                        i++;
                        if (strcmp(argv[i], "linux") == 0)
                                linux_persona = 1;
                        else if (strcmp(argv[i], "windows") != 0)
                                usage();
                } else if (strcmp(argv[i], "--lie") == 0 && i + 1 < argc) {
                        if (linux_set_lie(argv[++i]) < 0)
                                usage();
                } else if (strcmp(argv[i], "--error-escapes") == 0 && i + 1 < argc) {
                        error_escapes_tag = argv[++i];
                } else if (strcmp(argv[i], "--msi-result") == 0 && i + 1 < argc) {
                        if (set_msi_results(argv[++i]) < 0)
                                usage();
                } else if (strcmp(argv[i], "--taken") == 0 && i + 1 < argc) {
                        if (usb_stick(argv[++i]) < 0)
                                usage();
                } else if (strcmp(argv[i], "--missing") == 0 && i + 1 < argc) {
                        i++;
                        if (strcmp(argv[i], "winfsp") == 0)
                                win.winfsp = 0;
                        else if (strcmp(argv[i], "viofs") == 0)
                                win.viofs = 0;
                        else
                                usage();
                } else {
                        usage();
                }
        }
        if (port == NULL)
                usage();
        doctor_model_init();
        if (win.winfsp)
                reg_set("HKLM\\SOFTWARE\\WOW6432Node\\WinFsp", "InstallDir", "REG_SZ", "C:\\Program Files (x86)\\WinFsp\\");
        signal(SIGPIPE, SIG_IGN);
        fd = open(port, O_RDWR | O_NOCTTY);
        if (fd < 0) {
                perror(port);
                return 1;
        }
        /* Objects are cut out of the byte stream by their braces (strings
         * respected); 0xFF, which a host sends before guest-sync-delimited,
         * and anything between objects are dropped, as qemu-ga's parser does. */
        for (;;) {
                char chunk[4096];
                ssize_t n = read(fd, chunk, sizeof(chunk));

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno != EAGAIN && errno != EIO) {
                        perror("read");
                        return 1;
                }
                if (n <= 0) {
                        /* no host on the port (virtio-serial) or it hung up (a pty): wait */
                        usleep(100 * 1000);
                        continue;
                }
                for (ssize_t i = 0; i < n; i++) {
                        char c = chunk[i];

                        if ((unsigned char)c == 0xff) {
                                have = 0;
                                stray = 0;
                                depth = in_string = escaped = 0;
                                continue;
                        }
                        if (depth == 0 && c != '{' && c != '[') {
                                /* stray bytes: one malformed request up to the line's end */
                                if (c == '\n' && stray > 0) {
                                        handle(fd, stray_text, stray);
                                        stray = 0;
                                } else if (c != ' ' && c != '\r' && c != '\t' && c != '\n' &&
                                           stray < sizeof(stray_text)) {
                                        stray_text[stray++] = c;
                                }
                                continue;
                        }
                        if (depth == 0 && stray > 0) {
                                handle(fd, stray_text, stray);
                                stray = 0;
                        }
                        if (have >= sizeof(request)) {
                                handle(fd, "{\"too-long\"", 11);
                                have = 0;
                                depth = in_string = escaped = 0;
                                continue;
                        }
                        request[have++] = c;
                        if (in_string) {
                                if (escaped)
                                        escaped = 0;
                                else if (c == '\\')
                                        escaped = 1;
                                else if (c == '"')
                                        in_string = 0;
                                continue;
                        }
                        if (c == '"')
                                in_string = 1;
                        else if (c == '{' || c == '[')
                                depth++;
                        else if (c == '}' || c == ']')
                                depth--;
                        if (depth == 0) {
                                handle(fd, request, have);
                                have = 0;
                                if (reboot_pending)
                                        fd = test_reboot(port, fd);
                        }
                }
        }
}
