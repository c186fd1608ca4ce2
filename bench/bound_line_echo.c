/* SPDX-License-Identifier: MIT */
/*
 * bound_line_echo: the fastest a line-oriented stdio server can be. Reads stdin in large
 * chunks, writes every complete line back unchanged (no JSON at all), and flushes only when
 * no more input is waiting, the same flushing rule as rpcd. A yardstick for bench/loadgen.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_CHUNK (1024 * 1024)
/* Output is written once this much is pending, even while more input waits. */
#define FLUSH_BYTES (256 * 1024)

typedef struct {
    char *data;
    size_t length;
    size_t capacity;
} buffer;

static int reserve(buffer *buf, size_t more)
{
    if (buf->capacity - buf->length >= more)
        return 0;
    size_t capacity = buf->capacity ? buf->capacity : READ_CHUNK;
    while (capacity - buf->length < more)
        capacity *= 2;
    char *data = realloc(buf->data, capacity);
    if (!data)
        return -1;
    buf->data = data;
    buf->capacity = capacity;
    return 0;
}

static int write_all(const char *data, size_t length)
{
    while (length > 0) {
        ssize_t wrote = write(STDOUT_FILENO, data, length);
        if (wrote < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += wrote;
        length -= (size_t)wrote;
    }
    return 0;
}

/* True when a read() would not block: then flushing can wait, more output will follow. */
static bool input_waiting(void)
{
    struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
    return poll(&pfd, 1, 0) > 0;
}

int main(void)
{
    buffer in = {0}, out = {0};
    size_t scanned = 0;
    int status = 1;

    signal(SIGPIPE, SIG_IGN);
    for (;;) {
        if (reserve(&in, READ_CHUNK) < 0)
            goto done;
        if (out.length > 0 && !input_waiting()) {
            if (write_all(out.data, out.length) < 0)
                goto done;
            out.length = 0;
        }
        ssize_t got = read(STDIN_FILENO, in.data + in.length, in.capacity - in.length);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            goto done;
        }
        if (got == 0)
            break;
        in.length += (size_t)got;
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
