/* SPDX-License-Identifier: MIT */
/*
 * Handlers that never return, through the real binary: the calls a stuck pool never ran answered
 * at a stop, the grace period ended, the stuck calls named, a client gone; and a pool that cannot
 * start a single worker.
 */
#include "concurrency_session.h"

#include <jansson.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

/* ---- Handlers that never return ------------------------------------------------------ */

/* Starts rpcd as session_start() does, with the stuck fixture loaded too. */
static void start_with_stuck(session *s, const char *settings)
{
    const char *fixture = harness_env("RPCD_FIXTURE_STUCK");
    assert_non_null(fixture);
    char *text;
    assert_true(asprintf(&text, "%s\n[plugin stuck]\npath = %s\n", settings, fixture) >= 0);
    session_start(s, text);
    free(text);
}

/* Waits until count calls are blocked inside the stuck fixture (asked on the reading thread). */
static void wait_for_blocked(session *s, int count)
{
    for (int round = 0; round < 1000; round++) {
        send_format(s, "{\"jsonrpc\":\"2.0\",\"id\":\"count-%d\",\"method\":\"stuck.count\"}\n",
                    round);
        json_t *response = next_response(s);
        json_int_t blocked =
            json_integer_value(json_object_get(json_object_get(response, "result"), "blocked"));
        json_decref(response);
        if (blocked >= count)
            return;
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    fail_msg("the stuck calls never started");
}

/*
 * Gives rpcd time to take what was just sent, where nothing can be asked to prove it did (its
 * reading thread or its one worker is held): 300 ms, scaled (valgrind and sanitizers are slower).
 */
static void pause_for_the_reader(void)
{
    int ms = test_time_ms(300);
    struct timespec pause = {ms / 1000, ms % 1000 * 1000000L};
    nanosleep(&pause, NULL);
}

/* Asserts that response is -32800 "Request cancelled" with a data.detail saying why. */
static void assert_cancelled_at_stop(const json_t *response)
{
    assert_error(response, -32800, "Request cancelled");
    const char *detail = detail_of(response);
    if (!strstr(detail, "stopped before the call ran"))
        print_json("unexpected detail in", response);
    assert_non_null(strstr(detail, "stopped before the call ran"));
}

/* Asserts that stderr names a call still running: its plugin, method and id. */
static void assert_named_as_stuck(session *s, const char *method, const char *id)
{
    char expected[256];
    snprintf(expected, sizeof expected, "plugin stuck, method %s, id \"%s\"", method, id);
    const char *err = harness_stderr(s->rpcd);
    if (!strstr(err, expected))
        print_error("no line naming %s in stderr:\n%s\n", expected, err);
    assert_non_null(strstr(err, expected));
}

/*
 * Both workers held by handlers that never return, and more calls waiting for them (alone and in
 * a batch): at SIGTERM, every call that never ran is answered at once (-32800 with a detail), the
 * batch as one array, and after the grace period rpcd exits 0, naming the calls that held the
 * pool (plugin, method, id) on stderr.
 */
static void test_sigterm_answers_calls_a_stuck_pool_never_ran(void **state)
{
    session *s = *state;
    start_with_stuck(s, "workers = 2\nshutdown_grace_ms = 300\nlog_level = info");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"hold-1\",\"method\":\"stuck.block\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"hold-2\",\"method\":\"stuck.block\"}\n");
    wait_for_blocked(s, 2);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"queued-1\",\"method\":\"thread.worker\"}\n"
                 "[{\"jsonrpc\":\"2.0\",\"id\":\"item-1\",\"method\":\"thread.worker\"},"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"item-2\",\"method\":\"thread.worker\"}]\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"queued-2\",\"method\":\"thread.worker\"}\n");
    /* They wait for a worker (nothing comes back); a quick call after them proves they were
     * read, since the reader takes lines in order. Then the stop. */
    wait_for_blocked(s, 2);
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    json_t *responses = collect_responses(s, 3);
    assert_cancelled_at_stop(response_for(responses, "queued-1"));
    assert_cancelled_at_stop(response_for(responses, "queued-2"));
    json_t *batch = NULL;
    size_t index;
    json_t *response;
    json_array_foreach(responses, index, response)
    {
        if (json_is_array(response))
            batch = response;
    }
    assert_non_null(batch);
    assert_int_equal(json_array_size(batch), 2);
    assert_cancelled_at_stop(response_for(batch, "item-1"));
    assert_cancelled_at_stop(response_for(batch, "item-2"));
    json_decref(responses);
    expect_exit_soon(s, sent, 0);
    expect_no_more_output(s);
    assert_named_as_stuck(s, "stuck.block", "hold-1");
    assert_named_as_stuck(s, "stuck.block", "hold-2");
    session_end(s);
}

