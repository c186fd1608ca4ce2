/* SPDX-License-Identifier: MIT */
/*
 * MCP's resources, templates, prompts, completions, subscriptions and logging from a plugin's
 * methods (ABI 1.5), over the real binary: lists and capabilities, results from short forms and
 * whole objects, and every error a client can provoke. With RPCD_CASES_ISOLATION the plugin
 * runs in a host process of its own.
 */
#include "run_session.h"

#include <jansson.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static char *catalog_config(void)
{
    const char *isolation = getenv("RPCD_CASES_ISOLATION");
    return run_format("[rpcd]\nworkers = 2\nisolation = %s\n[plugin catalog]\npath = %s\n",
                      isolation ? isolation : "none", run_env("RPCD_FIXTURE_CATALOG"));
}

static json_t *result_of(const run_session *s, json_int_t id)
{
    return json_object_get(run_response(s, id), "result");
}

/* Fails unless the response with id is an error with code (and data, when not NULL). */
static void assert_error(const run_session *s, json_int_t id, json_int_t code, const char *data)
{
    json_t *error = json_object_get(run_response(s, id), "error");
    if (!error)
        print_error("response %lld is no error: %s\n", (long long)id, s->run.out);
    assert_non_null(error);
    assert_int_equal(json_integer_value(json_object_get(error, "code")), code);
    if (data)
        run_assert_json(json_object_get(error, "data"), data);
}

/* How many lines are the notification method with params (JSON text, NULL: any). */
static size_t count_notifications(const run_session *s, const char *method, const char *params)
{
    size_t count = 0;
    for (size_t i = 0; i < s->count; i++) {
        const char *name = json_string_value(json_object_get(s->messages[i], "method"));
        if (!name || strcmp(name, method) != 0 || json_object_get(s->messages[i], "id"))
            continue;
        if (params) {
            json_t *expected = json_loads(params, 0, NULL);
            bool same = json_equal(expected, json_object_get(s->messages[i], "params"));
            json_decref(expected);
            if (!same)
                continue;
        }
        count++;
    }
    return count;
}

/*
 * initialize announces resources (subscribe, listChanged), prompts and completions since the
 * plugin offers them; the lists show each descriptor as given; tools/list shows only the tool
 * (not the resources, prompts, completions or the hidden method), which stays callable by name.
 */
static void test_lists_and_capabilities(void **state)
{
    run_fixture *f = *state;
    char *config = catalog_config();
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
        "\"2025-11-25\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/list\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/templates/list\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"prompts/list\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/"
        "list\",\"params\":{\"cursor\":\"x\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"prompts/"
        "list\",\"params\":{\"cursor\":\"3\"}}\n";
    run_session s;
    run_rpcd(f, config, input, &s);
    run_assert_json(json_object_get(result_of(&s, 1), "capabilities"),
                    "{\"tools\":{\"listChanged\":true},\"resources\":{\"subscribe\":true,"
                    "\"listChanged\":true},\"prompts\":{\"listChanged\":true},"
                    "\"completions\":{},\"logging\":{}}");
    run_assert_json(result_of(&s, 2),
                    "{\"resources\":[{\"uri\":\"mem://hello\",\"name\":\"hello\",\"title\":"
                    "\"Hello\",\"mimeType\":\"text/plain\"},{\"uri\":\"mem://whole\",\"name\":"
                    "\"whole\"},{\"uri\":\"mem://value\",\"name\":\"value\"},{\"uri\":"
                    "\"mem://wrong\",\"name\":\"wrong\"},{\"uri\":\"mem://failing\",\"name\":"
                    "\"failing\"}]}");
    run_assert_json(result_of(&s, 3), "{\"resourceTemplates\":[{\"uriTemplate\":"
                                      "\"mem://item/{id}/{+rest}\",\"name\":\"item\"}]}");
    json_t *prompts = json_object_get(result_of(&s, 4), "prompts");
    assert_int_equal(json_array_size(prompts), 3);
    run_assert_json(json_array_get(prompts, 0),
                    "{\"name\":\"greet\",\"description\":\"Greets someone\",\"arguments\":"
                    "[{\"name\":\"who\",\"required\":true},{\"name\":\"mood\"}]}");
    json_t *tools = json_object_get(result_of(&s, 5), "tools");
    assert_int_equal(json_array_size(tools), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(tools, 0), "name")),
                        "touch");
    assert_error(&s, 6, -32602, NULL);
    run_assert_json(result_of(&s, 7), "{\"prompts\":[]}");
    run_session_free(&s);
    free(config);
}

