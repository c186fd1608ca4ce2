/* SPDX-License-Identifier: MIT */
/*
 * A schema's text compiled into nodes: the document read with jansson and indexed
 * (schema_refs.c), then each subschema's keywords checked and read into its node, one node at
 * a time from a work list, so that neither a deep schema nor a cycle of references recurses.
 */
#include "schema/schema_internal.h"

#include "json/json_scan.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one node's compiling needs. */
typedef struct sc_build {
    json_schema *compiled;
    sc_node *node;
    const json_t *value;
    char *error;
    size_t error_size;
} sc_build;

__attribute__((format(printf, 2, 3))) static int refuse(const sc_build *build, const char *format,
                                                        ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(build->error, build->error_size, format, args);
    va_end(args);
    return -1;
}

/* The node of a schema value of the document, made (and queued to be filled) the first time. */
static sc_node *node_for(json_schema *compiled, const json_t *value, int resource)
{
    sc_place *place = sc_place_add(compiled, value, resource);
    if (!place)
        return NULL;
    if (place->node)
        return place->node;
    if (compiled->node_count == compiled->node_capacity) {
        size_t capacity = compiled->node_capacity ? compiled->node_capacity * 2 : 16;
        sc_node **nodes = realloc(compiled->nodes, capacity * sizeof *nodes);
        if (!nodes)
            return NULL;
        compiled->nodes = nodes;
        compiled->node_capacity = capacity;
    }
    sc_node *node = calloc(1, sizeof *node);
    if (!node)
        return NULL;
    node->boolean = json_is_boolean(value) ? json_is_true(value) : -1;
    node->resource = place->resource;
    node->source = value;
    compiled->nodes[compiled->node_count++] = node;
    place->node = node;
    return node;
}

/* The subschema under keyword (a schema value), or -1 refused. */
static int subschema(const sc_build *build, const char *keyword, const json_t *value, sc_node **out)
{
    if (!json_is_object(value) && !json_is_boolean(value))
        return refuse(build, "\"%s\" holds a value that is not a schema", keyword);
    *out = node_for(build->compiled, value, build->node->resource);
    return *out ? 0 : refuse(build, "out of memory or more than %d subschemas", SCHEMA_MAX_NODES);
}

static int single(const sc_build *build, const char *keyword, sc_node **out)
{
    const json_t *value = json_object_get(build->value, keyword);
    return value ? subschema(build, keyword, value, out) : 0;
}

/* A non-empty array of schemas. */
static int list(const sc_build *build, const char *keyword, sc_list *out)
{
    const json_t *value = json_object_get(build->value, keyword);
    if (!value)
        return 0;
    if (!json_is_array(value) || json_array_size(value) == 0)
        return refuse(build, "\"%s\" is not a non-empty array of schemas", keyword);
    out->nodes = calloc(json_array_size(value), sizeof *out->nodes);
    if (!out->nodes)
        return refuse(build, "out of memory");
    out->count = json_array_size(value);
    for (size_t i = 0; i < out->count; i++)
        if (subschema(build, keyword, json_array_get(value, i), &out->nodes[i]) != 0)
            return -1;
    return 0;
}

/* An object of schemas, by name (properties, dependentSchemas). */
static int named(const sc_build *build, const char *keyword, sc_named **out, size_t *count)
{
    const json_t *value = json_object_get(build->value, keyword);
    if (!value)
        return 0;
    if (!json_is_object(value))
        return refuse(build, "\"%s\" is not an object of schemas", keyword);
    *out = calloc(json_object_size(value) + 1, sizeof **out);
    if (!*out)
        return refuse(build, "out of memory");
    const char *key;
    json_t *item;
    json_object_foreach((json_t *)value, key, item)
    {
        (*out)[*count].name = key;
        (*out)[*count].length = strlen(key);
        if (subschema(build, keyword, item, &(*out)[(*count)++].node) != 0)
            return -1;
    }
    return 0;
}

