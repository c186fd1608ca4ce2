/* SPDX-License-Identifier: MIT */
/*
 * The behaviour every example plugin of bindings/ shows, run against the real rpcd: a plain call,
 * a failure of the language's own kind (panic, exception) turned into an error, progress then
 * cancellation, deferred completion from the language's own threads, the plain method as an MCP
 * tool with everything its descriptor declares (input and output schemas, title, annotations,
 * icons), an MCP prompt and an MCP resource with its updates (ABI 1.5), the request's _meta and
 * a complete tool result, asking the client mid-call (ABI 1.6, asking.c), a tool that runs as an
 * MCP task (ABI 1.7, tasks.c), and an end of input while deferred calls run; each with the
 * plugin in rpcd's process, then in a host process of its own (isolation = process). Usage:
 * behaviour PLUGIN.so PREFIX NAME (methods PREFIX.hello, .fail, .count, .later, .meta, .notes,
 * .touch, .greet, .confirm; NAME is the plugin's name in its log lines).
 */
#include "behaviour.h"
#include "harness.h"

#include <jansson.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

const char *prefix;
static const char *plugin_path, *plugin_name;

__attribute__((format(printf, 1, 2))) static char *format(const char *pattern, ...)
{
    va_list args;
    va_start(args, pattern);
    char *text;
    int n = vasprintf(&text, pattern, args);
    va_end(args);
    assert_true(n >= 0);
    return text;
}

/* A line of the plugin's section, "" or "isolation = process\n", for the group that runs. */
static const char *plugin_extra = "";

/* Starts rpcd with the plugin, and more keys of its [rpcd] section (lines, or ""). */
static int start_session(void **state, const char *rpcd_keys)
{
    session *s = calloc(1, sizeof *s);
    if (!s || !(s->dir = harness_temp_dir()))
        return -1;
    char *config = format("[rpcd]\nworkers = 4\n%s[plugin %s]\npath = %s\n%s", rpcd_keys,
                          plugin_name, plugin_path, plugin_extra);
    char *path = harness_write_file(s->dir, "rpcd.conf", config);
    free(config);
    if (!path)
        return -1;
    harness_argv args = harness_rpcd_argv(path);
    s->rpcd = args.argv[0] ? harness_start(args.argv) : NULL;
    free(path);
    if (!s->rpcd)
        return -1;
    *state = s;
    return 0;
}

static int session_setup(void **state)
{
    return start_session(state, "");
}

int task_session_setup(void **state)
{
    return start_session(state, "task_after_ms = 0\n");
}

static int session_teardown(void **state)
{
    session *s = *state;
    harness_free(s->rpcd);
    harness_remove_dir(s->dir);
    free(s->dir);
    free(s);
    return 0;
}

__attribute__((format(printf, 2, 3))) static void send(session *s, const char *pattern, ...)
{
    va_list args;
    va_start(args, pattern);
    char *text;
    assert_true(vasprintf(&text, pattern, args) >= 0);
    va_end(args);
    assert_int_equal(harness_write_text(s->rpcd, text, HARNESS_TIMEOUT_MS), HARNESS_OK);
    free(text);
}

static json_t *next_message(session *s)
{
    char *line = NULL;
    int status = harness_read_line(s->rpcd, HARNESS_TIMEOUT_MS, &line, NULL, NULL);
    if (status != HARNESS_OK)
        print_error("no message (%d); stderr:\n%s\n", status, harness_stderr(s->rpcd));
    assert_int_equal(status, HARNESS_OK);
    json_error_t error;
    json_t *message = json_loads(line, 0, &error);
    if (!message)
        print_error("not JSON: %s\n", line);
    assert_non_null(message);
    free(line);
    return message;
}

/* The next message that is the response to id, skipping notifications. */
json_t *response_to(session *s, json_int_t id)
{
    for (;;) {
        json_t *message = next_message(s);
        json_t *member = json_object_get(message, "id");
        if (json_is_integer(member) && json_integer_value(member) == id)
            return message;
        if (member) {
            char *text = json_dumps(message, 0);
            print_error("expected the response to %lld, got %s\n", (long long)id, text);
            free(text);
            fail();
        }
        json_decref(message);
    }
}

