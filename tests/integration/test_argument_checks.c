/* SPDX-License-Identifier: MIT */
/*
 * The plugin contract's argument checks hold the same way in rpcd's process and in a plugin
 * host: every host function on a call, given each class of bad argument (the bad_arguments
 * fixture), returns the same status both ways, and rpcd logs the same lines of it.
 */
#include "harness.h"

#include <jansson.h>
#include <rpcd/plugin.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* What one run gave: the two calls' results, and the log lines about its calls, sorted. */
typedef struct outcome {
    json_t *probe;  /* {"NAME": status} */
    json_t *shaped; /* {"n":1,"result":S,"tool_result":T} */
    harness_lines logged;
    size_t notifications; /* that reached the client: none, every one tried was refused */
} outcome;

static int compare_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The result of the response with id in out's lines (new), or fails; the notifications
 * before it are counted in *notifications. */
static json_t *result_of(const char *out, int id, size_t *notifications)
{
    harness_lines lines;
    assert_int_equal(harness_split_lines(out, strlen(out), &lines), HARNESS_OK);
    json_t *found = NULL;
    for (size_t i = 0; i < lines.count && !found; i++) {
        json_t *message = json_loads(lines.items[i], 0, NULL);
        if (!json_object_get(message, "id"))
            ++*notifications;
        else if (json_integer_value(json_object_get(message, "id")) == id) {
            found = json_object_get(message, "result");
            if (!found)
                fail_msg("call %d failed: %s", id, lines.items[i]);
            json_incref(found);
        }
        json_decref(message);
    }
    harness_lines_free(&lines);
    if (!found)
        fail_msg("no response to call %d in:\n%s", id, out);
    return found;
}

static outcome run_both_calls(const char *isolation)
{
    char *dir = harness_temp_dir();
    assert_non_null(dir);
    char text[1024];
    snprintf(text, sizeof text,
             "[rpcd]\nmax_depth = 4\n[plugin bad_arguments]\npath = %s\nisolation = %s\n",
             harness_env("RPCD_FIXTURE_BAD_ARGUMENTS"), isolation);
    char *config = harness_write_file(dir, "rpcd.conf", text);
    assert_non_null(config);
    harness_argv args = harness_rpcd_argv(config);
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"bad_arguments.probe\","
        "\"params\":{\"_meta\":{\"k\":1}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"bad_arguments.shaped\"}\n";
    harness_run_result run;
    assert_int_equal(harness_run(args.argv, input, sizeof input - 1, HARNESS_TIMEOUT_MS, &run),
                     HARNESS_OK);
    if (!run.status.exited || run.status.code != 0)
        fail_msg("rpcd ended with %s:\n%s", harness_exit_describe(&run.status), run.err);
    outcome got = {NULL, NULL, {0}, 0};
    got.probe = result_of(run.out, 1, &got.notifications);
    size_t after = 0;
    got.shaped = result_of(run.out, 2, &after);
    harness_lines all;
    assert_int_equal(harness_split_lines(run.err, strlen(run.err), &all), HARNESS_OK);
    harness_lines *kept = &got.logged;
    kept->items = calloc(all.count + 1, sizeof *kept->items);
    assert_non_null(kept->items);
    /* What rpcd said of a call of the plugin's ("bad_arguments: bad_arguments.probe ..."), not
     * of its host (what the kernel cannot enforce for it, which only an isolated plugin has). */
    for (size_t i = 0; i < all.count; i++)
        if (strstr(all.items[i], "bad_arguments: bad_arguments."))
            kept->items[kept->count++] = strdup(all.items[i]);
    qsort(kept->items, kept->count, sizeof *kept->items, compare_lines);
    harness_lines_free(&all);
    harness_run_result_free(&run);
    harness_remove_dir(dir);
    free(dir);
    free(config);
    return got;
}

static void outcome_free(outcome *o)
{
    json_decref(o->probe);
    json_decref(o->shaped);
    harness_lines_free(&o->logged);
}

