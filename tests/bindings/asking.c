/* SPDX-License-Identifier: MIT */
/*
 * The bindings' part of asking the client mid-call (ABI 1.6), through the real rpcd over MCP
 * 2026-07-28: PREFIX.confirm's first round is an input_required result with its question, the
 * retry with the requestState and the answer (in the same rpcd) completes with the answer and
 * the state the first round kept, and a client that cannot be asked gets the tool's -32021.
 */
#include "behaviour.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* The question every example asks, as MCP's ElicitRequest params. */
#define CONFIRM_FORM                                                                               \
    "{\"message\":\"Go on?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"ok\":{"    \
    "\"type\":\"boolean\"}},\"required\":[\"ok\"]}}"
#define ANSWER "{\"action\":\"accept\",\"content\":{\"ok\":true}}"
#define MISSING "{\"requiredCapabilities\":{\"elicitation\":{}}}"

/* tools/call of PREFIX_confirm as request id in the stateless revision, the client declaring
 * capabilities, with more members of params (or ""). */
static void call_confirm(session *s, int id, const char *capabilities, const char *more)
{
    char *line;
    assert_true(asprintf(&line,
                         "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{"
                         "\"name\":\"%s_confirm\",\"arguments\":{},\"_meta\":{"
                         "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                         "\"io.modelcontextprotocol/clientCapabilities\":%s}%s}}\n",
                         id, prefix, capabilities, more) > 0);
    assert_int_equal(harness_write_text(s->rpcd, line, HARNESS_TIMEOUT_MS), HARNESS_OK);
    free(line);
}

void test_asking(void **state)
{
    session *s = *state;
    call_confirm(s, 1, "{\"elicitation\":{}}", "");
    json_t *first = response_to(s, 1);
    json_t *result = json_object_get(first, "result");
    assert_member(json_object_get(result, "resultType"), "resultType", "\"input_required\"");
    assert_member(json_object_get(result, "inputRequests"), "inputRequests",
                  "{\"confirm\":{\"method\":\"elicitation/create\",\"params\":" CONFIRM_FORM "}}");
    const char *token = json_string_value(json_object_get(result, "requestState"));
    assert_non_null(token);
    assert_int_equal(strlen(token), 22);
    /* The state stays in rpcd: the client holds only the reference. */
    char *shown = json_dumps(first, 0);
    assert_null(strstr(shown, "kept by"));
    free(shown);

    char *more;
    assert_true(asprintf(&more,
                         ",\"requestState\":\"%s\",\"inputResponses\":{\"confirm\":" ANSWER "}",
                         token) > 0);
    json_decref(first);
    call_confirm(s, 2, "{\"elicitation\":{}}", more);
    free(more);
    json_t *second = response_to(s, 2);
    result = json_object_get(second, "result");
    if (!result)
        print_error("round 2: %s\n", json_dumps(second, 0));
    assert_member(json_object_get(result, "resultType"), "resultType", "\"complete\"");
    assert_member(json_object_get(result, "isError"), "isError", "false");
    char *expected;
    assert_true(asprintf(&expected, "{\"answer\":" ANSWER ",\"state\":\"kept by %s\"}", prefix) >
                0);
    assert_member(json_object_get(result, "structuredContent"), "structuredContent", expected);
    free(expected);
    json_decref(second);
    harness_close_stdin(s->rpcd);
    expect_exit_zero(s);
}

/* A client that did not declare elicitation, and a plain JSON-RPC call: -32021 with the
 * capability the tool needs, a JSON-RPC error and not a tool error. */
void test_asking_unsupported(void **state)
{
    session *s = *state;
    /* One request at a time: the two could be answered in either order. */
    for (json_int_t id = 1; id <= 2; id++) {
        if (id == 1) {
            call_confirm(s, 1, "{\"sampling\":{}}", "");
        } else {
            char *line;
            assert_true(asprintf(&line,
                                 "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"%s.confirm\"}\n",
                                 prefix) > 0);
            assert_int_equal(harness_write_text(s->rpcd, line, HARNESS_TIMEOUT_MS), HARNESS_OK);
            free(line);
        }
        json_t *response = response_to(s, id);
        json_t *error = json_object_get(response, "error");
        if (!error)
            print_error("not an error: %s\n", json_dumps(response, 0));
        assert_member(json_object_get(error, "code"), "code", "-32021");
        assert_member(json_object_get(error, "data"), "data", MISSING);
        json_decref(response);
    }
    harness_close_stdin(s->rpcd);
    expect_exit_zero(s);
}
