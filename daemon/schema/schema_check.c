/* SPDX-License-Identifier: MIT */
/*
 * An instance checked against a compiled schema: the in-place keywords first, then those about
 * an object's members or an array's items, unevaluated* last with the annotations the others
 * left. The first failure is kept: the pointer to the value, the keyword, what it asks.
 */
#include "schema/schema_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Schema levels one check may nest, $ref included: a schema whose references loop without
 * moving into the instance fails here instead of exhausting the stack. */
enum { MAX_NESTING = 2000 };
/* Nesting of a value checked from text: what jansson itself reads, and a bound on the
 * recursion that builds its tree. */
enum { MAX_INSTANCE_DEPTH = 2048 };

void sc_fail(sc_check *check, const char *keyword, const char *format, ...)
{
    if (check->quiet || check->failed)
        return;
    check->failed = true;
    if (!check->failure)
        return;
    snprintf(check->failure->keyword, sizeof check->failure->keyword, "%s", keyword);
    va_list args;
    va_start(args, format);
    vsnprintf(check->failure->expected, sizeof check->failure->expected, format, args);
    va_end(args);
    sc_path_format(check, check->failure->pointer, sizeof check->failure->pointer);
}

/* Grows an array kept in place while small (check->path or ->scope): a copy on the heap the
 * first time, realloc after. Returns the new array, or NULL (memory). */
static void *grow(void *array, const void *in_place, size_t *capacity, size_t size)
{
    size_t more = *capacity * 2;
    void *grown = array == in_place ? malloc(more * size) : realloc(array, more * size);
    if (grown && array == in_place)
        memcpy(grown, array, *capacity * size);
    if (grown)
        *capacity = more;
    return grown;
}

int sc_path_push(sc_check *check, const char *key, size_t index)
{
    if (check->path_count == check->path_capacity) {
        sc_segment *path =
            grow(check->path, check->path_small, &check->path_capacity, sizeof *path);
        if (!path) {
            check->no_memory = true;
            return -1;
        }
        check->path = path;
    }
    check->path[check->path_count++] = (sc_segment){key, index};
    return 0;
}

void sc_path_format(const sc_check *check, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < check->path_count; i++) {
        char piece[32];
        const char *text = check->path[i].key;
        if (!text) {
            snprintf(piece, sizeof piece, "%zu", check->path[i].index);
            text = piece;
        }
        if (used + 1 < size)
            out[used++] = '/';
        for (; *text && used + 2 < size; text++) {
            if (*text == '~' || *text == '/') {
                out[used++] = '~';
                out[used++] = *text == '~' ? '0' : '1';
            } else {
                out[used++] = *text;
            }
        }
        out[used < size ? used : size - 1] = '\0';
    }
    if (used + 1 >= size && size > 4) /* cut short: say so, after a whole character */
        memcpy(out + size - 4, "...", 4);
}

static bool check_type(sc_check *check, const sc_node *node, const json_t *value)
{
    if (!node->types || sc_has_type(value, node->types))
        return true;
    const char *got = json_is_null(value)      ? "null"
                      : json_is_boolean(value) ? "a boolean"
                      : json_is_object(value)  ? "an object"
                      : json_is_array(value)   ? "an array"
                      : json_is_string(value)  ? "a string"
                                               : "a number";
    char expected[128];
    sc_describe(node->type_text, expected, sizeof expected);
    sc_fail(check, "type", "%s (the value is %s)", expected, got);
    return false;
}

static bool check_values(sc_check *check, const sc_node *node, const json_t *value)
{
    char expected[200];
    if (node->const_value && !sc_equal(value, node->const_value)) {
        sc_describe(node->const_value, expected, sizeof expected);
        sc_fail(check, "const", "%s", expected);
        return false;
    }
    if (!node->enum_values)
        return true;
    for (size_t i = 0; i < json_array_size(node->enum_values); i++)
        if (sc_equal(value, json_array_get(node->enum_values, i)))
            return true;
    sc_describe(node->enum_values, expected, sizeof expected);
    sc_fail(check, "enum", "one of %s", expected);
    return false;
}

static bool check_number(sc_check *check, const sc_node *node, const json_t *value)
{
    double number = json_number_value(value);
    if (node->minimum.set && !(number >= node->minimum.value))
        return sc_fail(check, "minimum", "a number >= %.17g", node->minimum.value), false;
    if (node->maximum.set && !(number <= node->maximum.value))
        return sc_fail(check, "maximum", "a number <= %.17g", node->maximum.value), false;
    if (node->exclusive_minimum.set && !(number > node->exclusive_minimum.value))
        return sc_fail(check, "exclusiveMinimum", "a number > %.17g",
                       node->exclusive_minimum.value),
               false;
    if (node->exclusive_maximum.set && !(number < node->exclusive_maximum.value))
        return sc_fail(check, "exclusiveMaximum", "a number < %.17g",
                       node->exclusive_maximum.value),
               false;
    if (node->multiple_of.set && !sc_multiple_of(value, node->multiple_of.value))
        return sc_fail(check, "multipleOf", "a multiple of %.17g", node->multiple_of.value), false;
    return true;
}

