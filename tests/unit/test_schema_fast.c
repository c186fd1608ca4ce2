/* SPDX-License-Identifier: MIT */
/*
 * The quick path on a value's text (schema_fast.c) against the full check, side by side: over
 * every case of the official JSON Schema Test Suite (draft 2020-12), compact and spread over
 * lines, and over thousands of instances made from the bench's five-property arguments by
 * mutation. Whenever the quick path says "valid" the full check must too, and
 * schema_check_span must give the full check's verdict and failure (pointer, keyword,
 * expectation) byte for byte. Cases it must decide alone, and those it must leave to the full
 * check (1.0 for an integer, escapes, duplicates, big numbers), are listed.
 */
#include "schema/schema_internal.h"

#include <jansson.h>

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

typedef struct tally {
    size_t compared, quick; /* values checked both ways; those the quick path passed alone */
} tally;

/* The one comparison: quick "valid" implies full "valid", and span == text, failure included. */
static void compare(const json_schema *compiled, const char *text, tally *counts)
{
    js_span value;
    if (js_validate(text, strlen(text), 64, &value, NULL) != 0)
        return; /* deeper than the dispatcher lets through, or a mutation that broke it */
    schema_failure full, span;
    memset(&full, 0, sizeof full);
    memset(&span, 0, sizeof span);
    int expected = schema_check_text(compiled, value.start, value.length, &full);
    int got = schema_check_span(compiled, value, &span);
    bool quick = sc_quick_valid(compiled, value);
    if (got != expected || (quick && expected != SCHEMA_VALID))
        fail_msg("%s: full %d, span %d, quick %d", text, expected, got, quick);
    if (expected == SCHEMA_INVALID &&
        (strcmp(full.pointer, span.pointer) != 0 || strcmp(full.keyword, span.keyword) != 0 ||
         strcmp(full.expected, span.expected) != 0))
        fail_msg("%s: failures differ: %s %s %s / %s %s %s", text, full.pointer, full.keyword,
                 full.expected, span.pointer, span.keyword, span.expected);
    counts->compared++;
    counts->quick += quick;
}

static json_schema *compile(const char *text)
{
    json_schema *compiled = NULL;
    char error[256];
    schema_options options = {false};
    if (schema_compile(text, strlen(text), &options, &compiled, error, sizeof error) != 0)
        return NULL;
    return compiled;
}

static void run_file(const char *path, tally *counts)
{
    json_t *groups = json_load_file(path, JSON_ALLOW_NUL, NULL);
    if (!groups) /* bignum.json: integers beyond 64 bits */
        groups = json_load_file(path, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, NULL);
    assert_non_null(groups);
    size_t i, j;
    json_t *group, *test;
    json_array_foreach(groups, i, group)
    {
        char *schema = json_dumps(json_object_get(group, "schema"), JSON_ENCODE_ANY);
        json_schema *compiled = compile(schema);
        free(schema);
        json_array_foreach(json_object_get(group, "tests"), j, test)
        {
            /* Compact, then with white space wherever JSON allows it. */
            for (size_t flags = JSON_COMPACT; compiled; flags = JSON_INDENT(1)) {
                char *data = json_dumps(json_object_get(test, "data"), JSON_ENCODE_ANY | flags);
                assert_non_null(data);
                compare(compiled, data, counts);
                free(data);
                if (flags != JSON_COMPACT)
                    break;
            }
        }
        schema_free(compiled);
    }
    json_decref(groups);
}

static char suite_dir[900];

static void suite_cases_agree(void **state)
{
    (void)state;
    static const char *const directories[] = {"", "/optional"};
    tally counts = {0, 0};
    for (size_t d = 0; d < 2; d++) {
        char directory[1000];
        snprintf(directory, sizeof directory, "%s%s", suite_dir, directories[d]);
        struct dirent **names;
        int count = scandir(directory, &names, NULL, alphasort);
        assert_true(count > 0);
        for (int i = 0; i < count; i++) {
            size_t length = strlen(names[i]->d_name);
            if (length > 5 && strcmp(names[i]->d_name + length - 5, ".json") == 0) {
                char path[1300];
                snprintf(path, sizeof path, "%s/%s", directory, names[i]->d_name);
                run_file(path, &counts);
            }
            free(names[i]);
        }
        free(names);
    }
    print_message("suite: %zu values compared, %zu passed by the quick path alone\n",
                  counts.compared, counts.quick);
    assert_true(counts.compared > 2000);
    assert_true(counts.quick > 300);
}

/* The bench's schema and arguments (bench_plugin.c, bench/schema). */
static const char bench_schema[] =
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"city\",\"days\"],"
    "\"properties\":{\"city\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":100},"
    "\"days\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":14},"
    "\"units\":{\"enum\":[\"metric\",\"imperial\"]},\"hourly\":{\"type\":\"boolean\"},"
    "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"maxItems\":8}}}";

