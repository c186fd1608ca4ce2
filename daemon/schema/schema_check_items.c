/* SPDX-License-Identifier: MIT */
/*
 * The keywords about an object's members and an array's items, the unevaluated ones, and the
 * tracker of what was evaluated that those read.
 */
#include "schema/schema_check.h"

#include <stdlib.h>
#include <string.h>

void sc_eval_init(sc_eval *eval, const json_t *value)
{
    *eval = (sc_eval){NULL, NULL, 0, false};
    if (!json_is_object(value) && !json_is_array(value))
        return;
    eval->value = value;
    eval->count = json_is_object(value) ? json_object_size(value) : json_array_size(value);
    eval->seen = calloc(eval->count + 1, sizeof *eval->seen);
    eval->no_memory = !eval->seen;
}

void sc_eval_fini(sc_eval *eval)
{
    free(eval->seen);
    eval->seen = NULL;
}

void sc_eval_merge(sc_eval *into, const sc_eval *from)
{
    if (!into || !into->seen || !from->seen || into->value != from->value)
        return;
    for (size_t i = 0; i < into->count; i++)
        into->seen[i] |= from->seen[i];
}

void sc_eval_mark(sc_eval *eval, size_t index)
{
    if (eval && eval->seen && index < eval->count)
        eval->seen[index] = true;
}

/* A subschema applied to a member or an item (path: key, or index when key is NULL). A false
 * subschema fails under the keyword that applied it, which says more than "false". */
static bool check_child(sc_check *check, const char *keyword, const sc_node *node,
                        const json_t *child, const char *key, size_t index)
{
    if (node->boolean == 1)
        return true;
    if (sc_path_push(check, key, index) != 0)
        return false;
    bool valid;
    if (node->boolean == 0) {
        sc_fail(check, keyword, "no such %s here", key ? "member" : "item");
        valid = false;
    } else {
        valid = sc_check_node(check, node, child, NULL);
    }
    check->path_count--;
    return valid;
}

static bool check_required(sc_check *check, const json_t *names, const json_t *value,
                           const char *keyword)
{
    for (size_t i = 0; i < json_array_size(names); i++) {
        const json_t *name = json_array_get(names, i);
        char shown[160];
        if (!json_object_getn(value, json_string_value(name), json_string_length(name)))
            return sc_fail(check, keyword, "a member \"%s\"",
                           sc_printable(json_string_value(name), shown, sizeof shown)),
                   false;
    }
    return true;
}

static bool check_sizes(sc_check *check, const sc_node *node, const json_t *value)
{
    size_t size = json_object_size(value);
    if (node->min_properties.set && size < node->min_properties.value)
        return sc_fail(check, "minProperties", "at least %zu members", node->min_properties.value),
               false;
    if (node->max_properties.set && size > node->max_properties.value)
        return sc_fail(check, "maxProperties", "at most %zu members", node->max_properties.value),
               false;
    if (node->required && !check_required(check, node->required, value, "required"))
        return false;
    for (size_t i = 0; i < node->dependent_required_count; i++)
        if (json_object_get(value, node->dependent_required[i].name) &&
            !check_required(check, node->dependent_required[i].names, value, "dependentRequired"))
            return false;
    return true;
}

/* One member against properties, patternProperties, additionalProperties, propertyNames. */
static bool check_member(sc_check *check, const sc_node *node, const char *key, size_t length,
                         const json_t *item, bool *evaluated)
{
    const json_t *index =
        node->property_index ? json_object_getn(node->property_index, key, length) : NULL;
    if (index) {
        *evaluated = true;
        if (!check_child(check, "properties", node->properties[json_integer_value(index)].node,
                         item, key, 0))
            return false;
    }
    for (size_t i = 0; i < node->pattern_property_count; i++) {
        const sc_patterned *entry = &node->pattern_properties[i];
        int found = sc_regex_search(entry->regex, key, length);
        char shown[160];
        if (found < 0)
            return sc_fail(check, "patternProperties",
                           "a member name %s matches within its limit, or does not",
                           sc_printable(entry->source, shown, sizeof shown)),
                   false;
        if (found == 1) {
            *evaluated = true;
            if (!check_child(check, "patternProperties", entry->node, item, key, 0))
                return false;
        }
    }
    if (!*evaluated && node->additional_properties) {
        *evaluated = true;
        if (!check_child(check, "additionalProperties", node->additional_properties, item, key, 0))
            return false;
    }
    if (!node->property_names)
        return true;
    json_t *name = json_stringn_nocheck(key, length);
    if (!name) {
        check->no_memory = true;
        return false;
    }
    bool valid = check_child(check, "propertyNames", node->property_names, name, key, 0);
    json_decref(name);
    return valid;
}

