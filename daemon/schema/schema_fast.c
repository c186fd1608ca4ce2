/* SPDX-License-Identifier: MIT */
/*
 * The quick path of a check: for schemas of the plain kind most tools have (types, properties,
 * required, additionalProperties, bounds, enums of strings, items), the validated text is
 * checked in one pass where it lies, each byte read once, without building a tree. It only
 * ever says "valid"; anything else (a failure, or a value it is not sure of: escapes, 1.0 or
 * 1e2 for an integer, a number of more than 18 digits, a duplicate member) goes to the full
 * check, which finds and tells the failure. So it never changes a verdict nor its detail.
 */
#include "schema/schema_internal.h"

#include <stdlib.h>
#include <string.h>

/* Properties a quick node may have: their presence is a bit of a 64-bit word. */
enum { QUICK_MAX_PROPERTIES = 64, QUICK_MAX_DEPTH = 64, QUICK_SLOTS = 128 };

/* A name the quick path compares: its first 8 bytes as a word (zero beyond its end), so that
 * most names compare in one step. */
typedef struct quick_name {
    uint64_t word; /* its first bytes, at most 8 */
    size_t length;
    const char *text;      /* borrowed from the schema's document */
    uint64_t quoted, mask; /* its bytes and a closing quote, and their bits (is_plain_name) */
} quick_name;

/* What a quick node's check needs, made at compile from its keywords. */
struct sc_quick {
    uint64_t required;                /* the bits of the properties that must be there */
    unsigned types;                   /* the node's types, or all of them when it has none */
    bool enum_words;                  /* an enum, and no length to count: is_plain_name first */
    unsigned char slots[QUICK_SLOTS]; /* a property's index + 1 by name_slot, 0: none */
    size_t enum_count;
    quick_name *enum_strings; /* into names, after the properties */
    quick_name names[];       /* the properties' names, one never found, the enum's strings */
};

/* Words of 8 bytes read where the text allows, on the machines whose first byte is the low one
 * (the masks below keep a name's first bytes); elsewhere a byte at a time. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define QUICK_WORDS 1
#else
#define QUICK_WORDS 0
#endif

/* The steps every byte goes through, written once and inlined where they run: a call each
 * would cost as much as the step. */
#define QUICK_STEP static inline __attribute__((always_inline))

static const uint64_t ones = UINT64_C(0x0101010101010101), highs = UINT64_C(0x8080808080808080);

/*
 * The 8 bytes of text from p on, those past end zero. The 8 bytes before end can always be
 * read (sc_quick_valid sees to it), so that the last ones of a text are read as a word too.
 */
QUICK_STEP uint64_t load_word(const char *p, const char *end)
{
    uint64_t word;
    if (end - p >= 8) {
        memcpy(&word, p, 8);
        return word;
    }
    if (p >= end)
        return 0;
    memcpy(&word, end - 8, 8);
    return word >> (8 * (8 - (end - p)));
}

/* The first bytes (at most 8) of a name as a word, zero beyond them; end: where the text it
 * lies in ends (load_word), or NULL for a name of the schema's, read a byte at a time. */
QUICK_STEP uint64_t name_word(const char *name, size_t length, const char *end)
{
    uint64_t word = 0;
    if (QUICK_WORDS && end) {
        word = load_word(name, end);
        return length >= 8 ? word : word & ((UINT64_C(1) << (8 * length)) - 1);
    }
    memcpy(&word, name, length < 8 ? length : 8);
    return word;
}

QUICK_STEP unsigned name_slot(uint64_t word, size_t length)
{
    return (unsigned)(((word + length) * UINT64_C(0x9E3779B97F4A7C15)) >> 57);
}

QUICK_STEP bool same_name(const quick_name *known, uint64_t word, const char *name, size_t length)
{
    return known->word == word && known->length == length &&
           (length <= 8 || memcmp(known->text + 8, name + 8, length - 8) == 0);
}

static bool plain_enum(const json_t *values)
{
    for (size_t i = 0; i < json_array_size(values); i++) {
        const json_t *item = json_array_get(values, i);
        if (!json_is_string(item) && !json_is_boolean(item) && !json_is_null(item))
            return false;
    }
    return true;
}

static bool required_are_properties(const sc_node *node)
{
    for (size_t i = 0; i < json_array_size(node->required); i++) {
        const char *name = json_string_value(json_array_get(node->required, i));
        if (!node->property_index || !json_object_get(node->property_index, name))
            return false;
    }
    return true;
}

