/* SPDX-License-Identifier: MIT */
/*
 * The rounds of calls that asked the client (mcp_rounds.c): the result that asks, a claim that
 * brings back the answers asked and the state, and each refusal of a requestState.
 */
#include "mcp/mcp_rounds.h"

#include <jansson.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define SPAN(text) ((js_span){(text), sizeof(text) - 1})

static const char questions[] =
    "\"ok\":{\"method\":\"elicitation/create\",\"params\":{}},\"r\":{\"method\":\"roots/list\","
    "\"params\":{}}";

/* Asks in rounds for method with arguments; returns the requestState (new). */
static char *ask(mcp_rounds *rounds, const char *method, js_span arguments, const char *state)
{
    buffer out = BUFFER_INIT;
    assert_int_equal(mcp_rounds_ask(rounds, &out, method, arguments, questions,
                                    sizeof questions - 1, state, state ? strlen(state) : 0,
                                    state != NULL),
                     0);
    json_t *result = json_loadb(out.data, out.length, 0, NULL);
    assert_non_null(result);
    assert_string_equal(json_string_value(json_object_get(result, "resultType")), "input_required");
    assert_non_null(
        json_object_get(json_object_get(json_object_get(result, "inputRequests"), "ok"), "method"));
    char *token = strdup(json_string_value(json_object_get(result, "requestState")));
    assert_int_equal(strlen(token), MCP_ROUND_TOKEN_CHARS);
    json_decref(result);
    buf_free(&out);
    return token;
}

/* The requestState as a JSON string span of text (static storage per call site: the caller
 * keeps text). */
static js_span quoted(buffer *text, const char *token)
{
    buf_clear(text);
    assert_int_equal(buf_append_json_string(text, token, strlen(token)), 0);
    return (js_span){text->data, text->length};
}

static int claim(mcp_rounds *rounds, const char *method, js_span arguments, js_span state,
                 js_span responses, mcp_round_input *input, const char **problem)
{
    return mcp_rounds_claim(rounds, method, arguments, state, responses, input, problem);
}

static void test_a_round_and_its_claim(void **state)
{
    (void)state;
    mcp_rounds *rounds;
    assert_int_equal(mcp_rounds_new(&rounds), 0);
    char *token = ask(rounds, "m", SPAN("{\"a\":1,\"b\":[2]}"), "kept");
    buffer text = BUFFER_INIT;
    mcp_round_input input;
    const char *problem = NULL;
    /* The same arguments as a value (other order, spaces), answers to asked keys only. */
    assert_int_equal(claim(rounds, "m", SPAN("{ \"b\":[2], \"a\":1 }"), quoted(&text, token),
                           SPAN("{\"ok\":{\"action\":\"accept\"},\"x\":{},\"r\":{\"roots\":[]}}"),
                           &input, &problem),
                     0);
    assert_true(input.has_state);
    assert_int_equal(input.state.length, 4);
    assert_memory_equal(input.state.data, "kept", 4);
    json_t *answers = json_loadb(input.answers.data, input.answers.length, 0, NULL);
    assert_non_null(answers);
    assert_int_equal(json_object_size(answers), 2);
    assert_non_null(json_object_get(answers, "ok"));
    assert_null(json_object_get(answers, "x"));
    json_decref(answers);
    mcp_round_input_free(&input);
    /* Once. */
    assert_int_equal(claim(rounds, "m", SPAN("{\"a\":1,\"b\":[2]}"), quoted(&text, token),
                           SPAN("{}"), &input, &problem),
                     -2);
    assert_non_null(strstr(problem, "used already"));
    free(token);
    /* No state kept: none comes back; no answers: an empty object. */
    token = ask(rounds, "m", SPAN("{}"), NULL);
    assert_int_equal(
        claim(rounds, "m", SPAN("{}"), quoted(&text, token), (js_span){NULL, 0}, &input, &problem),
        0);
    assert_false(input.has_state);
    assert_int_equal(input.answers.length, 0);
    mcp_round_input_free(&input);
    free(token);
    /* Answers without a requestState (an ephemeral retry): every one, and no state. */
    assert_int_equal(claim(rounds, "m", SPAN("{}"), (js_span){NULL, 0},
                           SPAN("{\"any\":{\"action\":\"accept\"},\"other\":{}}"), &input,
                           &problem),
                     0);
    assert_false(input.has_state);
    json_t *loose = json_loadb(input.answers.data, input.answers.length, 0, NULL);
    assert_int_equal(json_object_size(loose), 2);
    json_decref(loose);
    mcp_round_input_free(&input);
    /* Neither given: a first round. */
    assert_int_equal(
        claim(rounds, "m", SPAN("{}"), (js_span){NULL, 0}, (js_span){NULL, 0}, &input, &problem),
        0);
    mcp_round_input_free(&input);
    buf_free(&text);
    mcp_rounds_free(rounds);
}

