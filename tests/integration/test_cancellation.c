/* SPDX-License-Identifier: MIT */
/*
 * Cancellation through the real binary, in both conventions ($/cancelRequest answered
 * -32800, notifications/cancelled never answered), and request ids: duplicates in flight, an id
 * free again once answered.
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

/* ---- Cancellation ---------------------------------------------------------------------- */

/* $/cancelRequest (LSP): the running call ends at once with -32800. */
static void test_lsp_cancel_answers_request_cancelled(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2");
    start_sleep_and_wait_for_progress(s, "long", 600000);
    long long sent = now_ms();
    send_text(
        s, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"long\"}}\n");
    expect_cancelled(s, "long");
    assert_true(now_ms() - sent < HARNESS_TIMEOUT_MS);
    session_finish(s);
}

/*
 * notifications/cancelled (MCP): the call ends with no response at all. With one worker the
 * echo behind it only runs once the sleep has ended, and responses keep request order, so the
 * echo's answer being next proves the sleep ended silently; nothing may follow it, not even a
 * late progress report for the cancelled call's token.
 */
static void test_mcp_cancel_sends_no_response(void **state)
{
    session *s = *state;
    session_start(s, "workers = 1");
    start_sleep_and_wait_for_progress(s, "quiet", 600000);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                 "\"params\":{\"requestId\":\"quiet\",\"reason\":\"user pressed stop\"}}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"after\",\"method\":\"echo\",\"params\":[1]}\n");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":\"after\",\"result\":[1]}");
    session_finish(s);
}

/* Cancelling an id nobody uses, or one whose call has ended, does nothing and says nothing. */
static void test_cancel_of_unknown_or_finished_id_is_ignored(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"done\",\"method\":\"echo\",\"params\":[1]}\n");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":\"done\",\"result\":[1]}");
    send_text(s,
              "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"done\"}}\n"
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
              "\"params\":{\"requestId\":\"done\",\"reason\":\"too late\"}}\n"
              "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":424242}}\n"
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
              "\"params\":{\"requestId\":\"never-sent\"}}\n"
              "{\"jsonrpc\":\"2.0\",\"id\":\"next\",\"method\":\"echo\",\"params\":[2]}\n");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":\"next\",\"result\":[2]}");
    session_finish(s);
}

/*
 * A handler that never looks at cancellation is not cut short: both calls below are still held
 * by the fixture after being cancelled, and end when released, the LSP one answered with -32800
 * (the client asked for that), the MCP one not at all.
 */
static void test_cancel_does_not_cut_a_call_short(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"lsp\",\"method\":\"deferred.hold\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"mcp\",\"method\":\"deferred.hold\"}\n");
    barrier(s, 2, 2);
    send_text(s,
              "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"lsp\"}}\n"
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
              "\"params\":{\"requestId\":\"mcp\",\"reason\":\"no longer needed\"}}\n"
              "{\"jsonrpc\":\"2.0\",\"id\":\"release\",\"method\":\"deferred.release\"}\n");
    json_t *responses = collect_responses(s, 2);
    assert_json(json_object_get(response_for(responses, "release"), "result"), "{\"held\":2}");
    assert_error(response_for(responses, "lsp"), -32800, "Request cancelled");
    json_decref(responses);
    session_finish(s);
}

/*
 * A call still queued behind a running one never reaches its handler once cancelled: the
 * fixture's deferred.hold would have been counted by deferred.release. One worker keeps the
 * queue and the order of the responses fixed.
 */
static void test_cancel_of_queued_call_skips_handler(void **state)
{
    session *s = *state;
    session_start(s, "workers = 1");
    start_sleep_and_wait_for_progress(s, "busy", 600000);
    send_text(
        s, "{\"jsonrpc\":\"2.0\",\"id\":\"queued-lsp\",\"method\":\"deferred.hold\"}\n"
           "{\"jsonrpc\":\"2.0\",\"id\":\"queued-mcp\",\"method\":\"deferred.hold\"}\n"
           "{\"jsonrpc\":\"2.0\",\"id\":\"release\",\"method\":\"deferred.release\"}\n"
           "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\","
           "\"params\":{\"id\":\"queued-lsp\"}}\n"
           "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
           "\"params\":{\"requestId\":\"queued-mcp\"}}\n"
           "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"busy\"}}\n");
    expect_cancelled(s, "busy");
    expect_cancelled(s, "queued-lsp");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":\"release\",\"result\":{\"held\":0}}");
    session_finish(s);
}

/*
 * One call cancelled both ways, in the given order: the client asked for -32800 once, so the
 * call ends with exactly that one response, whichever convention came first. The call is held
 * by the fixture (its handler has run: the barrier) until released.
 */
static void cancel_both_ways(session *s, bool lsp_first)
{
    static const char lsp[] =
        "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"both\"}}\n";
    static const char mcp[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                              "\"params\":{\"requestId\":\"both\"}}\n";
    session_start(s, "workers = 2");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"both\",\"method\":\"deferred.hold\"}\n");
    barrier(s, 2, 2);
    send_text(s, lsp_first ? lsp : mcp);
    send_text(s, lsp_first ? mcp : lsp);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"release\",\"method\":\"deferred.release\"}\n");
    json_t *responses = collect_responses(s, 2);
    assert_json(json_object_get(response_for(responses, "release"), "result"), "{\"held\":1}");
    assert_error(response_for(responses, "both"), -32800, "Request cancelled");
    json_decref(responses);
    session_finish(s);
}

