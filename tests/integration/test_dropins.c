/* SPDX-License-Identifier: MIT */
/*
 * What an operator meets at start-up, through the real binary: a broken drop-in skipped with one
 * error line while the rest serve (strict = true makes it fatal, the main config always is);
 * --check telling each drop-in's state and only the plugins it loaded; log lines and refusals
 * naming a plugin by its [plugin NAME] section, in process and isolated; an isolated plugin's
 * init that dies of a signal naming the signal.
 */
#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

enum { EXIT_CONFIG = 78 };
#define RUN_TIMEOUT_MS test_time_ms(20000)

typedef struct fixture {
    char *dir;     /* owned: this test's temp dir, with rpcd.conf */
    char *dropins; /* owned: dir/rpcd.conf.d */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || !(f->dir = harness_temp_dir()) || asprintf(&f->dropins, "%s/rpcd.conf.d", f->dir) < 0)
        return -1;
    if (mkdir(f->dropins, 0700) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    harness_remove_dir(f->dropins);
    harness_remove_dir(f->dir);
    free(f->dropins);
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

static void write_dropin(const fixture *f, const char *name, const char *text)
{
    char *path = harness_write_file(f->dropins, name, text);
    assert_non_null(path);
    free(path);
}

/* Runs rpcd on dir/rpcd.conf (text), with option (may be NULL) and input; checks the exit. */
static void run(const fixture *f, const char *text, const char *option, const char *input, int code,
                harness_run_result *result)
{
    char *config = harness_write_file(f->dir, "rpcd.conf", text);
    assert_non_null(config);
    harness_argv args = harness_rpcd_argv(config);
    if (option)
        harness_argv_push(&args, option);
    harness_run(args.argv, input, input ? strlen(input) : 0, RUN_TIMEOUT_MS, result);
    free(config);
    assert_int_equal(result->io_status, HARNESS_OK);
    if (!result->status.exited || result->status.code != code)
        fail_msg("expected exit %d, got %s\nstdout:\n%s\nstderr:\n%s", code,
                 harness_exit_describe(&result->status), result->out ? result->out : "",
                 result->err);
}

/* How many lines of text hold needle. */
static size_t lines_with(const char *text, const char *needle)
{
    size_t count = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        char *copy = strndup(line, length);
        assert_non_null(copy);
        count += strstr(copy, needle) != NULL;
        free(copy);
        line += length + (end != NULL);
    }
    return count;
}

static void expect_in(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("\"%s\" not in:\n%s", needle, text);
}

static const char calls[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}\n"
                            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"progress\"}\n"
                            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"sum\",\"params\":[1]}\n";

/*
 * Drop-ins with a syntax error, a section the main config has, a file others may write and an
 * [mcp] name beside a mistake: each is skipped whole with one error line naming it and why, and
 * the good one and the main config serve.
 */
