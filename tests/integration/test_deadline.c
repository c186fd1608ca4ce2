/* SPDX-License-Identifier: MIT */
/*
 * Deadlines of in-process plugins through the real binary: a call past timeout_ms (or the less
 * its request asks) is answered once, at its deadline, while its handler keeps its worker and
 * other calls are served; what the handler does after reaches nobody; the end of input while
 * such a handler runs ends rpcd within shutdown_grace_ms; --check shows the deadlines. In rpcd's
 * process and isolated: deadlines that fall out of the calls' order, and a client's cancel,
 * which is no deadline.
 */
#include "harness.h"

#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#define LINE_TIMEOUT_MS test_time_ms(20000)

typedef struct session {
    char *dir;
    char *config;
    harness_process *rpcd;
} session;

static long long now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
}

/*
 * How late past its deadline an answer may come: the watcher wakes at the deadline, but the
 * machine is shared, and a wrapped or sanitized rpcd is much slower. Generous (how late it
 * comes is a figure of the machine's): a second, scaled (tests/test_time.h). That the answer is
 * the deadline's and not the handler's is in the answer itself (assert_timed_out).
 */
static long long slack_ms(void)
{
    return test_time_ms(1000);
}

/* Starts rpcd on the config text (new, freed here), written in a directory of the session's. */
static void start_with(session *s, char *text)
{
    s->dir = harness_temp_dir();
    assert_non_null(s->dir);
    s->config = harness_write_file(s->dir, "rpcd.conf", text);
    assert_non_null(s->config);
    free(text);
    harness_argv args = harness_rpcd_argv(s->config);
    assert_non_null(args.argv[0]);
    s->rpcd = harness_start(args.argv);
    assert_non_null(s->rpcd);
}

/* Starts rpcd on the echo plugin and the slow fixture, with [rpcd] and [plugin slow] settings. */
static void start(session *s, const char *daemon, const char *slow)
{
    const char *echo = harness_env("RPCD_PLUGIN_ECHO");
    const char *fixture = harness_env("RPCD_FIXTURE_SLOW");
    assert_non_null(echo);
    assert_non_null(fixture);
    char *text;
    assert_true(asprintf(&text,
                         "[rpcd]\n%s\n[plugin echo]\npath = %s\n[plugin slow]\npath = %s\n%s\n",
                         daemon, echo, fixture, slow) >= 0);
    start_with(s, text);
}

static void send_format(session *s, const char *format, ...);
static json_t *next_line(session *s);

/* start, then a first call answered on a worker: times measured from here on leave rpcd's
 * start-up (and its first worker's) out. */
static void start_ready(session *s, const char *daemon, const char *slow)
{
    start(s, daemon, slow);
    send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"ready\",\"method\":\"slow.ready\"}\n");
    json_t *response = next_line(s);
    assert_true(json_is_true(json_object_get(json_object_get(response, "result"), "ready")));
    json_decref(response);
}

static void release(session *s)
{
    harness_free(s->rpcd);
    harness_remove_dir(s->dir);
    free(s->dir);
    free(s->config);
    memset(s, 0, sizeof *s);
}

static int session_setup(void **state)
{
    session *s = calloc(1, sizeof *s);
    *state = s;
    return s ? 0 : -1;
}

static int session_teardown(void **state)
{
    session *s = *state;
    release(s);
    free(s);
    return 0;
}

__attribute__((format(printf, 2, 3))) static void send_format(session *s, const char *format, ...)
{
    char *text;
    va_list args;
    va_start(args, format);
    int length = vasprintf(&text, format, args);
    va_end(args);
    assert_true(length >= 0);
    assert_int_equal(harness_write_text(s->rpcd, text, LINE_TIMEOUT_MS), HARNESS_OK);
    free(text);
}

