/* SPDX-License-Identifier: MIT */
/*
 * The one-shot commands through the real binary: rpcd call (result, each exit status, progress,
 * --timeout, --cancel-after, params from stdin, --set, -c), rpcd list and rpcd inspect, each
 * loading plugins through the checked loader that serving uses.
 */
#include "harness.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>

/* The statuses rpcd(8) documents for the one-shot commands. */
enum {
    CALL_METHOD_FAILED = 1,
    CALL_NOT_FOUND = 2,
    CALL_BAD_PARAMS = 3,
    CALL_CANCELLED = 4,
    CALL_TIMED_OUT = 5,
    EXIT_USAGE = 64,
    EXIT_START_UP = 78,
};
#define RUN_TIMEOUT_MS test_time_ms(20000)

static const char *env(const char *name)
{
    const char *value = harness_env(name);
    assert_non_null(value);
    return value;
}

/*
 * Runs rpcd with the NULL-terminated arguments after it, input on stdin (may be NULL), and
 * checks its exit status. The caller frees *result.
 */
static void run_expect(harness_run_result *result, const char *input, int status, ...)
{
    harness_argv args = harness_rpcd_argv(NULL);
    assert_non_null(args.argv[0]);
    va_list list;
    va_start(list, status);
    const char *arg;
    while ((arg = va_arg(list, const char *)) != NULL)
        harness_argv_push(&args, arg);
    va_end(list);
    harness_run(args.argv, input, input ? strlen(input) : 0, RUN_TIMEOUT_MS, result);
    assert_int_equal(result->io_status, HARNESS_OK);
    if (!result->status.exited || result->status.code != status)
        fail_msg("expected exit %d, got %s\nstdout:\n%s\nstderr:\n%s", status,
                 harness_exit_describe(&result->status), result->out ? result->out : "",
                 result->err);
}

static void expect_in(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("\"%s\" not in:\n%s", needle, text);
}

/* ---- rpcd call ------------------------------------------------------------------------------ */

static void test_call_prints_the_result_compact_off_a_terminal(void **state)
{
    (void)state;
    harness_run_result r;
    run_expect(&r, NULL, 0, "call", "--plugin", env("RPCD_PLUGIN_ECHO"), "echo",
               "{\"a\": [1, 2], \"b\": \"x\"}", NULL);
    assert_string_equal(r.out, "{\"a\":[1,2],\"b\":\"x\"}\n");
    assert_string_equal(r.err, ""); /* no log line: not even the warning of running as root */
    harness_run_result_free(&r);
}

static void test_call_pretty(void **state)
{
    (void)state;
    harness_run_result r;
    run_expect(&r, NULL, 0, "call", "--pretty", "--plugin", env("RPCD_PLUGIN_ECHO"), "echo",
               "[1,{\"k\":true}]", NULL);
    assert_string_equal(r.out, "[\n  1,\n  {\n    \"k\": true\n  }\n]\n");
    harness_run_result_free(&r);
    run_expect(&r, NULL, 0, "call", "--pretty", "--compact", "--plugin", env("RPCD_PLUGIN_ECHO"),
               "echo", "[1]", NULL);
    assert_string_equal(r.out, "[1]\n");
    harness_run_result_free(&r);
}

static void test_call_params_from_stdin(void **state)
{
    (void)state;
    harness_run_result r;
    run_expect(&r, "{\"from\": \"stdin\"}\n", 0, "call", "--plugin", env("RPCD_PLUGIN_ECHO"),
               "echo", "-", NULL);
    assert_string_equal(r.out, "{\"from\":\"stdin\"}\n");
    harness_run_result_free(&r);
}

static void test_call_exit_statuses(void **state)
{
    (void)state;
    const char *fail = env("RPCD_PLUGIN_FAIL");
    harness_run_result r;
    run_expect(&r, NULL, CALL_NOT_FOUND, "call", "--plugin", fail, "no.such", NULL);
    expect_in(r.err, "rpcd call: no.such: error -32601: Method not found");
    assert_string_equal(r.out, "");
    harness_run_result_free(&r);
    run_expect(&r, NULL, CALL_BAD_PARAMS, "call", "--plugin", fail, "fail.invalid_params", NULL);
    expect_in(r.err, "error -32602");
    expect_in(r.err, "always invalid");
    harness_run_result_free(&r);
    run_expect(&r, NULL, CALL_METHOD_FAILED, "call", "--plugin", fail, "fail.custom",
               "{\"code\": 42}", NULL);
    expect_in(r.err, "rpcd call: fail.custom: error 42");
    assert_string_equal(r.out, "");
    harness_run_result_free(&r);
    run_expect(&r, NULL, CALL_METHOD_FAILED, "call", "--plugin", fail, "fail.internal", NULL);
    expect_in(r.err, "error -32603");
    expect_in(r.err, "\"where\""); /* error.data, on the same line */
    harness_run_result_free(&r);
}

