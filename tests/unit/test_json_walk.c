/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for json_walk.c: iterating over validated containers, the kind of a value, and
 * dropping line breaks.
 */
#include "json/json_scan.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Literal texts may hold NUL bytes, so their length comes from sizeof, not strlen. */
#define SPAN(literal) ((js_span){(literal), sizeof(literal) - 1})

static void test_iter_object(void **state)
{
    (void)state;
    static const char text[] = " { \"a\" : 1 , \"b\\n\":[1, {\"x\":2}] ,\"c\":\"s,}\" , \"d\":{},"
                               "\"e\":-1.5e3,\"f\":true,\"g\":null} ";
    js_span object;
    assert_int_equal(js_validate(text, sizeof text - 1, 512, &object, NULL), 0);
    static const struct {
        const char *key;
        const char *value;
    } expected[] = {
        {"\"a\"", "1"},       {"\"b\\n\"", "[1, {\"x\":2}]"},
        {"\"c\"", "\"s,}\""}, {"\"d\"", "{}"},
        {"\"e\"", "-1.5e3"},  {"\"f\"", "true"},
        {"\"g\"", "null"},
    };
    js_iter iter;
    js_iter_init(&iter, object);
    js_span key, value;
    size_t count = 0;
    while (js_iter_next(&iter, &key, &value) == 1) {
        assert_true(count < sizeof expected / sizeof expected[0]);
        assert_int_equal(key.length, strlen(expected[count].key));
        assert_memory_equal(key.start, expected[count].key, key.length);
        assert_int_equal(value.length, strlen(expected[count].value));
        assert_memory_equal(value.start, expected[count].value, value.length);
        count++;
    }
    assert_int_equal(count, sizeof expected / sizeof expected[0]);
    assert_int_equal(js_iter_next(&iter, &key, &value), 0); /* stays at the end */
}

static void test_iter_array(void **state)
{
    (void)state;
    static const char text[] = "[ 1,\"two\" ,[3,[4]],{\"five\":5},false ,\n-6 ]";
    static const char *const expected[] = {"1",     "\"two\"", "[3,[4]]", "{\"five\":5}",
                                           "false", "-6"};
    js_span array;
    assert_int_equal(js_validate(text, sizeof text - 1, 512, &array, NULL), 0);
    js_iter iter;
    js_iter_init(&iter, array);
    js_span value;
    size_t count = 0;
    while (js_iter_next(&iter, NULL, &value) == 1) {
        assert_true(count < sizeof expected / sizeof expected[0]);
        assert_int_equal(value.length, strlen(expected[count]));
        assert_memory_equal(value.start, expected[count], value.length);
        count++;
    }
    assert_int_equal(count, sizeof expected / sizeof expected[0]);
}

static void test_iter_empty_and_nested(void **state)
{
    (void)state;
    static const char *const empties[] = {"[]", "{}", "[ ]", "{\n}", "[\t\r\n ]"};
    for (size_t i = 0; i < sizeof empties / sizeof empties[0]; i++) {
        js_span container;
        assert_int_equal(js_validate(empties[i], strlen(empties[i]), 512, &container, NULL), 0);
        js_iter iter;
        js_span key, value;
        js_iter_init(&iter, container);
        assert_int_equal(js_iter_next(&iter, &key, &value), 0);
    }

    static const char text[] = "{\"outer\":{\"inner\":[[],{},[{\"k\":\"]\"}]]}}";
    js_span root, key, value;
    assert_int_equal(js_validate(text, sizeof text - 1, 512, &root, NULL), 0);
    js_iter outer;
    js_iter_init(&outer, root);
    assert_int_equal(js_iter_next(&outer, &key, &value), 1);
    assert_true(js_string_equals(key, "outer", 5));
    assert_int_equal(js_kind_of(value), JS_OBJECT);
    assert_int_equal(js_iter_next(&outer, &key, &value), 0);

    js_iter_init(&outer, value);
    assert_int_equal(js_iter_next(&outer, &key, &value), 1);
    assert_true(js_string_equals(key, "inner", 5));
    assert_int_equal(value.length, strlen("[[],{},[{\"k\":\"]\"}]]"));

    js_iter inner;
    js_iter_init(&inner, value);
    static const char *const elements[] = {"[]", "{}", "[{\"k\":\"]\"}]"};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(js_iter_next(&inner, NULL, &value), 1);
        assert_int_equal(value.length, strlen(elements[i]));
        assert_memory_equal(value.start, elements[i], value.length);
    }
    assert_int_equal(js_iter_next(&inner, NULL, &value), 0);
}

