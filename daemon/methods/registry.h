/* SPDX-License-Identifier: MIT */
/*
 * The method table: names to handlers, filled while plugins initialise and read-only after,
 * so lookups on the hot path need no lock.
 */
#ifndef RPCD_REGISTRY_H
#define RPCD_REGISTRY_H

#include "schema/schema.h"

#include <rpcd/plugin.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum reg_error {
    REG_ERR_INVALID = -1, /* missing name or handler, reserved or bad name, bad schema or MCP
                             member, a schema rpcd cannot compile */
    REG_ERR_EXISTS = -2,  /* the name is taken */
    REG_ERR_NO_MEMORY = -3,
};

typedef struct reg_method {
    char *name; /* owned, NUL-terminated (names never hold NUL) */
    size_t name_length;
    rpcd_handler_fn handler;
    void *user_data; /* the plugin's, freed with free_user_data at unload */
    void (*free_user_data)(void *data);
    uint32_t flags;      /* only the RPCD_METHOD_* bits that abi_minor knows */
    uint32_t abi_minor;  /* the RPCD_ABI_MINOR its plugin was built against */
    char *description;   /* owned, or NULL */
    char *params_schema; /* owned, or NULL */
    /* Owned, compiled params_schema: what a call's params are checked against before its
     * handler runs. NULL when there is none, or the method or its plugin's section opted out. */
    json_schema *arguments;
    char *title;            /* (1.4) owned, or NULL; the JSON texts below on one line */
    char *annotations;      /* (1.4) owned JSON text of an object, or NULL */
    char *output_schema;    /* (1.4) owned JSON text of an object schema, or NULL */
    json_schema *output;    /* owned, output_schema compiled ("format" an annotation), or NULL */
    char *icons;            /* (1.4) owned JSON text of an array, or NULL */
    uint32_t mcp_role;      /* (1.5) RPCD_MCP_*: RPCD_MCP_TOOL for older plugins */
    char *mcp_descriptor;   /* (1.5) owned JSON text on one line, or NULL */
    const void *owner;      /* the plugin that registered it (borrowed) */
    const char *owner_name; /* borrowed from the plugin's info */
    size_t index;           /* position in registration order, for per-method state */
    /* Told when a running call of the method is cancelled (an isolated plugin's proxy passes
     * it on); NULL for a plugin that looks with call_is_cancelled itself. */
    void (*cancel_hook)(rpcd_call *call, void *user_data);
    size_t timeout_ms; /* its calls' deadline (timeout_ms, timeout_ms.METHOD); 0: none */
    /* Its counters (base/metrics.h), shared by every registration of the same name by the same
     * plugin; borrowed, NULL when none could be made. */
    struct mx_series *series;
} reg_method;

typedef struct registry registry;

/* FNV-1a of bytes: the hash of every name table in the daemon. */
uint64_t reg_hash(const char *bytes, size_t length);

int reg_new(registry **out);
/* Frees the table; user data left (see reg_release_owner) is freed too. */
void reg_free(registry *reg);

/* Who registers a method. */
typedef struct reg_owner {
    const void *plugin; /* borrowed: the plugin, as reg_release_owner knows it */
    const char *name;   /* borrowed from the plugin's info */
    uint32_t abi_minor; /* the RPCD_ABI_MINOR it was built against */
    /* Its section's validate_arguments: params_schema compiled and calls' params checked
     * (false in a plugin host, whose rpcd checks them before sending). */
    bool check_arguments;
    bool assert_format; /* [rpcd] schema_format = assert: "format" of params_schema fails */
} reg_owner;

/*
 * Adds a method from a plugin's descriptor, reading only the members inside descriptor->size,
 * and keeping only the flags the owner's ABI minor knows (a bit appended later meant nothing to
 * a plugin built before). Strings are copied. On REG_ERR_EXISTS, *existing (when not NULL) is
 * the method holding the name; on REG_ERR_INVALID, error (error_size bytes, 0 when not wanted)
 * says why, in words for a log line. Not thread-safe: only while plugins initialise.
 */
int reg_add_owned(registry *reg, const rpcd_method *descriptor, const reg_owner *owner,
                  const reg_method **existing, char *error, size_t error_size);

/* reg_add_owned for an owner built against this daemon's own ABI minor, arguments checked. */
int reg_add(registry *reg, const rpcd_method *descriptor, const void *owner, const char *owner_name,
            const reg_method **existing);

/*
 * A name from a plugin (length bytes, any bytes), fit for a log line: printable UTF-8 is kept;
 * the bytes of control characters (C0, DEL, C1), of U+2028 and U+2029, of the backslash and of
 * anything not UTF-8 are written as \xNN; a name too long for out (size bytes, at least 8) is cut
 * after a whole character with "...". out is NUL-terminated.
 */
void reg_printable_name(const char *name, size_t length, char *out, size_t size);

/* A method's name and its plugin's, each through reg_printable_name, for a log line.
 * Async-signal-safe. */
typedef struct reg_shown {
    char plugin[64];
    char method[128];
} reg_shown;
void reg_show(const reg_method *method, reg_shown *out);

/*
 * Sets the cancel hook of the method called name, which must be there. Not thread-safe: only
 * while plugins initialise, as reg_add_owned.
 */
void reg_set_cancel_hook(registry *reg, const char *name,
                         void (*hook)(rpcd_call *call, void *user_data));

/* Sets the deadline of the method called name, which must be there; as reg_set_cancel_hook. */
void reg_set_timeout(registry *reg, const char *name, size_t timeout_ms);

/* Finds a method by its name bytes, or NULL. Thread-safe once registration is over. */
const reg_method *reg_find(const registry *reg, const char *name, size_t length);

/* Methods in registration order. */
size_t reg_count(const registry *reg);
const reg_method *reg_at(const registry *reg, size_t index);

/*
 * Frees the user data of every method owner registered (newest first) and forgets the methods'
 * user data, so that a plugin's data is freed before its code is unloaded.
 */
void reg_release_owner(registry *reg, const void *owner);

/* Removes the methods of owner (after a failed init). Not thread-safe. */
void reg_remove_owner(registry *reg, const void *owner);

#endif
