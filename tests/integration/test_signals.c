/* SPDX-License-Identifier: MIT */
/*
 * Signals through the real binary: SIGHUP (a reload), SIGUSR1 and SIGUSR2 leave calls in flight
 * and serving alone; a plugin's init that takes a disposition rpcd relies on is named in a warning
 * (and the wake-up signal moves, SIGPIPE is ignored again); and a Go plugin whose goroutines spin
 * while it collects garbage runs under rpcd without a crash or a stall, many times over, and so
 * does one on the Go binding, stopped by SIGTERM with calls in flight.
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
#include <time.h>

#include <cmocka.h>

enum { GO_RUNS = 100, GO_SLOW_MS = 100, GO_SIGTERM_RUNS = 20 };

/* One rpcd with a config of its own (settings, then plugin sections), in a temp dir. */
typedef struct session {
    char *dir;
    harness_process *rpcd;
} session;

static long long now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static void start(session *s, const char *sections)
{
    s->dir = harness_temp_dir();
    assert_non_null(s->dir);
    char *config = harness_write_file(s->dir, "rpcd.conf", sections);
    assert_non_null(config);
    harness_argv args = harness_rpcd_argv(config);
    assert_non_null(args.argv[0]);
    s->rpcd = harness_start(args.argv);
    assert_non_null(s->rpcd);
    free(config);
}

/* The [rpcd] section, the bundled plugins, then more (may be empty). */
static void start_with_bundled(session *s, const char *settings, const char *more)
{
    char *plugins = harness_bundled_plugin_sections();
    assert_non_null(plugins);
    char *text;
    assert_true(asprintf(&text, "[rpcd]\n%s\n%s\n%s", settings, plugins, more) >= 0);
    start(s, text);
    free(text);
    free(plugins);
}

static void release(session *s)
{
    harness_free(s->rpcd);
    s->rpcd = NULL;
    if (s->dir)
        harness_remove_dir(s->dir);
    free(s->dir);
    s->dir = NULL;
}

static int session_setup(void **state)
{
    session *s = calloc(1, sizeof *s);
    *state = s;
    return s ? 0 : -1;
}

static int session_teardown(void **state)
{
    release(*state);
    free(*state);
    return 0;
}

static void send_text(session *s, const char *text)
{
    assert_int_equal(harness_write_text(s->rpcd, text, HARNESS_TIMEOUT_MS), HARNESS_OK);
}

static json_t *next_line(session *s)
{
    char *line = NULL;
    int status = harness_read_line(s->rpcd, HARNESS_TIMEOUT_MS, &line, NULL, NULL);
    if (status != HARNESS_OK)
        print_error("no line from rpcd (%d); stderr:\n%s\n", status, harness_stderr(s->rpcd));
    assert_int_equal(status, HARNESS_OK);
    json_t *message = json_loads(line, 0, NULL);
    if (!message)
        print_error("not JSON: %s\n", line);
    assert_non_null(message);
    free(line);
    return message;
}

/* The next line, asserted to be the response with this id (a JSON text) and returned. */
static json_t *expect_response_to(session *s, const char *id)
{
    json_t *response = next_line(s);
    json_t *expected = json_loads(id, JSON_DECODE_ANY, NULL);
    assert_non_null(expected);
    if (!json_equal(json_object_get(response, "id"), expected)) {
        char *text = json_dumps(response, 0);
        print_error("expected the response to %s, got %s\n", id, text);
        free(text);
    }
    assert_true(json_equal(json_object_get(response, "id"), expected));
    json_decref(expected);
    return response;
}