/*
 * A quick handler that never returns holds the reading thread: SIGTERM's grace period ends all
 * the same. What was answered before stays answered, a call waiting for a (stuck) worker is
 * answered -32800, the blocked calls are named, and rpcd exits 0 at about the grace period,
 * without a second signal.
 */
static void test_grace_period_ends_while_a_quick_handler_blocks(void **state)
{
    session *s = *state;
    start_with_stuck(s, "workers = 2\nshutdown_grace_ms = 300\nlog_level = info");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"hold-1\",\"method\":\"stuck.block\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"hold-2\",\"method\":\"stuck.block\"}\n");
    wait_for_blocked(s, 2);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"early\",\"method\":\"echo\",\"params\":[1]}\n");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":\"early\",\"result\":[1]}");
    /* One write: the worker call is queued (both workers are held), then the reader blocks. */
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"queued\",\"method\":\"thread.worker\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"quick\",\"method\":\"stuck.quick\"}\n");
    /* The count cannot be asked any more (the reader is held): give the reader a moment. */
    pause_for_the_reader();
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    json_t *response = next_response(s);
    assert_string_equal(json_string_value(json_object_get(response, "id")), "queued");
    assert_cancelled_at_stop(response);
    json_decref(response);
    expect_exit_soon(s, sent, 0);
    long long elapsed = now_ms() - sent;
    if (elapsed < 250)
        print_error("rpcd exited %lld ms after SIGTERM, grace period 300 ms\n", elapsed);
    assert_true(elapsed >= 250);
    expect_no_more_output(s);
    assert_named_as_stuck(s, "stuck.quick", "quick");
    assert_named_as_stuck(s, "stuck.block", "hold-1");
    session_end(s);
}

/*
 * End of input while both workers are held and a call waits: rpcd goes on waiting (a call may
 * just be slow), but after the grace period it names the calls that hold the pool; a SIGTERM
 * then answers the waiting call and ends rpcd.
 */
static void test_end_of_input_names_a_stuck_pool(void **state)
{
    session *s = *state;
    start_with_stuck(s, "workers = 2\nshutdown_grace_ms = 300\nlog_level = info");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"hold-1\",\"method\":\"stuck.block\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"hold-2\",\"method\":\"stuck.block\"}\n");
    wait_for_blocked(s, 2);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"queued\",\"method\":\"thread.worker\"}\n");
    harness_close_stdin(s->rpcd);
    assert_int_equal(harness_wait_for_stderr(s->rpcd,
                                             "end of input: still waiting for: plugin stuck, "
                                             "method stuck.block, id \"hold-2\"",
                                             LINE_TIMEOUT_MS),
                     HARNESS_OK);
    assert_named_as_stuck(s, "stuck.block", "hold-1");
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    json_t *response = next_response(s);
    assert_string_equal(json_string_value(json_object_get(response, "id")), "queued");
    assert_cancelled_at_stop(response);
    json_decref(response);
    expect_exit_soon(s, sent, 0);
    expect_no_more_output(s);
    session_end(s);
}

/*
 * The client goes (closes rpcd's stdin, then its stdout) while a call that never returns and
 * never writes holds a worker, in the process or isolated: no write fails to tell rpcd, so it
 * must see the closed output itself, give the call its grace period, name it, and exit 74
 * instead of waiting for good.
 */
static void client_gone_while_a_call_never_ends(session *s, const char *settings)
{
    start_with_stuck(s, settings);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"hold\",\"method\":\"stuck.block\"}\n");
    wait_for_blocked(s, 1);
    harness_close_stdin(s->rpcd);
    assert_int_equal(harness_wait_for_stderr(s->rpcd, "end of input: waiting", LINE_TIMEOUT_MS),
                     HARNESS_OK);
    harness_close_stdout(s->rpcd);
    long long closed = now_ms();
    expect_exit_soon(s, closed, 74);
    const char *err = harness_stderr(s->rpcd);
    assert_non_null(strstr(err, "the client closed its end of the output, nobody to answer"));
    assert_non_null(strstr(err, "left unanswered: plugin stuck, method stuck.block, id \"hold\""));
    session_end(s);
}

static void test_client_gone_while_a_call_never_ends(void **state)
{
    client_gone_while_a_call_never_ends(*state,
                                        "workers = 2\nshutdown_grace_ms = 300\nlog_level = debug");
}

static void test_client_gone_while_an_isolated_call_never_ends(void **state)
{
    client_gone_while_a_call_never_ends(
        *state, "workers = 2\nshutdown_grace_ms = 300\nlog_level = debug\nisolation = process");
}

/*
 * While serving: both workers held and calls waiting behind them for longer than the grace
 * period, no call ending: the next call that must wait makes rpcd name the calls that hold the
 * pool.
 */
