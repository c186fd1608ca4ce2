/* SPDX-License-Identifier: MIT */
/*
 * Every tool of the default config (the bundled plugins) can succeed over MCP: each is called
 * through tools/call with arguments made from its own inputSchema, as a client that knows
 * nothing more would make them, and must answer a result that is no tool error. Once with the
 * plugins in rpcd's process, once each in a host process of its own. The fail plugin, bundled
 * as a fixture of every error path and in no config, is left out: its tools fail on purpose.
 */
#include "harness.h"

#include <jansson.h>
#include <libgen.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

enum { MOST_TOOLS = 100, MOST_DEPTH = 8 };

static json_t *value_for(const json_t *schema, int depth);

/* The type a schema asks for: its "type", the first of a list that holds no "object". */
static const char *type_of(const json_t *schema)
{
    const json_t *type = json_object_get(schema, "type");
    if (json_is_string(type))
        return json_string_value(type);
    size_t index;
    const json_t *item;
    json_array_foreach(type, index, item)
    {
        if (json_is_string(item) && strcmp(json_string_value(item), "object") == 0)
            return "object";
    }
    return json_is_string(json_array_get(type, 0)) ? json_string_value(json_array_get(type, 0))
                                                   : "object";
}

/* An object with each required member, made from its property's schema. */
static json_t *object_for(const json_t *schema, int depth)
{
    json_t *object = json_object();
    const json_t *properties = json_object_get(schema, "properties");
    size_t index;
    const json_t *name;
    json_array_foreach(json_object_get(schema, "required"), index, name)
    {
        const char *key = json_string_value(name);
        assert_non_null(key);
        json_object_set_new(object, key, value_for(json_object_get(properties, key), depth + 1));
    }
    return object;
}

/* The least value a schema takes: its first enum value, the minimum, minItems items. */
static json_t *value_for(const json_t *schema, int depth)
{
    assert_true(depth < MOST_DEPTH);
    if (json_array_size(json_object_get(schema, "enum")) > 0)
        return json_deep_copy(json_array_get(json_object_get(schema, "enum"), 0));
    const char *type = schema ? type_of(schema) : "string";
    if (strcmp(type, "object") == 0)
        return object_for(schema, depth);
    if (strcmp(type, "array") == 0) {
        json_t *array = json_array();
        json_int_t items = json_integer_value(json_object_get(schema, "minItems"));
        for (json_int_t i = 0; i < (items > 0 ? items : 1); i++)
            json_array_append_new(array, value_for(json_object_get(schema, "items"), depth + 1));
        return array;
    }
    if (strcmp(type, "integer") == 0 || strcmp(type, "number") == 0) {
        const json_t *minimum = json_object_get(schema, "minimum");
        return json_is_number(minimum) ? json_deep_copy(minimum) : json_integer(1);
    }
    if (strcmp(type, "boolean") == 0)
        return json_true();
    if (strcmp(type, "null") == 0)
        return json_null();
    return json_string("x"); /* within every bundled pattern and length */
}

static void send_json(harness_process *rpcd, json_t *message)
{
    char *text = json_dumps(message, JSON_COMPACT);
    assert_non_null(text);
    assert_int_equal(harness_write_text(rpcd, text, HARNESS_TIMEOUT_MS), HARNESS_OK);
    assert_int_equal(harness_write_text(rpcd, "\n", HARNESS_TIMEOUT_MS), HARNESS_OK);
    free(text);
    json_decref(message);
}

/* The response to id, notifications (progress) passed over. */
static json_t *response_to(harness_process *rpcd, json_int_t id)
{
    for (;;) {
        char *line = NULL;
        int status = harness_read_line(rpcd, HARNESS_TIMEOUT_MS, &line, NULL, NULL);
        if (status != HARNESS_OK)
            fail_msg("no response to %lld (%d); stderr:\n%s", (long long)id, status,
                     harness_stderr(rpcd));
        json_t *message = json_loads(line, 0, NULL);
        assert_non_null(message);
        free(line);
        if (json_integer_value(json_object_get(message, "id")) == id &&
            !json_object_get(message, "method"))
            return message;
        json_decref(message);
    }
}

