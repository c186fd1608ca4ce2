/* SPDX-License-Identifier: MIT */
/*
 * What the schema_*.c files share: a compiled node (one subschema, its keywords read into
 * fields), the schema that owns them, and the helpers on values and patterns.
 */
#ifndef RPCD_SCHEMA_INTERNAL_H
#define RPCD_SCHEMA_INTERNAL_H

#include "schema/schema.h"

#include "json/json_scan.h"

#include <jansson.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* JSON types as bits of sc_node.types. */
enum {
    SC_NULL = 1u << 0,
    SC_BOOLEAN = 1u << 1,
    SC_OBJECT = 1u << 2,
    SC_ARRAY = 1u << 3,
    SC_NUMBER = 1u << 4,
    SC_STRING = 1u << 5,
    SC_INTEGER = 1u << 6,
};

/* The formats rpcd asserts when told to (schema_options.assert_format). */
typedef enum sc_format {
    SC_FORMAT_NONE = 0, /* none, or one rpcd does not know: an annotation */
    SC_FORMAT_DATE_TIME,
    SC_FORMAT_DATE,
    SC_FORMAT_TIME,
    SC_FORMAT_EMAIL,
    SC_FORMAT_IPV4,
    SC_FORMAT_IPV6,
    SC_FORMAT_URI,
    SC_FORMAT_UUID,
} sc_format;

typedef struct sc_regex sc_regex; /* a compiled pattern (schema_format.c) */
typedef struct sc_node sc_node;
typedef struct sc_quick sc_quick; /* a node's tables for the quick path (schema_fast.c) */

typedef struct sc_named {
    const char *name; /* borrowed from the schema's tree */
    size_t length;
    sc_node *node;
} sc_named;

typedef struct sc_patterned {
    sc_regex *regex;
    const char *source; /* borrowed */
    sc_node *node;
} sc_patterned;

typedef struct sc_dependency {
    const char *name;    /* borrowed */
    const json_t *names; /* borrowed array of strings (dependentRequired) */
} sc_dependency;

typedef struct sc_list {
    sc_node **nodes;
    size_t count;
} sc_list;

/* An optional bound: set says whether the keyword was there. */
typedef struct sc_bound {
    bool set;
    double value;
} sc_bound;

typedef struct sc_count {
    bool set;
    size_t value;
} sc_count;

struct sc_node {
    int boolean;          /* -1: an object schema; 0 or 1: false or true */
    int resource;         /* the index of the schema resource it lies in */
    const json_t *source; /* borrowed: its JSON in the schema's tree */
    unsigned types;       /* 0: no "type" */
    const json_t *type_text;
    const json_t *enum_values; /* borrowed array, or NULL */
    const json_t *const_value; /* borrowed, or NULL */
    sc_bound minimum, maximum, exclusive_minimum, exclusive_maximum, multiple_of;
    sc_count min_length, max_length, min_items, max_items, min_properties, max_properties;
    sc_count min_contains, max_contains;
    sc_regex *pattern;
    const char *pattern_source;
    sc_format format;
    const char *format_name;
    bool unique_items;
    sc_named *properties;
    size_t property_count;
    json_t *property_index; /* owned: each name of "properties" to its index */
    sc_patterned *pattern_properties;
    size_t pattern_property_count;
    sc_node *additional_properties, *property_names;
    sc_list prefix_items;
    sc_node *items, *contains;
    sc_list all_of, any_of, one_of;
    sc_node *not_schema, *if_schema, *then_schema, *else_schema;
    const json_t *required; /* borrowed array of strings, or NULL */
    sc_dependency *dependent_required;
    size_t dependent_required_count;
    sc_named *dependent_schemas;
    size_t dependent_schema_count;
    sc_node *ref;
    sc_node *dynamic_ref;     /* where $dynamicRef resolves statically */
    const char *dynamic_name; /* set when that target bears $dynamicAnchor of the name */
    sc_node *unevaluated_properties, *unevaluated_items;
    sc_quick *quick; /* owned: set when the whole schema is of the quick kind */
};

/* A schema resource: the root, or a subschema with "$id". */
typedef struct sc_resource {
    char *uri; /* owned, absolute, without a fragment */
    const json_t *root;
    int parent;
} sc_resource;

typedef struct sc_anchor {
    int resource;
    const char *name; /* borrowed */
    const json_t *target;
    bool dynamic;
} sc_anchor;

/* Where a schema object of the document lies, and its node once compiled. */
typedef struct sc_place {
    const json_t *value;
    int resource;
    sc_node *node;
} sc_place;

struct json_schema {
    json_t *document; /* owned */
    sc_node *root;
    bool quick; /* every node is of the plain kind schema_fast.c checks on the text */
    bool assert_format;
    sc_node **nodes; /* owned, every node; those not filled yet wait at the end */
    size_t node_count, node_capacity;
    sc_resource *resources;
    size_t resource_count;
    sc_anchor *anchors;
    size_t anchor_count;
    sc_place *places; /* open addressing by value pointer */
    size_t place_capacity, place_count;
};

/* schema_refs.c: the document's resources, anchors and places, and where a reference lands. */
int sc_index_document(json_schema *compiled, char *error, size_t error_size);
sc_place *sc_place_of(const json_schema *compiled, const json_t *value);
sc_place *sc_place_add(json_schema *compiled, const json_t *value, int resource);
int sc_resolve(json_schema *compiled, int resource, const char *reference, const json_t **target,
               int *target_resource, char *error, size_t error_size);
const sc_node *sc_dynamic_anchor(const json_schema *compiled, int resource, const char *name);
/* The resources' string arena and tables freed. */
void sc_refs_free(json_schema *compiled);

/* schema_format.c: patterns and formats. */
sc_regex *sc_regex_compile(const char *pattern, size_t length, char *error, size_t error_size);
void sc_regex_free(sc_regex *regex);
/* 1: matches somewhere, 0: does not, -1: gave up (match or depth limit) or memory. */
int sc_regex_search(const sc_regex *regex, const char *text, size_t length);
sc_format sc_format_named(const char *name);
bool sc_format_holds(sc_format format, const char *text, size_t length);

/* schema_fast.c: whether every node is of the plain kind, and their tables (at compile: sets
 * compiled->quick and each node's quick), and the check on a validated value's text that only
 * ever answers "valid" for sure. */
void sc_quick_prepare(json_schema *compiled);
bool sc_quick_valid(const json_schema *compiled, js_span value);

/* schema_values.c: JSON values as JSON Schema sees them. */
bool sc_equal(const json_t *a, const json_t *b);
bool sc_has_type(const json_t *value, unsigned types);
bool sc_is_integer(const json_t *value);
size_t sc_code_points(const char *text, size_t length);
/* 1 when every item differs, 0 when two are equal (*first, *second: their indexes), -1 memory */
int sc_all_unique(const json_t *array, size_t *first, size_t *second);
bool sc_multiple_of(const json_t *value, double divisor);
/* Text from a schema or a value for a one-line message: at most size - 1 bytes of text (cut
 * after a whole character), control characters and DEL as '?', NUL-terminated. Returns out. */
const char *sc_printable(const char *text, char *out, size_t size);
/* A validated JSON value (its span, no white space around it) as jansson's tree (new), built
 * from rpcd's own scan rather than jansson's slower lexer; NULL when memory ran out. */
json_t *sc_tree_from_span(js_span value);
/* Text for a failure: value as JSON, cut to size bytes with "..." (NUL-terminated). */
void sc_describe(const json_t *value, char *out, size_t size);

#endif