static void expect_exit(session *s, int code)
{
    harness_exit status;
    assert_int_equal(harness_wait(s->rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    if (!status.exited || status.code != code)
        print_error("rpcd ended with %s, expected exit %d; stderr:\n%s\n",
                    harness_exit_describe(&status), code, harness_stderr(s->rpcd));
    assert_true(status.exited);
    assert_int_equal(status.code, code);
    const char *err = harness_stderr(s->rpcd);
    static const char *const markers[] = {"WARNING: ThreadSanitizer", "ERROR: AddressSanitizer",
                                          "runtime error:", "fatal error:"};
    for (size_t i = 0; i < sizeof markers / sizeof markers[0]; i++) {
        if (strstr(err, markers[i]))
            print_error("rpcd's stderr has a report:\n%s\n", err);
        assert_null(strstr(err, markers[i]));
    }
}

static void expect_stderr(session *s, const char *text)
{
    int status = harness_wait_for_stderr(s->rpcd, text, HARNESS_TIMEOUT_MS);
    if (status != HARNESS_OK)
        print_error("stderr lacks \"%s\":\n%s\n", text, harness_stderr(s->rpcd));
    assert_int_equal(status, HARNESS_OK);
}

/* ---- SIGHUP, SIGUSR1, SIGUSR2 ---------------------------------------------------------- */

/*
 * The signal comes while a call runs: the call is still answered, rpcd goes on serving, and
 * ends at end of input with status 0. Their default action would end rpcd at once.
 */
static void signal_leaves_calls_alone(session *s, int number, const char *logged)
{
    start_with_bundled(s, "workers = 2\nlog_level = debug", "");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":\"slow\",\"method\":\"sleep\","
                 "\"params\":{\"ms\":300,\"_meta\":{\"progressToken\":\"t\"}}}\n");
    json_decref(next_line(s)); /* its first progress report: the call runs */
    assert_int_equal(harness_signal(s->rpcd, number), 0);
    expect_stderr(s, logged);
    json_t *response = next_line(s);
    while (json_object_get(response, "method")) { /* more progress */
        json_decref(response);
        response = next_line(s);
    }
    assert_string_equal(json_string_value(json_object_get(response, "id")), "slow");
    assert_non_null(json_object_get(response, "result"));
    json_decref(response);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\",\"params\":[2]}\n");
    json_decref(expect_response_to(s, "2"));
    harness_close_stdin(s->rpcd);
    expect_exit(s, 0);
}

/* SIGHUP reloads: the running call is answered all the same, on the generation it began on. */
static void test_sighup_reloads_and_leaves_calls_alone(void **state)
{
    signal_leaves_calls_alone(*state, SIGHUP,
                              "reloaded: generation 2: plugins added [], removed [], replaced []");
}

static void test_sigusr1_is_ignored(void **state)
{
    signal_leaves_calls_alone(*state, SIGUSR1, "signal 10: ignored");
}

static void test_sigusr2_is_ignored(void **state)
{
    signal_leaves_calls_alone(*state, SIGUSR2, "signal 12: ignored");
}

/* ---- Dispositions a plugin's init takes ------------------------------------------------ */

static void start_with_taker(session *s, const char *take)
{
    const char *taker = harness_env("RPCD_FIXTURE_SIGNAL_TAKER");
    assert_non_null(taker);
    char *more;
    assert_true(asprintf(&more, "[plugin signal_taker]\npath = %s\ntake = %s\n", taker, take) >= 0);
    start_with_bundled(s, "workers = 2", more);
    free(more);
}

/* A plugin that takes SIGTERM over is named: rpcd no longer stops gracefully on it. */
static void test_plugin_taking_sigterm_is_named(void **state)
{
    session *s = *state;
    start_with_taker(s, "sigterm");
    expect_stderr(s, "plugin signal_taker took over signal 15 (SIGTERM)");
    harness_close_stdin(s->rpcd);
    expect_exit(s, 0);
}

/*
 * A plugin that puts SIGPIPE back to its default is named, and rpcd ignores it again: a client
 * that closes rpcd's stdout still gets status 74, not a death by SIGPIPE.
 */
static void test_plugin_resetting_sigpipe_is_undone(void **state)
{
    session *s = *state;
    start_with_taker(s, "sigpipe");
    expect_stderr(s, "plugin signal_taker put SIGPIPE back to its default");
    harness_close_stdout(s->rpcd);
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}\n");
    expect_exit(s, 74);
}

/*
 * A plugin that takes the wake-up signal (with SA_RESTART, as runtimes do) is named, and rpcd
 * wakes its reader with another: a stop while the reader waits for input ends rpcd at once.
 * With the signal lost, the read would be restarted and rpcd would wait for input forever.
 */
