/* SPDX-License-Identifier: MIT */
/*
 * The quick path of a check: for schemas of the plain kind most tools have (types, properties,
 * required, additionalProperties, bounds, enums of strings, items), the validated text is
 * checked where it lies, without building a tree. It only ever says "valid"; anything else
 * (a failure, or a value it is not sure of: escapes, 1.0 for an integer, a duplicate member)
 * goes to the full check, which finds and tells the failure. So it never changes a verdict.
 */
#include "schema/schema_internal.h"

#include <stdlib.h>
#include <string.h>

/* Properties a quick node may have: their presence is a bit of a 64-bit word. */
enum { QUICK_MAX_PROPERTIES = 64, QUICK_MAX_DEPTH = 64 };

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

bool sc_quick_node(const sc_node *node, int depth)
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
        if (!sc_quick_node(node->properties[i].node, depth + 1))
            return false;
    return (!node->additional_properties ||
            sc_quick_node(node->additional_properties, depth + 1)) &&
           (!node->items || sc_quick_node(node->items, depth + 1));
}

/* A number's text as a double, when it is short and plain enough to read the same both ways. */
static bool read_number(js_span value, double *out)
{
    char text[32];
    if (value.length >= 16) /* beyond 15 digits a double may round: the full check decides */
        return false;
    memcpy(text, value.start, value.length);
    text[value.length] = '\0';
    *out = strtod(text, NULL);
    return true;
}

static bool quick_number(const sc_node *node, js_span value)
{
    bool whole = !memchr(value.start, '.', value.length) &&
                 !memchr(value.start, 'e', value.length) && !memchr(value.start, 'E', value.length);
    if ((node->types & (SC_NUMBER | SC_INTEGER)) == SC_INTEGER && !whole)
        return false;
    if (!node->minimum.set && !node->maximum.set && !node->exclusive_minimum.set &&
        !node->exclusive_maximum.set)
        return true;
    double number;
    return read_number(value, &number) && (!node->minimum.set || number >= node->minimum.value) &&
           (!node->maximum.set || number <= node->maximum.value) &&
           (!node->exclusive_minimum.set || number > node->exclusive_minimum.value) &&
           (!node->exclusive_maximum.set || number < node->exclusive_maximum.value);
}

static bool quick_string(const sc_node *node, js_span value)
{
    const char *text = value.start + 1;
    size_t length = value.length - 2;
    if (memchr(text, '\\', length))
        return false;
    if (node->min_length.set || node->max_length.set) {
        size_t points = sc_code_points(text, length);
        if ((node->min_length.set && points < node->min_length.value) ||
            (node->max_length.set && points > node->max_length.value))
            return false;
    }
    if (!node->enum_values)
        return true;
    for (size_t i = 0; i < json_array_size(node->enum_values); i++) {
        const json_t *item = json_array_get(node->enum_values, i);
        if (json_is_string(item) && json_string_length(item) == length &&
            memcmp(json_string_value(item), text, length) == 0)
            return true;
    }
    return false;
}

static bool quick_value(const sc_node *node, js_span value);

static bool quick_object(const sc_node *node, js_span value)
{
    uint64_t seen = 0;
    js_iter members;
    js_span key, item;
    js_iter_init(&members, value);
    while (js_iter_next(&members, &key, &item)) {
        const char *name = key.start + 1;
        size_t length = key.length - 2;
        if (memchr(name, '\\', length))
            return false;
        size_t i = 0;
        while (i < node->property_count && (node->properties[i].length != length ||
                                            memcmp(node->properties[i].name, name, length) != 0))
            i++;
        const sc_node *child =
            i < node->property_count ? node->properties[i].node : node->additional_properties;
        if (i < node->property_count && (seen & (UINT64_C(1) << i)))
            return false; /* a member twice: the full check reads the last */
        if (i < node->property_count)
            seen |= UINT64_C(1) << i;
        if (child && !quick_value(child, item))
            return false;
    }
    for (size_t r = 0; r < json_array_size(node->required); r++) {
        const json_t *index = json_object_get(node->property_index,
                                              json_string_value(json_array_get(node->required, r)));
        if (!(seen & (UINT64_C(1) << json_integer_value(index))))
            return false;
    }
    return true;
}

static bool quick_array(const sc_node *node, js_span value)
{
    size_t count = 0;
    js_iter items;
    js_span item;
    js_iter_init(&items, value);
    while (js_iter_next(&items, NULL, &item)) {
        if (node->items && !quick_value(node->items, item))
            return false;
        count++;
    }
    return (!node->min_items.set || count >= node->min_items.value) &&
           (!node->max_items.set || count <= node->max_items.value);
}

static bool quick_value(const sc_node *node, js_span value)
{
    if (node->boolean >= 0)
        return node->boolean == 1;
    js_kind kind = js_kind_of(value);
    static const unsigned bits[] = {
        [JS_OBJECT] = SC_OBJECT, [JS_ARRAY] = SC_ARRAY,
        [JS_STRING] = SC_STRING, [JS_NUMBER] = SC_NUMBER | SC_INTEGER,
        [JS_TRUE] = SC_BOOLEAN,  [JS_FALSE] = SC_BOOLEAN,
        [JS_NULL] = SC_NULL,
    };
    if (node->types && !(node->types & bits[kind]))
        return false;
    if (node->enum_values && kind != JS_STRING)
        return false; /* true, false, null in an enum: the full check compares */
    switch (kind) {
    case JS_NUMBER: return quick_number(node, value);
    case JS_STRING: return quick_string(node, value);
    case JS_OBJECT: return quick_object(node, value);
    case JS_ARRAY: return quick_array(node, value);
    default: return true;
    }
}

bool sc_quick_valid(const json_schema *compiled, js_span value)
{
    return compiled->quick && quick_value(compiled->root, value);
}
