/* SPDX-License-Identifier: MIT */
/*
 * What a plugin hands over cannot break the protocol: one line per message whatever its JSON
 * looks like, one response per call however many threads complete it, the meanings of the ABI
 * minor it was built against, no forged daemon notifications, and messages that say why.
 */
#include "harness.h"

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

enum { RUN_TIMEOUT_MS = 120000 };

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

static const char *env(const char *name)
{
    const char *value = harness_env(name);
    assert_non_null(value);
    return value;
}

/* What one run of rpcd gave: its stdout as parsed lines, its stderr and how it ended. */
typedef struct session {
    harness_run_result run;
    json_t **messages; /* one per stdout line, each checked to be one JSON value */
    size_t count;
} session;

/*
 * Runs rpcd with config text and input, and checks the framing of everything it wrote: every
 * stdout line is exactly one JSON value, and no line holds a raw carriage return (which some
 * clients take as a line break of its own).
 */
static void run_rpcd(const fixture *f, const char *config, const char *input, session *s)
{
    memset(s, 0, sizeof *s);
    char *path = harness_write_file(f->dir, "rpcd.conf", config);
    assert_non_null(path);
    harness_argv args = harness_rpcd_argv(path);
    assert_non_null(args.argv[0]);
    harness_run(args.argv, input, strlen(input), RUN_TIMEOUT_MS, &s->run);
    free(path);
    assert_int_equal(s->run.io_status, HARNESS_OK);
    if (!s->run.status.exited || s->run.status.code != 0)
        print_error("rpcd: %s\n%s\n", harness_exit_describe(&s->run.status), s->run.err);
    assert_true(s->run.status.exited);
    assert_int_equal(s->run.status.code, 0);
    harness_lines lines;
    assert_int_equal(harness_split_lines(s->run.out, s->run.out_length, &lines), 0);
    assert_false(lines.unterminated);
    s->messages = calloc(lines.count + 1, sizeof *s->messages);
    assert_non_null(s->messages);
    for (size_t i = 0; i < lines.count; i++) {
        json_error_t error;
        s->messages[i] = json_loads(lines.items[i], JSON_DECODE_ANY, &error);
        if (!s->messages[i] || strchr(lines.items[i], '\r'))
            print_error("stdout line %zu is not one JSON value on one line: %s\n%s\n", i + 1,
                        error.text, lines.items[i]);
        assert_non_null(s->messages[i]);
        assert_null(strchr(lines.items[i], '\r'));
    }
    s->count = lines.count;
    harness_lines_free(&lines);
}

static void session_free(session *s)
{
    for (size_t i = 0; i < s->count; i++)
        json_decref(s->messages[i]);
    free(s->messages);
    harness_run_result_free(&s->run);
}

/* The response with this integer id; fails the test when there is not exactly one. */
static json_t *response(const session *s, json_int_t id)
{
    json_t *found = NULL;
    size_t seen = 0;
    for (size_t i = 0; i < s->count; i++) {
        json_t *member = json_object_get(s->messages[i], "id");
        if (json_is_integer(member) && json_integer_value(member) == id) {
            found = s->messages[i];
            seen++;
        }
    }
    if (seen != 1)
        print_error("%zu responses with id %lld\n%s\n", seen, (long long)id, s->run.out);
    assert_int_equal(seen, 1);
    return found;
}