/* Calls each tool of config with arguments from its schema. Returns how many it called. */
static size_t call_every_tool(const char *config)
{
    harness_argv args = harness_rpcd_argv(config);
    assert_non_null(args.argv[0]);
    harness_process *rpcd = harness_start(args.argv);
    assert_non_null(rpcd);
    send_json(rpcd, json_pack("{s:s,s:i,s:s,s:{s:s,s:{},s:{s:s,s:s}}}", "jsonrpc", "2.0", "id", 0,
                              "method", "initialize", "params", "protocolVersion", "2025-06-18",
                              "capabilities", "clientInfo", "name", "t", "version", "1"));
    json_decref(response_to(rpcd, 0));
    send_json(rpcd, json_pack("{s:s,s:i,s:s}", "jsonrpc", "2.0", "id", 1, "method", "tools/list"));
    json_t *list = response_to(rpcd, 1);
    json_t *tools = json_object_get(json_object_get(list, "result"), "tools");
    assert_true(json_array_size(tools) > 0 && json_array_size(tools) < MOST_TOOLS);
    assert_null(json_object_get(json_object_get(list, "result"), "nextCursor"));
    size_t index;
    json_t *tool;
    json_array_foreach(tools, index, tool)
    {
        const char *name = json_string_value(json_object_get(tool, "name"));
        json_t *schema = json_object_get(tool, "inputSchema");
        assert_string_equal(json_string_value(json_object_get(schema, "type")), "object");
        json_int_t id = 10 + (json_int_t)index;
        json_t *arguments = value_for(schema, 0);
        char *shown = json_dumps(arguments, JSON_COMPACT);
        send_json(rpcd, json_pack("{s:s,s:I,s:s,s:{s:s,s:o}}", "jsonrpc", "2.0", "id", id, "method",
                                  "tools/call", "params", "name", name, "arguments", arguments));
        json_t *response = response_to(rpcd, id);
        json_t *result = json_object_get(response, "result");
        if (!result || json_is_true(json_object_get(result, "isError"))) {
            char *text = json_dumps(response, JSON_COMPACT);
            fail_msg("tool %s with %s answered %s", name, shown, text);
        }
        free(shown);
        json_decref(response);
    }
    size_t count = json_array_size(tools);
    json_decref(list);
    harness_close_stdin(rpcd);
    harness_exit status;
    assert_int_equal(harness_wait(rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    assert_true(status.exited && status.code == 0);
    harness_free(rpcd);
    return count;
}

/* Every tool of the default config: echo, subtract, sum, ..., notes_add. */
static void test_every_tool_in_process(void **state)
{
    (void)state;
    assert_true(call_every_tool(harness_env("RPCD_BUILD_CONFIG")) >= 6);
}

/* The same config with isolation = process: each plugin in a host of its own. */
static void test_every_tool_isolated(void **state)
{
    (void)state;
    const char *build_config = harness_env("RPCD_BUILD_CONFIG");
    assert_non_null(build_config);
    char *text = harness_read_file(build_config, NULL);
    assert_non_null(text);
    char *copy = strdup(build_config);
    assert_non_null(copy);
    char *header = strstr(text, "\n[rpcd]\n");
    assert_non_null(header);
    header[7] = '\0';
    char *isolated;
    assert_true(asprintf(&isolated, "%s\nisolation = process\nplugin_dir = %s\n%s", text,
                         dirname(copy), header + 8) > 0);
    char *dir = harness_temp_dir();
    assert_non_null(dir);
    char *config = harness_write_file(dir, "rpcd.conf", isolated);
    assert_non_null(config);
    assert_true(call_every_tool(config) >= 6);
    harness_remove_dir(dir);
    free(dir);
    free(config);
    free(isolated);
    free(copy);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_tool_in_process),
        cmocka_unit_test(test_every_tool_isolated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
