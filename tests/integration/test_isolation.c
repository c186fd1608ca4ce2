/* SPDX-License-Identifier: MIT */
/*
 * Plugins with isolation = process: the whole host API works from a host process (results,
 * failures, notifications, progress, cancellation, deferred completion from a plugin's thread,
 * config, logging, the method's name); a host that dies (a signal, exit(), a malformed or forged
 * message) fails only its calls in flight, with -32603 naming how it ended, and is restarted; a
 * call past its deadline is answered and a host that keeps it is killed; the restart limit; a
 * plugin's stdout never reaches the protocol; and a stress run in which one of four isolated
 * plugins crashes every 1,000 calls while every id is answered exactly once.
 */
#include "harness.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static long long now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* A running rpcd over a config written from text. */
typedef struct session {
    char *dir;
    char *config;
    harness_process *process;
} session;

/* The sanitizer runtimes leave a host's fatal signals to it (the test is about them). */
static void leave_fatal_signals_alone(void)
{
    static const char *const names[] = {"ASAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS"};
    static const char extra[] = "handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:"
                                "handle_abort=0";
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *old = getenv(names[i]);
        if (old && strstr(old, "handle_abort=0"))
            continue;
        char *value;
        assert_true(asprintf(&value, "%s%s%s", old ? old : "", old && old[0] ? ":" : "", extra) >=
                    0);
        setenv(names[i], value, 1);
        free(value);
    }
}

/* Starts rpcd on a config written from text, after the arguments of wrapper (NULL-terminated;
 * NULL: none), a program that runs the rest. */
static void start_wrapped(session *s, const char *text, const char *const *wrapper)
{
    leave_fatal_signals_alone();
    char *expanded = harness_expand_env(text);
    assert_non_null(expanded);
    s->dir = harness_temp_dir();
    assert_non_null(s->dir);
    s->config = harness_write_file(s->dir, "rpcd.conf", expanded);
    assert_non_null(s->config);
    free(expanded);
    harness_argv rpcd = harness_rpcd_argv(s->config);
    assert_non_null(rpcd.argv[0]);
    static const char *const none[] = {NULL};
    harness_argv args = harness_argv_wrapped(wrapper ? wrapper : none, &rpcd);
    s->process = harness_start(args.argv);
    assert_non_null(s->process);
}

static void start(session *s, const char *text)
{
    start_wrapped(s, text, NULL);
}