static void assert_json(const json_t *actual, const char *expected)
{
    char *text = json_dumps(actual, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    assert_non_null(text);
    if (!harness_json_equal(expected, text))
        print_error("expected %s\n     got %s\n", expected, text);
    assert_true(harness_json_equal(expected, text));
    free(text);
}

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
    fixture *f = *state;
    char *config = format("[rpcd]\nworkers = 1\n[plugin multiline]\npath = %s\n"
                          "[plugin echo]\npath = %s\n",
                          env("RPCD_FIXTURE_MULTILINE"), env("RPCD_PLUGIN_ECHO"));
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
    session s;
    run_rpcd(f, config, input, &s);
    assert_int_equal(s.count, 11); /* ten responses and one notification */

    assert_json(json_object_get(response(&s, 1), "result"), pretty_value);
    json_t *error = json_object_get(response(&s, 2), "error");
    assert_int_equal(json_integer_value(json_object_get(error, "code")), -32602);
    assert_json(json_object_get(json_object_get(error, "data"), "data"), pretty_value);
    error = json_object_get(response(&s, 3), "error");
    assert_json(error, "{\"code\":42,\"message\":\"pretty code\",\"data\":{\"a\":[1,2],"
                       "\"s\":\"x\\ny\"}}");
    assert_json(json_object_get(response(&s, 4), "result"), "0");
    json_t *notification = NULL;
    for (size_t i = 0; i < s.count; i++)
        if (json_object_get(s.messages[i], "method"))
            notification = s.messages[i];
    assert_non_null(notification);
    assert_json(notification, "{\"jsonrpc\":\"2.0\",\"method\":\"multiline/event\",\"params\":"
                              "{\"a\":[1,2],\"s\":\"x\\ny\"}}");
    assert_json(json_object_get(response(&s, 5), "result"), pretty_value);
    assert_json(json_object_get(response(&s, 6), "result"), "{\"a\":1,\"b\":[]}");

    json_t *tools = json_object_get(json_object_get(response(&s, 8), "result"), "tools");
    json_t *schema = NULL;
    for (size_t i = 0; i < json_array_size(tools); i++)
        if (strcmp(json_string_value(json_object_get(json_array_get(tools, i), "name")),
                   "multiline_result") == 0)
            schema = json_object_get(json_array_get(tools, i), "inputSchema");
    assert_json(schema, "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}");

    json_t *result = json_object_get(response(&s, 9), "result");
    assert_json(json_object_get(result, "structuredContent"), pretty_value);
    assert_json(json_object_get(result, "isError"), "false");
    result = json_object_get(response(&s, 10), "result");
    assert_json(json_object_get(result, "structuredContent"), "{\"a\":1}");
    session_free(&s);
    free(config);
}

/* ---- Notifications rpcd owns ----------------------------------------------------------- */

/*
 * A plugin cannot send the notifications rpcd owns: each is refused with -7 and a log line, and
 * never reaches stdout. A name of its own goes out.
 */
static void test_reserved_notifications_refused(void **state)
{
    fixture *f = *state;
    char *config = format("[rpcd]\nworkers = 1\n[plugin forge]\npath = %s\n",
                          env("RPCD_FIXTURE_FORGE_NOTIFY"));
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
    session s;
    run_rpcd(f, config, input, &s);
    assert_int_equal(s.count, RESERVED + 2);
    for (size_t i = 0; i < RESERVED; i++) {
        assert_json(json_object_get(response(&s, (json_int_t)i + 1), "result"), "-7");
        char *logged = format("forge: forge.notify tried to send a notification \"%s\", a name "
                              "rpcd reserves for itself; refused",
                              reserved[i]);
        if (!strstr(s.run.err, logged))
            print_error("not in stderr: %s\n%s\n", logged, s.run.err);
        assert_non_null(strstr(s.run.err, logged));
        free(logged);
    }
    assert_json(json_object_get(response(&s, 0), "result"), "0");
    size_t notifications = 0;
    for (size_t i = 0; i < s.count; i++) {
        json_t *method = json_object_get(s.messages[i], "method");
        if (method) {
            assert_string_equal(json_string_value(method), "forge/own");
            notifications++;
        }
    }
    assert_int_equal(notifications, 1);
    session_free(&s);
    free(config);
}

/* ---- Messages ------------------------------------------------------------------------- */

/*
 * Each refused method name is logged with its own reason, a name that is not UTF-8 escaped;
 * a plugin registering one name twice is told so, which stops start-up (exit 78).
 */
static void test_refused_names_say_why(void **state)
{
    fixture *f = *state;
    char *config = format("[plugin bad_names]\npath = %s\n", env("RPCD_FIXTURE_BAD_NAMES"));
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
        "plugin 'bad_names' registers method 'twice' twice",
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        if (!strstr(result.err, expected[i]))
            print_error("not in stderr: %s\n%s\n", expected[i], result.err);
        assert_non_null(strstr(result.err, expected[i]));
    }
    assert_null(strchr(result.err, '\xff'));
    assert_null(strchr(result.err, '\x01'));
    assert_null(strstr(result.err, "both plugin"));
    harness_run_result_free(&result);
    free(path);
    free(config);
}