static void test_kind_of(void **state)
{
    (void)state;
    assert_int_equal(js_kind_of(SPAN("{}")), JS_OBJECT);
    assert_int_equal(js_kind_of(SPAN("[1]")), JS_ARRAY);
    assert_int_equal(js_kind_of(SPAN("\"s\"")), JS_STRING);
    assert_int_equal(js_kind_of(SPAN("0")), JS_NUMBER);
    assert_int_equal(js_kind_of(SPAN("-1")), JS_NUMBER);
    assert_int_equal(js_kind_of(SPAN("9e9")), JS_NUMBER);
    assert_int_equal(js_kind_of(SPAN("true")), JS_TRUE);
    assert_int_equal(js_kind_of(SPAN("false")), JS_FALSE);
    assert_int_equal(js_kind_of(SPAN("null")), JS_NULL);
}

/* ---- js_drop_line_breaks ---------------------------------------------------------------- */

/* Drops the line breaks of a copy of literal (which may hold NUL bytes) and compares. */
#define ASSERT_DROPPED(literal, expected)                                                          \
    assert_dropped((literal), sizeof(literal) - 1, (expected), sizeof(expected) - 1)

static void assert_dropped(const char *text, size_t length, const char *expected,
                           size_t expected_length)
{
    char *copy = malloc(length + 1);
    assert_non_null(copy);
    memcpy(copy, text, length);
    copy[length] = '#'; /* past the end: never touched */
    size_t kept = js_drop_line_breaks(copy, length);
    assert_int_equal(kept, expected_length);
    assert_memory_equal(copy, expected, expected_length);
    assert_int_equal(copy[length], '#');
    free(copy);
}

/* Only raw CR and LF bytes go, wherever they are; every other byte stays, in order. */
static void test_drop_line_breaks(void **state)
{
    (void)state;
    ASSERT_DROPPED("", "");
    ASSERT_DROPPED("{\"a\":1}", "{\"a\":1}");
    ASSERT_DROPPED("\n", "");
    ASSERT_DROPPED("\r", "");
    ASSERT_DROPPED("\r\n\r\n", "");
    /* Pretty-printed JSON, with LF, a lone CR, and CRLF line ends. */
    ASSERT_DROPPED("{\n  \"a\": 1,\n  \"b\": [\n    2\n  ]\n}\n",
                   "{  \"a\": 1,  \"b\": [    2  ]}");
    ASSERT_DROPPED("[1,\r2]", "[1,2]");
    ASSERT_DROPPED("{\r\n\"a\":\r\n1\r\n}", "{\"a\":1}");
    /* A break first or last, and one between two others. */
    ASSERT_DROPPED("\n[1]", "[1]");
    ASSERT_DROPPED("[1]\r", "[1]");
    ASSERT_DROPPED("[\n\r\n1]", "[1]");
    /* Escaped line breaks are text inside strings: kept as they are. */
    ASSERT_DROPPED("\"a\\nb\\r\\nc\"", "\"a\\nb\\r\\nc\"");
    ASSERT_DROPPED("[\"\\n\",\n\"\\r\"]", "[\"\\n\",\"\\r\"]");
    /* Tabs, spaces, NUL and other control bytes are not line breaks. */
    ASSERT_DROPPED("\t \v\f\0\n\x85", "\t \v\f\0\x85");
}

/* Looks key up in literal (validated first) and returns the count; the value in *value. */
static size_t object_get(const char *literal, const char *key, js_span *value)
{
    js_span object;
    assert_int_equal(js_validate(literal, strlen(literal), 512, &object, NULL), 0);
    return js_object_get(object, key, strlen(key), value);
}

static void assert_span(js_span span, const char *expected)
{
    assert_int_equal(span.length, strlen(expected));
    assert_memory_equal(span.start, expected, span.length);
}

