/* SPDX-License-Identifier: MIT */
/*
 * bound_line_echo: the fastest a line-oriented stdio server can be. Reads stdin in large
 * chunks, writes every complete line back unchanged (no JSON at all), and flushes only when
 * no more input is waiting, the same flushing rule as rpcd. A yardstick for bench/loadgen.
 * With --work-ns N it also spins N ns per line: what a server that does only that much work per
 * message would measure (see "Reading the ratios" in bench/README.md).
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bound_io.h"

static long long now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

/* Busy work standing for what a server does with each line: no sleep, no system call. */
static void work(long long ns_per_line, const char *from, const char *to)
{
    if (ns_per_line <= 0)
        return;
    long long lines = 0;
    for (const char *p = from; (p = memchr(p, '\n', (size_t)(to - p))); p++)
        lines++;
    long long until = now_ns() + lines * ns_per_line;
    while (now_ns() < until)
        ;
}

int main(int argc, char **argv)
{
    buffer in = {0}, out = {0};
    size_t scanned = 0;
    int status = 1;
    long long work_ns = 0;

    if (argc == 3 && strcmp(argv[1], "--work-ns") == 0) {
        work_ns = atoll(argv[2]);
    } else if (argc != 1) {
        fprintf(stderr, "usage: bound_line_echo [--work-ns N]\n");
        return 64;
    }
    signal(SIGPIPE, SIG_IGN);
    for (;;) {
        ssize_t got = read_more(&in, &out);
        if (got < 0)
            goto done;
        if (got == 0)
            break;
        /* Everything up to the last newline is whole lines, echoed as they are. */
        char *last = NULL;
        for (char *p = in.data + scanned; (p = memchr(p, '\n', in.length - (size_t)(p - in.data)));
             p++)
            last = p;
        if (!last) {
            scanned = in.length;
            continue;
        }
        size_t lines = (size_t)(last - in.data) + 1;
        work(work_ns, in.data, last + 1);
        if (out.length == 0 && lines >= FLUSH_BYTES) {
            /* Big lines go out straight from the input buffer rather than copied. */
            if (write_all(in.data, lines) < 0)
                goto done;
        } else {
            if (reserve(&out, lines) < 0)
                goto done;
            memcpy(out.data + out.length, in.data, lines);
            out.length += lines;
            if (out.length >= FLUSH_BYTES) {
                if (write_all(out.data, out.length) < 0)
                    goto done;
                out.length = 0;
            }
        }
        memmove(in.data, in.data + lines, in.length - lines);
        in.length -= lines;
        scanned = in.length;
    }
    /* A last line without a newline is echoed too, with one. */
    if (in.length > 0) {
        if (reserve(&out, in.length + 1) < 0)
            goto done;
        memcpy(out.data + out.length, in.data, in.length);
        out.length += in.length;
        out.data[out.length++] = '\n';
    }
    if (write_all(out.data, out.length) < 0)
        goto done;
    status = 0;
done:
    free(in.data);
    free(out.data);
    return status;
}
