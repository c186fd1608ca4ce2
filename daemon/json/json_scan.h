/* SPDX-License-Identifier: MIT */
/*
 * A strict JSON (RFC 8259) validator and span walker. It checks a text once, without building a
 * tree, so that the daemon can echo ids and pass params to plugins as the exact bytes the client
 * sent. jansson cannot do this: it has no source positions, and it rejects valid numbers such as
 * 1e400 or 18446744073709551617, which a transport must pass through untouched.
 * json_scan.c validates, json_string.c decodes strings, json_walk.c walks validated text.
 */
#ifndef RPCD_JSON_SCAN_H
#define RPCD_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>

enum js_error {
    JS_ERR_SYNTAX = -1, /* not JSON */
    JS_ERR_DEPTH = -2,  /* nested deeper than the limit */
    JS_ERR_NO_MEMORY = -3,
};

/* A piece of a text: bytes [start, start + length). Borrowed from the text it points into. */
typedef struct js_span {
    const char *start;
    size_t length;
} js_span;

/*
 * Checks that text[0..length) is exactly one JSON value, with optional surrounding whitespace,
 * valid UTF-8 throughout, nested at most max_depth arrays/objects deep.
 * On success returns 0 and, when value is not NULL, the span of the value without whitespace.
 * On failure returns JS_ERR_* and, when error_offset is not NULL, the byte offset of the problem.
 * Never recurses, so any depth of hostile input is safe. Thread-safe (no shared state).
 */
int js_validate(const char *text, size_t length, size_t max_depth, js_span *value,
                size_t *error_offset);

/* One child of a container: for an object, a member (key with its quotes, and value). */
typedef struct js_child {
    js_span key; /* empty for array elements */
    js_span value;
} js_child;

/* Room for the children of a top-level container, filled by js_validate_indexed. */
typedef struct js_index {
    js_child *children; /* caller's storage */
    size_t capacity;
    size_t count; /* every child, also those beyond capacity (which are not stored) */
} js_index;

/*
 * js_validate, and in the same pass the spans of the top-level container's children (the
 * members of a request object, the items of a batch), so that nobody scans the text again to
 * find them. index may be NULL. On failure index->count means nothing.
 */
int js_validate_indexed(const char *text, size_t length, size_t max_depth, js_span *value,
                        size_t *error_offset, js_index *index);

/*
 * Iterates over a validated object or array, one member/element per call.
 * js_iter_init takes the span of the container (as returned by js_validate or js_iter_next).
 * js_iter_next returns 1 and fills key (objects only: the span of the key string, quotes
 * included) and value, 0 at the end. Only for text that js_validate accepted.
 */
typedef struct js_iter {
    const char *position;
    const char *end;
    bool is_object;
} js_iter;

void js_iter_init(js_iter *iter, js_span container);
int js_iter_next(js_iter *iter, js_span *key, js_span *value);

/*
 * Looks for the members of a validated object whose key decodes to key[0..key_length), as
 * js_string_equals compares them (beyond 64 bytes, only keys without escapes match). Returns how
 * many there are: 0 when none (*value is left as it was), 1, or more when the key appears more than
 * once. *value is then the last of them, the one most parsers keep; a caller that must not guess
 * which one a client meant refuses any count above 1. Every member is read, also after a match, so
 * that duplicates are always counted. Returns 0 for any value that is not an object.
 */
size_t js_object_get(js_span object, const char *key, size_t key_length, js_span *value);

/*
 * js_object_get for keys of any length, escapes included: every key is decoded and compared whole
 * (what host->call_meta looks up, in-process and in an isolated plugin's host alike). Slower:
 * for keys a client names, not for rpcd's own.
 */
size_t js_object_get_decoded(js_span object, const char *key, size_t key_length, js_span *value);

/*
 * Decodes a validated JSON string span (quotes included) into UTF-8 bytes in out (capacity
 * bytes, not NUL-terminated). Escapes are resolved; a lone surrogate escape becomes U+FFFD, and
 * \u0000 a NUL byte. Returns 0 and *out_length, or JS_ERR_NO_MEMORY when the decoded string
 * does not fit: *out_length is then 0 and out holds nothing to use. js_string_decoded_length
 * gives the room needed.
 */
int js_string_decode(js_span string, char *out, size_t capacity, size_t *out_length);

/* The number of bytes a validated string span decodes to. */
size_t js_string_decoded_length(js_span string);

/* True when a validated string span decodes to exactly the given bytes (at most 64 of them). */
bool js_string_equals(js_span string, const char *bytes, size_t length);

/* The kind of a validated value, from its first byte. */
typedef enum js_kind {
    JS_OBJECT,
    JS_ARRAY,
    JS_STRING,
    JS_NUMBER,
    JS_TRUE,
    JS_FALSE,
    JS_NULL,
} js_kind;

js_kind js_kind_of(js_span value);

/*
 * Checks that bytes are valid UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
 * Returns true when they are.
 */
bool js_utf8_valid(const char *bytes, size_t length);

/*
 * Removes every raw CR and LF byte from text[0..length) in place and returns the new length.
 * Only for text js_validate accepted: there a raw CR or LF can only be whitespace between
 * tokens (inside strings they must be escaped), so the value is the same, now on one line.
 */
size_t js_drop_line_breaks(char *text, size_t length);

/* Length of the valid UTF-8 sequence at bytes (1 for ASCII), or 0 when it is not valid. */
size_t js_utf8_sequence_length(const char *bytes, size_t available);

#endif
