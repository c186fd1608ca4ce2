/* SPDX-License-Identifier: MIT */
/*
 * The MCP front end's tables and answers: which methods become tools under which names, the
 * handshake results, tools/list with paging and its cursor errors, and the tool result shapes.
 */
#include "config/config.h"
#include "mcp/mcp.h"
#include "methods/registry.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int handler(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)call, (void)params, (void)length, (void)data;
    return RPCD_OK;
}

static registry *make_registry(size_t extra)
{
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    rpcd_method method = rpcd_method_new("echo", handler);
    method.description = "Echoes.";
    method.params_schema = "{\"type\":\"object\",\"properties\":{\"a\":{}}}";
    assert_int_equal(reg_add(methods, &method, NULL, "p", NULL), 0);
    method = rpcd_method_new("array.only", handler);
    method.params_schema = "{\"type\":\"array\"}";
    assert_int_equal(reg_add(methods, &method, NULL, "p", NULL), 0);
    method = rpcd_method_new("has space", handler);
    assert_int_equal(reg_add(methods, &method, NULL, "p", NULL), 0);
    for (size_t i = 0; i < extra; i++) {
        char name[32];
        snprintf(name, sizeof name, "m%zu", i);
        method = rpcd_method_new(name, handler);
        assert_int_equal(reg_add(methods, &method, NULL, "p", NULL), 0);
    }
    return methods;
}

static rpcd_config *make_config(const char *mcp_section)
{
    rpcd_config *config;
    char error[256];
    if (cfg_load_string(mcp_section, "/etc/rpcd.conf", &config, error, sizeof error) != 0)
        fail_msg("%s", error);
    return config;
}

/* Answers method with params text and parses the result. */
static json_t *answer(const mcp_tools *tools, const char *method, const char *params, int *status)
{
    buffer out = BUFFER_INIT;
    js_span span = {params, params ? strlen(params) : 0};
    *status = mcp_answer(tools, method, strlen(method), span, &out);
    json_t *result = NULL;
    if (*status == 0) {
        result = json_loadb(out.data, out.length, 0, NULL);
        assert_non_null(result);
    }
    buf_free(&out);
    return result;
}

/* tool_names = specification: the methods whose own names MCP allows, under those names. */
static void test_specification_names(void **state)
{
    (void)state;
    registry *methods = make_registry(0);
    rpcd_config *config = make_config("[mcp]\ntool_names = specification\n");
    mcp_tools *tools;
    char error[256];
    assert_int_equal(mcp_tools_new(methods, config, &tools, error, sizeof error), 0);
    assert_int_equal(mcp_tools_count(tools), 2); /* "has space" is no tool name */
    assert_non_null(mcp_tool_method(tools, "echo", 4));
    assert_null(mcp_tool_method(tools, "has space", 9));
    assert_null(mcp_tool_method(tools, "ech", 3));

    int status;
    json_t *list = answer(tools, "tools/list", NULL, &status);
    assert_int_equal(status, 0);
    json_t *items = json_object_get(list, "tools");
    assert_int_equal(json_array_size(items), 2);
    json_t *echo = json_array_get(items, 0);
    assert_string_equal(json_string_value(json_object_get(echo, "name")), "echo");
    assert_string_equal(json_string_value(json_object_get(echo, "description")), "Echoes.");
    /* An object schema is passed on; any other becomes {"type":"object"}, as MCP requires. */
    assert_non_null(json_object_get(json_object_get(echo, "inputSchema"), "properties"));
    json_t *array_only = json_array_get(items, 1);
    json_t *object_schema = json_pack("{s:s}", "type", "object");
    assert_true(json_equal(json_object_get(array_only, "inputSchema"), object_schema));
    json_decref(object_schema);
    assert_non_null(
        strstr(json_string_value(json_object_get(array_only, "description")), "array.only"));
    assert_null(json_object_get(list, "nextCursor"));
    json_decref(list);
    mcp_tools_free(tools);
    cfg_free(config);
    reg_free(methods);
}