/* The next line, as JSON (new reference). */
static json_t *next_line(session *s)
{
    char *line = NULL;
    bool unterminated = false;
    int status = harness_read_line(s->rpcd, LINE_TIMEOUT_MS, &line, NULL, &unterminated);
    if (status != HARNESS_OK)
        print_error("no line from rpcd (status %d); its stderr:\n%s\n", status,
                    harness_stderr(s->rpcd));
    assert_int_equal(status, HARNESS_OK);
    json_error_t error;
    json_t *root = json_loads(line, JSON_DECODE_ANY, &error);
    if (!root)
        print_error("not JSON: %s\n", line);
    assert_non_null(root);
    free(line);
    return root;
}

static void print_json(const char *label, const json_t *value)
{
    char *text = json_dumps(value, JSON_ENCODE_ANY | JSON_COMPACT);
    print_error("%s: %s\n", label, text ? text : "(cannot print)");
    free(text);
}

/* Asserts that response answers id (a string). */
static void assert_id(const json_t *response, const char *id)
{
    const char *got = json_string_value(json_object_get(response, "id"));
    if (!got || strcmp(got, id) != 0)
        print_json("expected a response to that id, got", response);
    assert_non_null(got);
    assert_string_equal(got, id);
}

/* Asserts the timed-out error of a deadline of ms. */
static void assert_timed_out(const json_t *response, json_int_t ms)
{
    const json_t *error = json_object_get(response, "error");
    if (json_integer_value(json_object_get(error, "code")) != -32603)
        print_json("expected a timed-out error, got", response);
    assert_int_equal(json_integer_value(json_object_get(error, "code")), -32603);
    const json_t *data = json_object_get(error, "data");
    assert_string_equal(json_string_value(json_object_get(data, "exception")), "timed out");
    const json_t *inner = json_object_get(data, "data");
    assert_true(json_is_true(json_object_get(inner, "timed_out")));
    assert_int_equal(json_integer_value(json_object_get(inner, "timeout_ms")), ms);
    assert_null(json_object_get(response, "result"));
}

/* Reads the next line: the result [n] of echo id. */
static void expect_echo(session *s, const char *id, int n)
{
    json_t *response = next_line(s);
    assert_id(response, id);
    json_t *result = json_object_get(response, "result");
    if (json_integer_value(json_array_get(result, 0)) != n)
        print_json("expected an echo, got", response);
    assert_int_equal(json_integer_value(json_array_get(result, 0)), n);
    json_decref(response);
}

/* slow.count, until its finished member reaches finished: then the whole of it (new). */
static json_t *wait_for_finished(session *s, int finished)
{
    long long start = now_ms();
    for (int round = 0;; round++) {
        send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"count-%d\",\"method\":\"slow.count\"}\n",
                    round);
        json_t *response = next_line(s);
        json_t *result = json_incref(json_object_get(response, "result"));
        json_decref(response);
        assert_non_null(result);
        if (json_integer_value(json_object_get(result, "finished")) >= finished)
            return result;
        json_decref(result);
        assert_true(now_ms() - start < LINE_TIMEOUT_MS);
        sleep_ms(50);
    }
}

/* End of input: nothing more on stdout, exit 0 within timeout_ms. Returns how long it took. */
static long long finish(session *s, int timeout_ms)
{
    long long start = now_ms();
    harness_close_stdin(s->rpcd);
    char *rest = NULL;
    assert_int_equal(harness_read_all(s->rpcd, LINE_TIMEOUT_MS, &rest, NULL), HARNESS_OK);
    if (rest[0])
        print_error("unexpected output:\n%s\n", rest);
    assert_string_equal(rest, "");
    free(rest);
    harness_exit status;
    assert_int_equal(harness_wait(s->rpcd, timeout_ms, &status), HARNESS_OK);
    long long took = now_ms() - start;
    if (!status.exited || status.code != 0)
        print_error("rpcd ended with %s; stderr:\n%s\n", harness_exit_describe(&status),
                    harness_stderr(s->rpcd));
    assert_true(status.exited);
    assert_int_equal(status.code, 0);
    const char *err = harness_stderr(s->rpcd);
    assert_null(strstr(err, "ERROR: AddressSanitizer"));
    assert_null(strstr(err, "WARNING: ThreadSanitizer"));
    assert_null(strstr(err, "runtime error:"));
    return took;
}