/* Ends rpcd (end of input), which must exit 0; *kept (may be NULL) gets a copy of its stderr. */
static void stop_keeping(session *s, char **kept)
{
    harness_close_stdin(s->process);
    harness_exit status;
    assert_int_equal(harness_wait(s->process, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    if (!status.exited || status.code != 0)
        fprintf(stderr, "rpcd ended with %s; stderr:\n%s\n", harness_exit_describe(&status),
                harness_stderr(s->process));
    assert_true(status.exited);
    assert_int_equal(status.code, 0);
    if (kept)
        *kept = strdup(harness_stderr(s->process));
    harness_free(s->process);
    harness_remove_dir(s->dir);
    free(s->dir);
    free(s->config);
}

static void stop(session *s)
{
    stop_keeping(s, NULL);
}

static void send_line(session *s, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void send_line(session *s, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char *line;
    assert_true(vasprintf(&line, format, args) >= 0);
    va_end(args);
    assert_int_equal(harness_write_text(s->process, line, HARNESS_TIMEOUT_MS), HARNESS_OK);
    assert_int_equal(harness_write_text(s->process, "\n", HARNESS_TIMEOUT_MS), HARNESS_OK);
    free(line);
}

/* The next line of stdout, parsed: every line rpcd writes must be JSON. */
static json_t *next_message(session *s)
{
    char *line = NULL;
    int status = harness_read_line(s->process, HARNESS_TIMEOUT_MS, &line, NULL, NULL);
    if (status != HARNESS_OK)
        fprintf(stderr, "no line from rpcd (%d); stderr:\n%s\n", status,
                harness_stderr(s->process));
    assert_int_equal(status, HARNESS_OK);
    json_error_t error;
    json_t *message = json_loads(line, 0, &error);
    if (!message)
        fprintf(stderr, "not JSON on stdout: %s\n", line);
    assert_non_null(message);
    free(line);
    return message;
}

/* Reads the response to id (a string), skipping nothing: it must be the next line. */
static json_t *response_to(session *s, const char *id)
{
    json_t *message = next_message(s);
    const char *got = json_string_value(json_object_get(message, "id"));
    if (!got || strcmp(got, id) != 0)
        fprintf(stderr, "expected the response to %s, got %s\n", id,
                json_dumps(message, JSON_COMPACT));
    assert_non_null(got);
    assert_string_equal(got, id);
    return message;
}

static json_t *call(session *s, const char *id, const char *method, const char *params)
{
    send_line(s, "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"%s\",\"params\":%s}", id, method,
              params);
    return response_to(s, id);
}

static void expect_result(json_t *response, const char *expected)
{
    json_t *want = json_loads(expected, JSON_DECODE_ANY, NULL);
    assert_non_null(want);
    json_t *result = json_object_get(response, "result");
    if (!json_equal(result, want))
        fprintf(stderr, "expected result %s in %s\n", expected, json_dumps(response, JSON_COMPACT));
    assert_true(json_equal(result, want));
    json_decref(want);
    json_decref(response);
}

/* The error's code, and data.exception containing text. */
static void expect_error(json_t *response, json_int_t code, const char *exception)
{
    json_t *error = json_object_get(response, "error");
    if (!error || json_integer_value(json_object_get(error, "code")) != code)
        fprintf(stderr, "expected error %lld in %s\n", (long long)code,
                json_dumps(response, JSON_COMPACT));
    assert_non_null(error);
    assert_int_equal(json_integer_value(json_object_get(error, "code")), code);
    if (exception) {
        const char *got =
            json_string_value(json_object_get(json_object_get(error, "data"), "exception"));
        if (!got || !strstr(got, exception))
            fprintf(stderr, "expected exception '%s' in %s\n", exception,
                    json_dumps(response, JSON_COMPACT));
        assert_non_null(got);
        assert_non_null(strstr(got, exception));
    }
    json_decref(response);
}

/*
 * A call failed by its host's death (rpcd.conf(5), ISOLATION): -32603, data.exception "plugin
 * host " then how, data.detail naming the plugin and how, data.data the signal or the exit
 * status (JSON text).
 */
static void expect_host_death(json_t *response, const char *plugin, const char *how,
                              const char *status)
{
    json_t *data = json_object_get(json_object_get(response, "error"), "data");
    char exception[256], detail[256];
    snprintf(exception, sizeof exception, "plugin host %s", how);
    snprintf(detail, sizeof detail, "the host process of plugin %s %s", plugin, how);
    const char *got_exception = json_string_value(json_object_get(data, "exception"));
    const char *got_detail = json_string_value(json_object_get(data, "detail"));
    json_t *want = json_loads(status, 0, NULL);
    assert_non_null(want);
    if (!got_exception || strcmp(got_exception, exception) != 0 || !got_detail ||
        strcmp(got_detail, detail) != 0 || !json_equal(json_object_get(data, "data"), want))
        fprintf(stderr, "expected a death (%s; %s; %s) in %s\n", exception, detail, status,
                json_dumps(response, JSON_COMPACT));
    assert_non_null(got_exception);
    assert_string_equal(got_exception, exception);
    assert_non_null(got_detail);
    assert_string_equal(got_detail, detail);
    assert_true(json_equal(json_object_get(data, "data"), want));
    json_decref(want);
    expect_error(response, -32603, NULL);
}

/* How many times part stands in text. */
static int count_of(const char *text, const char *part)
{
    int count = 0;
    for (const char *at = strstr(text, part); at; at = strstr(at + 1, part))
        count++;
    return count;
}

static const char fixtures[] = "[plugin a]\n"
                               "path = ${RPCD_FIXTURE_ISOLATED_A}\n"
                               "isolation = process\n"
                               "greeting = hello\n"
                               "[plugin b]\n"
                               "path = ${RPCD_FIXTURE_ISOLATED_B}\n";

/* The bundled echo and progress plugins, isolated, as in-process. */
static void test_bundled_plugins_isolated(void **state)
{
    (void)state;
    session s;
    start(&s, "[rpcd]\nisolation = process\n"
              "[plugin echo]\npath = ${RPCD_PLUGIN_ECHO}\n"
              "[plugin progress]\npath = ${RPCD_PLUGIN_PROGRESS}\ndefault_steps = 2\n");
    expect_result(call(&s, "1", "echo", "[1,{\"two\":2}]"), "[1,{\"two\":2}]");
    /* default_steps from the config; progress with the client's token. */
    send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"progress\","
                  "\"params\":{\"_meta\":{\"progressToken\":\"tok\"}}}");
    for (int step = 1; step <= 2; step++) {
        json_t *note = next_message(&s);
        assert_string_equal(json_string_value(json_object_get(note, "method")),
                            "notifications/progress");
        json_t *params = json_object_get(note, "params");
        assert_string_equal(json_string_value(json_object_get(params, "progressToken")), "tok");
        assert_int_equal(json_integer_value(json_object_get(params, "progress")), step);
        json_decref(note);
    }
    expect_result(response_to(&s, "p"), "{\"steps\":2}");
    /* A cancellation reaches the handler in its host. */
    send_line(&s,
              "{\"jsonrpc\":\"2.0\",\"id\":\"z\",\"method\":\"sleep\",\"params\":{\"ms\":600000}}");
    send_line(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":\"z\"}}");
    json_t *cancelled = response_to(&s, "z");
    json_t *data = json_object_get(json_object_get(cancelled, "error"), "data");
    assert_non_null(json_object_get(json_object_get(data, "data"), "slept_ms"));
    assert_true(json_integer_value(json_object_get(json_object_get(data, "data"), "slept_ms")) <
                600000);
    expect_error(cancelled, -32800, "RPCD_ERR_CANCELLED");
    stop(&s);
}

/* Every host function a plugin may call on a call, from the host process. */
static void test_host_functions_isolated(void **state)
{
    (void)state;
    session s;
    start(&s, fixtures);
    expect_result(call(&s, "1", "a.deferred", "[]"), "{\"from\":\"thread\"}");
    json_t *own = call(&s, "2", "a.fail_code", "[]");
    json_t *error = json_object_get(own, "error");
    assert_int_equal(json_integer_value(json_object_get(error, "code")), 42);
    assert_string_equal(json_string_value(json_object_get(error, "message")), "the answer");
    assert_string_equal(json_string_value(json_object_get(json_object_get(error, "data"), "why")),
                        "asked");
    json_decref(own);
    json_t *invalid = call(&s, "3", "a.fail", "[]");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(invalid, "error"), "data"), "detail")),
                        "need two numbers");
    expect_error(invalid, -32602, "RPCD_ERR_INVALID_PARAMS");
    /* A message that is not UTF-8 reaches the client as UTF-8, its host alive. */
    json_t *bad = call(&s, "3b", "a.bad_utf8", "[]");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(json_object_get(bad, "error"), "data"), "detail")),
                        "bad ?? text");
    expect_error(bad, -32603, "RPCD_ERR_INTERNAL");
    /* The notification first; the reserved one refused in the host as in-process (-7). */
    send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"4\",\"method\":\"a.notify\",\"params\":[]}");
    json_t *note = next_message(&s);
    assert_string_equal(json_string_value(json_object_get(note, "method")), "isolated/hello");
    json_decref(note);
    expect_result(response_to(&s, "4"), "{\"refused\":-7}");
    assert_int_equal(harness_wait_for_stderr(s.process, "reserves for itself", HARNESS_TIMEOUT_MS),
                     HARNESS_OK);
    expect_result(call(&s, "5", "a.info", "[]"), "{\"method\":\"a.info\",\"greeting\":\"hello\"}");
    assert_int_equal(
        harness_wait_for_stderr(s.process, ": a: isolated log_text\\nline", HARNESS_TIMEOUT_MS),
        HARNESS_OK);
    assert_non_null(strstr(harness_stderr(s.process), ": a: isolated log 1\n"));
    assert_non_null(strstr(harness_stderr(s.process), ": a: isolated log_v 2\n"));
    /* What the plugin prints goes to stderr; the next stdout line is the response. */
    expect_result(call(&s, "6", "a.stdout", "[]"), "true");
    assert_int_equal(harness_wait_for_stderr(s.process, "raw stdout", HARNESS_TIMEOUT_MS),
                     HARNESS_OK);
    expect_result(call(&s, "7", "b.echo", "[7]"), "[7]");
    assert_null(strstr(harness_stderr(s.process), "its host (pid"));
    stop(&s);
}

