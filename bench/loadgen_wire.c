/* SPDX-License-Identifier: MIT */
/*
 * loadgen's requests and replies: writes and reads on the server's pipes, each bounded by the
 * timeout, request lines built from the method and params, and replies scanned for their ids.
 */
#include "loadgen.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* Writes every byte of iov, waiting at most opt.timeout_ms each time the pipe is full. */
static int write_full(int fd, struct iovec *iov, int count)
{
    while (count > 0) {
        ssize_t wrote = writev(fd, iov, count);
        if (wrote < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN) {
                fail_note("writing to the server: %s", strerror(errno));
                return -1;
            }
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            int ready = poll(&pfd, 1, opt.timeout_ms);
            if (ready == 0) {
                fail_note("the server read nothing for %d s", opt.timeout_ms / 1000);
                return -1;
            }
            if (ready < 0 && errno != EINTR) {
                fail_note("poll: %s", strerror(errno));
                return -1;
            }
            continue;
        }
        while (count > 0 && (size_t)wrote >= iov->iov_len) {
            wrote -= (ssize_t)iov->iov_len;
            iov++;
            count--;
        }
        if (count > 0) {
            iov->iov_base = (char *)iov->iov_base + wrote;
            iov->iov_len -= (size_t)wrote;
        }
    }
    return 0;
}

int write_bytes(int fd, const char *data, size_t length)
{
    struct iovec iov = {.iov_base = (void *)data, .iov_len = length};
    return write_full(fd, &iov, 1);
}

int buffer_reserve(byte_buffer *buf, size_t more)
{
    if (buf->capacity - buf->length >= more)
        return 0;
    size_t capacity = buf->capacity ? buf->capacity : 4096;
    while (capacity - buf->length < more)
        capacity *= 2;
    char *data = realloc(buf->data, capacity);
    if (!data) {
        fail_note("out of memory");
        return -1;
    }
    buf->data = data;
    buf->capacity = capacity;
    return 0;
}

/* Returns 1 and the next complete line (without its newline), or 0 when none is buffered. */
int next_line(line_buffer *lb, const char **line, size_t *length)
{
    char *newline = memchr(lb->buf.data + lb->scanned, '\n', lb->buf.length - lb->scanned);
    if (!newline) {
        lb->scanned = lb->buf.length;
        return 0;
    }
    *line = lb->buf.data + lb->start;
    *length = (size_t)(newline - *line);
    lb->start = lb->scanned = (size_t)(newline - lb->buf.data) + 1;
    return 1;
}

/* Reads what is available, waiting at most opt.timeout_ms: >0 bytes read, 0 at EOF, -1. */
int read_more(int fd, line_buffer *lb)
{
    if (lb->start > 0) {
        memmove(lb->buf.data, lb->buf.data + lb->start, lb->buf.length - lb->start);
        lb->buf.length -= lb->start;
        lb->scanned -= lb->start;
        lb->start = 0;
    }
    if (buffer_reserve(&lb->buf, READ_CHUNK) < 0)
        return -1;
    for (;;) {
        ssize_t got = read(fd, lb->buf.data + lb->buf.length, lb->buf.capacity - lb->buf.length);
        if (got > 0) {
            lb->buf.length += (size_t)got;
            return 1;
        }
        if (got == 0)
            return 0;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN) {
            fail_note("reading from the server: %s", strerror(errno));
            return -1;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int ready = poll(&pfd, 1, opt.timeout_ms);
        if (ready == 0) {
            fail_note("no reply from the server for %d s", opt.timeout_ms / 1000);
            return -1;
        }
        if (ready < 0 && errno != EINTR) {
            fail_note("poll: %s", strerror(errno));
            return -1;
        }
    }
}

static int read_line(int fd, line_buffer *lb, const char **line, size_t *length)
{
    while (!next_line(lb, line, length)) {
        int got = read_more(fd, lb);
        if (got == 0)
            fail_note("the server closed its stdout while a reply was awaited");
        if (got <= 0)
            return -1;
    }
    return 0;
}

/*
 * Finds the next "id" member from *pos and reads its digits: 1 and *id, 0 when there is none,
 * -1 when an id is not a plain non-negative integer. A fast scan, not a parser: the payloads
 * this tool sends cannot contain the text "id".
 */
