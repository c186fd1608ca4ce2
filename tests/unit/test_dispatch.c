/* SPDX-License-Identifier: MIT */
/*
 * Dispatch and call tests: lines through disp_line to handlers written here, with the output
 * captured in memory. Covers the host functions a handler uses and what ends up on the wire.
 */
#include "calls/call.h"
#include "config/config.h"
#include "serve/dispatch.h"
#include "mcp/mcp.h"
#include "base/output.h"
#include "methods/registry.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static rpcd_host_api host;

typedef struct captured {
    char *data;
    size_t length;
} captured;

static int capture_write(void *sink, const struct iovec *parts, int part_count)
{
    captured *c = sink;
    for (int i = 0; i < part_count; i++) {
        c->data = realloc(c->data, c->length + parts[i].iov_len + 1);
        memcpy(c->data + c->length, parts[i].iov_base, parts[i].iov_len);
        c->length += parts[i].iov_len;
        c->data[c->length] = '\0';
    }
    return 0;
}

typedef struct fixture {
    registry *methods;
    output *out;
    call_table *calls;
    captured written;
    rpcd_config *config;
    mcp_tools *tools;
    gen_current *generations;
    gen_reader reader;
    dispatcher dispatch;
} fixture;

/* Handlers under test. user_data picks the behaviour where one handler serves several. */
static rpcd_call *kept_call;

static int handle_echo(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)data;
    return params ? host.call_result(call, params, length) : RPCD_OK;
}

static int handle_no_result(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)call, (void)params, (void)length, (void)data;
    return RPCD_OK;
}

static int handle_fail(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    return host.call_fail(call, RPCD_ERR_INVALID_PARAMS, "need \"x\"", "{\"x\":1}", 7);
}

static int handle_fail_code(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)data;
    json_t *root = json_loadb(params, length, 0, NULL);
    json_int_t code = json_integer_value(json_object_get(root, "code"));
    json_decref(root);
    return host.call_fail_code(call, code, "own failure", "[1,2]", 5);
}

/* What call_fail and call_fail_code returned for data that is not JSON, in handle_fail_bad_data. */
static int bad_data_status[4];

/*
 * Hands over data that is not JSON (cut short, trailing text, a bare word, two values): each is
 * refused, and the call then fails with its own status and no data.
 */
static int handle_fail_bad_data(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    bad_data_status[0] = host.call_fail(call, RPCD_ERR_INVALID_PARAMS, "m", "{\"x\":", 5);
    bad_data_status[1] = host.call_fail(call, RPCD_ERR_INTERNAL, "m", "{\"x\":1} tail", 12);
    bad_data_status[2] = host.call_fail_code(call, 7, "m", "nope", 4);
    bad_data_status[3] = host.call_fail_code(call, 7, "m", "1 2", 3);
    return RPCD_ERR_INVALID_PARAMS;
}

/* Keeps its call open: the test completes it. */
static int handle_defer(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    kept_call = call;
    return RPCD_DEFERRED;
}

static int handle_status(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)call, (void)params, (void)length;
    return (int)(intptr_t)data;
}

static int handle_bad_result(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length;
    const char *text = data;
    int status = host.call_result(call, text, strlen(text));
    assert_int_equal(status, RPCD_ERR_INVALID_ARGUMENT);
    return RPCD_OK;
}

