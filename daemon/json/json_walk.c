/* SPDX-License-Identifier: MIT */
/*
 * Walking text the validator accepted: iteration over a container's children, looking up an
 * object's member, the kind of a value, line-break removal. Each relies on the text being
 * valid and checks nothing again.
 */
#include "json/json_scan.h"

#include "json/json_scan_internal.h"

#include <stdlib.h>
#include <string.h>

/* End of the validated value starting at p. */
static const char *value_end(const char *p, const char *end)
{
    if (*p == '"')
        return js_string_end(p, end);
    if (*p == '{' || *p == '[') {
        size_t depth = 0;
        while (p < end) {
            char c = *p;
            if (c == '"') {
                p = js_string_end(p, end);
                continue;
            }
            if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                if (--depth == 0)
                    return p + 1;
            }
            p++;
        }
        return end;
    }
    while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\t' &&
           *p != '\n' && *p != '\r')
        p++;
    return p;
}

void js_iter_init(js_iter *iter, js_span container)
{
    iter->is_object = container.length > 0 && container.start[0] == '{';
    iter->position = container.start + 1;
    iter->end = container.start + container.length - 1; /* the closing bracket */
}

int js_iter_next(js_iter *iter, js_span *key, js_span *value)
{
    const char *p = js_skip_whitespace(iter->position, iter->end);
    if (p < iter->end && *p == ',')
        p = js_skip_whitespace(p + 1, iter->end);
    if (p >= iter->end)
        return 0;
    if (iter->is_object) {
        const char *key_end = js_string_end(p, iter->end);
        if (key) {
            key->start = p;
            key->length = (size_t)(key_end - p);
        }
        p = js_skip_whitespace(key_end, iter->end);
        p = js_skip_whitespace(p + 1, iter->end); /* the colon */
    }
    const char *after = value_end(p, iter->end);
    value->start = p;
    value->length = (size_t)(after - p);
    iter->position = after;
    return 1;
}

size_t js_object_get(js_span object, const char *key, size_t key_length, js_span *value)
{
    if (object.length == 0 || object.start[0] != '{')
        return 0;
    js_iter members;
    js_span name, member;
    size_t count = 0;
    js_iter_init(&members, object);
    while (js_iter_next(&members, &name, &member)) {
        if (js_string_equals(name, key, key_length)) {
            *value = member;
            count++;
        }
    }
    return count;
}

js_kind js_kind_of(js_span value)
{
    switch (value.start[0]) {
    case '{': return JS_OBJECT;
    case '[': return JS_ARRAY;
    case '"': return JS_STRING;
    case 't': return JS_TRUE;
    case 'f': return JS_FALSE;
    case 'n': return JS_NULL;
    default: return JS_NUMBER;
    }
}

size_t js_drop_line_breaks(char *text, size_t length)
{
    /* Most texts have none: two memchr passes find that faster than a loop over the bytes. */
    char *lf = memchr(text, '\n', length), *cr = memchr(text, '\r', length);
    if (!lf && !cr)
        return length;
    char *first = !lf ? cr : !cr ? lf : lf < cr ? lf : cr;
    size_t kept = (size_t)(first - text);
    for (size_t i = kept; i < length; i++)
        if (text[i] != '\n' && text[i] != '\r')
            text[kept++] = text[i];
    return kept;
}

size_t js_object_get_decoded(js_span object, const char *key, size_t key_length, js_span *value)
{
    if (object.length == 0 || object.start[0] != '{')
        return 0;
    js_iter members;
    js_span name, found;
    size_t matches = 0;
    char *decoded = malloc(key_length + 1);
    js_iter_init(&members, object);
    while (decoded && js_iter_next(&members, &name, &found)) {
        size_t decoded_length;
        if (js_string_decoded_length(name) == key_length &&
            js_string_decode(name, decoded, key_length + 1, &decoded_length) == 0 &&
            decoded_length == key_length && memcmp(decoded, key, key_length) == 0) {
            *value = found;
            matches++;
        }
    }
    free(decoded);
    return matches;
}
