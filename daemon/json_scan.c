/* SPDX-License-Identifier: MIT */
/*
 * Strict JSON validation without a tree: the token scanners (strings with their UTF-8, numbers,
 * literals) and the validator, with an explicit stack of container kinds instead of recursion,
 * so hostile nesting costs memory in bits, never stack frames.
 */
#include "json_scan.h"

#include "json_scan_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static bool is_continuation(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

/* Length of the valid UTF-8 sequence starting at p (lead byte >= 0x80), or 0 when invalid. */
static size_t utf8_sequence_length(const unsigned char *p, const unsigned char *end)
{
    unsigned char lead = p[0];
    size_t need;
    unsigned char low = 0x80, high = 0xBF; /* allowed range of the second byte */

    if (lead >= 0xC2 && lead <= 0xDF) {
        need = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        need = 3;
        if (lead == 0xE0)
            low = 0xA0; /* overlong */
        else if (lead == 0xED)
            high = 0x9F; /* UTF-16 surrogates */
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        need = 4;
        if (lead == 0xF0)
            low = 0x90; /* overlong */
        else if (lead == 0xF4)
            high = 0x8F; /* above U+10FFFF */
    } else {
        return 0;
    }
    if ((size_t)(end - p) < need || p[1] < low || p[1] > high)
        return 0;
    for (size_t i = 2; i < need; i++)
        if (!is_continuation(p[i]))
            return 0;
    return need;
}

size_t js_utf8_sequence_length(const char *bytes, size_t available)
{
    const unsigned char *p = (const unsigned char *)bytes;
    if (available == 0)
        return 0;
    if (p[0] < 0x80)
        return 1;
    return utf8_sequence_length(p, p + available);
}

bool js_utf8_valid(const char *bytes, size_t length)
{
    const unsigned char *p = (const unsigned char *)bytes;
    const unsigned char *end = p + length;
    while (p < end) {
        if (*p < 0x80) {
            p++;
            continue;
        }
        size_t n = utf8_sequence_length(p, end);
        if (n == 0)
            return false;
        p += n;
    }
    return true;
}

/*
 * 1 for the bytes a string may hold as they are: printable ASCII but the quote (0x22) and the
 * backslash (0x5C). Control bytes (0x00-0x1F) must be escaped and bytes from 0x80 start UTF-8
 * sequences, checked on their own: both stay 0.
 */
/* clang-format off */
static const unsigned char plain_byte[256] = {
    /*       0  1  2  3  4  5  6  7  8  9  A  B  C  D  E  F */
    [0x20] = 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    [0x30] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    [0x40] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    [0x50] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
    [0x60] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    [0x70] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
};
/* clang-format on */

/*
 * The high bit of each byte of word that is not plain (see plain_byte). A subtraction's borrow
 * only ever starts at a byte that is itself found, so the lowest bit set is always the first such
 * byte, and the value is 0 exactly when all eight are plain. It takes a large string from seven
 * instructions a byte to about three, and finds the end of a short one in one step.
 */
static uint64_t special_bytes(uint64_t word)
{
    const uint64_t ones = 0x0101010101010101u;
    const uint64_t high_bits = 0x8080808080808080u;
    uint64_t quote = word ^ (ones * '"');
    uint64_t backslash = word ^ (ones * '\\');
    uint64_t special = ((word - ones * 0x20) & ~word)      /* a byte below 0x20 */
                       | ((quote - ones) & ~quote)         /* a quote */
                       | ((backslash - ones) & ~backslash) /* a backslash */
                       | word;                             /* a byte of 0x80 or more */
    return special & high_bits;
}

/*
 * Where in memory the first byte that special_bytes found is (special != 0): the lowest bit on
 * a little-endian machine. Elsewhere 0, which is only slower: the bytes are then looked at one
 * at a time.
 */
static size_t first_special_offset(uint64_t special)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return (size_t)__builtin_ctzll(special) / 8;
#else
    (void)special;
    return 0;
#endif
}

/* p points at the opening quote; returns the byte after the closing quote, or NULL. */
static const char *scan_string(const char *p, const char *end)
{
    p++;
    while (p < end) {
        /* Most of a string is plain ASCII: eight bytes a step, then one table look-up a byte. */
        while (end - p >= 8) {
            uint64_t word;
            memcpy(&word, p, sizeof word);
            uint64_t special = special_bytes(word);
            if (special == 0) {
                p += 8;
                continue;
            }
            p += first_special_offset(special);
            goto look;
        }
        while (p < end && plain_byte[(unsigned char)*p])
            p++;
        if (p >= end)
            break;
    look:;
        /* Any byte may come here: a plain one is stepped over below. */
        unsigned char c = (unsigned char)*p;
        if (c == '"')
            return p + 1;
        if (c == '\\') {
            if (end - p < 2)
                return NULL;
            char e = p[1];
            if (e == 'u') {
                if (end - p < 6)
                    return NULL;
                for (int i = 2; i < 6; i++)
                    if (js_hex_value(p[i]) < 0)
                        return NULL;
                p += 6;
            } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' ||
                       e == 'r' || e == 't') {
                p += 2;
            } else {
                return NULL;
            }
        } else if (c < 0x20) {
            return NULL;
        } else if (c < 0x80) {
            p++;
        } else {
            size_t n = utf8_sequence_length((const unsigned char *)p, (const unsigned char *)end);
            if (n == 0)
                return NULL;
            p += n;
        }
    }
    return NULL;
}

