/* SPDX-License-Identifier: MIT */
/*
 * JSON Schema (draft 2020-12) compiled once and checked many times: a schema's text becomes a
 * graph of nodes at registration, refused with a reason when it is not a schema rpcd can apply,
 * and an instance is then checked against it with no allocation beyond its parsed tree.
 */
#ifndef RPCD_SCHEMA_H
#define RPCD_SCHEMA_H

#include "json/json_scan.h"

#include <jansson.h>

#include <stdbool.h>
#include <stddef.h>

/* The bounds of a schema rpcd compiles: beyond them it is refused. */
enum {
    SCHEMA_MAX_BYTES = 1048576, /* its text */
    SCHEMA_MAX_DEPTH = 128,     /* nesting of its JSON */
    SCHEMA_MAX_NODES = 20000,   /* subschemas */
};

typedef struct json_schema json_schema;

typedef struct schema_options {
    bool assert_format; /* "format" fails values that are not of the format, for those it knows */
} schema_options;

/*
 * Compiles schema text (length bytes, any JSON). Returns 0 and *out (new, free with
 * schema_free), or -1 with a one-line reason in error (error_size bytes): not JSON, over a
 * bound, a keyword whose value is not what draft 2020-12 allows, a pattern PCRE2 refuses, a
 * $ref that does not resolve inside the document (a remote one included). Thread-safe.
 */
int schema_compile(const char *text, size_t length, const schema_options *options,
                   json_schema **out, char *error, size_t error_size);

/* Frees a compiled schema (NULL: nothing). */
void schema_free(json_schema *compiled);

/* Why an instance fails: where, which keyword, what it asks. Each NUL-terminated, cut short. */
typedef struct schema_failure {
    char pointer[256];  /* RFC 6901 pointer to the failing value ("" is the instance) */
    char keyword[32];   /* the keyword that failed: "type", "required", "additionalProperties" */
    char expected[256]; /* what the keyword asks, in words with JSON values */
} schema_failure;

enum schema_check_result {
    SCHEMA_VALID = 0,
    SCHEMA_INVALID = 1,    /* *failure says why */
    SCHEMA_NO_MEMORY = -1, /* nothing checked */
};

/*
 * Checks an instance (borrowed) against a compiled schema (borrowed; any number of threads may
 * check against it at once). Returns SCHEMA_VALID, SCHEMA_INVALID with *failure (when not NULL)
 * describing the first failure found, or SCHEMA_NO_MEMORY.
 */
int schema_check(const json_schema *compiled, const json_t *instance, schema_failure *failure);

/*
 * The same for JSON text (length bytes, already valid JSON). Numbers jansson cannot hold as
 * integers (beyond 64 bits) are read as doubles. Returns as schema_check, or SCHEMA_NO_MEMORY
 * when the text cannot be read.
 */
int schema_check_text(const json_schema *compiled, const char *text, size_t length,
                      schema_failure *failure);

/*
 * The same for a value rpcd's scanner already accepted (json_scan.h: js_validate's span, no
 * white space around it), as the dispatcher holds a call's params: a schema of the plain kind
 * most tools have (types, properties, required, additionalProperties, bounds, enums of
 * strings, items) is checked on the text where it lies, without building a tree; any other
 * schema, and any value that does not pass there, gets schema_check_text.
 */
int schema_check_span(const json_schema *compiled, js_span value, schema_failure *failure);

#endif