/*
 * A handler past its deadline (method: slow.sleep or slow.defer): answered once, at the
 * deadline, while other calls are served; its id free again at once; what it does after (a
 * result, a notification, progress) reaches nobody, and it finds its call cancelled.
 */
static void answered_at_the_deadline(session *s, const char *method)
{
    enum { DEADLINE = 300, SLEEP = 1500 };
    char slow[128];
    snprintf(slow, sizeof slow, "timeout_ms.%s = %d", method, DEADLINE);
    start_ready(s, "workers = 4", slow);
    long long sent = now_ms();
    send_format(s,
                "{\"jsonrpc\":\"2.0\",\"id\":\"late\",\"method\":\"%s\","
                "\"params\":{\"ms\":%d,\"_meta\":{\"progressToken\":\"p\"}}}\n",
                method, SLEEP);
    send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"other\",\"method\":\"echo\",\"params\":[1]}\n");
    expect_echo(s, "other", 1);

    json_t *response = next_line(s);
    long long took = now_ms() - sent;
    assert_id(response, "late");
    assert_timed_out(response, DEADLINE);
    json_decref(response);
    print_message("answered %lld ms after the request, deadline %d ms\n", took, DEADLINE);
    assert_true(took >= DEADLINE);
    assert_true(took < DEADLINE + slack_ms());

    /* The id is the client's again while the handler still runs. */
    send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"late\",\"method\":\"echo\",\"params\":[2]}\n");
    expect_echo(s, "late", 2);

    json_t *count = wait_for_finished(s, 1);
    assert_true(now_ms() - sent >= SLEEP);
    assert_int_equal(json_integer_value(json_object_get(count, "cancelled")), 1);
    assert_int_equal(json_integer_value(json_object_get(count, "refused")), 1);
    if (strcmp(method, "slow.defer") == 0)
        assert_int_equal(json_integer_value(json_object_get(count, "completed")), 1);
    json_decref(count);
    /* Nothing of the late handler comes after: the next line is the next answer. */
    send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"method\":\"echo\",\"params\":[3]}\n");
    expect_echo(s, "last", 3);
    finish(s, LINE_TIMEOUT_MS);
}

static void test_synchronous_handler_past_its_deadline(void **state)
{
    answered_at_the_deadline(*state, "slow.sleep");
}

static void test_deferred_call_past_its_deadline(void **state)
{
    answered_at_the_deadline(*state, "slow.defer");
}

/*
 * A request may ask for less in _meta.timeout_ms, never more; what is not a whole number of
 * milliseconds from 1 to a day is refused with -32602.
 */
static void test_request_asks_for_less_never_more(void **state)
{
    session *s = *state;
    start_ready(s, "workers = 4", "timeout_ms = 5000\ntimeout_ms.slow.defer = 300");
    long long sent = now_ms();
    send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"less\",\"method\":\"slow.sleep\","
                   "\"params\":{\"ms\":1000,\"_meta\":{\"timeout_ms\":150}}}\n");
    json_t *response = next_line(s);
    long long took = now_ms() - sent;
    assert_id(response, "less");
    assert_timed_out(response, 150);
    json_decref(response);
    assert_true(took >= 150);
    assert_true(took < 150 + slack_ms());

    send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"more\",\"method\":\"slow.defer\","
                   "\"params\":{\"ms\":1000,\"_meta\":{\"timeout_ms\":60000}}}\n");
    response = next_line(s);
    assert_id(response, "more");
    assert_timed_out(response, 300);
    json_decref(response);

    send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"zero\",\"method\":\"slow.sleep\","
                   "\"params\":{\"ms\":1,\"_meta\":{\"timeout_ms\":0}}}\n");
    response = next_line(s);
    assert_id(response, "zero");
    const json_t *error = json_object_get(response, "error");
    assert_int_equal(json_integer_value(json_object_get(error, "code")), -32602);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(error, "data"), "detail")),
        "_meta.timeout_ms must be a whole number of milliseconds from 1 to 86400000");
    json_decref(response);
    json_decref(wait_for_finished(s, 2));
    finish(s, LINE_TIMEOUT_MS);
}