static void test_broken_dropins_skipped_at_start(void **state)
{
    fixture *f = *state;
    char *good = format("[plugin progress]\npath = %s\n", env("RPCD_PLUGIN_PROGRESS"));
    write_dropin(f, "10-good.conf", good);
    char *spec = format("[plugin spec]\npath = %s\nthis is not ini\n", env("RPCD_PLUGIN_SPEC"));
    write_dropin(f, "20-syntax.conf", spec);
    write_dropin(f, "30-again.conf", "[plugin echo]\npath = echo.so\n");
    write_dropin(f, "40-open.conf", "[plugin open]\npath = echo.so\n");
    char *open_path = format("%s/40-open.conf", f->dropins);
    assert_int_equal(chmod(open_path, 0666), 0);
    write_dropin(f, "50-named.conf", "[mcp]\ntool.echo = shout\n[plugin half]\n");
    char *main_text = format("[rpcd]\nworkers = 1\n[plugin echo]\npath = %s\n"
                             "[mcp]\ntools = echo, progress\n",
                             env("RPCD_PLUGIN_ECHO"));
    harness_run_result r;
    run(f, main_text, NULL, calls, 0, &r);
    harness_lines lines;
    assert_int_equal(harness_split_lines(r.out, r.out_length, &lines), 0);
    assert_int_equal(lines.count, 3);
    assert_true(
        harness_json_equal("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[1]}", lines.items[0]));
    assert_true(harness_json_equal("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"steps\":3}}",
                                   lines.items[1]));
    /* spec came in the skipped drop-in: none of it is loaded. */
    assert_true(harness_json_equal("{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32601,"
                                   "\"message\":\"Method not found\"}}",
                                   lines.items[2]));
    harness_lines_free(&lines);
    assert_int_equal(lines_with(r.err, "rpcd: error:"), 4);
    char *expected[] = {
        format("rpcd: error: drop-in %s/20-syntax.conf skipped: line 3: syntax error", f->dropins),
        format("rpcd: error: drop-in %s/30-again.conf skipped: line 1: section [plugin echo] is "
               "given twice (first in %s/rpcd.conf, line 3)",
               f->dropins, f->dir),
        format("rpcd: error: drop-in %s/40-open.conf skipped: ", f->dropins),
        format("rpcd: error: drop-in %s/50-named.conf skipped: [plugin half] has no path",
               f->dropins),
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        assert_int_equal(lines_with(r.err, expected[i]), 1);
        free(expected[i]);
    }
    expect_in(r.err, "writable");
    harness_run_result_free(&r);

    /* The [mcp] name of the skipped drop-in is gone with it: echo keeps its own name. */
    run(f, main_text, NULL,
        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
        "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\","
        "\"version\":\"1\"}}}\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n",
        0, &r);
    expect_in(r.out, "\"name\":\"echo\"");
    assert_null(strstr(r.out, "shout"));
    harness_run_result_free(&r);
    free(main_text);
    free(open_path);
    free(spec);
    free(good);
}

/* strict = true: the first broken drop-in stops the start, one line; the main config's own
 * mistakes stop it with or without strict. */
static void test_strict_and_main_config_are_fatal(void **state)
{
    fixture *f = *state;
    write_dropin(f, "20-syntax.conf", "[plugin spec]\nthis is not ini\n");
    char *text =
        format("[rpcd]\nstrict = true\n[plugin echo]\npath = %s\n", env("RPCD_PLUGIN_ECHO"));
    harness_run_result r;
    run(f, text, NULL, calls, EXIT_CONFIG, &r);
    assert_string_equal(r.out, "");
    assert_int_equal(lines_with(r.err, "rpcd:"), 1);
    char *reason = format("rpcd: error: %s/20-syntax.conf:2: syntax error", f->dropins);
    expect_in(r.err, reason);
    free(reason);
    harness_run_result_free(&r);
    free(text);

    text = format("[rpcd]\nstrict = maybe\n[plugin echo]\npath = %s\n", env("RPCD_PLUGIN_ECHO"));
    run(f, text, NULL, calls, EXIT_CONFIG, &r);
    reason = format("%s/rpcd.conf:2: ", f->dir);
    expect_in(r.err, reason);
    free(reason);
    harness_run_result_free(&r);
    free(text);

    text = format("[plugin echo]\npath = %s\nthis is not ini\n", env("RPCD_PLUGIN_ECHO"));
    run(f, text, NULL, calls, EXIT_CONFIG, &r);
    reason = format("%s/rpcd.conf:3: syntax error", f->dir);
    expect_in(r.err, reason);
    assert_int_equal(lines_with(r.err, "rpcd:"), 1);
    free(reason);
    harness_run_result_free(&r);
    free(text);
}

/*
 * --check: each drop-in's state, loaded or skipped and why; a plugin it skipped (required =
 * false, its init failed) has a warning and no line of its own, the others have theirs.
 */
static void test_check_tells_each_dropin_and_loaded_plugin(void **state)
{
    fixture *f = *state;
    char *good =
        format("[plugin broken]\npath = %s\nrequired = false\n", env("RPCD_FIXTURE_INIT_FAIL"));
    write_dropin(f, "10-good.conf", good);
    write_dropin(f, "20-bad.conf", "[plugin bad]\n[rpcd]\n");
    char *text = format("[plugin echo]\npath = %s\n", env("RPCD_PLUGIN_ECHO"));
    harness_run_result r;
    run(f, text, "--check", NULL, 0, &r);
    char *loaded = format("rpcd: info: drop-in %s/10-good.conf: loaded\n", f->dropins);
    char *skipped = format("rpcd: info: drop-in %s/20-bad.conf: skipped: line 2: [rpcd] belongs "
                           "in the main config file",
                           f->dropins);
    expect_in(r.err, loaded);
    expect_in(r.err, skipped);
    expect_in(r.err, "rpcd: info: plugin echo: isolation = none");
    expect_in(r.err, "database unreachable (not required: skipped)");
    assert_null(strstr(r.err, "plugin broken: isolation"));
    harness_run_result_free(&r);
    free(skipped);
    free(loaded);
    free(text);
    free(good);
}