/*
 * log_format = json: every line rpcd and an isolated plugin's host write on stderr is one JSON
 * object with time, level and message; a plugin's own lines name it, newlines and all.
 */
static void test_json_logs_isolated(void **state)
{
    (void)state;
    session s;
    char text[1024];
    snprintf(text, sizeof text, "[rpcd]\nlog_format = json\n%s", fixtures);
    start(&s, text);
    expect_result(call(&s, "1", "a.info", "[]"), "{\"method\":\"a.info\",\"greeting\":\"hello\"}");
    assert_int_equal(harness_wait_for_stderr(s.process, "isolated log_text", HARNESS_TIMEOUT_MS),
                     HARNESS_OK);
    char *lines = NULL;
    stop_keeping(&s, &lines);
    assert_non_null(lines);
    size_t count = 0;
    bool plugin_line = false;
    for (char *line = strtok(lines, "\n"); line; line = strtok(NULL, "\n")) {
        /* A wrapper's own lines (valgrind: "--PID--", "==PID==") are not rpcd's. */
        if (harness_wrapped() && (strncmp(line, "--", 2) == 0 || strncmp(line, "==", 2) == 0))
            continue;
        count++;
        json_error_t error;
        json_t *object = json_loads(line, 0, &error);
        if (!object)
            fprintf(stderr, "not JSON (%s): %s\n", error.text, line);
        assert_non_null(object);
        assert_non_null(json_string_value(json_object_get(object, "time")));
        assert_non_null(json_string_value(json_object_get(object, "level")));
        const char *message = json_string_value(json_object_get(object, "message"));
        assert_non_null(message);
        const char *plugin = json_string_value(json_object_get(object, "plugin"));
        /* Its section's name, [plugin a], not the plugin's own (isolated_a). */
        if (plugin && strcmp(plugin, "a") == 0 && strcmp(message, "isolated log_text\nline") == 0)
            plugin_line = true;
        json_decref(object);
    }
    assert_true(count >= 3);
    assert_true(plugin_line);
    free(lines);
}

/*
 * method makes the host of plugin a die: its call fails with -32603 naming how, one line on
 * stderr says so with the method, a call of plugin b meanwhile is answered, and the next call
 * of a succeeds in a new host.
 */
/* host_dies with params (JSON text) for the call that kills the host, and with status (JSON
 * text; NULL: not checked) the call's whole error data, which then names the plugin: exception
 * is how the host ended, without "plugin host ". */
static void host_dies_given(const char *method, const char *params, const char *exception,
                            const char *logged, const char *status)
{
    session s;
    start(&s, fixtures);
    expect_result(call(&s, "before", "a.echo", "[0]"), "[0]");
    send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"boom\",\"method\":\"%s\",\"params\":%s}", method,
              params);
    if (status)
        expect_host_death(response_to(&s, "boom"), "a", exception, status);
    else
        expect_error(response_to(&s, "boom"), -32603, exception);
    assert_int_equal(harness_wait_for_stderr(s.process, logged, HARNESS_TIMEOUT_MS), HARNESS_OK);
    char running[128];
    snprintf(running, sizeof running, "running: %s", method);
    assert_non_null(strstr(harness_stderr(s.process), running));
    expect_result(call(&s, "other", "b.echo", "[1]"), "[1]");
    expect_result(call(&s, "after", "a.echo", "[2]"), "[2]");
    stop(&s);
}

static void host_dies(const char *method, const char *exception, const char *logged)
{
    host_dies_given(method, "[]", exception, logged, NULL);
}

