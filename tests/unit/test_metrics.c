/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for metrics: series found again by name, calls counted into their buckets and error
 * codes, the policy hook, plugin events, and the OpenMetrics text (every family typed, label
 * values escaped, buckets cumulative, +Inf equal to the count, "# EOF" last).
 */
#include "base/metrics.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int release(void **state)
{
    (void)state;
    mx_release();
    return 0;
}

/* The text of every counter, NUL-terminated (new). */
static char *text_of_metrics(void)
{
    buffer out = BUFFER_INIT;
    assert_int_equal(mx_write_openmetrics(&out), 0);
    assert_int_equal(buf_append_char(&out, '\0'), 0);
    return out.data;
}

/* The value of the sample line that starts with prefix (up to its value), or -1. */
static long long sample(const char *text, const char *prefix)
{
    for (const char *at = text; at && *at; at = strchr(at, '\n'), at = at ? at + 1 : NULL) {
        size_t length = strlen(prefix);
        if (strncmp(at, prefix, length) == 0 && at[length] == ' ')
            return atoll(at + length + 1);
    }
    return -1;
}

static void test_series_are_found_again(void **state)
{
    (void)state;
    mx_series *echo = mx_series_for("echo", 4, "echo");
    assert_non_null(echo);
    assert_ptr_equal(mx_series_for("echo-more", 4, "echo"), echo); /* length bytes only */
    assert_ptr_not_equal(mx_series_for("echo", 4, "other"), echo);
    assert_ptr_equal(mx_series_for("x", 1, NULL), mx_series_for("x", 1, ""));
}

static void test_calls_are_counted(void **state)
{
    (void)state;
    mx_series *series = mx_series_for("add", 3, "math");
    mx_count_call(series, MX_OK, 50, 10, 20);
    mx_count_call(series, MX_OK, 100, 10, 20);           /* on the first bound: its bucket */
    mx_count_call(series, MX_INTERNAL, 101, 1, 2);       /* past it: the next */
    mx_count_call(series, MX_CANCELLED, 20000000, 0, 0); /* past every bound: +Inf only */
    char *text = text_of_metrics();
    assert_int_equal(sample(text, "rpcd_calls_total{method=\"add\",plugin=\"math\"}"), 4);
    assert_int_equal(
        sample(text, "rpcd_call_errors_total{method=\"add\",plugin=\"math\",code=\"-32603\"}"), 1);
    assert_int_equal(
        sample(text, "rpcd_call_errors_total{method=\"add\",plugin=\"math\",code=\"-32800\"}"), 1);
    assert_int_equal(
        sample(text, "rpcd_call_errors_total{method=\"add\",plugin=\"math\",code=\"-32602\"}"), 0);
    const char *bucket = "rpcd_call_duration_seconds_bucket{method=\"add\",plugin=\"math\",le=";
    char name[160];
    snprintf(name, sizeof name, "%s\"0.0001\"}", bucket);
    assert_int_equal(sample(text, name), 2);
    snprintf(name, sizeof name, "%s\"0.00025\"}", bucket);
    assert_int_equal(sample(text, name), 3);
    snprintf(name, sizeof name, "%s\"10\"}", bucket);
    assert_int_equal(sample(text, name), 3);
    snprintf(name, sizeof name, "%s\"+Inf\"}", bucket);
    assert_int_equal(sample(text, name), 4);
    assert_int_equal(
        sample(text, "rpcd_call_duration_seconds_count{method=\"add\",plugin=\"math\"}"), 4);
    assert_non_null(
        strstr(text, "rpcd_call_duration_seconds_sum{method=\"add\",plugin=\"math\"} 20.000251\n"));
    assert_int_equal(sample(text, "rpcd_call_bytes_in_total{method=\"add\",plugin=\"math\"}"), 21);
    assert_int_equal(sample(text, "rpcd_call_bytes_out_total{method=\"add\",plugin=\"math\"}"), 42);
    free(text);
}

enum { COUNTING_THREADS = 2 * MX_SHARDS + 3, CALLS_EACH = 2000 };

/* Every counting thread has counted once (and so holds its shard) before any goes on. */
static pthread_barrier_t all_counting;

/* Counts CALLS_EACH calls of the series; returns the shard the thread wrote. */
static void *count_calls(void *series)
{
    mx_count_call(series, MX_INTERNAL, 100, 1, 2);
    pthread_barrier_wait(&all_counting);
    for (int i = 1; i < CALLS_EACH; i++)
        mx_count_call(series, i % 2 ? MX_OK : MX_INTERNAL, 100, 1, 2);
    return (void *)(intptr_t)mx_thread_shard;
}

/* More threads than shards, all counting at once: every count is there (the threads past the
 * shards share one, atomically); a shard an ended thread had is another's afterwards. */