static void test_plugin_taking_the_wake_signal_is_moved_from(void **state)
{
    session *s = *state;
    start_with_taker(s, "wake");
    expect_stderr(s, "which rpcd used to wake its reader; rpcd uses signal");
    send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}\n");
    json_decref(expect_response_to(s, "1"));
    long long sent = now_ms();
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    expect_exit(s, 0);
    assert_true(now_ms() - sent < HARNESS_TIMEOUT_MS);
}

/* Sets every real-time signal from SIGRTMIN to SIGRTMAX but keep to disposition (0: none). */
static void set_realtime_signals(void (*disposition)(int), int keep)
{
    for (int number = SIGRTMIN; number <= SIGRTMAX; number++)
        if (number != keep)
            signal(number, disposition);
}

/*
 * A parent that starts rpcd with every real-time signal ignored (inherited through exec) leaves
 * it nothing to wake its reader with: rpcd says so and exits 70 before loading anything.
 */
static void test_no_free_wake_signal_at_start(void **state)
{
    (void)state;
    set_realtime_signals(SIG_IGN, 0);
    const char *config = harness_env("RPCD_BUILD_CONFIG");
    harness_argv args = harness_rpcd_argv(config);
    harness_run_result result;
    int status = harness_run(args.argv, "", 0, HARNESS_TIMEOUT_MS, &result);
    set_realtime_signals(SIG_DFL, 0);
    assert_int_equal(status, HARNESS_OK);
    if (!result.status.exited || result.status.code != 70)
        print_error("rpcd ended with %s; stderr:\n%s\n", harness_exit_describe(&result.status),
                    result.err);
    assert_true(result.status.exited);
    assert_int_equal(result.status.code, 70);
    assert_non_null(strstr(result.err, "no real-time signal is free to wake the reader with"));
    harness_run_result_free(&result);
}

/* The one free real-time signal, taken by a plugin: rpcd says it has nothing to move to. */
static void test_wake_signal_taken_with_none_left(void **state)
{
    session *s = *state;
    set_realtime_signals(SIG_IGN, SIGRTMAX - 1);
    start_with_taker(s, "wake");
    set_realtime_signals(SIG_DFL, 0);
    expect_stderr(s, "and no other real-time signal is free");
    harness_close_stdin(s->rpcd);
    expect_exit(s, 0);
}

/* ---- A Go plugin ----------------------------------------------------------------------- */

/*
 * The Go fixture's path, or NULL: the test is then skipped, without a Go toolchain, under
 * valgrind (which Go's runtime does not support), and under ThreadSanitizer for the tests that
 * need preemption: its runtime starts the threads cgo creates for Go with the creating thread's
 * signal mask, and rpcd's workers block every signal but the faults, so preemption signals never
 * reach the goroutines on them.
 */
static const char *go_fixture(bool needs_preemption)
{
    const char *path = getenv("RPCD_FIXTURE_GOFIXTURE");
    const char *sanitize = getenv("RPCD_SANITIZE");
    if (!path || harness_wrapped() || (needs_preemption && sanitize && strstr(sanitize, "thread")))
        return NULL;
    /* One P for the spinner, one for the handler: a collection then waits only for preemption,
     * and no idle P adds a collector thread to cores shared with other work. */
    setenv("GOMAXPROCS", "2", 1);
    unsetenv("GOFIXTURE_KEEP_SIGPIPE");
    unsetenv("GOFIXTURE_NOTIFY_SIGTERM");
    return path;
}

/* A churn call takes a second or more (longer in sanitizer builds): a stop's grace period must
 * outlast it for its answer to be written (test_go_plugin_sigterm), 5 s scaled for the build. */
static void start_go(session *s, const char *path)
{
    char *text;
    assert_true(asprintf(&text,
                         "[rpcd]\nworkers = 4\nshutdown_grace_ms = %d\n[plugin go]\npath = %s\n",
                         test_time_ms(5000), path) >= 0);
    start(s, text);
    free(text);
}

/* Spinners that give up after 2e9 rounds: where no preemption signal reaches Go (under
 * ThreadSanitizer, which holds signals back from threads that never call into it) the calls
 * still end, and their answers are written. */
