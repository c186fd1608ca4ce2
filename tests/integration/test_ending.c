/* SPDX-License-Identifier: MIT */
/*
 * How rpcd ends, through the real binary: end of input, SIGTERM and SIGINT with and without a
 * grace period, a second signal, a closed stdout.
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

/* ---- How rpcd ends --------------------------------------------------------------------- */

/* End of input with calls still running: they finish, are answered, and rpcd exits 0. */
static void test_eof_waits_for_calls_in_flight(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sleep\",\"params\":{\"ms\":500}}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"sleep\",\"params\":{\"ms\":500}}\n");
    harness_close_stdin(s->rpcd);
    harness_lines lines;
    assert_int_equal(harness_read_all_lines(s->rpcd, LINE_TIMEOUT_MS, &lines), HARNESS_OK);
    assert_int_equal(lines.count, 2);
    assert_false(lines.unterminated);
    bool seen[3] = {false};
    for (size_t i = 0; i < lines.count; i++) {
        json_t *response = json_loads(lines.items[i], 0, NULL);
        assert_non_null(response);
        json_int_t id = json_integer_value(json_object_get(response, "id"));
        assert_true(id == 1 || id == 2);
        assert_false(seen[id]);
        seen[id] = true;
        assert_json(json_object_get(response, "result"), "{\"slept_ms\":500}");
        json_decref(response);
    }
    harness_lines_free(&lines);
    expect_exit(s, HARNESS_TIMEOUT_MS, 0);
    session_end(s);
}

/* A 60 s call under way, the end of input sent, and rpcd waiting for that call. */
static void long_call_after_end_of_input(session *s)
{
    start_sleep_and_wait_for_progress(s, "long", 600000);
    harness_close_stdin(s->rpcd);
    assert_int_equal(harness_wait_for_stderr(s->rpcd, "end of input: waiting", LINE_TIMEOUT_MS),
                     HARNESS_OK);
}

/*
 * A stop signal cancels a call that checks: sleep returns RPCD_ERR_CANCELLED, answered with
 * -32800, and rpcd exits 0 long before the 60 s the call asked for.
 */
static void stop_signal_cancels_cooperative_call(session *s, int signal_number)
{
    session_start(s, "workers = 2\nlog_level = info");
    start_sleep_and_wait_for_progress(s, "long", 600000);
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, signal_number), 0);
    expect_cancelled(s, "long");
    expect_exit_soon(s, sent, 0);
    expect_no_more_output(s);
    char expected[32];
    snprintf(expected, sizeof expected, "signal %d: stopping", signal_number);
    assert_non_null(strstr(harness_stderr(s->rpcd), expected));
    session_end(s);
}

/*
 * A call cancelled with notifications/cancelled stays unanswered when a stop signal comes before
 * it ran: the stop answers the calls that never ran with -32800, but not one the client asked to
 * hear nothing of. One worker, held by a cooperative sleep, keeps the call queued.
 */
static void test_silent_cancel_stays_silent_at_sigterm(void **state)
{
    session *s = *state;
    session_start(s, "workers = 1\nlog_level = debug");
    start_sleep_and_wait_for_progress(s, "busy", 600000);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"quiet\",\"method\":\"deferred.hold\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                 "\"params\":{\"requestId\":\"quiet\"}}\n");
    assert_int_equal(
        harness_wait_for_stderr(s->rpcd, "for id \"quiet\": cancelled", LINE_TIMEOUT_MS),
        HARNESS_OK);
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    /* With one worker responses keep request order: a response for "quiet" would follow. */
    expect_cancelled(s, "busy");
    expect_exit_soon(s, sent, 0);
    expect_no_more_output(s);
    session_end(s);
}

/*
 * The same for a call that runs: held by the fixture, cancelled with notifications/cancelled,
 * then a stop signal; it completes on its own within the grace period, and still nothing is
 * written for it (a stop leaves the handler's own outcome standing only for calls the client did
 * not cancel itself).
 */
static void test_silent_cancel_of_running_call_stays_silent_at_sigterm(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2\nlog_level = debug");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"quiet\",\"method\":\"deferred.hold\","
                 "\"params\":{\"after_ms\":500}}\n");
    barrier(s, 2, 2);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                 "\"params\":{\"requestId\":\"quiet\"}}\n");
    assert_int_equal(
        harness_wait_for_stderr(s->rpcd, "for id \"quiet\": cancelled", LINE_TIMEOUT_MS),
        HARNESS_OK);
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    expect_exit_soon(s, sent, 0);
    expect_no_more_output(s);
    assert_null(strstr(harness_stderr(s->rpcd), "left unanswered"));
    session_end(s);
}

