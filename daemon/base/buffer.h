/* SPDX-License-Identifier: MIT */
/*
 * A growable byte buffer: the one way the daemon assembles output lines, so that building a
 * response is a few appends into memory that is reused from one line to the next.
 */
#ifndef RPCD_BUFFER_H
#define RPCD_BUFFER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct buffer {
    char *data; /* owned; NULL until the first append; from malloc while capacity is under
                   BLOCK_MIN_BYTES, from the block store from then on */
    size_t length;
    size_t capacity;
} buffer;

#define BUFFER_INIT                                                                                \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

/* buf_reserve's slow path: grows the memory. Returns 0 or -1 (contents kept). */
int buf_grow(buffer *buf, size_t extra);

/*
 * Makes room for extra more bytes. Returns 0 or -1 when memory runs out (contents kept).
 * Inline, as buf_append and buf_append_char: a response is a few short appends into a buffer
 * that has room, and the calls cost more than the copies.
 */
static inline int buf_reserve(buffer *buf, size_t extra)
{
    return extra <= buf->capacity - buf->length ? 0 : buf_grow(buf, extra);
}

/* Appends bytes. Returns 0 or -1 (nothing appended). */
static inline int buf_append(buffer *buf, const void *bytes, size_t length)
{
    if (length == 0)
        return 0;
    /* No object is that large; said first, so that the compiler knows what memcpy gets. */
    if (length > PTRDIFF_MAX || buf_reserve(buf, length) != 0)
        return -1;
    memcpy(buf->data + buf->length, bytes, length);
    buf->length += length;
    return 0;
}

static inline int buf_append_char(buffer *buf, char c)
{
    if (buf_reserve(buf, 1) != 0)
        return -1;
    buf->data[buf->length++] = c;
    return 0;
}

int buf_append_string(buffer *buf, const char *text);
/* Appends a printf-formatted text. Returns 0 or -1. */
int buf_printf(buffer *buf, const char *format, ...) __attribute__((format(printf, 2, 3)));
/*
 * Appends text as a JSON string literal, quotes included, escaping what JSON requires.
 * The bytes should be UTF-8; they are copied as they are. Returns 0 or -1.
 */
int buf_append_json_string(buffer *buf, const char *text, size_t length);
/* Empties the buffer and keeps its memory. */
void buf_clear(buffer *buf);
/* Frees the memory; the buffer is empty and reusable afterwards. */
void buf_free(buffer *buf);

#endif
