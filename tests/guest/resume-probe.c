/* SPDX-License-Identifier: GPL-2.0-or-later */
/* resume-probe.c — a guest's tight read loop across its share's worker crashes.
 *
 *   resume-probe readloop FILE STOPFILE
 *
 * Opens, reads and closes FILE as fast as it can (each round reaches the
 * worker: OPEN, READ, RELEASE; the kernel answers nothing of it from a cache
 * once the dentry's attributes time out), checks the content against the
 * first round's, and every 256 rounds looks for STOPFILE (a stat: the host
 * creates it to end the loop).  It prints, one line each:
 *   ERR <errno name> <what> a call failed or the content differed (at once)
 * and once the loop has ended (no console output while it runs: a serial
 * console under TCG is slow enough to make gaps of its own):
 *   GAP <end_ms> <gap_us>   a round took longer than 2 ms (end_ms: its end,
 *                           on the guest's CLOCK_MONOTONIC); a crash shows as
 *                           one such gap, from the last answered request
 *                           before it to the first one after; at most the
 *                           first 65536
 *   DONE rounds=N errors=M max_gap_us=G
 * and exits 0 when no call failed, 1 otherwise.  Built static by the test
 * that uses it (tests/libvirt/test-worker-resume.sh), for the busybox guest.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GAP_REPORT_US 2000
#define GAPS_KEPT 65536

static uint64_t now_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* The whole of FILE into buf (at most size bytes); -errno on failure. */
static ssize_t read_whole(const char *file, char *buf, size_t size, const char **what)
{
        ssize_t n, total = 0;
        int fd, err;

        *what = "open";
        fd = open(file, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        *what = "read";
        while ((size_t)total < size) {
                n = read(fd, buf + total, size - (size_t)total);
                if (n < 0) {
                        err = errno;
                        close(fd);
                        return -err;
                }
                if (n == 0)
                        break;
                total += n;
        }
        *what = "close";
        if (close(fd) < 0)
                return -errno;
        return total;
}

static int readloop(const char *file, const char *stopfile)
{
        static char first[65536], buf[65536];
        static uint64_t gap_end_ms[GAPS_KEPT], gap_us[GAPS_KEPT];
        size_t n_gaps = 0;
        unsigned long rounds = 0, errors = 0;
        uint64_t last, now, gap, max_gap = 0;
        ssize_t first_len = -1, n;
        const char *what;
        struct stat st;

        last = now_us();
        for (;;) {
                n = read_whole(file, first_len < 0 ? first : buf, sizeof(buf), &what);
                now = now_us();
                if (n < 0) {
                        errors++;
                        printf("ERR %s %s\n", strerrorname_np((int)-n) ?: "?", what);
                        fflush(stdout);
                } else if (first_len < 0) {
                        first_len = n;
                } else if (n != first_len || memcmp(first, buf, (size_t)n) != 0) {
                        errors++;
                        printf("ERR - content differs (%zd bytes, first %zd)\n", n, first_len);
                        fflush(stdout);
                }
                /* only answered rounds close a gap: an error is no answer the guest wanted */
                if (n >= 0) {
                        gap = now - last;
                        if (gap > max_gap)
                                max_gap = gap;
                        if (gap > GAP_REPORT_US && n_gaps < GAPS_KEPT) {
                                gap_end_ms[n_gaps] = now / 1000u;
                                gap_us[n_gaps++] = gap;
                        }
                        last = now;
                }
                rounds++;
                if (rounds % 256 == 0 && stat(stopfile, &st) == 0)
                        break;
        }
        for (size_t i = 0; i < n_gaps; i++)
                printf("GAP %llu %llu\n", (unsigned long long)gap_end_ms[i],
                       (unsigned long long)gap_us[i]);
        printf("DONE rounds=%lu errors=%lu max_gap_us=%llu\n", rounds, errors,
               (unsigned long long)max_gap);
        return errors ? 1 : 0;
}

int main(int argc, char **argv)
{
        if (argc == 4 && !strcmp(argv[1], "readloop"))
                return readloop(argv[2], argv[3]);
        fprintf(stderr, "usage: resume-probe readloop FILE STOPFILE\n");
        return 2;
}