static void test_sigterm_cancels_cooperative_call(void **state)
{
    stop_signal_cancels_cooperative_call(*state, SIGTERM);
}

static void test_sigint_behaves_like_sigterm(void **state)
{
    stop_signal_cancels_cooperative_call(*state, SIGINT);
}

/*
 * A stop after the end of input, while rpcd waits for the calls still in flight, cancels them
 * all the same: the 60 s call ends with -32800 and rpcd exits 0 at once, not a minute later.
 */
static void test_sigterm_after_end_of_input(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2\nlog_level = debug");
    long_call_after_end_of_input(s);
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    expect_cancelled(s, "long");
    expect_exit_soon(s, sent, 0);
    expect_no_more_output(s);
    session_end(s);
}

/*
 * A stop signal taken on a plugin's own thread instead of the one that reads (the kernel may
 * pick any thread that does not block it): the handler there wakes the reader out of read(), and
 * rpcd stops as it does otherwise.
 */
static void test_sigterm_on_a_plugin_thread(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2\nlog_level = info");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"thread.completer\"}\n");
    json_t *response = next_response(s);
    json_int_t tid =
        json_integer_value(json_object_get(json_object_get(response, "result"), "tid"));
    json_decref(response);
    assert_true(tid > 0);
    long long sent = now_ms();
    assert_int_equal(syscall(SYS_tgkill, harness_pid(s->rpcd), (pid_t)tid, SIGTERM), 0);
    expect_exit_soon(s, sent, 0);
    assert_non_null(strstr(harness_stderr(s->rpcd), "signal 15: stopping"));
    expect_no_more_output(s);
    session_end(s);
}

/*
 * A call that ignores the stop is given shutdown_grace_ms, then left unanswered: rpcd exits 0
 * after about the grace period. A call that ended before the signal has its answer.
 */
static void test_sigterm_grace_period_for_stuck_call(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2\nshutdown_grace_ms = 300");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"early\",\"method\":\"echo\",\"params\":[1]}\n");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":\"early\",\"result\":[1]}");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"stuck\",\"method\":\"deferred.hold\"}\n");
    barrier(s, 2, 2);

    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    expect_exit(s, HARNESS_TIMEOUT_MS, 0);
    long long elapsed = now_ms() - sent;
    if (elapsed < 250 || elapsed >= HARNESS_TIMEOUT_MS)
        print_error("rpcd exited %lld ms after SIGTERM, grace period 300 ms\n", elapsed);
    assert_true(elapsed >= 250);
    assert_true(elapsed < HARNESS_TIMEOUT_MS);
    expect_no_more_output(s);
    session_end(s);
}

/* shutdown_grace_ms = 0: a stop does not wait for a call that ignores it, rpcd exits 0 at once. */
static void test_sigterm_without_grace_period(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2\nshutdown_grace_ms = 0");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"stuck\",\"method\":\"deferred.hold\"}\n");
    barrier(s, 2, 2);
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    expect_exit(s, HARNESS_TIMEOUT_MS, 0);
    long long elapsed = now_ms() - sent;
    if (elapsed >= HARNESS_TIMEOUT_MS)
        print_error("rpcd exited %lld ms after SIGTERM, grace period 0 ms\n", elapsed);
    assert_true(elapsed < HARNESS_TIMEOUT_MS);
    session_end(s);
}

/*
 * A request that was read while rpcd waited for room (max_in_flight) when the stop came still
 * gets its one answer: -32800, never silence.
 */
static void test_sigterm_while_reading_is_paused(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2\nmax_in_flight = 1\nshutdown_grace_ms = 300\nlog_level = debug");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"stuck\",\"method\":\"deferred.hold\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"waiting\",\"method\":\"echo\",\"params\":[1]}\n");
    assert_int_equal(harness_wait_for_stderr(s->rpcd, "reading paused", LINE_TIMEOUT_MS),
                     HARNESS_OK);
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    expect_cancelled(s, "waiting");
    expect_exit(s, HARNESS_TIMEOUT_MS, 0);
    /* The held call either runs (and, stuck past the grace period, gets no answer) or was still
     * queued when the stop came (and never starts: -32800). Nothing else may come. */
    char *rest = NULL;
    assert_int_equal(harness_read_all(s->rpcd, LINE_TIMEOUT_MS, &rest, NULL), HARNESS_OK);
    if (rest[0]) {
        json_t *stuck = json_loads(rest, 0, NULL);
        assert_non_null(stuck);
        assert_string_equal(json_string_value(json_object_get(stuck, "id")), "stuck");
        assert_error(stuck, -32800, "Request cancelled");
        json_decref(stuck);
    }
    free(rest);
    session_end(s);
}

