/* SPDX-License-Identifier: MIT */
/*
 * Generations: references, publication, and a swap while calls run, through the real call path
 * and from several threads at once. Each generation's method carries a probe whose
 * free_user_data marks it freed, so when a generation goes is seen exactly.
 */
#include "calls/call.h"
#include "methods/generation.h"
#include "base/output.h"
#include "methods/registry.h"
#include "test_time.h"

#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct probe {
    int version;
    atomic_int users; /* calls running with this generation's method */
    atomic_bool freed;
    atomic_int freed_while_used; /* a generation freed under a call: must stay 0 */
} probe;

static void probe_free(void *data)
{
    probe *p = data;
    if (atomic_load(&p->users) != 0)
        atomic_fetch_add(&p->freed_while_used, 1);
    atomic_store(&p->freed, true);
}

static rpcd_host_api host;
static rpcd_call *kept[4];
static const probe *seen[4];
static size_t kept_count;

/* Keeps its call open, and notes whose method ran. */
static int handle_keep(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length;
    seen[kept_count] = data;
    kept[kept_count++] = call;
    return RPCD_DEFERRED;
}

/* A generation of one method "m" whose user data is p (owned by the test). */
static generation *make_generation(probe *p, rpcd_handler_fn handler)
{
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    rpcd_method method = rpcd_method_new("m", handler);
    method.user_data = p;
    method.free_user_data = probe_free;
    assert_int_equal(reg_add(methods, &method, NULL, "test", NULL), 0);
    generation *gen;
    assert_int_equal(gen_new(methods, NULL, NULL, NULL, &gen), 0);
    return gen;
}

static const reg_method *lookup(const gen_reader *reader)
{
    const reg_method *method = reg_find(reader->methods, "m", 1);
    assert_non_null(method);
    return method;
}

/* The last reference frees, not one before; a serialized method's state is the generation's. */
static void test_last_reference_frees(void **state)
{
    (void)state;
    probe p = {.version = 1};
    generation *gen = make_generation(&p, handle_keep);
    gen_hold(gen);
    gen_hold(gen);
    gen_release(gen);
    gen_release(gen);
    assert_false(atomic_load(&p.freed));
    const reg_method *method = reg_find(gen_methods(gen), "m", 1);
    assert_non_null(method);
    assert_non_null(gen_serial_of(gen, method));
    assert_null(gen_tools(gen));
    gen_release(gen);
    assert_true(atomic_load(&p.freed));
}

/* A reader keeps what it saw until it refreshes; then it sees the new one, and lets go of the old.
 */
static void test_reader_sees_a_publish_at_its_refresh(void **state)
{
    (void)state;
    probe one = {.version = 1}, two = {.version = 2};
    gen_current *current;
    assert_int_equal(gen_current_new(make_generation(&one, handle_keep), &current), 0);
    gen_reader reader;
    gen_reader_init(&reader, current, NULL, NULL);
    assert_ptr_equal(lookup(&reader)->user_data, &one);

    gen_publish(current, make_generation(&two, handle_keep));
    assert_false(atomic_load(&one.freed)); /* the reader still holds it */
    assert_ptr_equal(lookup(&reader)->user_data, &one);
    generation *held = gen_reader_refresh(&reader);
    assert_ptr_equal(held, reader.held);
    assert_true(atomic_load(&one.freed)); /* nobody holds it any more */
    assert_ptr_equal(lookup(&reader)->user_data, &two);
    /* Without a publish, a refresh keeps the same generation. */
    assert_ptr_equal(gen_reader_refresh(&reader), held);

    gen_reader_fini(&reader);
    assert_false(atomic_load(&two.freed)); /* still current */
    gen_current_free(current);
    assert_true(atomic_load(&two.freed));
}

static int discard(void *sink, const struct iovec *parts, int part_count)
{
    (void)sink, (void)parts, (void)part_count;
    return 0;
}

static void start_on(call_table *calls, gen_reader *reader, const char *id)
{
    js_span id_span = {id, strlen(id)};
    call_request request = {.gen = reader->held, .method = lookup(reader), .id = &id_span};
    assert_int_equal(call_start(calls, &request), CALL_STARTED);
}

/*
 * Through the call path: a call started on the old generation keeps its method after a swap,
 * a call started after it runs the new one, and the old generation goes exactly when the last
 * call started on it ends.
 */
static void test_calls_keep_their_generation_across_a_swap(void **state)
{
    (void)state;
    call_fill_host_api(&host);
    kept_count = 0;
    output *out;
    assert_int_equal(out_new(discard, NULL, &out), 0);
    call_table *calls;
    call_settings settings = {
        .out = out, .limits.max_depth = 64, .limits.workers = 0, .limits.max_in_flight = 16};
    assert_int_equal(call_table_new(&settings, &calls), 0);
    probe one = {.version = 1}, two = {.version = 2};
    gen_current *current;
    assert_int_equal(gen_current_new(make_generation(&one, handle_keep), &current), 0);
    gen_reader reader;
    gen_reader_init(&reader, current, call_let_go_generation, calls);

    start_on(calls, &reader, "1");
    start_on(calls, &reader, "2");
    gen_publish(current, make_generation(&two, handle_keep));
    gen_reader_refresh(&reader);
    start_on(calls, &reader, "3");
    assert_int_equal(kept_count, 3);
    assert_ptr_equal(seen[0], &one);
    assert_ptr_equal(seen[1], &one);
    assert_ptr_equal(seen[2], &two);

    /* The old generation is neither current nor the reader's: its calls alone hold it. */
    assert_false(atomic_load(&one.freed));
    assert_string_equal(host.call_method(kept[0]), "m");
    assert_int_equal(host.call_complete(kept[0], RPCD_OK), RPCD_OK);
    assert_false(atomic_load(&one.freed));
    assert_string_equal(host.call_method(kept[1]), "m");
    assert_int_equal(host.call_complete(kept[1], RPCD_OK), RPCD_OK);
    assert_true(atomic_load(&one.freed)); /* its last call ended */

    assert_int_equal(host.call_complete(kept[2], RPCD_OK), RPCD_OK);
    assert_false(atomic_load(&two.freed)); /* current */
    assert_int_equal(call_wait_idle(calls, 0), 0);
    gen_reader_fini(&reader);
    gen_current_free(current);
    assert_true(atomic_load(&two.freed));
    call_table_free(calls);
    out_free(out);
    call_store_release();
}