/* Without a plugin of those roles, initialize announces tools and logging only. */
static void test_capabilities_without_catalog(void **state)
{
    run_fixture *f = *state;
    char *config = run_format("[plugin echo]\npath = %s\n", run_env("RPCD_PLUGIN_ECHO"));
    run_session s;
    run_rpcd(f, config,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n"
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/list\"}\n"
             "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":"
             "\"mem://hello\"}}\n",
             &s);
    run_assert_json(json_object_get(result_of(&s, 1), "capabilities"),
                    "{\"tools\":{\"listChanged\":true},\"logging\":{}}");
    run_assert_json(result_of(&s, 2), "{\"resources\":[]}");
    assert_error(&s, 3, -32602, "{\"uri\":\"mem://hello\"}");
    run_session_free(&s);
    free(config);
}

/*
 * resources/read: a string is the text with the resource's mimeType; a whole result passes
 * through; another value is its JSON text as application/json; a template gets its variables
 * ({id} stops at '/', {+rest} does not); an unknown URI is -32602 with the URI; a result of the
 * wrong shape is -32603; a handler's failure is its JSON-RPC error; a missing uri is -32602.
 */
static void test_resource_reads(void **state)
{
    run_fixture *f = *state;
    char *config = catalog_config();
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":"
        "\"mem://hello\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/read\",\"params\":{\"uri\":"
        "\"mem://whole\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":"
        "\"mem://value\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/read\",\"params\":{\"uri\":"
        "\"mem://item/42/a/b.txt\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\",\"params\":{\"uri\":"
        "\"mem://nope\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/read\",\"params\":{\"uri\":"
        "\"mem://wrong\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/read\",\"params\":{\"uri\":"
        "\"mem://failing\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"resources/read\",\"params\":{}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"resources/read\",\"params\":{\"uri\":"
        "\"mem://item/42\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"hidden.ping\"}\n";
    run_session s;
    run_rpcd(f, config, input, &s);
    run_assert_json(result_of(&s, 1), "{\"contents\":[{\"uri\":\"mem://hello\",\"mimeType\":"
                                      "\"text/plain\",\"text\":\"Hello, reader.\\n\"}]}");
    run_assert_json(result_of(&s, 2),
                    "{\"contents\":[{\"uri\":\"mem://whole\",\"mimeType\":\"image/png\","
                    "\"blob\":\"iVBORw0KGgo=\"},{\"uri\":\"mem://whole#2\",\"text\":\"two\"}]}");
    run_assert_json(result_of(&s, 3), "{\"contents\":[{\"uri\":\"mem://value\",\"mimeType\":"
                                      "\"application/json\",\"text\":\"[1,2,3]\"}]}");
    run_assert_json(result_of(&s, 4),
                    "{\"contents\":[{\"uri\":\"mem://item/42/a/b.txt\",\"text\":"
                    "\"{\\\"uri\\\":\\\"mem://item/42/a/b.txt\\\",\\\"variables\\\":{"
                    "\\\"id\\\":\\\"42\\\",\\\"rest\\\":\\\"a/b.txt\\\"}}\"}]}");
    assert_error(&s, 5, -32602, "{\"uri\":\"mem://nope\"}");
    assert_error(&s, 6, -32603, NULL);
    assert_non_null(strstr(s.run.err, "mem.wrong gave a resource that is not MCP's"));
    assert_error(&s, 7, -32602, NULL);
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_object_get(run_response(&s, 7), "error"), "data"), "detail")),
        "no such page");
    assert_error(&s, 8, -32602, NULL);
    assert_error(&s, 9, -32602, "{\"uri\":\"mem://item/42\"}");
    run_assert_json(result_of(&s, 10), "\"Hello, reader.\\n\"");
    run_session_free(&s);
    free(config);
}

/*
 * prompts/get: the handler gets the request's params; a string is one user message with the
 * prompt's description; whole messages pass through; a missing required argument, a value
 * that is not a string, arguments that are not an object and an unknown prompt are -32602
 * before any handler runs; a result of the wrong shape is -32603.
 */
