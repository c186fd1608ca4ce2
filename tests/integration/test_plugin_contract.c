/* SPDX-License-Identifier: MIT */
/*
 * What a plugin hands over cannot break the protocol: one line per message whatever its JSON
 * looks like, one response per call however many threads complete it, the meanings of the ABI
 * minor it was built against, no forged daemon notifications, and messages that say why.
 */
#include "run_session.h"

#include <jansson.h>

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define RUN_TIMEOUT_MS test_time_ms(120000)

/* ---- One message, one line ------------------------------------------------------------ */

/* The value of the fixture's pretty-printed JSON. */
static const char pretty_value[] = "{\"a\":[1,2],\"s\":\"x\\ny\"}";

/*
 * Pretty-printed JSON through every way a plugin hands JSON over (result, deferred result,
 * call_fail data, call_fail_code data, call_notify params, structuredContent, the params_schema
 * of tools/list), and a client's raw CR echoed back: each message is one line (run_rpcd checks
 * every line), with the same value.
 */
static void test_pretty_json_stays_on_one_line(void **state)
{
    run_fixture *f = *state;
    char *config = run_format("[rpcd]\nworkers = 1\n[plugin multiline]\npath = %s\n"
                              "[plugin echo]\npath = %s\n",
                              run_env("RPCD_FIXTURE_MULTILINE"), run_env("RPCD_PLUGIN_ECHO"));
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"multiline.result\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"multiline.fail\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"multiline.fail_code\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"multiline.notify\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"multiline.deferred\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"echo\",\"params\":{\"a\":\r1,\r\"b\":[\r]}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"initialize\",\"params\":{"
        "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
        "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n"
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/list\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{"
        "\"name\":\"multiline_result\",\"arguments\":{}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/call\",\"params\":{"
        "\"name\":\"echo\",\"arguments\":{\"a\":\r1}}}\n";
    run_session s;
    run_rpcd(f, config, input, &s);
    assert_int_equal(s.count, 11); /* ten responses and one notification */

    run_assert_json(json_object_get(run_response(&s, 1), "result"), pretty_value);
    json_t *error = json_object_get(run_response(&s, 2), "error");
    assert_int_equal(json_integer_value(json_object_get(error, "code")), -32602);
    run_assert_json(json_object_get(json_object_get(error, "data"), "data"), pretty_value);
    error = json_object_get(run_response(&s, 3), "error");
    run_assert_json(error, "{\"code\":42,\"message\":\"pretty code\",\"data\":{\"a\":[1,2],"
                           "\"s\":\"x\\ny\"}}");
    run_assert_json(json_object_get(run_response(&s, 4), "result"), "0");
    json_t *notification = NULL;
    for (size_t i = 0; i < s.count; i++)
        if (json_object_get(s.messages[i], "method"))
            notification = s.messages[i];
    assert_non_null(notification);
    run_assert_json(notification, "{\"jsonrpc\":\"2.0\",\"method\":\"multiline/event\",\"params\":"
                                  "{\"a\":[1,2],\"s\":\"x\\ny\"}}");
    run_assert_json(json_object_get(run_response(&s, 5), "result"), pretty_value);
    run_assert_json(json_object_get(run_response(&s, 6), "result"), "{\"a\":1,\"b\":[]}");

    json_t *tools = json_object_get(json_object_get(run_response(&s, 8), "result"), "tools");
    json_t *schema = NULL;
    for (size_t i = 0; i < json_array_size(tools); i++)
        if (strcmp(json_string_value(json_object_get(json_array_get(tools, i), "name")),
                   "multiline_result") == 0)
            schema = json_object_get(json_array_get(tools, i), "inputSchema");
    run_assert_json(schema, "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}");

    json_t *result = json_object_get(run_response(&s, 9), "result");
    run_assert_json(json_object_get(result, "structuredContent"), pretty_value);
    run_assert_json(json_object_get(result, "isError"), "false");
    result = json_object_get(run_response(&s, 10), "result");
    run_assert_json(json_object_get(result, "structuredContent"), "{\"a\":1}");
    run_session_free(&s);
    free(config);
}

/* ---- Notifications rpcd owns ----------------------------------------------------------- */

/*
 * A plugin cannot send the notifications rpcd owns: each is refused with -7 and a log line, and
 * never reaches stdout. A name of its own goes out.
 */
static void test_reserved_notifications_refused(void **state)
{
    run_fixture *f = *state;
    char *config = run_format("[rpcd]\nworkers = 1\n[plugin forge]\npath = %s\n",
                              run_env("RPCD_FIXTURE_FORGE_NOTIFY"));
    static const char *const reserved[] = {
        "notifications/progress",
        "notifications/cancelled",
        "notifications/message",
        "notifications/tools/list_changed",
        "notifications/initialized",
        "$/cancelRequest",
        "$/progress",
        "rpc.anything",
        "tools/list",
    };
    enum { RESERVED = sizeof reserved / sizeof reserved[0] };
    char input[4096];
    size_t used = 0;
    for (size_t i = 0; i < RESERVED; i++)
        used += (size_t)snprintf(input + used, sizeof input - used,
                                 "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"forge.notify\","
                                 "\"params\":[\"%s\"]}\n",
                                 i + 1, reserved[i]);
    snprintf(
        input + used, sizeof input - used,
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"forge.notify\",\"params\":[\"forge/own\"]}\n");
    run_session s;
    run_rpcd(f, config, input, &s);
    assert_int_equal(s.count, RESERVED + 2);
    for (size_t i = 0; i < RESERVED; i++) {
        run_assert_json(json_object_get(run_response(&s, (json_int_t)i + 1), "result"), "-7");
        char *logged = run_format("forge: forge.notify tried to send a notification \"%s\", a name "
                                  "rpcd reserves for itself; refused",
                                  reserved[i]);
        if (!strstr(s.run.err, logged))
            print_error("not in stderr: %s\n%s\n", logged, s.run.err);
        assert_non_null(strstr(s.run.err, logged));
        free(logged);
    }
    run_assert_json(json_object_get(run_response(&s, 0), "result"), "0");
    size_t notifications = 0;
    for (size_t i = 0; i < s.count; i++) {
        json_t *method = json_object_get(s.messages[i], "method");
        if (method) {
            assert_string_equal(json_string_value(method), "forge/own");
            notifications++;
        }
    }
    assert_int_equal(notifications, 1);
    run_session_free(&s);
    free(config);
}

/* ---- Messages ------------------------------------------------------------------------- */

/*
 * Each refused method name is logged with its own reason, a name that is not UTF-8 escaped;
 * a plugin registering one name twice is told so, which stops start-up (exit 78).
 */
static void test_refused_names_say_why(void **state)
{
    run_fixture *f = *state;
    char *config = run_format("[plugin bad_names]\npath = %s\n", run_env("RPCD_FIXTURE_BAD_NAMES"));
    char *path = harness_write_file(f->dir, "rpcd.conf", config);
    assert_non_null(path);
    harness_argv args = harness_rpcd_argv(path);
    harness_run_result result;
    harness_run(args.argv, "", 0, RUN_TIMEOUT_MS, &result);
    assert_int_equal(result.io_status, HARNESS_OK);
    assert_true(result.status.exited);
    assert_int_equal(result.status.code, 78);
    static const char *const expected[] = {
        "bad_names: refused to register method 'bad\\xff\\x01name': the name is not UTF-8",
        "bad_names: refused to register method 'rpc.mine': names starting with 'rpc.' are "
        "reserved by JSON-RPC",
        "bad_names: refused to register method 'notifications/progress': names starting with "
        "'notifications/' are reserved by MCP",
        "bad_names: refused to register method '$/cancelRequest': names starting with '$/' are "
        "reserved for protocol notifications ($/cancelRequest)",
        "bad_names: refused to register method 'initialize': the name is an MCP method that "
        "rpcd answers itself",
        "bad_names: refused to register method '': an empty name",
        "bad_names: refused to register method 'bad.schema': its params_schema is not JSON",
        "[plugin bad_names] registers method 'twice' twice",
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        if (!strstr(result.err, expected[i]))
            print_error("not in stderr: %s\n%s\n", expected[i], result.err);
        assert_non_null(strstr(result.err, expected[i]));
    }
    assert_null(strchr(result.err, '\xff'));
    assert_null(strchr(result.err, '\x01'));
    assert_null(strstr(result.err, "registered by both"));
    harness_run_result_free(&result);
    free(path);
    free(config);
}

/* A call still running when the grace period of a stop ends is named: plugin, method, id. */
static void test_calls_left_at_stop_are_named(void **state)
{
    run_fixture *f = *state;
    char *config = run_format("[rpcd]\nworkers = 2\nshutdown_grace_ms = 100\n"
                              "[plugin concurrency]\npath = %s\n",
                              run_env("RPCD_FIXTURE_CONCURRENCY"));
    char *path = harness_write_file(f->dir, "rpcd.conf", config);
    assert_non_null(path);
    harness_argv args = harness_rpcd_argv(path);
    harness_process *rpcd = harness_start(args.argv);
    assert_non_null(rpcd);
    /* The pool takes calls in order, and the two meet calls return only once both workers
     * are in one: by then the held call has returned RPCD_DEFERRED. */
    assert_int_equal(
        harness_write_text(rpcd,
                           "{\"jsonrpc\":\"2.0\",\"id\":\"stuck\",\"method\":\"deferred.hold\"}\n"
                           "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"parallel.meet\","
                           "\"params\":{\"count\":2}}\n"
                           "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"parallel.meet\","
                           "\"params\":{\"count\":2}}\n",
                           HARNESS_TIMEOUT_MS),
        HARNESS_OK);
    for (int lines = 0; lines < 2; lines++) {
        char *line = NULL;
        assert_int_equal(harness_read_line(rpcd, HARNESS_TIMEOUT_MS, &line, NULL, NULL),
                         HARNESS_OK);
        free(line);
    }
    assert_int_equal(harness_signal(rpcd, SIGTERM), 0);
    harness_exit status;
    assert_int_equal(harness_wait(rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    assert_true(status.exited);
    static const char expected[] = "left unanswered: plugin concurrency, method deferred.hold, "
                                   "id \"stuck\" (deferred, not completed)";
    if (!strstr(harness_stderr(rpcd), expected))
        print_error("not in stderr: %s\n%s\n", expected, harness_stderr(rpcd));
    assert_non_null(strstr(harness_stderr(rpcd), expected));
    harness_free(rpcd);
    free(path);
    free(config);
}

/* ---- Meanings kept for old plugins ------------------------------------------------------ */

/*
 * Plugins built against the released 1.0, 1.1, 1.2 and 1.3 headers: a handler's 1 is an unknown
 * status from 1.0 (answered -32603, and rpcd still ends at end of input) and RPCD_DEFERRED from
 * 1.1; the flag bit 0x2 makes a method quick only from 1.2, when RPCD_METHOD_QUICK came; a 1.3
 * descriptor, shorter than 1.4's, registers and runs as before.
 */
/*
 * A plugin built against the released 1.4 header: its methods are tools (its descriptor ends
 * before mcp_role), and prompts/list, which rpcd answers itself from 1.5, stays the method it
 * registered under that name.
 */
static void test_abi_1_4_keeps_its_names(void **state)
{
    run_fixture *f = *state;
    char *config = run_format("[plugin abi14]\npath = %s\n", run_env("RPCD_FIXTURE_ABI_1_4"));
    static const char input[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/list\"}\n"
                                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n"
                                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"abi14.one\"}\n";
    run_session s;
    run_rpcd(f, config, input, &s);
    run_assert_json(json_object_get(run_response(&s, 1), "result"), "\"mine\"");
    json_t *tools = json_object_get(json_object_get(run_response(&s, 2), "result"), "tools");
    assert_int_equal(json_array_size(tools), 3);
    run_assert_json(json_object_get(run_response(&s, 3), "result"), "\"completed\"");
    run_session_free(&s);
    free(config);
}

/* The old minors' meanings, with every plugin in rpcd's process or (isolation) each in a host. */
static void old_minors_keep_their_meanings(run_fixture *f, const char *isolation)
{
    char *config =
        run_format("[rpcd]\nworkers = 2\nisolation = %s\n[plugin abi10]\npath = %s\n"
                   "[plugin abi11]\npath = %s\n[plugin abi12]\npath = %s\n"
                   "[plugin abi13]\npath = %s\n",
                   isolation, run_env("RPCD_FIXTURE_ABI_1_0"), run_env("RPCD_FIXTURE_ABI_1_1"),
                   run_env("RPCD_FIXTURE_ABI_1_2"), run_env("RPCD_FIXTURE_ABI_1_3"));
    static const char input[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"abi10.one\"}\n"
                                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"abi11.one\"}\n"
                                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"abi12.one\"}\n"
                                "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"abi10.on_reader\"}\n"
                                "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"abi11.on_reader\"}\n"
                                "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"abi12.on_reader\"}\n"
                                "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"abi13.one\"}\n"
                                "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"abi13.on_reader\"}\n";
    run_session s;
    run_rpcd(f, config, input, &s);
    assert_int_equal(s.count, 8);
    run_assert_json(
        json_object_get(run_response(&s, 1), "error"),
        "{\"code\":-32603,\"message\":\"Internal error\",\"data\":{\"exception\":"
        "\"unknown status\",\"status\":1,\"plugin\":\"abi10\",\"method\":\"abi10.one\"}}");
    run_assert_json(json_object_get(run_response(&s, 2), "result"), "\"completed\"");
    run_assert_json(json_object_get(run_response(&s, 3), "result"), "\"completed\"");
    run_assert_json(json_object_get(run_response(&s, 4), "result"), "false");
    run_assert_json(json_object_get(run_response(&s, 5), "result"), "false");
    run_assert_json(json_object_get(run_response(&s, 6), "result"), "true");
    run_assert_json(json_object_get(run_response(&s, 7), "result"), "\"completed\"");
    run_assert_json(json_object_get(run_response(&s, 8), "result"), "true");
    run_session_free(&s);
    free(config);
}

static void test_old_minors_keep_their_meanings(void **state)
{
    old_minors_keep_their_meanings(*state, "none");
}

/*
 * The same isolated: a host runs the same .so, and a 1.0 handler's status 1 reaches rpcd as a
 * status to judge by the plugin's minor, not as 1.1's RPCD_DEFERRED.
 */
static void test_old_minors_keep_their_meanings_isolated(void **state)
{
    old_minors_keep_their_meanings(*state, "process");
}

/*
 * A failure with one of MCP's protocol codes (-32021) in tools/call: the JSON-RPC error itself
 * from a plugin built against 1.6 or later, the tool error it always was from one built earlier;
 * in a plain call, the JSON-RPC error from both.
 */
static void protocol_codes_in_tools_call(run_fixture *f, const char *isolation)
{
    char *config =
        run_format("[rpcd]\nisolation = %s\n[plugin abi15]\npath = %s\n"
                   "[plugin abi16]\npath = %s\n",
                   isolation, run_env("RPCD_FIXTURE_ABI_1_5"), run_env("RPCD_FIXTURE_ABI_1_6"));
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
        "{\"name\":\"abi15_fail_protocol\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
        "{\"name\":\"abi16_fail_protocol\"}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"abi15.fail_protocol\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"abi16.fail_protocol\"}\n";
    static const char error[] =
        "{\"code\":-32021,\"message\":\"Missing required client "
        "capability\",\"data\":{\"requiredCapabilities\":{\"sampling\":{}}}}";
    run_session s;
    run_rpcd(f, config, input, &s);
    assert_int_equal(s.count, 4);
    json_t *tool_error = json_object_get(run_response(&s, 1), "result");
    run_assert_json(json_object_get(tool_error, "isError"), "true");
    assert_non_null(strstr(json_string_value(json_object_get(
                               json_array_get(json_object_get(tool_error, "content"), 0), "text")),
                           "Missing required client capability"));
    run_assert_json(json_object_get(run_response(&s, 2), "error"), error);
    assert_null(json_object_get(run_response(&s, 2), "result"));
    run_assert_json(json_object_get(run_response(&s, 3), "error"), error);
    run_assert_json(json_object_get(run_response(&s, 4), "error"), error);
    run_session_free(&s);
    free(config);
}

static void test_protocol_codes_in_tools_call(void **state)
{
    protocol_codes_in_tools_call(*state, "none");
}

static void test_protocol_codes_in_tools_call_isolated(void **state)
{
    protocol_codes_in_tools_call(*state, "process");
}

/*
 * The task flags, 0x8 (RPCD_METHOD_TASK) and 0x10 (RPCD_METHOD_TASK_REQUIRED), keep their
 * meaning from a plugin built against 1.7 and have none from one built against 1.6: with the
 * 1.7 plugin, server/discover names the Tasks extension and a 2026-07-28 client that does not
 * declare it is refused -32021 by the tool that requires a task; with the 1.6 plugin, nothing
 * names the extension and the same call is answered. The tool that only may run as a task is
 * answered with both.
 */
static void task_flags_by_minor(run_fixture *f, const char *isolation, int minor)
{
    char *fixture = run_format("RPCD_FIXTURE_ABI_1_%d", minor);
    char *config = run_format("[rpcd]\nisolation = %s\n[plugin abi1%d]\npath = %s\n", isolation,
                              minor, run_env(fixture));
#define TASK_META                                                                                  \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                       \
    "\"io.modelcontextprotocol/clientCapabilities\":{}}"
    char *input = run_format(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{" TASK_META "}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"abi1%d_task_required\",\"arguments\":{}," TASK_META "}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"abi1%d_task\",\"arguments\":{}," TASK_META "}}\n",
        minor, minor);
#undef TASK_META
    run_session s;
    run_rpcd(f, config, input, &s);
    assert_int_equal(s.count, 3);
    const json_t *capabilities =
        json_object_get(json_object_get(run_response(&s, 1), "result"), "capabilities");
    assert_non_null(capabilities);
    const json_t *extension = json_object_get(json_object_get(capabilities, "extensions"),
                                              "io.modelcontextprotocol/tasks");
    if (minor >= 7) {
        assert_non_null(extension);
        run_assert_json(json_object_get(json_object_get(run_response(&s, 2), "error"), "code"),
                        "-32021");
    } else {
        assert_null(extension);
        run_assert_json(json_object_get(json_object_get(run_response(&s, 2), "result"), "isError"),
                        "false");
    }
    run_assert_json(json_object_get(json_object_get(run_response(&s, 3), "result"), "isError"),
                    "false");
    run_session_free(&s);
    free(input);
    free(config);
    free(fixture);
}

static void test_task_flags_by_minor(void **state)
{
    task_flags_by_minor(*state, "none", 6);
    task_flags_by_minor(*state, "none", 7);
}

static void test_task_flags_by_minor_isolated(void **state)
{
    task_flags_by_minor(*state, "process", 6);
    task_flags_by_minor(*state, "process", 7);
}

/* ---- log_text (1.3) ------------------------------------------------------------------- */

/*
 * A plugin logs through log_text, from init and from a handler: each line carries the level and
 * the plugin's name, the text is not a format, and newlines, tabs and an escape sequence in it
 * come out escaped on the one line; a debug line stays below the default level.
 */
static void test_log_text_is_one_line_per_call(void **state)
{
    run_fixture *f = *state;
    char *config = run_format("[plugin logtext]\npath = %s\n", run_env("RPCD_FIXTURE_LOG_TEXT"));
    static const char input[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"log.say\","
                                "\"params\":[\"two\\nlines\\tand \\u001b[31mred\"]}\n";
    run_session s;
    run_rpcd(f, config, input, &s);
    run_assert_json(json_object_get(run_response(&s, 1), "result"), "true");
    static const char *const expected[] = {
        "\nrpcd: info: logtext: ready, 100% plain %s %n\n",
        "\nrpcd: warning: logtext: [\"two\\nlines\\tand \\x1b[31mred\"]\n",
    };
    char *lines = run_format("\n%s", s.run.err); /* every line, the first too, after a newline */
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        if (!strstr(lines, expected[i]))
            print_error("not in stderr: %s\n%s\n", expected[i], s.run.err);
        assert_non_null(strstr(lines, expected[i]));
    }
    free(lines);
    assert_null(strstr(s.run.err, "below the default level"));
    assert_null(strchr(s.run.err, '\x1b'));
    assert_null(strchr(s.run.err, '\t'));
    run_session_free(&s);
    free(config);
}

/* ---- Concurrent call_complete --------------------------------------------------------- */

/*
 * Many threads complete each deferred call at once, racing with the handler's own return of
 * RPCD_DEFERRED: each call gets exactly one response, every other call_complete is refused, and
 * rpcd ends at end of input.
 */
static void test_concurrent_complete_has_one_winner(void **state)
{
    run_fixture *f = *state;
    const int rounds = harness_wrapped() ? 20 : 300, threads = 8;
    char *config = run_format("[rpcd]\nworkers = 4\n[plugin race]\npath = %s\n",
                              run_env("RPCD_FIXTURE_COMPLETE_RACE"));
    size_t size = (size_t)rounds * 80 + 200, used = 0;
    char *input = malloc(size);
    assert_non_null(input);
    for (int id = 1; id <= rounds; id++)
        used += (size_t)snprintf(input + used, size - used,
                                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"race.complete\","
                                 "\"params\":[%d]}\n",
                                 id, threads);
    run_session s;
    run_rpcd(f, config, input, &s);
    assert_int_equal(s.count, (size_t)rounds);
    for (int id = 1; id <= rounds; id++)
        run_assert_json(json_object_get(run_response(&s, id), "result"), "{\"completed\":true}");
    /* The fixture's count, once its threads are joined: every call_complete but one refused. */
    char *stats = run_format("%d calls, 0 of them not completed exactly once", rounds);
    if (!strstr(s.run.err, stats))
        print_error("%s\n", s.run.err);
    assert_non_null(strstr(s.run.err, stats));
    free(stats);
    run_session_free(&s);
    free(input);
    free(config);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pretty_json_stays_on_one_line, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_reserved_notifications_refused, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_refused_names_say_why, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_calls_left_at_stop_are_named, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_protocol_codes_in_tools_call, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_protocol_codes_in_tools_call_isolated,
                                        run_fixture_setup, run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_task_flags_by_minor, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_task_flags_by_minor_isolated, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_abi_1_4_keeps_its_names, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_old_minors_keep_their_meanings, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_old_minors_keep_their_meanings_isolated,
                                        run_fixture_setup, run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_complete_has_one_winner, run_fixture_setup,
                                        run_fixture_teardown),
        cmocka_unit_test_setup_teardown(test_log_text_is_one_line_per_call, run_fixture_setup,
                                        run_fixture_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
