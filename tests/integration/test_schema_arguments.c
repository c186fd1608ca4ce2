/* SPDX-License-Identifier: MIT */
/*
 * params_schema checked by rpcd before a handler runs, in rpcd's process and in a plugin host
 * alike (the schema_tool fixture counts the calls its handlers get): params that do not fit are
 * a tool error naming the pointer, keyword and expectation in tools/call and -32602 with the
 * same in error.data for plain JSON-RPC, and the handler never runs; RPCD_METHOD_VALIDATES_ITSELF
 * and validate_arguments = false leave the params to the plugin; a schema rpcd cannot apply (a
 * remote $ref, a bad keyword) stops the start, naming the plugin, the method and why.
 */
#include "harness.h"

#include <jansson.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char *const modes[] = {"none", "process"};

/* Runs rpcd on a config of the fixture with extra lines in its section. */
static void run_with(const char *isolation, const char *extra, const char *input,
                     harness_run_result *run)
{
    char *dir = harness_temp_dir();
    assert_non_null(dir);
    char text[1024];
    snprintf(text, sizeof text,
             "[rpcd]\nworkers = 1\n[plugin schema_tool]\npath = %s\nisolation = %s\n%s",
             harness_env("RPCD_FIXTURE_SCHEMA_TOOL"), isolation, extra);
    char *config = harness_write_file(dir, "rpcd.conf", text);
    assert_non_null(config);
    harness_argv args = harness_rpcd_argv(config);
    assert_int_equal(harness_run(args.argv, input, strlen(input), HARNESS_TIMEOUT_MS, run),
                     HARNESS_OK);
    harness_remove_dir(dir);
    free(config);
    free(dir);
}

/* The response with id among run's lines (new), or fails. */
static json_t *response(const harness_run_result *run, int id)
{
    harness_lines lines;
    assert_int_equal(harness_split_lines(run->out, run->out_length, &lines), HARNESS_OK);
    json_t *found = NULL;
    for (size_t i = 0; i < lines.count && !found; i++) {
        json_t *message = json_loads(lines.items[i], 0, NULL);
        if (json_integer_value(json_object_get(message, "id")) == id)
            found = json_incref(message);
        json_decref(message);
    }
    harness_lines_free(&lines);
    if (!found)
        fail_msg("no response to %d in:\n%s\nstderr:\n%s", id, run->out, run->err);
    return found;
}

/* The text of a tool error's first content block (borrowed from message). */
static const char *tool_error_text(const json_t *message)
{
    const json_t *result = json_object_get(message, "result");
    assert_true(json_is_true(json_object_get(result, "isError")));
    const json_t *block = json_array_get(json_object_get(result, "content"), 0);
    assert_string_equal(json_string_value(json_object_get(block, "type")), "text");
    return json_string_value(json_object_get(block, "text"));
}

static void assert_contains(const char *text, const char *part)
{
    if (!text || !strstr(text, part))
        fail_msg("\"%s\" not in: %s", part, text ? text : "(null)");
}

static void assert_calls(const harness_run_result *run, int id, int expected)
{
    json_t *message = response(run, id);
    json_t *calls = json_object_get(json_object_get(message, "result"), "calls");
    if (json_integer_value(calls) != expected)
        fail_msg("the handlers ran %d times, not %d:\n%s", (int)json_integer_value(calls), expected,
                 run->out);
    json_decref(message);
}

/* Refused params reach no handler; the refusal says where and why, in both shapes. */
static void test_refused_params_never_reach_the_handler(void **state)
{
    (void)state;
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"schema_strict\",\"arguments\":{\"city\":\"Oslo\",\"extra\":1}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"schema_strict\",\"arguments\":{\"city\":7}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"schema.strict\",\"params\":{\"city\":7}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"schema.strict\",\"params\":{\"city\":\"Oslo\","
        "\"days\":15}}\n"
        "{\"jsonrpc\":\"2.0\",\"method\":\"schema.strict\",\"params\":{\"city\":7}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"schema.calls\"}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
        "\"schema_strict\",\"arguments\":{\"city\":\"Oslo\",\"days\":3,\"units\":\"metric\","
        "\"hourly\":true,\"tags\":[\"a\"]}}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"schema.calls\"}\n";
    for (size_t m = 0; m < 2; m++) {
        harness_run_result run;
        run_with(modes[m], "", input, &run);
        json_t *extra = response(&run, 1);
        const char *text = tool_error_text(extra);
        assert_contains(text, "\"/extra\"");
        assert_contains(text, "\"additionalProperties\"");
        json_t *wrong = response(&run, 2);
        text = tool_error_text(wrong);
        assert_contains(text, "\"/city\"");
        assert_contains(text, "\"type\" expects \"string\"");
        json_t *plain = response(&run, 3);
        const json_t *error = json_object_get(plain, "error");
        assert_int_equal(json_integer_value(json_object_get(error, "code")), -32602);
        const json_t *data = json_object_get(error, "data");
        assert_string_equal(json_string_value(json_object_get(data, "pointer")), "/city");
        assert_string_equal(json_string_value(json_object_get(data, "keyword")), "type");
        assert_contains(json_string_value(json_object_get(data, "expected")), "\"string\"");
        assert_string_equal(json_string_value(json_object_get(data, "plugin")), "schema_tool");
        assert_string_equal(json_string_value(json_object_get(data, "method")), "schema.strict");
        json_t *bound = response(&run, 4);
        data = json_object_get(json_object_get(bound, "error"), "data");
        assert_string_equal(json_string_value(json_object_get(data, "keyword")), "maximum");
        assert_string_equal(json_string_value(json_object_get(data, "expected")), "a number <= 14");
        /* Nothing ran, the notification included; then one call that fits does. */
        assert_calls(&run, 5, 0);
        json_t *fits = response(&run, 6);
        assert_false(json_is_true(json_object_get(json_object_get(fits, "result"), "isError")));
        assert_calls(&run, 7, 1);
        json_decref(extra);
        json_decref(wrong);
        json_decref(plain);
        json_decref(bound);
        json_decref(fits);
        harness_run_result_free(&run);
    }
}

