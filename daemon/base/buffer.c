/* SPDX-License-Identifier: MIT */
/*
 * Growable byte buffer with geometric growth, and the JSON string escaper every output path uses.
 */
#include "base/buffer.h"

#include "base/block_store.h"
#include "json/json_scan.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int buf_grow(buffer *buf, size_t extra)
{
    if (extra <= buf->capacity - buf->length)
        return 0;
    if (extra > SIZE_MAX / 2 - buf->length)
        return -1;
    size_t capacity = buf->capacity ? buf->capacity : 256;
    while (capacity - buf->length < extra)
        capacity *= 2;
    /* Past BLOCK_MIN_BYTES the memory comes from the block store, and capacity says so. */
    if (capacity < BLOCK_MIN_BYTES) {
        char *data = realloc(buf->data, capacity);
        if (!data)
            return -1;
        buf->data = data;
        buf->capacity = capacity;
        return 0;
    }
    if (buf->capacity >= BLOCK_MIN_BYTES)
        return block_grow(&buf->data, &buf->capacity, buf->length, capacity);
    char *block;
    size_t block_capacity;
    if (block_alloc(capacity, &block, &block_capacity) != 0)
        return -1;
    if (buf->length > 0)
        memcpy(block, buf->data, buf->length);
    free(buf->data);
    buf->data = block;
    buf->capacity = block_capacity;
    return 0;
}

int buf_append_string(buffer *buf, const char *text)
{
    return buf_append(buf, text, strlen(text));
}

int buf_printf(buffer *buf, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    va_list copy;
    va_copy(copy, args);
    int needed = vsnprintf(NULL, 0, format, copy);
    va_end(copy);
    int status = -1;
    if (needed >= 0 && buf_reserve(buf, (size_t)needed + 1) == 0) {
        vsnprintf(buf->data + buf->length, (size_t)needed + 1, format, args);
        buf->length += (size_t)needed;
        status = 0;
    }
    va_end(args);
    return status;
}

int buf_append_json_string(buffer *buf, const char *text, size_t length)
{
    static const char hex[] = "0123456789abcdef";
    if (buf_reserve(buf, length + 2) != 0 || buf_append_char(buf, '"') != 0)
        return -1;
    size_t run_start = 0;
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c >= 0x80) {
            /* Bytes that are not UTF-8 would make the whole line invalid JSON: replace them. */
            size_t sequence = js_utf8_sequence_length(text + i, length - i);
            if (sequence > 0) {
                i += sequence - 1;
                continue;
            }
            if (buf_append(buf, text + run_start, i - run_start) != 0 ||
                buf_append(buf, "\xEF\xBF\xBD", 3) != 0)
                return -1;
            run_start = i + 1;
            continue;
        }
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        if (buf_append(buf, text + run_start, i - run_start) != 0)
            return -1;
        char escape[6] = {'\\', 0, 0, 0, 0, 0};
        size_t escape_length = 2;
        switch (c) {
        case '"': escape[1] = '"'; break;
        case '\\': escape[1] = '\\'; break;
        case '\n': escape[1] = 'n'; break;
        case '\r': escape[1] = 'r'; break;
        case '\t': escape[1] = 't'; break;
        case '\b': escape[1] = 'b'; break;
        case '\f': escape[1] = 'f'; break;
        default:
            escape[1] = 'u';
            escape[2] = '0';
            escape[3] = '0';
            escape[4] = hex[c >> 4];
            escape[5] = hex[c & 0xF];
            escape_length = 6;
        }
        if (buf_append(buf, escape, escape_length) != 0)
            return -1;
        run_start = i + 1;
    }
    if (buf_append(buf, text + run_start, length - run_start) != 0)
        return -1;
    return buf_append_char(buf, '"');
}

void buf_clear(buffer *buf)
{
    buf->length = 0;
}

void buf_free(buffer *buf)
{
    if (buf->capacity >= BLOCK_MIN_BYTES)
        block_free(buf->data, buf->capacity);
    else
        free(buf->data);
    buf->data = NULL;
    buf->length = 0;
    buf->capacity = 0;
}
