/* SPDX-License-Identifier: MIT */
/*
 * Fixture: every host function on a call, given each class of bad argument, with the statuses
 * they returned as the call's result, so that a test can hold them side by side in rpcd's
 * process and in a plugin host (tests/integration/test_argument_checks.c). Run with
 * max_depth = 4, and a call whose params hold a _meta.
 */
#include <rpcd/plugin.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const rpcd_host_api *host;

/* The statuses so far, as the members of a JSON object. */
typedef struct tally {
    char text[4096];
    size_t used;
} tally;

static void note(tally *t, const char *name, int status)
{
    int length = snprintf(t->text + t->used, sizeof t->text - t->used, "%s\"%s\":%d",
                          t->used > 1 ? "," : "", name, status);
    if (length > 0 && (size_t)length < sizeof t->text - t->used)
        t->used += (size_t)length;
}

/* Deeper than max_depth = 4. */
static const char too_deep[] = "[[[[[[1]]]]]]";

/* bad_arguments.probe: {"NAME": status, ...} for each host function and bad argument. */
static int probe(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    tally t = {"{", 1};
    size_t deep = sizeof too_deep - 1;
    note(&t, "result_null", host->call_result(call, NULL, 0));
    note(&t, "result_empty", host->call_result(call, "", 0));
    note(&t, "result_not_json", host->call_result(call, "{", 1));
    note(&t, "result_two_values", host->call_result(call, "1 2", 3));
    note(&t, "result_too_deep", host->call_result(call, too_deep, deep));
    note(&t, "result_not_utf8", host->call_result(call, "\"\xff\"", 3));
    note(&t, "tool_null", host->call_tool_result(call, NULL, 0));
    note(&t, "tool_not_json", host->call_tool_result(call, "{", 1));
    note(&t, "tool_not_object", host->call_tool_result(call, "[1]", 3));
    note(&t, "tool_no_content", host->call_tool_result(call, "{}", 2));
    note(&t, "tool_too_deep", host->call_tool_result(call, too_deep, deep));
    note(&t, "fail_ok", host->call_fail(call, RPCD_OK, "m", NULL, 0));
    note(&t, "fail_application", host->call_fail(call, RPCD_ERR_APPLICATION, "m", NULL, 0));
    note(&t, "fail_data_not_json", host->call_fail(call, RPCD_ERR_INTERNAL, "m", "{", 1));
    note(&t, "fail_data_too_deep", host->call_fail(call, RPCD_ERR_INTERNAL, "m", too_deep, deep));
    note(&t, "fail_code_no_message", host->call_fail_code(call, 7, NULL, NULL, 0));
    note(&t, "fail_code_data_not_json", host->call_fail_code(call, 7, "m", "{", 1));
    note(&t, "notify_null", host->call_notify(call, NULL, NULL, 0));
    note(&t, "notify_not_utf8", host->call_notify(call, "\xff", NULL, 0));
    note(&t, "notify_empty_name", host->call_notify(call, "", NULL, 0));
    note(&t, "notify_rpc", host->call_notify(call, "rpc.x", NULL, 0));
    note(&t, "notify_mcp", host->call_notify(call, "notifications/progress", "{}", 2));
    note(&t, "notify_number", host->call_notify(call, "bad/n", "1", 1));
    note(&t, "notify_string", host->call_notify(call, "bad/s", " \"s\"", 4));
    note(&t, "notify_not_json", host->call_notify(call, "bad/j", "{", 1));
    note(&t, "notify_too_deep", host->call_notify(call, "bad/d", too_deep, deep));
    note(&t, "notify_no_params", host->call_notify(call, "bad/e", "", 0));
    note(&t, "progress_nan", host->call_progress(call, NAN, 1, NULL));
    note(&t, "progress_infinite", host->call_progress(call, INFINITY, 1, NULL));
    note(&t, "progress_total_nan", host->call_progress(call, 1, NAN, NULL));
    note(&t, "progress_not_utf8", host->call_progress(call, 1, 2, "\xff"));
    char out[4];
    size_t length = 0;
    note(&t, "meta_no_room", host->call_meta(call, NULL, NULL, 8, NULL));
    note(&t, "meta_not_utf8", host->call_meta(call, "\xff", out, sizeof out, NULL));
    note(&t, "meta_too_small", host->call_meta(call, NULL, out, sizeof out, &length));
    note(&t, "complete_deferred", host->call_complete(call, RPCD_DEFERRED));
    if (t.used + 1 < sizeof t.text)
        t.text[t.used++] = '}';
    return host->call_result(call, t.text, t.used);
}

/*
 * bad_arguments.shaped, whose output schema asks for an object: a result that is not one is
 * refused, as is a complete tool result whose structuredContent is not one; then a result that
 * fits, with the statuses of both: {"n":1,"result":S,"tool_result":T}.
 */
static int shaped(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    int result = host->call_result(call, "[1]", 3);
    static const char tool[] = "{\"content\":[],\"structuredContent\":[1]}";
    int tool_result = host->call_tool_result(call, tool, sizeof tool - 1);
    char text[128];
    int length = snprintf(text, sizeof text, "{\"n\":1,\"result\":%d,\"tool_result\":%d}", result,
                          tool_result);
    return host->call_result(call, text, (size_t)length);
}

static int bad_arguments_init(rpcd_plugin *plugin, const rpcd_host_api *api, void **state,
                              char *error, size_t error_size)
{
    (void)state, (void)error, (void)error_size;
    host = api;
    rpcd_method method = rpcd_method_new("bad_arguments.probe", probe);
    int status = host->register_method(plugin, &method);
    if (status != RPCD_OK)
        return status;
    method = rpcd_method_new("bad_arguments.shaped", shaped);
    method.output_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"number\"}},"
                           "\"required\":[\"n\"]}";
    return host->register_method(plugin, &method);
}

RPCD_PLUGIN_DEFINE("bad_arguments", "1.0.0", bad_arguments_init, NULL);
