/* SPDX-License-Identifier: MIT */
/*
 * rpcd keeps its own libraries to itself: two plugins whose own functions are named as jansson's
 * (json_loadb, json_dumps, json_object, with default visibility) each reach their own functions,
 * in rpcd's process and in a host process, and rpcd exits at the end of its input.
 */
#include "harness.h"

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

static const char requests[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a.own\"}\n"
                               "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b.own\"}\n";

/* Runs rpcd with both fixtures (isolation as given) over requests until it exits by itself. */
static void run_both(const char *isolation)
{
    char text[512];
    snprintf(text, sizeof text,
             "[plugin a]\npath = ${RPCD_FIXTURE_SYMBOLS_A}\nisolation = %s\n"
             "[plugin b]\npath = ${RPCD_FIXTURE_SYMBOLS_B}\nisolation = %s\n",
             isolation, isolation);
    char *expanded = harness_expand_env(text);
    assert_non_null(expanded);
    char *dir = harness_temp_dir();
    assert_non_null(dir);
    char *config = harness_write_file(dir, "rpcd.conf", expanded);
    assert_non_null(config);
    harness_argv args = harness_rpcd_argv(config);
    assert_non_null(args.argv[0]);
    harness_run_result result;
    assert_int_equal(harness_run(args.argv, requests, strlen(requests), wait_ms(), &result), 0);
    if (!result.status.exited || result.status.code != 0 || !result.out)
        fprintf(stderr, "rpcd ended with %s; stdout:\n%s\nstderr:\n%s\n",
                harness_exit_describe(&result.status), result.out ? result.out : "(none)",
                result.err ? result.err : "");
    /* A daemon that never ends at end of input is what the bug looked like. */
    assert_false(result.status.timed_out);
    assert_true(result.status.exited);
    assert_int_equal(result.status.code, 0);
    harness_lines lines;
    assert_int_equal(harness_split_lines(result.out, result.out_length, &lines), 0);
    assert_int_equal(lines.count, 2);
    bool a_seen = false, b_seen = false;
    for (size_t i = 0; i < lines.count; i++) {
        if (harness_json_equal("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"dumps\":\"a-own\"}}",
                               lines.items[i]))
            a_seen = true;
        else if (harness_json_equal(
                     "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"dumps\":\"b-own\"}}",
                     lines.items[i]))
            b_seen = true;
        else
            fprintf(stderr, "unexpected answer: %s\n", lines.items[i]);
    }
    assert_true(a_seen);
    assert_true(b_seen);
    harness_lines_free(&lines);
    harness_run_result_free(&result);
    harness_remove_dir(dir);
    free(dir);
    free(config);
    free(expanded);
}

static void test_own_names_in_process(void **state)
{
    (void)state;
    run_both("none");
}

static void test_own_names_isolated(void **state)
{
    (void)state;
    run_both("process");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_names_in_process),
        cmocka_unit_test(test_own_names_isolated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