static void test_cancel_lsp_then_mcp_answers_once(void **state)
{
    cancel_both_ways(*state, true);
}

static void test_cancel_mcp_then_lsp_answers_once(void **state)
{
    cancel_both_ways(*state, false);
}

/*
 * $/cancelRequest on a running tools/call: the MCP client gets the JSON-RPC error -32800, not a
 * tool result (isError) saying the call was cancelled.
 */
static void test_lsp_cancel_of_tool_call_is_request_cancelled(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2\n[mcp]\ntools = all");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"tool\",\"method\":\"tools/call\",\"params\":{"
                 "\"name\":\"sleep\",\"arguments\":{\"ms\":600000},"
                 "\"_meta\":{\"progressToken\":\"tool\"}}}\n");
    json_t *report = next_line(s);
    assert_true(is_progress(report));
    json_decref(report);
    send_text(
        s, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"tool\"}}\n");
    expect_cancelled(s, "tool");
    session_finish(s);
}

/* ---- Ids ------------------------------------------------------------------------------- */

/*
 * An id already in flight is refused with -32600 naming the reason; the first call is not
 * disturbed, and the id is free again once it has ended. id null is never tracked.
 */
static void test_duplicate_id_in_flight(void **state)
{
    session *s = *state;
    session_start(s, "workers = 2");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"deferred.hold\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"echo\",\"params\":[\"twin\"]}\n");
    json_t *response = next_response(s);
    assert_int_equal(json_integer_value(json_object_get(response, "id")), 7);
    assert_error(response, -32600, "Invalid Request");
    assert_non_null(strstr(detail_of(response), "in flight"));
    json_decref(response);

    /* The held call may still be queued when the error comes back: release only once it holds. */
    barrier(s, 2, 2);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"release\",\"method\":\"deferred.release\"}\n");
    json_t *responses = collect_responses(s, 2);
    assert_json(json_object_get(response_for(responses, "release"), "result"), "{\"held\":1}");
    size_t index;
    json_t *item;
    bool seen_first = false;
    json_array_foreach(responses, index, item)
    {
        if (json_integer_value(json_object_get(item, "id")) == 7) {
            assert_json(item, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"completed\":true}}");
            seen_first = true;
        }
    }
    assert_true(seen_first);
    json_decref(responses);

    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"echo\",\"params\":[\"again\"]}\n");
    expect_response(s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":[\"again\"]}");

    /* Two id-null calls in flight together: both run, both are answered. */
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"deferred.hold\"}\n"
                 "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"deferred.hold\"}\n");
    barrier(s, 2, 4);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"release-2\",\"method\":\"deferred.release\"}\n");
    responses = collect_responses(s, 3);
    assert_json(json_object_get(response_for(responses, "release-2"), "result"), "{\"held\":2}");
    size_t nulls = 0;
    json_array_foreach(responses, index, item)
    {
        if (json_is_null(json_object_get(item, "id"))) {
            assert_json(item, "{\"jsonrpc\":\"2.0\",\"id\":null,\"result\":{\"completed\":true}}");
            nulls++;
        }
    }
    assert_int_equal(nulls, 2);
    json_decref(responses);
    session_finish(s);
}

/*
 * Once a client has read a call's response, the call has ended for it, and so has the id: a
 * client may send the same id again at once. Many rounds of that, with every core kept busy so
 * that rpcd's threads get preempted at unlucky moments, must never meet "still in flight".
 */
static void test_id_free_again_as_soon_as_answered(void **state)
{
    session *s = *state;
    /* Under valgrind a round is a hundred times slower: fewer rounds keep the test bounded. */
    const int ROUNDS = harness_wrapped() ? 100 : 3000;
    session_start(s, "workers = 2");
    /* valgrind runs rpcd's threads one at a time: busy cores would only starve it. */
    if (!harness_wrapped())
        start_spinners(s);
    int refused = 0, first_refused = -1;
    for (int i = 0; i < ROUNDS; i++) {
        send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}\n");
        json_t *response = next_line(s);
        if (json_object_get(response, "error")) {
            if (refused++ == 0) {
                first_refused = i;
                print_json("refused", response);
            }
        }
        json_decref(response);
    }
    stop_spinners(s);
    if (refused > 0)
        print_error("id 1 refused as in flight %d times in %d rounds (first in round %d), though "
                    "each round waited for the previous response\n",
                    refused, ROUNDS, first_refused);
    assert_int_equal(refused, 0);
    session_finish(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lsp_cancel_answers_request_cancelled, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_mcp_cancel_sends_no_response, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_cancel_of_unknown_or_finished_id_is_ignored,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_cancel_does_not_cut_a_call_short, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_cancel_of_queued_call_skips_handler, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_cancel_lsp_then_mcp_answers_once, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_cancel_mcp_then_lsp_answers_once, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_lsp_cancel_of_tool_call_is_request_cancelled,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_duplicate_id_in_flight, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_id_free_again_as_soon_as_answered, session_setup,
                                        session_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
