/* SPDX-License-Identifier: MIT */
/*
 * What MCP lets a tool say (ABI 1.4), over the real binary: the descriptor's title,
 * annotations, output schema and icons in tools/list, complete results of every content kind,
 * results checked against output schemas, refused results, and the request's _meta read back.
 */
#include "run_session.h"

#include <jansson.h>

#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* True when a listed tool name is name, or name with '.' written as '_' (portable names). */
static bool same_tool(const char *listed, const char *name)
{
    for (; *listed && *name; listed++, name++)
        if (*listed != *name && !(*name == '.' && *listed == '_'))
            return false;
    return *listed == *name;
}

/* The entry of tools/list (all on one page here) for tool name. */
static json_t *listed_tool(const run_session *s, json_int_t id, const char *name)
{
    json_t *tools = json_object_get(json_object_get(run_response(s, id), "result"), "tools");
    size_t i;
    json_t *tool;
    json_array_foreach(tools, i, tool)
    {
        if (same_tool(json_string_value(json_object_get(tool, "name")), name))
            return tool;
    }
    print_error("no tool %s in %s\n", name, s->run.out);
    fail();
    return NULL;
}

/* With RPCD_CASES_ISOLATION set (tool_results_isolated), both plugins run in host processes. */
static char *tool_config(void)
{
    const char *isolation = getenv("RPCD_CASES_ISOLATION");
    return run_format("[rpcd]\nworkers = 2\nisolation = %s\n[plugin tool_result]\npath = %s\n"
                      "[plugin abi13]\npath = %s\n",
                      isolation ? isolation : "none", run_env("RPCD_FIXTURE_TOOL_RESULT"),
                      run_env("RPCD_FIXTURE_ABI_1_3"));
}

/*
 * tools/list shows a 1.4 descriptor's title, annotations, output schema (given over several
 * lines, listed on one) and icons under MCP's names; a tool without them, and the tools of a
 * plugin built against the released 1.3 header (whose shorter descriptor the daemon must not
 * read past), have none of those members.
 */