/*
 * One file served by two sections: the method both register is refused naming both sections,
 * in process and with each in a host of its own.
 */
static void test_one_file_two_sections(void **state)
{
    fixture *f = *state;
    for (int isolated = 0; isolated < 2; isolated++) {
        char *text =
            format("[rpcd]\nisolation = %s\n[plugin one]\npath = %s\n[plugin two]\n"
                   "path = %s\n",
                   isolated ? "process" : "none", env("RPCD_PLUGIN_ECHO"), env("RPCD_PLUGIN_ECHO"));
        harness_run_result r;
        run(f, text, NULL, calls, EXIT_CONFIG, &r);
        expect_in(r.err, "method 'echo' is registered by both [plugin one] and [plugin two]");
        assert_int_equal(lines_with(r.err, "rpcd:"), 1);
        harness_run_result_free(&r);
        free(text);
    }
}

/*
 * A plugin's log lines start with its section's name, not the plugin's own, in process and
 * isolated, and so do rpcd's lines about it (a key it did not read).
 */
static void test_log_lines_name_the_section(void **state)
{
    fixture *f = *state;
    for (int isolated = 0; isolated < 2; isolated++) {
        char *text = format("[rpcd]\nisolation = %s\n[plugin notebook]\npath = %s\ncolour = blue\n",
                            isolated ? "process" : "none", env("RPCD_PLUGIN_NOTES"));
        harness_run_result r;
        run(f, text, NULL,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"notes_add\",\"params\":{\"title\":\"t\","
            "\"text\":\"x\"}}\n",
            0, &r);
        expect_in(r.out, "Saved note t.");
        expect_in(r.err, "rpcd: info: notebook: note t saved (1 bytes)");
        expect_in(r.err, "(notebook) did not use its key 'colour'");
        assert_null(strstr(r.err, "notes: note"));
        harness_run_result_free(&r);
        free(text);
    }
}

/* An isolated plugin whose init dies of a signal: the start fails with one line naming it. */
/*
 * Sanitizer runtimes take the fatal signals themselves: here the host's SIGSEGV must kill it, as
 * it does in a plain build, so they are told to leave them alone (this test runs last).
 */
static void leave_fatal_signals_to_the_host(void)
{
    static const char *const names[] = {"ASAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *old = getenv(names[i]);
        char *value = format("%s%shandle_segv=0:handle_sigbus=0:handle_abort=0:detect_leaks=0",
                             old ? old : "", old && old[0] ? ":" : "");
        setenv(names[i], value, 1);
        free(value);
    }
}

static void test_isolated_init_killed_names_the_signal(void **state)
{
    fixture *f = *state;
    leave_fatal_signals_to_the_host();
    char *text = format("[plugin crashing]\npath = %s\nisolation = process\ncrash = true\n",
                        env("RPCD_FIXTURE_INIT_FAIL"));
    harness_run_result r;
    run(f, text, NULL, calls, EXIT_CONFIG, &r);
    expect_in(r.err, "its host ended before the plugin's init returned (killed by signal 11 "
                     "(SIGSEGV))");
    harness_run_result_free(&r);
    free(text);
}

int main(void)
{
#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        TEST(test_broken_dropins_skipped_at_start),
        TEST(test_strict_and_main_config_are_fatal),
        TEST(test_check_tells_each_dropin_and_loaded_plugin),
        TEST(test_one_file_two_sections),
        TEST(test_log_lines_name_the_section),
        TEST(test_isolated_init_killed_names_the_signal),
    };
#undef TEST
    return cmocka_run_group_tests(tests, NULL, NULL);
}