static int number(const sc_build *build, const char *keyword, sc_bound *out)
{
    const json_t *value = json_object_get(build->value, keyword);
    if (!value)
        return 0;
    if (!json_is_number(value))
        return refuse(build, "\"%s\" is not a number", keyword);
    *out = (sc_bound){true, json_number_value(value)};
    return 0;
}

static int count(const sc_build *build, const char *keyword, sc_count *out)
{
    const json_t *value = json_object_get(build->value, keyword);
    if (!value)
        return 0;
    if (!sc_is_integer(value) || json_number_value(value) < 0)
        return refuse(build, "\"%s\" is not a non-negative integer", keyword);
    double bound = json_number_value(value);
    *out = (sc_count){true, bound >= 1e18 ? (size_t)-1 : (size_t)bound};
    return 0;
}

static int string_array(const sc_build *build, const char *keyword, const json_t *value)
{
    size_t i;
    json_t *item;
    if (!json_is_array(value))
        return refuse(build, "\"%s\" is not an array of strings", keyword);
    json_array_foreach(value, i, item)
    {
        if (!json_is_string(item))
            return refuse(build, "\"%s\" is not an array of strings", keyword);
    }
    return 0;
}

static unsigned type_bit(const json_t *name)
{
    static const char *const names[] = {"null",   "boolean", "object", "array",
                                        "number", "string",  "integer"};
    for (unsigned i = 0; json_is_string(name) && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(json_string_value(name), names[i]) == 0)
            return 1u << i;
    return 0;
}

static int read_type(const sc_build *build)
{
    const json_t *type = json_object_get(build->value, "type");
    if (!type)
        return 0;
    build->node->type_text = type;
    if (json_is_string(type))
        build->node->types = type_bit(type);
    for (size_t i = 0; json_is_array(type) && i < json_array_size(type); i++) {
        unsigned bit = type_bit(json_array_get(type, i));
        if (!bit || (build->node->types & bit))
            return refuse(build, "\"type\" is not a type name nor an array of distinct ones");
        build->node->types |= bit;
    }
    if (!build->node->types)
        return refuse(build, "\"type\" is not a type name nor an array of distinct ones");
    return 0;
}

static int read_numbers(const sc_build *build)
{
    sc_node *node = build->node;
    if (number(build, "minimum", &node->minimum) || number(build, "maximum", &node->maximum) ||
        number(build, "exclusiveMinimum", &node->exclusive_minimum) ||
        number(build, "exclusiveMaximum", &node->exclusive_maximum) ||
        number(build, "multipleOf", &node->multiple_of))
        return -1;
    if (node->multiple_of.set && !(node->multiple_of.value > 0))
        return refuse(build, "\"multipleOf\" is not a number above 0");
    if (count(build, "minLength", &node->min_length) ||
        count(build, "maxLength", &node->max_length) ||
        count(build, "minItems", &node->min_items) || count(build, "maxItems", &node->max_items) ||
        count(build, "minProperties", &node->min_properties) ||
        count(build, "maxProperties", &node->max_properties) ||
        count(build, "minContains", &node->min_contains) ||
        count(build, "maxContains", &node->max_contains))
        return -1;
    return 0;
}

static int read_values(const sc_build *build)
{
    sc_node *node = build->node;
    node->enum_values = json_object_get(build->value, "enum");
    if (node->enum_values && !json_is_array(node->enum_values))
        return refuse(build, "\"enum\" is not an array");
    node->const_value = json_object_get(build->value, "const");
    const json_t *unique = json_object_get(build->value, "uniqueItems");
    if (unique && !json_is_boolean(unique))
        return refuse(build, "\"uniqueItems\" is not a boolean");
    node->unique_items = json_is_true(unique);
    const json_t *format = json_object_get(build->value, "format");
    if (format && !json_is_string(format))
        return refuse(build, "\"format\" is not a string");
    if (format && build->compiled->assert_format) {
        node->format = sc_format_named(json_string_value(format));
        node->format_name = json_string_value(format);
    }
    const json_t *pattern = json_object_get(build->value, "pattern");
    if (pattern && !json_is_string(pattern))
        return refuse(build, "\"pattern\" is not a string");
    if (pattern) {
        node->pattern_source = json_string_value(pattern);
        node->pattern = sc_regex_compile(node->pattern_source, json_string_length(pattern),
                                         build->error, build->error_size);
        if (!node->pattern)
            return -1;
    }
    return 0;
}