static bool check_string(sc_check *check, const sc_node *node, const json_t *value)
{
    const char *text = json_string_value(value);
    size_t length = json_string_length(value);
    if (node->min_length.set || node->max_length.set) {
        size_t points = sc_code_points(text, length);
        if (node->min_length.set && points < node->min_length.value)
            return sc_fail(check, "minLength", "at least %zu characters", node->min_length.value),
                   false;
        if (node->max_length.set && points > node->max_length.value)
            return sc_fail(check, "maxLength", "at most %zu characters", node->max_length.value),
                   false;
    }
    if (node->pattern) {
        int found = sc_regex_search(node->pattern, text, length);
        if (found != 1) {
            char shown[160];
            sc_fail(check, "pattern", "a string matching %s%s",
                    sc_printable(node->pattern_source, shown, sizeof shown),
                    found < 0 ? " (matching gave up at its limit)" : "");
            return false;
        }
    }
    if (node->format && !sc_format_holds(node->format, text, length))
        return sc_fail(check, "format", "a string in the format \"%s\"", node->format_name),
               false; /* a name sc_format_named knows */
    return true;
}

/* An in-place subschema whose failure does not fail the node (anyOf, oneOf, not, if):
 * quiet, its annotations kept in a tracker of its own, merged only when it passes. */
static bool try_node(sc_check *check, const sc_node *node, const json_t *value, sc_eval *eval,
                     bool *matched)
{
    sc_eval own;
    sc_eval_init(&own, eval ? value : NULL);
    check->quiet++;
    *matched = sc_check_node(check, node, value, eval ? &own : NULL);
    check->quiet--;
    if (*matched && eval)
        sc_eval_merge(eval, &own);
    sc_eval_fini(&own);
    return !check->no_memory && !check->too_deep;
}

static bool check_combinations(sc_check *check, const sc_node *node, const json_t *value,
                               sc_eval *eval)
{
    bool matched;
    for (size_t i = 0; i < node->all_of.count; i++)
        if (!sc_check_node(check, node->all_of.nodes[i], value, eval))
            return false;
    size_t matches = 0;
    for (size_t i = 0; i < node->any_of.count && (eval || matches == 0); i++) {
        if (!try_node(check, node->any_of.nodes[i], value, eval, &matched))
            return false;
        matches += matched;
    }
    if (node->any_of.count && matches == 0)
        return sc_fail(check, "anyOf", "a value matching at least one of its %zu schemas",
                       node->any_of.count),
               false;
    matches = 0;
    for (size_t i = 0; i < node->one_of.count && matches < 2; i++) {
        if (!try_node(check, node->one_of.nodes[i], value, eval, &matched))
            return false;
        matches += matched;
    }
    if (node->one_of.count && matches != 1)
        return sc_fail(check, "oneOf", "a value matching exactly one of its %zu schemas (%s)",
                       node->one_of.count, matches ? "it matches more" : "it matches none"),
               false;
    if (node->not_schema) {
        if (!try_node(check, node->not_schema, value, NULL, &matched))
            return false;
        if (matched)
            return sc_fail(check, "not", "a value that does not match the \"not\" schema"), false;
    }
    if (!node->if_schema)
        return true;
    if (!try_node(check, node->if_schema, value, eval, &matched))
        return false;
    const sc_node *branch = matched ? node->then_schema : node->else_schema;
    return !branch || sc_check_node(check, branch, value, eval);
}

/* The target of $dynamicRef: the outermost resource in scope with the anchor, else static. */
static const sc_node *dynamic_target(const sc_check *check, const sc_node *node)
{
    if (!node->dynamic_name)
        return node->dynamic_ref;
    for (size_t i = 0; i < check->scope_count; i++) {
        const sc_node *found =
            sc_dynamic_anchor(check->compiled, check->scope[i], node->dynamic_name);
        if (found)
            return found;
    }
    return node->dynamic_ref;
}

static bool check_in_place(sc_check *check, const sc_node *node, const json_t *value, sc_eval *eval)
{
    if (node->ref && !sc_check_node(check, node->ref, value, eval))
        return false;
    if (node->dynamic_ref && !sc_check_node(check, dynamic_target(check, node), value, eval))
        return false;
    if (!check_combinations(check, node, value, eval))
        return false;
    for (size_t i = 0; json_is_object(value) && i < node->dependent_schema_count; i++)
        if (json_object_get(value, node->dependent_schemas[i].name) &&
            !sc_check_node(check, node->dependent_schemas[i].node, value, eval))
            return false;
    return true;
}

