/* SPDX-License-Identifier: MIT */
/*
 * Generations: the plugins, their methods and the MCP tool table as one value that does not
 * change once made. The calls started on a generation hold it; the current one is published
 * through one atomic pointer, so that a new set can take its place while serving: calls of the
 * old one keep their methods until they end, and the last reference frees it.
 */
#ifndef RPCD_GENERATION_H
#define RPCD_GENERATION_H

#include "methods/registry.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct generation generation;
/* The MCP tool table (mcp.h) and the plugins (loader.h), which a generation holds without
 * knowing them: the layers above that made them free them through a gen_free_parts_fn. */
typedef struct mcp_tools mcp_tools;
typedef struct loader loader;

/*
 * Frees the tools and shuts the plugins down (either may be NULL), for the generation whose
 * methods they registered (still alive: the generation frees them after). Given by the layer
 * that made them (runtime.h: rt_free_generation_parts), so that generations, below the loader
 * and the MCP front end, need neither. Called once per owned generation, from the thread that
 * frees it.
 */
typedef void gen_free_parts_fn(mcp_tools *tools, loader *plugins, registry *methods);

/*
 * Makes a generation of methods, tools (may be NULL) and the plugins that registered the methods
 * (may be NULL: methods registered by hand), all three stolen: the last gen_release calls
 * free_parts (static; may be NULL only when tools and plugins are) and then frees methods. On
 * failure they are freed the same way. Returns 0 and *out (new, one reference), or -1 (memory).
 */
int gen_new(registry *methods, mcp_tools *tools, loader *plugins, gen_free_parts_fn *free_parts,
            generation **out);
/*
 * A generation over methods and tools (may be NULL) that stay the caller's (borrowed): they
 * must outlive it. For a server handed a method table of its own. Returns 0 and *out, or -1.
 */
int gen_new_borrowed(const registry *methods, const mcp_tools *tools, generation **out);

/* Takes one more reference (one atomic increment). The caller holds one already. Thread-safe. */
void gen_hold(generation *gen);
/* Drops a reference; the last one frees the generation. Thread-safe; NULL is ignored. */
void gen_release(generation *gen);
/*
 * gen_release for the end of a call, which may come on a thread of a plugin (its own, completing
 * a deferred call, or an isolated plugin's reader): the last reference of a generation with
 * plugins is handed to a thread of rpcd's own, since no plugin can be shut down (nor its host
 * stopped, nor its code unmapped) from under one of its threads. Thread-safe; NULL is ignored.
 */
void gen_release_after_call(generation *gen);
/*
 * Waits until every generation handed over by gen_release_after_call is freed, then stops the
 * thread that frees them (a later hand-over starts it again). Before rpcd ends, so that every
 * plugin is shut down. Not from a plugin's thread.
 */
void gen_retire_finish(void);

/*
 * The calls running on a generation are counted, not each given a reference: while the reader
 * that starts them holds the generation, theirs is its reference, and a call costs no atomic
 * operation. When the reader lets go with calls still running (gen_reader_leaves), its
 * reference passes to them, and the last to end releases it. All three under the lock of the
 * call table that runs the calls (one table per generation, as for its serial state).
 */
static inline void gen_call_started(generation *gen);
/* True when this was the last call and the reader had let go: the caller then calls
 * gen_release(gen), once that lock is released. */
static inline bool gen_call_ended(generation *gen);
/* The reader lets go: true when calls still run, which now hold its reference; false when
 * none do, and the caller releases the reference itself. */
bool gen_reader_leaves(generation *gen);

/* In the open for the two inline functions above, which every call runs: use the functions. */
struct generation {
    atomic_size_t references;
    size_t calls;     /* running: see gen_call_started */
    bool reader_left; /* the calls hold the reference the reader had */
    registry *methods;
    mcp_tools *tools;
    loader *plugins;
    bool owned;                    /* methods, tools and plugins are freed with the generation */
    gen_free_parts_fn *free_parts; /* for tools and plugins, when owned (may be NULL) */
    struct gen_serial *serial;     /* per method index */
    size_t serial_count;
    struct generation *retire_next; /* in the queue of gen_release_after_call */
};

static inline void gen_call_started(generation *gen)
{
    gen->calls++;
}

static inline bool gen_call_ended(generation *gen)
{
    return --gen->calls == 0 && gen->reader_left;
}

/* The method table and the MCP tools (NULL: none): borrowed, alive while a reference is. */
const registry *gen_methods(const generation *gen);
const mcp_tools *gen_tools(const generation *gen);
/* The plugins that registered the methods (NULL: methods registered by hand), borrowed too. */
const loader *gen_plugins(const generation *gen);

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
/* Lets go of the reference to gen a reader held (see gen_reader_leaves). */
typedef void gen_let_go_fn(void *context, generation *gen);

typedef struct gen_reader {
    gen_current *source;              /* borrowed */
    _Atomic(generation *) *published; /* source's pointer */
    gen_let_go_fn *let_go;            /* NULL: gen_release */
    void *let_go_context;
    generation *held;        /* one reference */
    const registry *methods; /* held's, at hand for the lookup of each call */
    const mcp_tools *tools;  /* held's */
} gen_reader;

/* let_go (may be NULL: gen_release) is called with context for each generation left behind. */
void gen_reader_init(gen_reader *reader, gen_current *source, gen_let_go_fn *let_go, void *context);
/* gen_reader_refresh once a generation was published: takes it, lets go of the one before. */
void gen_reader_take(gen_reader *reader);

/* The generation to use until the next refresh. */
static inline generation *gen_reader_refresh(gen_reader *reader)
{
    /* Compared, never followed: only the generation the reader holds is used. */
    if (atomic_load_explicit(reader->published, memory_order_acquire) != reader->held)
        gen_reader_take(reader);
    return reader->held;
}

void gen_reader_fini(gen_reader *reader);

#endif