/*
 * A quick method with a deadline runs on a worker, not on the reading thread: past its deadline,
 * it is answered, and the lines after it are read and served meanwhile.
 */
static void test_quick_method_with_a_deadline(void **state)
{
    session *s = *state;
    start_ready(s, "workers = 4", "timeout_ms.slow.quick = 300");
    long long sent = now_ms();
    send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"q\",\"method\":\"slow.quick\","
                   "\"params\":{\"ms\":1500}}\n");
    send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"other\",\"method\":\"echo\",\"params\":[1]}\n");
    /* Before q's answer: read and served while q runs, whose answer comes at its deadline. */
    expect_echo(s, "other", 1);
    json_t *response = next_line(s);
    assert_id(response, "q");
    assert_timed_out(response, 300);
    json_decref(response);
    assert_true(now_ms() - sent < 300 + slack_ms());
    json_decref(wait_for_finished(s, 1));
    finish(s, LINE_TIMEOUT_MS);
}

/*
 * An MCP tools/call past its deadline is a tool result with isError, at the deadline; the
 * tools/call's own _meta.timeout_ms asks for less.
 */
static void test_tool_call_past_its_deadline(void **state)
{
    session *s = *state;
    start_ready(s, "workers = 4", "timeout_ms.slow.sleep = 5000");
    send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"init\",\"method\":\"initialize\","
                   "\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                   "\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}\n");
    json_decref(next_line(s));
    send_format(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    long long sent = now_ms();
    send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"tool\",\"method\":\"tools/call\","
                   "\"params\":{\"name\":\"slow_sleep\",\"arguments\":{\"ms\":1500},"
                   "\"_meta\":{\"timeout_ms\":200}}}\n");
    json_t *response = next_line(s);
    long long took = now_ms() - sent;
    assert_id(response, "tool");
    json_t *result = json_object_get(response, "result");
    if (!json_is_true(json_object_get(result, "isError")))
        print_json("expected a tool error, got", response);
    assert_true(json_is_true(json_object_get(result, "isError")));
    const char *text = json_string_value(
        json_object_get(json_array_get(json_object_get(result, "content"), 0), "text"));
    assert_non_null(text);
    assert_non_null(strstr(text, "no answer within timeout_ms (200 ms)"));
    json_decref(response);
    assert_true(took >= 200);
    assert_true(took < 200 + slack_ms());
    json_decref(wait_for_finished(s, 1));
    finish(s, LINE_TIMEOUT_MS);
}

/* A batch's array goes out at its slow item's deadline, not when the handler ends. */
static void test_batch_answered_at_the_deadline(void **state)
{
    session *s = *state;
    /* An item answered at its deadline before a worker took it never runs (wait_for_finished
     * would wait for nothing): the deadline is scaled so that a slow build reaches the handler,
     * and the handler outlasts the deadline and its slack, so that the array is the deadline's. */
    int deadline = test_time_ms(300);
    long long held_ms = deadline + slack_ms() + 500;
    char slow[64];
    snprintf(slow, sizeof slow, "timeout_ms.slow.sleep = %d", deadline);
    start_ready(s, "workers = 4", slow);
    long long sent = now_ms();
    send_format(s,
                "[{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"slow.sleep\","
                "\"params\":{\"ms\":%lld}},"
                "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"echo\",\"params\":[1]}]\n",
                held_ms);
    json_t *array = next_line(s);
    assert_true(now_ms() - sent < deadline + slack_ms());
    assert_true(json_is_array(array));
    assert_int_equal(json_array_size(array), 2);
    json_decref(array);
    json_decref(wait_for_finished(s, 1));
    finish(s, LINE_TIMEOUT_MS);
}

/*
 * A call answered at its deadline still holds its worker, and its place in max_in_flight, until
 * its handler returns: with max_in_flight = 1 the next line waits for it.
 */