static int read_objects(const sc_build *build)
{
    sc_node *node = build->node;
    if (named(build, "properties", &node->properties, &node->property_count) != 0 ||
        named(build, "dependentSchemas", &node->dependent_schemas, &node->dependent_schema_count) !=
            0)
        return -1;
    if (node->property_count) {
        node->property_index = json_object();
        for (size_t i = 0; node->property_index && i < node->property_count; i++)
            if (json_object_set_new(node->property_index, node->properties[i].name,
                                    json_integer((json_int_t)i)) != 0)
                return refuse(build, "out of memory");
        if (!node->property_index)
            return refuse(build, "out of memory");
    }
    node->required = json_object_get(build->value, "required");
    if (node->required && string_array(build, "required", node->required) != 0)
        return -1;
    const json_t *dependent = json_object_get(build->value, "dependentRequired");
    if (!dependent)
        return 0;
    if (!json_is_object(dependent))
        return refuse(build, "\"dependentRequired\" is not an object of arrays of strings");
    node->dependent_required = calloc(json_object_size(dependent) + 1, sizeof(sc_dependency));
    if (!node->dependent_required)
        return refuse(build, "out of memory");
    const char *key;
    json_t *names;
    json_object_foreach((json_t *)dependent, key, names)
    {
        if (string_array(build, "dependentRequired", names) != 0)
            return -1;
        node->dependent_required[node->dependent_required_count++] = (sc_dependency){key, names};
    }
    return 0;
}

static int read_pattern_properties(const sc_build *build)
{
    sc_node *node = build->node;
    const json_t *value = json_object_get(build->value, "patternProperties");
    if (!value)
        return 0;
    if (!json_is_object(value))
        return refuse(build, "\"patternProperties\" is not an object of schemas");
    node->pattern_properties = calloc(json_object_size(value) + 1, sizeof(sc_patterned));
    if (!node->pattern_properties)
        return refuse(build, "out of memory");
    const char *key;
    size_t key_length;
    json_t *item;
    json_object_keylen_foreach((json_t *)value, key, key_length, item)
    {
        sc_patterned *entry = &node->pattern_properties[node->pattern_property_count++];
        entry->source = key;
        entry->regex = sc_regex_compile(key, key_length, build->error, build->error_size);
        if (!entry->regex || subschema(build, "patternProperties", item, &entry->node) != 0)
            return -1;
    }
    return 0;
}

/* $ref and $dynamicRef, resolved inside the document. */
static int read_references(const sc_build *build)
{
    sc_node *node = build->node;
    static const char *const keywords[] = {"$ref", "$dynamicRef"};
    for (int i = 0; i < 2; i++) {
        const json_t *reference = json_object_get(build->value, keywords[i]);
        if (!reference)
            continue;
        if (!json_is_string(reference))
            return refuse(build, "\"%s\" is not a string", keywords[i]);
        const json_t *target;
        int resource;
        if (sc_resolve(build->compiled, node->resource, json_string_value(reference), &target,
                       &resource, build->error, build->error_size) != 0)
            return -1;
        sc_node *resolved = node_for(build->compiled, target, resource);
        if (!resolved)
            return refuse(build, "out of memory or more than %d subschemas", SCHEMA_MAX_NODES);
        *(i == 0 ? &node->ref : &node->dynamic_ref) = resolved;
        /* $dynamicRef is dynamic only when its static target bears the $dynamicAnchor it names. */
        const char *fragment = strchr(json_string_value(reference), '#');
        const json_t *anchor = json_object_get(target, "$dynamicAnchor");
        if (i == 1 && fragment && fragment[1] != '/' && json_is_string(anchor) &&
            strcmp(json_string_value(anchor), fragment + 1) == 0)
            node->dynamic_name = json_string_value(anchor);
    }
    return 0;
}