void assert_member(const json_t *value, const char *path, const char *expected)
{
    char *text = json_dumps(value, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    assert_non_null(text);
    if (!harness_json_equal(expected, text))
        print_error("%s: expected %s\n     got %s\n", path, expected, text);
    assert_true(harness_json_equal(expected, text));
    free(text);
}

void expect_exit_zero(session *s)
{
    harness_exit status;
    assert_int_equal(harness_wait(s->rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    if (!status.exited || status.code != 0)
        print_error("rpcd: %s\n%s\n", harness_exit_describe(&status), harness_stderr(s->rpcd));
    assert_true(status.exited);
    assert_int_equal(status.code, 0);
}

/* The plugin logs through log_text once loaded: the level and its section's name (the plugin's
 * own here) lead the line. */
static void expect_ready(session *s)
{
    char *line = format("rpcd: info: %s: ready", plugin_name);
    int status = harness_wait_for_stderr(s->rpcd, line, HARNESS_TIMEOUT_MS);
    if (status != HARNESS_OK)
        print_error("not in stderr: %s\n%s\n", line, harness_stderr(s->rpcd));
    assert_int_equal(status, HARNESS_OK);
    free(line);
}

/* PREFIX.hello: a result, its default, and invalid params turned into -32602. */
static void test_plain_call(void **state)
{
    session *s = *state;
    expect_ready(s);
    send(s,
         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s.hello\",\"params\":{\"name\":\"Ada\"}}\n",
         prefix);
    json_t *response = response_to(s, 1);
    assert_member(json_object_get(response, "result"), "result", "{\"greeting\":\"hello, Ada\"}");
    json_decref(response);
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"%s.hello\"}\n", prefix);
    response = response_to(s, 2);
    assert_member(json_object_get(response, "result"), "result", "{\"greeting\":\"hello, world\"}");
    json_decref(response);
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"%s.hello\",\"params\":{\"name\":7}}\n",
         prefix);
    response = response_to(s, 3);
    assert_member(json_object_get(json_object_get(response, "error"), "code"), "code", "-32602");
    json_decref(response);
    harness_close_stdin(s->rpcd);
    expect_exit_zero(s);
}

/* PREFIX.fail panics or throws: -32603 with the message as detail, and rpcd goes on serving. */
static void test_failure_becomes_an_error(void **state)
{
    session *s = *state;
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s.fail\"}\n", prefix);
    json_t *response = response_to(s, 1);
    json_t *error = json_object_get(response, "error");
    assert_member(json_object_get(error, "code"), "code", "-32603");
    const char *detail =
        json_string_value(json_object_get(json_object_get(error, "data"), "detail"));
    if (!detail || !strstr(detail, "deliberate failure"))
        print_error("error.data.detail: %s\n", detail ? detail : "(none)");
    assert_non_null(detail);
    assert_non_null(strstr(detail, "deliberate failure"));
    json_decref(response);
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"%s.hello\"}\n", prefix);
    json_decref(response_to(s, 2));
    harness_close_stdin(s->rpcd);
    expect_exit_zero(s);
}

/* PREFIX.count: progress notifications with the client's token, then $/cancelRequest: -32800. */
static void test_progress_then_cancel(void **state)
{
    session *s = *state;
    send(s,
         "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"%s.count\",\"params\":{\"steps\":100000,"
         "\"delay_ms\":2,\"_meta\":{\"progressToken\":\"t7\"}}}\n",
         prefix);
    for (int seen = 1; seen <= 3; seen++) {
        json_t *message = next_message(s);
        assert_member(json_object_get(message, "method"), "method", "\"notifications/progress\"");
        json_t *params = json_object_get(message, "params");
        assert_member(json_object_get(params, "progressToken"), "token", "\"t7\"");
        assert_int_equal((int)json_number_value(json_object_get(params, "progress")), seen);
        assert_member(json_object_get(params, "total"), "total", "100000");
        json_decref(message);
    }
    send(s, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":7}}\n");
    json_t *response = response_to(s, 7);
    assert_member(json_object_get(json_object_get(response, "error"), "code"), "code", "-32800");
    json_decref(response);
    /* Without a token, no notification: the response comes first. */
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"%s.count\",\"params\":{\"steps\":3}}\n",
         prefix);
    json_t *message = next_message(s);
    assert_member(message, "response", "{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{\"steps\":3}}");
    json_decref(message);
    harness_close_stdin(s->rpcd);
    expect_exit_zero(s);
}