/* Pieces the mutations pick from: names, and values of every kind and edge. */
static const char *const names[] = {"city",  "days",       "units", "hourly", "tags",    "cit",
                                    "cityy", "c\\u0069ty", "",      "other",  "days\\n", "tag"};
static const char *const values[] = {
    "\"Oslo\"",
    "\"\"",
    "\"\\u00e9\"",
    "\"é\"",
    "\"日本\"",
    "\"a\\\"b\"",
    "\"metric\"",
    "\"imperial\"",
    "\"metri\"",
    "\"metricc\"",
    "\"m\\u0065tric\"",
    "3",
    "-0",
    "0",
    "1",
    "14",
    "15",
    "1.0",
    "14.0",
    "14.5",
    "1e1",
    "1E1",
    "1e-1",
    "-1",
    "3e0",
    "0.5",
    "99999999999999999999",
    "123456789012345678",
    "1234567890123456789",
    "-9223372036854775808",
    "1e400",
    "true",
    "false",
    "null",
    "[]",
    "[\"rain\"]",
    "[\"rain\",\"wind\",\"a\",\"b\",\"c\",\"d\",\"e\",\"f\"]",
    "[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\"]",
    "[1]",
    "[\"x\",null]",
    "{}",
    "{\"a\":1}",
    ("\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaaaaaaaaaaaa\""), /* 101 characters: over maxLength */
};
static const char *const spaces[] = {"", "", "", " ", "\n", " \t\r\n "};

static uint64_t next_random(uint64_t *seed)
{
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    return *seed;
}

#define PICK(list, seed) list[next_random(seed) % (sizeof list / sizeof list[0])]

/* The bench's members, mostly, in order or not, with now and then an odd name or value. */
static void make_instance(uint64_t *seed, char *out, size_t size)
{
    static const char *const usual[] = {"\"Oslo\"", "3", "\"metric\"", "false",
                                        "[\"rain\",\"wind\"]"};
    size_t order[] = {0, 1, 2, 3, 4}, used = 0;
    for (size_t i = 4; i > 0 && next_random(seed) % 2; i--) {
        size_t j = next_random(seed) % (i + 1), kept = order[i];
        order[i] = order[j];
        order[j] = kept;
    }
    used += (size_t)snprintf(out + used, size - used, "{%s", PICK(spaces, seed));
    bool first = true;
    for (size_t i = 0; i < 6; i++) {
        if (i < 5 ? next_random(seed) % 6 == 0 : next_random(seed) % 4 != 0)
            continue; /* a member left out; an odd one added now and then */
        size_t which = i < 5 ? order[i] : next_random(seed) % 5;
        bool odd_name = i == 5 || next_random(seed) % 12 == 0;
        bool odd_value = next_random(seed) % 5 == 0;
        used += (size_t)snprintf(out + used, size - used, "%s\"%s\"%s:%s%s%s", first ? "" : ",",
                                 odd_name ? PICK(names, seed) : names[which], PICK(spaces, seed),
                                 PICK(spaces, seed), odd_value ? PICK(values, seed) : usual[which],
                                 PICK(spaces, seed));
        first = false;
    }
    snprintf(out + used, size - used, "}");
}

static void mutated_instances_agree(void **state)
{
    (void)state;
    json_schema *compiled = compile(bench_schema);
    assert_non_null(compiled);
    tally counts = {0, 0};
    uint64_t seed = 0x9E3779B97F4A7C15u;
    char text[4096];
    for (int i = 0; i < 4000; i++) {
        make_instance(&seed, text, sizeof text);
        compare(compiled, text, &counts);
        /* And a byte of it changed, which may leave it valid JSON or not. */
        size_t length = strlen(text);
        text[next_random(&seed) % length] = "{}[]\",:0 a\\e-."[next_random(&seed) % 14];
        compare(compiled, text, &counts);
    }
    print_message("bench schema: %zu values compared, %zu passed by the quick path alone\n",
                  counts.compared, counts.quick);
    assert_true(counts.quick > 100);
    assert_true(counts.compared - counts.quick > 1000);
    schema_free(compiled);
}

/* Cases each way: whether the quick path decides alone, and the verdict. */
/* A subschema the check cannot reach but that is compiled all the same (a $dynamicAnchor's),
 * of more properties than a table holds: no table, no hang at compile, and the schema still
 * checked on its text. */
