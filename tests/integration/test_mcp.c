/* SPDX-License-Identifier: MIT */
/*
 * MCP through the real binary: the tool names a host gets from the default config, and how a
 * session ends when the host closes rpcd's input (calls cancelled), next to plain JSON-RPC
 * (every request answered).
 */
#include "harness.h"

#include <jansson.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

typedef struct fixture {
    char *dir;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || !(f->dir = harness_temp_dir()))
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    harness_remove_dir(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static long long now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static harness_process *start(const char *config)
{
    harness_argv args = harness_rpcd_argv(config);
    assert_non_null(args.argv[0]);
    harness_process *rpcd = harness_start(args.argv);
    assert_non_null(rpcd);
    return rpcd;
}

static void send_text(harness_process *rpcd, const char *text)
{
    assert_int_equal(harness_write_text(rpcd, text, HARNESS_TIMEOUT_MS), HARNESS_OK);
}

/* The next line of stdout, parsed. */
static json_t *next_message(harness_process *rpcd)
{
    char *line = NULL;
    int status = harness_read_line(rpcd, HARNESS_TIMEOUT_MS, &line, NULL, NULL);
    if (status != HARNESS_OK)
        fail_msg("no line from rpcd (status %d); stderr:\n%s", status, harness_stderr(rpcd));
    json_error_t error;
    json_t *message = json_loads(line, JSON_DECODE_ANY, &error);
    if (!message)
        fail_msg("not JSON: %s", line);
    free(line);
    return message;
}

/* The next response (progress notifications before it skipped); its id must be id. */
static json_t *next_response(harness_process *rpcd, const char *id)
{
    json_t *message = next_message(rpcd);
    while (json_object_get(message, "method")) {
        json_decref(message);
        message = next_message(rpcd);
    }
    json_t *got = json_object_get(message, "id");
    char *text = json_dumps(got, JSON_ENCODE_ANY);
    if (!harness_json_equal(id, text))
        fail_msg("response to %s, expected one to %s", text, id);
    free(text);
    return message;
}

static const char initialize[] =
    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
    "\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}\n"
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

/*
 * Lists every tool of the config (every page) and checks each name against the portable
 * pattern, which hosts and model APIs that refuse anything else accept. Returns how many tools.
 */
static size_t check_tool_names(const char *config, const char *const expected[])
{
    regex_t portable;
    assert_int_equal(regcomp(&portable, "^[a-zA-Z0-9_-]{1,64}$", REG_EXTENDED | REG_NOSUB), 0);
    harness_process *rpcd = start(config);
    send_text(rpcd, initialize);
    json_decref(next_response(rpcd, "0"));
    size_t count = 0, pages = 0, found = 0;
    char *cursor = NULL;
    do {
        char request[256];
        if (cursor)
            snprintf(request, sizeof request,
                     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":"
                     "{\"cursor\":\"%s\"}}\n",
                     cursor);
        else
            snprintf(request, sizeof request,
                     "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n");
        free(cursor);
        cursor = NULL;
        send_text(rpcd, request);
        json_t *response = next_response(rpcd, "1");
        json_t *result = json_object_get(response, "result");
        json_t *tools = json_object_get(result, "tools");
        assert_true(json_is_array(tools));
        size_t index;
        json_t *tool;
        json_array_foreach(tools, index, tool)
        {
            const char *name = json_string_value(json_object_get(tool, "name"));
            assert_non_null(name);
            if (regexec(&portable, name, 0, NULL, 0) != 0)
                fail_msg("tool name '%s' is not ^[a-zA-Z0-9_-]{1,64}$", name);
            for (size_t i = 0; expected[i]; i++)
                found += strcmp(name, expected[i]) == 0;
            count++;
        }
        const char *next = json_string_value(json_object_get(result, "nextCursor"));
        if (next)
            cursor = strdup(next);
        json_decref(response);
        assert_true(++pages < 100);
    } while (cursor);
    size_t wanted = 0;
    while (expected[wanted])
        wanted++;
    assert_int_equal(found, wanted);
    harness_close_stdin(rpcd);
    harness_exit status;
    assert_int_equal(harness_wait(rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    assert_true(status.exited && status.code == 0);
    harness_free(rpcd);
    regfree(&portable);
    return count;
}

/* The default config's tools all have portable names: hosts that refuse others take them all. */
static void test_default_config_tool_names(void **state)
{
    (void)state;
    static const char *const expected[] = {"echo", "subtract", "sum", "progress", "sleep", NULL};
    assert_true(check_tool_names(harness_env("RPCD_BUILD_CONFIG"), expected) >= 5);
}

/* With fail too, whose methods have dots: they are tools under their portable names. */
static void test_dotted_methods_get_portable_names(void **state)
{
    fixture *f = *state;
    char *plugins = harness_bundled_plugin_sections();
    assert_non_null(plugins);
    char *config = harness_write_file(f->dir, "rpcd.conf", plugins);
    assert_non_null(config);
    static const char *const expected[] = {"fail_invalid_params", "fail_custom", "echo", NULL};
    check_tool_names(config, expected);
    free(config);
    free(plugins);
}

/* A 3 s sleep, with a progress token so that its first report says it runs. */
static const char slow_call[] =
    "{\"jsonrpc\":\"2.0\",\"id\":\"slow\",\"method\":\"tools/call\",\"params\":{\"name\":"
    "\"sleep\",\"arguments\":{\"ms\":3000},\"_meta\":{\"progressToken\":\"t\"}}}\n";

/*
 * The same for ten minutes: longer than any bound on a wait (HARNESS_TIMEOUT_MS, even scaled), so
 * an rpcd that exits within one did not wait for the call, however slow the machine.
 */
static const char endless_call[] =
    "{\"jsonrpc\":\"2.0\",\"id\":\"slow\",\"method\":\"tools/call\",\"params\":{\"name\":"
    "\"sleep\",\"arguments\":{\"ms\":600000},\"_meta\":{\"progressToken\":\"t\"}}}\n";

/*
 * An MCP host ends the session by closing rpcd's input and kills it 2 s later (the SDK sends
 * SIGTERM, then SIGKILL): the call in flight is cancelled at once, answered -32800, and rpcd
 * exits 0 well before the host would signal it.
 */
static void test_mcp_session_end_cancels_calls(void **state)
{
    (void)state;
    harness_process *rpcd = start(harness_env("RPCD_BUILD_CONFIG"));
    send_text(rpcd, initialize);
    json_decref(next_response(rpcd, "0"));
    send_text(rpcd, endless_call);
    json_t *report = next_message(rpcd);
    assert_string_equal(json_string_value(json_object_get(report, "method")),
                        "notifications/progress");
    json_decref(report);
    harness_close_stdin(rpcd);
    json_t *response = next_response(rpcd, "\"slow\"");
    json_t *error = json_object_get(response, "error");
    assert_int_equal(json_integer_value(json_object_get(error, "code")), -32800);
    json_decref(response);
    /* Within a bound on a wait, far from the ten minutes the call asked for: it did not wait
     * for the call (how soon is a figure of the machine's, not the test's). */
    harness_exit status;
    assert_int_equal(harness_wait(rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    if (!status.exited || status.code != 0)
        fail_msg("rpcd: %s\n%s", harness_exit_describe(&status), harness_stderr(rpcd));
    assert_non_null(strstr(harness_stderr(rpcd),
                           "end of input of an MCP session: cancelling the calls in flight"));
    harness_free(rpcd);
}

/* server/discover begins an MCP session too (the stateless revision has no initialize). */
static void test_discover_session_end_cancels_calls(void **state)
{
    (void)state;
    harness_process *rpcd = start(harness_env("RPCD_BUILD_CONFIG"));
    send_text(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"server/discover\"}\n");
    json_decref(next_response(rpcd, "0"));
    send_text(rpcd, endless_call);
    json_decref(next_message(rpcd)); /* the first report: it runs */
    harness_close_stdin(rpcd);
    json_t *response = next_response(rpcd, "\"slow\"");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(response, "error"), "code")), -32800);
    json_decref(response);
    harness_exit status;
    assert_int_equal(harness_wait(rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    assert_true(status.exited && status.code == 0);
    harness_free(rpcd);
}

/* A client of the stateless revision may send neither: its version in _meta tells it is one. */
static void test_stateless_session_end_cancels_calls(void **state)
{
    (void)state;
    harness_process *rpcd = start(harness_env("RPCD_BUILD_CONFIG"));
    send_text(
        rpcd,
        "{\"jsonrpc\":\"2.0\",\"id\":\"slow\",\"method\":\"tools/call\",\"params\":{"
        "\"name\":\"sleep\",\"arguments\":{\"ms\":600000},\"_meta\":{\"progressToken\":"
        "\"t\",\"io.modelcontextprotocol/"
        "protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}\n");
    json_decref(next_message(rpcd)); /* the first report: it runs */
    harness_close_stdin(rpcd);
    json_t *response = next_response(rpcd, "\"slow\"");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(response, "error"), "code")), -32800);
    json_decref(response);
    harness_exit status;
    assert_int_equal(harness_wait(rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    assert_true(status.exited && status.code == 0);
    harness_free(rpcd);
}

/*
 * Calls that ignore the cancellation get shutdown_grace_ms from the end of input, as after a
 * stop: then the running ones are named and left unanswered, one that never got a worker is
 * answered -32800, and rpcd exits 0 without waiting for them.
 */
static void test_mcp_session_end_leaves_stuck_calls(void **state)
{
    fixture *f = *state;
    char *text = NULL;
    assert_true(asprintf(&text,
                         "[rpcd]\nworkers = 2\nshutdown_grace_ms = 300\n[plugin stuck]\n"
                         "path = %s\n",
                         harness_env("RPCD_FIXTURE_STUCK")) > 0);
    char *config = harness_write_file(f->dir, "rpcd.conf", text);
    free(text);
    assert_non_null(config);
    harness_process *rpcd = start(config);
    send_text(rpcd, initialize);
    json_decref(next_response(rpcd, "0"));
    for (int i = 0; i < 3; i++) {
        char call[160];
        snprintf(call, sizeof call,
                 "{\"jsonrpc\":\"2.0\",\"id\":\"c%d\",\"method\":\"tools/call\","
                 "\"params\":{\"name\":\"stuck_block\"}}\n",
                 i);
        send_text(rpcd, call);
    }
    /* Both workers held: the third call waits for one. */
    for (int blocked = 0, tries = 0; blocked < 2; tries++) {
        assert_true(tries < 1000);
        send_text(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":\"n\",\"method\":\"stuck.count\"}\n");
        json_t *response = next_response(rpcd, "\"n\"");
        blocked = (int)json_integer_value(
            json_object_get(json_object_get(response, "result"), "blocked"));
        json_decref(response);
    }
    long long closed = now_ms();
    harness_close_stdin(rpcd);
    harness_lines lines;
    assert_int_equal(harness_read_all_lines(rpcd, HARNESS_TIMEOUT_MS, &lines), HARNESS_OK);
    assert_int_equal(lines.count, 1);
    assert_true(harness_json_equal(
        "{\"jsonrpc\":\"2.0\",\"id\":\"c2\",\"error\":{\"code\":-32800,\"message\":"
        "\"Request cancelled\",\"data\":{\"exception\":\"RPCD_ERR_CANCELLED\",\"plugin\":"
        "\"stuck\",\"method\":\"stuck.block\",\"detail\":\"rpcd stopped before the call ran\"}}}",
        lines.items[0]));
    harness_lines_free(&lines);
    harness_exit status;
    assert_int_equal(harness_wait(rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    assert_true(status.exited && status.code == 0);
    /* Not before the grace period; after it without waiting for the calls, which never end. */
    assert_true(now_ms() - closed >= 250);
    assert_non_null(strstr(harness_stderr(rpcd), "left unanswered"));
    harness_free(rpcd);
    free(config);
}

/*
 * Plain JSON-RPC (no initialize, no server/discover, even a tools/call): the end of input waits
 * for the call, which is answered with its result before rpcd exits.
 */
static void test_plain_session_end_answers_calls(void **state)
{
    (void)state;
    harness_process *rpcd = start(harness_env("RPCD_BUILD_CONFIG"));
    send_text(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":\"plain\",\"method\":\"sleep\","
                    "\"params\":{\"ms\":3000,\"_meta\":{\"progressToken\":\"t\"}}}\n");
    json_decref(next_message(rpcd)); /* the first report: it runs */
    send_text(rpcd, slow_call);
    json_decref(next_message(rpcd));
    harness_close_stdin(rpcd);
    for (int i = 0; i < 2; i++) {
        json_t *response = next_message(rpcd);
        while (json_object_get(response, "method")) {
            json_decref(response);
            response = next_message(rpcd);
        }
        const char *id = json_string_value(json_object_get(response, "id"));
        assert_non_null(id);
        json_t *result = json_object_get(response, "result");
        if (strcmp(id, "plain") == 0) {
            assert_int_equal(json_integer_value(json_object_get(result, "slept_ms")), 3000);
        } else {
            assert_string_equal(id, "slow");
            assert_true(json_is_false(json_object_get(result, "isError")));
        }
        json_decref(response);
    }
    harness_exit status;
    assert_int_equal(harness_wait(rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    assert_true(status.exited && status.code == 0);
    harness_free(rpcd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_default_config_tool_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dotted_methods_get_portable_names, setup, teardown),
        cmocka_unit_test(test_mcp_session_end_cancels_calls),
        cmocka_unit_test(test_discover_session_end_cancels_calls),
        cmocka_unit_test(test_stateless_session_end_cancels_calls),
        cmocka_unit_test_setup_teardown(test_mcp_session_end_leaves_stuck_calls, setup, teardown),
        cmocka_unit_test(test_plain_session_end_answers_calls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
