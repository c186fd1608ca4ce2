/* SPDX-License-Identifier: MIT */
/*
 * Call tests that need a thread stopped at a precise point: the slot lock's unlock is wrapped
 * (-Wl,--wrap=pthread_mutex_unlock), so that one thread can be held just after it lets go of a
 * call's slot while another completes the same call. No race is left to the scheduler.
 */
#include "calls/call.h"
#include "calls/call_internal.h"
#include "base/log.h"
#include "base/output.h"
#include "methods/registry.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static rpcd_host_api host;

/*
 * The window: the first thread, once it unlocks the target slot, waits there until the second
 * has unlocked it too. Code that checks whether a call may end and ends it under one hold of the
 * lock has already ended it when the first thread waits, so the second finds the call over;
 * code that drops the lock between the two lets the second end it as well.
 */
enum { ROLE_NONE, ROLE_FIRST, ROLE_SECOND };

static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool first_waiting;
    bool second_released;
} window = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false};

static _Atomic(pthread_mutex_t *) window_target;
static _Thread_local int window_role;

static void window_reset(void)
{
    pthread_mutex_lock(&window.lock);
    window.first_waiting = window.second_released = false;
    pthread_mutex_unlock(&window.lock);
}

int __real_pthread_mutex_unlock(pthread_mutex_t *mutex);
int __wrap_pthread_mutex_unlock(pthread_mutex_t *mutex);

int __wrap_pthread_mutex_unlock(pthread_mutex_t *mutex)
{
    int status = __real_pthread_mutex_unlock(mutex);
    if (window_role == ROLE_NONE || mutex != atomic_load(&window_target))
        return status;
    int role = window_role;
    window_role = ROLE_NONE; /* only the first unlock of the target */
    pthread_mutex_lock(&window.lock);
    if (role == ROLE_FIRST) {
        window.first_waiting = true;
        pthread_cond_broadcast(&window.changed);
        while (!window.second_released)
            pthread_cond_wait(&window.changed, &window.lock);
    } else {
        window.second_released = true;
        pthread_cond_broadcast(&window.changed);
    }
    pthread_mutex_unlock(&window.lock);
    return status;
}

static void window_wait_first(void)
{
    pthread_mutex_lock(&window.lock);
    while (!window.first_waiting)
        pthread_cond_wait(&window.changed, &window.lock);
    pthread_mutex_unlock(&window.lock);
}

static pthread_mutex_t *slot_lock_of(rpcd_call *call)
{
    uint32_t index = (uint32_t)(((uintptr_t)call & INDEX_MASK) - 1);
    return &slot_at(index)->lock;
}

typedef struct captured {
    pthread_mutex_t lock;
    size_t lines;
} captured;

static int count_lines(void *sink, const struct iovec *parts, int part_count)
{
    captured *c = sink;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < part_count; i++)
        for (size_t j = 0; j < parts[i].iov_len; j++)
            c->lines += ((const char *)parts[i].iov_base)[j] == '\n';
    pthread_mutex_unlock(&c->lock);
    return 0;
}

/* The handle of the last call the handlers below saw. */
static rpcd_call *deferred_call;
static int early_status;

static int handle_defer(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    deferred_call = call;
    return RPCD_DEFERRED;
}

/* Completes its own call before returning RPCD_DEFERRED, then is held as the first thread. */
static int handle_complete_early(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    deferred_call = call;
    early_status = host.call_complete(call, RPCD_OK);
    atomic_store(&window_target, slot_lock_of(call));
    window_role = ROLE_FIRST;
    return RPCD_DEFERRED;
}

typedef struct completer {
    pthread_t thread;
    int role;
    int status;
} completer;

static void *complete_call(void *data)
{
    completer *c = data;
    if (c->role == ROLE_SECOND)
        window_wait_first();
    window_role = c->role;
    c->status = host.call_complete(deferred_call, RPCD_OK);
    window_role = ROLE_NONE;
    return NULL;
}

typedef struct fixture {
    registry *methods;
    output *out;
    call_table *calls;
    generation *gen;
    captured written;
} fixture;

static void fixture_open(fixture *f)
{
    call_fill_host_api(&host);
    pthread_mutex_init(&f->written.lock, NULL);
    assert_int_equal(reg_new(&f->methods), 0);
    rpcd_method method = rpcd_method_new("defer", handle_defer);
    assert_int_equal(reg_add(f->methods, &method, NULL, "testplugin", NULL), 0);
    method = rpcd_method_new("complete_early", handle_complete_early);
    assert_int_equal(reg_add(f->methods, &method, NULL, "testplugin", NULL), 0);
    assert_int_equal(out_new(count_lines, &f->written, &f->out), 0);
    /* No workers: the handler runs inside call_start, on the test's thread. */
    call_settings settings = {
        .out = f->out, .limits.max_depth = 64, .limits.workers = 0, .limits.max_in_flight = 16};
    assert_int_equal(call_table_new(&settings, &f->calls), 0);
    assert_int_equal(gen_new_borrowed(f->methods, NULL, &f->gen), 0);
}

/* Only once every call ended exactly once: a call ended twice would leave the wait hanging. */
static void fixture_close(fixture *f)
{
    call_table_free(f->calls);
    gen_release(f->gen);
    out_free(f->out);
    reg_free(f->methods);
    pthread_mutex_destroy(&f->written.lock);
    call_store_release();
}

