/* SPDX-License-Identifier: MIT */
/*
 * Frames of the isolation channel: a u32 length, a u8 kind and the fields, in native byte
 * order (both ends are the same binary on the same machine). Reading never trusts a length.
 */
#include "isolation/channel.h"

#include "json/json_scan.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The length (u32) and the kind (u8). */
enum { HEADER_BYTES = 5 };

int chan_begin(buffer *out, chan_kind kind, size_t *start)
{
    *start = out->length;
    char header[HEADER_BYTES] = {0, 0, 0, 0, (char)kind};
    return buf_append(out, header, sizeof header);
}

static int put(buffer *out, const void *bytes, size_t length)
{
    return buf_append(out, bytes, length);
}

int chan_put_u8(buffer *out, uint8_t value)
{
    return put(out, &value, sizeof value);
}

int chan_put_u32(buffer *out, uint32_t value)
{
    return put(out, &value, sizeof value);
}

int chan_put_u64(buffer *out, uint64_t value)
{
    return put(out, &value, sizeof value);
}

int chan_put_i64(buffer *out, int64_t value)
{
    return put(out, &value, sizeof value);
}

int chan_put_f64(buffer *out, double value)
{
    return put(out, &value, sizeof value);
}

int chan_put_str(buffer *out, const char *bytes, size_t length)
{
    if (length > CHAN_MAX_FRAME)
        return -1; /* chan_end then refuses the frame */
    uint32_t size = (uint32_t)length;
    return put(out, &size, sizeof size) | put(out, bytes, length);
}

int chan_put_opt(buffer *out, const char *bytes, size_t length)
{
    int failed = chan_put_u8(out, bytes != NULL);
    if (bytes)
        failed |= chan_put_str(out, bytes, length == SIZE_MAX ? strlen(bytes) : length);
    return failed;
}

int chan_end(buffer *out, size_t start, bool failed)
{
    if (out->length < start + HEADER_BYTES)
        return -1;
    size_t length = out->length - start - 4;
    if (failed || length > CHAN_MAX_FRAME) {
        out->length = start;
        return -1;
    }
    uint32_t size = (uint32_t)length;
    memcpy(out->data + start, &size, sizeof size);
    return 0;
}

int chan_next(const char *data, size_t length, size_t *used, chan_frame *frame)
{
    if (length < HEADER_BYTES)
        return CHAN_NEED_MORE;
    uint32_t size;
    memcpy(&size, data, sizeof size);
    unsigned char kind = (unsigned char)data[4];
    if (size < 1 || size > CHAN_MAX_FRAME || kind < CHAN_INIT || kind >= CHAN_KIND_COUNT)
        return CHAN_MALFORMED;
    if (length - 4 < size)
        return CHAN_NEED_MORE;
    frame->kind = (chan_kind)kind;
    frame->at = data + HEADER_BYTES;
    frame->end = data + 4 + size;
    frame->bad = false;
    *used = 4 + (size_t)size;
    return CHAN_FRAME;
}

/* Copies size bytes of the frame into out, or marks it bad (out zeroed) when too few are left. */
static void take(chan_frame *frame, void *out, size_t size)
{
    if (frame->bad || (size_t)(frame->end - frame->at) < size) {
        frame->bad = true;
        memset(out, 0, size);
        return;
    }
    memcpy(out, frame->at, size);
    frame->at += size;
}

uint8_t chan_get_u8(chan_frame *frame)
{
    uint8_t value;
    take(frame, &value, sizeof value);
    return value;
}

uint32_t chan_get_u32(chan_frame *frame)
{
    uint32_t value;
    take(frame, &value, sizeof value);
    return value;
}

uint64_t chan_get_u64(chan_frame *frame)
{
    uint64_t value;
    take(frame, &value, sizeof value);
    return value;
}

int64_t chan_get_i64(chan_frame *frame)
{
    int64_t value;
    take(frame, &value, sizeof value);
    return value;
}

double chan_get_f64(chan_frame *frame)
{
    double value;
    take(frame, &value, sizeof value);
    return value;
}

chan_str chan_get_str(chan_frame *frame)
{
    uint32_t length = chan_get_u32(frame);
    chan_str text = {"", 0};
    if (frame->bad || (size_t)(frame->end - frame->at) < length) {
        frame->bad = true;
        return text;
    }
    text.bytes = frame->at;
    text.length = length;
    frame->at += length;
    return text;
}

chan_str chan_get_opt(chan_frame *frame)
{
    uint8_t present = chan_get_u8(frame);
    if (present > 1)
        frame->bad = true;
    if (present != 1 || frame->bad)
        return (chan_str){NULL, 0};
    return chan_get_str(frame);
}

const char *chan_get_cstr(chan_frame *frame, bool optional, char *out, size_t size)
{
    chan_str text = optional ? chan_get_opt(frame) : chan_get_str(frame);
    if (frame->bad || !text.bytes)
        return NULL;
    if (text.length >= size || memchr(text.bytes, '\0', text.length)) {
        frame->bad = true;
        return NULL;
    }
    memcpy(out, text.bytes, text.length);
    out[text.length] = '\0';
    return out;
}

bool chan_finished(const chan_frame *frame)
{
    return !frame->bad && frame->at == frame->end;
}

/* Text for the protocol: at most most bytes of UTF-8 without a NUL. */
static bool protocol_text(chan_str text, size_t most)
{
    return text.length <= most && !memchr(text.bytes, '\0', text.length) &&
           js_utf8_valid(text.bytes, text.length);
}

int chan_read_resource_updated(chan_frame *frame, chan_str *uri)
{
    *uri = chan_get_str(frame);
    return chan_finished(frame) && protocol_text(*uri, CHAN_MAX_URI) ? 0 : -1;
}

int chan_read_log(chan_frame *frame, int *level, chan_str *text)
{
    *level = (int32_t)chan_get_u32(frame);
    *text = chan_get_str(frame);
    return chan_finished(frame) && protocol_text(*text, CHAN_MAX_LOG_TEXT) ? 0 : -1;
}

static int write_all(int fd, const char *data, size_t length, bool socket)
{
    while (length > 0) {
        ssize_t written = socket ? send(fd, data, length, MSG_NOSIGNAL) : write(fd, data, length);
        if (written < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += written;
        length -= (size_t)written;
    }
    return 0;
}

int chan_write_all(int fd, const char *data, size_t length)
{
    return write_all(fd, data, length, true);
}

int chan_write_pipe(int fd, const char *data, size_t length)
{
    return write_all(fd, data, length, false);
}

long chan_read_once(int fd, buffer *in)
{
    enum { ROOM = 64 * 1024 };
    if (buf_reserve(in, ROOM) != 0) {
        errno = ENOMEM;
        return -1;
    }
    ssize_t got = read(fd, in->data + in->length, in->capacity - in->length);
    if (got > 0)
        in->length += (size_t)got;
    return (long)got;
}

long chan_read_some(int fd, buffer *in)
{
    for (;;) {
        long got = chan_read_once(fd, in);
        if (got >= 0 || errno != EINTR)
            return got;
    }
}

void chan_consume(buffer *in, size_t used)
{
    if (used >= in->length) {
        in->length = 0;
        return;
    }
    memmove(in->data, in->data + used, in->length - used);
    in->length -= used;
}
