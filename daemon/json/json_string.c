/* SPDX-License-Identifier: MIT */
/*
 * Strings of validated text: decoding escapes into UTF-8 bytes, the decoded length, and
 * comparison with given bytes.
 */
#include "json/json_scan.h"

#include "json/json_scan_internal.h"

#include <stdint.h>
#include <string.h>

static size_t put_utf8(uint32_t code_point, char *out)
{
    if (code_point < 0x80) {
        out[0] = (char)code_point;
        return 1;
    }
    if (code_point < 0x800) {
        out[0] = (char)(0xC0 | (code_point >> 6));
        out[1] = (char)(0x80 | (code_point & 0x3F));
        return 2;
    }
    if (code_point < 0x10000) {
        out[0] = (char)(0xE0 | (code_point >> 12));
        out[1] = (char)(0x80 | ((code_point >> 6) & 0x3F));
        out[2] = (char)(0x80 | (code_point & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (code_point >> 18));
    out[1] = (char)(0x80 | ((code_point >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((code_point >> 6) & 0x3F));
    out[3] = (char)(0x80 | (code_point & 0x3F));
    return 4;
}

static uint32_t read_hex4(const char *p)
{
    return (uint32_t)(js_hex_value(p[0]) << 12 | js_hex_value(p[1]) << 8 | js_hex_value(p[2]) << 4 |
                      js_hex_value(p[3]));
}

/*
 * Decodes string into out while it fits (out may be NULL when capacity is 0) and returns the
 * decoded length, also when it did not fit.
 */
static size_t decode_string(js_span string, char *out, size_t capacity)
{
    const char *p = string.start + 1;
    const char *end = string.start + string.length - 1; /* the closing quote */
    size_t used = 0;
    char scratch[4];

    while (p < end) {
        size_t n;
        const char *bytes;
        if (*p != '\\') {
            /* Copy a run of plain bytes at once. */
            const char *run = p;
            while (p < end && *p != '\\')
                p++;
            n = (size_t)(p - run);
            bytes = run;
        } else {
            char e = p[1];
            p += 2;
            bytes = scratch;
            n = 1;
            switch (e) {
            case 'b': scratch[0] = '\b'; break;
            case 'f': scratch[0] = '\f'; break;
            case 'n': scratch[0] = '\n'; break;
            case 'r': scratch[0] = '\r'; break;
            case 't': scratch[0] = '\t'; break;
            case 'u': {
                uint32_t unit = read_hex4(p);
                p += 4;
                if (unit >= 0xD800 && unit <= 0xDBFF && end - p >= 6 && p[0] == '\\' &&
                    p[1] == 'u') {
                    uint32_t low = read_hex4(p + 2);
                    if (low >= 0xDC00 && low <= 0xDFFF) {
                        unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                        p += 6;
                    }
                }
                if (unit >= 0xD800 && unit <= 0xDFFF)
                    unit = 0xFFFD; /* a lone surrogate has no UTF-8 form */
                n = put_utf8(unit, scratch);
                break;
            }
            default:
                scratch[0] = e;
                break; /* the quote, backslash and slash stand for themselves */
            }
        }
        if (used + n <= capacity)
            memcpy(out + used, bytes, n);
        used += n;
    }
    return used;
}

int js_string_decode(js_span string, char *out, size_t capacity, size_t *out_length)
{
    size_t used = decode_string(string, out, capacity);
    /* A length that did not fit is never handed out here: a caller that ignores the status
     * then uses no byte it was not given. */
    *out_length = used <= capacity ? used : 0;
    return used <= capacity ? 0 : JS_ERR_NO_MEMORY;
}

size_t js_string_decoded_length(js_span string)
{
    return decode_string(string, NULL, 0);
}

bool js_string_equals(js_span string, const char *bytes, size_t length)
{
    /* Without escapes, the span holds the bytes themselves: the common case costs a memcmp. */
    if (memchr(string.start + 1, '\\', string.length - 2) == NULL)
        return string.length == length + 2 && memcmp(string.start + 1, bytes, length) == 0;
    char buffer[64];
    size_t decoded;
    if (length > sizeof buffer || js_string_decode(string, buffer, sizeof buffer, &decoded) != 0)
        return false;
    return decoded == length && memcmp(buffer, bytes, length) == 0;
}
