/* SPDX-License-Identifier: MIT */
/*
 * What the tests of the call modules share: a call table over a captured output, a method
 * table in a generation, handlers that answer, fail or keep their call open, and a way to
 * start a call by method name and id. Include once, in a test program, after cmocka.h.
 */
#ifndef RPCD_TEST_CALL_FIXTURE_H
#define RPCD_TEST_CALL_FIXTURE_H

#include "calls/call.h"
#include "methods/generation.h"
#include "base/output.h"
#include "methods/registry.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rpcd_host_api host;

/* What the output wrote, all lines in one text. */
typedef struct captured {
    pthread_mutex_t lock;
    char text[64 * 1024];
    size_t length;
    size_t lines;
    size_t writes; /* calls of the write function */
} captured;

static inline int capture(void *sink, const struct iovec *parts, int part_count)
{
    captured *c = sink;
    pthread_mutex_lock(&c->lock);
    c->writes++;
    for (int i = 0; i < part_count; i++) {
        const char *bytes = parts[i].iov_base;
        for (size_t j = 0; j < parts[i].iov_len && c->length + 1 < sizeof c->text; j++) {
            c->text[c->length++] = bytes[j];
            c->lines += bytes[j] == '\n';
        }
    }
    c->text[c->length] = '\0';
    pthread_mutex_unlock(&c->lock);
    return 0;
}

typedef struct fixture {
    registry *methods;
    generation *gen;
    output *out;
    call_table *calls;
    captured written;
} fixture;

/* The calls kept open by handle_keep, in the order they ran. */
static rpcd_call *_Atomic kept[512];
static atomic_size_t kept_count;

static inline int handle_keep(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    kept[atomic_fetch_add(&kept_count, 1)] = call;
    return RPCD_DEFERRED;
}

/* Answers with its params (null without). */
static inline int handle_echo(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)data;
    return params ? host.call_result(call, params, length) : RPCD_OK;
}

/* Registers name with handler, flags and user data. Before fixture_start. */
static inline void fixture_add(fixture *f, const char *name, rpcd_handler_fn handler,
                               uint32_t flags, void *data)
{
    rpcd_method method = rpcd_method_new(name, handler);
    method.flags = flags;
    method.user_data = data;
    assert_int_equal(reg_add(f->methods, &method, NULL, "testplugin", NULL), 0);
}

static inline void fixture_open(fixture *f)
{
    memset(f, 0, sizeof *f);
    call_fill_host_api(&host);
    atomic_store(&kept_count, 0);
    pthread_mutex_init(&f->written.lock, NULL);
    assert_int_equal(reg_new(&f->methods), 0);
    assert_int_equal(out_new(capture, &f->written, &f->out), 0);
}

/* Once the methods are in: their generation, and the table (settings->out is filled in). */
static inline void fixture_start(fixture *f, call_settings settings)
{
    assert_int_equal(gen_new_borrowed(f->methods, NULL, &f->gen), 0);
    settings.out = f->out;
    if (settings.limits.max_depth == 0)
        settings.limits.max_depth = 64;
    assert_int_equal(call_table_new(&settings, &f->calls), 0);
}

/* fixture_open, fixture_add of one method, fixture_start. */
static inline void fixture_with(fixture *f, const char *name, rpcd_handler_fn handler,
                                uint32_t flags, call_settings settings)
{
    fixture_open(f);
    fixture_add(f, name, handler, flags, NULL);
    fixture_start(f, settings);
}

static inline void fixture_close(fixture *f)
{
    call_table_free(f->calls);
    gen_release(f->gen);
    out_free(f->out);
    reg_free(f->methods);
    pthread_mutex_destroy(&f->written.lock);
    call_store_release();
}

/* What was written so far. */
static inline const char *written(fixture *f)
{
    out_flush(f->out);
    pthread_mutex_lock(&f->written.lock);
    pthread_mutex_unlock(&f->written.lock);
    return f->written.text;
}

/* Starts a call of name with id (NULL: a notification) and params (NULL: none). */
static inline int start_call(fixture *f, const char *name, const char *id, const char *params,
                             call_batch *batch)
{
    js_span id_span = {id, id ? strlen(id) : 0};
    js_span params_span = {params, params ? strlen(params) : 0};
    call_request request = {
        .gen = f->gen,
        .method = reg_find(f->methods, name, strlen(name)),
        .id = id ? &id_span : NULL,
        .params = params ? &params_span : NULL,
        .batch = batch,
    };
    assert_non_null(request.method);
    return call_start(f->calls, &request);
}

#endif
