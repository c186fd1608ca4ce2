/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of mcp_tool.c: which descriptor members register_method refuses, which complete
 * tool results are MCP's (every content kind, and each way one can be wrong), and output
 * checks against a compiled schema, deep ones included, with where and why they fail.
 */
#include "methods/mcp_tool.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static json_schema *compiled_output(const char *text)
{
    json_schema *compiled = NULL;
    char error[256];
    assert_int_equal(schema_compile(text, strlen(text), NULL, &compiled, error, sizeof error), 0);
    return compiled;
}

/* A complete result checked against schema text (NULL: none). */
static int check(const char *text, const char *schema, char *reason, size_t size)
{
    json_schema *compiled = schema ? compiled_output(schema) : NULL;
    int status = mcp_tool_check_result(text, strlen(text), compiled, reason, size);
    schema_free(compiled);
    return status;
}

static void test_refusal_of_descriptor_members(void **state)
{
    (void)state;
    assert_null(mcp_tool_refusal(NULL, NULL, NULL, NULL));
    assert_null(mcp_tool_refusal(
        "Get weather", "{\"readOnlyHint\":true,\"openWorldHint\":false,\"x\":[1]}",
        "{\"type\":\"object\"}", "[{\"src\":\"a.png\",\"sizes\":[\"48x48\"],\"theme\":\"dark\"}]"));
    static const char *const bad_annotations[] = {"[]", "{\"destructiveHint\":1}",
                                                  "{\"title\":false}", "{", "{\"a\":1,\"a\":2}"};
    for (size_t i = 0; i < sizeof bad_annotations / sizeof bad_annotations[0]; i++)
        assert_non_null(
            strstr(mcp_tool_refusal(NULL, bad_annotations[i], NULL, NULL), "annotations"));
    static const char *const bad_schemas[] = {"{}", "{\"type\":\"array\"}", "\"object\"",
                                              "{\"type\":[\"object\"]}"};
    for (size_t i = 0; i < sizeof bad_schemas / sizeof bad_schemas[0]; i++)
        assert_non_null(
            strstr(mcp_tool_refusal(NULL, NULL, bad_schemas[i], NULL), "output_schema"));
    static const char *const bad_icons[] = {"{}",
                                            "[1]",
                                            "[{}]",
                                            "[{\"src\":1}]",
                                            "[{\"src\":\"a\",\"sizes\":\"48x48\"}]",
                                            "[{\"src\":\"a\",\"theme\":\"blue\"}]",
                                            "[{\"src\":\"a\",\"mimeType\":2}]"};
    for (size_t i = 0; i < sizeof bad_icons / sizeof bad_icons[0]; i++)
        assert_non_null(strstr(mcp_tool_refusal(NULL, NULL, NULL, bad_icons[i]), "icons"));
    assert_non_null(strstr(mcp_tool_refusal("\xc3", NULL, NULL, NULL), "title"));
}

static void test_complete_results_of_every_kind_pass(void **state)
{
    (void)state;
    char reason[256];
    static const char *const good[] = {
        "{\"content\":[]}",
        "{\"content\":[{\"type\":\"text\",\"text\":\"hi\",\"_meta\":{},\"annotations\":"
        "{\"audience\":[\"assistant\"],\"priority\":1,\"lastModified\":\"2026-01-01\"}}],"
        "\"isError\":true,\"_meta\":{\"k\":1},\"extra\":[1]}",
        "{\"content\":[{\"type\":\"image\",\"data\":\"\",\"mimeType\":\"image/png\"},"
        "{\"type\":\"audio\",\"data\":\"AA==\",\"mimeType\":\"audio/wav\"}]}",
        "{\"content\":[{\"type\":\"resource_link\",\"uri\":\"u\",\"name\":\"n\",\"size\":3,"
        "\"icons\":[{\"src\":\"s\"}]}]}",
        "{\"content\":[{\"type\":\"resource\",\"resource\":{\"uri\":\"u\",\"blob\":\"AAE=\","
        "\"mimeType\":\"application/octet-stream\"}}]}",
        "{\"content\":[],\"structuredContent\":{\"n\":1}}",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        if (check(good[i], NULL, reason, sizeof reason) != 0)
            print_error("%s: %s\n", good[i], reason);
        assert_int_equal(check(good[i], NULL, reason, sizeof reason), 0);
    }
}

