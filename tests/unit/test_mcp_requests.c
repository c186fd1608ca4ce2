/* SPDX-License-Identifier: MIT */
/*
 * rpcd's requests to a client of the handshake era, byte for byte: a round sent as numbered
 * requests, answers gathered until the round is whole, every way a round ends otherwise (an
 * error, an answer that is not an object, the client's cancellation, the session's end, its
 * time), and the store's bounds.
 */
#include "base/buffer.h"
#include "base/clock.h"
#include "base/output.h"
#include "mcp/mcp_requests.h"
#include "methods/registry.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#define SPAN(text) ((js_span){(text), strlen(text)})
#define NONE ((js_span){NULL, 0})
#define FORM "{\"message\":\"Sure?\",\"requestedSchema\":{\"type\":\"object\"}}"
#define TWO_QUESTIONS                                                                              \
    "\"confirm\":{\"method\":\"elicitation/create\",\"params\":" FORM "},"                         \
    "\"model\":{\"method\":\"sampling/createMessage\",\"params\":{\"maxTokens\":5}}"
#define CANCELLED(number, reason)                                                                  \
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/"                                             \
    "cancelled\",\"params\":{\"requestId\":" number ",\"reason\":\"" reason "\"}}\n"

static int collect(void *sink, const struct iovec *parts, int part_count)
{
    buffer *text = sink;
    for (int i = 0; i < part_count; i++)
        if (buf_append(text, parts[i].iov_base, parts[i].iov_len) != 0)
            return -1;
    return 0;
}

typedef struct fixture {
    buffer text;
    output *out;
    mcp_requests *requests;
    reg_method method;
} fixture;

static fixture *fixture_new(mcp_requests_limits limits)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(out_new(collect, &f->text, &f->out), 0);
    assert_int_equal(mcp_requests_new(f->out, limits, &f->requests), 0);
    f->method.name = "files.delete";
    return f;
}

static void fixture_free(fixture *f)
{
    mcp_requests_free(f->requests);
    out_free(f->out);
    buf_free(&f->text);
    free(f);
}

/* What was written since the last look, as lines. */
static void assert_written(fixture *f, const char *expected)
{
    assert_int_equal(out_flush(f->out), 0);
    if (f->text.length != strlen(expected) ||
        (f->text.length > 0 && memcmp(f->text.data, expected, f->text.length) != 0))
        fail_msg("wrote '%.*s', expected '%s'", (int)f->text.length, f->text.data, expected);
    buf_clear(&f->text);
}

/* Forgets what was written so far. */
static void forget_written(fixture *f)
{
    assert_int_equal(out_flush(f->out), 0);
    buf_clear(&f->text);
}

/* A round of the call id that ends with questions (count of them) and state (NULL: none). */
static int ask(fixture *f, const char *id, const char *questions, size_t count, const char *state)
{
    call_round_end ended = {
        .method = &f->method,
        .id = SPAN(id),
        .arguments = SPAN("{\"file\":\"a\"}"),
        .call_params = SPAN("{\"name\":\"files_delete\",\"arguments\":{\"file\":\"a\"}}"),
        .questions = questions,
        .questions_length = strlen(questions),
        .question_count = count,
        .state = state,
        .state_length = state ? strlen(state) : 0,
        .has_state = state != NULL,
    };
    buffer unused = BUFFER_INIT;
    int status = mcp_requests_asker()->ask(f->requests, &unused, &ended);
    assert_int_equal(unused.length, 0);
    buf_free(&unused);
    return status;
}