static int handle_notify(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    assert_int_equal(host.call_notify(call, "log/line", "{\"text\":\"first\"}", 16), RPCD_OK);
    assert_int_equal(host.call_notify(call, "log/line", "{bad", 4), RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(host.call_notify(call, "log/line", "12", 2), RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(host.call_notify(call, NULL, NULL, 0), RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(host.call_notify(call, "bare", NULL, 0), RPCD_OK);
    return host.call_result(call, "\"done\"", 6);
}

static int handle_progress(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    assert_int_equal(host.call_progress(call, 1, 4, "a \"quoted\" step"), RPCD_OK);
    assert_int_equal(host.call_progress(call, 2.5, -1, NULL), RPCD_OK);
    assert_int_equal(host.call_progress(call, 0.0 / 0.0, 4, NULL), RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(host.call_progress(call, 1, 4, "\xff"), RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(host.call_is_cancelled(call), 0);
    assert_string_equal(host.call_method(call), "progress");
    return RPCD_OK;
}

static int handle_keep(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    kept_call = call;
    return RPCD_OK;
}

/* A notification from another thread while the handler waits for it. */
static void *notify_from_thread(void *call)
{
    int status = host.call_notify(call, "from/thread", "[1]", 3);
    return (void *)(intptr_t)status;
}

static int handle_threaded(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    pthread_t thread;
    void *status;
    pthread_create(&thread, NULL, notify_from_thread, call);
    pthread_join(thread, &status);
    assert_int_equal((intptr_t)status, RPCD_OK);
    return RPCD_OK;
}

static void add(registry *methods, const char *name, rpcd_handler_fn handler, void *data)
{
    rpcd_method method = rpcd_method_new(name, handler);
    method.user_data = data;
    assert_int_equal(reg_add(methods, &method, NULL, "testplugin", NULL), 0);
}

static int setup(void **state)
{
    call_fill_host_api(&host);
    fixture *f = calloc(1, sizeof *f);
    assert_int_equal(reg_new(&f->methods), 0);
    add(f->methods, "echo", handle_echo, NULL);
    add(f->methods, "no_result", handle_no_result, NULL);
    add(f->methods, "fail", handle_fail, NULL);
    add(f->methods, "fail_code", handle_fail_code, NULL);
    add(f->methods, "status.internal", handle_status, (void *)(intptr_t)RPCD_ERR_INTERNAL);
    add(f->methods, "status.unknown", handle_status, (void *)(intptr_t)777);
    add(f->methods, "status.application", handle_status, (void *)(intptr_t)RPCD_ERR_APPLICATION);
    add(f->methods, "status.cancelled", handle_status, (void *)(intptr_t)RPCD_ERR_CANCELLED);
    add(f->methods, "status.mismatch", handle_fail, NULL);
    add(f->methods, "bad_result", handle_bad_result, "{not json");
    add(f->methods, "non_utf8_result", handle_bad_result, "\"\xff\"");
    add(f->methods, "notify", handle_notify, NULL);
    add(f->methods, "progress", handle_progress, NULL);
    add(f->methods, "keep", handle_keep, NULL);
    add(f->methods, "threaded", handle_threaded, NULL);
    add(f->methods, "fail_bad_data", handle_fail_bad_data, NULL);
    add(f->methods, "defer", handle_defer, NULL);
    char error[256];
    assert_int_equal(cfg_load_string("", "/test.conf", &f->config, error, sizeof error), 0);
    assert_int_equal(mcp_tools_new(f->methods, f->config, &f->tools, error, sizeof error), 0);
    assert_int_equal(out_new(capture_write, &f->written, &f->out), 0);
    /* No workers: each handler runs inside disp_line, so its output is there when it returns. */
    call_settings settings = {
        .out = f->out, .limits.max_depth = 64, .limits.workers = 0, .limits.max_in_flight = 16};
    assert_int_equal(call_table_new(&settings, &f->calls), 0);
    generation *gen;
    assert_int_equal(gen_new_borrowed(f->methods, f->tools, &gen), 0);
    assert_int_equal(gen_current_new(gen, &f->generations), 0);
    gen_reader_init(&f->reader, f->generations, call_let_go_generation, f->calls);
    f->dispatch.generations = &f->reader;
    f->dispatch.calls = f->calls;
    f->dispatch.out = f->out;
    f->dispatch.limits.max_depth = 64;
    f->dispatch.limits.max_batch = 10;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    gen_reader_fini(&f->reader);
    call_table_free(f->calls);
    gen_current_free(f->generations);
    out_free(f->out);
    mcp_tools_free(f->tools);
    cfg_free(f->config);
    reg_free(f->methods);
    free(f->written.data);
    free(f);
    call_store_release();
    return 0;
}

/* Sends one line and returns everything written for it (owned by the fixture). */
static const char *send(fixture *f, const char *line)
{
    free(f->written.data);
    f->written.data = NULL;
    f->written.length = 0;
    disp_line(&f->dispatch, line, strlen(line));
    out_flush(f->out);
    return f->written.data ? f->written.data : "";
}

/* Asserts that text is exactly the given lines, each JSON-equal to what was written. */
static void assert_lines(const char *text, int count, ...)
{
    va_list expected;
    va_start(expected, count);
    char *copy = strdup(text);
    char *save = NULL;
    char *line = strtok_r(copy, "\n", &save);
    for (int i = 0; i < count; i++) {
        const char *want = va_arg(expected, const char *);
        assert_non_null(line);
        json_error_t error;
        json_t *got = json_loads(line, JSON_DECODE_ANY | JSON_ALLOW_NUL, &error);
        json_t *wanted = json_loads(want, JSON_DECODE_ANY | JSON_ALLOW_NUL, &error);
        assert_non_null(got);
        assert_non_null(wanted);
        if (!json_equal(got, wanted))
            fail_msg("line %d:\n got:  %s\n want: %s", i + 1, line, want);
        json_decref(got);
        json_decref(wanted);
        line = strtok_r(NULL, "\n", &save);
    }
    assert_null(line);
    va_end(expected);
    free(copy);
}

static void test_result_is_spliced_verbatim(void **state)
{
    const char *out = send(*state, "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"echo\","
                                   "\"params\":[1e400, 18446744073709551617, \"\\u00e9\"]}");
    assert_string_equal(out, "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"result\":[1e400, "
                             "18446744073709551617, \"\\u00e9\"]}\n");
}

static void test_no_result_is_null(void **state)
{
    assert_lines(send(*state, "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"no_result\"}"), 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":null}");
}

static void test_fail_with_detail_and_data(void **state)
{
    assert_lines(send(*state, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"fail\"}"), 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32602,\"message\":"
                 "\"Invalid params\",\"data\":{\"exception\":\"RPCD_ERR_INVALID_PARAMS\","
                 "\"plugin\":\"testplugin\",\"method\":\"fail\",\"detail\":\"need \\\"x\\\"\","
                 "\"data\":{\"x\":1}}}}");
}

static void test_application_codes(void **state)
{
    assert_lines(send(*state, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"fail_code\","
                              "\"params\":{\"code\":7}}"),
                 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":7,\"message\":"
                 "\"own failure\",\"data\":[1,2]}}");
    assert_lines(send(*state, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"fail_code\","
                              "\"params\":{\"code\":-32001}}"),
                 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32001,\"message\":"
                 "\"own failure\",\"data\":[1,2]}}");
    /* A reserved code is not the plugin's to send. */
    assert_lines(send(*state, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"fail_code\","
                              "\"params\":{\"code\":-32700}}"),
                 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32603,\"message\":"
                 "\"Internal error\",\"data\":{\"exception\":\"RPCD_ERR_APPLICATION\","
                 "\"plugin\":\"testplugin\",\"method\":\"fail_code\",\"detail\":"
                 "\"error code -32700 is reserved\",\"data\":[1,2]}}}");
    assert_lines(send(*state, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"status.application\"}"),
                 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":6,\"error\":{\"code\":-32603,\"message\":"
                 "\"Internal error\",\"data\":{\"exception\":\"RPCD_ERR_APPLICATION\","
                 "\"plugin\":\"testplugin\",\"method\":\"status.application\",\"detail\":"
                 "\"RPCD_ERR_APPLICATION returned without call_fail_code\"}}}");
}

static void test_statuses(void **state)
{
    assert_lines(send(*state, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"status.internal\"}"), 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32603,\"message\":"
                 "\"Internal error\",\"data\":{\"exception\":\"RPCD_ERR_INTERNAL\","
                 "\"plugin\":\"testplugin\",\"method\":\"status.internal\"}}}");
    assert_lines(send(*state, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"status.unknown\"}"), 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":8,\"error\":{\"code\":-32603,\"message\":"
                 "\"Internal error\",\"data\":{\"exception\":\"unknown status\",\"status\":777,"
                 "\"plugin\":\"testplugin\",\"method\":\"status.unknown\"}}}");
    assert_lines(send(*state, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"status.cancelled\"}"), 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":-32800,\"message\":"
                 "\"Request cancelled\",\"data\":{\"exception\":\"RPCD_ERR_CANCELLED\","
                 "\"plugin\":\"testplugin\",\"method\":\"status.cancelled\"}}}");
}

static void test_invalid_result_never_reaches_the_wire(void **state)
{
    const char *out = send(*state, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"bad_result\"}");
    assert_null(strstr(out, "not json"));
    assert_lines(out, 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":10,\"error\":{\"code\":-32603,\"message\":"
                 "\"Internal error\",\"data\":{\"exception\":\"RPCD_ERR_INVALID_ARGUMENT\","
                 "\"plugin\":\"testplugin\",\"method\":\"bad_result\",\"detail\":"
                 "\"the handler's result is not valid JSON\"}}}");
    out = send(*state, "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"non_utf8_result\"}");
    assert_null(strchr(out, '\xff'));
    assert_non_null(strstr(out, "-32603"));
}

static void test_notifications_before_response(void **state)
{
    assert_lines(send(*state, "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"notify\"}"), 3,
                 "{\"jsonrpc\":\"2.0\",\"method\":\"log/line\",\"params\":{\"text\":\"first\"}}",
                 "{\"jsonrpc\":\"2.0\",\"method\":\"bare\"}",
                 "{\"jsonrpc\":\"2.0\",\"id\":12,\"result\":\"done\"}");
    assert_lines(send(*state, "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"threaded\"}"), 2,
                 "{\"jsonrpc\":\"2.0\",\"method\":\"from/thread\",\"params\":[1]}",
                 "{\"jsonrpc\":\"2.0\",\"id\":13,\"result\":null}");
}

static void test_progress_needs_a_token(void **state)
{
    assert_lines(send(*state, "{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"progress\","
                              "\"params\":{}}"),
                 1, "{\"jsonrpc\":\"2.0\",\"id\":14,\"result\":null}");
    assert_lines(send(*state, "{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"progress\","
                              "\"params\":{\"_meta\":{\"progressToken\":\"t\"}}}"),
                 3,
                 "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
                 "{\"progressToken\":\"t\",\"progress\":1,\"total\":4,"
                 "\"message\":\"a \\\"quoted\\\" step\"}}",
                 "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
                 "{\"progressToken\":\"t\",\"progress\":2.5}}",
                 "{\"jsonrpc\":\"2.0\",\"id\":15,\"result\":null}");
    /* An integer token is echoed as sent. */
    const char *out =
        send(*state, "{\"jsonrpc\":\"2.0\",\"id\":16,\"method\":\"progress\","
                     "\"params\":{\"_meta\":{\"progressToken\":12345678901234567890}}}");
    assert_non_null(strstr(out, "\"progressToken\":12345678901234567890"));
}

static void test_stale_handle_is_harmless(void **state)
{
    send(*state, "{\"jsonrpc\":\"2.0\",\"id\":17,\"method\":\"keep\"}");
    assert_non_null(kept_call);
    assert_int_equal(host.call_result(kept_call, "1", 1), RPCD_ERR_STALE);
    assert_int_equal(host.call_fail(kept_call, RPCD_ERR_INTERNAL, "x", NULL, 0), RPCD_ERR_STALE);
    assert_int_equal(host.call_fail_code(kept_call, 5, "x", NULL, 0), RPCD_ERR_STALE);
    assert_int_equal(host.call_notify(kept_call, "late", NULL, 0), RPCD_ERR_STALE);
    assert_int_equal(host.call_progress(kept_call, 1, 2, NULL), RPCD_ERR_STALE);
    assert_int_equal(host.call_is_cancelled(kept_call), 1);
    assert_null(host.call_method(kept_call));
    /* The slot is reused by the next call: the old handle must still be refused. */
    const char *out = send(*state, "{\"jsonrpc\":\"2.0\",\"id\":18,\"method\":\"no_result\"}");
    assert_non_null(strstr(out, "\"id\":18"));
    assert_int_equal(host.call_notify(kept_call, "late", NULL, 0), RPCD_ERR_STALE);
    /* Handles that never existed. */
    assert_int_equal(host.call_result((rpcd_call *)(uintptr_t)0x7fff12345678ull, "1", 1),
                     RPCD_ERR_STALE);
    assert_int_equal(host.call_result(NULL, "1", 1), RPCD_ERR_STALE);
    assert_string_equal(send(*state, "{\"jsonrpc\":\"2.0\",\"id\":19,\"method\":\"no_result\"}"),
                        "{\"jsonrpc\":\"2.0\",\"id\":19,\"result\":null}\n");
}

static void test_fail_argument_checks(void **state)
{
    (void)state;
    assert_int_equal(host.call_fail(NULL, RPCD_OK, NULL, NULL, 0), RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(host.call_fail(NULL, RPCD_ERR_APPLICATION, NULL, NULL, 0),
                     RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(host.call_fail_code(NULL, 1, NULL, NULL, 0), RPCD_ERR_INVALID_ARGUMENT);
}

/* Data that is not JSON is refused, and what goes out stays one valid JSON line. */
static void test_fail_data_not_json_refused(void **state)
{
    memset(bad_data_status, 0, sizeof bad_data_status);
    assert_lines(send(*state, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"fail_bad_data\"}"), 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,\"message\":"
                 "\"Invalid params\",\"data\":{\"exception\":\"RPCD_ERR_INVALID_PARAMS\","
                 "\"plugin\":\"testplugin\",\"method\":\"fail_bad_data\"}}}");
    for (size_t i = 0; i < sizeof bad_data_status / sizeof bad_data_status[0]; i++)
        if (bad_data_status[i] != RPCD_ERR_INVALID_ARGUMENT)
            fail_msg("attempt %zu returned %d, not RPCD_ERR_INVALID_ARGUMENT", i,
                     bad_data_status[i]);
}

/* Response objects that answer no request of rpcd's (none was sent) get nothing back. */
static void test_response_objects_get_no_answer(void **state)
{
    static const char *const responses[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":1}",
        "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"x\"}}",
        "[{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":null}]",
    };
    for (size_t i = 0; i < sizeof responses / sizeof responses[0]; i++) {
        const char *out = send(*state, responses[i]);
        if (out[0])
            fail_msg("'%s' was answered: %s", responses[i], out);
    }
}

/* A response object without an id is no valid response: -32600 with id null, like any other. */
static void test_response_without_id_is_invalid(void **state)
{
    static const char error[] = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,"
                                "\"message\":\"Invalid Request\"}}";
    assert_lines(send(*state, "{\"jsonrpc\":\"2.0\",\"result\":1}"), 1, error);
    assert_lines(send(*state, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":1,\"message\":\"m\"}}"), 1,
                 error);
}

/*
 * The cancellations are notifications: sent as requests they are answered -32601, like any method
 * rpcd has not (LSP says so of requests starting with "$/"), and cancel nothing.
 */
static void test_cancel_sent_as_request_is_method_not_found(void **state)
{
    fixture *f = *state;
    kept_call = NULL;
    assert_string_equal(send(f, "{\"jsonrpc\":\"2.0\",\"id\":\"held\",\"method\":\"defer\"}"), "");
    assert_non_null(kept_call);
    char *lsp = strdup(send(f, "{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"method\":\"$/cancelRequest\","
                               "\"params\":{\"id\":\"held\"}}"));
    char *mcp = strdup(send(f, "{\"jsonrpc\":\"2.0\",\"id\":\"c2\","
                               "\"method\":\"notifications/cancelled\","
                               "\"params\":{\"requestId\":\"held\"}}"));
    int cancelled = host.call_is_cancelled(kept_call);
    /* Completed before any check, so that a failure leaves no call in flight behind. */
    free(f->written.data);
    f->written.data = NULL;
    f->written.length = 0;
    int completed = host.call_complete(kept_call, RPCD_OK);
    out_flush(f->out);
    assert_lines(lsp, 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"error\":{\"code\":-32601,\"message\":"
                 "\"Method not found\"}}");
    assert_lines(mcp, 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":\"c2\",\"error\":{\"code\":-32601,\"message\":"
                 "\"Method not found\"}}");
    free(lsp);
    free(mcp);
    assert_int_equal(cancelled, 0);
    assert_int_equal(completed, RPCD_OK);
    /* The held call is answered with its own result, not -32800 nor nothing. */
    assert_lines(f->written.data ? f->written.data : "", 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":\"held\",\"result\":null}");
}

/* The next pthread_mutex_init calls to fail (linked with --wrap=pthread_mutex_init). */
static atomic_int mutex_inits_to_fail;

int __real_pthread_mutex_init(pthread_mutex_t *mutex, const pthread_mutexattr_t *attributes);
int __wrap_pthread_mutex_init(pthread_mutex_t *mutex, const pthread_mutexattr_t *attributes);
int __wrap_pthread_mutex_init(pthread_mutex_t *mutex, const pthread_mutexattr_t *attributes)
{
    int left = atomic_load(&mutex_inits_to_fail);
    while (left > 0 && !atomic_compare_exchange_weak(&mutex_inits_to_fail, &left, left - 1))
        ;
    if (left > 0)
        return ENOMEM;
    return __real_pthread_mutex_init(mutex, attributes);
}

static void test_batches(void **state)
{
    fixture *f = *state;
    const char *out = send(f, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]},"
                              "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[2]},"
                              "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"nope\"},5]");
    assert_lines(out, 1,
                 "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[1]},"
                 "{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32601,\"message\":"
                 "\"Method not found\"}},"
                 "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":"
                 "\"Invalid Request\"}}]");
    assert_string_equal(send(f, "[{\"jsonrpc\":\"2.0\",\"method\":\"echo\"}, "
                                "{\"jsonrpc\":\"2.0\",\"method\":\"nope\"}]"),
                        "");
    assert_lines(send(f, " [ ] "), 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":"
                 "\"Invalid Request\"}}");
    /* A batch rpcd cannot make room for is answered once, -32603, and the next one is served. */
    atomic_store(&mutex_inits_to_fail, 1);
    assert_lines(send(f, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}]"), 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,\"message\":"
                 "\"Internal error\"}}");
    assert_int_equal(atomic_load(&mutex_inits_to_fail), 0);
    assert_lines(send(f, "[{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\",\"params\":[2]}]"), 1,
                 "[{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":[2]}]");
}

static void test_parse_errors_and_limits(void **state)
{
    fixture *f = *state;
    assert_lines(send(f, "{\"jsonrpc\":"), 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":"
                 "\"Parse error\"}}");
    char deep[200];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    assert_string_equal(send(f, ""), "");
    free(f->written.data);
    f->written.data = NULL;
    f->written.length = 0;
    disp_line(&f->dispatch, deep, sizeof deep);
    out_flush(f->out);
    assert_lines(f->written.data, 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":"
                 "\"Parse error\",\"data\":{\"detail\":\"nested deeper than max_depth (64)\"}}}");
    assert_string_equal(send(f, "  \t "), "");
    assert_lines(send(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ech\\u006f\",\"params\":[]}"),
                 1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[]}");
    /* A NUL inside the name is part of it: no method has that name. */
    assert_lines(send(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\\u0000\"}"), 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32601,\"message\":"
                 "\"Method not found\"}}");
    assert_lines(send(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":1}"), 0);
}

static void test_long_escaped_method_name(void **state)
{
    fixture *f = *state;
    /* Longer than the on-stack decoding buffer, and escaped, so it goes through the heap. */
    char line[2000];
    int used = snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"");
    for (int i = 0; i < 300; i++)
        used += snprintf(line + used, sizeof line - (size_t)used, "\\u0061");
    snprintf(line + used, sizeof line - (size_t)used, "\"}");
    assert_lines(send(f, line), 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,\"message\":"
                 "\"Method not found\"}}");
}