static const char churn_pair[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"go.churn\",\"params\":{\"spinners\":1,"
    "\"spin\":2000000000}}\n"
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"go.churn\",\"params\":{\"spinners\":1,"
    "\"spin\":2000000000}}\n";

static const char churn_one[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"go.churn\",\"params\":{\"spinners\":1}}\n";

/* Reads count churn responses (any order); returns the longest collection they saw. */
static double read_churn(session *s, int count)
{
    double longest = 0;
    for (int i = 0; i < count; i++) {
        json_t *response = next_line(s);
        json_t *result = json_object_get(response, "result");
        if (!result) {
            char *text = json_dumps(response, 0);
            print_error("go.churn failed: %s\n", text);
            free(text);
        }
        assert_non_null(result);
        /* The spinners ran until the collections were over: they never had to give up. */
        assert_true(json_is_false(json_object_get(result, "spun_out")));
        double gc_ms = json_number_value(json_object_get(result, "gc_ms"));
        if (gc_ms > longest)
            longest = gc_ms;
        json_decref(response);
    }
    return longest;
}

/*
 * Two calls, one after the other, each with a goroutine spinning in a loop no cooperative
 * preemption point interrupts while the handler collects garbage (calls at once are in the tests
 * below; here the pauses are measured, and they would measure the load too): 100 runs, none
 * crashes, and each ends 0 at end of input. Without preemption signals every collection waits
 * until its spinner gives up, tens of seconds later: no spinner may ever give up (read_churn).
 * How long the pauses are is the machine's figure, not the test's (on two cores shared with
 * other work they pass 100 ms at rates that follow the load, with no signal at fault: a bare C
 * host calling the same handler shows the same tail): the runs past 100 ms are printed, not
 * failed.
 */
static void test_go_plugin_runs_without_crash_or_stall(void **state)
{
    session *s = *state;
    const char *path = go_fixture(true);
    if (!path)
        skip();
    double worst = 0;
    int slow_runs = 0;
    long long started = now_ms();
    for (int run = 0; run < GO_RUNS; run++) {
        start_go(s, path);
        double longest = 0;
        for (int call = 0; call < 2; call++) {
            send_text(s, churn_one);
            double took = read_churn(s, 1);
            if (took > longest)
                longest = took;
        }
        if (longest > worst)
            worst = longest;
        if (longest >= GO_SLOW_MS) {
            print_message("run %d: a collection took %.1f ms\n", run, longest);
            slow_runs++;
        }
        harness_close_stdin(s->rpcd);
        expect_exit(s, 0);
        release(s);
    }
    print_message("%d runs in %lld ms, longest collection %.1f ms, %d over %d ms\n", GO_RUNS,
                  now_ms() - started, worst, slow_runs, GO_SLOW_MS);
}

/*
 * SIGTERM with a Go plugin loaded, calls in flight and the reader waiting in read(): the calls
 * finish within the grace period and are answered, and rpcd exits 0.
 */
static void test_go_plugin_sigterm(void **state)
{
    session *s = *state;
    const char *path = go_fixture(true);
    if (!path)
        skip();
    start_go(s, path);
    send_text(s, churn_pair);
    expect_stderr(s, "1 plugins loaded");
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
    read_churn(s, 2);
    expect_exit(s, 0);
    assert_non_null(strstr(harness_stderr(s->rpcd), "signal 15: stopping"));
}

/*
 * A closed stdout with a Go plugin loaded: status 74, not a death by SIGPIPE, both with a plugin
 * that ignores SIGPIPE as documented and with one that leaves Go's handler (then named).
 */
static void go_closed_stdout(session *s, bool keep_go_handler)
{
    const char *path = go_fixture(false);
    if (!path)
        skip();
    if (keep_go_handler)
        setenv("GOFIXTURE_KEEP_SIGPIPE", "1", 1);
    start_go(s, path);
    harness_close_stdout(s->rpcd);
    send_text(s, churn_pair);
    expect_exit(s, 74);
    bool named = strstr(harness_stderr(s->rpcd), "plugin go handles SIGPIPE") != NULL;
    assert_true(named == keep_go_handler);
}

static void test_go_plugin_closed_stdout(void **state)
{
    go_closed_stdout(*state, false);
}

static void test_go_plugin_keeping_sigpipe_is_named(void **state)
{
    go_closed_stdout(*state, true);
}

/* A Go plugin that calls signal.Notify for SIGTERM during init is named. */
static void test_go_plugin_notify_sigterm_is_named(void **state)
{
    session *s = *state;
    const char *path = go_fixture(false);
    if (!path)
        skip();
    setenv("GOFIXTURE_NOTIFY_SIGTERM", "1", 1);
    start_go(s, path);
    expect_stderr(s, "plugin go took over signal 15 (SIGTERM)");
    harness_close_stdin(s->rpcd);
    expect_exit(s, 0);
}

/*
 * The Go binding (bindings/go) under SIGTERM, many times: a plugin on it whose handlers, and the
 * goroutines that complete its deferred calls, spin and collect garbage has four calls in
 * flight when SIGTERM comes. Each time every call is answered once, with its result (no spinner
 * ever had to give up: preemption worked) or, for a call the stop came before, -32800; rpcd logs
 * the stop and exits 0: the binding's shutdown waits for its goroutines, and nothing crashes on
 * the way out.
 */
static void test_go_binding_sigterm_under_load(void **state)
{
    session *s = *state;
    const char *path = go_fixture(true) ? getenv("RPCD_FIXTURE_GOBINDING") : NULL;
    if (!path)
        skip();
    static const char calls[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"gobinding.churn\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"gobinding.churn_later\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"gobinding.churn\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"gobinding.churn_later\"}\n";
    long long started = now_ms();
    int ran = 0;
    for (int run = 0; run < GO_SIGTERM_RUNS; run++) {
        start_go(s, path);
        /* Served, so serving: a stop signal before that ends rpcd at once, by design. */
        send_text(s, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}\n");
        json_decref(next_line(s));
        send_text(s, calls);
        /* Some calls still run, some have ended: the signal comes at a different point each run. */
        struct timespec pause = {0, (run % 5) * 5 * 1000 * 1000};
        nanosleep(&pause, NULL);
        assert_int_equal(harness_signal(s->rpcd, SIGTERM), 0);
        /* Every request rpcd read is answered once; those it had not read yet, not at all. */
        harness_lines lines;
        assert_int_equal(harness_read_all_lines(s->rpcd, HARNESS_TIMEOUT_MS, &lines), HARNESS_OK);
        bool answered[5] = {false};
        for (size_t i = 0; i < lines.count; i++) {
            json_t *response = json_loads(lines.items[i], 0, NULL);
            json_int_t id = json_integer_value(json_object_get(response, "id"));
            json_t *result = json_object_get(response, "result");
            json_t *code = json_object_get(json_object_get(response, "error"), "code");
            bool never_ran = json_integer_value(code) == -32800;
            if (id < 1 || id > 4 || answered[id] || (!result && !never_ran) ||
                (result && !json_is_false(json_object_get(result, "spun_out")))) {
                print_error("run %d: %s\n", run, lines.items[i]);
                fail();
            }
            answered[id] = true;
            ran += result != NULL;
            json_decref(response);
        }
        harness_lines_free(&lines);
        expect_exit(s, 0);
        assert_non_null(strstr(harness_stderr(s->rpcd), "signal 15: stopping"));
        release(s);
    }
    print_message("%d runs in %lld ms, %d calls of %d ran\n", GO_SIGTERM_RUNS, now_ms() - started,
                  ran, GO_SIGTERM_RUNS * 4);
    /* The signal came while calls ran, not only before any had started. */
    assert_true(ran > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sighup_reloads_and_leaves_calls_alone, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_sigusr1_is_ignored, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_sigusr2_is_ignored, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_plugin_taking_sigterm_is_named, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_plugin_resetting_sigpipe_is_undone, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_plugin_taking_the_wake_signal_is_moved_from,
                                        session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_no_free_wake_signal_at_start, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_wake_signal_taken_with_none_left, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_go_plugin_runs_without_crash_or_stall, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_go_plugin_sigterm, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_go_plugin_closed_stdout, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_go_plugin_keeping_sigpipe_is_named, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_go_plugin_notify_sigterm_is_named, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_go_binding_sigterm_under_load, session_setup,
                                        session_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
