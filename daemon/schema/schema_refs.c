/* SPDX-License-Identifier: MIT */
/*
 * A schema document indexed before it is compiled: its schema resources (the root and every
 * subschema with "$id", each with an absolute URI), its anchors, and where each subschema lies,
 * so that "$ref" and "$dynamicRef" resolve by URI as draft 2020-12 says, inside the document only.
 */
#include "schema/schema_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The base URI of a document without "$id": what relative references resolve against. */
static const char default_base[] = "rpcd:/schema";

/* Keywords whose value is one subschema, an array of them, or an object of them. */
static const char *const single_keywords[] = {
    "additionalProperties",  "propertyNames",   "items", "contains", "not", "if", "then", "else",
    "unevaluatedProperties", "unevaluatedItems"};
static const char *const array_keywords[] = {"prefixItems", "allOf", "anyOf", "oneOf"};
static const char *const map_keywords[] = {"properties", "patternProperties", "$defs",
                                           "dependentSchemas"};
#define COUNT(array) (sizeof(array) / sizeof(array)[0])

static size_t pointer_slot(const json_t *value, size_t capacity)
{
    uintptr_t bits = (uintptr_t)value;
    return (size_t)((bits >> 4) * 0x9e3779b97f4a7c15u) & (capacity - 1);
}

sc_place *sc_place_of(const json_schema *compiled, const json_t *value)
{
    if (compiled->place_capacity == 0)
        return NULL;
    size_t at = pointer_slot(value, compiled->place_capacity);
    while (compiled->places[at].value) {
        if (compiled->places[at].value == value)
            return &compiled->places[at];
        at = (at + 1) & (compiled->place_capacity - 1);
    }
    return NULL;
}

static int grow_places(json_schema *compiled)
{
    size_t capacity = compiled->place_capacity ? compiled->place_capacity * 2 : 64;
    sc_place *places = calloc(capacity, sizeof *places);
    if (!places)
        return -1;
    for (size_t i = 0; i < compiled->place_capacity; i++) {
        const sc_place *old = &compiled->places[i];
        if (!old->value)
            continue;
        size_t at = pointer_slot(old->value, capacity);
        while (places[at].value)
            at = (at + 1) & (capacity - 1);
        places[at] = *old;
    }
    free(compiled->places);
    compiled->places = places;
    compiled->place_capacity = capacity;
    return 0;
}

sc_place *sc_place_add(json_schema *compiled, const json_t *value, int resource)
{
    sc_place *place = sc_place_of(compiled, value);
    if (place)
        return place;
    if (compiled->place_count >= SCHEMA_MAX_NODES)
        return NULL;
    if ((compiled->place_count + 1) * 2 > compiled->place_capacity && grow_places(compiled) != 0)
        return NULL;
    size_t at = pointer_slot(value, compiled->place_capacity);
    while (compiled->places[at].value)
        at = (at + 1) & (compiled->place_capacity - 1);
    compiled->places[at] = (sc_place){value, resource, NULL};
    compiled->place_count++;
    return &compiled->places[at];
}

/* The length of a URI's scheme and ":" (0: none). */
static size_t scheme_length(const char *uri)
{
    size_t i = 0;
    while (uri[i] && !strchr(":/?#", uri[i]))
        i++;
    return uri[i] == ':' && i > 0 ? i + 1 : 0;
}

/* Removes "." and ".." segments of the path that starts at path (RFC 3986 5.2.4, in place). */
static void drop_dot_segments(char *path)
{
    char *out = path;
    const char *in = path;
    while (*in) {
        if (strncmp(in, "/./", 3) == 0 || strcmp(in, "/.") == 0) {
            in += 2;
            if (*in == '\0')
                *out++ = '/';
        } else if (strncmp(in, "/../", 4) == 0 || strcmp(in, "/..") == 0) {
            in += 3;
            while (out > path && *--out != '/')
                ;
            if (*in == '\0')
                *out++ = '/';
        } else {
            do
                *out++ = *in++;
            while (*in && *in != '/');
        }
    }
    *out = '\0';
}