static void test_call_start_up_errors(void **state)
{
    (void)state;
    harness_run_result r;
    run_expect(&r, NULL, EXIT_START_UP, "call", "--plugin", "/nonexistent/x.so", "echo", NULL);
    expect_in(r.err, "/nonexistent/x.so");
    harness_run_result_free(&r);
    run_expect(&r, NULL, EXIT_START_UP, "call", "--plugin", env("RPCD_FIXTURE_INIT_FAIL"), "echo",
               NULL);
    expect_in(r.err, "init failed");
    harness_run_result_free(&r);
    /* A key the plugin refuses is its init's failure, as in a config file. */
    run_expect(&r, NULL, EXIT_START_UP, "call", "--plugin", env("RPCD_PLUGIN_PROGRESS"), "--set",
               "default_steps=5000", "progress", NULL);
    expect_in(r.err, "default_steps");
    harness_run_result_free(&r);
}

/* The plugin file goes through the same safety checks as when serving, and --insecure too. */
static void test_call_checks_the_plugin_file(void **state)
{
    (void)state;
    char *dir = harness_temp_dir();
    assert_non_null(dir);
    size_t length;
    char *bytes = harness_read_file(env("RPCD_PLUGIN_ECHO"), &length);
    assert_non_null(bytes);
    char path[4096];
    snprintf(path, sizeof path, "%s/echo.so", dir);
    FILE *copy = fopen(path, "wb");
    assert_non_null(copy);
    assert_int_equal(fwrite(bytes, 1, length, copy), length);
    assert_int_equal(fclose(copy), 0);
    free(bytes);
    assert_int_equal(chmod(path, 0666), 0);
    harness_run_result r;
    run_expect(&r, NULL, EXIT_START_UP, "call", "--plugin", path, "echo", "[1]", NULL);
    expect_in(r.err, "writable by others");
    harness_run_result_free(&r);
    run_expect(&r, NULL, 0, "call", "--insecure", "--plugin", path, "echo", "[1]", NULL);
    assert_string_equal(r.out, "[1]\n");
    harness_run_result_free(&r);
    harness_remove_dir(dir);
    free(dir);
}

static void test_call_usage(void **state)
{
    (void)state;
    const char *echo = env("RPCD_PLUGIN_ECHO");
    harness_run_result r;
    run_expect(&r, NULL, EXIT_USAGE, "call", "--plugin", echo, NULL);
    expect_in(r.err, "give METHOD and at most one PARAMS");
    harness_run_result_free(&r);
    /* One call a run: a second method (or a stray word) is refused, not ignored. */
    run_expect(&r, NULL, EXIT_USAGE, "call", "--plugin", echo, "echo", "{}", "echo", NULL);
    expect_in(r.err, "give METHOD and at most one PARAMS");
    harness_run_result_free(&r);
    run_expect(&r, NULL, EXIT_USAGE, "call", "--plugin", echo, "echo", "{not json", NULL);
    expect_in(r.err, "PARAMS is not JSON");
    harness_run_result_free(&r);
    run_expect(&r, NULL, EXIT_USAGE, "call", "echo", NULL);
    expect_in(r.err, "either -c FILE or --plugin");
    harness_run_result_free(&r);
    run_expect(&r, NULL, EXIT_USAGE, "call", "--plugin", echo, "--timeout", "soon", "echo", NULL);
    harness_run_result_free(&r);
    run_expect(&r, NULL, EXIT_USAGE, "call", "--plugin", echo, "--set", "novalue", "echo", NULL);
    harness_run_result_free(&r);
    /* A key that would make a section of the config made in memory. */
    run_expect(&r, NULL, EXIT_USAGE, "call", "--plugin", echo, "--set", "[rpcd]x=1", "echo", NULL);
    expect_in(r.err, "--set takes key=value");
    harness_run_result_free(&r);
}