static void test_a_round_answered(void **state)
{
    (void)state;
    fixture *f = fixture_new(MCP_REQUESTS_LIMITS);
    assert_int_equal(ask(f, "\"c1\"", TWO_QUESTIONS, 2, "kept"), CALL_ASK_DEFERRED);
    assert_written(
        f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\",\"params\":" FORM "}\n"
           "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"sampling/createMessage\","
           "\"params\":{\"maxTokens\":5}}\n");
    assert_true(mcp_requests_waiting(f->requests, SPAN("\"c1\"")));
    assert_false(mcp_requests_waiting(f->requests, SPAN("\"c2\"")));

    /* Only rpcd's numbers, as it wrote them, are answers. */
    mcp_resumed resumed;
    js_span result = SPAN("{\"action\":\"accept\"}");
    assert_int_equal(mcp_requests_answer(f->requests, SPAN("\"1\""), result, NONE, &resumed),
                     MCP_ANSWER_UNKNOWN);
    assert_int_equal(mcp_requests_answer(f->requests, SPAN("3"), result, NONE, &resumed),
                     MCP_ANSWER_UNKNOWN);
    assert_int_equal(mcp_requests_answer(f->requests, SPAN("1.0"), result, NONE, &resumed),
                     MCP_ANSWER_UNKNOWN);
    assert_int_equal(
        mcp_requests_answer(f->requests, SPAN("2"), SPAN("{\"content\":7}"), NONE, &resumed),
        MCP_ANSWER_TAKEN);
    /* An answer is taken once. */
    assert_int_equal(mcp_requests_answer(f->requests, SPAN("2"), result, NONE, &resumed),
                     MCP_ANSWER_UNKNOWN);
    assert_int_equal(mcp_requests_answer(f->requests, SPAN("1"), result, NONE, &resumed),
                     MCP_ANSWER_RESUMED);
    assert_written(f, "");
    assert_int_equal(resumed.id.length, 4);
    assert_memory_equal(resumed.id.data, "\"c1\"", 4);
    assert_int_equal(resumed.params.length,
                     strlen("{\"name\":\"files_delete\",\"arguments\":{\"file\":\"a\"}}"));
    static const char answers[] = "{\"model\":{\"content\":7},\"confirm\":{\"action\":\"accept\"}}";
    assert_int_equal(resumed.input.answers.length, sizeof answers - 1);
    assert_memory_equal(resumed.input.answers.data, answers, sizeof answers - 1);
    assert_true(resumed.input.has_state);
    assert_int_equal(resumed.input.state.length, 4);
    assert_memory_equal(resumed.input.state.data, "kept", 4);
    mcp_resumed_free(&resumed);
    assert_false(mcp_requests_waiting(f->requests, SPAN("\"c1\"")));
    /* The next round's requests go on counting. */
    assert_int_equal(ask(f, "7", "\"r\":{\"method\":\"roots/list\",\"params\":{}}", 1, NULL),
                     CALL_ASK_DEFERRED);
    assert_written(f, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"roots/list\",\"params\":{}}\n");
    assert_int_equal(
        mcp_requests_answer(f->requests, SPAN("3"), SPAN("{\"roots\":[]}"), NONE, &resumed),
        MCP_ANSWER_RESUMED);
    assert_false(resumed.input.has_state);
    mcp_resumed_free(&resumed);
    fixture_free(f);
}

/* An error, or a result that is not an object: the call gets a tool error saying so, and the
 * round's other request is cancelled. */
static void test_a_round_failed(void **state)
{
    (void)state;
    fixture *f = fixture_new(MCP_REQUESTS_LIMITS);
    mcp_resumed resumed;
    assert_int_equal(ask(f, "\"c1\"", TWO_QUESTIONS, 2, NULL), CALL_ASK_DEFERRED);
    forget_written(f);
    assert_int_equal(mcp_requests_answer(f->requests, SPAN("1"), NONE,
                                         SPAN("{\"code\":-1,\"message\":\"User \\u00e9 gone\"}"),
                                         &resumed),
                     MCP_ANSWER_FAILED);
    assert_written(
        f, CANCELLED("2", "the round failed") "{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"result\":{"
                                              "\"content\":[{\"type\":\"text\","
                                              "\"text\":\"the client answered elicitation/create "
                                              "with an error: User \xc3\xa9 "
                                              "gone\"}],\"isError\":true}}\n");
    assert_false(mcp_requests_waiting(f->requests, SPAN("\"c1\"")));
    assert_int_equal(mcp_requests_answer(f->requests, SPAN("2"), SPAN("{}"), NONE, &resumed),
                     MCP_ANSWER_UNKNOWN);

    assert_int_equal(ask(f, "\"c2\"", TWO_QUESTIONS, 2, NULL), CALL_ASK_DEFERRED);
    forget_written(f);
    assert_int_equal(mcp_requests_answer(f->requests, SPAN("3"), SPAN("{}"), NONE, &resumed),
                     MCP_ANSWER_TAKEN);
    assert_int_equal(mcp_requests_answer(f->requests, SPAN("4"), SPAN("[1]"), NONE, &resumed),
                     MCP_ANSWER_FAILED);
    assert_written(f, "{\"jsonrpc\":\"2.0\",\"id\":\"c2\",\"result\":{\"content\":[{\"type\":"
                      "\"text\",\"text\":\"the client's answer to sampling/createMessage is not "
                      "an object\"}],\"isError\":true}}\n");

    /* A long message is cut at 256 bytes, where a character ends. */
    assert_int_equal(ask(f, "\"c4\"", "\"r\":{\"method\":\"roots/list\",\"params\":{}}", 1, NULL),
                     CALL_ASK_DEFERRED);
    forget_written(f);
    char letters[256], error[400], expected[700];
    memset(letters, 'a', 255);
    letters[255] = '\0';
    snprintf(error, sizeof error, "{\"message\":\"%s\xc3\xa9 and more\"}", letters);
    assert_int_equal(mcp_requests_answer(f->requests, SPAN("5"), NONE, SPAN(error), &resumed),
                     MCP_ANSWER_FAILED);
    snprintf(expected, sizeof expected,
             "{\"jsonrpc\":\"2.0\",\"id\":\"c4\",\"result\":{\"content\":[{\"type\":\"text\","
             "\"text\":\"the client answered roots/list with an error: %s\"}],"
             "\"isError\":true}}\n",
             letters);
    assert_written(f, expected);

    /* An error that is not an object still fails the round. */
    assert_int_equal(ask(f, "\"c3\"", TWO_QUESTIONS, 2, NULL), CALL_ASK_DEFERRED);
    forget_written(f);
    assert_int_equal(mcp_requests_answer(f->requests, SPAN("7"), NONE, SPAN("3"), &resumed),
                     MCP_ANSWER_FAILED);
    assert_written(f,
                   CANCELLED("6", "the round failed") "{\"jsonrpc\":\"2.0\",\"id\":\"c3\","
                                                      "\"result\":{\"content\":[{\"type\":\"text\","
                                                      "\"text\":\"the client answered "
                                                      "sampling/createMessage with an error\"}],"
                                                      "\"isError\":true}}\n");
    fixture_free(f);
}

