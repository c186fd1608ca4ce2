/* SPDX-License-Identifier: MIT */
/*
 * JSON values as JSON Schema sees them: 1 and 1.0 are the same number and both integers, a
 * string's length is counted in code points, uniqueness is found by hashing rather than by
 * comparing every pair (an array from a client may be long).
 */
#include "schema/schema_internal.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool sc_is_integer(const json_t *value)
{
    if (json_is_integer(value))
        return true;
    if (!json_is_real(value))
        return false;
    double number = json_real_value(value);
    return isfinite(number) && floor(number) == number;
}

bool sc_has_type(const json_t *value, unsigned types)
{
    switch (json_typeof(value)) {
    case JSON_NULL: return types & SC_NULL;
    case JSON_TRUE:
    case JSON_FALSE: return types & SC_BOOLEAN;
    case JSON_OBJECT: return types & SC_OBJECT;
    case JSON_ARRAY: return types & SC_ARRAY;
    case JSON_STRING: return types & SC_STRING;
    case JSON_INTEGER:
    case JSON_REAL: return (types & SC_NUMBER) || ((types & SC_INTEGER) && sc_is_integer(value));
    }
    return false;
}

static bool numbers_equal(const json_t *a, const json_t *b)
{
    if (json_is_integer(a) && json_is_integer(b))
        return json_integer_value(a) == json_integer_value(b);
    return json_number_value(a) == json_number_value(b);
}

bool sc_equal(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return numbers_equal(a, b);
    if (json_typeof(a) != json_typeof(b))
        return false;
    if (json_is_array(a)) {
        size_t count = json_array_size(a);
        if (count != json_array_size(b))
            return false;
        for (size_t i = 0; i < count; i++)
            if (!sc_equal(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b))
            return false;
        const char *key;
        size_t key_length;
        json_t *item;
        json_object_keylen_foreach((json_t *)a, key, key_length, item)
        {
            const json_t *other = json_object_getn(b, key, key_length);
            if (!other || !sc_equal(item, other))
                return false;
        }
        return true;
    }
    if (json_is_string(a))
        return json_string_length(a) == json_string_length(b) &&
               memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
    return true; /* null, true, false: the type says it all */
}

static uint64_t mix(uint64_t hash, uint64_t word)
{
    hash ^= word + 0x9e3779b97f4a7c15u + (hash << 6) + (hash >> 2);
    return hash;
}

static uint64_t bytes_hash(const char *bytes, size_t length)
{
    uint64_t hash = 1469598103934665603u;
    for (size_t i = 0; i < length; i++)
        hash = (hash ^ (unsigned char)bytes[i]) * 1099511628211u;
    return hash;
}

/* A hash equal values share (members in any order, 1 and 1.0 alike). */
static uint64_t value_hash(const json_t *value)
{
    switch (json_typeof(value)) {
    case JSON_INTEGER:
    case JSON_REAL: {
        double number = json_number_value(value);
        if (number == 0)
            number = 0; /* -0.0 equals 0 */
        uint64_t bits;
        memcpy(&bits, &number, sizeof bits);
        return mix(5, bits);
    }
    case JSON_STRING:
        return mix(6, bytes_hash(json_string_value(value), json_string_length(value)));
    case JSON_ARRAY: {
        uint64_t hash = 7;
        for (size_t i = 0; i < json_array_size(value); i++)
            hash = mix(hash, value_hash(json_array_get(value, i)));
        return hash;
    }
    case JSON_OBJECT: {
        uint64_t hash = 8;
        const char *key;
        size_t key_length;
        json_t *item;
        json_object_keylen_foreach((json_t *)value, key, key_length, item)
        {
            /* Summed, so that the members' order does not count. */
            hash += mix(bytes_hash(key, key_length), value_hash(item));
        }
        return hash;
    }
    default: return (uint64_t)json_typeof(value);
    }
}

typedef struct hashed {
    uint64_t hash;
    size_t index;
} hashed;