/* data.data gives the signal: {"signal": 11}. */
static void test_segfault(void **state)
{
    (void)state;
    host_dies_given("a.null", "[]", "killed by signal 11 (SIGSEGV)", "plugin a: its host (pid",
                    "{\"signal\":11}");
}

/* An MCP tool call whose host dies is a tool error the model can read, naming the signal. */
static void test_tool_call_host_dies(void **state)
{
    (void)state;
    session s;
    start(&s, fixtures);
    json_decref(call(&s, "init", "initialize",
                     "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                     "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}"));
    json_t *tool = call(&s, "tool", "tools/call", "{\"name\":\"a_null\",\"arguments\":{}}");
    json_t *result = json_object_get(tool, "result");
    assert_true(json_is_true(json_object_get(result, "isError")));
    const char *text = json_string_value(
        json_object_get(json_array_get(json_object_get(result, "content"), 0), "text"));
    assert_non_null(text);
    assert_non_null(strstr(text, "killed by signal 11 (SIGSEGV)"));
    json_decref(tool);
    expect_result(call(&s, "after", "a.echo", "[2]"), "[2]");
    stop(&s);
}

/* The host's death is seen even while a child it forked holds the channel open. */
static void test_segfault_with_a_child_holding_the_channel(void **state)
{
    (void)state;
    /* Under valgrind rpcd's pidfd_open fails (not emulated): the end of the channel, 10 s
     * later, is all it has, which is the fallback this test is not about. */
    if (harness_wrapped()) {
        print_message("skipped under valgrind: pidfd_open is not emulated\n");
        skip();
    }
    long long started = now_ms();
    host_dies("a.fork_null", "killed by signal 11 (SIGSEGV)", "plugin a: its host (pid");
    /* Long before the child lets go of the channel (60 s), even scaled for the build. */
    assert_true(now_ms() - started < test_time_ms(2500));
}

/* A host that breaks the channel is killed (SIGKILL), which its calls' data says. */
static void test_garbage_in_the_channel(void **state)
{
    (void)state;
    host_dies_given("a.garbage", "[]", "sent a malformed frame", "sent a malformed frame",
                    "{\"signal\":9}");
}

/*
 * A quick call alone in flight while rpcd watches the fast lane is answered there, and rpcd's
 * reading thread reads it itself (otherwise the reader thread reads it): garbage there is a
 * broken host as on the main lane (the host killed, the call answered, the next served).
 */
static void test_garbage_in_the_fast_lane(void **state)
{
    (void)state;
    host_dies("a.garbage_fast", "plugin host sent a malformed frame", "sent a malformed frame");
}

/*
 * Bytes a host writes on the fast lane unasked, for a call on the main lane: rpcd reads that lane
 * whenever no caller may take it, so the garbage is seen, not left to hang the call.
 */
static void test_garbage_in_the_fast_lane_unasked(void **state)
{
    (void)state;
    host_dies_given("a.garbage", "[6]", "plugin host sent a malformed frame",
                    "sent a malformed frame", NULL);
}

/*
 * A handler flagged quick that takes its time holds rpcd's reading thread no longer than the
 * fast lane's bound: a request sent meanwhile to another plugin is answered first, and the slow
 * call's answer still comes, read by the reader thread.
 */
static void test_slow_quick_handler_holds_no_reading(void **state)
{
    (void)state;
    session s;
    start(&s, fixtures);
    expect_result(call(&s, "before", "a.echo", "[0]"), "[0]");
    for (int round = 0; round < 3; round++) {
        send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"slow\",\"method\":\"a.slow_quick\","
                      "\"params\":[400]}");
        /* Sent apart, so that the slow call was read alone and went on the fast lane. */
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
        /* Answered before the slow call (response_to takes the next response): how soon is the
         * machine's figure. */
        expect_result(call(&s, "other", "b.echo", "[1]"), "[1]");
        expect_result(response_to(&s, "slow"), "\"late\"");
    }
    expect_result(call(&s, "after", "a.echo", "[2]"), "[2]");
    stop(&s);
}

static void test_forged_call_id(void **state)
{
    (void)state;
    host_dies("a.forge", "named a call it was never given", "named a call it was never given");
    /* The slot of a call it was given, a generation it never was. */
    host_dies_given("a.forge", "[0]", "named a call it was never given",
                    "named a call it was never given", NULL);
}

/* A frame cut short before the id of the call it is about names no call: it is malformed. */
static void test_frame_too_short_for_an_id(void **state)
{
    (void)state;
    host_dies_given("a.forge", "[1]", "plugin host sent a malformed message of kind 11",
                    "sent a malformed message of kind 11", NULL);
}

/*
 * A message a host forged into a frame of a live call, as no real call_fail would take it (not
 * UTF-8, with params absent; with a NUL inside, params [1]): the frame is malformed, never
 * output, not even cut at the NUL.
 */
static void forged_text_in_a_frame(const char *params)
{
    session s;
    start(&s, fixtures);
    /* The host's first call, whose channel id the fixture knows. */
    send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"boom\",\"method\":\"a.forge_text\",\"params\":%s}",
              params);
    expect_error(response_to(&s, "boom"), -32603, "plugin host sent a malformed message of kind 7");
    assert_int_equal(harness_wait_for_stderr(s.process, "sent a malformed message of kind 7",
                                             HARNESS_TIMEOUT_MS),
                     HARNESS_OK);
    expect_result(call(&s, "other", "b.echo", "[1]"), "[1]");
    expect_result(call(&s, "after", "a.echo", "[2]"), "[2]");
    stop(&s);
}

