/* SPDX-License-Identifier: MIT */
/*
 * A plugin that takes rpcd down (a NULL dereference, abort(), a stack overflow, exit(3)) after
 * several responses were finished but not yet written: the responses all reach stdout as whole
 * lines, one line on stderr names the plugin, the method and the request id, and rpcd ends the
 * way the plugin made it (the same signal, or exit(3)'s status).
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

enum { FINISHED_FIRST = 8 };

/*
 * Sanitizer runtimes take the fatal signals themselves (and report leaks at an exit() that
 * frees nothing): here the signals are rpcd's, so they are told to leave them alone.
 */
static void leave_fatal_signals_to_rpcd(void)
{
    static const char *const names[] = {"ASAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS"};
    static const char extra[] = "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:"
                                "handle_abort=0:detect_leaks=0";
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *old = getenv(names[i]);
        char *value;
        assert_true(asprintf(&value, "%s%s%s", old ? old : "", old && old[0] ? ":" : "", extra) >=
                    0);
        setenv(names[i], value, 1);
        free(value);
    }
}

/*
 * Sends FINISHED_FIRST quick echoes and then method (id "boom") in one write: the echoes are
 * answered on the reading thread and wait in the output buffer while it reads on, until method
 * ends the process. Checks stdout, the line on stderr and how rpcd ended.
 */
static void crash_with(const char *method, int signal_number, int exit_code, const char *more)
{
    const char *fixture = harness_env("RPCD_FIXTURE_CRASH");
    assert_non_null(fixture);
    char *dir = harness_temp_dir();
    assert_non_null(dir);
    char *text;
    assert_true(
        asprintf(&text, "[rpcd]\nworkers = 2\n%s[plugin crash]\npath = %s\n", more, fixture) >= 0);
    char *config = harness_write_file(dir, "rpcd.conf", text);
    assert_non_null(config);
    free(text);

    char input[4096];
    size_t used = 0;
    for (int i = 1; i <= FINISHED_FIRST; i++)
        used += (size_t)snprintf(input + used, sizeof input - used,
                                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"crash.echo\","
                                 "\"params\":[%d]}\n",
                                 i, i);
    used += (size_t)snprintf(input + used, sizeof input - used,
                             "{\"jsonrpc\":\"2.0\",\"id\":\"boom\",\"method\":\"%s\"}\n", method);

    leave_fatal_signals_to_rpcd();
    harness_argv args = harness_rpcd_argv(config);
    assert_non_null(args.argv[0]);
    harness_run_result result;
    assert_int_equal(harness_run(args.argv, input, used, HARNESS_TIMEOUT_MS, &result), HARNESS_OK);

    /* Every finished response, each a whole line. */
    harness_lines lines;
    assert_int_equal(harness_split_lines(result.out, result.out_length, &lines), 0);
    if (lines.count != FINISHED_FIRST || lines.unterminated)
        print_error("stdout:\n%s\nstderr:\n%s\n", result.out, result.err);
    assert_int_equal(lines.count, FINISHED_FIRST);
    assert_false(lines.unterminated);
    bool seen[FINISHED_FIRST + 1] = {false};
    for (size_t i = 0; i < lines.count; i++) {
        json_t *response = json_loads(lines.items[i], 0, NULL);
        assert_non_null(response);
        json_int_t id = json_integer_value(json_object_get(response, "id"));
        assert_true(id >= 1 && id <= FINISHED_FIRST && !seen[id]);
        seen[id] = true;
        assert_int_equal(json_integer_value(json_array_get(json_object_get(response, "result"), 0)),
                         id);
        json_decref(response);
    }
    harness_lines_free(&lines);

    char expected[256];
    snprintf(expected, sizeof expected,
             "in plugin crash, method %s, request id \"boom\": ", method);
    if (!strstr(result.err, expected))
        print_error("stderr lacks \"%s\":\n%s\n", expected, result.err);
    assert_non_null(strstr(result.err, expected));

    if (signal_number) {
        if (result.status.exited || result.status.signal != signal_number)
            print_error("rpcd ended with %s, expected signal %d\n",
                        harness_exit_describe(&result.status), signal_number);
        assert_false(result.status.exited);
        assert_int_equal(result.status.signal, signal_number);
    } else {
        if (!result.status.exited || result.status.code != exit_code)
            print_error("rpcd ended with %s, expected exit %d\n",
                        harness_exit_describe(&result.status), exit_code);
        assert_true(result.status.exited);
        assert_int_equal(result.status.code, exit_code);
    }
    harness_run_result_free(&result);
    harness_remove_dir(dir);
    free(dir);
    free(config);
}

