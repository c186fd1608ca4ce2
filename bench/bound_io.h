/* SPDX-License-Identifier: MIT */
/*
 * The reading and writing both bound servers share, so that what differs between them is only
 * the work done on a line: a growable buffer, a write that finishes, and "is more input waiting".
 */
#ifndef RPCD_BENCH_BOUND_IO_H
#define RPCD_BENCH_BOUND_IO_H

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#define READ_CHUNK (1024 * 1024)
/* Output is written once this much is pending, even while more input waits. */
#define FLUSH_BYTES (256 * 1024)

typedef struct {
    char *data;
    size_t length;
    size_t capacity;
} buffer;

static inline int reserve(buffer *buf, size_t more)
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

static inline int write_all(const char *data, size_t length)
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
static inline bool input_waiting(void)
{
    struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
    return poll(&pfd, 1, 0) > 0;
}

/*
 * Appends the next read of stdin to in, first writing out what is pending when no input waits
 * (the rule rpcd follows). Returns the bytes read, 0 at end of input, or -1.
 */
static inline ssize_t read_more(buffer *in, buffer *out)
{
    if (reserve(in, READ_CHUNK) < 0)
        return -1;
    if (out->length > 0 && !input_waiting()) {
        if (write_all(out->data, out->length) < 0)
            return -1;
        out->length = 0;
    }
    for (;;) {
        ssize_t got = read(STDIN_FILENO, in->data + in->length, in->capacity - in->length);
        if (got >= 0) {
            in->length += (size_t)got;
            return got;
        }
        if (errno != EINTR)
            return -1;
    }
}

#endif