const char *js_string_end(const char *p, const char *end)
{
    return scan_string(p, end);
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* p points at '-' or a digit; returns the byte after the number, or NULL. */
static const char *scan_number(const char *p, const char *end)
{
    if (*p == '-')
        p++;
    if (p >= end || !is_digit(*p))
        return NULL;
    if (*p == '0') {
        p++;
    } else {
        while (p < end && is_digit(*p))
            p++;
    }
    if (p < end && *p == '.') {
        p++;
        if (p >= end || !is_digit(*p))
            return NULL;
        while (p < end && is_digit(*p))
            p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            p++;
        if (p >= end || !is_digit(*p))
            return NULL;
        while (p < end && is_digit(*p))
            p++;
    }
    return p;
}

static const char *scan_literal(const char *p, const char *end, const char *word, size_t length)
{
    if ((size_t)(end - p) < length || memcmp(p, word, length) != 0)
        return NULL;
    return p + length;
}

/* One bit per open container: 1 for an object, 0 for an array. */
typedef struct kind_stack {
    unsigned char *bits;
    size_t depth;
} kind_stack;

static void stack_push(kind_stack *stack, bool is_object)
{
    size_t byte = stack->depth / 8;
    unsigned char mask = (unsigned char)(1u << (stack->depth % 8));
    if (is_object)
        stack->bits[byte] |= mask;
    else
        stack->bits[byte] &= (unsigned char)~mask;
    stack->depth++;
}

static bool stack_top_is_object(const kind_stack *stack)
{
    size_t top = stack->depth - 1;
    return (stack->bits[top / 8] >> (top % 8)) & 1u;
}

int js_validate(const char *text, size_t length, size_t max_depth, js_span *value,
                size_t *error_offset)
{
    return js_validate_indexed(text, length, max_depth, value, error_offset, NULL);
}

/* Notes one child of the top-level container, if there is room. */
static void index_child(js_index *index, js_span key, const char *start, const char *end)
{
    if (index->count < index->capacity) {
        index->children[index->count].key = key;
        index->children[index->count].value.start = start;
        index->children[index->count].value.length = (size_t)(end - start);
    }
    index->count++;
}

int js_validate_indexed(const char *text, size_t length, size_t max_depth, js_span *value,
                        size_t *error_offset, js_index *index)
{
    unsigned char small[64]; /* enough for 512 levels without touching the heap */
    js_span child_key = {NULL, 0};
    const char *child_start = NULL; /* a child of the top-level container is being read */
    if (index)
        index->count = 0;
    kind_stack stack = {small, 0};
    const char *end = text + length;
    const char *p = js_skip_whitespace(text, end);
    const char *value_start = p;
    int status = JS_ERR_SYNTAX;

    if (max_depth > sizeof small * 8) {
        stack.bits = malloc(max_depth / 8 + 1);
        if (!stack.bits) {
            status = JS_ERR_NO_MEMORY;
            goto done;
        }
    }

    for (;;) {
        /* Expecting a value at p. */
        if (p >= end)
            goto done;
        const char *token = p; /* where a bad token is reported */
        if (index && stack.depth == 1)
            child_start = p;
        switch (*p) {
        case '{':
        case '[':
            if (stack.depth >= max_depth) {
                status = JS_ERR_DEPTH;
                goto done;
            }
            stack_push(&stack, *p == '{');
            p = js_skip_whitespace(p + 1, end);
            if (p < end && (*p == '}' || *p == ']')) {
                if ((*p == '}') != stack_top_is_object(&stack))
                    goto done;
                stack.depth--;
                p++;
                break;
            }
            if (stack_top_is_object(&stack))
                goto expect_key;
            continue;
        case '"': p = scan_string(p, end); break;
        case 't': p = scan_literal(p, end, "true", 4); break;
        case 'f': p = scan_literal(p, end, "false", 5); break;
        case 'n': p = scan_literal(p, end, "null", 4); break;
        default:
            if (*p == '-' || is_digit(*p)) {
                const char *after = scan_number(p, end);
                if (!after)
                    goto done;
                p = after;
                break;
            }
            goto done;
        }
        if (!p) {
            p = token;
            goto done;
        }

        /* After a value: close containers, or move to the next member. */
        for (;;) {
            if (child_start && stack.depth == 1) {
                index_child(index, child_key, child_start, p);
                child_start = NULL;
            }
            p = js_skip_whitespace(p, end);
            if (stack.depth == 0) {
                if (p != end)
                    goto done;
                if (value) {
                    const char *value_end = end;
                    while (value_end > value_start &&
                           (value_end[-1] == ' ' || value_end[-1] == '\t' ||
                            value_end[-1] == '\n' || value_end[-1] == '\r'))
                        value_end--;
                    value->start = value_start;
                    value->length = (size_t)(value_end - value_start);
                }
                status = 0;
                goto done;
            }
            if (p >= end)
                goto done;
            bool in_object = stack_top_is_object(&stack);
            if (*p == (in_object ? '}' : ']')) {
                stack.depth--;
                p++;
                continue;
            }
            if (*p != ',')
                goto done;
            p = js_skip_whitespace(p + 1, end);
            if (in_object)
                goto expect_key;
            break;
        }
        continue;

    expect_key:
        if (p >= end || *p != '"')
            goto done;
        const char *key = p;
        p = scan_string(p, end);
        if (!p) {
            p = key;
            goto done;
        }
        if (index && stack.depth == 1) {
            child_key.start = key;
            child_key.length = (size_t)(p - key);
        }
        p = js_skip_whitespace(p, end);
        if (p >= end || *p != ':')
            goto done;
        p = js_skip_whitespace(p + 1, end);
    }

done:
    if (stack.bits != small)
        free(stack.bits);
    if (status != 0 && error_offset)
        *error_offset = (size_t)((p ? p : end) - text);
    return status;
}