static void test_complete_results_refused_say_why(void **state)
{
    (void)state;
    static const struct {
        const char *text, *reason;
    } bad[] = {
        {"[]", "must be an object"},
        {"{}", "needs a \"content\" array"},
        {"{\"content\":[1]}", "content[0] is not an object"},
        {"{\"content\":[{}]}", "content[0] has no string \"type\""},
        {"{\"content\":[{\"type\":\"video\"}]}", "a type MCP does not define"},
        {"{\"content\":[{\"type\":\"text\"}]}", "needs a string \"text\""},
        {"{\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"image\",\"data\":\"a b\","
         "\"mimeType\":\"image/png\"}]}",
         "content[1] (image or audio) needs base64 \"data\""},
        {"{\"content\":[{\"type\":\"audio\",\"data\":\"AA==\"}]}", "needs a string \"mimeType\""},
        {"{\"content\":[{\"type\":\"resource_link\",\"uri\":\"u\"}]}", "\"uri\" and \"name\""},
        {"{\"content\":[{\"type\":\"resource_link\",\"uri\":\"u\",\"name\":\"n\",\"size\":\"1\"}]}",
         "wrong type"},
        {"{\"content\":[{\"type\":\"resource\",\"resource\":{\"uri\":\"u\"}}]}",
         "one of \"text\" and \"blob\""},
        {"{\"content\":[{\"type\":\"resource\",\"resource\":{\"text\":\"t\"}}]}", "\"uri\""},
        {"{\"content\":[{\"type\":\"resource\",\"resource\":{\"uri\":\"u\",\"blob\":\"A\"}}]}",
         "base64"},
        {"{\"content\":[{\"type\":\"text\",\"text\":\"a\",\"annotations\":{\"priority\":2}}]}",
         "\"annotations\""},
        {"{\"content\":[{\"type\":\"text\",\"text\":\"a\",\"annotations\":{\"audience\":"
         "[\"model\"]}}]}",
         "\"annotations\""},
        {"{\"content\":[{\"type\":\"text\",\"text\":\"a\",\"_meta\":[]}]}", "\"_meta\""},
        {"{\"content\":[],\"isError\":\"no\"}", "\"isError\" must be a boolean"},
        {"{\"content\":[],\"structuredContent\":[]}", "\"structuredContent\" must be an object"},
        {"{\"content\":[],\"_meta\":1}", "\"_meta\" must be an object"},
        {"{\"content\":[],\"content\":[]}", "must be JSON"},
        /* A result type, when given, is one a client reads as a tool's answer. */
        {"{\"content\":[],\"resultType\":\"task\"}", "\"complete\" or \"input_required\""},
        {"{\"content\":[],\"resultType\":1}", "\"complete\" or \"input_required\""},
        {"{\"resultType\":\"complete\"}", "needs a \"content\" array"},
        {"{\"resultType\":\"input_required\"}", "\"inputRequests\" object"},
        {"{\"resultType\":\"input_required\",\"inputRequests\":{}}", "at least one request"},
        {"{\"resultType\":\"input_required\",\"inputRequests\":{\"a\":{}}}",
         "inputRequests[\"a\"] must be an object with a string \"method\""},
        {"{\"resultType\":\"input_required\",\"inputRequests\":{\"a\":{\"method\":\"m\","
         "\"params\":[]}}}",
         "inputRequests[\"a\"]"},
        {"{\"resultType\":\"input_required\",\"inputRequests\":{\"a\":{\"method\":\"m\"}},"
         "\"requestState\":{}}",
         "\"requestState\" must be a string"},
        {"{\"resultType\":\"input_required\",\"inputRequests\":{\"a\":{\"method\":\"m\"}},"
         "\"_meta\":1}",
         "\"_meta\" must be an object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char reason[256] = "";
        assert_int_equal(check(bad[i].text, NULL, reason, sizeof reason), -1);
        if (!strstr(reason, bad[i].reason))
            print_error("%s: %s\n", bad[i].text, reason);
        assert_non_null(strstr(reason, bad[i].reason));
    }
}

/* The 2026-07-28 revision's question to the client passes whole, with or without its state. */
static void test_input_required_results_pass(void **state)
{
    (void)state;
    static const char *const good[] = {
        "{\"resultType\":\"input_required\",\"inputRequests\":{\"name\":{\"method\":"
        "\"elicitation/create\",\"params\":{\"message\":\"Name?\"}}}}",
        "{\"resultType\":\"input_required\",\"inputRequests\":{\"r\":{\"method\":\"roots/list\"}},"
        "\"requestState\":\"s\",\"_meta\":{}}",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char reason[256] = "";
        if (check(good[i], NULL, reason, sizeof reason) != 0)
            fail_msg("%s: %s", good[i], reason);
    }
}

static void test_output_schema_checks(void **state)
{
    (void)state;
    static const char schema[] =
        "{\"type\":\"object\",\"required\":[\"n\"],\"properties\":{\"n\":{\"type\":\"integer\"},"
        "\"s\":{\"type\":[\"string\",\"null\"]},\"deep\":{\"type\":\"object\","
        "\"properties\":{\"list\":{\"items\":{\"minimum\":0}}}},\"any\":{}}}";
    json_schema *compiled = compiled_output(schema);
    char reason[256];
    /* A complete result with an output schema needs structuredContent, unless it is an error. */
    assert_int_equal(check("{\"content\":[]}", schema, reason, sizeof reason), -1);
    assert_non_null(strstr(reason, "no \"structuredContent\""));
    assert_int_equal(check("{\"content\":[],\"isError\":true}", schema, reason, sizeof reason), 0);
    assert_int_equal(check("{\"content\":[],\"structuredContent\":{\"n\":1,\"s\":null,\"deep\":{},"
                           "\"any\":[]}}",
                           schema, reason, sizeof reason),
                     0);
    static const char *const plain_good[] = {"{\"n\":-3}", " {\"n\":2,\"s\":\"x\"}",
                                             "{\"n\":1,\"other\":true}"};
    for (size_t i = 0; i < sizeof plain_good / sizeof plain_good[0]; i++)
        assert_int_equal(mcp_tool_check_output(plain_good[i], strlen(plain_good[i]), compiled,
                                               reason, sizeof reason),
                         0);
    assert_int_equal(mcp_tool_check_output("[1]", 3, compiled, reason, sizeof reason), -1);
    assert_non_null(strstr(reason, "is not an object"));
    /* Checked in every build, to any depth: the pointer, the keyword, what it expects. */
    static const struct {
        const char *text, *reason;
    } bad[] = {
        {"{}", "at \"\": \"required\" expects a member \"n\""},
        {"{\"n\":1.5}", "at \"/n\": \"type\" expects \"integer\""},
        {"{\"n\":1,\"s\":3}", "at \"/s\": \"type\" expects [\"string\",\"null\"]"},
        {"{\"n\":1,\"deep\":[]}", "at \"/deep\": \"type\" expects \"object\""},
        {"{\"n\":1,\"deep\":{\"list\":[0,-1]}}",
         "at \"/deep/list/1\": \"minimum\" expects a number >= 0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(mcp_tool_check_output(bad[i].text, strlen(bad[i].text), compiled, reason,
                                               sizeof reason),
                         -1);
        if (!strstr(reason, bad[i].reason))
            print_error("%s: %s\n", bad[i].text, reason);
        assert_non_null(strstr(reason, bad[i].reason));
    }
    schema_free(compiled);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refusal_of_descriptor_members),
        cmocka_unit_test(test_complete_results_of_every_kind_pass),
        cmocka_unit_test(test_complete_results_refused_say_why),
        cmocka_unit_test(test_input_required_results_pass),
        cmocka_unit_test(test_output_schema_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
