/* SPDX-License-Identifier: MIT */
/*
 * Data-driven transcripts: each file NAME.case in cases/ is one test, replayed against the real
 * binary. Adding a case needs no code.
 */

/*
 * The format, one directive per line:
 *   --> TEXT        send TEXT followed by "\n"
 *   <-- TEXT        expect one output line JSON-equal to TEXT (see harness_json_equal)
 *   # comment       ignored, as are blank lines
 *   @config NAME    run with cases/NAME instead of the build config; ${VAR} in it is replaced by
 *                   the environment variable VAR (RPCD_PLUGIN_ECHO, RPCD_FIXTURE_MISBEHAVE, ...)
 *   @ordered        expect the output lines in exactly the order given, not as a multiset
 *   @hold-input     close stdin only once the expected lines are read, as an MCP host does: in
 *                   an MCP session the end of input cancels the calls in flight
 * All input is sent, stdin is closed, and all output is read until EOF; rpcd must exit 0. Any
 * other line is an error, so that a typo cannot silently drop a check.
 */
#include "harness.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define CASE_TIMEOUT_MS test_time_ms(20000)

typedef struct expected_line {
    char *text; /* owned */
    int line;   /* where it is in the case file */
} expected_line;

typedef struct test_case {
    char *path;  /* owned */
    char *input; /* owned: every "--> " line, each with "\n" */
    size_t input_length;
    expected_line *expected; /* owned */
    size_t expected_count;
    char *config_name; /* owned, NULL for the build config */
    bool ordered;
    bool hold_input;
} test_case;

static void case_free(test_case *tc)
{
    free(tc->input);
    for (size_t i = 0; i < tc->expected_count; i++)
        free(tc->expected[i].text);
    free(tc->expected);
    free(tc->config_name);
    memset(tc, 0, sizeof *tc);
}

static int append_input(test_case *tc, const char *text, size_t length)
{
    char *grown = realloc(tc->input, tc->input_length + length + 2);
    if (!grown)
        return -1;
    tc->input = grown;
    memcpy(tc->input + tc->input_length, text, length);
    tc->input_length += length;
    tc->input[tc->input_length++] = '\n';
    tc->input[tc->input_length] = '\0';
    return 0;
}

static int append_expected(test_case *tc, const char *text, size_t length, int line)
{
    expected_line *grown = realloc(tc->expected, (tc->expected_count + 1) * sizeof *grown);
    if (!grown)
        return -1;
    tc->expected = grown;
    char *copy = strndup(text, length);
    if (!copy)
        return -1;
    tc->expected[tc->expected_count++] = (expected_line){copy, line};
    return 0;
}

static bool blank(const char *text, size_t length)
{
    for (size_t i = 0; i < length; i++)
        if (!strchr(" \t\r", text[i]))
            return false;
    return true;
}

/* Parses a case file. Returns 0, or -1 after printing the file, line and reason. */
static int case_parse(const char *path, test_case *tc)
{
    size_t length;
    char *text = harness_read_file(path, &length);
    if (!text) {
        print_error("%s: cannot read\n", path);
        return -1;
    }
    int status = 0;
    int number = 0;
    for (size_t start = 0; start < length && status == 0;) {
        const char *line = text + start;
        const char *newline = memchr(line, '\n', length - start);
        size_t line_length = newline ? (size_t)(newline - line) : length - start;
        start += line_length + 1;
        number++;
        if (line_length >= 4 && memcmp(line, "--> ", 4) == 0) {
            status = append_input(tc, line + 4, line_length - 4);
        } else if (line_length >= 4 && memcmp(line, "<-- ", 4) == 0) {
            status = append_expected(tc, line + 4, line_length - 4, number);
        } else if (line_length >= 8 && memcmp(line, "@config ", 8) == 0 && !tc->config_name) {
            tc->config_name = strndup(line + 8, line_length - 8);
            status = tc->config_name ? 0 : -1;
        } else if (line_length == 8 && memcmp(line, "@ordered", 8) == 0) {
            tc->ordered = true;
        } else if (line_length == 11 && memcmp(line, "@hold-input", 11) == 0) {
            tc->hold_input = true;
        } else if ((line_length >= 1 && line[0] == '#') || blank(line, line_length)) {
            continue;
        } else {
            /* A typo must not silently drop a check. */
            print_error("%s:%d: not a case line (\"--> \", \"<-- \", \"# \", @config, "
                        "@ordered, @hold-input): %.*s\n",
                        path, number, (int)line_length, line);
            status = -1;
        }
    }
    free(text);
    return status;
}

