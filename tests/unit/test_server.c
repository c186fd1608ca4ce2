/* SPDX-License-Identifier: MIT */
/*
 * The serve loop over in-memory read and write functions: lines in, responses out in order;
 * the end of input answers every request; a stop from another thread ends a read that waits,
 * with the grace period for the calls still running; a closed output or a failed read ends it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "log_capture.h"
#include "serve/server.h"

#include "calls/call.h"
#include "base/clock.h"
#include "methods/registry.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static rpcd_host_api host;

/* ---- The input: a text read in chunks, then the end, a failure, or a wait for a stop ---- */

enum source_end { END_EOF, END_FAIL, END_WAIT };

typedef struct source {
    const char *text;
    size_t length, at, chunk;
    enum source_end end;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool waiting;      /* the reader is blocked at the end */
    bool stop_reading; /* stop_reading was called */
} source;

static void source_init(source *s, const char *text, size_t chunk, enum source_end end)
{
    memset(s, 0, sizeof *s);
    s->text = text;
    s->length = strlen(text);
    s->chunk = chunk;
    s->end = end;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->changed, NULL);
}

static void source_fini(source *s)
{
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->changed);
}

static ssize_t source_read(void *context, char *into, size_t capacity)
{
    source *s = context;
    pthread_mutex_lock(&s->lock);
    if (s->at < s->length && !s->stop_reading) {
        size_t n = s->length - s->at;
        if (n > s->chunk)
            n = s->chunk;
        if (n > capacity)
            n = capacity;
        memcpy(into, s->text + s->at, n);
        s->at += n;
        pthread_mutex_unlock(&s->lock);
        return (ssize_t)n;
    }
    ssize_t result = 0;
    if (s->end == END_FAIL) {
        errno = EIO;
        result = -1;
    } else if (s->end == END_WAIT || s->stop_reading) {
        s->waiting = true;
        pthread_cond_broadcast(&s->changed);
        while (!s->stop_reading)
            pthread_cond_wait(&s->changed, &s->lock);
        errno = ECANCELED;
        result = -1;
    }
    pthread_mutex_unlock(&s->lock);
    return result;
}

/* What srv_stop and a failed write call: the read waiting returns ECANCELED. */
static void source_stop_reading(void *context)
{
    source *s = context;
    pthread_mutex_lock(&s->lock);
    s->stop_reading = true;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
}

static void source_wait_until_waiting(source *s)
{
    pthread_mutex_lock(&s->lock);
    while (!s->waiting)
        pthread_cond_wait(&s->changed, &s->lock);
    pthread_mutex_unlock(&s->lock);
}

/* ---- The output: what was written, or a closed pipe ---- */

typedef struct sink {
    pthread_mutex_t lock;
    char text[32 * 1024];
    size_t length;
    bool closed; /* every write fails with EPIPE */
    int writes;
} sink;

static void sink_init(sink *s, bool closed)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    s->closed = closed;
}

static int sink_write(void *context, const struct iovec *parts, int part_count)
{
    sink *s = context;
    pthread_mutex_lock(&s->lock);
    s->writes++;
    if (s->closed) {
        pthread_mutex_unlock(&s->lock);
        errno = EPIPE;
        return -1;
    }
    for (int i = 0; i < part_count; i++) {
        assert_true(s->length + parts[i].iov_len < sizeof s->text);
        memcpy(s->text + s->length, parts[i].iov_base, parts[i].iov_len);
        s->length += parts[i].iov_len;
    }
    s->text[s->length] = '\0';
    pthread_mutex_unlock(&s->lock);
    return 0;
}

/* ---- Methods ---- */

static int handle_echo(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)data;
    return params ? host.call_result(call, params, length) : RPCD_OK;
}

/* Sleeps params[0] ms, then answers with the params. */
static int handle_sleep(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)data;
    long ms = strtol(params + 1, NULL, 10);
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
    return host.call_result(call, params, length);
}

/* Runs until its call is cancelled (a stop), then answers "stopped". */
static int handle_until_cancelled(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    while (!host.call_is_cancelled(call)) {
        struct timespec pause = {0, 1000000L};
        nanosleep(&pause, NULL);
    }
    return host.call_result(call, "\"stopped\"", 9);
}

/* Keeps its call open: the test completes it. */
static rpcd_call *_Atomic kept_call;

static int handle_keep(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    atomic_store(&kept_call, call);
    return RPCD_DEFERRED;
}

static registry *methods_new(void)
{
    call_fill_host_api(&host);
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    static const struct {
        const char *name;
        rpcd_handler_fn handler;
    } table[] = {
        {"echo", handle_echo},
        {"sleep", handle_sleep},
        {"until_cancelled", handle_until_cancelled},
        {"keep", handle_keep},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        rpcd_method method = rpcd_method_new(table[i].name, table[i].handler);
        assert_int_equal(reg_add(methods, &method, NULL, "testplugin", NULL), 0);
    }
    return methods;
}