static void test_a_held_pool_is_named_while_serving(void **state)
{
    session *s = *state;
    start_with_stuck(s, "workers = 2\nshutdown_grace_ms = 300\nlog_level = info");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"hold-1\",\"method\":\"stuck.block\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"hold-2\",\"method\":\"stuck.block\"}\n");
    wait_for_blocked(s, 2);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"queued-1\",\"method\":\"thread.worker\"}\n");
    wait_for_blocked(s, 2); /* read */
    struct timespec pause = {0, 500 * 1000 * 1000};
    nanosleep(&pause, NULL);
    assert_null(strstr(harness_stderr(s->rpcd), "the pool is held by"));
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"queued-2\",\"method\":\"thread.worker\"}\n");
    assert_int_equal(harness_wait_for_stderr(s->rpcd,
                                             "the pool is held by: plugin stuck, method "
                                             "stuck.block, id \"hold-2\"",
                                             LINE_TIMEOUT_MS),
                     HARNESS_OK);
    assert_named_as_stuck(s, "stuck.block", "hold-1");
    assert_non_null(strstr(harness_stderr(s->rpcd), "every worker (2) held with no call ending"));
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    json_t *responses = collect_responses(s, 2);
    assert_cancelled_at_stop(response_for(responses, "queued-1"));
    assert_cancelled_at_stop(response_for(responses, "queued-2"));
    json_decref(responses);
    expect_exit(s, HARNESS_TIMEOUT_MS, 0);
    session_end(s);
}

/*
 * With workers = 1 responses keep request order, and the one worker is held for good: at
 * SIGTERM the calls behind it are answered, in order, once the grace period has given up on it.
 */
static void test_sigterm_answers_calls_behind_a_stuck_call_in_order(void **state)
{
    session *s = *state;
    start_with_stuck(s, "workers = 1\nshutdown_grace_ms = 300\nlog_level = info");
    /* Serving, and the one worker free. */
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"ready\",\"method\":\"echo\",\"params\":[0]}\n");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":\"ready\",\"result\":[0]}");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"hold\",\"method\":\"stuck.block\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"first\",\"method\":\"thread.worker\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"second\",\"method\":\"echo\",\"params\":[2]}\n");
    /* Nothing can be asked (the one worker is held, and takes every call): give it a moment. */
    pause_for_the_reader();
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    json_t *response = next_response(s);
    assert_string_equal(json_string_value(json_object_get(response, "id")), "first");
    assert_cancelled_at_stop(response);
    json_decref(response);
    response = next_response(s);
    assert_string_equal(json_string_value(json_object_get(response, "id")), "second");
    assert_cancelled_at_stop(response);
    json_decref(response);
    expect_exit_soon(s, sent, 0);
    expect_no_more_output(s);
    assert_named_as_stuck(s, "stuck.block", "hold");
    session_end(s);
}

/* The same with nothing else in flight: only the quick handler holds rpcd. */
static void test_grace_period_ends_while_the_only_call_blocks_the_reader(void **state)
{
    session *s = *state;
    start_with_stuck(s, "workers = 2\nshutdown_grace_ms = 300\nlog_level = info");
    wait_for_blocked(s, 0); /* serving */
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"quick\",\"method\":\"stuck.quick\"}\n");
    pause_for_the_reader();
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    expect_exit_soon(s, sent, 0);
    assert_true(now_ms() - sent >= 250);
    expect_no_more_output(s);
    assert_named_as_stuck(s, "stuck.quick", "quick");
    session_end(s);
}

/*
 * shutdown_grace_ms = 0 with a quick handler holding the reading thread: the stop still ends
 * rpcd (its timer is armed for the shortest time, never for none, which would disarm it).
 */
static void test_no_grace_period_while_the_only_call_blocks_the_reader(void **state)
{
    session *s = *state;
    start_with_stuck(s, "workers = 2\nshutdown_grace_ms = 0\nlog_level = info");
    wait_for_blocked(s, 0); /* serving */
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"quick\",\"method\":\"stuck.quick\"}\n");
    pause_for_the_reader();
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    expect_exit_soon(s, sent, 0);
    expect_no_more_output(s);
    session_end(s);
}

/*
 * A plugin whose init takes the grace period's signal is named, and the period moves to another
 * signal: a quick handler that holds the reading thread still cannot keep the stop from ending.
 */