static void test_prompts(void **state)
{
    run_fixture *f = *state;
    char *config = catalog_config();
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\",\"params\":{\"name\":\"greet\","
        "\"arguments\":{\"who\":\"Jo\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompts/get\",\"params\":{\"name\":\"chat\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/"
        "get\",\"params\":{\"name\":\"greet\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"prompts/get\",\"params\":{\"name\":\"greet\","
        "\"arguments\":{\"who\":1}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"prompts/get\",\"params\":{\"name\":\"greet\","
        "\"arguments\":[]}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"prompts/get\",\"params\":{\"name\":\"nope\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"prompts/get\",\"params\":{\"name\":\"bad\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"prompts/get\",\"params\":{}}\n";
    run_session s;
    run_rpcd(f, config, input, &s);
    run_assert_json(result_of(&s, 1),
                    "{\"description\":\"Greets someone\",\"messages\":[{\"role\":\"user\","
                    "\"content\":{\"type\":\"text\",\"text\":\"Greet, given {\\\"name\\\":"
                    "\\\"greet\\\",\\\"arguments\\\":{\\\"who\\\":\\\"Jo\\\"}}\"}}]}");
    run_assert_json(result_of(&s, 2),
                    "{\"description\":\"a chat\",\"messages\":[{\"role\":\"user\",\"content\":"
                    "{\"type\":\"text\",\"text\":\"hi\"}},{\"role\":\"assistant\",\"content\":"
                    "{\"type\":\"image\",\"data\":\"iVBORw0KGgo=\",\"mimeType\":\"image/png\"}}]}");
    assert_error(&s, 3, -32602,
                 "{\"detail\":\"a required argument is missing (or given twice)\",\"prompt\":"
                 "\"greet\"}");
    assert_error(&s, 4, -32602,
                 "{\"detail\":\"every argument of a prompt is a string\",\"prompt\":\"greet\"}");
    assert_error(&s, 5, -32602,
                 "{\"detail\":\"\\\"arguments\\\" must be one object\",\"prompt\":\"greet\"}");
    assert_error(&s, 6, -32602, "{\"detail\":\"unknown prompt\",\"prompt\":\"nope\"}");
    assert_error(&s, 7, -32603, NULL);
    assert_error(&s, 8, -32602, NULL);
    run_session_free(&s);
    free(config);
}

/*
 * completion/complete: an array is cut to 100 values with total and hasMore; a typed prefix
 * the handler filters by; a reference nothing completes has no values; malformed params are
 * -32602.
 */
static void test_completions(void **state)
{
    run_fixture *f = *state;
    char *config = catalog_config();
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"completion/complete\",\"params\":{\"ref\":"
        "{\"type\":\"ref/prompt\",\"name\":\"greet\"},\"argument\":{\"name\":\"who\",\"value\":"
        "\"\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"completion/complete\",\"params\":{\"ref\":"
        "{\"type\":\"ref/prompt\",\"name\":\"greet\"},\"argument\":{\"name\":\"who\",\"value\":"
        "\"a14\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"completion/complete\",\"params\":{\"ref\":"
        "{\"type\":\"ref/resource\",\"uri\":\"mem://item/{id}/{+rest}\"},\"argument\":{\"name\":"
        "\"id\",\"value\":\"4\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"completion/complete\",\"params\":{\"ref\":"
        "{\"type\":\"ref/tool\",\"name\":\"greet\"},\"argument\":{\"name\":\"who\",\"value\":"
        "\"\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"completion/complete\",\"params\":{\"ref\":"
        "{\"type\":\"ref/prompt\",\"name\":\"greet\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"completion/complete\",\"params\":{\"ref\":"
        "{\"type\":1,\"name\":\"greet\"},\"argument\":{\"name\":\"who\",\"value\":\"\"}}}\n";
    run_session s;
    run_rpcd(f, config, input, &s);
    json_t *all = json_object_get(result_of(&s, 1), "completion");
    assert_int_equal(json_array_size(json_object_get(all, "values")), 100);
    assert_int_equal(json_integer_value(json_object_get(all, "total")), 150);
    assert_true(json_is_true(json_object_get(all, "hasMore")));
    run_assert_json(result_of(&s, 2),
                    "{\"completion\":{\"values\":[\"a140\",\"a141\",\"a142\",\"a143\",\"a144\","
                    "\"a145\",\"a146\",\"a147\",\"a148\",\"a149\"],\"total\":10,"
                    "\"hasMore\":false}}");
    run_assert_json(result_of(&s, 3),
                    "{\"completion\":{\"values\":[],\"total\":0,\"hasMore\":false}}");
    assert_error(&s, 4, -32602, NULL);
    assert_error(&s, 5, -32602, NULL);
    /* A type that is no string (a number's text is one byte): refused, never read as one. */
    assert_error(&s, 6, -32602, NULL);
    run_session_free(&s);
    free(config);
}