/* reference (without its fragment) resolved against base: new text, or NULL (memory). */
static char *resolve_uri(const char *base, const char *reference, size_t length)
{
    char *out = NULL;
    size_t base_scheme = scheme_length(base);
    const char *authority_end = base + base_scheme;
    if (strncmp(authority_end, "//", 2) == 0)
        authority_end += 2 + strcspn(authority_end + 2, "/?#");
    int written;
    if (length == 0) {
        written = asprintf(&out, "%s", base);
    } else if (scheme_length(reference) > 0 && scheme_length(reference) <= length) {
        written = asprintf(&out, "%.*s", (int)length, reference);
    } else if (strncmp(reference, "//", 2) == 0) {
        written = asprintf(&out, "%.*s%.*s", (int)base_scheme, base, (int)length, reference);
    } else if (reference[0] == '/') {
        written =
            asprintf(&out, "%.*s%.*s", (int)(authority_end - base), base, (int)length, reference);
    } else {
        const char *slash = strrchr(authority_end, '/');
        size_t keep = slash ? (size_t)(slash + 1 - base) : (size_t)(authority_end - base);
        written = asprintf(&out, "%.*s%s%.*s", (int)keep, base,
                           slash || authority_end == base + base_scheme ? "" : "/", (int)length,
                           reference);
    }
    if (written < 0)
        return NULL;
    size_t scheme = scheme_length(out);
    char *path = out + scheme;
    if (strncmp(path, "//", 2) == 0)
        path += 2 + strcspn(path + 2, "/?#");
    drop_dot_segments(path);
    return out;
}

static int add_resource(json_schema *compiled, const json_t *root, const char *id, int parent)
{
    const char *base = parent >= 0 ? compiled->resources[parent].uri : default_base;
    size_t length = strcspn(id, "#");
    sc_resource *grown =
        realloc(compiled->resources, (compiled->resource_count + 1) * sizeof *grown);
    if (!grown)
        return -1;
    compiled->resources = grown;
    char *uri = resolve_uri(base, id, length);
    if (!uri)
        return -1;
    grown[compiled->resource_count] = (sc_resource){uri, root, parent};
    return (int)compiled->resource_count++;
}

static int add_anchor(json_schema *compiled, int resource, const char *name, const json_t *target,
                      bool dynamic)
{
    sc_anchor *grown = realloc(compiled->anchors, (compiled->anchor_count + 1) * sizeof *grown);
    if (!grown)
        return -1;
    compiled->anchors = grown;
    grown[compiled->anchor_count++] = (sc_anchor){resource, name, target, dynamic};
    return 0;
}

static int index_value(json_schema *compiled, const json_t *value, int resource, char *error,
                       size_t error_size);

/* An object schema's identifiers, and its subschemas indexed. */
static int index_object(json_schema *compiled, const json_t *value, int resource, char *error,
                        size_t error_size)
{
    const json_t *id = json_object_get(value, "$id");
    if (id && !json_is_string(id))
        return snprintf(error, error_size, "\"$id\" is not a string"), -1;
    if (id && (resource = add_resource(compiled, value, json_string_value(id), resource)) < 0)
        return snprintf(error, error_size, "out of memory"), -1;
    if (!sc_place_add(compiled, value, resource))
        return snprintf(error, error_size, "more than %d subschemas", SCHEMA_MAX_NODES), -1;
    static const char *const anchors[] = {"$anchor", "$dynamicAnchor"};
    for (size_t i = 0; i < COUNT(anchors); i++) {
        const json_t *anchor = json_object_get(value, anchors[i]);
        if (anchor && !json_is_string(anchor))
            return snprintf(error, error_size, "\"%s\" is not a string", anchors[i]), -1;
        if (anchor && add_anchor(compiled, resource, json_string_value(anchor), value, i == 1))
            return snprintf(error, error_size, "out of memory"), -1;
    }
    int failed = 0;
    for (size_t i = 0; i < COUNT(single_keywords) && !failed; i++) {
        const json_t *sub = json_object_get(value, single_keywords[i]);
        if (sub)
            failed = index_value(compiled, sub, resource, error, error_size);
    }
    for (size_t i = 0; i < COUNT(array_keywords) && !failed; i++) {
        const json_t *list = json_object_get(value, array_keywords[i]);
        for (size_t j = 0; json_is_array(list) && j < json_array_size(list) && !failed; j++)
            failed = index_value(compiled, json_array_get(list, j), resource, error, error_size);
    }
    for (size_t i = 0; i < COUNT(map_keywords) && !failed; i++) {
        const char *key;
        json_t *sub;
        json_object_foreach((json_t *)json_object_get(value, map_keywords[i]), key, sub)
        {
            if (!failed)
                failed = index_value(compiled, sub, resource, error, error_size);
        }
    }
    return failed;
}

static int index_value(json_schema *compiled, const json_t *value, int resource, char *error,
                       size_t error_size)
{
    if (json_is_object(value))
        return index_object(compiled, value, resource, error, error_size);
    if (json_is_boolean(value) && !sc_place_add(compiled, value, resource))
        return snprintf(error, error_size, "more than %d subschemas", SCHEMA_MAX_NODES), -1;
    return 0; /* not a schema: the compiler says so where it matters */
}