static void test_answered_call_counts_in_flight(void **state)
{
    session *s = *state;
    /* Longer than an answer at the deadline (200 ms) can be late, however slow the build. */
    long long held_ms = 200 + slack_ms() + 500;
    start_ready(s, "workers = 2\nmax_in_flight = 1", "timeout_ms.slow.sleep = 200");
    long long sent = now_ms();
    send_format(s,
                "{\"jsonrpc\":\"2.0\",\"id\":\"late\",\"method\":\"slow.sleep\","
                "\"params\":{\"ms\":%d}}\n",
                (int)held_ms);
    send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"next\",\"method\":\"echo\",\"params\":[1]}\n");
    json_t *response = next_line(s);
    assert_id(response, "late");
    assert_timed_out(response, 200);
    json_decref(response);
    assert_true(now_ms() - sent < held_ms);
    expect_echo(s, "next", 1);
    assert_true(now_ms() - sent >= held_ms);
    finish(s, LINE_TIMEOUT_MS);
}

/*
 * The end of input while a handler answered at its deadline still runs: rpcd does not wait for
 * it past shutdown_grace_ms, names it, and exits 0 with nothing more on stdout.
 */
static void test_end_of_input_while_a_late_handler_runs(void **state)
{
    session *s = *state;
    /* Handlers that outlast any bound on a wait: an exit within one did not wait for them. */
    enum { GRACE = 300, SLEEP = 600000 };
    char daemon[64];
    snprintf(daemon, sizeof daemon, "workers = 2\nshutdown_grace_ms = %d", GRACE);
    start_ready(s, daemon, "timeout_ms.slow.sleep = 100\ntimeout_ms.slow.defer = 100");
    send_format(s,
                "{\"jsonrpc\":\"2.0\",\"id\":\"late\",\"method\":\"slow.sleep\","
                "\"params\":{\"ms\":%d}}\n",
                SLEEP);
    send_format(s,
                "{\"jsonrpc\":\"2.0\",\"id\":\"deferred\",\"method\":\"slow.defer\","
                "\"params\":{\"ms\":%d}}\n",
                SLEEP);
    for (int i = 0; i < 2; i++) {
        json_t *response = next_line(s);
        assert_timed_out(response, 100);
        json_decref(response);
    }
    long long took = finish(s, LINE_TIMEOUT_MS);
    print_message("exited %lld ms after the end of input, shutdown_grace_ms %d\n", took, GRACE);
    assert_true(took >= GRACE);
    /* ThreadSanitizer sleeps atexit_sleep_ms (1 s) before a process with threads left exits. */
    const char *sanitize = getenv("RPCD_SANITIZE");
    long long at_exit = sanitize && strstr(sanitize, "thread") ? 1000 : 0;
    assert_true(took < GRACE + slack_ms() + at_exit);
    assert_non_null(strstr(harness_stderr(s->rpcd), "id \"late\" (answered at its deadline)"));
}

/*
 * Deadlines that fall in another order than their calls came (rpcd.conf(5), timeout_ms: each
 * call is answered at its own deadline): a call with a long deadline first, then one with a
 * shorter one, then one with the shortest. The shortest is answered first, at its deadline,
 * then the shorter, and the long one not with them: it is still the plugin's, and its handler's
 * result reaches the client once the test lets it complete. Calls held by the concurrency
 * fixture, in rpcd's process and in a host alike; the grace period outlasts the test, so that a
 * host keeping a call past its deadline is not killed meanwhile.
 */