/* A prompt's or a resource's round runs again as its request; its failure is -32603. */
static void test_prompt_round(void **state)
{
    (void)state;
    fixture *f = fixture_new(MCP_REQUESTS_LIMITS);
    f->method.mcp_role = RPCD_MCP_PROMPT;
    assert_int_equal(ask(f, "\"p\"", TWO_QUESTIONS, 2, NULL), CALL_ASK_DEFERRED);
    forget_written(f);
    mcp_resumed resumed;
    assert_int_equal(mcp_requests_answer(f->requests, SPAN("1"), SPAN("{}"), NONE, &resumed),
                     MCP_ANSWER_TAKEN);
    assert_int_equal(mcp_requests_answer(f->requests, SPAN("2"), SPAN("{}"), NONE, &resumed),
                     MCP_ANSWER_RESUMED);
    assert_string_equal(resumed.method, "prompts/get");
    mcp_resumed_free(&resumed);
    f->method.mcp_role = RPCD_MCP_RESOURCE;
    assert_int_equal(ask(f, "\"r\"", TWO_QUESTIONS, 2, NULL), CALL_ASK_DEFERRED);
    forget_written(f);
    assert_int_equal(
        mcp_requests_answer(f->requests, SPAN("3"), NONE, SPAN("{\"message\":\"no\"}"), &resumed),
        MCP_ANSWER_FAILED);
    assert_written(
        f,
        CANCELLED(
            "4",
            "the round failed") "{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"error\":{\"code\":-32603,"
                                "\"message\":"
                                "\"the client answered elicitation/create with an error: no\"}}\n");
    fixture_free(f);
}

/* The client cancels the call: silently (notifications/cancelled) or answered -32800. */
static void test_cancelled_by_the_client(void **state)
{
    (void)state;
    fixture *f = fixture_new(MCP_REQUESTS_LIMITS);
    assert_int_equal(mcp_requests_cancel(f->requests, SPAN("\"c1\""), true), 0);
    assert_int_equal(ask(f, "\"c1\"", TWO_QUESTIONS, 2, NULL), CALL_ASK_DEFERRED);
    assert_int_equal(ask(f, "9", TWO_QUESTIONS, 2, NULL), CALL_ASK_DEFERRED);
    forget_written(f);
    mcp_resumed resumed;
    assert_int_equal(mcp_requests_answer(f->requests, SPAN("1"), SPAN("{}"), NONE, &resumed),
                     MCP_ANSWER_TAKEN);
    assert_int_equal(mcp_requests_cancel(f->requests, SPAN("\"c1\""), false), 1);
    assert_written(f, CANCELLED("2", "the client cancelled the call"));
    assert_int_equal(mcp_requests_cancel(f->requests, SPAN("\"c1\""), false), 0);
    assert_int_equal(mcp_requests_answer(f->requests, SPAN("2"), SPAN("{}"), NONE, &resumed),
                     MCP_ANSWER_UNKNOWN);
    assert_int_equal(mcp_requests_cancel(f->requests, SPAN("9"), true), 1);
    assert_written(
        f, CANCELLED("3", "the client cancelled the call") CANCELLED(
               "4", "the client cancelled the call") "{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{"
                                                     "\"code\":-32800,\"message\":"
                                                     "\"Request cancelled\"}}\n");
    fixture_free(f);
}