static void test_object_get(void **state)
{
    (void)state;
    js_span value;
    assert_int_equal(object_get(" { \"a\" : 1 , \"b\" : [2, {\"a\":3}] } ", "b", &value), 1);
    assert_span(value, "[2, {\"a\":3}]");
    assert_int_equal(object_get("{\"a\":1,\"b\":\"x\"}", "a", &value), 1);
    assert_span(value, "1");
    /* Keys are compared decoded: escapes and all. */
    assert_int_equal(object_get("{\"m\\u0065thod\":\"x\"}", "method", &value), 1);
    assert_span(value, "\"x\"");
    assert_int_equal(js_object_get(SPAN("{\"a\\u0000b\":true}"), "a\0b", 3, &value), 1);
    assert_span(value, "true");
}

static void test_object_get_absent(void **state)
{
    (void)state;
    js_span value = {"untouched", 9};
    /* Members of nested objects, values that look like the key and prefixes are not members. */
    assert_int_equal(object_get("{\"b\":{\"a\":1},\"c\":\"a\",\"ab\":2,\"A\":3}", "a", &value), 0);
    assert_int_equal(object_get("{}", "a", &value), 0);
    assert_int_equal(object_get("{\"a\":1}", "", &value), 0);
    assert_span(value, "untouched");
    assert_int_equal(object_get("{\"\":1}", "", &value), 1);
    assert_span(value, "1");
    /* Not an object: no members at all. */
    value = (js_span){"untouched", 9};
    assert_int_equal(js_object_get(SPAN("[\"a\",1]"), "a", 1, &value), 0);
    assert_int_equal(js_object_get(SPAN("\"a\""), "a", 1, &value), 0);
    assert_int_equal(js_object_get((js_span){"", 0}, "a", 1, &value), 0);
    assert_span(value, "untouched");
}

/* A key given more than once is counted each time, however it is spelled; the last one is kept. */
static void test_object_get_duplicates(void **state)
{
    (void)state;
    js_span value;
    assert_int_equal(object_get("{\"a\":1,\"b\":2,\"a\":3}", "a", &value), 2);
    assert_span(value, "3");
    assert_int_equal(object_get("{\"a\":1,\"\\u0061\":{},\"\\u0061\":[4]}", "a", &value), 3);
    assert_span(value, "[4]");
    assert_int_equal(object_get("{\"a\":1,\"b\":2,\"a\":3}", "b", &value), 1);
    assert_span(value, "2");
}

/* Past the 64 bytes js_string_equals decodes, a key matches only as it is written. */
static void test_object_get_long_keys(void **state)
{
    (void)state;
    char key[71];
    memset(key, 'k', 70);
    key[70] = '\0';
    char text[256];
    js_span value;
    snprintf(text, sizeof text, "{\"x\":0,\"%s\":1}", key);
    assert_int_equal(object_get(text, key, &value), 1);
    assert_span(value, "1");
    snprintf(text, sizeof text, "{\"\\u006b%s\":1}", key + 1);
    assert_int_equal(object_get(text, key, &value), 0);
}

/* Keys of the same length that differ are told apart, escaped or not. */
static void test_object_get_decoded_compares_keys(void **state)
{
    (void)state;
    static const char text[] = "{\"abc\":1,\"\\u0078yz\":2,\"abd\":3}";
    js_span object = {text, sizeof text - 1}, value;
    assert_int_equal(js_object_get_decoded(object, "xyz", 3, &value), 1);
    assert_int_equal(value.length, 1);
    assert_memory_equal(value.start, "2", 1);
    assert_int_equal(js_object_get_decoded(object, "abd", 3, &value), 1);
    assert_memory_equal(value.start, "3", 1);
    assert_int_equal(js_object_get_decoded(object, "abe", 3, &value), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iter_object),
        cmocka_unit_test(test_iter_array),
        cmocka_unit_test(test_iter_empty_and_nested),
        cmocka_unit_test(test_kind_of),
        cmocka_unit_test(test_drop_line_breaks),
        cmocka_unit_test(test_object_get),
        cmocka_unit_test(test_object_get_absent),
        cmocka_unit_test(test_object_get_duplicates),
        cmocka_unit_test(test_object_get_long_keys),
        cmocka_unit_test(test_object_get_decoded_compares_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