int sc_index_document(json_schema *compiled, char *error, size_t error_size)
{
    const json_t *id = json_object_get(compiled->document, "$id");
    if (id) /* the root's own resource is made by index_object */
        return index_value(compiled, compiled->document, -1, error, error_size);
    if (add_resource(compiled, compiled->document, "", -1) < 0)
        return snprintf(error, error_size, "out of memory"), -1;
    return index_value(compiled, compiled->document, 0, error, error_size);
}

/* A JSON pointer's tokens walked from value (percent-encoding already undone). */
static const json_t *walk_pointer(const json_t *value, const char *pointer)
{
    char token[512];
    while (value && *pointer == '/') {
        pointer++;
        size_t length = 0;
        for (; *pointer && *pointer != '/' && length + 1 < sizeof token; pointer++) {
            char c = *pointer;
            if (c == '~' && (pointer[1] == '0' || pointer[1] == '1'))
                c = *++pointer == '0' ? '~' : '/';
            token[length++] = c;
        }
        token[length] = '\0';
        if (json_is_object(value)) {
            value = json_object_get(value, token);
        } else if (json_is_array(value)) {
            char *end;
            unsigned long index = strtoul(token, &end, 10);
            bool plain = length > 0 && *end == '\0' && (token[0] != '0' || length == 1);
            value = plain ? json_array_get(value, index) : NULL;
        } else {
            value = NULL;
        }
    }
    return *pointer ? NULL : value;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)(c | 0x20);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A fragment with %XX undone, into out (size bytes). -1 when bad or too long. */
static int percent_decode(const char *text, char *out, size_t size)
{
    size_t length = 0;
    for (; *text; text++) {
        if (length + 1 >= size)
            return -1;
        if (*text != '%') {
            out[length++] = *text;
            continue;
        }
        int high = hex_digit(text[1]), low = high < 0 ? -1 : hex_digit(text[2]);
        if (low < 0 || (high | low) == 0)
            return -1; /* not two hex digits, or %00 */
        out[length++] = (char)(high * 16 + low);
        text += 2;
    }
    out[length] = '\0';
    return 0;
}

/* The resource whose URI is uri, or -1. */
static int resource_named(const json_schema *compiled, const char *uri)
{
    for (size_t i = 0; i < compiled->resource_count; i++)
        if (strcmp(compiled->resources[i].uri, uri) == 0)
            return (int)i;
    return -1;
}

int sc_resolve(json_schema *compiled, int resource, const char *reference, const json_t **target,
               int *target_resource, char *error, size_t error_size)
{
    const char *hash = strchr(reference, '#');
    size_t length = hash ? (size_t)(hash - reference) : strlen(reference);
    char *uri = resolve_uri(compiled->resources[resource].uri, reference, length);
    if (!uri)
        return snprintf(error, error_size, "out of memory"), -1;
    char shown[104];
    sc_printable(reference, shown, sizeof shown);
    int found = resource_named(compiled, uri);
    free(uri);
    if (found < 0)
        return snprintf(error, error_size,
                        "\"$ref\": \"%s\" is not inside the schema (remote references are "
                        "not fetched)",
                        shown),
               -1;
    char fragment[1024];
    if (percent_decode(hash ? hash + 1 : "", fragment, sizeof fragment) != 0)
        return snprintf(error, error_size, "\"$ref\": \"%s\" has a bad fragment", shown), -1;
    const json_t *at = NULL;
    if (fragment[0] == '\0' || fragment[0] == '/') {
        at = walk_pointer(compiled->resources[found].root, fragment);
    } else {
        for (size_t i = 0; i < compiled->anchor_count && !at; i++)
            if (compiled->anchors[i].resource == found &&
                strcmp(compiled->anchors[i].name, fragment) == 0)
                at = compiled->anchors[i].target;
    }
    if (!at || !(json_is_object(at) || json_is_boolean(at)))
        return snprintf(error, error_size, "\"$ref\": \"%s\" names no subschema", shown), -1;
    const sc_place *place = sc_place_of(compiled, at);
    *target = at;
    *target_resource = place ? place->resource : found;
    return 0;
}

const sc_node *sc_dynamic_anchor(const json_schema *compiled, int resource, const char *name)
{
    for (size_t i = 0; i < compiled->anchor_count; i++) {
        const sc_anchor *anchor = &compiled->anchors[i];
        if (anchor->dynamic && anchor->resource == resource && strcmp(anchor->name, name) == 0) {
            const sc_place *place = sc_place_of(compiled, anchor->target);
            return place ? place->node : NULL;
        }
    }
    return NULL;
}

void sc_refs_free(json_schema *compiled)
{
    for (size_t i = 0; i < compiled->resource_count; i++)
        free(compiled->resources[i].uri);
    free(compiled->resources);
    free(compiled->anchors);
    free(compiled->places);
}
