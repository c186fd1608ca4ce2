/* SPDX-License-Identifier: MIT */
/*
 * Generations: the plugins, their methods and the MCP tool table as one value that does not
 * change once made. Each call holds a reference to the generation it started on; the current one
 * is published through one atomic pointer, so that a new set can take its place while serving:
 * calls of the old one keep their methods until they end, and the last reference frees it.
 */
#ifndef RPCD_GENERATION_H
#define RPCD_GENERATION_H

#include "loader.h"
#include "mcp.h"
#include "registry.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct generation generation;

/*
 * Makes a generation of methods, tools (may be NULL) and the plugins that registered the methods
 * (may be NULL: methods registered by hand), all three stolen: the last gen_release shuts the
 * plugins down (ld_unload_all) and frees the three. On failure they are freed too. Returns 0 and
 * *out (new, one reference), or -1 (memory).
 */
int gen_new(registry *methods, mcp_tools *tools, loader *plugins, generation **out);
/*
 * A generation over methods and tools (may be NULL) that stay the caller's (borrowed): they
 * must outlive it. For a server handed a method table of its own. Returns 0 and *out, or -1.
 */
int gen_new_borrowed(const registry *methods, const mcp_tools *tools, generation **out);

/* Takes one more reference (one atomic increment). The caller holds one already. Thread-safe. */
void gen_hold(generation *gen);
/* Drops a reference; the last one frees the generation. Thread-safe; NULL is ignored. */
void gen_release(generation *gen);

/* The method table and the MCP tools (NULL: none): borrowed, alive while a reference is. */
const registry *gen_methods(const generation *gen);
const mcp_tools *gen_tools(const generation *gen);

/*
 * The scheduler's state for one serialized method of a generation: whether a call of it runs,
 * and the calls that wait for it (slot indices), in order. Guarded by the lock of the call table
 * that runs the generation's calls.
 */
typedef struct gen_serial {
    bool busy;
    uint32_t head;
    uint32_t tail;
    struct gen_serial *busy_next; /* the table's list of busy methods (for a stop) */
    struct gen_serial **busy_link;
} gen_serial;

/* The serial state of method, one of gen's; NULL for a method the generation does not know. */
gen_serial *gen_serial_of(generation *gen, const reg_method *method);

/* ---- The current generation ---------------------------------------------------------------- */

/* Where the current generation is published. */
typedef struct gen_current gen_current;

/* Publishes first (stolen). Returns 0 and *out (new), or -1 (memory; first is released). */
int gen_current_new(generation *first, gen_current **out);
/* Drops the reference of the current generation and frees the holder. Readers must be gone. */
void gen_current_free(gen_current *current);

/*
 * Makes next (stolen) the current generation; the old one is released, and freed once the
 * calls and readers that hold it let go. Thread-safe.
 */
void gen_publish(gen_current *current, generation *next);
/* The current generation, with a reference for the caller (new). Thread-safe; takes a lock. */
generation *gen_take_current(gen_current *current);

/*
 * A reading thread's view of the current generation: it holds a reference to the one it saw
 * last, and looks again once per line, with one atomic load, taking the new one (under the
 * holder's lock) only when it changed. What it looked up in the generation it holds stays valid
 * until its next refresh. One reader per thread.
 */
typedef struct gen_reader {
    gen_current *source;     /* borrowed */
    generation *held;        /* one reference */
    const registry *methods; /* held's, at hand for the lookup of each call */
    const mcp_tools *tools;  /* held's */
} gen_reader;

void gen_reader_init(gen_reader *reader, gen_current *source);
/* The generation to use until the next refresh. */
generation *gen_reader_refresh(gen_reader *reader);
void gen_reader_fini(gen_reader *reader);

#endif
