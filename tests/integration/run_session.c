/* SPDX-License-Identifier: MIT */
/*
 * One run of the real rpcd on a config and its whole input, its output checked line by line:
 * what the tests of plugin contracts and of tool results share.
 */
#include "run_session.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define RUN_SESSION_TIMEOUT_MS test_time_ms(120000)

int run_fixture_setup(void **state)
{
    run_fixture *f = calloc(1, sizeof *f);
    if (!f || !(f->dir = harness_temp_dir()))
        return -1;
    *state = f;
    return 0;
}

int run_fixture_teardown(void **state)
{
    run_fixture *f = *state;
    harness_remove_dir(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

char *run_format(const char *pattern, ...)
{
    va_list args;
    va_start(args, pattern);
    char *text;
    int n = vasprintf(&text, pattern, args);
    va_end(args);
    assert_true(n >= 0);
    return text;
}

const char *run_env(const char *name)
{
    const char *value = harness_env(name);
    assert_non_null(value);
    return value;
}

/*
 * Runs rpcd with config text and input, and checks the framing of everything it wrote: every
 * stdout line is exactly one JSON value, and no line holds a raw carriage return (which some
 * clients take as a line break of its own).
 */
void run_rpcd(const run_fixture *f, const char *config, const char *input, run_session *s)
{
    memset(s, 0, sizeof *s);
    char *path = harness_write_file(f->dir, "rpcd.conf", config);
    assert_non_null(path);
    harness_argv args = harness_rpcd_argv(path);
    assert_non_null(args.argv[0]);
    harness_run(args.argv, input, strlen(input), RUN_SESSION_TIMEOUT_MS, &s->run);
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

/* True when out (NUL-terminated lines) holds a response with integer id. */
static bool has_response(const char *out, json_int_t id)
{
    char key[48];
    snprintf(key, sizeof key, "\"id\":%lld,", (long long)id);
    return strstr(out, key) != NULL;
}

void run_rpcd_until(const run_fixture *f, const char *config, const char *input,
                    const json_int_t *ids, size_t id_count, run_session *s)
{
    memset(s, 0, sizeof *s);
    char *path = harness_write_file(f->dir, "rpcd.conf", config);
    assert_non_null(path);
    harness_argv args = harness_rpcd_argv(path);
    harness_process *rpcd = harness_start(args.argv);
    free(path);
    assert_non_null(rpcd);
    assert_int_equal(harness_write_text(rpcd, input, RUN_SESSION_TIMEOUT_MS), HARNESS_OK);
    size_t used = 0;
    char *out = calloc(1, 1);
    assert_non_null(out);
    for (size_t answered = 0; answered < id_count;) {
        char *line;
        size_t length;
        int status = harness_read_line(rpcd, RUN_SESSION_TIMEOUT_MS, &line, &length, NULL);
        if (status != HARNESS_OK)
            print_error("no response to every id before %s: %s\n%s\n",
                        status == HARNESS_EOF ? "the end" : "the timeout", out,
                        harness_stderr(rpcd));
        assert_int_equal(status, HARNESS_OK);
        out = realloc(out, used + length + 2);
        assert_non_null(out);
        memcpy(out + used, line, length);
        used += length;
        out[used++] = '\n';
        out[used] = '\0';
        free(line);
        answered = 0;
        for (size_t i = 0; i < id_count; i++)
            answered += has_response(out, ids[i]);
    }
    harness_close_stdin(rpcd);
    char *rest = NULL;
    size_t rest_length = 0;
    assert_int_equal(harness_read_all(rpcd, RUN_SESSION_TIMEOUT_MS, &rest, &rest_length),
                     HARNESS_OK);
    out = realloc(out, used + rest_length + 1);
    assert_non_null(out);
    memcpy(out + used, rest, rest_length + 1);
    free(rest);
    assert_int_equal(harness_wait(rpcd, RUN_SESSION_TIMEOUT_MS, &s->run.status), HARNESS_OK);
    harness_collect_stderr(rpcd, RUN_SESSION_TIMEOUT_MS);
    s->run.err = strdup(harness_stderr(rpcd));
    harness_free(rpcd);
    s->run.out = out;
    s->run.out_length = used + rest_length;
    if (!s->run.status.exited || s->run.status.code != 0)
        print_error("rpcd: %s\n%s\n", harness_exit_describe(&s->run.status), s->run.err);
    assert_true(s->run.status.exited);
    assert_int_equal(s->run.status.code, 0);
    harness_lines lines;
    assert_int_equal(harness_split_lines(s->run.out, s->run.out_length, &lines), 0);
    s->messages = calloc(lines.count + 1, sizeof *s->messages);
    assert_non_null(s->messages);
    for (size_t i = 0; i < lines.count; i++) {
        s->messages[i] = json_loads(lines.items[i], JSON_DECODE_ANY, NULL);
        assert_non_null(s->messages[i]);
    }
    s->count = lines.count;
    harness_lines_free(&lines);
}

void run_session_free(run_session *s)
{
    for (size_t i = 0; i < s->count; i++)
        json_decref(s->messages[i]);
    free(s->messages);
    harness_run_result_free(&s->run);
}

/* The response with this integer id; fails the test when there is not exactly one. */
json_t *run_response(const run_session *s, json_int_t id)
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

void run_assert_json(const json_t *actual, const char *expected)
{
    char *text = json_dumps(actual, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    assert_non_null(text);
    if (!harness_json_equal(expected, text))
        print_error("expected %s\n     got %s\n", expected, text);
    assert_true(harness_json_equal(expected, text));
    free(text);
}
