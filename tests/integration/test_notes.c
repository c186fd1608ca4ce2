/* SPDX-License-Identifier: MIT */
/*
 * The bundled notes plugin over the real binary: its tool, resources, template, prompt and
 * completions as an MCP client reaches them, its log lines and resource updates, what it
 * refuses, and in the stateless revision a resource read and log lines a request asks for.
 */
#include "run_session.h"

#include <jansson.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define STATELESS_META                                                                             \
    "\"_meta\":{\"io.modelcontextprotocol/"                                                        \
    "protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}"

/* One worker: the calls of a session run in the order sent, so a note added is there for the
 * read after it. */
static char *notes_config(void)
{
    return run_format("[rpcd]\nworkers = 1\n[plugin notes]\npath = %s\n",
                      run_env("RPCD_PLUGIN_NOTES"));
}

/* The index of the first message with this method at or after from, or s->count. */
static size_t find_method(const run_session *s, size_t from, const char *method)
{
    for (size_t i = from; i < s->count; i++) {
        const char *name = json_string_value(json_object_get(s->messages[i], "method"));
        if (name && strcmp(name, method) == 0)
            return i;
    }
    return s->count;
}

/* The index of the response with this id. */
static size_t find_response(const run_session *s, json_int_t id)
{
    for (size_t i = 0; i < s->count; i++) {
        json_t *value = json_object_get(s->messages[i], "id");
        if (json_is_integer(value) && json_integer_value(value) == id)
            return i;
    }
    fail_msg("no response %lld", (long long)id);
    return s->count;
}