/* RPCD_METHOD_VALIDATES_ITSELF and validate_arguments = false: the handler gets the params. */
static void test_opt_outs_leave_params_to_the_plugin(void **state)
{
    (void)state;
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"schema.own\",\"params\":{\"city\":7}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"schema.strict\",\"params\":{\"city\":7}}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"schema.calls\"}\n";
    for (size_t m = 0; m < 2; m++) {
        harness_run_result run;
        run_with(modes[m], "", input, &run);
        json_t *own = response(&run, 1);
        assert_true(json_is_true(json_object_get(json_object_get(own, "result"), "own")));
        assert_calls(&run, 3, 1);
        json_decref(own);
        harness_run_result_free(&run);
        run_with(modes[m], "validate_arguments = false\n", input, &run);
        json_t *strict = response(&run, 2);
        assert_true(json_is_true(json_object_get(json_object_get(strict, "result"), "ok")));
        assert_calls(&run, 3, 2);
        json_decref(strict);
        harness_run_result_free(&run);
    }
}

/* format is an annotation by default, and fails a value not of it with schema_format = assert. */
static void test_format_asserted_when_configured(void **state)
{
    (void)state;
    static const char input[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"schema.strict\",\"params\":{\"city\":\"Oslo\","
        "\"since\":\"yesterday\"}}\n";
    for (size_t m = 0; m < 2; m++) {
        harness_run_result run;
        run_with(modes[m], "", input, &run);
        json_t *annotation = response(&run, 1);
        assert_true(json_is_true(json_object_get(json_object_get(annotation, "result"), "ok")));
        json_decref(annotation);
        harness_run_result_free(&run);
        char *dir = harness_temp_dir();
        assert_non_null(dir);
        char text[1024];
        snprintf(text, sizeof text,
                 "[rpcd]\nschema_format = assert\n[plugin schema_tool]\npath = %s\n"
                 "isolation = %s\n",
                 harness_env("RPCD_FIXTURE_SCHEMA_TOOL"), modes[m]);
        char *config = harness_write_file(dir, "rpcd.conf", text);
        assert_non_null(config);
        harness_argv args = harness_rpcd_argv(config);
        assert_int_equal(harness_run(args.argv, input, sizeof input - 1, HARNESS_TIMEOUT_MS, &run),
                         HARNESS_OK);
        json_t *assertion = response(&run, 1);
        const json_t *data = json_object_get(json_object_get(assertion, "error"), "data");
        assert_string_equal(json_string_value(json_object_get(data, "pointer")), "/since");
        assert_string_equal(json_string_value(json_object_get(data, "keyword")), "format");
        json_decref(assertion);
        harness_run_result_free(&run);
        harness_remove_dir(dir);
        free(config);
        free(dir);
    }
}

/* A schema rpcd cannot apply stops the start, naming the plugin, the method and why. */
static void test_schemas_refused_at_start(void **state)
{
    (void)state;
    static const struct {
        const char *extra, *why;
    } cases[] = {
        {"register = remote\n", "remote references are not fetched"},
        {"register = invalid\n", "\"type\" is not a type name"},
    };
    for (size_t m = 0; m < 2; m++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            harness_run_result run;
            run_with(modes[m], cases[i].extra, "", &run);
            assert_true(run.status.exited);
            assert_int_not_equal(run.status.code, 0);
            assert_contains(run.err, "schema_tool");
            assert_contains(run.err, "schema.bad");
            assert_contains(run.err, "params_schema");
            assert_contains(run.err, cases[i].why);
            harness_run_result_free(&run);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_params_never_reach_the_handler),
        cmocka_unit_test(test_opt_outs_leave_params_to_the_plugin),
        cmocka_unit_test(test_format_asserted_when_configured),
        cmocka_unit_test(test_schemas_refused_at_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