/* ---- Swaps under load ------------------------------------------------------------------- */

enum { SWAPS = 100, CALLS_BETWEEN_SWAPS = 20 };

static probe probes[SWAPS + 1];
static atomic_int used_freed;  /* a call found its generation's method freed */
static atomic_long calls_made; /* calls that ran */
static atomic_bool publishing_over;
static _Atomic(probe *) last_ran; /* the probe of the last call run */

/* A call: its method's probe must stay alive while it runs. */
static int handle_use(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)call, (void)params, (void)length;
    probe *p = data;
    atomic_fetch_add(&p->users, 1);
    if (atomic_load(&p->freed))
        atomic_fetch_add(&used_freed, 1);
    atomic_store(&last_ran, p);
    atomic_fetch_sub(&p->users, 1);
    atomic_fetch_add(&calls_made, 1);
    return RPCD_OK;
}

/* Publishes each generation once the workers have run calls of the one before. */
static void *publish_all(void *data)
{
    gen_current *current = data;
    for (int v = 1; v <= SWAPS; v++) {
        long before = atomic_load(&calls_made);
        while (atomic_load(&calls_made) < before + CALLS_BETWEEN_SWAPS)
            sched_yield();
        gen_publish(current, make_generation(&probes[v], handle_use));
    }
    atomic_store(&publishing_over, true);
    return NULL;
}

/* Starts one call (a notification) the way the reader does: refresh, lookup, start. */
static int start_one(call_table *calls, gen_reader *reader)
{
    assert_int_equal(call_wait_for_room(calls), 0);
    gen_reader_refresh(reader);
    call_request request = {.gen = reader->held, .method = lookup(reader)};
    assert_int_equal(call_start(calls, &request), CALL_STARTED);
    return ((const probe *)request.method->user_data)->version;
}

/*
 * Generations published by another thread while the reader starts calls that four workers run:
 * no call ever runs a method of a freed generation, the reader never goes back to an older one,
 * a call started after the last publish runs the newest, and every generation but the current
 * one is freed, never under a call, once its calls and the reader are done with it.
 */
static void test_swaps_under_concurrent_calls(void **state)
{
    (void)state;
    for (int v = 0; v <= SWAPS; v++) {
        memset(&probes[v], 0, sizeof probes[v]);
        probes[v].version = v;
    }
    atomic_store(&used_freed, 0);
    atomic_store(&calls_made, 0);
    atomic_store(&publishing_over, false);
    output *out;
    assert_int_equal(out_new(discard, NULL, &out), 0);
    call_table *calls;
    call_settings settings = {
        .out = out, .limits.max_depth = 64, .limits.workers = 4, .limits.max_in_flight = 64};
    assert_int_equal(call_table_new(&settings, &calls), 0);
    gen_current *current;
    assert_int_equal(gen_current_new(make_generation(&probes[0], handle_use), &current), 0);
    gen_reader reader;
    gen_reader_init(&reader, current, call_let_go_generation, calls);

    pthread_t publisher;
    assert_int_equal(pthread_create(&publisher, NULL, publish_all, current), 0);
    int newest = 0;
    while (!atomic_load(&publishing_over)) {
        int version = start_one(calls, &reader);
        assert_true(version >= newest);
        newest = version;
    }
    pthread_join(publisher, NULL);
    assert_int_equal(call_wait_idle(calls, test_time_ms(10000)), 0);
    assert_int_equal(start_one(calls, &reader), SWAPS);
    assert_int_equal(call_wait_idle(calls, test_time_ms(10000)), 0);
    assert_ptr_equal(atomic_load(&last_ran), &probes[SWAPS]);

    assert_int_equal(atomic_load(&used_freed), 0);
    for (int v = 0; v < SWAPS; v++) {
        assert_true(atomic_load(&probes[v].freed));
        assert_int_equal(atomic_load(&probes[v].freed_while_used), 0);
    }
    assert_false(atomic_load(&probes[SWAPS].freed));
    gen_reader_fini(&reader);
    gen_current_free(current);
    assert_true(atomic_load(&probes[SWAPS].freed));
    call_table_free(calls);
    out_free(out);
    call_store_release();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_last_reference_frees),
        cmocka_unit_test(test_reader_sees_a_publish_at_its_refresh),
        cmocka_unit_test(test_calls_keep_their_generation_across_a_swap),
        cmocka_unit_test(test_swaps_under_concurrent_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