int scan_id(const char *line, size_t length, size_t *pos, long *id)
{
    const char *end = line + length;
    for (;;) {
        const char *p = memmem(line + *pos, length - *pos, "\"id\"", 4);
        if (!p)
            return 0;
        p += 4;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        *pos = (size_t)(p - line);
        if (p == end || *p != ':')
            continue; /* "id" as a value, not a member name */
        p++;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        if (p == end || *p < '0' || *p > '9')
            return -1;
        long value = 0;
        while (p < end && *p >= '0' && *p <= '9' && value < LONG_MAX / 10)
            value = value * 10 + (*p++ - '0');
        *pos = (size_t)(p - line);
        *id = value;
        return 1;
    }
}

bool has_error(const char *line, size_t length, size_t limit)
{
    return memmem(line, length < limit ? length : limit, "\"error\"", 7) != NULL;
}

void note_bad_reply(const char *what, const char *line, size_t length)
{
    fail_note("%s: %.*s%s", what, (int)(length < 200 ? length : 200), line,
              length > 200 ? "..." : "");
}

int append_request(byte_buffer *buf, long id, const char *params, size_t params_length)
{
    if (buffer_reserve(buf, params_length + HEAD_BYTES) < 0)
        return -1;
    int n =
        snprintf(buf->data + buf->length, HEAD_BYTES,
                 "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\",\"params\":", id, opt.method);
    buf->length += (size_t)n;
    memcpy(buf->data + buf->length, params, params_length);
    buf->length += params_length;
    buf->data[buf->length++] = '}';
    return 0;
}

/* Writes one request line; large params go out from their own buffer, uncopied. */
int send_request(int fd, long id, const char *params, size_t params_length)
{
    char head[HEAD_BYTES];
    int n =
        snprintf(head, sizeof head,
                 "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\",\"params\":", id, opt.method);
    struct iovec iov[3] = {
        {.iov_base = head, .iov_len = (size_t)n},
        {.iov_base = (void *)params, .iov_len = params_length},
        {.iov_base = "}\n", .iov_len = 2},
    };
    return write_full(fd, iov, 3);
}

/*
 * Params ["xxx...x"]: a string of size bytes (the protocol wants params to be an array); with
 * --params, that text whatever the size.
 */
char *make_params(long size, size_t *length)
{
    if (opt.params) {
        *length = strlen(opt.params);
        return strdup(opt.params);
    }
    if (size < 0) {
        *length = strlen(SMALL_PARAMS);
        return strdup(SMALL_PARAMS);
    }
    char *params = malloc((size_t)size + 5);
    if (!params)
        return NULL;
    params[0] = '[';
    params[1] = '"';
    memset(params + 2, 'x', (size_t)size);
    params[size + 2] = '"';
    params[size + 3] = ']';
    params[size + 4] = '\0';
    *length = (size_t)size + 4;
    return params;
}

/* One request, one reply, whose id must be the one sent. */
int round_trip(server *srv, line_buffer *lb, long id, const char *params, size_t length)
{
    const char *line;
    size_t line_length, pos = 0;
    long got;

    if (send_request(srv->to_server, id, params, length) < 0 ||
        read_line(srv->from_server, lb, &line, &line_length) < 0)
        return -1;
    if (scan_id(line, line_length, &pos, &got) != 1 || got != id) {
        note_bad_reply("reply without the expected id", line, line_length);
        return -1;
    }
    if (has_error(line, line_length, ERROR_SCAN_BYTES)) {
        note_bad_reply("error reply", line, line_length);
        return -1;
    }
    return 0;
}

/* After the last reply: closes stdin, expects EOF and nothing more, then reaps the server. */
int end_session(server *srv, line_buffer *lb, server_usage *usage)
{
    close_fd(&srv->to_server);
    for (;;) {
        int got = read_more(srv->from_server, lb);
        if (got < 0)
            goto fail;
        if (got == 0)
            break;
    }
    if (lb->buf.length > lb->start) {
        note_bad_reply("unexpected output after the last reply", lb->buf.data + lb->start,
                       lb->buf.length - lb->start);
        goto fail;
    }
    return server_finish(srv, usage);
fail:
    server_kill(srv);
    return -1;
}