static bool quick_node(const sc_node *node, int depth)
{
    if (node->boolean >= 0)
        return true;
    if (depth > QUICK_MAX_DEPTH || node->pattern || node->pattern_property_count ||
        node->property_names || node->const_value || node->multiple_of.set ||
        node->prefix_items.count || node->all_of.count || node->any_of.count ||
        node->one_of.count || node->not_schema || node->if_schema || node->then_schema ||
        node->else_schema || node->ref || node->dynamic_ref || node->unevaluated_properties ||
        node->unevaluated_items || node->dependent_required_count || node->dependent_schema_count ||
        node->contains || node->unique_items || node->min_properties.set ||
        node->max_properties.set || node->format != SC_FORMAT_NONE ||
        node->property_count > QUICK_MAX_PROPERTIES ||
        (node->enum_values && !plain_enum(node->enum_values)) || !required_are_properties(node))
        return false;
    for (size_t i = 0; i < node->property_count; i++)
        if (!quick_node(node->properties[i].node, depth + 1))
            return false;
    return (!node->additional_properties || quick_node(node->additional_properties, depth + 1)) &&
           (!node->items || quick_node(node->items, depth + 1));
}

static quick_name quick_name_of(const char *text, size_t length)
{
    quick_name name = {name_word(text, length, NULL), length, text, 1, 0}; /* 1, 0: never plain */
    unsigned char quoted[8] = {0}, mask[8] = {0};
    if (length < 8 && !memchr(text, '"', length) && !memchr(text, '\\', length)) {
        memcpy(quoted, text, length);
        quoted[length] = '"';
        memset(mask, 0xFF, length + 1);
        memcpy(&name.quoted, quoted, 8);
        memcpy(&name.mask, mask, 8);
    }
    return name;
}

static sc_quick *quick_for(const sc_node *node)
{
    size_t strings = json_array_size(node->enum_values);
    sc_quick *quick =
        calloc(1, sizeof *quick + (node->property_count + 1 + strings) * sizeof quick->names[0]);
    if (!quick)
        return NULL;
    for (size_t i = 0; i < node->property_count; i++) {
        quick->names[i] = quick_name_of(node->properties[i].name, node->properties[i].length);
        unsigned slot = name_slot(quick->names[i].word, quick->names[i].length);
        while (quick->slots[slot]) /* at most 64 of 128 taken: a free one comes */
            slot = (slot + 1) & (QUICK_SLOTS - 1);
        quick->slots[slot] = (unsigned char)(i + 1);
    }
    for (size_t r = 0; r < json_array_size(node->required); r++) {
        const json_t *index = json_object_get(node->property_index,
                                              json_string_value(json_array_get(node->required, r)));
        quick->required |= UINT64_C(1) << json_integer_value(index);
    }
    quick->types = node->types ? node->types : ~0u;
    quick->enum_words = node->enum_values && !node->min_length.set && !node->max_length.set;
    /* After the properties, a name that is_plain_name never finds: no bound to test there. */
    quick->names[node->property_count] = (quick_name){.quoted = 1};
    quick->enum_strings = quick->names + node->property_count + 1;
    for (size_t i = 0; i < strings; i++) {
        const json_t *item = json_array_get(node->enum_values, i);
        if (json_is_string(item))
            quick->enum_strings[quick->enum_count++] =
                quick_name_of(json_string_value(item), json_string_length(item));
    }
    return quick;
}

void sc_quick_prepare(json_schema *compiled)
{
    compiled->quick = quick_node(compiled->root, 0);
    /* Every node the check can reach has at most 64 properties; one it cannot (in $defs) may
     * have more, and no table, which a table of 128 slots could not hold. */
    for (size_t i = 0; compiled->quick && i < compiled->node_count; i++)
        if (compiled->nodes[i]->boolean < 0 &&
            compiled->nodes[i]->property_count <= QUICK_MAX_PROPERTIES &&
            !(compiled->nodes[i]->quick = quick_for(compiled->nodes[i])))
            compiled->quick = false; /* no memory: the full check does it all */
}

/*
 * Whether the text at name (after a quote) is a known name of at most 7 bytes, none a quote or
 * a backslash, then its closing quote: one comparison, and no escape can be there. The name
 * most likely is tried so before a string is searched for its end.
 */
QUICK_STEP bool is_plain_name(const quick_name *known, const char *name, const char *end)
{
    return QUICK_WORDS && (load_word(name, end) & known->mask) == known->quoted;
}