/* PREFIX.later completes from a thread of the plugin, many at once, in any order. */
static void test_deferred_completion(void **state)
{
    session *s = *state;
    enum { CALLS = 16 };
    for (int id = 1; id <= CALLS; id++)
        send(s,
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s.later\",\"params\":{\"delay_ms\":%d}}"
             "\n",
             id, prefix, 5 * (CALLS - id));
    bool seen[CALLS + 1] = {false};
    for (int i = 0; i < CALLS; i++) {
        json_t *message = next_message(s);
        json_int_t id = json_integer_value(json_object_get(message, "id"));
        assert_true(id >= 1 && id <= CALLS && !seen[id]);
        seen[id] = true;
        assert_member(json_object_get(message, "result"), "result", "{\"deferred\":true}");
        json_decref(message);
    }
    harness_close_stdin(s->rpcd);
    expect_exit_zero(s);
}

/*
 * End of input with deferred calls still waiting on the plugin's threads: each is answered,
 * then shutdown joins the threads before rpcd unloads the code, and rpcd exits 0.
 */
static void test_end_of_input_with_deferred_calls(void **state)
{
    session *s = *state;
    for (int id = 1; id <= 8; id++)
        send(s,
             "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s.later\",\"params\":{\"delay_ms\":50}}"
             "\n",
             id, prefix);
    harness_close_stdin(s->rpcd);
    harness_lines lines;
    assert_int_equal(harness_read_all_lines(s->rpcd, HARNESS_TIMEOUT_MS, &lines), HARNESS_OK);
    assert_int_equal(lines.count, 8);
    for (size_t i = 0; i < lines.count; i++)
        assert_non_null(strstr(lines.items[i], "\"result\":{\"deferred\":true}"));
    harness_lines_free(&lines);
    expect_exit_zero(s);
}