/*
 * A schema whose type is a list holding "object" (an array for JSON-RPC clients, an object for
 * MCP's) is listed whole with its type narrowed to "object"; a list without it is no object.
 */
static void test_input_schema_narrowed_to_object(void **state)
{
    (void)state;
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    rpcd_method method = rpcd_method_new("both", handler);
    method.params_schema = "{\"items\":{\"type\":\"number\"},\"type\":[\"array\",\"object\"],"
                           "\"required\":[\"n\"],\"properties\":{\"n\":{}}}";
    assert_int_equal(reg_add(methods, &method, NULL, "p", NULL), 0);
    method = rpcd_method_new("neither", handler);
    method.params_schema = "{\"type\":[\"array\",\"string\"],\"required\":[\"n\"]}";
    assert_int_equal(reg_add(methods, &method, NULL, "p", NULL), 0);
    rpcd_config *config = make_config("");
    mcp_tools *tools;
    char error[256];
    assert_int_equal(mcp_tools_new(methods, config, &tools, error, sizeof error), 0);
    int status;
    json_t *list = answer(tools, "tools/list", NULL, &status);
    assert_int_equal(status, 0);
    json_t *items = json_object_get(list, "tools");
    json_t *both = json_loads("{\"items\":{\"type\":\"number\"},\"type\":\"object\","
                              "\"required\":[\"n\"],\"properties\":{\"n\":{}}}",
                              0, NULL);
    json_t *plain = json_pack("{s:s}", "type", "object");
    assert_true(json_equal(json_object_get(json_array_get(items, 0), "inputSchema"), both));
    assert_true(json_equal(json_object_get(json_array_get(items, 1), "inputSchema"), plain));
    json_decref(plain);
    json_decref(both);
    json_decref(list);
    mcp_tools_free(tools);
    cfg_free(config);
    reg_free(methods);
}

static void test_config_lists_and_renames(void **state)
{
    (void)state;
    registry *methods = make_registry(0);
    rpcd_config *config = make_config("[mcp]\ntools = echo, has space\ntool.has space = spaced\n"
                                      "tool.echo = say\n");
    mcp_tools *tools;
    char error[256];
    assert_int_equal(mcp_tools_new(methods, config, &tools, error, sizeof error), 0);
    assert_int_equal(mcp_tools_count(tools), 2);
    assert_ptr_equal(mcp_tool_method(tools, "say", 3), reg_find(methods, "echo", 4));
    assert_ptr_equal(mcp_tool_method(tools, "spaced", 6), reg_find(methods, "has space", 9));
    assert_null(mcp_tool_method(tools, "echo", 4));
    assert_null(mcp_tool_method(tools, "array.only", 10));
    mcp_tools_free(tools);
    cfg_free(config);

    config = make_config("[mcp]\ntools = none\n");
    assert_int_equal(mcp_tools_new(methods, config, &tools, error, sizeof error), 0);
    assert_int_equal(mcp_tools_count(tools), 0);
    mcp_tools_free(tools);
    cfg_free(config);
    reg_free(methods);
}

static void expect_config_error(const char *section, const char *fragment)
{
    registry *methods = make_registry(0);
    rpcd_config *config = make_config(section);
    mcp_tools *tools = NULL;
    char error[256] = "";
    assert_int_equal(mcp_tools_new(methods, config, &tools, error, sizeof error), -1);
    if (!strstr(error, fragment) || !strstr(error, "/etc/rpcd.conf"))
        fail_msg("unexpected message: %s", error);
    cfg_free(config);
    reg_free(methods);
}