/* Writes cases/NAME, with ${VAR} expanded, into a temp dir. Returns the config path or NULL. */
static char *prepare_config(const char *cases_dir, const char *name, char **temp_dir)
{
    char *template_path;
    if (asprintf(&template_path, "%s/%s", cases_dir, name) < 0)
        return NULL;
    char *template_text = harness_read_file(template_path, NULL);
    if (!template_text)
        print_error("%s: cannot read the config of this case\n", template_path);
    free(template_path);
    if (!template_text)
        return NULL;
    char *expanded = harness_expand_env(template_text);
    free(template_text);
    if (!expanded)
        return NULL;
    char *path = NULL;
    *temp_dir = harness_temp_dir();
    if (*temp_dir)
        path = harness_write_file(*temp_dir, name, expanded);
    free(expanded);
    return path;
}

/*
 * With RPCD_CASES_ISOLATION set (to none or process), the config as the case gives it, with that
 * isolation for every plugin and plugin_dir set to the original's directory: every case then
 * runs the same with its plugins in host processes. Returns a new config path, or NULL.
 */
static char *isolated_config(const char *config, const char *isolation, char **temp_dir)
{
    char *text = harness_read_file(config, NULL);
    if (!text)
        return NULL;
    char *dir = strdup(config);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash)
        *slash = '\0';
    /* A config without an [rpcd] section (a case's own) gets one, at the top. */
    char *rpcd_section = strstr(text, "[rpcd]\n");
    size_t before = rpcd_section ? (size_t)(rpcd_section - text) : 0;
    const char *after = rpcd_section ? rpcd_section + 7 : text;
    char *changed = NULL;
    if (dir && asprintf(&changed, "%.*s[rpcd]\nisolation = %s\nplugin_dir = %s\n%s", (int)before,
                        text, isolation, slash ? dir : ".", after) < 0)
        changed = NULL;
    free(text);
    free(dir);
    if (!changed)
        return NULL;
    if (!*temp_dir)
        *temp_dir = harness_temp_dir();
    char *path = *temp_dir ? harness_write_file(*temp_dir, "isolated.conf", changed) : NULL;
    free(changed);
    return path;
}

/* Matches output lines to expected lines; prints every difference. Returns the count of them. */
static int compare_output(const test_case *tc, const harness_lines *output)
{
    int problems = 0;
    if (tc->ordered) {
        size_t common = tc->expected_count < output->count ? tc->expected_count : output->count;
        for (size_t i = 0; i < common; i++) {
            if (!harness_json_equal(tc->expected[i].text, output->items[i])) {
                print_error("%s:%d: output line %zu differs\n  expected: %s\n  actual:   %s\n",
                            tc->path, tc->expected[i].line, i + 1, tc->expected[i].text,
                            output->items[i]);
                problems++;
            }
        }
        for (size_t i = common; i < tc->expected_count; i++, problems++)
            print_error("%s:%d: missing expected line: %s\n", tc->path, tc->expected[i].line,
                        tc->expected[i].text);
        for (size_t i = common; i < output->count; i++, problems++)
            print_error("%s: unexpected output line %zu: %s\n", tc->path, i + 1, output->items[i]);
        return problems;
    }

    bool *matched = calloc(output->count + 1, sizeof *matched);
    if (!matched)
        return 1;
    for (size_t i = 0; i < tc->expected_count; i++) {
        bool found = false;
        for (size_t j = 0; j < output->count && !found; j++) {
            if (!matched[j] && harness_json_equal(tc->expected[i].text, output->items[j])) {
                matched[j] = true;
                found = true;
            }
        }
        if (!found) {
            print_error("%s:%d: missing expected line: %s\n", tc->path, tc->expected[i].line,
                        tc->expected[i].text);
            problems++;
        }
    }
    for (size_t j = 0; j < output->count; j++) {
        if (!matched[j]) {
            print_error("%s: unexpected output line %zu: %s\n", tc->path, j + 1, output->items[j]);
            problems++;
        }
    }
    free(matched);
    return problems;
}

/*
 * harness_run, but stdin is closed only once count lines have been read (or the time is up), and
 * the rest read to the end.
 */