static int fill_node(json_schema *compiled, sc_node *node, char *error, size_t error_size)
{
    if (node->boolean >= 0)
        return 0;
    const sc_build build = {compiled, node, node->source, error, error_size};
    if (read_type(&build) || read_numbers(&build) || read_values(&build) || read_objects(&build) ||
        read_pattern_properties(&build) || read_references(&build))
        return -1;
    if (single(&build, "additionalProperties", &node->additional_properties) ||
        single(&build, "propertyNames", &node->property_names) ||
        single(&build, "items", &node->items) || single(&build, "contains", &node->contains) ||
        single(&build, "not", &node->not_schema) || single(&build, "if", &node->if_schema) ||
        single(&build, "then", &node->then_schema) || single(&build, "else", &node->else_schema) ||
        single(&build, "unevaluatedProperties", &node->unevaluated_properties) ||
        single(&build, "unevaluatedItems", &node->unevaluated_items))
        return -1;
    if (list(&build, "prefixItems", &node->prefix_items) || list(&build, "allOf", &node->all_of) ||
        list(&build, "anyOf", &node->any_of) || list(&build, "oneOf", &node->one_of))
        return -1;
    if (!node->min_contains.set)
        node->min_contains = (sc_count){true, 1};
    return 0;
}

static void free_node(sc_node *node)
{
    sc_regex_free(node->pattern);
    for (size_t i = 0; i < node->pattern_property_count; i++)
        sc_regex_free(node->pattern_properties[i].regex);
    free(node->pattern_properties);
    free(node->properties);
    json_decref(node->property_index);
    free(node->dependent_required);
    free(node->dependent_schemas);
    free(node->prefix_items.nodes);
    free(node->all_of.nodes);
    free(node->any_of.nodes);
    free(node->one_of.nodes);
    free(node->quick);
    free(node);
}

void schema_free(json_schema *compiled)
{
    if (!compiled)
        return;
    for (size_t i = 0; i < compiled->node_count; i++)
        free_node(compiled->nodes[i]);
    free(compiled->nodes);
    sc_refs_free(compiled);
    json_decref(compiled->document);
    free(compiled);
}

/* Every node reachable from the root (and every $dynamicAnchor's), filled in turn. */
static int build_nodes(json_schema *compiled, char *error, size_t error_size)
{
    compiled->root = node_for(compiled, compiled->document, 0);
    for (size_t i = 0; compiled->root && i < compiled->anchor_count; i++)
        if (compiled->anchors[i].dynamic &&
            !node_for(compiled, compiled->anchors[i].target, compiled->anchors[i].resource))
            compiled->root = NULL;
    if (!compiled->root) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < compiled->node_count; i++)
        if (fill_node(compiled, compiled->nodes[i], error, error_size) != 0)
            return -1;
    sc_quick_prepare(compiled);
    return 0;
}

int schema_compile(const char *text, size_t length, const schema_options *options,
                   json_schema **out, char *error, size_t error_size)
{
    *out = NULL;
    if (length > SCHEMA_MAX_BYTES) {
        snprintf(error, error_size, "the schema is longer than %d bytes", SCHEMA_MAX_BYTES);
        return -1;
    }
    if (js_validate(text, length, SCHEMA_MAX_DEPTH, NULL, NULL) != 0) {
        snprintf(error, error_size, "the schema is not JSON, or nested deeper than %d",
                 SCHEMA_MAX_DEPTH);
        return -1;
    }
    json_schema *compiled = calloc(1, sizeof *compiled);
    if (!compiled) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    compiled->assert_format = options && options->assert_format;
    compiled->document = json_loadb(text, length, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    int status = -1;
    if (!compiled->document)
        snprintf(error, error_size, "the schema's numbers or strings are beyond what rpcd reads");
    else if (!json_is_object(compiled->document) && !json_is_boolean(compiled->document))
        snprintf(error, error_size, "the schema is neither an object nor a boolean");
    else if (sc_index_document(compiled, error, error_size) == 0)
        status = build_nodes(compiled, error, error_size);
    if (status != 0) {
        schema_free(compiled);
        return -1;
    }
    *out = compiled;
    return 0;
}