static void test_config_errors(void **state)
{
    (void)state;
    expect_config_error("[mcp]\ntools = echo, nope\n", "'nope'");
    expect_config_error("[mcp]\ntool.nope = x\n", "tool.nope");
    expect_config_error("[mcp]\ntool.echo = bad name\n", "'bad name'");
    expect_config_error("[mcp]\ntool_names = specification\ntool.echo = array.only\n",
                        "'array.only'");
    expect_config_error("[mcp]\ntool_names = specification\ntools = has space\n", "'has space'");
    /* Portable names: what the config names must be one, a dot or a 65th character is not. */
    expect_config_error("[mcp]\ntool.echo = say.it\n",
                        "tool name 'say.it' for method 'echo' is not valid (1 to 64 of");
    char section[160];
    snprintf(section, sizeof section, "[mcp]\ntool.echo = %065d\n", 0);
    expect_config_error(section, "is not valid (1 to 64 of");
    /* Two methods under one name: both named, and the name. */
    expect_config_error("[mcp]\ntool.echo = array_only\n",
                        "two methods, 'echo' and 'array.only', have the tool name 'array_only'");
}

/*
 * By default every method is a tool under its portable name: what is not a-z A-Z 0-9 _ - is _,
 * a UTF-8 character is one _, and the name is cut to 64.
 */
static void test_portable_names(void **state)
{
    (void)state;
    char out[MCP_PORTABLE_NAME_MAX + 1];
    assert_int_equal(mcp_portable_name_of("fail.invalid_params", out), 19);
    assert_string_equal(out, "fail_invalid_params");
    assert_int_equal(mcp_portable_name_of("a/b c:d-E_9", out), 11);
    assert_string_equal(out, "a_b_c_d-E_9");
    assert_int_equal(mcp_portable_name_of("caf\xc3\xa9.\xe2\x82\xac\xf0\x9f\x98\x80!", out), 8);
    assert_string_equal(out, "caf_____");
    char long_name[100];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    long_name[70] = '.';
    assert_int_equal(mcp_portable_name_of(long_name, out), 64);
    assert_true(mcp_portable_tool_name(out, 64));
    assert_null(strchr(out, '_'));

    assert_true(mcp_portable_tool_name("a-b_C9", 6));
    assert_false(mcp_portable_tool_name("a.b", 3));
    assert_false(mcp_portable_tool_name("a/b", 3));
    assert_false(mcp_portable_tool_name("", 0));
    assert_false(mcp_portable_tool_name(long_name, 65)); /* 65 x */

    registry *methods = make_registry(0);
    rpcd_config *config = make_config("");
    mcp_tools *tools;
    char error[256];
    assert_int_equal(mcp_tools_new(methods, config, &tools, error, sizeof error), 0);
    assert_int_equal(mcp_tools_count(tools), 3);
    assert_ptr_equal(mcp_tool_method(tools, "array_only", 10), reg_find(methods, "array.only", 10));
    assert_ptr_equal(mcp_tool_method(tools, "has_space", 9), reg_find(methods, "has space", 9));
    assert_null(mcp_tool_method(tools, "array.only", 10));
    int status;
    json_t *list = answer(tools, "tools/list", NULL, &status);
    assert_int_equal(status, 0);
    json_t *items = json_object_get(list, "tools");
    assert_int_equal(json_array_size(items), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(items, 1), "name")),
                        "array_only");
    json_decref(list);
    mcp_tools_free(tools);
    cfg_free(config);
    reg_free(methods);
}

static void test_paging(void **state)
{
    (void)state;
    registry *methods = make_registry(250);
    rpcd_config *config = make_config("");
    mcp_tools *tools;
    char error[256];
    assert_int_equal(mcp_tools_new(methods, config, &tools, error, sizeof error), 0);
    assert_int_equal(mcp_tools_count(tools), 253);
    size_t seen = 0;
    char params[64] = "";
    for (int page = 0; page < 10; page++) {
        int status;
        json_t *list = answer(tools, "tools/list", params[0] ? params : NULL, &status);
        assert_int_equal(status, 0);
        seen += json_array_size(json_object_get(list, "tools"));
        const char *cursor = json_string_value(json_object_get(list, "nextCursor"));
        if (!cursor) {
            json_decref(list);
            break;
        }
        snprintf(params, sizeof params, "{\"cursor\":\"%s\"}", cursor);
        json_decref(list);
    }
    assert_int_equal(seen, 253);
    int status;
    answer(tools, "tools/list", "{\"cursor\":\"x\"}", &status);
    assert_int_equal(status, -2);
    answer(tools, "tools/list", "{\"cursor\":\"9999\"}", &status);
    assert_int_equal(status, -2);
    answer(tools, "tools/list", "{\"cursor\":5}", &status);
    assert_int_equal(status, -2);
    mcp_tools_free(tools);
    cfg_free(config);
    reg_free(methods);
}

