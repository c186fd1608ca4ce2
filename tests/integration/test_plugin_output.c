/* SPDX-License-Identifier: MIT */
/*
 * What a plugin prints on stdout and stderr, in rpcd's process and in a host process: with
 * log_format = json each line becomes one JSON object of the log naming the plugin and the
 * stream (bytes that are not UTF-8 replaced, a line of 1 MiB cut and marked), so that every line
 * of rpcd's stderr parses; with log_format = text the lines come as they were printed.
 */
#include "harness.h"

#include <jansson.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* How long one wait may take before the test calls it a hang: rpcd under valgrind, and its plugin's
 * host starting beside it, on a busy machine, take many times longer than alone. */
static int wait_ms(void)
{
    return harness_wrapped() ? 10 * HARNESS_TIMEOUT_MS : 3 * HARNESS_TIMEOUT_MS;
}

/* Runs rpcd with the prints fixture as [plugin p] until its last line is logged, then ends it.
 * Returns its stderr (new). */
static char *run_prints(const char *format, const char *isolation)
{
    char text[512];
    snprintf(text, sizeof text,
             "[rpcd]\nlog_format = %s\n[plugin p]\npath = ${RPCD_FIXTURE_PRINTS}\nisolation = %s\n",
             format, isolation);
    char *expanded = harness_expand_env(text);
    assert_non_null(expanded);
    char *dir = harness_temp_dir();
    assert_non_null(dir);
    char *config = harness_write_file(dir, "rpcd.conf", expanded);
    assert_non_null(config);
    harness_argv args = harness_rpcd_argv(config);
    assert_non_null(args.argv[0]);
    harness_process *process = harness_start(args.argv);
    assert_non_null(process);
    assert_int_equal(harness_wait_for_stderr(process, "prints done", wait_ms()), HARNESS_OK);
    /* The plugin is loaded and serves: its output never reached the protocol. */
    static const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prints.ping\"}\n";
    assert_int_equal(harness_write_text(process, ping, wait_ms()), HARNESS_OK);
    char *line = NULL;
    assert_int_equal(harness_read_line(process, wait_ms(), &line, NULL, NULL), HARNESS_OK);
    assert_true(harness_json_equal("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":true}", line));
    free(line);
    /* The call's line, written before its result, is logged by a thread of its own. */
    assert_int_equal(harness_wait_for_stderr(process, "called on stderr", wait_ms()), HARNESS_OK);
    harness_close_stdin(process);
    harness_exit status;
    assert_int_equal(harness_wait(process, wait_ms(), &status), HARNESS_OK);
    if (!status.exited || status.code != 0)
        fprintf(stderr, "rpcd ended with %s\n", harness_exit_describe(&status));
    assert_true(status.exited);
    assert_int_equal(status.code, 0);
    char *err = strdup(harness_stderr(process));
    assert_non_null(err);
    harness_free(process);
    harness_remove_dir(dir);
    free(dir);
    free(config);
    free(expanded);
    return err;
}

/* What the JSON lines of the plugin's output held. */
typedef struct seen {
    bool out_hello, err_hello, bad_bytes, after_long, no_newline, rpcd_own, log_raw;
    bool out_loaded, err_loaded; /* the constructor's lines, named after the plugin */
    bool called, called_named;   /* the call's line, and whether it named the plugin */
    int cut;                     /* lines of the long line: one, cut and marked */
    int escaped_cut;             /* lines of the long line of control bytes: the same */
} seen;

/* Every line of err is a JSON object of the log; the plugin's lines are noted in *out. */
static void check_json_lines(char *err, seen *out)
{
    *out = (seen){0};
    for (char *line = strtok(err, "\n"); line; line = strtok(NULL, "\n")) {
        /* One write to a pipe each, never interleaved with another writer's (PIPE_BUF). */
        assert_true(strlen(line) + 1 <= PIPE_BUF);
        /* A wrapper's own lines (valgrind: "--PID--", "==PID==") are not rpcd's. */
        if (harness_wrapped() && (strncmp(line, "--", 2) == 0 || strncmp(line, "==", 2) == 0))
            continue;
        json_error_t error;
        json_t *object = json_loads(line, 0, &error);
        if (!json_is_object(object))
            fprintf(stderr, "not a JSON object (%s): %.200s\n", error.text, line);
        assert_true(json_is_object(object));
        assert_non_null(json_string_value(json_object_get(object, "time")));
        assert_non_null(json_string_value(json_object_get(object, "level")));
        const char *message = json_string_value(json_object_get(object, "message"));
        assert_non_null(message);
        const char *plugin = json_string_value(json_object_get(object, "plugin"));
        const char *stream = json_string_value(json_object_get(object, "stream"));
        if (!stream) {
            out->rpcd_own = true;
            json_decref(object);
            continue;
        }
        /* A line printed during a call in rpcd's process cannot be told from another plugin's
         * (fds 1 and 2 are the process's): it names none. */
        if (strcmp(message, "called on stderr") == 0) {
            assert_string_equal(stream, "stderr");
            out->called = true;
            out->called_named = plugin && strcmp(plugin, "p") == 0;
            json_decref(object);
            continue;
        }
        assert_non_null(plugin);
        assert_string_equal(plugin, "p");
        bool on_stdout = strcmp(stream, "stdout") == 0;
        /* A raw line on a host's log descriptor is wrapped as output of that stream. */
        if (strcmp(stream, "log") == 0) {
            assert_string_equal(message, "raw on the log descriptor");
            out->log_raw = true;
            json_decref(object);
            continue;
        }
        assert_true(on_stdout || strcmp(stream, "stderr") == 0);
        size_t length = strlen(message);
        if (on_stdout && strcmp(message, "hello on stdout") == 0)
            out->out_hello = true;
        if (!on_stdout && strcmp(message, "hello on stderr") == 0)
            out->err_hello = true;
        if (on_stdout && strcmp(message, "loaded on stdout") == 0)
            out->out_loaded = true;
        if (!on_stdout && strcmp(message, "loaded on stderr") == 0)
            out->err_loaded = true;
        if (on_stdout && strcmp(message, "bad \xef\xbf\xbd\xef\xbf\xbd bytes") == 0)
            out->bad_bytes = true;
        if (on_stdout && strcmp(message, "after the long line") == 0)
            out->after_long = true;
        if (on_stdout && strcmp(message, "no newline at the end") == 0)
            out->no_newline = true;
        if (message[0] == 'x') {
            /* Cut at the bound, never a line of a mebibyte; its rest dropped, not logged. */
            assert_true(json_is_true(json_object_get(object, "cut")));
            assert_true(on_stdout);
            assert_true(length > 0 && length <= 4096);
            assert_int_equal(strspn(message, "x"), length);
            out->cut++;
        }
        if (message[0] == '\x01') {
            assert_true(json_is_true(json_object_get(object, "cut")));
            assert_false(on_stdout);
            assert_int_equal(strspn(message, "\x01"), length);
            out->escaped_cut++;
        }
        json_decref(object);
    }
}

static void test_json_in_process(void **state)
{
    (void)state;
    char *err = run_prints("json", "none");
    seen found;
    check_json_lines(err, &found);
    assert_true(found.out_hello);
    assert_true(found.err_hello);
    assert_true(found.bad_bytes);
    assert_int_equal(found.cut, 1);
    assert_int_equal(found.escaped_cut, 1);
    assert_true(found.after_long);
    /* Logged when init ended, its output then complete. */
    assert_true(found.no_newline);
    assert_true(found.rpcd_own);
    assert_false(found.log_raw);
    /* The constructor's lines, under its name as in a host; a call's line, wrapped unnamed. */
    assert_true(found.out_loaded);
    assert_true(found.err_loaded);
    assert_true(found.called);
    assert_false(found.called_named);
    free(err);
}

static void test_json_isolated(void **state)
{
    (void)state;
    char *err = run_prints("json", "process");
    seen found;
    check_json_lines(err, &found);
    assert_true(found.out_hello);
    assert_true(found.err_hello);
    assert_true(found.bad_bytes);
    assert_int_equal(found.cut, 1);
    assert_int_equal(found.escaped_cut, 1);
    assert_true(found.after_long);
    assert_true(found.rpcd_own);
    assert_true(found.log_raw);
    assert_true(found.out_loaded);
    assert_true(found.err_loaded);
    assert_true(found.called);
    assert_true(found.called_named);
    free(err);
}

/* Whether line is one of the lines of text. */
static bool has_line(const char *text, const char *line)
{
    size_t length = strlen(line);
    for (const char *at = strstr(text, line); at; at = strstr(at + 1, line))
        if ((at == text || at[-1] == '\n') && at[length] == '\n')
            return true;
    return false;
}

/* Text logs are for people: the plugin's lines come as printed, rpcd's as "rpcd: LEVEL: ...". */
static void check_text(const char *isolation)
{
    char *err = run_prints("text", isolation);
    assert_true(has_line(err, "hello on stdout"));
    assert_true(has_line(err, "hello on stderr"));
    assert_true(has_line(err, "loaded on stdout"));
    assert_true(has_line(err, "loaded on stderr"));
    assert_true(has_line(err, "called on stderr"));
    assert_true(has_line(err, "after the long line"));
    assert_true(has_line(err, "bad \xff\xfe bytes"));
    /* In text the log is people's: a host's raw line goes in as its stderr's do (here after
     * the stdout line that had no newline). */
    assert_true((strstr(err, "raw on the log descriptor\n") != NULL) ==
                (strcmp(isolation, "process") == 0));
    assert_non_null(strstr(err, "rpcd: info: "));
    free(err);
}

static void test_text_in_process(void **state)
{
    (void)state;
    check_text("none");
}

static void test_text_isolated(void **state)
{
    (void)state;
    check_text("process");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_in_process),
        cmocka_unit_test(test_json_isolated),
        cmocka_unit_test(test_text_in_process),
        cmocka_unit_test(test_text_isolated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