/*
 * The rest of the command line's rules (rpcd(8), ONE-SHOT COMMANDS): each refusal is status 64
 * with a line that says what to give instead, and nothing on standard output; the bounds of a
 * count of milliseconds are taken as written.
 */
static void test_one_shot_usage_rules(void **state)
{
    (void)state;
    const char *echo = env("RPCD_PLUGIN_ECHO");
    char *dir = harness_temp_dir();
    assert_non_null(dir);
    char *config = harness_write_file(dir, "rpcd.conf", "");
    assert_non_null(config);
    static const char ms[] = "takes milliseconds (0 to 86400000)";
    const struct {
        const char *args[8];
        const char *says;
    } refused[] = {
        {{"call", "--plugin", echo, "--timeout", "-1", "echo"}, ms},
        {{"call", "--plugin", echo, "--timeout", "86400001", "echo"}, ms},
        {{"call", "--plugin", echo, "--cancel-after", "5ms", "echo"}, ms},
        {{"call", "--plugin", echo, "--progress", "echo", "[1]"},
         "--progress needs PARAMS to be an object"},
        {{"call", "-c", config, "--set", "k=v", "echo"}, "--set goes with --plugin"},
        {{"call", "-c", config, "--plugin", echo, "echo"}, "either -c FILE or --plugin"},
        {{"call", "--plugin", echo, "--no-such-option", "echo"}, "try rpcd --help"},
        {{"list", "--plugin", echo, "extra"}, "unexpected argument 'extra'"},
        {{"list", "--plugin", echo, "--pretty"}, "try rpcd --help"},
        {{"list"}, "either -c FILE or --plugin"},
        {{"inspect", echo, echo}, "give one plugin file"},
        {{"inspect", "-c", config, echo}, "try rpcd --help"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        harness_argv args = harness_rpcd_argv(NULL);
        assert_non_null(args.argv[0]);
        for (size_t j = 0; refused[i].args[j]; j++)
            harness_argv_push(&args, refused[i].args[j]);
        harness_run_result r;
        harness_run(args.argv, NULL, 0, RUN_TIMEOUT_MS, &r);
        assert_int_equal(r.io_status, HARNESS_OK);
        if (!r.status.exited || r.status.code != EXIT_USAGE || !strstr(r.err, refused[i].says) ||
            (r.out && r.out[0]))
            fail_msg("rpcd %s ... (case %zu): %s, stderr: %s", refused[i].args[0], i,
                     harness_exit_describe(&r.status), r.err);
        harness_run_result_free(&r);
    }
    /* The bounds themselves are accepted. */
    harness_run_result r;
    run_expect(&r, NULL, 0, "call", "--plugin", echo, "--timeout", "86400000", "--cancel-after",
               "0", "echo", "[2]", NULL);
    assert_string_equal(r.out, "[2]\n");
    harness_run_result_free(&r);
    free(config);
    harness_remove_dir(dir);
    free(dir);
}

/* A plugin's warnings reach stderr; -q keeps its errors only. */
static void test_call_quiet(void **state)
{
    (void)state;
    const char *plugin = env("RPCD_FIXTURE_ISOLATED_A");
    harness_run_result r;
    run_expect(&r, NULL, 0, "call", "--plugin", plugin, "a.info", NULL);
    expect_in(r.err, "isolated log 1");
    harness_run_result_free(&r);
    run_expect(&r, NULL, 0, "call", "-q", "--plugin", plugin, "a.info", NULL);
    expect_in(r.out, "\"method\":\"a.info\"");
    if (strstr(r.err, "isolated log"))
        fail_msg("-q let a warning through:\n%s", r.err);
    harness_run_result_free(&r);
}

static void test_call_progress_on_stderr(void **state)
{
    (void)state;
    harness_run_result r;
    run_expect(&r, NULL, 0, "call", "--progress", "--plugin", env("RPCD_PLUGIN_PROGRESS"),
               "progress", "{\"steps\": 3}", NULL);
    assert_string_equal(r.out, "{\"steps\":3}\n");
    assert_string_equal(r.err, "progress 1/3: step 1 of 3\nprogress 2/3: step 2 of 3\n"
                               "progress 3/3: step 3 of 3\n");
    harness_run_result_free(&r);
    /* Without --progress, no token: no report. */
    run_expect(&r, NULL, 0, "call", "--plugin", env("RPCD_PLUGIN_PROGRESS"), "progress",
               "{\"steps\": 3}", NULL);
    assert_string_equal(r.err, "");
    harness_run_result_free(&r);
}

static void test_call_set_reaches_the_plugin(void **state)
{
    (void)state;
    harness_run_result r;
    run_expect(&r, NULL, 0, "call", "--plugin", env("RPCD_PLUGIN_PROGRESS"), "--set",
               "default_steps=2", "progress", NULL);
    assert_string_equal(r.out, "{\"steps\":2}\n");
    harness_run_result_free(&r);
}

static void test_call_with_a_config_file(void **state)
{
    (void)state;
    char *dir = harness_temp_dir();
    char *sections = harness_bundled_plugin_sections();
    assert_non_null(dir);
    assert_non_null(sections);
    char *config = harness_write_file(dir, "rpcd.conf", sections);
    assert_non_null(config);
    harness_run_result r;
    /* default_steps = 3 in that config */
    run_expect(&r, NULL, 0, "call", "-c", config, "progress", NULL);
    assert_string_equal(r.out, "{\"steps\":3}\n");
    harness_run_result_free(&r);
    run_expect(&r, NULL, EXIT_USAGE, "call", "-c", config, "--set", "a=b", "echo", NULL);
    harness_run_result_free(&r);
    free(config);
    free(sections);
    harness_remove_dir(dir);
    free(dir);
}

/*
 * A plugin that prints to stdout, called from the command line, in rpcd's process and isolated:
 * what it prints goes to the log (stderr), and stdout holds the result alone, as when rpcd
 * serves.
 */
static void test_call_plugin_prints_to_the_log(void **state)
{
    (void)state;
    static const char *const isolations[] = {"none", "process"};
    for (size_t i = 0; i < sizeof isolations / sizeof isolations[0]; i++) {
        char *dir = harness_temp_dir();
        assert_non_null(dir);
        char sections[4096];
        snprintf(sections, sizeof sections, "[plugin a]\npath = %s\nisolation = %s\n",
                 env("RPCD_FIXTURE_ISOLATED_A"), isolations[i]);
        char *config = harness_write_file(dir, "rpcd.conf", sections);
        assert_non_null(config);
        harness_run_result r;
        run_expect(&r, NULL, 0, "call", "-c", config, "a.stdout", NULL);
        assert_string_equal(r.out, "true\n");
        expect_in(r.err, "raw stdout");
        harness_run_result_free(&r);
        free(config);
        harness_remove_dir(dir);
        free(dir);
    }
}

/*
 * With no standard output to keep (closed by the caller), the command says so on stderr and
 * exits 70 before it loads a plugin, rather than letting plugins print where the output goes.
 */
static void test_call_without_stdout(void **state)
{
    (void)state;
    harness_argv rpcd = harness_rpcd_argv(NULL);
    assert_non_null(rpcd.argv[0]);
    harness_argv args = harness_argv_in_shell("exec \"$@\" >&-", &rpcd);
    harness_argv_push(&args, "call");
    harness_argv_push(&args, "--plugin");
    harness_argv_push(&args, env("RPCD_PLUGIN_ECHO"));
    harness_argv_push(&args, "echo");
    harness_argv_push(&args, "[1]");
    harness_run_result r;
    harness_run(args.argv, NULL, 0, RUN_TIMEOUT_MS, &r);
    assert_int_equal(r.io_status, HARNESS_OK);
    if (!r.status.exited || r.status.code != 70)
        fail_msg("expected exit 70, got %s\nstderr:\n%s", harness_exit_describe(&r.status), r.err);
    expect_in(r.err, "rpcd: cannot keep plugins off the output: Bad file descriptor");
    harness_run_result_free(&r);
}

static void test_call_timeout(void **state)
{
    (void)state;
    harness_run_result r;
    /* An hour's sleep: ended within RUN_TIMEOUT_MS, even scaled, rpcd call did not wait for it. */
    run_expect(&r, NULL, CALL_TIMED_OUT, "call", "--timeout", "200", "--plugin",
               env("RPCD_PLUGIN_PROGRESS"), "sleep", "{\"ms\": 3600000}", NULL);
    expect_in(r.err, "rpcd call: sleep: timed out after 200 ms");
    assert_string_equal(r.out, "");
    harness_run_result_free(&r);
}

/* A handler that never returns, even cancelled: rpcd call still ends after --timeout and the
 * grace period (shutdown_grace_ms, 1000 by default), without unloading the code it runs. */
static void test_call_timeout_of_a_stuck_handler(void **state)
{
    (void)state;
    harness_run_result r;
    /* Ended within RUN_TIMEOUT_MS (run_expect): the handler never returns, so not waited for. */
    run_expect(&r, NULL, CALL_TIMED_OUT, "call", "--timeout", "100", "--plugin",
               env("RPCD_FIXTURE_STUCK"), "stuck.block", NULL);
    expect_in(r.err, "rpcd call: stuck.block: timed out after 100 ms");
    harness_run_result_free(&r);
}

static void test_call_cancel_after(void **state)
{
    (void)state;
    harness_run_result r;
    run_expect(&r, NULL, CALL_CANCELLED, "call", "--cancel-after", "200", "--plugin",
               env("RPCD_PLUGIN_PROGRESS"), "sleep", "{\"ms\": 60000}", NULL);
    expect_in(r.err, "error -32800: Request cancelled");
    expect_in(r.err, "\"method\":\"sleep\"");
    harness_run_result_free(&r);
    /* A call that ends first is not cancelled (5 s to end a 10 ms sleep, scaled). */
    char later[32];
    snprintf(later, sizeof later, "%d", test_time_ms(5000));
    run_expect(&r, NULL, 0, "call", "--cancel-after", later, "--plugin",
               env("RPCD_PLUGIN_PROGRESS"), "sleep", "{\"ms\": 10}", NULL);
    assert_string_equal(r.out, "{\"slept_ms\":10}\n");
    harness_run_result_free(&r);
}

/* ---- rpcd list and inspect ------------------------------------------------------------------ */

/* The element of array whose member key is value, or fails. */
static json_t *find_by(json_t *array, const char *key, const char *value)
{
    size_t i;
    json_t *item;
    json_array_foreach(array, i, item)
    {
        const char *text = json_string_value(json_object_get(item, key));
        if (text && strcmp(text, value) == 0)
            return item;
    }
    fail_msg("no %s = %s", key, value);
    return NULL;
}

static void test_list_json_with_tool_names(void **state)
{
    (void)state;
    char *dir = harness_temp_dir();
    char *sections = harness_bundled_plugin_sections();
    assert_non_null(dir);
    assert_non_null(sections);
    char text[8192];
    snprintf(text, sizeof text, "%s\n[mcp]\ntool.echo = say\ntools = echo, fail.custom\n",
             sections);
    char *config = harness_write_file(dir, "rpcd.conf", text);
    harness_run_result r;
    run_expect(&r, NULL, 0, "list", "-c", config, "--json", NULL);
    json_t *methods = json_loads(r.out, 0, NULL);
    assert_true(json_is_array(methods));
    json_t *echo = find_by(methods, "method", "echo");
    assert_string_equal(json_string_value(json_object_get(echo, "plugin")), "echo");
    assert_string_equal(json_string_value(json_object_get(echo, "tool")), "say");
    assert_string_equal(json_string_value(json_array_get(json_object_get(echo, "flags"), 0)),
                        "quick");
    assert_true(json_is_object(json_object_get(echo, "params_schema")));
    json_t *custom = find_by(methods, "method", "fail.custom");
    assert_string_equal(json_string_value(json_object_get(custom, "tool")), "fail_custom");
    assert_true(json_is_null(json_object_get(find_by(methods, "method", "sleep"), "tool")));
    json_decref(methods);
    harness_run_result_free(&r);
    run_expect(&r, NULL, 0, "list", "-c", config, NULL);
    expect_in(r.out, "echo\n  plugin:      echo\n  flags:       quick \n  tool:        say\n");
    expect_in(r.out, "sleep\n  plugin:      progress\n  flags:       -\n"
                     "  tool:        - (not an MCP tool)\n");
    harness_run_result_free(&r);
    free(config);
    free(sections);
    harness_remove_dir(dir);
    free(dir);
}

/* Each flag a method has is listed, in JSON and in text: serialized, quick, validates_itself,
 * task or task_required, or "-" for none. */
static void test_list_flags(void **state)
{
    (void)state;
    harness_run_result r;
    run_expect(&r, NULL, 0, "list", "--plugin", env("RPCD_FIXTURE_CONCURRENCY"), "--json", NULL);
    json_t *methods = json_loads(r.out, 0, NULL);
    assert_true(json_is_array(methods));
    json_t *serial = json_object_get(find_by(methods, "method", "serial.probe"), "flags");
    assert_int_equal(json_array_size(serial), 1);
    assert_string_equal(json_string_value(json_array_get(serial, 0)), "serialized");
    json_t *quick = json_object_get(find_by(methods, "method", "thread.quick"), "flags");
    assert_int_equal(json_array_size(quick), 1);
    assert_string_equal(json_string_value(json_array_get(quick, 0)), "quick");
    assert_int_equal(
        json_array_size(json_object_get(find_by(methods, "method", "thread.worker"), "flags")), 0);
    json_decref(methods);
    harness_run_result_free(&r);
    run_expect(&r, NULL, 0, "list", "--plugin", env("RPCD_FIXTURE_CONCURRENCY"), NULL);
    expect_in(r.out, "serial.probe\n  plugin:      concurrency\n  flags:       serialized \n");
    expect_in(r.out, "thread.worker\n  plugin:      concurrency\n  flags:       -\n");
    harness_run_result_free(&r);
    /* The flags of 1.6 and 1.7 by their names: a task tool, and one that requires a task. */
    run_expect(&r, NULL, 0, "list", "--plugin", env("RPCD_FIXTURE_TASKS"), "--json", NULL);
    methods = json_loads(r.out, 0, NULL);
    assert_true(json_is_array(methods));
    json_t *task = json_object_get(find_by(methods, "method", "tasks.wait"), "flags");
    assert_int_equal(json_array_size(task), 1);
    assert_string_equal(json_string_value(json_array_get(task, 0)), "task");
    json_t *required = json_object_get(find_by(methods, "method", "tasks.required"), "flags");
    assert_int_equal(json_array_size(required), 1);
    assert_string_equal(json_string_value(json_array_get(required, 0)), "task_required");
    json_decref(methods);
    harness_run_result_free(&r);
    run_expect(&r, NULL, 0, "list", "--plugin", env("RPCD_FIXTURE_TASKS"), NULL);
    expect_in(r.out, "tasks.required\n  plugin:      tasks\n  flags:       task_required \n");
    harness_run_result_free(&r);
    run_expect(&r, NULL, 0, "list", "--plugin", env("RPCD_FIXTURE_SCHEMA_TOOL"), "--json", NULL);
    expect_in(r.out, "\"validates_itself\"");
    harness_run_result_free(&r);
}

static void test_inspect(void **state)
{
    (void)state;
    harness_run_result r;
    run_expect(&r, NULL, 0, "inspect", env("RPCD_PLUGIN_FAIL"), "--json", NULL);
    json_t *about = json_loads(r.out, 0, NULL);
    assert_non_null(about);
    assert_string_equal(json_string_value(json_object_get(about, "name")), "fail");
    assert_string_equal(json_string_value(json_object_get(about, "path")), env("RPCD_PLUGIN_FAIL"));
    json_t *abi = json_object_get(about, "abi");
    assert_int_equal(json_integer_value(json_object_get(abi, "major")), 1);
    assert_true(json_is_integer(json_object_get(abi, "minor")));
    json_t *methods = json_object_get(about, "methods");
    assert_int_equal(json_array_size(methods), 9);
    find_by(methods, "method", "fail.no_result");
    json_decref(about);
    harness_run_result_free(&r);
    run_expect(&r, NULL, 0, "inspect", env("RPCD_PLUGIN_ECHO"), NULL);
    expect_in(r.out, "plugin:  echo\nversion: ");
    expect_in(r.out, "methods: 1\n\necho\n");
    harness_run_result_free(&r);
    /* A plugin built against a newer minor is refused, both versions named, as when serving. */
    run_expect(&r, NULL, EXIT_START_UP, "inspect", env("RPCD_FIXTURE_ABI_TOO_NEW"), NULL);
    assert_string_equal(r.out, "");
    harness_run_result_free(&r);
    run_expect(&r, NULL, EXIT_USAGE, "inspect", NULL);
    harness_run_result_free(&r);
}

/*
 * What a tool says beyond its name (title, annotations, output schema) is listed by rpcd list
 * and rpcd inspect, in JSON and in text; a method that says none of it has them null.
 */
static void test_list_and_inspect_show_what_a_tool_says(void **state)
{
    (void)state;
    harness_run_result r;
    run_expect(&r, NULL, 0, "list", "--plugin", env("RPCD_FIXTURE_TOOL_RESULT"), "--json", NULL);
    json_t *methods = json_loads(r.out, 0, NULL);
    assert_true(json_is_array(methods));
    json_t *weather = find_by(methods, "method", "weather");
    assert_string_equal(json_string_value(json_object_get(weather, "title")), "Get weather");
    assert_true(
        json_is_true(json_object_get(json_object_get(weather, "annotations"), "readOnlyHint")));
    json_t *output = json_object_get(weather, "output_schema");
    assert_string_equal(json_string_value(json_object_get(output, "type")), "object");
    assert_non_null(json_object_get(json_object_get(output, "properties"), "temperature"));
    json_t *meta = find_by(methods, "method", "meta");
    assert_true(json_is_null(json_object_get(meta, "title")));
    assert_true(json_is_null(json_object_get(meta, "annotations")));
    assert_true(json_is_null(json_object_get(meta, "output_schema")));
    json_decref(methods);
    harness_run_result_free(&r);
    /* In text, the same for both commands: the output schema as the registry keeps it, on one
     * line. */
    for (int inspect = 0; inspect < 2; inspect++) {
        if (inspect)
            run_expect(&r, NULL, 0, "inspect", env("RPCD_FIXTURE_TOOL_RESULT"), NULL);
        else
            run_expect(&r, NULL, 0, "list", "--plugin", env("RPCD_FIXTURE_TOOL_RESULT"), NULL);
        expect_in(r.out,
                  "  title:       Get weather\n  description: Current weather for a city.\n");
        expect_in(r.out, "  annotations: {\"readOnlyHint\":true,");
        expect_in(r.out, "  output:      {\"type\":\"object\", \"properties\":{\"temperature\"");
        harness_run_result_free(&r);
    }
    run_expect(&r, NULL, 0, "inspect", env("RPCD_FIXTURE_TOOL_RESULT"), "--json", NULL);
    json_t *about = json_loads(r.out, 0, NULL);
    weather = find_by(json_object_get(about, "methods"), "method", "weather");
    assert_string_equal(json_string_value(json_object_get(weather, "title")), "Get weather");
    assert_true(json_is_object(json_object_get(weather, "annotations")));
    assert_true(json_is_object(json_object_get(weather, "output_schema")));
    json_decref(about);
    harness_run_result_free(&r);
}

/* rpcd --help names the three commands. */
static void test_help_names_the_commands(void **state)
{
    (void)state;
    harness_run_result r;
    run_expect(&r, NULL, 0, "--help", NULL);
    expect_in(r.out, "rpcd call SOURCE");
    expect_in(r.out, "rpcd list SOURCE");
    expect_in(r.out, "rpcd inspect X.so");
    harness_run_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_call_prints_the_result_compact_off_a_terminal),
        cmocka_unit_test(test_call_pretty),
        cmocka_unit_test(test_call_params_from_stdin),
        cmocka_unit_test(test_call_exit_statuses),
        cmocka_unit_test(test_one_shot_usage_rules),
        cmocka_unit_test(test_call_start_up_errors),
        cmocka_unit_test(test_call_checks_the_plugin_file),
        cmocka_unit_test(test_call_usage),
        cmocka_unit_test(test_call_quiet),
        cmocka_unit_test(test_call_progress_on_stderr),
        cmocka_unit_test(test_call_set_reaches_the_plugin),
        cmocka_unit_test(test_call_with_a_config_file),
        cmocka_unit_test(test_call_plugin_prints_to_the_log),
        cmocka_unit_test(test_call_without_stdout),
        cmocka_unit_test(test_call_timeout),
        cmocka_unit_test(test_call_timeout_of_a_stuck_handler),
        cmocka_unit_test(test_call_cancel_after),
        cmocka_unit_test(test_list_json_with_tool_names),
        cmocka_unit_test(test_list_flags),
        cmocka_unit_test(test_inspect),
        cmocka_unit_test(test_list_and_inspect_show_what_a_tool_says),
        cmocka_unit_test(test_help_names_the_commands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