static void crash_after_finished_responses(const char *method, int signal_number, int exit_code)
{
    crash_with(method, signal_number, exit_code, "");
}

static void test_null_dereference_on_the_reader(void **state)
{
    (void)state;
    crash_after_finished_responses("crash.null", SIGSEGV, 0);
}

static void test_null_dereference_on_a_worker(void **state)
{
    (void)state;
    crash_after_finished_responses("crash.null_on_worker", SIGSEGV, 0);
}

static void test_abort(void **state)
{
    (void)state;
    crash_after_finished_responses("crash.abort", SIGABRT, 0);
}

/* The report runs on the alternate stack: the thread's own is used up. */
static void test_stack_overflow_on_a_worker(void **state)
{
    (void)state;
    /* valgrind takes over the stacks of the threads it runs. */
    if (harness_wrapped())
        skip();
    crash_after_finished_responses("crash.overflow", SIGSEGV, 0);
}

static void test_exit_from_a_plugin(void **state)
{
    (void)state;
    crash_after_finished_responses("crash.exit", 0, 3);
}

/*
 * A fault in what exit() runs after rpcd's report (here the plugin's destructor) ends the
 * process with that signal, on the thread that reported: it used to wait there for ever.
 */
static void test_fault_after_exit_from_a_plugin(void **state)
{
    (void)state;
    crash_after_finished_responses("crash.exit_then_fault", SIGSEGV, 0);
}

/*
 * With a Go plugin loaded first, whose runtime installs its own SIGSEGV handler over rpcd's: a
 * fault outside Go code is passed on to rpcd's, and reported the same way.
 */
static void test_fault_with_a_go_plugin_loaded(void **state)
{
    (void)state;
    const char *go = getenv("RPCD_FIXTURE_GOFIXTURE");
    if (!go || harness_wrapped())
        skip();
    char *section;
    assert_true(asprintf(&section, "[plugin go]\npath = %s\n", go) >= 0);
    crash_with("crash.null_on_worker", SIGSEGV, 0, section);
    free(section);
}

/*
 * The client closed rpcd's stdout before the crash: the finished responses cannot be written,
 * and a second line says so; rpcd still dies of the signal.
 */
static void test_flush_to_a_closed_stdout(void **state)
{
    (void)state;
    const char *fixture = harness_env("RPCD_FIXTURE_CRASH");
    assert_non_null(fixture);
    char *dir = harness_temp_dir();
    assert_non_null(dir);
    char *text;
    assert_true(asprintf(&text, "[rpcd]\nworkers = 2\n[plugin crash]\npath = %s\n", fixture) >= 0);
    char *config = harness_write_file(dir, "rpcd.conf", text);
    assert_non_null(config);
    free(text);
    leave_fatal_signals_to_rpcd();
    harness_argv args = harness_rpcd_argv(config);
    harness_process *rpcd = harness_start(args.argv);
    assert_non_null(rpcd);
    harness_close_stdout(rpcd);
    assert_int_equal(harness_write_text(
                         rpcd,
                         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"crash.echo\",\"params\":[1]}\n"
                         "{\"jsonrpc\":\"2.0\",\"id\":\"boom\",\"method\":\"crash.null\"}\n",
                         HARNESS_TIMEOUT_MS),
                     HARNESS_OK);
    harness_exit status;
    assert_int_equal(harness_wait(rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    const char *err = harness_stderr(rpcd);
    if (status.exited || status.signal != SIGSEGV ||
        !strstr(err, "finished responses could not be written"))
        print_error("rpcd ended with %s; stderr:\n%s\n", harness_exit_describe(&status), err);
    assert_int_equal(status.signal, SIGSEGV);
    assert_non_null(strstr(err, "in plugin crash, method crash.null, request id \"boom\""));
    assert_non_null(strstr(err, "finished responses could not be written"));
    harness_free(rpcd);
    harness_remove_dir(dir);
    free(dir);
    free(config);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_dereference_on_the_reader),
        cmocka_unit_test(test_null_dereference_on_a_worker),
        cmocka_unit_test(test_abort),
        cmocka_unit_test(test_stack_overflow_on_a_worker),
        cmocka_unit_test(test_exit_from_a_plugin),
        cmocka_unit_test(test_fault_after_exit_from_a_plugin),
        cmocka_unit_test(test_flush_to_a_closed_stdout),
        cmocka_unit_test(test_fault_with_a_go_plugin_loaded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