static void test_grace_signal_taken_by_a_plugin_is_moved_from(void **state)
{
    session *s = *state;
    const char *taker = harness_env("RPCD_FIXTURE_SIGNAL_TAKER");
    assert_non_null(taker);
    char *settings;
    assert_true(asprintf(&settings,
                         "workers = 2\nshutdown_grace_ms = 300\nlog_level = info\n"
                         "[plugin signal_taker]\npath = %s\ntake = grace\n",
                         taker) >= 0);
    start_with_stuck(s, settings);
    free(settings);
    wait_for_blocked(s, 0); /* serving */
    const char *err = harness_stderr(s->rpcd);
    if (!strstr(err, "which rpcd used to end a stop's grace period; rpcd uses signal"))
        print_error("no warning about the grace period's signal in stderr:\n%s\n", err);
    assert_non_null(strstr(err, "which rpcd used to end a stop's grace period; rpcd uses signal"));
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"quick\",\"method\":\"stuck.quick\"}\n");
    pause_for_the_reader();
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    expect_exit_soon(s, sent, 0);
    assert_true(now_ms() - sent >= 250);
    assert_named_as_stuck(s, "stuck.quick", "quick");
    session_end(s);
}

/* ---- No worker can start ------------------------------------------------------------- */

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

/*
 * rpcd where no thread can start: a default thread stack of 1 GiB (from RLIMIT_STACK) in an
 * address space of 700 MB, as a tight RLIMIT_AS or a pids cgroup leaves it. Not under valgrind or
 * a sanitizer, whose own mappings do not fit such a limit.
 */
static bool start_without_threads(session *s, const char *settings)
{
#ifdef UNDER_SANITIZER
    (void)s, (void)settings;
    return false;
#else
    static const char prlimit[] = "/usr/bin/prlimit"; /* util-linux, in every Debian */
    if (harness_wrapped() || access(prlimit, X_OK) != 0)
        return false;
    char *plugins = harness_bundled_plugin_sections();
    assert_non_null(plugins);
    char *text;
    assert_true(asprintf(&text, "[rpcd]\n%s\n%s\n", settings, plugins) >= 0);
    s->dir = harness_temp_dir();
    assert_non_null(s->dir);
    s->config = harness_write_file(s->dir, "rpcd.conf", text);
    assert_non_null(s->config);
    free(text);
    free(plugins);
    harness_argv args;
    memset(&args, 0, sizeof args);
    harness_argv_push(&args, prlimit);
    harness_argv_push(&args, "--stack=1073741824");
    harness_argv_push(&args, "--as=700000000");
    harness_argv_push(&args, harness_env("RPCD_BINARY"));
    harness_argv_push(&args, "-c");
    harness_argv_push(&args, s->config);
    s->rpcd = harness_start(args.argv);
    assert_non_null(s->rpcd);
    return true;
#endif
}

/*
 * No worker can start, and calls come several at once (a batch, then pipelined lines): every
 * start fails, and every call still runs, on the reading thread, and is answered; the end of
 * input then ends rpcd. The warning says so, once: a failed start is not tried again.
 */
static void test_no_worker_can_start(void **state)
{
    session *s = *state;
    if (!start_without_threads(s, "workers = 4"))
        skip();
    send_text(s, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sleep\",\"params\":{\"ms\":1}},"
                 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"sleep\",\"params\":{\"ms\":1}},"
                 "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"sleep\",\"params\":{\"ms\":1}}]\n");
    expect_response(s, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"slept_ms\":1}},"
                       "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"slept_ms\":1}},"
                       "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"slept_ms\":1}}]");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"sleep\",\"params\":{\"ms\":1}}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"sleep\",\"params\":{\"ms\":1}}\n");
    json_t *responses = collect_responses(s, 2);
    assert_json(json_object_get(response_for_number(responses, 4), "result"), "{\"slept_ms\":1}");
    assert_json(json_object_get(response_for_number(responses, 5), "result"), "{\"slept_ms\":1}");
    json_decref(responses);
    harness_close_stdin(s->rpcd);
    expect_no_more_output(s);
    expect_exit(s, HARNESS_TIMEOUT_MS, 0);
    const char *err = harness_stderr(s->rpcd);
    const char *first = strstr(err, "cannot start worker");
    assert_non_null(first);
    assert_null(strstr(first + 1, "cannot start worker"));
    session_end(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_no_worker_can_start, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_answers_calls_a_stuck_pool_never_ran,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_no_grace_period_while_the_only_call_blocks_the_reader,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_grace_period_ends_while_a_quick_handler_blocks,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_end_of_input_names_a_stuck_pool, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_client_gone_while_a_call_never_ends, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_client_gone_while_an_isolated_call_never_ends,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_a_held_pool_is_named_while_serving, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_answers_calls_behind_a_stuck_call_in_order,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(
            test_grace_period_ends_while_the_only_call_blocks_the_reader, session_setup,
            session_teardown),
        cmocka_unit_test_setup_teardown(test_grace_signal_taken_by_a_plugin_is_moved_from,
                                        session_setup, session_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