/* A second SIGTERM while the first waits for a stuck call ends rpcd at once, status 143. */
static void test_second_sigterm_exits_at_once(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2\nshutdown_grace_ms = 600000\nlog_level = info");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"stuck\",\"method\":\"deferred.hold\"}\n");
    barrier(s, 2, 2);
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    /* Standard signals do not queue: the second must come after the first has been taken. */
    int seen = harness_wait_for_stderr(s->rpcd, "signal 15: stopping", LINE_TIMEOUT_MS);
    if (seen != HARNESS_OK)
        print_error("no log line about the first SIGTERM; stderr:\n%s\n", harness_stderr(s->rpcd));
    assert_int_equal(seen, HARNESS_OK);
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    expect_exit(s, HARNESS_TIMEOUT_MS, 128 + SIGTERM);
    assert_true(now_ms() - sent < HARNESS_TIMEOUT_MS);
    session_end(s);
}

/*
 * The client closes rpcd's stdout and keeps writing: rpcd must not die of SIGPIPE, but notice
 * EPIPE, say so on stderr, and exit 74.
 */
static void test_closed_stdout_exits_74(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"echo\",\"params\":[0]}\n");
    json_t *response = next_response(s);
    json_decref(response);
    harness_close_stdout(s->rpcd);
    /* Once rpcd has gone its stdin is closed too, and a write fails: that ends the sending. */
    for (int i = 1; i <= 200; i++) {
        char line[128];
        snprintf(line, sizeof line,
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"echo\",\"params\":[%d]}\n", i, i);
        if (harness_write_text(s->rpcd, line, LINE_TIMEOUT_MS) != HARNESS_OK)
            break;
    }
    harness_exit status;
    assert_int_equal(harness_wait(s->rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    check_sanitizers(s);
    if (!status.exited || status.code != 74)
        print_error("rpcd ended with %s, expected exit 74; stderr:\n%s\n",
                    harness_exit_describe(&status), harness_stderr(s->rpcd));
    assert_false(status.signal == SIGPIPE);
    assert_true(status.exited);
    assert_int_equal(status.code, 74);
    assert_non_null(strstr(harness_stderr(s->rpcd), "the client closed its end"));
    session_end(s);
}

/*
 * The client closes rpcd's stdout while a worker's call runs, and then sends nothing, keeping
 * stdin open: the worker's failed write must get the reader out of its wait for input, and rpcd
 * must exit 74 instead of waiting for a line that never comes.
 */
static void test_closed_stdout_while_the_reader_waits(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sleep\",\"params\":{\"ms\":300}}\n");
    harness_close_stdout(s->rpcd);
    long long closed = now_ms();
    expect_exit(s, HARNESS_TIMEOUT_MS, 74);
    assert_true(now_ms() - closed < HARNESS_TIMEOUT_MS);
    assert_non_null(strstr(harness_stderr(s->rpcd), "the client closed its end"));
    session_end(s);
}

/*
 * The client closes rpcd's stdout after the end of input, while rpcd waits for a long call: the
 * next progress notification fails to go out, and rpcd cancels the call and exits 74 at once
 * instead of waiting the minute the call asked for.
 */
static void test_closed_stdout_after_end_of_input(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2\nlog_level = debug");
    long_call_after_end_of_input(s);
    harness_close_stdout(s->rpcd);
    long long closed = now_ms();
    expect_exit_soon(s, closed, 74);
    assert_non_null(strstr(harness_stderr(s->rpcd), "the client closed its end"));
    session_end(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_silent_cancel_stays_silent_at_sigterm, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_silent_cancel_of_running_call_stays_silent_at_sigterm,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_eof_waits_for_calls_in_flight, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_cancels_cooperative_call, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_sigint_behaves_like_sigterm, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_while_reading_is_paused, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_after_end_of_input, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_on_a_plugin_thread, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_grace_period_for_stuck_call, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_without_grace_period, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_second_sigterm_exits_at_once, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_closed_stdout_exits_74, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_closed_stdout_while_the_reader_waits, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_closed_stdout_after_end_of_input, session_setup,
                                        session_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