static void test_refusals(void **state)
{
    (void)state;
    mcp_rounds *rounds;
    assert_int_equal(mcp_rounds_new(&rounds), 0);
    buffer text = BUFFER_INIT;
    mcp_round_input input;
    const char *problem = NULL;
    /* Answers without the requestState: checked as a round's are. */
    assert_int_equal(
        claim(rounds, "m", SPAN("{}"), (js_span){NULL, 0}, SPAN("{\"ok\":1}"), &input, &problem),
        -2);
    assert_non_null(strstr(problem, "inputResponses"));
    /* Not a string, not 22 characters, made up. */
    static const char *const made_up[] = {"1", "\"short\"", "\"AAAAAAAAAAAAAAAAAAAAAA\""};
    for (size_t i = 0; i < sizeof made_up / sizeof made_up[0]; i++) {
        js_span given = {made_up[i], strlen(made_up[i])};
        assert_int_equal(claim(rounds, "m", SPAN("{}"), given, SPAN("{}"), &input, &problem), -2);
        assert_non_null(strstr(problem, "not one rpcd gave"));
    }
    /* Another tool, other arguments: refused, and the round is spent. */
    char *token = ask(rounds, "m", SPAN("{\"file\":\"a\"}"), NULL);
    assert_int_equal(claim(rounds, "n", SPAN("{\"file\":\"a\"}"), quoted(&text, token), SPAN("{}"),
                           &input, &problem),
                     -2);
    assert_int_equal(claim(rounds, "m", SPAN("{\"file\":\"a\"}"), quoted(&text, token), SPAN("{}"),
                           &input, &problem),
                     -2);
    free(token);
    token = ask(rounds, "m", SPAN("{\"file\":\"a\"}"), NULL);
    assert_int_equal(claim(rounds, "m", SPAN("{\"file\":\"b\"}"), quoted(&text, token), SPAN("{}"),
                           &input, &problem),
                     -2);
    free(token);
    /* Answers of the wrong shape. */
    static const char *const bad[] = {"[]", "\"x\"", "{\"ok\":1}", "{\"ok\":{},\"ok\":{}}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        token = ask(rounds, "m", SPAN("{}"), NULL);
        js_span responses = {bad[i], strlen(bad[i])};
        assert_int_equal(
            claim(rounds, "m", SPAN("{}"), quoted(&text, token), responses, &input, &problem), -2);
        assert_non_null(strstr(problem, "inputResponses"));
        free(token);
    }
    /* A store without rounds (NULL): every requestState is unknown. */
    assert_int_equal(claim(NULL, "m", SPAN("{}"), SPAN("\"AAAAAAAAAAAAAAAAAAAAAA\""), SPAN("{}"),
                           &input, &problem),
                     -2);
    buf_free(&text);
    mcp_rounds_free(rounds);
}

/* Beyond MCP_MOST_ROUNDS, the oldest goes; tokens differ. */
static void test_bounded(void **state)
{
    (void)state;
    mcp_rounds *rounds;
    assert_int_equal(mcp_rounds_new(&rounds), 0);
    char *first = ask(rounds, "m", SPAN("{}"), NULL);
    char *second = ask(rounds, "m", SPAN("{}"), NULL);
    assert_string_not_equal(first, second);
    for (int i = 0; i < MCP_MOST_ROUNDS - 1; i++)
        free(ask(rounds, "m", SPAN("{}"), NULL));
    buffer text = BUFFER_INIT;
    mcp_round_input input;
    const char *problem = NULL;
    assert_int_equal(
        claim(rounds, "m", SPAN("{}"), quoted(&text, first), SPAN("{}"), &input, &problem), -2);
    assert_int_equal(
        claim(rounds, "m", SPAN("{}"), quoted(&text, second), SPAN("{}"), &input, &problem), 0);
    mcp_round_input_free(&input);
    free(first);
    free(second);
    buf_free(&text);
    mcp_rounds_free(rounds);
}

/* What a retry must repeat: a prompt's name and arguments (its _meta and the retry's members
 * aside); any other method's params whole. */
static void test_identity(void **state)
{
    (void)state;
    reg_method prompt = {.name = (char *)"p.get", .mcp_role = RPCD_MCP_PROMPT};
    reg_method tool = {.name = (char *)"t.run", .mcp_role = RPCD_MCP_TOOL};
    buffer scratch = BUFFER_INIT;
    js_span identity;
    const char *params = "{\"_meta\":{\"progressToken\":1},\"name\":\"n\",\"requestState\":\"x\","
                         "\"arguments\":{\"a\":\"1\"},\"inputResponses\":{}}";
    assert_int_equal(
        mcp_rounds_identity(&prompt, (js_span){params, strlen(params)}, &scratch, &identity), 0);
    assert_int_equal(identity.length, strlen("{\"name\":\"n\",\"arguments\":{\"a\":\"1\"}}"));
    assert_memory_equal(identity.start, "{\"name\":\"n\",\"arguments\":{\"a\":\"1\"}}",
                        identity.length);
    /* Without arguments: none, as {}. */
    const char *bare = "{\"name\":\"n\"}";
    assert_int_equal(
        mcp_rounds_identity(&prompt, (js_span){bare, strlen(bare)}, &scratch, &identity), 0);
    assert_memory_equal(identity.start, "{\"name\":\"n\",\"arguments\":{}}", identity.length);
    assert_int_equal(
        mcp_rounds_identity(&tool, (js_span){params, strlen(params)}, &scratch, &identity), 0);
    assert_ptr_equal(identity.start, params);
    assert_int_equal(identity.length, strlen(params));
    buf_free(&scratch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_round_and_its_claim),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_bounded),
        cmocka_unit_test(test_identity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