/* What an MCP client of the handshake era sees of the plugin, seeded notes included. */
static void test_mcp_surface(void **state)
{
    run_fixture *f = *state;
    char *config = notes_config();
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
        "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/list\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/templates/list\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/read\",\"params\":{\"uri\":"
        "\"notes://index\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\",\"params\":{\"uri\":"
        "\"notes://note/shopping\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/read\",\"params\":{\"uri\":"
        "\"notes://note/nothing\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"prompts/get\",\"params\":{\"name\":"
        "\"summarize\",\"arguments\":{\"title\":\"welcome\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"prompts/get\",\"params\":{\"name\":"
        "\"summarize\",\"arguments\":{\"title\":\"nothing\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"completion/complete\",\"params\":{\"ref\":{"
        "\"type\":\"ref/prompt\",\"name\":\"summarize\"},\"argument\":{\"name\":\"title\","
        "\"value\":\"s\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"completion/complete\",\"params\":{\"ref\":{"
        "\"type\":\"ref/resource\",\"uri\":\"notes://note/{title}\"},\"argument\":{\"name\":"
        "\"title\",\"value\":\"\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"notes_add\",\"arguments\":{\"title\":\"a/b\",\"text\":\"x\"}}}\n";
    run_session s;
    /* An MCP session: its end of input cancels calls in flight, so input stays open
     * until each request is answered. */
    static const json_int_t answered[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    run_rpcd_until(f, config, input, answered, 11, &s);
    json_t *capabilities =
        json_object_get(json_object_get(run_response(&s, 1), "result"), "capabilities");
    assert_non_null(json_object_get(capabilities, "resources"));
    assert_non_null(json_object_get(capabilities, "prompts"));
    assert_non_null(json_object_get(capabilities, "completions"));
    run_assert_json(json_object_get(run_response(&s, 2), "result"),
                    "{\"resources\":[{\"uri\":\"notes://index\",\"name\":\"index\",\"title\":"
                    "\"Notes\",\"description\":\"The titles of all notes, one a line.\","
                    "\"mimeType\":\"text/plain\"}]}");
    run_assert_json(json_object_get(run_response(&s, 3), "result"),
                    "{\"resourceTemplates\":[{\"uriTemplate\":\"notes://note/{title}\",\"name\":"
                    "\"note\",\"title\":\"Note\",\"description\":\"The text of one note.\","
                    "\"mimeType\":\"text/plain\"}]}");
    run_assert_json(json_object_get(run_response(&s, 4), "result"),
                    "{\"contents\":[{\"uri\":\"notes://index\",\"mimeType\":\"text/plain\","
                    "\"text\":\"welcome\\nshopping\\n\"}]}");
    run_assert_json(json_object_get(run_response(&s, 5), "result"),
                    "{\"contents\":[{\"uri\":\"notes://note/shopping\",\"mimeType\":"
                    "\"text/plain\",\"text\":\"milk, eggs, bread\"}]}");
    run_assert_json(json_object_get(run_response(&s, 6), "error"),
                    "{\"code\":-32002,\"message\":\"Resource not found\",\"data\":{\"uri\":"
                    "\"notes://note/nothing\"}}");
    run_assert_json(
        json_object_get(run_response(&s, 7), "result"),
        "{\"description\":\"Summarize a note\",\"messages\":[{\"role\":\"user\",\"content\":{"
        "\"type\":\"text\",\"text\":\"Summarize this note in one sentence.\"}},{\"role\":"
        "\"user\",\"content\":{\"type\":\"resource\",\"resource\":{\"uri\":"
        "\"notes://note/welcome\",\"mimeType\":\"text/plain\",\"text\":\"Notes live in rpcd's "
        "memory until it exits.\"}}}]}");
    json_t *error = json_object_get(run_response(&s, 8), "error");
    assert_int_equal(json_integer_value(json_object_get(error, "code")), -32602);
    run_assert_json(json_object_get(json_object_get(run_response(&s, 9), "result"), "completion"),
                    "{\"values\":[\"shopping\"],\"total\":1,\"hasMore\":false}");
    run_assert_json(json_object_get(json_object_get(json_object_get(run_response(&s, 10), "result"),
                                                    "completion"),
                                    "values"),
                    "[\"welcome\",\"shopping\"]");
    /* A title that would not stay one URI segment is a tool error. */
    json_t *refused = json_object_get(run_response(&s, 11), "result");
    assert_true(json_is_true(json_object_get(refused, "isError")));
    run_session_free(&s);
    free(config);
}

/*
 * A note added: its log line reaches the client that asked for info, its URI is updated for the
 * client subscribed to it (not the index's, to which it did not subscribe), both before the
 * result, and the note reads back.
 */
static void test_add_logs_and_updates(void **state)
{
    run_fixture *f = *state;
    char *config = notes_config();
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
        "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"logging/setLevel\",\"params\":{\"level\":"
        "\"info\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/subscribe\",\"params\":{\"uri\":"
        "\"notes://note/todo\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"notes_add\",\"arguments\":{\"title\":\"todo\",\"text\":\"write tests\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/read\",\"params\":{\"uri\":"
        "\"notes://note/todo\"}}\n";
    run_session s;
    /* An MCP session: its end of input cancels calls in flight, so input stays open
     * until each request is answered. */
    static const json_int_t answered[] = {1, 3, 4, 5, 6};
    run_rpcd_until(f, config, input, answered, 5, &s);
    size_t log = find_method(&s, 0, "notifications/message");
    assert_true(log > find_response(&s, 3) && log < find_response(&s, 5));
    run_assert_json(json_object_get(s.messages[log], "params"),
                    "{\"level\":\"info\",\"logger\":\"notes\",\"data\":\"note todo saved (11 "
                    "bytes)\"}");
    assert_int_equal(find_method(&s, log + 1, "notifications/message"), s.count);
    size_t updated = find_method(&s, 0, "notifications/resources/updated");
    assert_true(updated < find_response(&s, 5));
    run_assert_json(json_object_get(s.messages[updated], "params"),
                    "{\"uri\":\"notes://note/todo\"}");
    /* notes://index changed too, but nobody subscribed to it. */
    assert_int_equal(find_method(&s, updated + 1, "notifications/resources/updated"), s.count);
    run_assert_json(json_object_get(run_response(&s, 5), "result"),
                    "{\"content\":[{\"type\":\"text\",\"text\":\"Saved note todo.\"},{\"type\":"
                    "\"resource_link\",\"uri\":\"notes://note/todo\",\"name\":\"todo\","
                    "\"mimeType\":\"text/plain\"}]}");
    assert_string_equal(
        json_string_value(json_object_get(
            json_array_get(
                json_object_get(json_object_get(run_response(&s, 6), "result"), "contents"), 0),
            "text")),
        "write tests");
    run_session_free(&s);
    free(config);
}

/*
 * A resource the tool policy hides is not there for the client (rpcd.conf(5), TOOL POLICY): a
 * subscription to its URI hears none of its updates, while one the policy serves does; in
 * process and isolated alike.
 */
static void test_hidden_resource_sends_no_update(void **state)
{
    run_fixture *f = *state;
    static const char *const denials[] = {"", "[mcp]\ntools_deny = notes_index\n"};
    static const char *const isolations[] = {"none", "process"};
    for (size_t d = 0; d < 4; d++) {
        char *config =
            run_format("[rpcd]\nworkers = 1\nisolation = %s\n%s[plugin notes]\npath = %s\n",
                       isolations[d / 2], denials[d % 2], run_env("RPCD_PLUGIN_NOTES"));
        static const char input[] =
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
            "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":"
            "\"t\",\"version\":\"1\"}}}\n"
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/subscribe\",\"params\":{"
            "\"uri\":\"notes://index\"}}\n"
            "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/subscribe\",\"params\":{"
            "\"uri\":\"notes://note/todo\"}}\n"
            "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":"
            "\"notes_add\",\"arguments\":{\"title\":\"todo\",\"text\":\"x\"}}}\n";
        run_session s;
        static const json_int_t answered[] = {1, 3, 4, 5};
        run_rpcd_until(f, config, input, answered, 4, &s);
        size_t note = 0, index = 0;
        for (size_t i = 0; i < s.count; i++) {
            const char *name = json_string_value(json_object_get(s.messages[i], "method"));
            if (!name || strcmp(name, "notifications/resources/updated") != 0)
                continue;
            const char *uri =
                json_string_value(json_object_get(json_object_get(s.messages[i], "params"), "uri"));
            note += uri && strcmp(uri, "notes://note/todo") == 0;
            index += uri && strcmp(uri, "notes://index") == 0;
        }
        assert_int_equal(note, 1);
        assert_int_equal(index, d % 2 == 0 ? 1 : 0);
        run_session_free(&s);
        free(config);
    }
}

/*
 * In the stateless revision a resource read has the revision's resultType, ttlMs and
 * cacheScope, which its clients require; a resource can change at any time (a note added), so
 * it is not to be cached: ttlMs 0.
 */
static void test_stateless_read(void **state)
{
    run_fixture *f = *state;
    char *config = notes_config();
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":"
        "\"notes://note/shopping\"," STATELESS_META "}}\n";
    run_session s;
    /* An MCP session: its end of input cancels calls in flight, so input stays open
     * until each request is answered. */
    static const json_int_t answered[] = {1};
    run_rpcd_until(f, config, input, answered, 1, &s);
    json_t *result = json_object_get(run_response(&s, 1), "result");
    run_assert_json(json_object_get(result, "contents"),
                    "[{\"uri\":\"notes://note/shopping\",\"mimeType\":\"text/plain\",\"text\":"
                    "\"milk, eggs, bread\"}]");
    assert_string_equal(json_string_value(json_object_get(result, "resultType")), "complete");
    run_assert_json(json_object_get(result, "ttlMs"), "0");
    assert_string_equal(json_string_value(json_object_get(result, "cacheScope")), "private");
    run_session_free(&s);
    free(config);
}

/*
 * In the stateless revision a request asks for the log lines of its handler with its _meta: the
 * line comes before the response at the level asked for (info), and not for a coarser level,
 * nor for a request without the revision or of a handshake-era one (which asks with
 * logging/setLevel).
 */
static void test_stateless_log_level(void **state)
{
    run_fixture *f = *state;
    char *config = notes_config();
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"notes_add\",\"arguments\":{\"title\":\"heard\",\"text\":\"x\"},\"_meta\":{"
        "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/"
        "clientCapabilities\":{},"
        "\"io.modelcontextprotocol/logLevel\":\"info\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"notes_add\",\"arguments\":{\"title\":\"coarse\",\"text\":\"x\"},\"_meta\":{"
        "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/"
        "clientCapabilities\":{},"
        "\"io.modelcontextprotocol/logLevel\":\"warning\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"notes_add\",\"arguments\":{\"title\":\"older\",\"text\":\"x\"},\"_meta\":{"
        "\"io.modelcontextprotocol/logLevel\":\"debug\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"notes_add\",\"arguments\":{\"title\":\"handshake\",\"text\":\"x\"},\"_meta\":{"
        "\"io.modelcontextprotocol/protocolVersion\":\"2025-11-25\","
        "\"io.modelcontextprotocol/logLevel\":\"debug\"}}}\n";
    run_session s;
    /* An MCP session: its end of input cancels calls in flight, so input stays open
     * until each request is answered. */
    static const json_int_t answered[] = {1, 2, 3, 4};
    run_rpcd_until(f, config, input, answered, 4, &s);
    size_t log = find_method(&s, 0, "notifications/message");
    assert_true(log < find_response(&s, 1));
    run_assert_json(json_object_get(s.messages[log], "params"),
                    "{\"level\":\"info\",\"logger\":\"notes\",\"data\":\"note heard saved (1 "
                    "bytes)\"}");
    assert_int_equal(find_method(&s, log + 1, "notifications/message"), s.count);
    run_assert_json(json_object_get(json_object_get(run_response(&s, 2), "result"), "resultType"),
                    "\"complete\"");
    assert_non_null(json_object_get(run_response(&s, 3), "result"));
    assert_non_null(json_object_get(run_response(&s, 4), "result"));
    run_session_free(&s);
    free(config);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_mcp_surface, run_fixture_setup, run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_add_logs_and_updates, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_hidden_resource_sends_no_update, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_stateless_read, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_stateless_log_level, run_fixture_setup,
                                        run_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
