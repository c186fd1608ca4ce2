/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of schema/: what a failure says (pointer, keyword, expectation), what compiling
 * refuses and why (remote references, bad keywords, bounds, patterns), formats asserted only
 * when asked, and the bounds that keep a hostile value from making a check slow or deep.
 */
#include "schema/schema.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static json_schema *compile_ok(const char *text, bool assert_format)
{
    json_schema *compiled = NULL;
    char error[256] = "";
    schema_options options = {assert_format};
    if (schema_compile(text, strlen(text), &options, &compiled, error, sizeof error) != 0)
        fail_msg("%s: %s", text, error);
    return compiled;
}

static int check(const json_schema *compiled, const char *instance, schema_failure *failure)
{
    return schema_check_text(compiled, instance, strlen(instance), failure);
}

/* Each failure names the value's pointer, the keyword, and what the keyword expects. */
static void test_failures_say_where_and_why(void **state)
{
    (void)state;
    json_schema *compiled = compile_ok(
        "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"city\"],"
        "\"properties\":{\"city\":{\"type\":\"string\",\"minLength\":2},\"days\":{\"type\":"
        "\"integer\",\"maximum\":14},\"tags\":{\"type\":\"array\",\"items\":{\"enum\":[\"a\","
        "\"b\"]}},\"a/b~c\":{\"const\":1}}}",
        false);
    static const struct {
        const char *instance, *pointer, *keyword, *expected;
    } cases[] = {
        {"{}", "", "required", "a member \"city\""},
        {"{\"city\":\"Oslo\",\"extra\":1}", "/extra", "additionalProperties",
         "no such member here"},
        {"{\"city\":7}", "/city", "type", "\"string\" (the value is a number)"},
        {"{\"city\":\"\xc3\xa9\"}", "/city", "minLength", "at least 2 characters"},
        {"{\"city\":\"Oslo\",\"days\":15}", "/days", "maximum", "a number <= 14"},
        {"{\"city\":\"Oslo\",\"days\":1.5}", "/days", "type",
         "\"integer\" (the value is a number)"},
        {"{\"city\":\"Oslo\",\"tags\":[\"a\",\"c\"]}", "/tags/1", "enum", "one of [\"a\",\"b\"]"},
        {"{\"city\":\"Oslo\",\"a/b~c\":2}", "/a~1b~0c", "const", "1"},
        {"[]", "", "type", "\"object\" (the value is an array)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        schema_failure failure;
        assert_int_equal(check(compiled, cases[i].instance, &failure), SCHEMA_INVALID);
        assert_string_equal(failure.pointer, cases[i].pointer);
        assert_string_equal(failure.keyword, cases[i].keyword);
        assert_string_equal(failure.expected, cases[i].expected);
    }
    assert_int_equal(check(compiled, "{\"city\":\"Oslo\",\"days\":3.0,\"tags\":[\"b\"]}", NULL),
                     SCHEMA_VALID);
    schema_free(compiled);
}

/* What compiling refuses, each with a reason that says so. */
static void test_refusals_say_why(void **state)
{
    (void)state;
    static const struct {
        const char *text, *reason;
    } cases[] = {
        {"{\"$ref\":\"https://example.org/other.json\"}", "remote references are not fetched"},
        {"{\"$ref\":\"https://json-schema.org/draft/2020-12/schema\"}", "not inside the schema"},
        {"{\"$ref\":\"#/$defs/missing\"}", "names no subschema"},
        {"{\"$ref\":\"#nowhere\"}", "names no subschema"},
        {"{\"$ref\":\"#%a\"}", "has a bad fragment"},
        {"{\"$ref\":\"#%00\"}", "has a bad fragment"},
        {"{\"pattern\":\"(\\n\"}", "the pattern \"(?\" does not compile"},
        {"{\"type\":\"text\"}", "\"type\" is not a type name"},
        {"{\"type\":[\"string\",\"string\"]}", "\"type\" is not a type name"},
        {"{\"minLength\":-1}", "\"minLength\" is not a non-negative integer"},
        {"{\"maxItems\":1.5}", "\"maxItems\" is not a non-negative integer"},
        {"{\"multipleOf\":0}", "\"multipleOf\" is not a number above 0"},
        {"{\"minimum\":\"1\"}", "\"minimum\" is not a number"},
        {"{\"pattern\":\"(\"}", "does not compile"},
        {"{\"patternProperties\":{\"[\":{}}}", "does not compile"},
        {"{\"required\":[1]}", "\"required\" is not an array of strings"},
        {"{\"allOf\":[]}", "\"allOf\" is not a non-empty array of schemas"},
        {"{\"items\":1}", "\"items\" holds a value that is not a schema"},
        {"{\"properties\":[]}", "\"properties\" is not an object of schemas"},
        {"{\"enum\":1}", "\"enum\" is not an array"},
        {"{\"uniqueItems\":1}", "\"uniqueItems\" is not a boolean"},
        {"{\"dependentRequired\":{\"a\":[1]}}", "\"dependentRequired\" is not an array"},
        {"{\"$id\":1}", "\"$id\" is not a string"},
        {"{\"format\":1}", "\"format\" is not a string"},
        {"[]", "neither an object nor a boolean"},
        {"{", "not JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_schema *compiled = NULL;
        char error[256] = "";
        assert_int_equal(schema_compile(cases[i].text, strlen(cases[i].text), NULL, &compiled,
                                        error, sizeof error),
                         -1);
        assert_null(compiled);
        if (!strstr(error, cases[i].reason))
            print_error("%s: %s\n", cases[i].text, error);
        assert_non_null(strstr(error, cases[i].reason));
        assert_null(strchr(error, '\n')); /* one line, whatever the schema holds */
    }
}

/* A schema over a bound is refused: nesting, size, subschemas. */
static void test_bounds_of_a_schema(void **state)
{
    (void)state;
    char error[256];
    json_schema *compiled = NULL;
    size_t depth = SCHEMA_MAX_DEPTH + 1, length = 0;
    char *deep = malloc(depth * 12 + 16);
    assert_non_null(deep);
    for (size_t i = 0; i < depth; i++)
        length += (size_t)sprintf(deep + length, "{\"not\":");
    length += (size_t)sprintf(deep + length, "true");
    for (size_t i = 0; i < depth; i++)
        deep[length++] = '}';
    assert_int_equal(schema_compile(deep, length, NULL, &compiled, error, sizeof error), -1);
    assert_non_null(strstr(error, "nested deeper than"));
    free(deep);
    assert_int_equal(
        schema_compile("{}", SCHEMA_MAX_BYTES + 1, NULL, &compiled, error, sizeof error), -1);
    assert_non_null(strstr(error, "longer than"));
    /* More subschemas than SCHEMA_MAX_NODES, each small. */
    size_t count = SCHEMA_MAX_NODES + 1;
    char *wide = malloc(count * 4 + 32);
    assert_non_null(wide);
    length = (size_t)sprintf(wide, "{\"prefixItems\":[");
    for (size_t i = 0; i < count; i++)
        length += (size_t)sprintf(wide + length, "%s{}", i ? "," : "");
    length += (size_t)sprintf(wide + length, "]}");
    assert_int_equal(schema_compile(wide, length, NULL, &compiled, error, sizeof error), -1);
    assert_non_null(strstr(error, "subschemas"));
    free(wide);
}

/* An integer past a double's 53 bits is checked as the integer it is: a 64-bit id that is odd
 * is not a multiple of 2, though the nearest double is. */
static void test_integers_beyond_a_double(void **state)
{
    (void)state;
    json_schema *compiled = compile_ok("{\"type\":\"integer\",\"multipleOf\":2}", false);
    schema_failure failure;
    assert_int_equal(check(compiled, "9007199254740994", NULL), SCHEMA_VALID);
    assert_int_equal(check(compiled, "9007199254740993", &failure), SCHEMA_INVALID);
    assert_string_equal(failure.keyword, "multipleOf");
    assert_int_equal(check(compiled, "-9223372036854775807", &failure), SCHEMA_INVALID);
    assert_int_equal(check(compiled, "-9223372036854775808", NULL), SCHEMA_VALID);
    schema_free(compiled);
}

/* format is an annotation unless asserted; asserted, the formats rpcd knows are checked. */
static void test_format_annotation_or_assertion(void **state)
{
    (void)state;
    static const struct {
        const char *format, *good, *bad;
    } cases[] = {
        {"date-time", "\"2026-12-05T17:00:00Z\"", "\"2026-12-05 25:00:00Z\""},
        /* Offsets: hh:mm with a colon, hours to 23; a leap second at 23:59 UTC, offset taken. */
        {"date-time", "\"2026-12-05T17:00:00.5+05:30\"", "\"2026-12-05T17:00:00+05-30\""},
        {"date-time", "\"2026-12-05t17:00:00-23:59\"", "\"2026-12-05T17:00:00+24:00\""},
        {"time", "\"18:59:60-05:00\"", "\"23:59:60+01:00\""},
        {"date", "\"2024-02-29\"", "\"2023-02-29\""},
        /* Days from 1 to the month's last, months from 1 to 12. */
        {"date", "\"2024-01-01\"", "\"2024-01-00\""},
        {"date", "\"2024-12-31\"", "\"2024-04-31\""},
        {"date", "\"2000-02-29\"", "\"2024-00-10\""},
        {"date", "\"1900-02-28\"", "\"2024-13-01\""},
        {"date", "\"2024-11-30\"", "\"1900-02-29\""},
        {"time", "\"23:59:60Z\"", "\"12:00:60Z\""},
        {"email", "\"a.b@example.org\"", "\"a..b@example.org\""},
        {"ipv4", "\"192.0.2.1\"", "\"192.0.2.256\""},
        {"ipv6", "\"2001:db8::1\"", "\"2001:db8:::1\""},
        {"uri", "\"https://example.org/a?b#c\"", "\"//example.org\""},
        {"uuid", "\"2eb8aa08-aa98-11ea-b4aa-73b441d16380\"",
         "\"2eb8aa08aaa98-11ea-b4aa-73b441d16380\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "{\"format\":\"%s\"}", cases[i].format);
        json_schema *annotation = compile_ok(text, false);
        json_schema *assertion = compile_ok(text, true);
        schema_failure failure;
        assert_int_equal(check(annotation, cases[i].bad, NULL), SCHEMA_VALID);
        assert_int_equal(check(assertion, cases[i].good, NULL), SCHEMA_VALID);
        assert_int_equal(check(assertion, cases[i].bad, &failure), SCHEMA_INVALID);
        assert_string_equal(failure.keyword, "format");
        assert_non_null(strstr(failure.expected, cases[i].format));
        schema_free(annotation);
        schema_free(assertion);
    }
}

/* Catastrophic backtracking stops at PCRE2's match limit: the value fails, soon. */
static void test_pattern_backtracking_is_bounded(void **state)
{
    (void)state;
    json_schema *compiled = compile_ok("{\"pattern\":\"^(a+)+$\"}", false);
    char text[80];
    memset(text, 'a', sizeof text);
    text[0] = '"';
    text[sizeof text - 3] = 'b';
    text[sizeof text - 2] = '"';
    text[sizeof text - 1] = '\0';
    schema_failure failure;
    assert_int_equal(check(compiled, text, &failure), SCHEMA_INVALID);
    assert_string_equal(failure.keyword, "pattern");
    assert_non_null(strstr(failure.expected, "gave up"));
    assert_int_equal(check(compiled, "\"aaaa\"", NULL), SCHEMA_VALID);
    schema_free(compiled);
    /* ECMA-262's $: the end of the string, not before a final line break as in Perl. */
    compiled = compile_ok("{\"pattern\":\"^a$\"}", false);
    assert_int_equal(check(compiled, "\"a\"", NULL), SCHEMA_VALID);
    assert_int_equal(check(compiled, "\"a\\n\"", NULL), SCHEMA_INVALID);
    schema_free(compiled);
    /* ECMA-262's \uXXXX is a character, which PCRE2 reads only with PCRE2_ALT_BSUX. */
    compiled = compile_ok("{\"pattern\":\"^\\\\u0041$\"}", false);
    assert_int_equal(check(compiled, "\"A\"", NULL), SCHEMA_VALID);
    assert_int_equal(check(compiled, "\"u0041\"", NULL), SCHEMA_INVALID);
    schema_free(compiled);
}

/* uniqueItems on a long array: hashed, not compared pair by pair; 1 and 1.0 are equal. */
static void test_unique_items_of_a_long_array(void **state)
{
    (void)state;
    json_schema *compiled = compile_ok("{\"uniqueItems\":true}", false);
    size_t count = 20000;
    char *text = malloc(count * 8 + 16);
    assert_non_null(text);
    size_t length = (size_t)sprintf(text, "[");
    for (size_t i = 0; i < count; i++)
        length += (size_t)sprintf(text + length, "%s%zu", i ? "," : "", i);
    schema_failure failure;
    sprintf(text + length, "]");
    assert_int_equal(check(compiled, text, NULL), SCHEMA_VALID);
    sprintf(text + length, ",5.0]");
    assert_int_equal(check(compiled, text, &failure), SCHEMA_INVALID);
    assert_string_equal(failure.keyword, "uniqueItems");
    assert_string_equal(failure.expected, "items all different (5 and 20000 are equal)");
    free(text);
    schema_free(compiled);
}

/* Params as the dispatcher holds them (a scanned span): the quick path on the text says valid
 * only for values the full check passes, and leaves every failure to it. */
static void test_quick_path_on_spans(void **state)
{
    (void)state;
    json_schema *compiled = compile_ok(
        "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"city\"],"
        "\"properties\":{\"city\":{\"type\":\"string\",\"maxLength\":4},\"days\":{\"type\":"
        "\"integer\",\"maximum\":14},\"units\":{\"enum\":[\"metric\",\"imperial\"]},"
        "\"tags\":{\"type\":\"array\",\"maxItems\":1,\"items\":{\"type\":\"string\"}}}}",
        false);
    static const struct {
        const char *text;
        int verdict;
        const char *keyword;
    } cases[] = {
        {"{\"city\":\"Oslo\",\"days\":3,\"units\":\"metric\",\"tags\":[\"a\"]}", SCHEMA_VALID, ""},
        {"{\"city\":\"Os\\u006co\",\"days\":3.0}", SCHEMA_VALID, ""},
        {"{\"city\":\"Oslo\",\"units\":\"zetric\"}", SCHEMA_INVALID, "enum"},
        {"{\"days\":3}", SCHEMA_INVALID, "required"},
        {"{\"city\":\"Oslo\",\"days\":1.5}", SCHEMA_INVALID, "type"},
        {"{\"city\":\"Oslo\",\"days\":15}", SCHEMA_INVALID, "maximum"},
        {"{\"city\":\"Bergen\"}", SCHEMA_INVALID, "maxLength"},
        {"{\"city\":\"Oslo\",\"x\":1}", SCHEMA_INVALID, "additionalProperties"},
        {"{\"city\":\"Oslo\",\"tags\":[\"a\",\"b\"]}", SCHEMA_INVALID, "maxItems"},
        {"{\"city\":\"Oslo\",\"tags\":[1]}", SCHEMA_INVALID, "type"},
        {"{\"city\":\"Oslo\",\"city\":7}", SCHEMA_INVALID, "type"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        js_span span;
        assert_int_equal(js_validate(cases[i].text, strlen(cases[i].text), 64, &span, NULL), 0);
        schema_failure failure;
        int verdict = schema_check_span(compiled, span, &failure);
        if (verdict != cases[i].verdict)
            print_error("%s\n", cases[i].text);
        assert_int_equal(verdict, cases[i].verdict);
        if (verdict == SCHEMA_INVALID)
            assert_string_equal(failure.keyword, cases[i].keyword);
    }
    schema_free(compiled);
}

/* multipleOf with a decimal divisor: 0.3 is a multiple of 0.1, though 0.3 / 0.1 is not 3. */
static void test_multiple_of_decimals(void **state)
{
    (void)state;
    json_schema *compiled = compile_ok("{\"multipleOf\":0.1}", false);
    assert_int_equal(check(compiled, "0.3", NULL), SCHEMA_VALID);
    assert_int_equal(check(compiled, "0.35", NULL), SCHEMA_INVALID);
    schema_free(compiled);
    compiled = compile_ok("{\"multipleOf\":3}", false);
    assert_int_equal(check(compiled, "-9", NULL), SCHEMA_VALID);
    assert_int_equal(check(compiled, "10", NULL), SCHEMA_INVALID);
    schema_free(compiled);
}

/* A reference loop that never moves into the value fails at a nesting bound, not the stack. */
static void test_reference_loop_is_bounded(void **state)
{
    (void)state;
    json_schema *compiled =
        compile_ok("{\"$defs\":{\"a\":{\"$ref\":\"#/$defs/b\"},\"b\":{\"$ref\":\"#/$defs/a\"}},"
                   "\"anyOf\":[{\"$ref\":\"#/$defs/a\"}]}",
                   false);
    schema_failure failure;
    assert_int_equal(check(compiled, "1", &failure), SCHEMA_INVALID);
    assert_string_equal(failure.keyword, "$ref");
    assert_non_null(strstr(failure.expected, "levels deep"));
    schema_free(compiled);
}

/* Integers beyond 64 bits are read as doubles; values nested deeper than jansson reads fail. */
static void test_values_jansson_cannot_hold(void **state)
{
    (void)state;
    json_schema *compiled = compile_ok("{\"type\":\"integer\",\"minimum\":1e19}", false);
    assert_int_equal(check(compiled, "123456789012345678901234", NULL), SCHEMA_VALID);
    assert_int_equal(check(compiled, "12345", NULL), SCHEMA_INVALID);
    schema_free(compiled);
    compiled = compile_ok("{}", false);
    size_t depth = 3000;
    char *deep = malloc(depth * 2 + 1);
    assert_non_null(deep);
    memset(deep, '[', depth);
    memset(deep + depth, ']', depth);
    schema_failure failure;
    assert_int_equal(schema_check_text(compiled, deep, depth * 2, &failure), SCHEMA_INVALID);
    assert_string_equal(failure.keyword, "depth");
    /* The bound is jansson's own, 2048 levels: a value that deep is checked, one more is not. */
    memset(deep, '[', 2048);
    memset(deep + 2048, ']', 2048);
    assert_int_equal(schema_check_text(compiled, deep, 2048 * 2, NULL), SCHEMA_VALID);
    memset(deep, '[', 2049);
    memset(deep + 2049, ']', 2049);
    assert_int_equal(schema_check_text(compiled, deep, 2049 * 2, &failure), SCHEMA_INVALID);
    assert_string_equal(failure.keyword, "depth");
    free(deep);
    schema_free(compiled);
}

/* A pointer longer than its room is cut, and says so. */
static void test_long_pointer_is_cut(void **state)
{
    (void)state;
    json_schema *compiled =
        compile_ok("{\"additionalProperties\":{\"additionalProperties\":false}}", false);
    char text[700];
    char key[300];
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    snprintf(text, sizeof text, "{\"%s\":{\"%s\":1}}", key, key);
    schema_failure failure;
    assert_int_equal(check(compiled, text, &failure), SCHEMA_INVALID);
    assert_int_equal(strlen(failure.pointer), sizeof failure.pointer - 1);
    assert_string_equal(failure.pointer + sizeof failure.pointer - 4, "...");
    schema_free(compiled);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_failures_say_where_and_why),
        cmocka_unit_test(test_refusals_say_why),
        cmocka_unit_test(test_bounds_of_a_schema),
        cmocka_unit_test(test_integers_beyond_a_double),
        cmocka_unit_test(test_format_annotation_or_assertion),
        cmocka_unit_test(test_pattern_backtracking_is_bounded),
        cmocka_unit_test(test_unique_items_of_a_long_array),
        cmocka_unit_test(test_quick_path_on_spans),
        cmocka_unit_test(test_multiple_of_decimals),
        cmocka_unit_test(test_reference_loop_is_bounded),
        cmocka_unit_test(test_values_jansson_cannot_hold),
        cmocka_unit_test(test_long_pointer_is_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