static void deadlines_out_of_order(session *s, const char *isolation)
{
    const char *fixture = harness_env("RPCD_FIXTURE_CONCURRENCY");
    assert_non_null(fixture);
    char *text;
    assert_true(asprintf(&text,
                         "[rpcd]\nworkers = 4\nshutdown_grace_ms = 600000\nisolation = %s\n"
                         "[plugin concurrency]\npath = %s\n",
                         isolation, fixture) >= 0);
    start_with(s, text);
    /* The thread that keeps deadlines starts with the first call that has one: a call that ends
     * at once has it waiting before the others come, as on a server that has run a while. */
    send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"first\",\"method\":\"deferred.hold\","
                   "\"params\":{\"after_ms\":1,\"_meta\":{\"timeout_ms\":600000}}}\n");
    json_t *first = next_line(s);
    assert_id(first, "first");
    json_decref(first);
    /* Far apart, so that the order of the deadlines is the order of their lengths however
     * slowly rpcd reads the lines; each call after a round trip, so that the thread has gone
     * back to its wait, for the earliest deadline it knows, before the next one comes. */
    static const struct {
        const char *id;
        int timeout_ms;
    } calls[] = {{"long", 600000}, {"shorter", 3000}, {"shortest", 200}};
    for (size_t i = 0; i < 3; i++) {
        send_format(s,
                    "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"deferred.hold\","
                    "\"params\":{\"_meta\":{\"timeout_ms\":%d}}}\n",
                    calls[i].id, calls[i].timeout_ms);
        if (i < 2) {
            send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"trip\",\"method\":\"thread.quick\"}\n");
            json_t *trip = next_line(s);
            assert_id(trip, "trip");
            json_decref(trip);
        }
    }
    for (size_t i = 2; i > 0; i--) {
        json_t *response = next_line(s);
        assert_id(response, calls[i].id);
        assert_timed_out(response, calls[i].timeout_ms);
        json_decref(response);
    }
    /* The long call is the plugin's still: completed now, its result is its answer. */
    send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"release\",\"method\":\"deferred.release\"}\n");
    bool released = false, completed = false;
    for (int i = 0; i < 2; i++) {
        json_t *response = next_line(s);
        const char *id = json_string_value(json_object_get(response, "id"));
        json_t *result = json_object_get(response, "result");
        if (id && strcmp(id, "release") == 0) {
            assert_int_equal(json_integer_value(json_object_get(result, "held")), 3);
            released = true;
        } else {
            assert_id(response, "long");
            if (!json_is_true(json_object_get(result, "completed")))
                print_json("expected the long call's own result, got", response);
            assert_true(json_is_true(json_object_get(result, "completed")));
            completed = true;
        }
        json_decref(response);
    }
    assert_true(released && completed);
    finish(s, LINE_TIMEOUT_MS);
    assert_null(strstr(harness_stderr(s->rpcd), "its host (pid"));
}

static void test_deadlines_out_of_order(void **state)
{
    deadlines_out_of_order(*state, "none");
}

static void test_deadlines_out_of_order_isolated(void **state)
{
    deadlines_out_of_order(*state, "process");
}

/* stuck.count until blocked is n. */
static void wait_for_blocked(session *s, int n)
{
    long long start = now_ms();
    for (int round = 0;; round++) {
        send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"blocked-%d\",\"method\":\"stuck.count\"}\n",
                    round);
        json_t *response = next_line(s);
        json_int_t blocked =
            json_integer_value(json_object_get(json_object_get(response, "result"), "blocked"));
        json_decref(response);
        if (blocked == n)
            return;
        assert_true(now_ms() - start < LINE_TIMEOUT_MS);
        sleep_ms(20);
    }
}

/*
 * A client's cancellation is not a deadline (docs/protocol.md, Cancellation and Deadlines;
 * rpcd.conf(5), timeout_ms): it is cooperative, so a handler that never checks keeps its call,
 * unanswered, in rpcd's process and in a host alike. Only a deadline kills a host that keeps its
 * call: once a call of another plugin has slept past shutdown_grace_ms after the cancel, the
 * cancelled call still has no answer and its handler is still inside the same host (a host
 * started again would count none). SIGTERM then leaves it unanswered.
 */