/* The property of node named by the bytes (no escape in them; word: name_word's), or -1. */
static int property_of(const sc_node *node, uint64_t word, const char *name, size_t length)
{
    const sc_quick *quick = node->quick;
    for (unsigned slot = name_slot(word, length);; slot = (slot + 1) & (QUICK_SLOTS - 1)) {
        unsigned taken = quick->slots[slot];
        if (!taken)
            return -1;
        if (same_name(&quick->names[taken - 1], word, name, length))
            return (int)taken - 1;
    }
}

/* Where the first '"' or '\\' is in a word of text: its byte, or 8 when neither is there. The
 * lowest flag of a zero byte found this way is never a false one. */
QUICK_STEP unsigned quote_or_escape(uint64_t word)
{
    uint64_t quote = word ^ (ones * '"'), escape = word ^ (ones * '\\');
    uint64_t found = (((quote - ones) & ~quote) | ((escape - ones) & ~escape)) & highs;
    return found ? (unsigned)__builtin_ctzll(found) / 8 : 8;
}

/*
 * From p, just after a string's opening quote, to its closing quote: returns that quote, or
 * NULL at an escape (decoded, the string may be other bytes: the full check decodes).
 * *ascii says whether every byte is ASCII, so that its length is its count of code points.
 */
QUICK_STEP const char *string_close(const char *p, const char *end, bool *ascii)
{
    uint64_t high = 0;
    while (QUICK_WORDS) { /* the closing quote comes before end */
        uint64_t word = load_word(p, end);
        unsigned at = quote_or_escape(word);
        if (at < 8) {
            *ascii = !((high | word) & highs & ((UINT64_C(1) << (8 * at)) - 1));
            return p[at] == '"' ? p + at : NULL;
        }
        high |= word;
        p += 8;
    }
    for (; *p != '"'; p++) {
        if (*p == '\\')
            return NULL;
        high |= (unsigned char)*p & 0x80;
    }
    *ascii = !high;
    return p;
}

/*
 * Inside a container the text is valid JSON: a byte at most ' ' between tokens is white space,
 * and a closing bracket always comes, so no end is needed.
 */
QUICK_STEP const char *skip_space(const char *p)
{
    while ((unsigned char)*p <= ' ')
        p++;
    return p;
}

/* The end of any valid value at p, unchecked (a true schema, or no schema for it). */
static const char *skip_value(const char *p, const char *end)
{
    size_t depth = 0;
    do {
        char c = *p;
        if (c == '"') {
            for (p++; *p != '"'; p++)
                p += *p == '\\';
            p++;
        } else if (c == '{' || c == '[') {
            depth++;
            p++;
        } else if (c == '}' || c == ']') {
            depth--;
            p++;
        } else if (depth == 0) { /* a scalar alone: to its end */
            while (p < end && *p != ',' && *p != '}' && *p != ']' && (unsigned char)*p > ' ')
                p++;
        } else {
            p++;
        }
    } while (depth > 0);
    return p;
}

/* A number at p: its end when it passes for sure, else NULL. Integers of up to 18 digits are
 * exact in 64 bits and compared as the full check compares them, as doubles. */
static const char *quick_number(const sc_node *node, const char *p, const char *end)
{
    bool negative = *p == '-';
    const char *digits = p + negative;
    uint64_t magnitude = 0;
    for (p = digits; p < end && *p >= '0' && *p <= '9'; p++)
        magnitude = magnitude * 10 + (uint64_t)(*p - '0');
    if (p - digits > 18)
        return NULL; /* beyond 64 bits, or beyond a double (not an integer then): the full check */
    bool bounded = node->minimum.set || node->maximum.set || node->exclusive_minimum.set ||
                   node->exclusive_maximum.set;
    if (p < end && (*p == '.' || *p == 'e' || *p == 'E')) {
        /* A fraction or an exponent: an integer or not, and its value, are the full check's. */
        if ((node->types && !(node->types & SC_NUMBER)) || bounded)
            return NULL;
        while (p < end && *p != ',' && *p != '}' && *p != ']' && (unsigned char)*p > ' ')
            p++;
        return p;
    }
    if (node->types && !(node->types & (SC_NUMBER | SC_INTEGER)))
        return NULL;
    if (!bounded)
        return p;
    double number = negative ? -(double)magnitude : (double)magnitude;
    bool within = (!node->minimum.set || number >= node->minimum.value) &&
                  (!node->maximum.set || number <= node->maximum.value) &&
                  (!node->exclusive_minimum.set || number > node->exclusive_minimum.value) &&
                  (!node->exclusive_maximum.set || number < node->exclusive_maximum.value);
    return within ? p : NULL;
}