/*
 * resources/subscribe, then a tool's resource_updated: one notifications/resources/updated for
 * the URI subscribed, none for another; logging/setLevel warning: the plugin's error and
 * warning lines reach the client as notifications/message, its info and debug lines do not.
 */
static void test_subscriptions_and_logging(void **state)
{
    run_fixture *f = *state;
    char *config = catalog_config();
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/subscribe\",\"params\":{\"uri\":"
        "\"mem://hello\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\",\"params\":{\"level\":"
        "\"warning\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"touch\",\"params\":{\"uri\":\"mem://hello\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"touch\",\"params\":{\"uri\":\"mem://other\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"logging/setLevel\",\"params\":{\"level\":"
        "\"loud\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/subscribe\",\"params\":{}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"logging/setLevel\",\"params\":{\"level\":"
        "1}}\n";
    run_session s;
    run_rpcd(f, config, input, &s);
    run_assert_json(result_of(&s, 1), "{}");
    run_assert_json(result_of(&s, 2), "{}");
    run_assert_json(result_of(&s, 3), "[0,-7,-10]");
    assert_int_equal(
        count_notifications(&s, "notifications/resources/updated", "{\"uri\":\"mem://hello\"}"), 1);
    assert_int_equal(count_notifications(&s, "notifications/resources/updated", NULL), 1);
    assert_int_equal(count_notifications(&s, "notifications/message",
                                         "{\"level\":\"error\",\"logger\":\"catalog\",\"data\":"
                                         "\"touched mem://hello (error)\"}"),
                     1);
    assert_int_equal(count_notifications(&s, "notifications/message",
                                         "{\"level\":\"warning\",\"logger\":\"catalog\",\"data\":"
                                         "\"touched mem://other (warning)\"}"),
                     1);
    assert_int_equal(count_notifications(&s, "notifications/message", NULL), 4);
    assert_error(&s, 5, -32602, NULL);
    assert_error(&s, 6, -32602, NULL);
    assert_error(&s, 7, -32602, NULL);
    run_session_free(&s);
    free(config);
}

/*
 * MCP's eight levels onto rpcd's four (rpcd-plugin(3), LOGGING): after logging/setLevel, the
 * plugin's lines at that level and above reach the client; notice asks for info, and critical,
 * alert and emergency for error, rpcd having no level between.
 */