static void test_text_not_utf8_in_a_frame(void **state)
{
    (void)state;
    forged_text_in_a_frame("[]");
}

static void test_text_with_a_nul_in_a_frame(void **state)
{
    (void)state;
    forged_text_in_a_frame("[1]");
}

/*
 * A program an isolated plugin runs inherits none of the host's channel (closed on exec): it
 * cannot read rpcd's requests, nor answer in the plugin's name.
 */
static void test_channel_not_inherited_by_programs(void **state)
{
    (void)state;
    session s;
    start(&s, fixtures);
    expect_result(call(&s, "fds", "a.inherited", "[]"), "\"\"");
    stop(&s);
}

/* The result of method (a.slice, b.slice_worker...): a thread's time slice in ns, as text. */
static char *slice_of(session *s, const char *id, const char *method)
{
    json_t *response = call(s, id, method, "[]");
    char *text = json_dumps(json_object_get(response, "result"), JSON_ENCODE_ANY);
    assert_non_null(text);
    json_decref(response);
    return text;
}

/* rpcd's warning where the kernel has no per-task slice (before Linux 6.12). */
#define SLICE_IGNORED(plugin, us)                                                                  \
    "plugin " plugin ": this kernel gives no task a time slice of its own (Linux 6.12): "          \
    "scheduler_slice_us = " us " is not honoured, its host runs with the kernel's\n"

/* Whether the kernel gives tasks a slice of their own: the test's own thread reads one. */
static bool kernel_has_slices(void)
{
    struct {
        uint32_t size, policy;
        uint64_t flags;
        int32_t nice;
        uint32_t priority;
        uint64_t runtime, deadline, period;
    } attr = {0};
    return syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) == 0 && attr.runtime != 0;
}

/* Whether Landlock scopes signals (ABI 6, Linux 6.12). */
static bool signals_scoped(void)
{
    return syscall(SYS_landlock_create_ruleset, NULL, 0, 1UL /* VERSION */) >= 6;
}

/* Whether a host of the test's user could have a PID namespace of its own: a child tries, as
 * the host does (rpcd.conf(5), CONTAINMENT). */
static bool pid_namespaces(void)
{
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        _exit(unshare(CLONE_NEWPID) == 0 || unshare(CLONE_NEWUSER | CLONE_NEWPID) == 0 ? 0 : 1);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * An isolated plugin's host runs with the time slice scheduler_slice_us asks for (500 us unless
 * said), on the thread that reads its calls and on its workers; with 0, with the kernel's own,
 * which rpcd's threads run with (a plugin in rpcd's process tells it).
 */
static void test_host_asks_for_its_slice(void **state)
{
    (void)state;
    session s;
    start(&s, "[plugin a]\npath = ${RPCD_FIXTURE_ISOLATED_A}\nisolation = process\n"
              "[plugin b]\npath = ${RPCD_FIXTURE_ISOLATED_B}\n");
    char *kernel = slice_of(&s, "0", "b.slice");
    char *err;
    if (strcmp(kernel, "0") == 0) {
        /* Before Linux 6.12: the kernel takes the request and ignores it, and rpcd says so. */
        print_message("this kernel has no per-task time slice (before Linux 6.12)\n");
        expect_result(call(&s, "1", "a.slice", "[]"), "0");
        expect_result(call(&s, "2", "a.slice_worker", "[]"), "0");
        stop_keeping(&s, &err);
        assert_int_equal(count_of(err, SLICE_IGNORED("a", "500")), 1);
        assert_int_equal(count_of(err, "cannot ask for a time slice"), 0);
        assert_int_equal(count_of(err, "plugin b: this kernel gives no task"), 0);
        free(err);
        free(kernel);
        return;
    }
    expect_result(call(&s, "1", "a.slice", "[]"), "500000");
    expect_result(call(&s, "2", "a.slice_worker", "[]"), "500000");
    stop_keeping(&s, &err);
    assert_int_equal(count_of(err, "is not honoured"), 0);
    free(err);

    start(&s, "[plugin a]\npath = ${RPCD_FIXTURE_ISOLATED_A}\nisolation = process\n"
              "scheduler_slice_us = 0\n"
              "[plugin b]\npath = ${RPCD_FIXTURE_ISOLATED_B}\nisolation = process\n"
              "scheduler_slice_us = 2000\n");
    expect_result(call(&s, "1", "a.slice", "[]"), kernel);
    expect_result(call(&s, "2", "a.slice_worker", "[]"), kernel);
    expect_result(call(&s, "3", "b.slice", "[]"), "2000000");
    expect_result(call(&s, "4", "b.slice_worker", "[]"), "2000000");
    stop(&s);
    free(kernel);
}

/*
 * rpcd started under SCHED_BATCH (chrt -b), which has a time slice as SCHED_OTHER does: the host
 * asks for its slice all the same, on its reading thread and its workers. A plugin in rpcd's
 * process runs with the kernel's slice. rpcd inherits the policy from the test's thread, set for
 * the start alone.
 */
