/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for json_string.c: decoding validated strings, their decoded length, and
 * comparing them with bytes.
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

/* Decodes a string literal and checks the bytes. */
static void check_decode(const char *literal, size_t literal_length, const char *expected,
                         size_t expected_length)
{
    char out[256];
    size_t out_length = 9999;
    js_span span = {literal, literal_length};
    assert_int_equal(js_validate(literal, literal_length, 512, NULL, NULL), 0);
    assert_int_equal(js_string_decode(span, out, sizeof out, &out_length), 0);
    assert_int_equal(out_length, expected_length);
    assert_memory_equal(out, expected, expected_length);
}

#define CHECK_DECODE(literal, expected)                                                            \
    check_decode((literal), sizeof(literal) - 1, (expected), sizeof(expected) - 1)

static void test_string_decode(void **state)
{
    (void)state;
    CHECK_DECODE("\"\"", "");
    CHECK_DECODE("\"plain text\"", "plain text");
    CHECK_DECODE("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\/\b\f\n\r\t");
    CHECK_DECODE("\"a\\u0000b\"", "a\0b");
    CHECK_DECODE("\"\\u0041\\u00e9\\u20AC\"", "A\xC3\xA9\xE2\x82\xAC");
    CHECK_DECODE("\"\\u007f\\u0080\\u07FF\\u0800\\uFFFF\"",
                 "\x7F\xC2\x80\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF");
    CHECK_DECODE("\"\\uD834\\uDD1E\"", "\xF0\x9D\x84\x9E");
    CHECK_DECODE("\"\\ud83d\\ude00!\"", "\xF0\x9F\x98\x80!");
    CHECK_DECODE("\"\\uDBFF\\uDFFF\"", "\xF4\x8F\xBF\xBF");
    CHECK_DECODE("\"\\uD800\\uDC00\"", "\xF0\x90\x80\x80");
    CHECK_DECODE("\"\xC3\xA9\\n\xF0\x9F\x98\x80\"", "\xC3\xA9\n\xF0\x9F\x98\x80");
}

static void test_string_decode_lone_surrogates(void **state)
{
    (void)state;
    CHECK_DECODE("\"\\uD800\"", "\xEF\xBF\xBD");
    CHECK_DECODE("\"\\uDC00\"", "\xEF\xBF\xBD");
    CHECK_DECODE("\"\\uDFFFx\"", "\xEF\xBF\xBDx");
    CHECK_DECODE("\"\\uD800\\u0041\"", "\xEF\xBF\xBD"
                                       "A");
    CHECK_DECODE("\"\\uD800\\uD800\"", "\xEF\xBF\xBD\xEF\xBF\xBD");
    CHECK_DECODE("\"\\uD800x\\uDC00\"", "\xEF\xBF\xBDx\xEF\xBF\xBD");
    CHECK_DECODE("\"\\uDC00\\uD800\"", "\xEF\xBF\xBD\xEF\xBF\xBD");
    CHECK_DECODE("\"\\uD800\\n\"", "\xEF\xBF\xBD\n");
    CHECK_DECODE("\"a\\uD83D\"", "a\xEF\xBF\xBD");
}

static void test_string_decode_capacity(void **state)
{
    (void)state;
    static const char literal[] = "\"abc\\n\\uD834\\uDD1Exyz\"";
    js_span span = SPAN(literal);
    char out[16];
    size_t needed = 0;
    assert_int_equal(js_string_decode(span, out, sizeof out, &needed), 0);
    assert_int_equal(needed, 11);
    assert_int_equal(js_string_decoded_length(span), 11);
    for (size_t capacity = 0; capacity < 11; capacity++) {
        /* Too small: no length to misuse, and not one byte written past the room given. */
        char guarded[11 + 8];
        memset(guarded, 'G', sizeof guarded);
        size_t length = 9999;
        assert_int_equal(js_string_decode(span, guarded, capacity, &length), JS_ERR_NO_MEMORY);
        assert_int_equal(length, 0);
        for (size_t i = capacity; i < sizeof guarded; i++)
            assert_int_equal(guarded[i], 'G');
    }
    size_t length = 0;
    assert_int_equal(js_string_decode(span, out, 11, &length), 0);
    assert_int_equal(length, 11);
    assert_memory_equal(out, "abc\n\xF0\x9D\x84\x9Exyz", 11);

    /* Capacity 0 must not touch out at all. */
    length = 9999;
    assert_int_equal(js_string_decode(SPAN("\"x\""), NULL, 0, &length), JS_ERR_NO_MEMORY);
    assert_int_equal(length, 0);
    assert_int_equal(js_string_decode(SPAN("\"\""), NULL, 0, &length), 0);
    assert_int_equal(length, 0);
}