static void run_holding_input(const char *const argv[], const test_case *tc,
                              harness_run_result *out)
{
    memset(out, 0, sizeof *out);
    harness_process *rpcd = harness_start(argv);
    assert_non_null(rpcd);
    out->io_status = harness_write(rpcd, tc->input, tc->input_length, CASE_TIMEOUT_MS);
    char *text = NULL;
    size_t length = 0;
    for (size_t i = 0; i < tc->expected_count && out->io_status == HARNESS_OK; i++) {
        char *line;
        size_t line_length;
        out->io_status = harness_read_line(rpcd, CASE_TIMEOUT_MS, &line, &line_length, NULL);
        if (out->io_status != HARNESS_OK)
            break;
        char *grown = realloc(text, length + line_length + 2);
        assert_non_null(grown);
        text = grown;
        memcpy(text + length, line, line_length);
        length += line_length;
        text[length++] = '\n';
        text[length] = '\0';
        free(line);
    }
    harness_close_stdin(rpcd);
    char *rest = NULL;
    size_t rest_length = 0;
    if (out->io_status == HARNESS_OK)
        out->io_status = harness_read_all(rpcd, CASE_TIMEOUT_MS, &rest, &rest_length);
    char *grown = realloc(text, length + rest_length + 1);
    assert_non_null(grown);
    text = grown;
    if (rest)
        memcpy(text + length, rest, rest_length);
    length += rest_length;
    text[length] = '\0';
    free(rest);
    if (harness_wait(rpcd, CASE_TIMEOUT_MS, &out->status) != HARNESS_OK && !out->io_status)
        out->io_status = HARNESS_ERROR;
    out->out = text;
    out->out_length = length;
    out->err = strdup(harness_stderr(rpcd));
    harness_free(rpcd);
}

static void run_case(void **state)
{
    const char *path = *state;
    const char *cases_dir = harness_env("RPCD_INTEGRATION_CASES");
    assert_non_null(cases_dir);
    test_case tc = {0};
    tc.path = (char *)path;
    assert_int_equal(case_parse(path, &tc), 0);
    assert_true(tc.input_length > 0);

    char *temp_dir = NULL;
    char *config_path = NULL;
    if (tc.config_name) {
        config_path = prepare_config(cases_dir, tc.config_name, &temp_dir);
        assert_non_null(config_path);
    }
    const char *config = config_path ? config_path : harness_env("RPCD_BUILD_CONFIG");
    assert_non_null(config);
    const char *isolation = getenv("RPCD_CASES_ISOLATION");
    char *isolated_path = NULL;
    if (isolation) {
        isolated_path = isolated_config(config, isolation, &temp_dir);
        assert_non_null(isolated_path);
        config = isolated_path;
    }
    harness_argv args = harness_rpcd_argv(config);
    assert_non_null(args.argv[0]);

    harness_run_result result;
    if (tc.hold_input)
        run_holding_input(args.argv, &tc, &result);
    else
        harness_run(args.argv, tc.input, tc.input_length, CASE_TIMEOUT_MS, &result);
    int problems = 0;
    if (result.io_status != HARNESS_OK) {
        print_error("%s: talking to rpcd failed (status %d)\n", path, result.io_status);
        problems++;
    }
    if (!result.status.exited || result.status.code != 0) {
        print_error("%s: rpcd ended with %s, expected exit 0\n", path,
                    harness_exit_describe(&result.status));
        problems++;
    }
    harness_lines output = {0};
    if (result.out) {
        assert_int_equal(harness_split_lines(result.out, result.out_length, &output), 0);
        if (output.unterminated) {
            print_error("%s: the last output line has no newline\n", path);
            problems++;
        }
        problems += compare_output(&tc, &output);
    }
    if (problems > 0)
        print_error("%s: rpcd's stderr:\n%s\n", path, result.err ? result.err : "");
    harness_lines_free(&output);
    harness_run_result_free(&result);
    harness_remove_dir(temp_dir);
    free(temp_dir);
    free(config_path);
    free(isolated_path);
    tc.path = NULL;
    case_free(&tc);
    assert_int_equal(problems, 0);
}

static int is_case_file(const struct dirent *entry)
{
    size_t length = strlen(entry->d_name);
    return length > 5 && strcmp(entry->d_name + length - 5, ".case") == 0;
}

int main(void)
{
    const char *cases_dir = harness_env("RPCD_INTEGRATION_CASES");
    if (!cases_dir)
        return 1;
    struct dirent **entries;
    int count = scandir(cases_dir, &entries, is_case_file, alphasort);
    if (count <= 0) {
        fprintf(stderr, "no .case files in %s\n", cases_dir);
        return 1;
    }
    struct CMUnitTest *tests = calloc((size_t)count, sizeof *tests);
    char **paths = calloc((size_t)count, sizeof *paths);
    if (!tests || !paths)
        return 1;
    for (int i = 0; i < count; i++) {
        if (asprintf(&paths[i], "%s/%s", cases_dir, entries[i]->d_name) < 0)
            return 1;
        tests[i].name = entries[i]->d_name;
        tests[i].test_func = run_case;
        tests[i].initial_state = paths[i];
    }
    int failed = _cmocka_run_group_tests("cases", tests, (size_t)count, NULL, NULL);
    for (int i = 0; i < count; i++) {
        free(paths[i]);
        free(entries[i]);
    }
    free(entries);
    free(paths);
    free(tests);
    return failed;
}