/* A line asking tools/call with params text. */
static const char *send_tool_call(fixture *f, const char *id, const char *params)
{
    char *line = NULL;
    size_t length = 0;
    FILE *text = open_memstream(&line, &length);
    fprintf(text, "{\"jsonrpc\":\"2.0\",%s%s%s\"method\":\"tools/call\",\"params\":%s}",
            id ? "\"id\":" : "", id ? id : "", id ? "," : "", params);
    fclose(text);
    const char *out = send(f, line);
    free(line);
    return out;
}

/* params {"name":"<prefix><count times unit>"} */
static char *repeated_name(const char *unit, size_t count)
{
    size_t unit_length = strlen(unit);
    char *params = malloc(unit_length * count + 32);
    size_t used = (size_t)sprintf(params, "{\"name\":\"");
    for (size_t i = 0; i < count; i++, used += unit_length)
        memcpy(params + used, unit, unit_length);
    strcpy(params + used, "\"}");
    return params;
}

static const char overlong_error[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,\"message\":\"Invalid params\","
    "\"data\":{\"detail\":\"\\\"name\\\" is longer than 128 bytes, the longest tool name\"}}}";

static void test_tool_call_overlong_name(void **state)
{
    fixture *f = *state;
    /* Plain and escaped, just over the limit and far over it: the answer says so and shows
     * nothing back, and never a byte the request did not hold. */
    static const struct {
        const char *unit;
        size_t count;
    } names[] = {{"x", 129},       {"x", 200},      {"x", 100000},   {"\\u0078", 129},
                 {"\\u0078", 200}, {"\\u00e9", 65}, {"\\ud800", 43}, {"\\u0000", 5000}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *params = repeated_name(names[i].unit, names[i].count);
        assert_lines(send_tool_call(f, "1", params), 1, overlong_error);
        free(params);
    }
    /* 128 bytes is a name: shown back whole in "unknown tool". */
    char *params = repeated_name("y", 128);
    const char *out = send_tool_call(f, "2", params);
    char expected[640];
    snprintf(expected, sizeof expected,
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32602,\"message\":\"unknown "
             "tool %.128s\",\"data\":{\"detail\":\"unknown tool\",\"tool\":\"%.128s\"}}}",
             params + 9, params + 9);
    assert_lines(out, 1, expected);
    free(params);
    /* An escaped name that decodes short is the tool it names. */
    assert_lines(send_tool_call(f, "3",
                                "{\"name\":\"\\u0065\\u0063\\u0068\\u006f\","
                                "\"arguments\":{\"a\":1}}"),
                 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\","
                 "\"text\":\"{\\\"a\\\":1}\"}],\"structuredContent\":{\"a\":1},"
                 "\"isError\":false}}");
    /* What a name decodes to is shown as valid JSON text: NUL escaped, a lone surrogate as
     * U+FFFD. */
    assert_lines(send_tool_call(f, "4", "{\"name\":\"a\\u0000\\ud800\"}"), 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":4,\"error\":{\"code\":-32602,\"message\":"
                 "\"unknown tool a\\\\x00\ufffd\",\"data\":{\"detail\":\"unknown tool\","
                 "\"tool\":\"a\\u0000\\ufffd\"}}}");
    /* As a notification: nothing at all. */
    params = repeated_name("x", 200);
    assert_lines(send_tool_call(f, NULL, params), 0);
    free(params);
}

static void test_tool_call_duplicate_members(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *params, *detail;
    } cases[] = {
        {"{\"name\":\"echo\",\"name\":\"no_result\",\"arguments\":{}}",
         "\\\"name\\\" appears twice"},
        {"{\"name\":\"echo\",\"n\\u0061me\":\"echo\"}", "\\\"name\\\" appears twice"},
        {"{\"name\":1,\"name\":\"echo\"}", "\\\"name\\\" appears twice"},
        {"{\"name\":\"echo\",\"arguments\":{\"a\":1},\"arguments\":{\"a\":2}}",
         "\\\"arguments\\\" appears twice"},
        {"{\"name\":\"echo\",\"arguments\":{},\"_meta\":{},\"_meta\":{\"progressToken\":1}}",
         "\\\"_meta\\\" appears twice"},
        {"{\"name\":\"echo\",\"_meta\":{\"progressToken\":1,\"progressToken\":2}}",
         "\\\"progressToken\\\" appears twice in \\\"_meta\\\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char expected[512];
        snprintf(expected, sizeof expected,
                 "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32602,\"message\":"
                 "\"Invalid params\",\"data\":{\"detail\":\"%s\"}}}",
                 cases[i].detail);
        assert_lines(send_tool_call(f, "7", cases[i].params), 1, expected);
        /* Notifications are never answered, and run nothing either. */
        assert_lines(send_tool_call(f, NULL, cases[i].params), 0);
    }
    /* Members of the arguments are the tool's business, not rpcd's. */
    assert_lines(send_tool_call(f, "8", "{\"name\":\"echo\",\"arguments\":{\"a\":1,\"a\":2}}"), 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{\"content\":[{\"type\":\"text\","
                 "\"text\":\"{\\\"a\\\":1,\\\"a\\\":2}\"}],\"structuredContent\":{\"a\":2},"
                 "\"isError\":false}}");
}

static void test_tool_call_without_arguments(void **state)
{
    /* The handler gets {} (what the tool's schema promises), not no params. */
    assert_lines(send_tool_call(*state, "9", "{\"name\":\"echo\"}"), 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"content\":[{\"type\":\"text\","
                 "\"text\":\"{}\"}],\"structuredContent\":{},\"isError\":false}}");
}

static void test_duplicate_progress_token_is_no_token(void **state)
{
    /* For a plain method the token is looked for only when progress is reported; given twice,
     * it names nothing, and no progress goes out. */
    assert_lines(send(*state, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"progress\",\"params\":"
                              "{\"_meta\":{\"progressToken\":\"a\",\"progressToken\":\"b\"}}}"),
                 1, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}");
    assert_lines(send(*state, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"progress\",\"params\":"
                              "{\"_meta\":{\"progressToken\":\"a\"},\"_meta\":{}}}"),
                 1, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":null}");
}

/*
 * Only initialize, server/discover and messages of the stateless revision, which only MCP
 * clients send, mark the session as MCP's (its end of input then cancels the calls in flight);
 * tools/call, ping and plain calls do not. The session counts as initialized once an initialize
 * request is answered: not for a notification, nor for another method.
 */
static void test_mcp_session_is_marked(void **state)
{
    fixture *f = *state;
    mcp_session session = {0};
    f->dispatch.session = &session;
    send(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}");
    send(f, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
    send(f,
         "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}");
    send(f, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/list\"}");
    assert_false(session.started);
    send(f, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"server/discover\"}");
    assert_true(session.started);
    assert_false(atomic_load(&session.initialized));
    /* initialize as a notification shows an MCP client, but nothing was answered. */
    session = (mcp_session){0};
    send(f, "{\"jsonrpc\":\"2.0\",\"method\":\"initialize\",\"params\":{}}");
    assert_true(session.started);
    assert_false(atomic_load(&session.initialized));
    session = (mcp_session){0};
    send(f, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"initialize\",\"params\":{}}");
    assert_true(session.started);
    assert_true(atomic_load(&session.initialized));
    send(f, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"echo\",\"params\":[1]}");
    assert_true(session.started); /* once marked, for good */
    session = (mcp_session){0};
    send(f,
         "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
         "\"_meta\":{\"io.modelcontextprotocol/"
         "protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}");
    assert_true(session.started); /* the stateless revision: an MCP client */
    assert_false(atomic_load(&session.initialized));
    f->dispatch.session = NULL;
}

static void test_cancellation_with_duplicate_id(void **state)
{
    fixture *f = *state;
    static const char *const ambiguous[] = {
        "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":5,\"id\":5}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":6,\"id\":5}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
        "\"params\":{\"requestId\":5,\"requestId\":5}}",
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
        "\"params\":{\"requestId\":5,\"requ\\u0065stId\":6}}",
    };
    assert_lines(send(f, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"defer\"}"), 0);
    rpcd_call *call = kept_call;
    /* The call is completed before anything is asserted: a failure must not leave it open. */
    int cancelled_by[sizeof ambiguous / sizeof ambiguous[0]];
    size_t written_by[sizeof ambiguous / sizeof ambiguous[0]];
    for (size_t i = 0; i < sizeof ambiguous / sizeof ambiguous[0]; i++) {
        written_by[i] = strlen(send(f, ambiguous[i]));
        cancelled_by[i] = host.call_is_cancelled(call);
    }
    /* Given once, the same cancellation works. */
    send(f, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":5}}");
    int cancelled = host.call_is_cancelled(call);
    free(f->written.data);
    f->written.data = NULL;
    f->written.length = 0;
    assert_int_equal(host.call_complete(call, RPCD_ERR_CANCELLED), RPCD_OK);
    out_flush(f->out);
    for (size_t i = 0; i < sizeof ambiguous / sizeof ambiguous[0]; i++) {
        assert_int_equal(written_by[i], 0); /* notifications: never answered */
        if (cancelled_by[i])
            fail_msg("cancelled by %s", ambiguous[i]);
    }
    assert_int_equal(cancelled, 1);
    assert_lines(f->written.data, 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32800,\"message\":"
                 "\"Request cancelled\",\"data\":{\"exception\":\"RPCD_ERR_CANCELLED\","
                 "\"plugin\":\"testplugin\",\"method\":\"defer\"}}}");
}

static void test_line_too_long(void **state)
{
    fixture *f = *state;
    free(f->written.data);
    f->written.data = NULL;
    f->written.length = 0;
    disp_line_too_long(&f->dispatch, 5000, 1024);
    out_flush(f->out);
    assert_lines(f->written.data, 1,
                 "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":"
                 "\"Invalid Request\",\"data\":{\"detail\":"
                 "\"line longer than max_line_bytes (1024)\"}}}");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_result_is_spliced_verbatim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_result_is_null, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fail_with_detail_and_data, setup, teardown),
        cmocka_unit_test_setup_teardown(test_application_codes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_statuses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_invalid_result_never_reaches_the_wire, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_notifications_before_response, setup, teardown),
        cmocka_unit_test_setup_teardown(test_progress_needs_a_token, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_handle_is_harmless, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fail_argument_checks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fail_data_not_json_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_response_objects_get_no_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_response_without_id_is_invalid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancel_sent_as_request_is_method_not_found, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_batches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parse_errors_and_limits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_long_escaped_method_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_line_too_long, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tool_call_overlong_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tool_call_duplicate_members, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tool_call_without_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_progress_token_is_no_token, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mcp_session_is_marked, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cancellation_with_duplicate_id, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