QUICK_STEP const char *quick_string(const sc_node *node, const char *p, const char *end)
{
    const char *text = p + 1;
    const sc_quick *quick = node->quick;
    if (!(quick->types & SC_STRING))
        return NULL;
    if (quick->enum_words)
        for (size_t i = 0; i < quick->enum_count; i++)
            if (is_plain_name(&quick->enum_strings[i], text, end))
                return text + quick->enum_strings[i].length + 1;
    bool ascii;
    if (!(p = string_close(text, end, &ascii)))
        return NULL;
    size_t length = (size_t)(p - text), points = length;
    if (!ascii && (node->min_length.set || node->max_length.set))
        points = sc_code_points(text, length);
    if ((node->min_length.set && points < node->min_length.value) ||
        (node->max_length.set && points > node->max_length.value))
        return NULL;
    if (!node->enum_values)
        return p + 1;
    uint64_t word = name_word(text, length, end);
    for (size_t i = 0; i < quick->enum_count; i++)
        if (same_name(&quick->enum_strings[i], word, text, length))
            return p + 1;
    return NULL;
}

static const char *quick_object(const sc_node *node, const char *p, const char *end);
static const char *quick_array(const sc_node *node, const char *p, const char *end);

/* The value at p against node: the byte after it when it passes for sure, else NULL. Inlined
 * into the loops over members and items, so that only a nested container costs a call. */
QUICK_STEP const char *quick_value(const sc_node *node, const char *p, const char *end)
{
    if (node->boolean >= 0)
        return node->boolean == 1 ? skip_value(p, end) : NULL;
    char first = *p;
    if (first == '"')
        return quick_string(node, p, end);
    if (node->enum_values)
        return NULL; /* true, false, null in an enum: the full check compares */
    switch (first) {
    case '{': return quick_object(node, p, end);
    case '[': return quick_array(node, p, end);
    case 't': return node->quick->types & SC_BOOLEAN ? p + 4 : NULL;
    case 'f': return node->quick->types & SC_BOOLEAN ? p + 5 : NULL;
    case 'n': return node->quick->types & SC_NULL ? p + 4 : NULL;
    default: return quick_number(node, p, end);
    }
}

static const char *quick_object(const sc_node *node, const char *p, const char *end)
{
    const sc_quick *quick = node->quick;
    if (!(quick->types & SC_OBJECT))
        return NULL;
    uint64_t seen = 0;
    size_t next = 0; /* members mostly come in the order of "properties" */
    p = skip_space(p + 1);
    while (*p != '}') {
        const char *name = p + 1;
        int index = (int)next;
        if (is_plain_name(&quick->names[next], name, end)) {
            p = name + quick->names[next].length;
        } else {
            bool ascii;
            if (!(p = string_close(name, end, &ascii)))
                return NULL; /* which property it names is the full check's to decode */
            size_t length = (size_t)(p - name);
            index = property_of(node, name_word(name, length, end), name, length);
        }
        const sc_node *child = node->additional_properties;
        if (index >= 0) {
            next = (size_t)index + 1;
            if (seen & (UINT64_C(1) << index))
                return NULL; /* a member twice: the full check reads the last */
            seen |= UINT64_C(1) << index;
            child = node->properties[index].node;
        }
        p = skip_space(skip_space(p + 1) + 1); /* the colon between white space */
        p = child ? quick_value(child, p, end) : skip_value(p, end);
        if (!p)
            return NULL;
        p = skip_space(p);
        if (*p == ',')
            p = skip_space(p + 1);
    }
    return (seen & quick->required) == quick->required ? p + 1 : NULL;
}

static const char *quick_array(const sc_node *node, const char *p, const char *end)
{
    if (!(node->quick->types & SC_ARRAY))
        return NULL;
    size_t count = 0;
    p = skip_space(p + 1);
    while (*p != ']') {
        p = node->items ? quick_value(node->items, p, end) : skip_value(p, end);
        if (!p)
            return NULL;
        count++;
        p = skip_space(p);
        if (*p == ',')
            p = skip_space(p + 1);
    }
    return (!node->min_items.set || count >= node->min_items.value) &&
                   (!node->max_items.set || count <= node->max_items.value)
               ? p + 1
               : NULL;
}

bool sc_quick_valid(const json_schema *compiled, js_span value)
{
    if (!compiled->quick || value.length == 0)
        return false;
    /* A value shorter than a word is read from a copy with room before it (load_word). */
    char copy[16] = {0};
    const char *start = value.start;
    if (value.length < 8) {
        memcpy(copy + 8, value.start, value.length);
        start = copy + 8;
    }
    const char *end = start + value.length;
    return quick_value(compiled->root, start, end) == end;
}