static void cancelled_handler_goes_on(session *s, const char *isolation)
{
    enum { GRACE = 100, HELD = 2000 };
    const char *stuck = harness_env("RPCD_FIXTURE_STUCK");
    assert_non_null(stuck);
    char daemon[96], plugins[4096];
    snprintf(daemon, sizeof daemon, "workers = 4\nshutdown_grace_ms = %d\nisolation = %s", GRACE,
             isolation);
    snprintf(plugins, sizeof plugins, "[plugin stuck]\npath = %s", stuck);
    start_ready(s, daemon, plugins);
    send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"c\",\"method\":\"stuck.block\"}\n");
    wait_for_blocked(s, 1);
    send_format(s, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\","
                   "\"params\":{\"id\":\"c\"}}\n");
    send_format(s,
                "{\"jsonrpc\":\"2.0\",\"id\":\"w\",\"method\":\"slow.sleep\","
                "\"params\":{\"ms\":%d}}\n",
                HELD);
    /* w's notification, then its answer: nothing for c comes first. */
    json_t *response = next_line(s);
    if (!json_object_get(response, "method"))
        print_json("expected w's notification, got", response);
    assert_string_equal(json_string_value(json_object_get(response, "method")), "slow/late");
    json_decref(response);
    response = next_line(s);
    assert_id(response, "w");
    json_decref(response);
    send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"after\",\"method\":\"stuck.count\"}\n");
    response = next_line(s);
    assert_id(response, "after");
    json_t *result = json_object_get(response, "result");
    if (json_integer_value(json_object_get(result, "blocked")) != 1)
        print_json("expected the cancelled handler still inside, got", response);
    assert_int_equal(json_integer_value(json_object_get(result, "blocked")), 1);
    json_decref(response);
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    char *rest = NULL;
    assert_int_equal(harness_read_all(s->rpcd, LINE_TIMEOUT_MS, &rest, NULL), HARNESS_OK);
    assert_string_equal(rest, "");
    free(rest);
    harness_exit status;
    assert_int_equal(harness_wait(s->rpcd, LINE_TIMEOUT_MS, &status), HARNESS_OK);
    assert_true(status.exited);
    assert_null(strstr(harness_stderr(s->rpcd), "its host (pid"));
    assert_non_null(strstr(harness_stderr(s->rpcd),
                           "left unanswered: plugin stuck, method stuck.block, id \"c\""));
}

static void test_cancelled_handler_goes_on(void **state)
{
    cancelled_handler_goes_on(*state, "none");
}

static void test_cancelled_handler_goes_on_isolated(void **state)
{
    cancelled_handler_goes_on(*state, "process");
}

/* --check shows each plugin's deadlines; an in-process plugin's are no longer ignored. */
static void test_check_shows_the_deadlines(void **state)
{
    (void)state;
    const char *fixture = harness_env("RPCD_FIXTURE_SLOW");
    assert_non_null(fixture);
    char *text;
    assert_true(asprintf(&text,
                         "[plugin slow]\npath = %s\ntimeout_ms = 250\ntimeout_ms.slow.defer = 40\n"
                         "timeout_ms.slow.none = 5\n",
                         fixture) >= 0);
    char *dir = harness_temp_dir();
    char *config = harness_write_file(dir, "rpcd.conf", text);
    assert_non_null(config);
    harness_argv args = harness_rpcd_argv(config);
    harness_argv_push(&args, "--check");
    harness_run_result result;
    assert_int_equal(harness_run(args.argv, NULL, 0, LINE_TIMEOUT_MS, &result), HARNESS_OK);
    assert_true(result.status.exited);
    assert_int_equal(result.status.code, 0);
    assert_non_null(strstr(result.err, "plugin slow: isolation = none; timeout_ms 250 ms, "
                                       "slow.defer 40 ms, slow.none 5 ms"));
    assert_non_null(strstr(result.err, "timeout_ms.slow.none names none of its methods"));
    assert_null(strstr(result.err, "ignored"));
    harness_run_result_free(&result);
    harness_remove_dir(dir);
    free(dir);
    free(config);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_synchronous_handler_past_its_deadline, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_deferred_call_past_its_deadline, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_request_asks_for_less_never_more, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_quick_method_with_a_deadline, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_tool_call_past_its_deadline, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_batch_answered_at_the_deadline, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_answered_call_counts_in_flight, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_end_of_input_while_a_late_handler_runs, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_deadlines_out_of_order, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_deadlines_out_of_order_isolated, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_cancelled_handler_goes_on, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_cancelled_handler_goes_on_isolated, session_setup,
                                        session_teardown),
        cmocka_unit_test(test_check_shows_the_deadlines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