static srv_options options_with(size_t workers, bool ordered)
{
    return (srv_options){
        .limits.max_line_bytes = 4096,
        .limits.max_depth = 64,
        .limits.max_batch = 100,
        .limits.workers = workers,
        .limits.max_in_flight = 64,
        .shutdown_grace_ms = 2000,
        .ordered = ordered,
    };
}

#define REQ(id, method, params)                                                                    \
    "{\"jsonrpc\":\"2.0\",\"id\":" id ",\"method\":\"" method "\",\"params\":" params "}\n"
#define RES(id, result) "{\"jsonrpc\":\"2.0\",\"id\":" id ",\"result\":" result "}\n"

static void test_lines_in_responses_out_in_order(void **state)
{
    (void)state;
    registry *methods = methods_new();
    source in;
    /* Chunks of 7 bytes: lines arrive split across reads. */
    source_init(&in,
                REQ("1", "echo", "[1]") REQ("\"b\"", "echo", "{\"x\":2}") REQ("3", "echo", "[]"), 7,
                END_EOF);
    sink out;
    sink_init(&out, false);
    srv_options options = options_with(0, false);
    assert_int_equal(srv_serve(methods, &options, source_read, &in, sink_write, &out), SRV_DONE);
    assert_string_equal(out.text, RES("1", "[1]") RES("\"b\"", "{\"x\":2}") RES("3", "[]"));
    source_fini(&in);
    reg_free(methods);
    call_store_release();
}

static void test_end_of_input_answers_every_request(void **state)
{
    (void)state;
    registry *methods = methods_new();
    source in;
    /* The last line has no newline: it is still a request. The calls are still running on the
     * workers when the input ends. */
    source_init(&in,
                REQ("1", "sleep", "[60]") REQ("2", "sleep", "[40]") REQ("3", "sleep", "[20]")
                    REQ("4", "echo", "[4]") "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"echo\"}",
                4096, END_EOF);
    sink out;
    sink_init(&out, false);
    /* Ordered: responses come in request order whatever order the calls end in. */
    srv_options options = options_with(4, true);
    long long started = clock_now_ms();
    assert_int_equal(srv_serve(methods, &options, source_read, &in, sink_write, &out), SRV_DONE);
    assert_true(clock_now_ms() - started >= 60);
    assert_string_equal(out.text, RES("1", "[60]") RES("2", "[40]") RES("3", "[20]")
                                      RES("4", "[4]") "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":"
                                                      "null}\n");
    source_fini(&in);
    reg_free(methods);
    call_store_release();
}

static void test_line_too_long_answered_and_next_line_served(void **state)
{
    (void)state;
    registry *methods = methods_new();
    char text[512];
    char long_line[200];
    memset(long_line, ' ', sizeof long_line - 1);
    long_line[sizeof long_line - 1] = '\0';
    snprintf(text, sizeof text, "%s\n" REQ("2", "echo", "[2]"), long_line);
    source in;
    source_init(&in, text, 16, END_EOF);
    sink out;
    sink_init(&out, false);
    srv_options options = options_with(0, false);
    options.limits.max_line_bytes = 100;
    log_capture log;
    log_capture_start(&log, LOG_WARNING);
    int result = srv_serve(methods, &options, source_read, &in, sink_write, &out);
    log_capture_end(&log);
    assert_int_equal(result, SRV_DONE);
    assert_logged(log.text, "skipped a 199-byte line: longer than max_line_bytes (100)");
    const char *second = strchr(out.text, '\n');
    assert_non_null(second);
    assert_non_null(
        strstr(out.text, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,"));
    assert_true(strstr(out.text, "-32600") < second);
    assert_string_equal(second + 1, RES("2", "[2]"));
    source_fini(&in);
    reg_free(methods);
    call_store_release();
}

typedef struct stopper {
    server *srv;
    source *in;
    long long stopped_at;
    sink *out;
    const char *written; /* what the output must have before the stop, or NULL */
    bool kept;           /* a call must be kept open before the stop */
} stopper;

static bool sink_has(sink *s, const char *text)
{
    pthread_mutex_lock(&s->lock);
    bool has = strstr(s->text, text) != NULL;
    pthread_mutex_unlock(&s->lock);
    return has;
}

/* Once the reader waits for input (and written is out, or a call kept): the stop, as a signal
 * handler on another thread would. */
static void *stop_when_waiting(void *data)
{
    stopper *s = data;
    source_wait_until_waiting(s->in);
    while ((s->written && !sink_has(s->out, s->written)) || (s->kept && !atomic_load(&kept_call))) {
        struct timespec pause = {0, 1000000L};
        nanosleep(&pause, NULL);
    }
    s->stopped_at = clock_now_ms();
    srv_stop(s->srv);
    return NULL;
}

static void test_stop_ends_a_waiting_read_and_cancels_running_calls(void **state)
{
    (void)state;
    registry *methods = methods_new();
    source in;
    source_init(&in, REQ("1", "until_cancelled", "[]") REQ("2", "echo", "[2]"), 4096, END_WAIT);
    sink out;
    sink_init(&out, false);
    srv_options options = options_with(2, false);
    options.stop_reading = source_stop_reading;
    options.stop_reading_context = &in;
    server *srv;
    assert_int_equal(srv_new(methods, &options, sink_write, &out, &srv), 0);
    /* The stop comes once the second call has answered: it is not left queued. */
    stopper stop = {srv, &in, 0, &out, RES("2", "[2]"), false};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, stop_when_waiting, &stop), 0);
    int result = srv_run(srv, source_read, &in);
    long long ended_at = clock_now_ms();
    assert_int_equal(pthread_join(thread, NULL), 0);
    /* Every call ended within the grace period: the running one saw its cancellation. */
    assert_int_equal(result, SRV_STOPPED);
    assert_true(ended_at - stop.stopped_at < options.shutdown_grace_ms);
    assert_true(srv_finished(srv));
    assert_non_null(strstr(out.text, RES("2", "[2]")));
    assert_non_null(strstr(out.text, RES("1", "\"stopped\"")));
    assert_int_equal(strlen(out.text), strlen(RES("2", "[2]") RES("1", "\"stopped\"")));
    srv_free(srv);
    source_fini(&in);
    reg_free(methods);
    call_store_release();
}

