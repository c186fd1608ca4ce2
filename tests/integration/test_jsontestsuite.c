/* SPDX-License-Identifier: MIT */
/*
 * The JSONTestSuite corpus through one rpcd process: each file is sent as a line, followed by an
 * echo probe whose answer marks the end of the file's responses. y_ files must parse, n_ files
 * must give a parse error, i_ files may do either, and no file may crash or stall the daemon.
 */
#include "harness.h"

#include <dirent.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define LINE_TIMEOUT_MS test_time_ms(10000)

/* Whether a response line is a -32700 Parse error. */
static bool is_parse_error(const char *line)
{
    json_error_t error;
    json_t *root = json_loads(line, JSON_DECODE_ANY, &error);
    json_t *code = json_object_get(json_object_get(root, "error"), "code");
    bool parse_error = json_is_integer(code) && json_integer_value(code) == -32700;
    json_decref(root);
    return parse_error;
}

/* Whether bytes hold nothing but JSON whitespace: such a text is a blank line, not a message. */
static bool only_whitespace(const char *data, size_t length)
{
    for (size_t i = 0; i < length; i++)
        if (data[i] != ' ' && data[i] != '\t' && data[i] != '\r' && data[i] != '\n')
            return false;
    return true;
}

static int is_corpus_file(const struct dirent *entry)
{
    const char *name = entry->d_name;
    size_t length = strlen(name);
    return length > 7 && (name[0] == 'y' || name[0] == 'n' || name[0] == 'i') && name[1] == '_' &&
           strcmp(name + length - 5, ".json") == 0;
}

/* Adds name to the failure list (a growing text) and says why on stderr. */
static void record_failure(char **failures, const char *name, const char *why)
{
    print_error("%s: %s\n", name, why);
    char *grown;
    if (asprintf(&grown, "%s  %s\n", *failures ? *failures : "", name) < 0)
        return;
    free(*failures);
    *failures = grown;
}

static void test_corpus(void **state)
{
    (void)state;
    const char *dir = harness_env("RPCD_JSONTESTSUITE");
    const char *config = harness_env("RPCD_BUILD_CONFIG");
    assert_non_null(dir);
    assert_non_null(config);
    struct dirent **entries;
    int count = scandir(dir, &entries, is_corpus_file, alphasort);
    assert_true(count > 0);

    harness_argv args = harness_rpcd_argv(config);
    harness_process *rpcd = harness_start(args.argv);
    assert_non_null(rpcd);

    char *failures = NULL;
    int failure_count = 0;
    bool alive = true;
    for (int n = 0; n < count && alive; n++) {
        const char *name = entries[n]->d_name;
        char *path;
        assert_true(asprintf(&path, "%s/%s", dir, name) >= 0);
        size_t length = 0;
        char *data = harness_read_file(path, &length);
        free(path);
        assert_non_null(data);

        /*
         * NDJSON has no room for a newline inside a message. In a y_ file every CR and LF is
         * whitespace between tokens, so a space means the same; an n_ file goes as it is, its
         * pieces as separate lines, and one of them at least must fail to parse.
         */
        if (name[0] == 'y')
            for (size_t i = 0; i < length; i++)
                if (data[i] == '\n' || data[i] == '\r')
                    data[i] = ' ';
        char probe[128];
        int probe_length = snprintf(probe, sizeof probe,
                                    "\n{\"jsonrpc\":\"2.0\",\"id\":\"probe-%d\",\"method\":"
                                    "\"echo\",\"params\":[%d]}\n",
                                    n, n);
        char expected[128];
        snprintf(expected, sizeof expected,
                 "{\"jsonrpc\":\"2.0\",\"id\":\"probe-%d\",\"result\":[%d]}", n, n);
        if (harness_write(rpcd, data, length, LINE_TIMEOUT_MS) != HARNESS_OK ||
            harness_write(rpcd, probe, (size_t)probe_length, LINE_TIMEOUT_MS) != HARNESS_OK) {
            record_failure(&failures, name, "rpcd stopped reading (crashed?)");
            failure_count++;
            alive = false;
            free(data);
            break;
        }

        int responses = 0, parse_errors = 0;
        for (;;) {
            char *line;
            int status = harness_read_line(rpcd, LINE_TIMEOUT_MS, &line, NULL, NULL);
            if (status != HARNESS_OK) {
                record_failure(&failures, name,
                               status == HARNESS_TIMED_OUT
                                   ? "the probe after it was not answered in time"
                                   : "rpcd closed stdout (crashed?)");
                failure_count++;
                alive = false;
                break;
            }
            bool is_probe = strcmp(line, expected) == 0;
            if (!is_probe) {
                responses++;
                parse_errors += is_parse_error(line) ? 1 : 0;
            }
            free(line);
            if (is_probe)
                break;
        }
        if (alive) {
            if (name[0] == 'y' && parse_errors > 0) {
                record_failure(&failures, name, "valid JSON answered with -32700");
                failure_count++;
            } else if (name[0] == 'n' && parse_errors == 0 &&
                       !(responses == 0 && only_whitespace(data, length))) {
                record_failure(&failures, name, "invalid JSON not answered with -32700");
                failure_count++;
            }
        }
        free(data);
    }

    harness_close_stdin(rpcd);
    harness_exit status;
    assert_int_equal(harness_wait(rpcd, LINE_TIMEOUT_MS, &status), HARNESS_OK);
    if (!status.exited || status.code != 0) {
        print_error("rpcd ended with %s after the corpus, expected exit 0\nstderr:\n%s\n",
                    harness_exit_describe(&status), harness_stderr(rpcd));
        failure_count++;
    }
    if (failure_count > 0)
        print_error("%d problem(s); failing files:\n%s", failure_count,
                    failures ? failures : "  (none: see above)\n");
    free(failures);
    harness_free(rpcd);
    for (int n = 0; n < count; n++)
        free(entries[n]);
    free(entries);
    assert_int_equal(failure_count, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
