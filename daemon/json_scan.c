/* SPDX-License-Identifier: MIT */
/*
 * Strict JSON validation without a tree: an explicit stack of container kinds instead of
 * recursion, so hostile nesting costs memory in bits, never stack frames.
 */
#include "json_scan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_whitespace(const char *p, const char *end)
{
    /* Every whitespace byte is at most a space; compact JSON has none, and leaves at the first
     * test. */
    while (p < end && (unsigned char)*p <= ' ' &&
           (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

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

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
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
                    if (hex_value(p[i]) < 0)
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
    const char *p = skip_whitespace(text, end);
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
            p = skip_whitespace(p + 1, end);
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
            p = skip_whitespace(p, end);
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
            p = skip_whitespace(p + 1, end);
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
        p = skip_whitespace(p, end);
        if (p >= end || *p != ':')
            goto done;
        p = skip_whitespace(p + 1, end);
    }

done:
    if (stack.bits != small)
        free(stack.bits);
    if (status != 0 && error_offset)
        *error_offset = (size_t)((p ? p : end) - text);
    return status;
}

/* End of the validated value starting at p. */
static const char *value_end(const char *p, const char *end)
{
    if (*p == '"')
        return scan_string(p, end);
    if (*p == '{' || *p == '[') {
        size_t depth = 0;
        while (p < end) {
            char c = *p;
            if (c == '"') {
                p = scan_string(p, end);
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
    const char *p = skip_whitespace(iter->position, iter->end);
    if (p < iter->end && *p == ',')
        p = skip_whitespace(p + 1, iter->end);
    if (p >= iter->end)
        return 0;
    if (iter->is_object) {
        const char *key_end = scan_string(p, iter->end);
        if (key) {
            key->start = p;
            key->length = (size_t)(key_end - p);
        }
        p = skip_whitespace(key_end, iter->end);
        p = skip_whitespace(p + 1, iter->end); /* the colon */
    }
    const char *after = value_end(p, iter->end);
    value->start = p;
    value->length = (size_t)(after - p);
    iter->position = after;
    return 1;
}

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
    return (uint32_t)(hex_value(p[0]) << 12 | hex_value(p[1]) << 8 | hex_value(p[2]) << 4 |
                      hex_value(p[3]));
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