/* The MCP handshake in revision, as request 1. */
static void initialize(session *s, const char *revision)
{
    send(s,
         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
         "\"%s\",\"capabilities\":{},\"clientInfo\":{\"name\":\"behaviour\",\"version\":\"1\"}}}\n",
         revision);
    json_t *response = response_to(s, 1);
    assert_non_null(json_object_get(response, "result"));
    json_decref(response);
    send(s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
}

/* Over MCP: the handshake, PREFIX.hello among the tools (as PREFIX_hello, its portable
 * name), and tools/call of it. */
static void test_mcp_tool_call(void **state)
{
    session *s = *state;
    initialize(s, "2025-06-18");
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n");
    json_t *response = response_to(s, 2);
    json_t *tools = json_object_get(json_object_get(response, "result"), "tools");
    char *name = format("%s_hello", prefix);
    bool listed = false;
    size_t index;
    json_t *tool;
    json_array_foreach(tools, index, tool)
    {
        if (json_is_string(json_object_get(tool, "name")) &&
            strcmp(json_string_value(json_object_get(tool, "name")), name) == 0)
            listed = json_is_object(json_object_get(tool, "inputSchema"));
    }
    assert_true(listed);
    json_decref(response);
    send(s,
         "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
         "\"arguments\":{\"name\":\"Ada\"}}}\n",
         name);
    response = response_to(s, 3);
    json_t *result = json_object_get(response, "result");
    assert_member(json_object_get(result, "isError"), "isError", "false");
    assert_member(json_object_get(result, "structuredContent"), "structuredContent",
                  "{\"greeting\":\"hello, Ada\"}");
    json_decref(response);
    free(name);
    harness_close_stdin(s->rpcd);
    expect_exit_zero(s);
}

/* What every example declares for PREFIX.hello (ABI 1.4), as its tools/list entry shows it. */
#define HELLO_INPUT_SCHEMA                                                                         \
    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"description\":"          \
    "\"who to greet\"}}}"
#define HELLO_ANNOTATIONS "{\"readOnlyHint\":true,\"idempotentHint\":true,\"openWorldHint\":false}"
#define HELLO_OUTPUT_SCHEMA                                                                        \
    "{\"type\":\"object\",\"properties\":{\"greeting\":{\"type\":\"string\"}},\"required\":["      \
    "\"greeting\"]}"
#define HELLO_ICONS                                                                                \
    "[{\"src\":\"https://example.org/hello.png\",\"mimeType\":\"image/"                            \
    "png\",\"sizes\":[\"48x48\"]}]"

/* The member of array whose key is the string value, or NULL. */
static json_t *find_by(json_t *array, const char *key, const char *value)
{
    size_t index;
    json_t *item;
    json_array_foreach(array, index, item)
    {
        const char *text = json_string_value(json_object_get(item, key));
        if (text && strcmp(text, value) == 0)
            return item;
    }
    return NULL;
}

/*
 * What the example declares through its binding reaches MCP clients as declared: PREFIX.hello's
 * tools/list entry has the inputSchema, title, annotations, outputSchema and icons the plugin
 * gave (not the {"type":"object"} of a method without a schema); the prompt PREFIX.greet (mcp_role
 * and mcp_descriptor) is in prompts/list with its descriptor, not among the tools, and
 * prompts/get calls its handler.
 */
static void test_mcp_declarations(void **state)
{
    session *s = *state;
    initialize(s, "2025-11-25");
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n");
    json_t *response = response_to(s, 2);
    json_t *tools = json_object_get(json_object_get(response, "result"), "tools");
    char *name = format("%s_hello", prefix);
    json_t *tool = find_by(tools, "name", name);
    free(name);
    if (!tool)
        print_error("%s_hello is not among the tools\n", prefix);
    assert_non_null(tool);
    assert_member(json_object_get(tool, "inputSchema"), "inputSchema", HELLO_INPUT_SCHEMA);
    assert_member(json_object_get(tool, "title"), "title", "\"Say hello\"");
    assert_member(json_object_get(tool, "annotations"), "annotations", HELLO_ANNOTATIONS);
    assert_member(json_object_get(tool, "outputSchema"), "outputSchema", HELLO_OUTPUT_SCHEMA);
    assert_member(json_object_get(tool, "icons"), "icons", HELLO_ICONS);
    /* A prompt and a resource are not tools. */
    char *greet = format("%s_greet", prefix), *notes = format("%s_notes", prefix);
    assert_null(find_by(tools, "name", greet));
    assert_null(find_by(tools, "name", notes));
    free(greet);
    free(notes);
    json_decref(response);

    send(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/list\"}\n");
    response = response_to(s, 3);
    char *prompt_name = format("%s.greet", prefix);
    json_t *prompt = find_by(json_object_get(json_object_get(response, "result"), "prompts"),
                             "name", prompt_name);
    if (!prompt)
        print_error("%s is not among the prompts\n", prompt_name);
    assert_non_null(prompt);
    char *expected = format("{\"name\":\"%s\",\"title\":\"Greeting\",\"description\":\"Asks for a "
                            "greeting.\",\"arguments\":[{\"name\":\"who\",\"description\":\"who to "
                            "greet\",\"required\":true}]}",
                            prompt_name);
    assert_member(prompt, "prompt", expected);
    free(expected);
    json_decref(response);

    send(s,
         "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"prompts/get\",\"params\":{\"name\":\"%s\","
         "\"arguments\":{\"who\":\"Ada\"}}}\n",
         prompt_name);
    response = response_to(s, 4);
    assert_member(json_object_get(json_object_get(response, "result"), "messages"), "messages",
                  "[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"Please greet "
                  "Ada.\"}}]");
    json_decref(response);
    free(prompt_name);
    harness_close_stdin(s->rpcd);
    expect_exit_zero(s);
}

/*
 * ABI 1.5 (PREFIX.notes, a resource at PREFIX://notes, and
 * PREFIX.touch): listed in resources/list, read with resources/read, and a subscriber told of
 * its change by resource_updated before the call that made it is answered.
 */
static void test_resource(void **state)
{
    session *s = *state;
    /* Every method answers plain JSON-RPC whatever its role. */
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"%s.notes\"}\n", prefix);
    json_t *response = response_to(s, 0);
    assert_member(json_object_get(response, "result"), "result", "\"a note\"");
    json_decref(response);
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/list\"}\n");
    response = response_to(s, 1);
    char *uri = format("%s://notes", prefix);
    bool listed = false;
    size_t index;
    json_t *resource;
    json_array_foreach(json_object_get(json_object_get(response, "result"), "resources"), index,
                       resource)
    {
        const char *listed_uri = json_string_value(json_object_get(resource, "uri"));
        listed = listed || (listed_uri && strcmp(listed_uri, uri) == 0);
    }
    json_decref(response);
    if (!listed)
        print_error("%s is not among the resources\n", uri);
    assert_true(listed);
    send(s,
         "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/subscribe\",\"params\":{"
         "\"uri\":\"%s\"}}\n",
         uri);
    json_decref(response_to(s, 2));
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"%s.touch\"}\n", prefix);
    json_t *notification = next_message(s);
    assert_member(json_object_get(notification, "method"), "method",
                  "\"notifications/resources/updated\"");
    char *expected = format("{\"uri\":\"%s\"}", uri);
    assert_member(json_object_get(notification, "params"), "params", expected);
    free(expected);
    json_decref(notification);
    response = response_to(s, 3);
    assert_member(json_object_get(response, "result"), "result", "true");
    json_decref(response);
    send(s,
         "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/read\",\"params\":{"
         "\"uri\":\"%s\"}}\n",
         uri);
    response = response_to(s, 4);
    json_t *content =
        json_array_get(json_object_get(json_object_get(response, "result"), "contents"), 0);
    assert_member(json_object_get(content, "text"), "text", "\"a note\"");
    json_decref(response);
    free(uri);
    harness_close_stdin(s->rpcd);
    expect_exit_zero(s);
}