static void test_host_asks_for_its_slice_under_batch(void **state)
{
    (void)state;
    if (!kernel_has_slices()) {
        print_message("skipped: this kernel has no per-task time slice (before Linux 6.12)\n");
        skip();
    }
    struct sched_param none = {0};
    assert_int_equal(sched_setscheduler(0, SCHED_BATCH, &none), 0);
    session s;
    start(&s, "[plugin a]\npath = ${RPCD_FIXTURE_ISOLATED_A}\nisolation = process\n"
              "[plugin b]\npath = ${RPCD_FIXTURE_ISOLATED_B}\n");
    assert_int_equal(sched_setscheduler(0, SCHED_OTHER, &none), 0);
    char *kernel = slice_of(&s, "0", "b.slice");
    assert_string_not_equal(kernel, "500000");
    expect_result(call(&s, "1", "a.slice", "[]"), "500000");
    expect_result(call(&s, "2", "a.slice_worker", "[]"), "500000");
    free(kernel);
    stop(&s);
}

/*
 * A kernel that refuses the slice (here a seccomp filter around rpcd, as a container's profile
 * may be): one warning naming the plugin and why, and the host serves with the kernel's slice,
 * rpcd's own.
 */
static void test_slice_refused(void **state)
{
    (void)state;
    const char *const wrapper[] = {harness_env("RPCD_DENY_SYSCALL"), "sched_setattr", NULL};
    assert_non_null(wrapper[0]);
    session s;
    start_wrapped(&s,
                  "[plugin a]\npath = ${RPCD_FIXTURE_ISOLATED_A}\nisolation = process\n"
                  "[plugin b]\npath = ${RPCD_FIXTURE_ISOLATED_B}\n",
                  wrapper);
    char *kernel = slice_of(&s, "0", "b.slice");
    expect_result(call(&s, "1", "a.slice", "[]"), kernel);
    free(kernel);
    char *err;
    stop_keeping(&s, &err);
    assert_int_equal(count_of(err, "plugin a: cannot ask for a time slice of 500 us: Operation "
                                   "not permitted; its host keeps the kernel's\n"),
                     1);
    free(err);
}

/* abort() and exit() in the bundled crash fixture, isolated: how, and status, the error's
 * data.data (expect_host_death). */
static void crash_fixture(const char *method, const char *how, const char *status)
{
    session s;
    start(&s, "[plugin crash]\npath = ${RPCD_FIXTURE_CRASH}\nisolation = process\n"
              "[plugin b]\npath = ${RPCD_FIXTURE_ISOLATED_B}\n");
    send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"boom\",\"method\":\"%s\"}", method);
    expect_host_death(response_to(&s, "boom"), "crash", how, status);
    expect_result(call(&s, "other", "b.echo", "[1]"), "[1]");
    expect_result(call(&s, "after", "crash.echo", "[2]"), "[2]");
    stop(&s);
}

static void test_abort(void **state)
{
    (void)state;
    crash_fixture("crash.abort", "killed by signal 6 (SIGABRT)", "{\"signal\":6}");
}

static void test_exit(void **state)
{
    (void)state;
    crash_fixture("crash.exit", "exited with status 3", "{\"exit_status\":3}");
}

/*
 * A handler that never returns: answered at timeout_ms with data.timed_out, its host killed
 * once shutdown_grace_ms have passed after the cancel, and the next call served by a new host.
 * A method's own timeout_ms.METHOD overrides the plugin's, and a request may ask for less in
 * _meta.timeout_ms; a handler that lets go at the cancel keeps its host.
 */
static void test_deadline(void **state)
{
    (void)state;
    session s;
    /* a.echo only shows that the host serves again: its first call, on the host started anew,
     * is not held to the 300 ms, which a slow build (valgrind) or an emulated CPU (QEMU without
     * KVM, tests/kernel) can spend starting that host. The grace is long because a.wait must let
     * go within it to keep its host: an emulated CPU took more than 200 ms to carry a cancel to
     * the host and its answer back. a.loop is still killed, only later. */
    start(&s, "[rpcd]\nshutdown_grace_ms = 3000\n"
              "[plugin a]\npath = ${RPCD_FIXTURE_ISOLATED_A}\nisolation = process\n"
              "timeout_ms = 300\ntimeout_ms.a.wait = 100\ntimeout_ms.a.echo = 3600000\n"
              "[plugin b]\npath = ${RPCD_FIXTURE_ISOLATED_B}\n");
    long long started = now_ms();
    json_t *late = call(&s, "loop", "a.loop", "[]");
    long long took = now_ms() - started;
    json_t *data = json_object_get(json_object_get(late, "error"), "data");
    assert_true(json_is_true(json_object_get(json_object_get(data, "data"), "timed_out")));
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(data, "data"), "timeout_ms")), 300);
    expect_error(late, -32603, "timed out");
    assert_true(took >= 290);
    assert_int_equal(
        harness_wait_for_stderr(s.process, "went on past its timeout_ms", HARNESS_TIMEOUT_MS),
        HARNESS_OK);
    expect_result(call(&s, "after", "a.echo", "[1]"), "[1]");
    json_t *waited = call(&s, "wait", "a.wait", "[]");
    data = json_object_get(json_object_get(waited, "error"), "data");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(data, "data"), "timeout_ms")), 100);
    expect_error(waited, -32603, "timed out");
    /* A request may ask for less than timeout_ms.METHOD in _meta.timeout_ms, never more. */
    long long asked_at = now_ms();
    json_t *less = call(&s, "less", "a.wait", "{\"_meta\":{\"timeout_ms\":40}}");
    assert_true(now_ms() - asked_at >= 40);
    data = json_object_get(json_object_get(less, "error"), "data");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(data, "data"), "timeout_ms")), 40);
    expect_error(less, -32603, "timed out");
    json_t *more = call(&s, "more", "a.wait", "{\"_meta\":{\"timeout_ms\":60000}}");
    data = json_object_get(json_object_get(more, "error"), "data");
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(data, "data"), "timeout_ms")), 100);
    expect_error(more, -32603, "timed out");
    /* a.wait let go at the cancel: past the grace of its last call, its host lives on, the one
     * death is a.loop's. */
    struct timespec nap = {3, 400 * 1000 * 1000};
    nanosleep(&nap, NULL);
    expect_result(call(&s, "again", "a.echo", "[2]"), "[2]");
    const char *err = harness_stderr(s.process);
    const char *first = strstr(err, "its host (pid");
    assert_non_null(first);
    assert_null(strstr(first + 1, "its host (pid"));
    stop(&s);
}