static int by_hash(const void *a, const void *b)
{
    const hashed *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

int sc_all_unique(const json_t *array, size_t *first, size_t *second)
{
    size_t count = json_array_size(array);
    if (count < 2)
        return 1;
    hashed *items = malloc(count * sizeof *items);
    if (!items)
        return -1;
    for (size_t i = 0; i < count; i++)
        items[i] = (hashed){value_hash(json_array_get(array, i)), i};
    qsort(items, count, sizeof *items, by_hash);
    int unique = 1;
    for (size_t i = 0; i < count && unique; i++)
        for (size_t j = i + 1; j < count && items[j].hash == items[i].hash; j++)
            if (sc_equal(json_array_get(array, items[i].index),
                         json_array_get(array, items[j].index))) {
                *first = items[i].index;
                *second = items[j].index;
                unique = 0;
                break;
            }
    free(items);
    return unique;
}

bool sc_multiple_of(const json_t *value, double divisor)
{
    if (json_is_integer(value) && floor(divisor) == divisor && divisor <= 9007199254740992.0) {
        json_int_t whole = (json_int_t)divisor;
        return json_integer_value(value) % whole == 0;
    }
    double quotient = json_number_value(value) / divisor;
    if (!isfinite(quotient))
        return false;
    /* Decimal divisors (0.01) have no exact binary form: a quotient within a few ulps of a
     * whole number is taken as one. */
    double nearest = round(quotient);
    return fabs(quotient - nearest) <= 1e-9 * fmax(1.0, fabs(nearest));
}

size_t sc_code_points(const char *text, size_t length)
{
    size_t count = 0;
    for (size_t i = 0; i < length; i++)
        count += ((unsigned char)text[i] & 0xC0) != 0x80;
    return count;
}

const char *sc_printable(const char *text, char *out, size_t size)
{
    size_t length = 0;
    for (; text[length] && length + 1 < size; length++) {
        unsigned char c = (unsigned char)text[length];
        out[length] = c < 0x20 || c == 0x7f ? '?' : (char)c;
    }
    while (text[length] && length > 0 && ((unsigned char)text[length] & 0xC0) == 0x80)
        length--; /* cut before a character's continuation bytes */
    out[length] = '\0';
    return out;
}

void sc_describe(const json_t *value, char *out, size_t size)
{
    char *text = json_dumps(value, JSON_ENCODE_ANY | JSON_COMPACT);
    if (!text) {
        snprintf(out, size, "(a value)");
        return;
    }
    size_t length = strlen(text);
    if (length < size) {
        memcpy(out, text, length + 1);
    } else if (size > 4) {
        size_t keep = size - 4;
        while (keep > 0 && ((unsigned char)text[keep] & 0xC0) == 0x80)
            keep--; /* cut after a whole character */
        memcpy(out, text, keep);
        memcpy(out + keep, "...", 4);
    } else if (size > 0) {
        out[0] = '\0';
    }
    free(text);
}

/* A validated number's span as jansson's integer when it is one that fits, else its real. */
static json_t *number_from_span(js_span number)
{
    char small[64];
    char *text = number.length < sizeof small ? small : malloc(number.length + 1);
    if (!text)
        return NULL;
    memcpy(text, number.start, number.length);
    text[number.length] = '\0';
    json_t *value = NULL;
    if (!strpbrk(text, ".eE")) {
        errno = 0;
        long long whole = strtoll(text, NULL, 10);
        if (errno == 0)
            value = json_integer((json_int_t)whole);
    }
    if (!value) {
        /* Beyond a double's range (1e400): the largest one, which compares as the number does
         * against any bound a schema can write. */
        double real = strtod(text, NULL);
        value = json_real(isfinite(real) ? real : real > 0 ? DBL_MAX : -DBL_MAX);
    }
    if (text != small)
        free(text);
    return value;
}

/* A validated string's span decoded, as jansson's string (new), or NULL. */
static json_t *string_from_span(js_span string)
{
    /* Most strings hold no escape: their bytes between the quotes are the string. */
    if (!memchr(string.start + 1, '\\', string.length - 2))
        return json_stringn_nocheck(string.start + 1, string.length - 2);
    char small[256];
    size_t needed = js_string_decoded_length(string), length;
    char *text = needed <= sizeof small ? small : malloc(needed + 1);
    if (!text)
        return NULL;
    json_t *value = js_string_decode(string, text, needed ? needed : 1, &length) == 0
                        ? json_stringn_nocheck(text, length)
                        : NULL;
    if (text != small)
        free(text);
    return value;
}

static json_t *container_from_span(js_span container);

json_t *sc_tree_from_span(js_span value)
{
    switch (js_kind_of(value)) {
    case JS_OBJECT:
    case JS_ARRAY: return container_from_span(value);
    case JS_STRING: return string_from_span(value);
    case JS_NUMBER: return number_from_span(value);
    case JS_TRUE: return json_true();
    case JS_FALSE: return json_false();
    case JS_NULL: return json_null();
    }
    return NULL;
}

/* An object's or array's members built in turn; the last of a duplicated key counts, as with
 * json_loadb. Recursion is bounded by the depth the caller validated the text at. */
static json_t *container_from_span(js_span container)
{
    bool object = js_kind_of(container) == JS_OBJECT;
    json_t *out = object ? json_object() : json_array();
    js_iter items;
    js_span key, item;
    js_iter_init(&items, container);
    while (out && js_iter_next(&items, &key, &item)) {
        json_t *child = sc_tree_from_span(item);
        json_t *name = child && object ? string_from_span(key) : NULL;
        int failed = !child || (object && !name);
        if (!failed && object)
            failed = json_object_setn_new_nocheck(out, json_string_value(name),
                                                  json_string_length(name), child) != 0;
        else if (!failed)
            failed = json_array_append_new(out, child) != 0;
        else
            json_decref(child);
        json_decref(name);
        if (failed) {
            json_decref(out);
            out = NULL;
        }
    }
    return out;
}