/*
 * PREFIX.meta reads the request's _meta through the binding (call_meta) and answers with a
 * complete tool result (call_tool_result), which a plain call gets whole.
 */
static void test_meta_and_complete_result(void **state)
{
    session *s = *state;
    /* One at a time: the two calls could be answered in either order. */
    send(s,
         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s.meta\",\"params\":{\"_meta\":{"
         "\"traceparent\":\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\"}}}\n",
         prefix);
    json_t *response = response_to(s, 1);
    assert_member(json_object_get(response, "result"), "result",
                  "{\"content\":[{\"text\":\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-"
                  "01\",\"type\":\"text\"}],\"isError\":false,\"structuredContent\":{\"meta\":{"
                  "\"traceparent\":\"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\"}}}");
    json_decref(response);
    send(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"%s.meta\"}\n", prefix);
    response = response_to(s, 2);
    assert_member(json_object_get(response, "result"), "result",
                  "{\"content\":[{\"text\":\"none\",\"type\":\"text\"}],\"isError\":false,"
                  "\"structuredContent\":{\"meta\":null}}");
    json_decref(response);
    harness_close_stdin(s->rpcd);
    expect_exit_zero(s);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s PLUGIN.so PREFIX NAME\n", argv[0]);
        return 2;
    }
    plugin_path = argv[1];
    prefix = argv[2];
    plugin_name = argv[3];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_plain_call, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_failure_becomes_an_error, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_progress_then_cancel, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_deferred_completion, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_end_of_input_with_deferred_calls, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_mcp_tool_call, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_mcp_declarations, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_resource, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_meta_and_complete_result, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_asking, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_asking_unsupported, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_task, task_session_setup, session_teardown),
    };
    int failed = cmocka_run_group_tests_name(prefix, tests, NULL, NULL);
    /* Again with the plugin in a sandboxed host process of its own, where it must behave the
     * same: its runtime's threads under the host's seccomp filter, what it declares and what it
     * hands over crossing to rpcd over the host's channel. */
    plugin_extra = "isolation = process\n";
    char *isolated = format("%s, isolated", prefix);
    failed += cmocka_run_group_tests_name(isolated, tests, NULL, NULL);
    free(isolated);
    return failed;
}