static long status_of(const json_t *result, const char *name)
{
    const json_t *member = json_object_get(result, name);
    if (!json_is_integer(member))
        fail_msg("no status for %s", name);
    return (long)json_integer_value(member);
}

/* Both ways give the same statuses, member by member, and the same log lines. */
static void test_same_in_process_and_isolated(void **state)
{
    (void)state;
    outcome inside = run_both_calls("none"), apart = run_both_calls("process");
    const char *name;
    json_t *value;
    json_object_foreach(inside.probe, name, value)
    {
        long there = status_of(apart.probe, name);
        if (json_integer_value(value) != there)
            fail_msg("%s: %lld in process, %ld isolated", name,
                     (long long)json_integer_value(value), there);
    }
    assert_int_equal(json_object_size(inside.probe), json_object_size(apart.probe));
    assert_true(json_equal(inside.shaped, apart.shaped));
    for (size_t i = 0; i < inside.logged.count || i < apart.logged.count; i++) {
        const char *a = i < inside.logged.count ? inside.logged.items[i] : "(none)";
        const char *b = i < apart.logged.count ? apart.logged.items[i] : "(none)";
        /* "rpcd: warning: bad_arguments: ...": the same text but for nothing. */
        if (strcmp(a, b) != 0)
            fail_msg("log lines differ:\n  in process: %s\n  isolated:   %s", a, b);
    }
    outcome_free(&inside);
    outcome_free(&apart);
}

/* What plugin.h promises to refuse is refused, each way: every bad argument of the fixture. */
static void expect_refusals(const char *isolation)
{
    outcome got = run_both_calls(isolation);
    if (got.notifications != 0)
        fail_msg("(%s) %zu notifications reached the client", isolation, got.notifications);
    const char *name;
    json_t *value;
    json_object_foreach(got.probe, name, value)
    {
        long expected = strcmp(name, "complete_deferred") == 0 ? RPCD_ERR_UNSUPPORTED
                                                               : RPCD_ERR_INVALID_ARGUMENT;
        if (json_integer_value(value) != expected)
            fail_msg("%s (%s): %lld, not %ld", name, isolation,
                     (long long)json_integer_value(value), expected);
    }
    /* A result off the method's output schema is refused, and so is a tool result whose
     * structuredContent is; the plugin then answers again, and that answer goes out. */
    assert_int_equal(status_of(got.shaped, "result"), RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(status_of(got.shaped, "tool_result"), RPCD_ERR_INVALID_ARGUMENT);
    assert_int_equal(status_of(got.shaped, "n"), 1);
    /* And rpcd says why, naming the plugin and method, for each refusal it logs. */
    static const char *const said[] = {
        "bad_arguments.probe tried to send a notification \"\" with an empty name; refused",
        "bad_arguments.probe tried to send a notification \"rpc.x\", a name rpcd reserves",
        /* One line, cut in two: parenthesised, as clang asks of a concatenation meant. */
        ("bad_arguments.probe sent a notification \"bad/n\" with params that are not a JSON "
         "array or object; dropped"),
        "bad_arguments.probe sent a notification \"bad/s\" with params",
        "bad_arguments.shaped gave a result rpcd cannot send",
    };
    for (size_t i = 0; i < sizeof said / sizeof said[0]; i++) {
        bool found = false;
        for (size_t j = 0; j < got.logged.count && !found; j++)
            found = strstr(got.logged.items[j], said[i]) != NULL;
        if (!found)
            fail_msg("(%s) no log line says: %s", isolation, said[i]);
    }
    outcome_free(&got);
}

static void test_refused_in_process(void **state)
{
    (void)state;
    expect_refusals("none");
}

static void test_refused_isolated(void **state)
{
    (void)state;
    expect_refusals("process");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_in_process_and_isolated),
        cmocka_unit_test(test_refused_in_process),
        cmocka_unit_test(test_refused_isolated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