static void test_stop_gives_up_after_the_grace_period(void **state)
{
    (void)state;
    registry *methods = methods_new();
    atomic_store(&kept_call, NULL);
    source in;
    source_init(&in, REQ("7", "keep", "[]"), 4096, END_WAIT);
    sink out;
    sink_init(&out, false);
    srv_options options = options_with(1, false);
    options.shutdown_grace_ms = 150;
    options.stop_reading = source_stop_reading;
    options.stop_reading_context = &in;
    server *srv;
    assert_int_equal(srv_new(methods, &options, sink_write, &out, &srv), 0);
    /* The stop comes once the call runs: it is not left queued. */
    stopper stop = {srv, &in, 0, &out, NULL, true};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, stop_when_waiting, &stop), 0);
    log_capture log;
    log_capture_start(&log, LOG_WARNING);
    int result = srv_run(srv, source_read, &in);
    long long ended_at = clock_now_ms();
    log_capture_end(&log);
    assert_int_equal(pthread_join(thread, NULL), 0);
    assert_int_equal(result, SRV_STOPPED_EARLY);
    assert_true(ended_at - stop.stopped_at >= options.shutdown_grace_ms);
    assert_logged(log.text, "still running at the end of the grace period; left unanswered: "
                            "plugin testplugin, method keep, id 7 (deferred, not completed)");
    assert_logged(log.text, "calls still running after 150 ms; leaving them");
    assert_string_equal(out.text, "");
    /* The call is still in flight until its plugin completes it. */
    assert_false(srv_finished(srv));
    assert_int_equal(host.call_complete(atomic_load(&kept_call), RPCD_OK), RPCD_OK);
    assert_true(srv_finished(srv));
    srv_free(srv);
    source_fini(&in);
    reg_free(methods);
    call_store_release();
}

static void test_closed_output_ends_a_waiting_read(void **state)
{
    (void)state;
    registry *methods = methods_new();
    source in;
    source_init(&in, REQ("1", "echo", "[1]"), 4096, END_WAIT);
    sink out;
    sink_init(&out, true);
    srv_options options = options_with(0, false);
    options.stop_reading = source_stop_reading;
    options.stop_reading_context = &in;
    log_capture log;
    log_capture_start(&log, LOG_ERROR);
    /* Without the failed write stopping the read, this would wait for ever. */
    int result = srv_serve(methods, &options, source_read, &in, sink_write, &out);
    log_capture_end(&log);
    assert_int_equal(result, SRV_OUTPUT_FAILED);
    assert_true(in.stop_reading);
    assert_true(out.writes >= 1);
    assert_logged(log.text, "writing responses failed: the client closed its end");
    source_fini(&in);
    reg_free(methods);
    call_store_release();
}

static void test_failed_read_answers_what_was_read(void **state)
{
    (void)state;
    registry *methods = methods_new();
    source in;
    source_init(&in, REQ("1", "echo", "[1]"), 4096, END_FAIL);
    sink out;
    sink_init(&out, false);
    srv_options options = options_with(0, false);
    log_capture log;
    log_capture_start(&log, LOG_ERROR);
    int result = srv_serve(methods, &options, source_read, &in, sink_write, &out);
    log_capture_end(&log);
    assert_int_equal(result, SRV_INPUT_FAILED);
    assert_logged(log.text, "reading requests failed: Input/output error");
    assert_string_equal(out.text, RES("1", "[1]"));
    source_fini(&in);
    reg_free(methods);
    call_store_release();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_in_responses_out_in_order),
        cmocka_unit_test(test_end_of_input_answers_every_request),
        cmocka_unit_test(test_line_too_long_answered_and_next_line_served),
        cmocka_unit_test(test_stop_ends_a_waiting_read_and_cancels_running_calls),
        cmocka_unit_test(test_stop_gives_up_after_the_grace_period),
        cmocka_unit_test(test_closed_output_ends_a_waiting_read),
        cmocka_unit_test(test_failed_read_answers_what_was_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
