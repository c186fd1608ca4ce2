/* SPDX-License-Identifier: MIT */
/*
 * Generations and their publication: a reference count per generation (the holder while it is
 * current, the reader that looks methods up in it, its calls once that reader has moved on), and
 * the one atomic pointer to the current generation.
 */
#include "methods/generation.h"

#include "base/lock.h"
#include "base/log.h"
#include "base/signals.h"

#include <signal.h>
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

static void free_parts(gen_free_parts_fn *free_tools_and_plugins, registry *methods,
                       mcp_tools *tools, loader *plugins)
{
    if (free_tools_and_plugins)
        free_tools_and_plugins(tools, plugins, methods);
    reg_free(methods);
}

int gen_new(registry *methods, mcp_tools *tools, loader *plugins, gen_free_parts_fn *free_parts_of,
            generation **out)
{
    if (make(methods, tools, plugins, true, out) != 0) {
        free_parts(free_parts_of, methods, tools, plugins);
        return -1;
    }
    (*out)->free_parts = free_parts_of;
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

static void free_generation(generation *gen)
{
    if (gen->owned)
        free_parts(gen->free_parts, gen->methods, gen->tools, gen->plugins);
    free(gen->serial);
    free(gen);
}

/* Whatever a holder did with the methods happens before the last one frees them. */
static bool last_reference(generation *gen)
{
    return atomic_fetch_sub_explicit(&gen->references, 1, memory_order_acq_rel) == 1;
}

void gen_release(generation *gen)
{
    if (gen && last_reference(gen))
        free_generation(gen);
}

/* ---- Generations freed on a thread of rpcd's own ------------------------------------------ */

/* The queue of gen_release_after_call and the one thread that empties it, started on the first
 * hand-over: a reload is rare, and a daemon that never reloads never starts it. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    generation *queue; /* linked through retire_next */
    bool running;      /* the thread was started and not joined yet */
    bool stopping;
    pthread_t thread;
} retirer = {.lock = PTHREAD_MUTEX_INITIALIZER, .changed = PTHREAD_COND_INITIALIZER};

static void *retirer_main(void *unused)
{
    (void)unused;
    lock_take(&retirer.lock);
    for (;;) {
        generation *gen = retirer.queue;
        if (!gen && retirer.stopping)
            break;
        if (!gen) {
            pthread_cond_wait(&retirer.changed, &retirer.lock);
            continue;
        }
        retirer.queue = gen->retire_next;
        lock_release(&retirer.lock);
        free_generation(gen); /* the plugins' shutdown, which may take a grace period */
        lock_take(&retirer.lock);
    }
    lock_release(&retirer.lock);
    return NULL;
}

/* Starts the thread, which takes no signal sent to the process but its own faults. Lock held. */
static void start_retirer(void)
{
    sigset_t blocked, previous;
    sig_all_but_faults(&blocked);
    pthread_sigmask(SIG_SETMASK, &blocked, &previous);
    retirer.running = pthread_create(&retirer.thread, NULL, retirer_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (!retirer.running)
        log_message(LOG_WARNING, "cannot start a thread: plugins replaced or removed by a reload "
                                 "are shut down when rpcd ends");
}

void gen_release_after_call(generation *gen)
{
    if (!gen || !last_reference(gen))
        return;
    if (!gen->owned || !gen->plugins) {
        free_generation(gen); /* no plugin code runs: any thread will do */
        return;
    }
    lock_take(&retirer.lock);
    gen->retire_next = retirer.queue;
    retirer.queue = gen;
    if (!retirer.running)
        start_retirer();
    pthread_cond_signal(&retirer.changed);
    lock_release(&retirer.lock);
}

void gen_retire_finish(void)
{
    lock_take(&retirer.lock);
    bool running = retirer.running;
    retirer.stopping = true;
    pthread_cond_signal(&retirer.changed);
    lock_release(&retirer.lock);
    if (running)
        pthread_join(retirer.thread, NULL);
    lock_take(&retirer.lock);
    /* What a thread that could not start left behind: this thread is rpcd's own. */
    while (retirer.queue) {
        generation *gen = retirer.queue;
        retirer.queue = gen->retire_next;
        lock_release(&retirer.lock);
        free_generation(gen);
        lock_take(&retirer.lock);
    }
    retirer.running = false;
    retirer.stopping = false;
    lock_release(&retirer.lock);
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