/* A call still running when the grace period of a stop ends is named: plugin, method, id. */
static void test_calls_left_at_stop_are_named(void **state)
{
    fixture *f = *state;
    char *config = format("[rpcd]\nworkers = 2\nshutdown_grace_ms = 100\n"
                          "[plugin concurrency]\npath = %s\n",
                          env("RPCD_FIXTURE_CONCURRENCY"));
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
static void test_old_minors_keep_their_meanings(void **state)
{
    fixture *f = *state;
    char *config = format("[rpcd]\nworkers = 2\n[plugin abi10]\npath = %s\n"
                          "[plugin abi11]\npath = %s\n[plugin abi12]\npath = %s\n"
                          "[plugin abi13]\npath = %s\n",
                          env("RPCD_FIXTURE_ABI_1_0"), env("RPCD_FIXTURE_ABI_1_1"),
                          env("RPCD_FIXTURE_ABI_1_2"), env("RPCD_FIXTURE_ABI_1_3"));
    static const char input[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"abi10.one\"}\n"
                                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"abi11.one\"}\n"
                                "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"abi12.one\"}\n"
                                "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"abi10.on_reader\"}\n"
                                "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"abi11.on_reader\"}\n"
                                "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"abi12.on_reader\"}\n"
                                "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"abi13.one\"}\n"
                                "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"abi13.on_reader\"}\n";
    session s;
    run_rpcd(f, config, input, &s);
    assert_int_equal(s.count, 8);
    assert_json(json_object_get(response(&s, 1), "error"),
                "{\"code\":-32603,\"message\":\"Internal error\",\"data\":{\"exception\":"
                "\"unknown status\",\"status\":1,\"plugin\":\"abi10\",\"method\":\"abi10.one\"}}");
    assert_json(json_object_get(response(&s, 2), "result"), "\"completed\"");
    assert_json(json_object_get(response(&s, 3), "result"), "\"completed\"");
    assert_json(json_object_get(response(&s, 4), "result"), "false");
    assert_json(json_object_get(response(&s, 5), "result"), "false");
    assert_json(json_object_get(response(&s, 6), "result"), "true");
    assert_json(json_object_get(response(&s, 7), "result"), "\"completed\"");
    assert_json(json_object_get(response(&s, 8), "result"), "true");
    session_free(&s);
    free(config);
}

/* ---- log_text (1.3) ------------------------------------------------------------------- */

/*
 * A plugin logs through log_text, from init and from a handler: each line carries the level and
 * the plugin's name, the text is not a format, and newlines, tabs and an escape sequence in it
 * come out escaped on the one line; a debug line stays below the default level.
 */
static void test_log_text_is_one_line_per_call(void **state)
{
    fixture *f = *state;
    char *config = format("[plugin logtext]\npath = %s\n", env("RPCD_FIXTURE_LOG_TEXT"));
    static const char input[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"log.say\","
                                "\"params\":[\"two\\nlines\\tand \\u001b[31mred\"]}\n";
    session s;
    run_rpcd(f, config, input, &s);
    assert_json(json_object_get(response(&s, 1), "result"), "true");
    static const char *const expected[] = {
        "\nrpcd: info: logtext: ready, 100% plain %s %n\n",
        "\nrpcd: warning: logtext: [\"two\\nlines\\tand \\x1b[31mred\"]\n",
    };
    char *lines = format("\n%s", s.run.err); /* every line, the first too, after a newline */
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        if (!strstr(lines, expected[i]))
            print_error("not in stderr: %s\n%s\n", expected[i], s.run.err);
        assert_non_null(strstr(lines, expected[i]));
    }
    free(lines);
    assert_null(strstr(s.run.err, "below the default level"));
    assert_null(strchr(s.run.err, '\x1b'));
    assert_null(strchr(s.run.err, '\t'));
    session_free(&s);
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
    fixture *f = *state;
    const int rounds = harness_wrapped() ? 20 : 300, threads = 8;
    char *config = format("[rpcd]\nworkers = 4\n[plugin race]\npath = %s\n",
                          env("RPCD_FIXTURE_COMPLETE_RACE"));
    size_t size = (size_t)rounds * 80 + 200, used = 0;
    char *input = malloc(size);
    assert_non_null(input);
    for (int id = 1; id <= rounds; id++)
        used += (size_t)snprintf(input + used, size - used,
                                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"race.complete\","
                                 "\"params\":[%d]}\n",
                                 id, threads);
    session s;
    run_rpcd(f, config, input, &s);
    assert_int_equal(s.count, (size_t)rounds);
    for (int id = 1; id <= rounds; id++)
        assert_json(json_object_get(response(&s, id), "result"), "{\"completed\":true}");
    /* The fixture's count, once its threads are joined: every call_complete but one refused. */
    char *stats = format("%d calls, 0 of them not completed exactly once", rounds);
    if (!strstr(s.run.err, stats))
        print_error("%s\n", s.run.err);
    assert_non_null(strstr(s.run.err, stats));
    free(stats);
    session_free(&s);
    free(input);
    free(config);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_pretty_json_stays_on_one_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reserved_notifications_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_names_say_why, setup, teardown),
        cmocka_unit_test_setup_teardown(test_calls_left_at_stop_are_named, setup, teardown),
        cmocka_unit_test_setup_teardown(test_old_minors_keep_their_meanings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_complete_has_one_winner, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_text_is_one_line_per_call, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