static void unreachable_large_subschema(void **state)
{
    (void)state;
    char schema[8192];
    size_t used = (size_t)snprintf(
        schema, sizeof schema,
        "{\"type\":\"object\",\"$defs\":{\"big\":{\"$dynamicAnchor\":\"x\",\"properties\":{");
    for (int i = 0; i < 200; i++)
        used +=
            (size_t)snprintf(schema + used, sizeof schema - used, "%s\"p%d\":{}", i ? "," : "", i);
    snprintf(schema + used, sizeof schema - used, "}}},\"properties\":{\"a\":{}}}");
    json_schema *compiled = compile(schema);
    assert_non_null(compiled);
    js_span value = {"{\"a\":1}", 7};
    assert_true(sc_quick_valid(compiled, value));
    schema_free(compiled);
}

static void edges(void **state)
{
    (void)state;
    static const struct {
        const char *schema, *instance;
        bool quick, valid;
    } cases[] = {
        /* clang-format off */
        {bench_schema, "{\"city\":\"Oslo\",\"days\":3,\"units\":\"metric\",\"hourly\":false,"
                       "\"tags\":[\"rain\",\"wind\"]}", true, true},
        {bench_schema, "{ \"tags\" : [ ] , \"days\" : 14 , \"city\" : \"日本\" }", true, true},
        {bench_schema, "{\"city\":\"Oslo\",\"days\":15}", false, false},
        {bench_schema, "{\"city\":\"Oslo\",\"days\":3.0}", false, true},
        {bench_schema, "{\"city\":\"Oslo\",\"days\":1e1}", false, true},
        {bench_schema, "{\"city\":\"Oslo\",\"days\":3,\"days\":4}", false, true},
        {bench_schema, "{\"city\":\"Oslo\",\"d\\u0061ys\":3}", false, true},
        {bench_schema, "{\"city\":\"Oslo\"}", false, false},
        {bench_schema, "{\"city\":\"Oslo\",\"days\":3,\"unit\":\"metric\"}", false, false},
        {bench_schema, "{\"city\":\"Oslo\",\"days\":3,\"units\":\"imperial\"}", true, true},
        {bench_schema, "{\"city\":\"Oslo\",\"days\":3,\"units\":\"imperia\"}", false, false},
        {"{\"type\":\"integer\"}", "-0", true, true},
        {"{\"type\":\"integer\"}", "1.0", false, true},
        {"{\"type\":\"integer\"}", "1.5", false, false},
        {"{\"type\":\"integer\",\"maximum\":1e19}", "9999999999999999999", false, true},
        {"{\"type\":\"integer\",\"minimum\":-5}", "-5", true, true},
        {"{\"type\":\"integer\",\"exclusiveMinimum\":-5}", "-5", false, false},
        {"{\"type\":\"number\"}", "1e400", true, true},
        {"{\"maxLength\":2}", "\"éé\"", true, true},
        {"{\"maxLength\":1}", "\"éé\"", false, false},
        {"{\"enum\":[\"a\\\"b\"]}", "\"a\\\"b\"", false, true},
        {"{\"enum\":[\"ab\",true]}", "true", false, true},
        {"{\"enum\":[\"ab\"]}", "\"ab\"", true, true},
        {"{\"properties\":{\"a\\\"b\":{\"type\":\"integer\"}}}", "{\"a\\\"b\":\"x\"}", false, false},
        {"{\"additionalProperties\":false,\"properties\":{\"abcdefghij\":{}}}",
         "{\"abcdefghij\":[1,{\"x\":\"}\"}]}", true, true},
        {"{\"additionalProperties\":false,\"properties\":{\"abcdefghij\":{}}}",
         "{\"abcdefghiX\":1}", false, false},
        {"{\"items\":false}", "[]", true, true},
        {"{\"items\":false}", "[1]", false, false},
        {"true", "\"a\\\\\"", true, true},
        {"false", "1", false, false},
        /* clang-format on */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_schema *compiled = compile(cases[i].schema);
        assert_non_null(compiled);
        js_span value;
        assert_int_equal(
            js_validate(cases[i].instance, strlen(cases[i].instance), 64, &value, NULL), 0);
        schema_failure failure;
        if (sc_quick_valid(compiled, value) != cases[i].quick ||
            (schema_check_span(compiled, value, &failure) == SCHEMA_VALID) != cases[i].valid)
            fail_msg("case %zu: %s against %s", i, cases[i].instance, cases[i].schema);
        tally counts = {0, 0};
        compare(compiled, cases[i].instance, &counts);
        schema_free(compiled);
    }
}

int main(void)
{
    const char *data = getenv("RPCD_TEST_DATA");
    if (!data) {
        fprintf(stderr, "RPCD_TEST_DATA is not set\n");
        return 1;
    }
    snprintf(suite_dir, sizeof suite_dir, "%s/json-schema-test-suite/tests/draft2020-12", data);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(edges),
        cmocka_unit_test(unreachable_large_subschema),
        cmocka_unit_test(suite_cases_agree),
        cmocka_unit_test(mutated_instances_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