static void test_threads_count_exactly(void **state)
{
    (void)state;
    /* This thread holds a shard too, whichever test ran before. */
    mx_count_call(mx_series_for("main", 4, "threads"), MX_OK, 1, 0, 0);
    assert_true(mx_thread_shard >= 0 && mx_thread_shard < MX_SHARDS - 1);
    mx_series *series = mx_series_for("many", 4, "threads");
    assert_int_equal(pthread_barrier_init(&all_counting, NULL, COUNTING_THREADS), 0);
    pthread_t threads[COUNTING_THREADS];
    for (int i = 0; i < COUNTING_THREADS; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, count_calls, series), 0);
    int own = 0;
    for (int i = 0; i < COUNTING_THREADS; i++) {
        void *shard;
        assert_int_equal(pthread_join(threads[i], &shard), 0);
        assert_true((intptr_t)shard >= 0 && (intptr_t)shard < MX_SHARDS);
        own += (intptr_t)shard < MX_SHARDS - 1;
    }
    /* All alive at once: the shards of their own left beside this thread's went to as many of
     * them; the others shared the last. */
    assert_int_equal(own, MX_SHARDS - 2);
    pthread_barrier_destroy(&all_counting);
    char *text = text_of_metrics();
    long long calls = (long long)COUNTING_THREADS * CALLS_EACH;
    assert_int_equal(sample(text, "rpcd_calls_total{method=\"many\",plugin=\"threads\"}"), calls);
    assert_int_equal(sample(text, "rpcd_call_errors_total{method=\"many\",plugin=\"threads\","
                                  "code=\"-32603\"}"),
                     calls / 2);
    assert_int_equal(sample(text, "rpcd_call_bytes_out_total{method=\"many\",plugin=\"threads\"}"),
                     2 * calls);
    free(text);
    /* Every thread ended: each new one, one at a time, has a shard of its own again. */
    assert_int_equal(pthread_barrier_init(&all_counting, NULL, 1), 0);
    for (int i = 0; i < MX_SHARDS + 2; i++) {
        pthread_t one;
        void *shard;
        assert_int_equal(pthread_create(&one, NULL, count_calls, series), 0);
        assert_int_equal(pthread_join(one, &shard), 0);
        assert_true((intptr_t)shard < MX_SHARDS - 1);
    }
    pthread_barrier_destroy(&all_counting);
}

static void test_outcomes_of_codes(void **state)
{
    (void)state;
    assert_int_equal(mx_outcome_of_code(0), MX_OK);
    assert_int_equal(mx_outcome_of_code(-32602), MX_INVALID_PARAMS);
    assert_int_equal(mx_outcome_of_code(-32603), MX_INTERNAL);
    assert_int_equal(mx_outcome_of_code(-32800), MX_CANCELLED);
    assert_int_equal(mx_outcome_of_code(-32000), MX_OTHER_ERROR);
    assert_int_equal(mx_outcome_of_code(-32601), MX_OTHER_ERROR);
}

static void test_policy_rejections_and_plugin_events(void **state)
{
    (void)state;
    mx_series *series = mx_series_for("rm", 2, "files");
    mx_count_policy_rejection(series);
    mx_count_policy_rejection(series);
    mx_count_policy_rejection(NULL);
    mx_count_plugin_event("files", MX_CRASH);
    mx_count_plugin_event("files", MX_RESTART);
    mx_count_plugin_event("files", MX_RESTART);
    mx_count_plugin_event("files", MX_PLUGIN_EVENT_COUNT); /* no such event: nothing */
    mx_count_plugin_event(NULL, MX_CRASH);
    char *text = text_of_metrics();
    assert_int_equal(sample(text, "rpcd_policy_rejections_total{method=\"rm\",plugin=\"files\"}"),
                     2);
    assert_int_equal(sample(text, "rpcd_plugin_crashes_total{plugin=\"files\"}"), 1);
    assert_int_equal(sample(text, "rpcd_plugin_restarts_total{plugin=\"files\"}"), 2);
    assert_int_equal(sample(text, "rpcd_plugin_deadline_kills_total{plugin=\"files\"}"), 0);
    free(text);
}

static void test_text_shape(void **state)
{
    (void)state;
    mx_count_call(mx_series_for("a\"b\\c\nd\x01", 8, "p"), MX_TOOL_ERROR, 1, 0, 0);
    char *text = text_of_metrics();
    /* Label values escaped; a control byte never breaks a line. */
    assert_non_null(strstr(text, "rpcd_calls_total{method=\"a\\\"b\\\\c\\nd?\",plugin=\"p\"} 1\n"));
    assert_non_null(strstr(text, "code=\"tool_error\"} 1\n"));
    static const char *const families[] = {
        "rpcd_calls counter",
        "rpcd_call_errors counter",
        "rpcd_call_duration_seconds histogram",
        "rpcd_call_bytes_in counter",
        "rpcd_call_bytes_out counter",
        "rpcd_policy_rejections counter",
        "rpcd_plugin_crashes counter",
        "rpcd_plugin_restarts counter",
        "rpcd_plugin_deadline_kills counter",
    };
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        char line[96];
        snprintf(line, sizeof line, "# TYPE %s\n", families[i]);
        assert_non_null(strstr(text, line));
    }
    size_t length = strlen(text);
    assert_true(length > 6);
    assert_string_equal(text + length - 6, "# EOF\n");
    assert_ptr_equal(strstr(text, "# EOF"), text + length - 6);
    free(text);
}

static void test_enable(void **state)
{
    (void)state;
    assert_false(mx_on());
    mx_enable(true);
    assert_true(mx_on());
    mx_enable(false);
    assert_false(mx_on());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_series_are_found_again, release),
        cmocka_unit_test_teardown(test_calls_are_counted, release),
        cmocka_unit_test_teardown(test_threads_count_exactly, release),
        cmocka_unit_test(test_outcomes_of_codes),
        cmocka_unit_test_teardown(test_policy_rejections_and_plugin_events, release),
        cmocka_unit_test_teardown(test_text_shape, release),
        cmocka_unit_test(test_enable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