/* The room js_string_decoded_length asks for is exactly what decoding then fills. */
static void test_string_decoded_length(void **state)
{
    (void)state;
    static const char *const literals[] = {
        "\"\"",
        "\"plain\"",
        "\"\\u0000\"",
        "\"\\ud800\"",
        "\"\\uD834\\uDD1E\"",
        "\"\\u00e9\\u20ac\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
        "\"\xC3\xA9\xE2\x82\xAC\xF0\x9D\x84\x9E\"",
    };
    static const size_t lengths[] = {0, 5, 1, 3, 4, 2 + 3 + 8, 2 + 3 + 4};
    for (size_t i = 0; i < sizeof literals / sizeof literals[0]; i++) {
        js_span span = {literals[i], strlen(literals[i])};
        assert_int_equal(js_validate(span.start, span.length, 8, NULL, NULL), 0);
        size_t needed = js_string_decoded_length(span);
        assert_int_equal(needed, lengths[i]);
        char out[32];
        size_t length = 9999;
        assert_int_equal(js_string_decode(span, out, needed, &length), 0);
        assert_int_equal(length, needed);
    }
}

static void test_string_equals(void **state)
{
    (void)state;
    assert_true(js_string_equals(SPAN("\"method\""), "method", 6));
    assert_true(js_string_equals(SPAN("\"m\\u0065thod\""), "method", 6));
    assert_true(
        js_string_equals(SPAN("\"\\u006d\\u0065\\u0074\\u0068\\u006f\\u0064\""), "method", 6));
    assert_true(js_string_equals(SPAN("\"\""), "", 0));
    assert_true(js_string_equals(SPAN("\"a\\u0000\""), "a\0", 2));
    assert_true(js_string_equals(SPAN("\"\\uD834\\uDD1E\""), "\xF0\x9D\x84\x9E", 4));
    assert_false(js_string_equals(SPAN("\"method\""), "metho", 5));
    assert_false(js_string_equals(SPAN("\"method\""), "methodx", 7));
    assert_false(js_string_equals(SPAN("\"Method\""), "method", 6));
    assert_false(js_string_equals(SPAN("\"m\\u0065thod\\u0000\""), "method", 6));
    assert_false(js_string_equals(SPAN("\"m\\u0065tho\""), "method", 6));
    assert_false(js_string_equals(SPAN("\"\""), "a", 1));
    /* Exactly 64 bytes after decoding, escapes included, still compares. */
    static const char escaped64[] =
        "\"\\u0061aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"";
    char sixty_four[64];
    memset(sixty_four, 'a', sizeof sixty_four);
    assert_true(js_string_equals(SPAN(escaped64), sixty_four, 64));
    assert_false(js_string_equals(SPAN(escaped64), sixty_four, 63));
    /* Longer than 64 bytes without escapes is plain bytes and still compares. */
    static const char plain70[] =
        "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"";
    char seventy[70];
    memset(seventy, 'a', sizeof seventy);
    assert_true(js_string_equals(SPAN(plain70), seventy, 70));
    assert_false(js_string_equals(SPAN(plain70), seventy, 64));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_string_decode),
        cmocka_unit_test(test_string_decode_lone_surrogates),
        cmocka_unit_test(test_string_decode_capacity),
        cmocka_unit_test(test_string_decoded_length),
        cmocka_unit_test(test_string_equals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