static void test_handshake(void **state)
{
    (void)state;
    int status;
    json_t *result = answer(NULL, "initialize", "{\"protocolVersion\":\"2025-03-26\"}", &status);
    assert_string_equal(json_string_value(json_object_get(result, "protocolVersion")),
                        "2025-03-26");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(result, "serverInfo"), "name")), "rpcd");
    assert_non_null(json_object_get(json_object_get(result, "capabilities"), "tools"));
    json_decref(result);
    /* A version rpcd does not speak gets the newest it does. */
    result = answer(NULL, "initialize", "{\"protocolVersion\":\"1999-01-01\"}", &status);
    assert_string_equal(json_string_value(json_object_get(result, "protocolVersion")),
                        "2025-11-25");
    json_decref(result);
    result = answer(NULL, "ping", NULL, &status);
    assert_int_equal(json_object_size(result), 0);
    json_decref(result);
    result = answer(NULL, "server/discover", NULL, &status);
    assert_true(json_array_size(json_object_get(result, "supportedVersions")) >= 4);
    assert_string_equal(json_string_value(json_object_get(result, "resultType")), "complete");
    json_decref(result);
    assert_null(answer(NULL, "tools/unknown", NULL, &status));
    assert_int_equal(status, -1);
}

/* [mcp] instructions reach the model through initialize and server/discover, as given. */
static void test_instructions(void **state)
{
    (void)state;
    registry *methods = make_registry(0);
    rpcd_config *config = make_config("[mcp]\ninstructions = Call \"echo\" first.\n  Then stop.\n");
    mcp_tools *tools;
    char error[256];
    assert_int_equal(mcp_tools_new(methods, config, &tools, error, sizeof error), 0);
    static const char *const methods_with[] = {"initialize", "server/discover"};
    for (size_t i = 0; i < 2; i++) {
        int status;
        json_t *result = answer(tools, methods_with[i], NULL, &status);
        assert_int_equal(status, 0);
        assert_string_equal(json_string_value(json_object_get(result, "instructions")),
                            "Call \"echo\" first.\nThen stop.");
        json_decref(result);
        /* None given, none sent. */
        result = answer(NULL, methods_with[i], NULL, &status);
        assert_null(json_object_get(result, "instructions"));
        json_decref(result);
    }
    mcp_tools_free(tools);
    cfg_free(config);
    reg_free(methods);
}

static void test_tool_results(void **state)
{
    (void)state;
    buffer out = BUFFER_INIT;
    assert_int_equal(mcp_append_tool_result(&out, "{\"a\":\"\\u00e9\"}", 14), 0);
    json_t *result = json_loadb(out.data, out.length, 0, NULL);
    assert_non_null(result);
    json_t *text = json_object_get(json_array_get(json_object_get(result, "content"), 0), "text");
    assert_string_equal(json_string_value(text), "{\"a\":\"\\u00e9\"}");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(result, "structuredContent"), "a")),
        "\xc3\xa9");
    assert_true(json_is_false(json_object_get(result, "isError")));
    json_decref(result);
    buf_clear(&out);
    /* Not an object: text only. */
    assert_int_equal(mcp_append_tool_result(&out, "[1]", 3), 0);
    result = json_loadb(out.data, out.length, 0, NULL);
    assert_null(json_object_get(result, "structuredContent"));
    json_decref(result);
    buf_clear(&out);
    assert_int_equal(mcp_append_tool_error(&out, "went \"wrong\"", 12), 0);
    result = json_loadb(out.data, out.length, 0, NULL);
    assert_true(json_is_true(json_object_get(result, "isError")));
    json_decref(result);
    buf_free(&out);
}