bool sc_check_object(sc_check *check, const sc_node *node, const json_t *value, sc_eval *eval)
{
    if (!check_sizes(check, node, value))
        return false;
    if (!node->property_index && !node->pattern_property_count && !node->additional_properties &&
        !node->property_names)
        return true;
    const char *key;
    size_t length, position = 0;
    json_t *item;
    json_object_keylen_foreach((json_t *)value, key, length, item)
    {
        bool evaluated = false;
        if (!check_member(check, node, key, length, item, &evaluated))
            return false;
        if (evaluated)
            sc_eval_mark(eval, position);
        position++;
    }
    return true;
}

static bool check_contains(sc_check *check, const sc_node *node, const json_t *value, sc_eval *eval)
{
    size_t count = json_array_size(value), matches = 0;
    bool every = eval || node->max_contains.set;
    for (size_t i = 0; i < count && (every || matches < node->min_contains.value); i++) {
        check->quiet++;
        bool matched = sc_check_node(check, node->contains, json_array_get(value, i), NULL);
        check->quiet--;
        if (check->no_memory || check->too_deep)
            return false;
        if (matched) {
            matches++;
            sc_eval_mark(eval, i);
        }
    }
    if (matches < node->min_contains.value)
        return sc_fail(check, node->min_contains.value == 1 ? "contains" : "minContains",
                       "at least %zu items matching \"contains\"", node->min_contains.value),
               false;
    if (node->max_contains.set && matches > node->max_contains.value)
        return sc_fail(check, "maxContains", "at most %zu items matching \"contains\"",
                       node->max_contains.value),
               false;
    return true;
}

bool sc_check_array(sc_check *check, const sc_node *node, const json_t *value, sc_eval *eval)
{
    size_t count = json_array_size(value);
    if (node->min_items.set && count < node->min_items.value)
        return sc_fail(check, "minItems", "at least %zu items", node->min_items.value), false;
    if (node->max_items.set && count > node->max_items.value)
        return sc_fail(check, "maxItems", "at most %zu items", node->max_items.value), false;
    size_t first, second;
    int unique = node->unique_items ? sc_all_unique(value, &first, &second) : 1;
    if (unique < 0)
        return check->no_memory = true, false;
    if (unique == 0)
        return sc_fail(check, "uniqueItems", "items all different (%zu and %zu are equal)", first,
                       second),
               false;
    size_t prefix = node->prefix_items.count < count ? node->prefix_items.count : count;
    for (size_t i = 0; i < prefix; i++) {
        if (!check_child(check, "prefixItems", node->prefix_items.nodes[i],
                         json_array_get(value, i), NULL, i))
            return false;
        sc_eval_mark(eval, i);
    }
    for (size_t i = prefix; node->items && i < count; i++) {
        if (!check_child(check, "items", node->items, json_array_get(value, i), NULL, i))
            return false;
        sc_eval_mark(eval, i);
    }
    return !node->contains || check_contains(check, node, value, eval);
}

bool sc_check_unevaluated(sc_check *check, const sc_node *node, const json_t *value, sc_eval *eval)
{
    if (eval->no_memory)
        return check->no_memory = true, false;
    if (json_is_array(value)) {
        for (size_t i = 0; i < eval->count; i++) {
            if (eval->seen[i])
                continue;
            if (!check_child(check, "unevaluatedItems", node->unevaluated_items,
                             json_array_get(value, i), NULL, i))
                return false;
            eval->seen[i] = true;
        }
        return true;
    }
    const char *key;
    size_t position = 0;
    json_t *item;
    json_object_foreach((json_t *)value, key, item)
    {
        if (!eval->seen[position] && !check_child(check, "unevaluatedProperties",
                                                  node->unevaluated_properties, item, key, 0))
            return false;
        eval->seen[position++] = true;
    }
    return true;
}
