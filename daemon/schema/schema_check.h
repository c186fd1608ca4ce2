/* SPDX-License-Identifier: MIT */
/*
 * What the checking files share: one check's state (the path to the value at hand, the dynamic
 * scope, the first failure) and the tracker of what a node's keywords evaluated, which
 * unevaluatedProperties and unevaluatedItems read.
 */
#ifndef RPCD_SCHEMA_CHECK_H
#define RPCD_SCHEMA_CHECK_H

#include "schema/schema_internal.h"

typedef struct sc_segment {
    const char *key; /* a member's name (borrowed), or NULL for an item */
    size_t index;
} sc_segment;

typedef struct sc_check {
    const json_schema *compiled;
    schema_failure *failure; /* NULL: not wanted */
    bool failed;             /* failure is written */
    int quiet;               /* inside anyOf, oneOf, not, if, contains: failures not told */
    bool no_memory, too_deep;
    size_t nesting;
    sc_segment *path; /* path_small, or owned once it outgrew it */
    size_t path_count, path_capacity;
    int *scope; /* resources entered, outermost first: scope_small, or owned */
    size_t scope_count, scope_capacity;
    sc_segment path_small[32]; /* most values are shallow: no allocation for them */
    int scope_small[8];
} sc_check;

/*
 * What a node's keywords evaluated of one object or array: a flag per member (in jansson's
 * order, which does not change while a check runs) or per item. Inactive (all NULL) when the
 * value is neither, or no unevaluated* asks.
 */
typedef struct sc_eval {
    const json_t *value; /* borrowed; NULL: inactive */
    bool *seen;          /* owned, one per member or item */
    size_t count;
    bool no_memory;
} sc_eval;

void sc_eval_init(sc_eval *eval, const json_t *value);
void sc_eval_fini(sc_eval *eval);
void sc_eval_merge(sc_eval *into, const sc_eval *from);
/* Marks member or item index (nothing when eval is NULL or inactive). */
void sc_eval_mark(sc_eval *eval, size_t index);

__attribute__((format(printf, 3, 4))) void sc_fail(sc_check *check, const char *keyword,
                                                   const char *format, ...);
int sc_path_push(sc_check *check, const char *key, size_t index);
void sc_path_format(const sc_check *check, char *out, size_t size);

bool sc_check_node(sc_check *check, const sc_node *node, const json_t *value, sc_eval *eval);
bool sc_check_object(sc_check *check, const sc_node *node, const json_t *value, sc_eval *eval);
bool sc_check_array(sc_check *check, const sc_node *node, const json_t *value, sc_eval *eval);
bool sc_check_unevaluated(sc_check *check, const sc_node *node, const json_t *value, sc_eval *eval);

#endif