static void test_tools_list_shows_descriptor_members(void **state)
{
    run_fixture *f = *state;
    char *config = tool_config();
    run_session s;
    run_rpcd(f, config, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n", &s);
    json_t *weather = listed_tool(&s, 1, "weather");
    run_assert_json(json_object_get(weather, "title"), "\"Get weather\"");
    run_assert_json(json_object_get(weather, "annotations"),
                    "{\"destructiveHint\":false,\"idempotentHint\":true,\"openWorldHint\":true,"
                    "\"readOnlyHint\":true}");
    run_assert_json(
        json_object_get(weather, "outputSchema"),
        "{\"properties\":{\"conditions\":{\"type\":\"string\"},\"temperature\":{\"type\":"
        "\"number\"}},\"required\":[\"temperature\",\"conditions\"],\"type\":\"object\"}");
    run_assert_json(json_object_get(weather, "icons"),
                    "[{\"mimeType\":\"image/png\",\"sizes\":[\"48x48\"],\"src\":"
                    "\"https://example.org/sun.png\",\"theme\":\"light\"}]");
    static const char *const plain_tools[] = {"every_kind", "abi13.one", "abi13.on_reader"};
    for (size_t i = 0; i < sizeof plain_tools / sizeof plain_tools[0]; i++) {
        json_t *tool = listed_tool(&s, 1, plain_tools[i]);
        assert_int_equal(json_object_size(tool), 3); /* name, description, inputSchema */
        assert_non_null(json_object_get(tool, "inputSchema"));
    }
    run_session_free(&s);
    free(config);
}

/*
 * Complete results go out as the handler gave them: structuredContent, isError and the result's
 * _meta kept, and every content kind (text with annotations, image, audio, resource link,
 * embedded text and blob resources) passed through; called by its own name, the method's result
 * is the same object.
 */
static void test_complete_results_pass_through(void **state)
{
    run_fixture *f = *state;
    char *config = tool_config();
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"weather\",\"arguments\":{\"city\":\"Oslo\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"every_kind\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"every_kind\"}\n";
    run_session s;
    run_rpcd(f, config, input, &s);
    run_assert_json(
        json_object_get(run_response(&s, 1), "result"),
        "{\"_meta\":{\"example.org/source\":\"fixture\"},\"content\":[{\"text\":\"21.5 C, "
        "sunny\",\"type\":\"text\"}],\"isError\":false,\"structuredContent\":{"
        "\"conditions\":\"sunny\",\"temperature\":21.5}}");
    static const char every[] =
        "{\"content\":["
        "{\"annotations\":{\"audience\":[\"user\"],\"priority\":0.5},\"text\":\"a picture\","
        "\"type\":\"text\"},"
        "{\"data\":\"iVBORw0KGgo=\",\"mimeType\":\"image/png\",\"type\":\"image\"},"
        "{\"data\":\"UklGRg==\",\"mimeType\":\"audio/wav\",\"type\":\"audio\"},"
        "{\"mimeType\":\"text/plain\",\"name\":\"a.txt\",\"type\":\"resource_link\","
        "\"uri\":\"file:///tmp/a.txt\"},"
        "{\"resource\":{\"text\":\"b\",\"uri\":\"file:///tmp/b.txt\"},\"type\":\"resource\"},"
        "{\"resource\":{\"blob\":\"AAE=\",\"uri\":\"file:///tmp/c.bin\"},\"type\":\"resource\"}"
        "],\"isError\":true}";
    run_assert_json(json_object_get(run_response(&s, 2), "result"), every);
    run_assert_json(json_object_get(run_response(&s, 3), "result"), every);
    run_session_free(&s);
    free(config);
}

/*
 * In the stateless revision a complete result is the same object with the revision's
 * resultType, which its clients require of every result.
 */
static void test_complete_results_in_stateless_revision(void **state)
{
    run_fixture *f = *state;
    char *config = tool_config();
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"weather\",\"arguments\":{\"city\":\"Oslo\"},\"_meta\":{"
        "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/"
        "clientCapabilities\":{}}}}\n";
    run_session s;
    run_rpcd(f, config, input, &s);
    run_assert_json(
        json_object_get(run_response(&s, 1), "result"),
        "{\"_meta\":{\"example.org/source\":\"fixture\"},\"content\":[{\"text\":\"21.5 C, "
        "sunny\",\"type\":\"text\"}],\"isError\":false,\"resultType\":\"complete\","
        "\"structuredContent\":{\"conditions\":\"sunny\",\"temperature\":21.5}}");
    run_session_free(&s);
    free(config);
}

/*
 * A complete result that is not MCP's (an image block without mimeType) is refused: the plugin
 * gets RPCD_ERR_INVALID_ARGUMENT (-7), the log says why, and the client gets -32603 with the
 * reason, in tools/call as in a plain call, never the malformed result.
 */
static void test_invalid_complete_result_is_internal_error(void **state)
{
    run_fixture *f = *state;
    char *config = tool_config();
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"bad_result\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"bad_result\"}\n";
    run_session s;
    run_rpcd(f, config, input, &s);
    static const char reason[] = "content[0] (image or audio) needs a string \"mimeType\"";
    for (json_int_t id = 1; id <= 2; id++) {
        json_t *error = json_object_get(run_response(&s, id), "error");
        assert_null(json_object_get(run_response(&s, id), "result"));
        run_assert_json(json_object_get(error, "code"), "-32603");
        assert_string_equal(
            json_string_value(json_object_get(json_object_get(error, "data"), "detail")), reason);
    }
    assert_non_null(strstr(s.run.err, "call_tool_result returned -7"));
    char *warning =
        run_format("tool_result: bad_result gave a result rpcd cannot send: %s", reason);
    if (!strstr(s.run.err, warning))
        print_error("not in stderr: %s\n%s\n", warning, s.run.err);
    assert_non_null(strstr(s.run.err, warning));
    free(warning);
    run_session_free(&s);
    free(config);
}

/*
 * A plain result of a tool with an output schema becomes its structuredContent; one that does
 * not fit the schema (in every build, with where and which keyword) or is no object at all fails
 * with -32603.
 */
static void test_results_checked_against_output_schema(void **state)
{
    run_fixture *f = *state;
    char *config = tool_config();
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"counted\",\"arguments\":{\"n\":3}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"counted\",\"arguments\":{\"n\":\"three\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"counted\",\"arguments\":{}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"counted\",\"params\":[1]}\n";
    run_session s;
    run_rpcd(f, config, input, &s);
    json_t *result = json_object_get(run_response(&s, 1), "result");
    run_assert_json(json_object_get(result, "structuredContent"), "{\"n\":3}");
    run_assert_json(json_object_get(result, "isError"), "false");
    run_assert_json(json_object_get(json_object_get(run_response(&s, 2), "error"), "code"),
                    "-32603");
    run_assert_json(
        json_object_get(json_object_get(json_object_get(run_response(&s, 3), "error"), "data"),
                        "detail"),
        "\"the structured result fails the output schema at \\\"\\\": \\\"required\\\" expects a "
        "member \\\"n\\\"\"");
    run_assert_json(
        json_object_get(json_object_get(json_object_get(run_response(&s, 4), "error"), "data"),
                        "detail"),
        "\"the method has an output schema, and its result is not an object\"");
    run_session_free(&s);
    free(config);
}

/*
 * call_meta hands back the request's _meta as the client sent it: the tools/call's, beside name
 * and arguments, and a plain call's params._meta; a member by name with its JSON quotes; length
 * 0 for a member or a _meta that is not there; a raw CR the client put
 * between tokens dropped; -7 with the length needed for a buffer too small; a member named
 * twice refused, in process and isolated alike.
 */
static void test_call_meta_reads_the_request(void **state)
{
    run_fixture *f = *state;
    char *config = tool_config();
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"meta\","
        "\"_meta\":{\"traceparent\":\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\","
        "\"progressToken\":7,\"example.org/x\":[1, {\"y\":null}]},\"arguments\":{}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"meta\",\"params\":{\"_meta\":"
        "{\"baggage\":\r\"k=v\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"meta\",\"params\":[1]}\n"
        /* A member named twice has no one value: call_meta refuses it (the handler then fails). */
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"meta\",\"params\":{\"_meta\":"
        "{\"traceparent\":\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\","
        "\"traceparent\":\"b\"}}}\n";
    run_session s;
    run_rpcd(f, config, input, &s);
    run_assert_json(json_object_get(run_response(&s, 4), "error"),
                    "{\"code\":-32603,\"message\":\"Internal error\",\"data\":{\"exception\":"
                    "\"RPCD_ERR_INTERNAL\",\"plugin\":\"tool_result\",\"method\":\"meta\"}}");
    static const char meta[] =
        "{\"traceparent\":\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\","
        "\"progressToken\":7,\"example.org/x\":[1, {\"y\":null}]}";
    char *first =
        run_format("{\"absent\":0,\"length\":%zu,\"meta\":%s,\"needed\":%zu,\"small\":-7,"
                   "\"traceparent\":\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-"
                   "01\"}",
                   strlen(meta), meta, strlen(meta));
    run_assert_json(
        json_object_get(json_object_get(run_response(&s, 1), "result"), "structuredContent"),
        first);
    run_assert_json(json_object_get(run_response(&s, 2), "result"),
                    "{\"absent\":0,\"length\":17,\"meta\":{\"baggage\":\"k=v\"},\"needed\":17,"
                    "\"small\":-7,\"traceparent\":null}");
    run_assert_json(json_object_get(run_response(&s, 3), "result"),
                    "{\"absent\":0,\"length\":0,\"meta\":null,\"needed\":0,\"small\":0,"
                    "\"traceparent\":null}");
    free(first);
    run_session_free(&s);
    free(config);
}

/*
 * register_method refuses descriptors whose annotations, output schema, icons or title are not
 * what MCP allows (the fixture's init fails unless each is refused), saying why in the log.
 */
static void test_bad_descriptor_members_refused(void **state)
{
    run_fixture *f = *state;
    char *config = run_format("[plugin bad_tool]\npath = %s\n", run_env("RPCD_FIXTURE_BAD_TOOL"));
    run_session s;
    run_rpcd(f, config, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n", &s);
    static const char *const reasons[] = {
        "its annotations are not a JSON object of MCP's tool annotations",
        "its output_schema is not a JSON Schema object with \"type\": \"object\"",
        "its icons are not a JSON array of MCP icons",
        "its title is not UTF-8",
    };
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++) {
        if (!strstr(s.run.err, reasons[i]))
            print_error("not in stderr: %s\n%s\n", reasons[i], s.run.err);
        assert_non_null(strstr(s.run.err, reasons[i]));
    }
    run_session_free(&s);
    free(config);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tools_list_shows_descriptor_members, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_complete_results_pass_through, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_complete_results_in_stateless_revision,
                                        run_fixture_setup, run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_invalid_complete_result_is_internal_error,
                                        run_fixture_setup, run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_results_checked_against_output_schema,
                                        run_fixture_setup, run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_call_meta_reads_the_request, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_bad_descriptor_members_refused, run_fixture_setup,
                                        run_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