static void start(fixture *f, const char *name, int id)
{
    char text[16];
    int length = snprintf(text, sizeof text, "%d", id);
    js_span id_span = {text, (size_t)length};
    call_request request = {
        .gen = f->gen, .method = reg_find(f->methods, name, strlen(name)), .id = &id_span};
    assert_non_null(request.method);
    assert_int_equal(call_start(f->calls, &request), CALL_STARTED);
}

enum { ROUNDS = 50 };

/*
 * Two threads complete one deferred call; the first is held just after it lets go of the slot
 * lock, until the second has done the same. Exactly one may win, and one response goes out.
 */
static void test_two_completions_one_winner(void **state)
{
    (void)state;
    fixture f = {0};
    fixture_open(&f);
    for (int round = 0; round < ROUNDS; round++) {
        window_reset();
        start(&f, "defer", round);
        atomic_store(&window_target, slot_lock_of(deferred_call));
        completer first = {.role = ROLE_FIRST}, second = {.role = ROLE_SECOND};
        assert_int_equal(pthread_create(&first.thread, NULL, complete_call, &first), 0);
        assert_int_equal(pthread_create(&second.thread, NULL, complete_call, &second), 0);
        pthread_join(first.thread, NULL);
        pthread_join(second.thread, NULL);
        /* The first completes the call; the second finds it ended. */
        assert_int_equal(first.status, RPCD_OK);
        assert_int_equal(second.status, RPCD_ERR_STALE);
    }
    out_flush(f.out);
    assert_int_equal(f.written.lines, ROUNDS);
    fixture_close(&f);
}

/*
 * A handler completes its own call, then returns RPCD_DEFERRED; the thread that ends the call
 * for it is held just after it lets go of the slot lock, while a late call_complete comes in.
 * The late one must not end the call a second time.
 */
static void test_late_completion_after_early_one(void **state)
{
    (void)state;
    fixture f = {0};
    fixture_open(&f);
    for (int round = 0; round < ROUNDS; round++) {
        window_reset();
        completer late = {.role = ROLE_SECOND};
        /* The handler runs on this thread and names the call's slot before it returns. */
        deferred_call = NULL;
        atomic_store(&window_target, NULL);
        assert_int_equal(pthread_create(&late.thread, NULL, complete_call, &late), 0);
        start(&f, "complete_early", round);
        pthread_join(late.thread, NULL);
        assert_int_equal(early_status, RPCD_OK);
        assert_int_equal(late.status, RPCD_ERR_STALE);
    }
    out_flush(f.out);
    assert_int_equal(f.written.lines, ROUNDS);
    fixture_close(&f);
}

/* ---- Names in log lines ---------------------------------------------------------------- */

static int handle_fail(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)call, (void)params, (void)length, (void)data;
    return RPCD_ERR_INTERNAL;
}

static int handle_bad_result(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    host.call_result(call, "{", 1);
    return RPCD_OK;
}

/*
 * The names of a method and its plugin come from the plugin: the lines about its calls (a
 * failure, a result that is not JSON, a call still running at a stop) show them escaped, never
 * with a raw control character, C1 control or line separator.
 */
static void test_names_escaped_in_log_lines(void **state)
{
    (void)state;
    fixture f = {0};
    fixture_open(&f);
    static const char plugin[] = "plug\nin";
    static const struct {
        const char *name;
        rpcd_handler_fn handler;
    } methods[] = {
        {"fail\xc2\x85x", handle_fail},
        {"bad\xe2\x80\xa8x", handle_bad_result},
        {"held\x1bx", handle_defer},
    };
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        rpcd_method method = rpcd_method_new(methods[i].name, methods[i].handler);
        assert_int_equal(reg_add(f.methods, &method, NULL, plugin, NULL), 0);
    }
    FILE *log_file = tmpfile();
    assert_non_null(log_file);
    int level = log_get_level();
    log_set_level(LOG_DEBUG);
    log_set_fd(fileno(log_file));
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
        start(&f, methods[i].name, (int)i);
    call_log_running(f.calls, LOG_WARNING, "still running");
    log_set_fd(STDERR_FILENO);
    log_set_level(level);
    char log[4096];
    rewind(log_file);
    size_t n = fread(log, 1, sizeof log - 1, log_file);
    log[n] = '\0';
    fclose(log_file);
    static const char *const expected[] = {
        "plug\\x0ain: fail\\xc2\\x85x failed with RPCD_ERR_INTERNAL",
        "plug\\x0ain: bad\\xe2\\x80\\xa8x gave a result that is not valid JSON",
        "still running: plugin plug\\x0ain, method held\\x1bx, id 2",
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        if (!strstr(log, expected[i]))
            print_error("not in the log: %s\n%s\n", expected[i], log);
        assert_non_null(strstr(log, expected[i]));
    }
    assert_null(strstr(log, "\xc2\x85"));
    assert_null(strstr(log, "\xe2\x80\xa8"));
    assert_null(strstr(log, "\x1b"));
    assert_null(strstr(log, "plug\nin"));
    assert_int_equal(host.call_complete(deferred_call, RPCD_OK), RPCD_OK);
    fixture_close(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_completions_one_winner),
        cmocka_unit_test(test_late_completion_after_early_one),
        cmocka_unit_test(test_names_escaped_in_log_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