/* The session ends: each waiting call answered -32800, and no round waits from then on. */
static void test_closed(void **state)
{
    (void)state;
    fixture *f = fixture_new(MCP_REQUESTS_LIMITS);
    assert_int_equal(ask(f, "1", "\"r\":{\"method\":\"roots/list\",\"params\":{}}", 1, NULL),
                     CALL_ASK_DEFERRED);
    forget_written(f);
    mcp_requests_close(f->requests);
    assert_written(f, CANCELLED("1", "the session ends") "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{"
                                                         "\"code\":-32800,\"message\":"
                                                         "\"Request cancelled\"}}\n");
    assert_int_equal(ask(f, "2", TWO_QUESTIONS, 2, NULL), CALL_ASK_CANCELLED);
    assert_written(f, "");
    assert_false(mcp_requests_waiting(f->requests, SPAN("2")));
    fixture_free(f);
}

/* A round not answered in time: its call gets a tool error, its requests are cancelled. */
static void test_not_answered_in_time(void **state)
{
    (void)state;
    fixture *f = fixture_new((mcp_requests_limits){8, 1 << 20, 1});
    assert_int_equal(ask(f, "\"late\"", TWO_QUESTIONS, 2, NULL), CALL_ASK_DEFERRED);
    /* Taken out by the store's own thread: wait for its lines, as long as a busy machine needs. */
    const char *expected = CANCELLED("1", "not answered in time")
        CANCELLED("2", "not answered in time") "{\"jsonrpc\":\"2.0\",\"id\":\"late\",\"result\":{"
                                               "\"content\":[{\"type\":\"text\","
                                               "\"text\":\"the client did not answer within 0.001 "
                                               "s\"}],\"isError\":true}}\n";
    const char *at = NULL;
    for (int i = 0; i < 60000; i++) {
        assert_int_equal(out_flush(f->out), 0);
        assert_int_equal(buf_append_char(&f->text, '\0'), 0);
        at = strstr(f->text.data, "{\"jsonrpc\":\"2.0\",\"id\":\"late\"");
        f->text.length--;
        if (at)
            break;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    assert_non_null(at);
    assert_false(mcp_requests_waiting(f->requests, SPAN("\"late\"")));
    at = strstr(f->text.data, "{\"jsonrpc\":\"2.0\",\"method\"");
    assert_string_equal(at, expected);
    fixture_free(f);
}

/* At most most_rounds wait, holding at most most_bytes, answers included. */
static void test_bounds(void **state)
{
    (void)state;
    fixture *f = fixture_new((mcp_requests_limits){3, 400, 600000});
    const char *one = "\"r\":{\"method\":\"roots/list\",\"params\":{}}";
    for (int i = 0; i < 3; i++)
        assert_int_equal(ask(f, "1", one, 1, NULL), CALL_ASK_DEFERRED);
    assert_int_equal(ask(f, "1", one, 1, NULL), -1);
    mcp_requests_close(f->requests);
    fixture_free(f);

    f = fixture_new((mcp_requests_limits){8, 400, 600000});
    char state_text[400];
    memset(state_text, 's', sizeof state_text - 1);
    state_text[sizeof state_text - 1] = '\0';
    assert_int_equal(ask(f, "1", one, 1, state_text), -1);
    assert_int_equal(ask(f, "1", one, 1, NULL), CALL_ASK_DEFERRED);
    forget_written(f);
    /* An answer past what is left fails its round. */
    char answer[400];
    memset(answer, ' ', sizeof answer);
    answer[0] = '{', answer[sizeof answer - 1] = '}';
    mcp_resumed resumed;
    assert_int_equal(mcp_requests_answer(f->requests, SPAN("1"), (js_span){answer, sizeof answer},
                                         NONE, &resumed),
                     MCP_ANSWER_FAILED);
    assert_written(f, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\","
                      "\"text\":\"the client's answer to roots/list is larger than rpcd keeps "
                      "for the calls that wait\"}],\"isError\":true}}\n");
    fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_round_answered), cmocka_unit_test(test_a_round_failed),
        cmocka_unit_test(test_prompt_round),     cmocka_unit_test(test_cancelled_by_the_client),
        cmocka_unit_test(test_closed),           cmocka_unit_test(test_not_answered_in_time),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