/* Past max_restarts within a minute, the plugin stays down: its calls fail at once. */
static void test_restart_limit(void **state)
{
    (void)state;
    session s;
    start(&s, "[plugin a]\npath = ${RPCD_FIXTURE_ISOLATED_A}\nisolation = process\n"
              "max_restarts = 2\n"
              "[plugin b]\npath = ${RPCD_FIXTURE_ISOLATED_B}\n");
    for (int i = 0; i < 3; i++) {
        char id[16];
        snprintf(id, sizeof id, "crash%d", i);
        expect_error(call(&s, id, "a.null", "[]"), -32603, "SIGSEGV");
    }
    assert_int_equal(
        harness_wait_for_stderr(s.process, "more than 2 times within a minute", HARNESS_TIMEOUT_MS),
        HARNESS_OK);
    json_t *down = call(&s, "down", "a.echo", "[1]");
    const char *detail = json_string_value(
        json_object_get(json_object_get(json_object_get(down, "error"), "data"), "detail"));
    assert_non_null(detail);
    assert_non_null(strstr(detail, "fail until rpcd is restarted"));
    expect_error(down, -32603, "plugin host down");
    expect_result(call(&s, "other", "b.echo", "[1]"), "[1]");
    assert_int_equal(count_of(harness_stderr(s.process), "host restarted"), 2);
    stop(&s);
}

/* What rpcd --check writes to stderr for a config (text, expanded), which must pass. */
static char *check_output(const char *text)
{
    char *expanded = harness_expand_env(text);
    assert_non_null(expanded);
    char *dir = harness_temp_dir();
    char *config = harness_write_file(dir, "rpcd.conf", expanded);
    assert_non_null(config);
    harness_argv args = harness_rpcd_argv(config);
    harness_argv_push(&args, "--check");
    harness_run_result result;
    assert_int_equal(harness_run(args.argv, NULL, 0, HARNESS_TIMEOUT_MS, &result), HARNESS_OK);
    assert_true(result.status.exited);
    assert_int_equal(result.status.code, 0);
    char *err = strdup(result.err);
    assert_non_null(err);
    harness_run_result_free(&result);
    harness_remove_dir(dir);
    free(dir);
    free(config);
    free(expanded);
    return err;
}

/*
 * rpcd --check names each plugin's isolation and deadlines, an in-process plugin's too, and the
 * time slice an isolated one's host asks for.
 */
static void test_check_reports_isolation(void **state)
{
    (void)state;
    char *with_timeout;
    assert_true(asprintf(&with_timeout, "%stimeout_ms = 100\n", fixtures) >= 0);
    char *err = check_output(with_timeout);
    free(with_timeout);
    assert_non_null(strstr(err, "plugin a: isolation = process; confined: memory unlimited"));
    assert_non_null(strstr(err, "seccomp default, read everywhere, write everywhere"));
    assert_non_null(strstr(err, "timeout_ms none; scheduler slice 500 us\n"));
    /* A deadline applies in process too (the handler keeps its worker): shown, not ignored. */
    assert_non_null(strstr(err, "plugin b: isolation = none; timeout_ms 100 ms\n"));
    assert_null(strstr(err, "ignored"));
    /* What this kernel cannot enforce, --check says too: before Linux 6.12, the slice and,
     * where hosts can have no PID namespace of their own, the signal scope. */
    assert_int_equal(count_of(err, SLICE_IGNORED("a", "500")), kernel_has_slices() ? 0 : 1);
    /* Under a wrapper rpcd sees the kernel through it: valgrind knows no Landlock system call,
     * so rpcd finds no Landlock there, and says so. */
    if (!harness_wrapped())
        assert_int_equal(count_of(err, "plugin a: this kernel's Landlock"),
                         signals_scoped() || pid_namespaces() ? 0 : 1);
    assert_int_equal(count_of(err, "plugin a: its host can have no PID namespace"),
                     pid_namespaces() ? 0 : 1);
    assert_int_equal(count_of(err, "plugin b: this kernel"), 0);
    free(err);

    err = check_output("[plugin a]\npath = ${RPCD_FIXTURE_ISOLATED_A}\nisolation = process\n"
                       "scheduler_slice_us = 0\n");
    assert_non_null(strstr(err, "timeout_ms none; scheduler slice the kernel's\n"));
    free(err);
}

/*
 * Four isolated plugins, calls pipelined across them, and one of them crashing every 1,000
 * calls: every id is answered exactly once; the calls of the three others all succeed; every
 * failure is the crashing plugin's, naming the signal.
 */