static void test_each_mcp_level(void **state)
{
    run_fixture *f = *state;
    char *config = catalog_config();
    static const struct {
        const char *level;
        size_t error, warning, info, debug;
    } levels[] = {
        {"debug", 1, 1, 1, 1},   {"info", 1, 1, 1, 0},      {"notice", 1, 1, 1, 0},
        {"warning", 1, 1, 0, 0}, {"error", 1, 0, 0, 0},     {"critical", 1, 0, 0, 0},
        {"alert", 1, 0, 0, 0},   {"emergency", 1, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        char *input =
            run_format("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"logging/setLevel\",\"params\":"
                       "{\"level\":\"%s\"}}\n"
                       "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"touch\",\"params\":{\"uri\":"
                       "\"mem://hello\"}}\n",
                       levels[i].level);
        run_session s;
        run_rpcd(f, config, input, &s);
        run_assert_json(result_of(&s, 1), "{}");
        run_assert_json(result_of(&s, 2), "[0,-7,-10]");
        size_t error = count_notifications(
            &s, "notifications/message",
            "{\"level\":\"error\",\"logger\":\"catalog\",\"data\":\"touched mem://hello "
            "(error)\"}");
        size_t warning = count_notifications(
            &s, "notifications/message",
            "{\"level\":\"warning\",\"logger\":\"catalog\",\"data\":\"touched mem://hello "
            "(warning)\"}");
        size_t info = count_notifications(
            &s, "notifications/message",
            "{\"level\":\"info\",\"logger\":\"catalog\",\"data\":\"touched (info)\"}");
        size_t debug = count_notifications(
            &s, "notifications/message",
            "{\"level\":\"debug\",\"logger\":\"catalog\",\"data\":\"touched mem://hello "
            "(debug)\"}");
        if (error != levels[i].error || warning != levels[i].warning || info != levels[i].info ||
            debug != levels[i].debug ||
            count_notifications(&s, "notifications/message", NULL) !=
                error + warning + info + debug)
            fail_msg("after setLevel %s: %zu error, %zu warning, %zu info, %zu debug lines: %s",
                     levels[i].level, error, warning, info, debug, s.run.out);
        run_session_free(&s);
        free(input);
    }
    free(config);
}

/* Without logging/setLevel, and after resources/unsubscribe, the client hears nothing. */
static void test_nothing_unasked(void **state)
{
    run_fixture *f = *state;
    char *config = catalog_config();
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/subscribe\",\"params\":{\"uri\":"
        "\"mem://hello\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/unsubscribe\",\"params\":{\"uri\":"
        "\"mem://hello\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"touch\",\"params\":{\"uri\":\"mem://"
        "hello\"}}\n";
    run_session s;
    run_rpcd(f, config, input, &s);
    run_assert_json(result_of(&s, 3), "[0,-7,-10]");
    assert_int_equal(s.count, 3);
    run_session_free(&s);
    free(config);
}

/*
 * The stateless revision's subscriptions/listen: its acknowledgement names the prompts, the
 * resources and the URIs asked for (a plugin offers them), and a plugin's resource_updated of
 * a URI it lists reaches the stream, tagged with its id; another URI does not.
 */
static void test_listen_for_resources(void **state)
{
    run_fixture *f = *state;
    char *config = catalog_config();
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":\"s1\",\"method\":\"subscriptions/listen\",\"params\":{"
        "\"notifications\":{\"promptsListChanged\":true,\"resourcesListChanged\":true,"
        "\"resourceSubscriptions\":[\"mem://hello\"]},\"_meta\":{"
        "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/"
        "clientCapabilities\":{}}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"touch\",\"params\":{\"uri\":\"mem://hello\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"touch\",\"params\":{\"uri\":\"mem://other\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"subscriptions/listen\",\"params\":{"
        "\"notifications\":{\"resourceSubscriptions\":[1]},\"_meta\":{"
        "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/"
        "clientCapabilities\":{}}}}\n";
    run_session s;
    static const json_int_t answered[] = {1, 2, 3};
    run_rpcd_until(f, config, input, answered, 3, &s);
    assert_int_equal(
        count_notifications(&s, "notifications/subscriptions/acknowledged",
                            "{\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":\"s1\"},"
                            "\"notifications\":{\"promptsListChanged\":true,"
                            "\"resourcesListChanged\":true,\"resourceSubscriptions\":"
                            "[\"mem://hello\"]}}"),
        1);
    assert_int_equal(count_notifications(&s, "notifications/resources/updated",
                                         "{\"uri\":\"mem://hello\",\"_meta\":{"
                                         "\"io.modelcontextprotocol/subscriptionId\":\"s1\"}}"),
                     1);
    assert_int_equal(count_notifications(&s, "notifications/resources/updated", NULL), 1);
    assert_error(&s, 3, -32602, NULL);
    run_session_free(&s);
    free(config);
}

/* The stateless revision: results carry resultType, lists their cache hints. */
static void test_stateless_revision(void **state)
{
    run_fixture *f = *state;
    char *config = catalog_config();
#define META                                                                                       \
    "\"_meta\":{\"io.modelcontextprotocol/"                                                        \
    "protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}"
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":"
        "\"mem://hello\"," META "}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompts/list\",\"params\":{" META "}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/"
        "get\",\"params\":{\"name\":\"chat\"," META "}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"resources/read\",\"params\":{\"uri\":"
        "\"mem://hello\",\"_meta\":{\"io.modelcontextprotocol/"
        "protocolVersion\":\"1999-01-01\"}}}\n";
#undef META
    run_session s;
    static const json_int_t answered[] = {1, 2, 3, 4};
    run_rpcd_until(f, config, input, answered, 4, &s);
    json_t *read = result_of(&s, 1);
    assert_string_equal(json_string_value(json_object_get(read, "resultType")), "complete");
    assert_non_null(json_object_get(read, "contents"));
    json_t *list = result_of(&s, 2);
    assert_int_equal(json_integer_value(json_object_get(list, "ttlMs")), 60000);
    assert_string_equal(json_string_value(json_object_get(result_of(&s, 3), "resultType")),
                        "complete");
    assert_error(&s, 4, -32022, NULL);
    run_session_free(&s);
    free(config);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lists_and_capabilities, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_capabilities_without_catalog, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_resource_reads, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_prompts, run_fixture_setup, run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_completions, run_fixture_setup, run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_subscriptions_and_logging, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_each_mcp_level, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_nothing_unasked, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_listen_for_resources, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_stateless_revision, run_fixture_setup,
                                        run_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