/* The keywords of an object schema; eval collects what they evaluated. */
static bool check_keywords(sc_check *check, const sc_node *node, const json_t *value, sc_eval *eval)
{
    if (!check_type(check, node, value) || !check_values(check, node, value))
        return false;
    if (json_is_number(value) && !check_number(check, node, value))
        return false;
    if (json_is_string(value) && !check_string(check, node, value))
        return false;
    if (!check_in_place(check, node, value, eval))
        return false;
    if (json_is_object(value))
        return sc_check_object(check, node, value, eval);
    if (json_is_array(value))
        return sc_check_array(check, node, value, eval);
    return true;
}

/* Enters a node's resource into the dynamic scope; returns whether it did. */
static bool enter_scope(sc_check *check, int resource)
{
    if (check->scope_count && check->scope[check->scope_count - 1] == resource)
        return false;
    if (check->scope_count == check->scope_capacity) {
        int *scope = grow(check->scope, check->scope_small, &check->scope_capacity, sizeof *scope);
        if (!scope) {
            check->no_memory = true;
            return false;
        }
        check->scope = scope;
    }
    check->scope[check->scope_count++] = resource;
    return true;
}

bool sc_check_node(sc_check *check, const sc_node *node, const json_t *value, sc_eval *eval)
{
    if (node->boolean == 1)
        return true;
    if (node->boolean == 0)
        return sc_fail(check, "false", "no value at all (the schema is false)"), false;
    if (check->no_memory || check->too_deep)
        return false;
    if (check->nesting >= MAX_NESTING) {
        check->too_deep = true;
        int quiet = check->quiet;
        check->quiet = 0; /* told, whatever branch it happened in */
        sc_fail(check, "$ref", "a schema nested at most %d levels deep for this value",
                MAX_NESTING);
        check->quiet = quiet;
        return false;
    }
    check->nesting++;
    bool entered = enter_scope(check, node->resource);
    /* A node with unevaluated* sees the annotations of its own keywords and in-place
     * subschemas: they go to a tracker of its own, handed on to the caller's when it passes. */
    bool own = (node->unevaluated_properties && json_is_object(value)) ||
               (node->unevaluated_items && json_is_array(value));
    sc_eval local;
    sc_eval_init(&local, own ? value : NULL);
    bool valid = check_keywords(check, node, value, own ? &local : eval);
    if (own && valid) {
        valid = sc_check_unevaluated(check, node, value, &local);
        if (valid && eval)
            sc_eval_merge(eval, &local);
    }
    sc_eval_fini(&local);
    if (entered)
        check->scope_count--;
    check->nesting--;
    return valid && !check->no_memory;
}

int schema_check(const json_schema *compiled, const json_t *instance, schema_failure *failure)
{
    sc_check check = {.compiled = compiled, .failure = failure};
    check.path = check.path_small;
    check.path_capacity = sizeof check.path_small / sizeof check.path_small[0];
    check.scope = check.scope_small;
    check.scope_capacity = sizeof check.scope_small / sizeof check.scope_small[0];
    bool valid = sc_check_node(&check, compiled->root, instance, NULL);
    if (check.path != check.path_small)
        free(check.path);
    if (check.scope != check.scope_small)
        free(check.scope);
    if (check.no_memory)
        return SCHEMA_NO_MEMORY;
    return valid ? SCHEMA_VALID : SCHEMA_INVALID;
}

int schema_check_text(const json_schema *compiled, const char *text, size_t length,
                      schema_failure *failure)
{
    js_span value;
    int scanned = js_validate(text, length, MAX_INSTANCE_DEPTH, &value, NULL);
    if (scanned == JS_ERR_DEPTH && failure) {
        snprintf(failure->pointer, sizeof failure->pointer, "%s", "");
        snprintf(failure->keyword, sizeof failure->keyword, "%s", "depth");
        snprintf(failure->expected, sizeof failure->expected,
                 "a value nested at most %d levels deep", MAX_INSTANCE_DEPTH);
        return SCHEMA_INVALID;
    }
    json_t *instance = scanned == 0 ? sc_tree_from_span(value) : NULL;
    if (!instance)
        return SCHEMA_NO_MEMORY;
    int status = schema_check(compiled, instance, failure);
    json_decref(instance);
    return status;
}

int schema_check_span(const json_schema *compiled, js_span value, schema_failure *failure)
{
    if (sc_quick_valid(compiled, value))
        return SCHEMA_VALID;
    return schema_check_text(compiled, value.start, value.length, failure);
}