/* What rpcd reads of params must mean one thing: a member given twice is invalid params. */
static void test_duplicate_params_members(void **state)
{
    (void)state;
    registry *methods = make_registry(0);
    rpcd_config *config = make_config("");
    mcp_tools *tools;
    char error[256];
    assert_int_equal(mcp_tools_new(methods, config, &tools, error, sizeof error), 0);
    int status;
    assert_null(answer(tools, "initialize",
                       "{\"protocolVersion\":\"2025-03-26\",\"protocolVersion\":\"2024-11-05\"}",
                       &status));
    assert_int_equal(status, -2);
    assert_null(answer(tools, "initialize",
                       "{\"protocolVersion\":\"2025-03-26\",\"protocol\\u0056ersion\":1}",
                       &status));
    assert_int_equal(status, -2);
    assert_null(answer(tools, "tools/list", "{\"cursor\":\"0\",\"cursor\":\"1\"}", &status));
    assert_int_equal(status, -2);
    /* Members rpcd does not read are not its business. */
    json_t *result = answer(tools, "initialize",
                            "{\"protocolVersion\":\"2025-03-26\",\"x\":1,\"x\":2}", &status);
    assert_int_equal(status, 0);
    json_decref(result);
    mcp_tools_free(tools);
    cfg_free(config);
    reg_free(methods);
}

/* A method renamed to a short tool name may have a long name, and its plugin too: the
 * description names both whole. */
static void test_description_of_long_names(void **state)
{
    (void)state;
    char long_name[150], plugin_name[300], section[512];
    memset(long_name, 'm', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    memset(plugin_name, 'p', sizeof plugin_name - 1);
    plugin_name[sizeof plugin_name - 1] = '\0';
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    rpcd_method method = rpcd_method_new(long_name, handler);
    assert_int_equal(reg_add(methods, &method, NULL, plugin_name, NULL), 0);
    snprintf(section, sizeof section, "[mcp]\ntool.%s = short\n", long_name);
    rpcd_config *config = make_config(section);
    mcp_tools *tools;
    char error[256];
    assert_int_equal(mcp_tools_new(methods, config, &tools, error, sizeof error), 0);
    int status;
    json_t *list = answer(tools, "tools/list", NULL, &status);
    assert_int_equal(status, 0);
    const char *description = json_string_value(
        json_object_get(json_array_get(json_object_get(list, "tools"), 0), "description"));
    char expected[800];
    snprintf(expected, sizeof expected, "Method %s of the %s plugin.", long_name, plugin_name);
    assert_string_equal(description, expected);
    json_decref(list);
    mcp_tools_free(tools);
    cfg_free(config);
    reg_free(methods);
}

static void test_reserved_names(void **state)
{
    (void)state;
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    static const char *const names[] = {
        "initialize",      "ping",           "tools/list", "tools/call", "server/discover",
        "notifications/x", "$/cancelRequest"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        rpcd_method method = rpcd_method_new(names[i], handler);
        assert_int_equal(reg_add(methods, &method, NULL, "p", NULL), REG_ERR_INVALID);
    }
    assert_true(mcp_valid_tool_name("a.b-c_D9", 8));
    assert_false(mcp_valid_tool_name("a/b", 3));
    assert_false(mcp_valid_tool_name("", 0));
    char long_name[130];
    memset(long_name, 'a', sizeof long_name);
    assert_true(mcp_valid_tool_name(long_name, 128));
    assert_false(mcp_valid_tool_name(long_name, 129));
    reg_free(methods);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_specification_names),
        cmocka_unit_test(test_input_schema_narrowed_to_object),
        cmocka_unit_test(test_portable_names),
        cmocka_unit_test(test_config_lists_and_renames),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_paging),
        cmocka_unit_test(test_handshake),
        cmocka_unit_test(test_instructions),
        cmocka_unit_test(test_tool_results),
        cmocka_unit_test(test_reserved_names),
        cmocka_unit_test(test_duplicate_params_members),
        cmocka_unit_test(test_description_of_long_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