static void test_stress_with_crashes(void **state)
{
    (void)state;
    const char *sanitize = getenv("RPCD_SANITIZE");
    size_t total = 100000;
    if (harness_wrapped())
        total = 3000;
    /* A sanitizer, or an emulated CPU (QEMU without KVM, tests/kernel), makes each call slower. */
    else if ((sanitize && strcmp(sanitize, "none") != 0) || getenv("RPCD_TEST_EMULATED"))
        total = 20000;
    leave_fatal_signals_alone();
    char *text =
        harness_expand_env("[rpcd]\nisolation = process\n"
                           "[plugin echo]\npath = ${RPCD_PLUGIN_ECHO}\n"
                           "[plugin a]\npath = ${RPCD_FIXTURE_ISOLATED_A}\n"
                           "[plugin b]\npath = ${RPCD_FIXTURE_ISOLATED_B}\n"
                           "[plugin crash]\npath = ${RPCD_FIXTURE_CRASH}\nmax_restarts = 1000\n");
    assert_non_null(text);
    char *dir = harness_temp_dir();
    char *config = harness_write_file(dir, "rpcd.conf", text);
    assert_non_null(config);
    static const char *const methods[] = {"echo", "a.echo", "b.echo", "crash.echo"};
    size_t capacity = total * 96, used = 0;
    char *input = malloc(capacity);
    assert_non_null(input);
    for (size_t i = 0; i < total; i++) {
        const char *method = i % 1000 == 999 ? "crash.null" : methods[i % 4];
        used += (size_t)snprintf(input + used, capacity - used,
                                 "{\"jsonrpc\":\"2.0\",\"id\":%zu,\"method\":\"%s\","
                                 "\"params\":[%zu]}\n",
                                 i, method, i);
    }
    harness_argv args = harness_rpcd_argv(config);
    harness_run_result result;
    long long started = now_ms();
    assert_int_equal(harness_run(args.argv, input, used, test_time_ms(60000), &result), HARNESS_OK);
    long long took = now_ms() - started;
    if (!result.status.exited || result.status.code != 0)
        fprintf(stderr, "rpcd ended with %s\n", harness_exit_describe(&result.status));
    assert_true(result.status.exited);
    harness_lines lines;
    assert_int_equal(harness_split_lines(result.out, result.out_length, &lines), 0);
    unsigned char *seen = calloc(total, 1);
    assert_non_null(seen);
    size_t failures = 0, crashes = 0;
    for (size_t i = 0; i < lines.count; i++) {
        json_t *response = json_loads(lines.items[i], 0, NULL);
        assert_non_null(response);
        json_t *id = json_object_get(response, "id");
        assert_true(json_is_integer(id));
        json_int_t n = json_integer_value(id);
        assert_true(n >= 0 && (size_t)n < total);
        if (seen[n])
            fprintf(stderr, "id %lld answered twice\n", (long long)n);
        assert_false(seen[n]);
        seen[n] = 1;
        json_t *error = json_object_get(response, "error");
        if (error) {
            failures++;
            crashes += n % 1000 == 999;
            /* Only the crashing plugin's calls fail, and each names the signal. */
            if (n % 1000 != 999 && n % 4 != 3)
                fprintf(stderr, "a call of %s failed: %s\n", methods[n % 4], lines.items[i]);
            assert_true(n % 1000 == 999 || n % 4 == 3);
            const char *exception =
                json_string_value(json_object_get(json_object_get(error, "data"), "exception"));
            if (!exception || !strstr(exception, "SIGSEGV"))
                fprintf(stderr, "not a crash's error: %s\n", lines.items[i]);
            assert_non_null(exception);
            assert_non_null(strstr(exception, "SIGSEGV"));
        } else {
            assert_int_equal(
                json_integer_value(json_array_get(json_object_get(response, "result"), 0)), n);
            assert_true(n % 1000 != 999);
        }
        json_decref(response);
    }
    assert_int_equal(lines.count, total);
    assert_int_equal(crashes, total / 1000);
    fprintf(stderr, "stress: %zu calls in %lld ms, %zu failed (%zu crashes)\n", total, took,
            failures, crashes);
    free(seen);
    harness_lines_free(&lines);
    harness_run_result_free(&result);
    free(input);
    harness_remove_dir(dir);
    free(dir);
    free(config);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bundled_plugins_isolated),
        cmocka_unit_test(test_host_functions_isolated),
        cmocka_unit_test(test_json_logs_isolated),
        cmocka_unit_test(test_segfault),
        cmocka_unit_test(test_tool_call_host_dies),
        cmocka_unit_test(test_segfault_with_a_child_holding_the_channel),
        cmocka_unit_test(test_garbage_in_the_channel),
        cmocka_unit_test(test_garbage_in_the_fast_lane),
        cmocka_unit_test(test_garbage_in_the_fast_lane_unasked),
        cmocka_unit_test(test_slow_quick_handler_holds_no_reading),
        cmocka_unit_test(test_text_not_utf8_in_a_frame),
        cmocka_unit_test(test_text_with_a_nul_in_a_frame),
        cmocka_unit_test(test_frame_too_short_for_an_id),
        cmocka_unit_test(test_channel_not_inherited_by_programs),
        cmocka_unit_test(test_host_asks_for_its_slice),
        cmocka_unit_test(test_host_asks_for_its_slice_under_batch),
        cmocka_unit_test(test_slice_refused),
        cmocka_unit_test(test_forged_call_id),
        cmocka_unit_test(test_abort),
        cmocka_unit_test(test_exit),
        cmocka_unit_test(test_deadline),
        cmocka_unit_test(test_restart_limit),
        cmocka_unit_test(test_check_reports_isolation),
        cmocka_unit_test(test_stress_with_crashes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
