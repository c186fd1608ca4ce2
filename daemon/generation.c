/* SPDX-License-Identifier: MIT */
/*
 * Generations and their publication: a reference count per generation (the holder while it is
 * current, the reader that looks methods up in it, its calls once that reader has moved on), and
 * the one atomic pointer to the current generation.
 */
#include "generation.h"

#include "mcp.h"
#include "lock.h"

#include <stdlib.h>

struct gen_current {
    _Atomic(generation *) current; /* holds one reference */
    /* Taken by a publish and by a reader taking a reference to the current generation: no
     * generation is released between a reader's load of the pointer and its reference. */
    pthread_mutex_t lock;
};

static int make(registry *methods, mcp_tools *tools, loader *plugins, bool owned, generation **out)
{
    generation *gen = calloc(1, sizeof *gen);
    size_t count = methods ? reg_count(methods) : 0;
    gen_serial *serial = calloc(count + 1, sizeof *serial);
    if (!gen || !serial) {
        free(gen);
        free(serial);
        return -1;
    }
    atomic_init(&gen->references, 1);
    gen->methods = methods;
    gen->tools = tools;
    gen->plugins = plugins;
    gen->owned = owned;
    gen->serial = serial;
    gen->serial_count = count;
    *out = gen;
    return 0;
}

static void free_parts(registry *methods, mcp_tools *tools, loader *plugins)
{
    mcp_tools_free(tools);
    if (plugins)
        ld_unload_all(plugins, methods);
    reg_free(methods);
}

int gen_new(registry *methods, mcp_tools *tools, loader *plugins, generation **out)
{
    if (make(methods, tools, plugins, true, out) != 0) {
        free_parts(methods, tools, plugins);
        return -1;
    }
    return 0;
}

int gen_new_borrowed(const registry *methods, const mcp_tools *tools, generation **out)
{
    /* Never freed nor changed through these: owned is false. */
    return make((registry *)methods, (mcp_tools *)tools, NULL, false, out);
}

void gen_hold(generation *gen)
{
    atomic_fetch_add_explicit(&gen->references, 1, memory_order_relaxed);
}

void gen_release(generation *gen)
{
    if (!gen)
        return;
    /* Whatever a holder did with the methods happens before the last one frees them. */
    if (atomic_fetch_sub_explicit(&gen->references, 1, memory_order_acq_rel) != 1)
        return;
    if (gen->owned)
        free_parts(gen->methods, gen->tools, gen->plugins);
    free(gen->serial);
    free(gen);
}

bool gen_reader_leaves(generation *gen)
{
    gen->reader_left = true;
    return gen->calls > 0;
}

const registry *gen_methods(const generation *gen)
{
    return gen->methods;
}

const mcp_tools *gen_tools(const generation *gen)
{
    return gen->tools;
}

const loader *gen_plugins(const generation *gen)
{
    return gen->plugins;
}

gen_serial *gen_serial_of(generation *gen, const reg_method *method)
{
    return method->index < gen->serial_count ? &gen->serial[method->index] : NULL;
}

int gen_current_new(generation *first, gen_current **out)
{
    gen_current *current = calloc(1, sizeof *current);
    if (!current || pthread_mutex_init(&current->lock, NULL) != 0) {
        free(current);
        gen_release(first);
        return -1;
    }
    atomic_init(&current->current, first);
    *out = current;
    return 0;
}

void gen_current_free(gen_current *current)
{
    if (!current)
        return;
    gen_release(atomic_load(&current->current));
    pthread_mutex_destroy(&current->lock);
    free(current);
}

void gen_publish(gen_current *current, generation *next)
{
    lock_take(&current->lock);
    generation *old = atomic_exchange_explicit(&current->current, next, memory_order_acq_rel);
    lock_release(&current->lock);
    gen_release(old);
}

generation *gen_take_current(gen_current *current)
{
    lock_take(&current->lock);
    generation *gen = atomic_load_explicit(&current->current, memory_order_acquire);
    gen_hold(gen);
    lock_release(&current->lock);
    return gen;
}

static void leave(gen_reader *reader, generation *gen)
{
    if (reader->let_go)
        reader->let_go(reader->let_go_context, gen);
    else
        gen_release(gen);
}

void gen_reader_init(gen_reader *reader, gen_current *source, gen_let_go_fn *let_go, void *context)
{
    reader->source = source;
    reader->let_go = let_go;
    reader->let_go_context = context;
    reader->published = &source->current;
    reader->held = gen_take_current(source);
    reader->methods = reader->held->methods;
    reader->tools = reader->held->tools;
}

void gen_reader_take(gen_reader *reader)
{
    generation *old = reader->held;
    reader->held = gen_take_current(reader->source);
    reader->methods = reader->held->methods;
    reader->tools = reader->held->tools;
    leave(reader, old);
}

void gen_reader_fini(gen_reader *reader)
{
    leave(reader, reader->held);
    reader->held = NULL;
    reader->methods = NULL;
    reader->tools = NULL;
}
