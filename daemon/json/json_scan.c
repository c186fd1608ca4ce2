/* SPDX-License-Identifier: MIT */
/*
 * Strict JSON validation without a tree: the token scanners (strings with their UTF-8, numbers,
 * literals) and the validator, with an explicit stack of container kinds instead of recursion,
 * so hostile nesting costs memory in bits, never stack frames.
 */
#include "json/json_scan.h"

#include "json/json_scan_internal.h"

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
 * byte, and the value is 0 exactly when all eight are plain. It takes a large string in less than
 * half the instructions of a byte loop (bench/README.md, "Figures behind design choices"), and
 * finds the end of a short one in one step.
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

/*
 * What the text must hold next. The steps below return one of these, or a JS_ERR_* status with
 * the position left at the problem.
 */
enum next {
    NEXT_VALUE,       /* a value: at the start, after '[', after a colon or an array's comma */
    NEXT_KEY,         /* a member's key: after '{' or an object's comma */
    NEXT_AFTER_VALUE, /* a comma, a closing bracket, or the end of the text */
    NEXT_END,         /* nothing: the text was one valid value */
};

/* The state the steps of one validation share. */
typedef struct validator {
    const char *end;
    size_t max_depth;
    kind_stack stack;
    js_index *index;         /* NULL when no children are noted */
    js_span child_key;       /* the key of the top-level member being read */
    const char *child_start; /* a child of the top-level container is being read from here */
} validator;

/*
 * The steps are inlined into js_validate_indexed, the daemon's hottest loop: as calls, they
 * would pass the position through memory at every token.
 */

/* A '{' or '[' at *position: opens it, and closes it again at once when it is empty. */
static inline int open_container(validator *v, const char **position)
{
    const char *p = *position;
    if (v->stack.depth >= v->max_depth)
        return JS_ERR_DEPTH;
    stack_push(&v->stack, *p == '{');
    p = js_skip_whitespace(p + 1, v->end);
    *position = p;
    if (p < v->end && (*p == '}' || *p == ']')) {
        if ((*p == '}') != stack_top_is_object(&v->stack))
            return JS_ERR_SYNTAX;
        v->stack.depth--;
        *position = p + 1;
        return NEXT_AFTER_VALUE;
    }
    return stack_top_is_object(&v->stack) ? NEXT_KEY : NEXT_VALUE;
}

/* A string, number or literal at p: returns the byte after it, or NULL when there is none. */
static inline const char *scan_scalar(const char *p, const char *end)
{
    switch (*p) {
    case '"': return scan_string(p, end);
    case 't': return scan_literal(p, end, "true", 4);
    case 'f': return scan_literal(p, end, "false", 5);
    case 'n': return scan_literal(p, end, "null", 4);
    default: return *p == '-' || is_digit(*p) ? scan_number(p, end) : NULL;
    }
}

/*
 * After a value ending at *position: notes a finished child of the top-level container, closes
 * the containers that end here, and steps over the comma to the next member or element.
 */
static inline int after_value(validator *v, const char **position)
{
    const char *p = *position;
    for (;;) {
        if (v->child_start && v->stack.depth == 1) {
            index_child(v->index, v->child_key, v->child_start, p);
            v->child_start = NULL;
        }
        p = js_skip_whitespace(p, v->end);
        *position = p;
        if (v->stack.depth == 0)
            return p == v->end ? NEXT_END : JS_ERR_SYNTAX;
        if (p >= v->end)
            return JS_ERR_SYNTAX;
        bool in_object = stack_top_is_object(&v->stack);
        if (*p == (in_object ? '}' : ']')) {
            v->stack.depth--;
            p++;
            continue;
        }
        if (*p != ',')
            return JS_ERR_SYNTAX;
        *position = js_skip_whitespace(p + 1, v->end);
        return in_object ? NEXT_KEY : NEXT_VALUE;
    }
}

/* A member's key at *position and its colon: steps to the member's value. */
static inline int read_key(validator *v, const char **position)
{
    const char *key = *position;
    if (key >= v->end || *key != '"')
        return JS_ERR_SYNTAX;
    const char *p = scan_string(key, v->end);
    if (!p)
        return JS_ERR_SYNTAX; /* reported at the start of the key */
    if (v->index && v->stack.depth == 1) {
        v->child_key.start = key;
        v->child_key.length = (size_t)(p - key);
    }
    p = js_skip_whitespace(p, v->end);
    *position = p;
    if (p >= v->end || *p != ':')
        return JS_ERR_SYNTAX;
    *position = js_skip_whitespace(p + 1, v->end);
    return NEXT_VALUE;
}

/* The span of the value from start to the end of the text, without whitespace after it. */
static js_span trimmed_value(const char *start, const char *end)
{
    while (end > start && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r'))
        end--;
    return (js_span){start, (size_t)(end - start)};
}

int js_validate_indexed(const char *text, size_t length, size_t max_depth, js_span *value,
                        size_t *error_offset, js_index *index)
{
    unsigned char small[64]; /* enough for 512 levels without touching the heap */
    validator v = {
        .end = text + length, .max_depth = max_depth, .stack = {small, 0}, .index = index};
    if (index)
        index->count = 0;
    const char *p = js_skip_whitespace(text, v.end);
    const char *value_start = p;
    int next = NEXT_VALUE;

    if (max_depth > sizeof small * 8) {
        v.stack.bits = malloc(max_depth / 8 + 1);
        if (!v.stack.bits)
            next = JS_ERR_NO_MEMORY;
    }

    /* One value a turn, then what follows it up to the next value. */
    while (next == NEXT_VALUE) {
        if (p >= v.end) {
            next = JS_ERR_SYNTAX;
            break;
        }
        if (index && v.stack.depth == 1)
            v.child_start = p;
        if (*p == '{' || *p == '[') {
            next = open_container(&v, &p);
            if (next == NEXT_VALUE)
                continue;
            if (next == NEXT_KEY)
                goto key;
            if (next < 0)
                break;
        } else {
            const char *after = scan_scalar(p, v.end);
            if (!after) {
                next = JS_ERR_SYNTAX; /* reported at the start of the token */
                break;
            }
            p = after;
        }
        next = after_value(&v, &p);
        if (next != NEXT_KEY)
            continue;
    key:
        next = read_key(&v, &p);
    }

    if (v.stack.bits != small)
        free(v.stack.bits);
    if (next == NEXT_END) {
        if (value)
            *value = trimmed_value(value_start, v.end);
        return 0;
    }
    if (error_offset)
        *error_offset = (size_t)(p - text);
    return next;
}
