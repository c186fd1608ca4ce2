/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for buffer: appends and growth, formatted appends, the JSON string escaper (checked
 * byte for byte and, for valid UTF-8, by parsing the output back with jansson), clear and free.
 */
#include "base/buffer.h"

#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define ASSERT_CONTENT(buf, literal)                                                               \
    do {                                                                                           \
        assert_int_equal((buf)->length, sizeof(literal) - 1);                                      \
        assert_memory_equal((buf)->data, (literal), sizeof(literal) - 1);                          \
    } while (0)

static void test_empty_buffer(void **state)
{
    (void)state;
    buffer buf = BUFFER_INIT;
    assert_null(buf.data);
    assert_int_equal(buf.length, 0);
    assert_int_equal(buf_append(&buf, NULL, 0), 0);
    assert_int_equal(buf_append(&buf, "x", 0), 0);
    assert_int_equal(buf_append_string(&buf, ""), 0);
    assert_int_equal(buf.length, 0);
    buf_clear(&buf);
    buf_free(&buf);
    buf_free(&buf); /* twice is harmless */
    assert_null(buf.data);
}

static void test_appends(void **state)
{
    (void)state;
    buffer buf = BUFFER_INIT;
    assert_int_equal(buf_append(&buf, "abc", 3), 0);
    assert_int_equal(buf_append_char(&buf, '-'), 0);
    assert_int_equal(buf_append_string(&buf, "def"), 0);
    assert_int_equal(buf_append(&buf, "\0z", 2), 0);
    assert_int_equal(buf_append_char(&buf, '\0'), 0);
    ASSERT_CONTENT(&buf, "abc-def\0z\0");
    assert_true(buf.capacity >= buf.length);
    buf_free(&buf);
}

static void test_growth(void **state)
{
    (void)state;
    buffer buf = BUFFER_INIT;
    enum { TOTAL = 1000000 };
    /* Appends of varied sizes across many reallocations; the content must survive each. */
    size_t step = 1;
    while (buf.length < TOTAL) {
        char chunk[1024];
        size_t n = step % sizeof chunk + 1;
        for (size_t i = 0; i < n; i++)
            chunk[i] = (char)('a' + (buf.length + i) % 26);
        assert_int_equal(buf_append(&buf, chunk, n), 0);
        assert_true(buf.capacity >= buf.length);
        step = step * 7 + 3;
    }
    for (size_t i = 0; i < buf.length; i++)
        if (buf.data[i] != (char)('a' + i % 26))
            fail_msg("byte %zu is %c", i, buf.data[i]);

    buffer big = BUFFER_INIT;
    char *block = malloc(3 * 1024 * 1024);
    assert_non_null(block);
    memset(block, 'q', 3 * 1024 * 1024);
    assert_int_equal(buf_append(&big, block, 3 * 1024 * 1024), 0);
    assert_int_equal(big.length, 3 * 1024 * 1024);
    assert_memory_equal(big.data, block, 3 * 1024 * 1024);
    free(block);
    buf_free(&big);
    buf_free(&buf);
}

static void test_reserve(void **state)
{
    (void)state;
    buffer buf = BUFFER_INIT;
    assert_int_equal(buf_reserve(&buf, 1000), 0);
    assert_true(buf.capacity >= 1000);
    assert_int_equal(buf.length, 0);
    size_t capacity = buf.capacity;
    char *data = buf.data;
    /* What was reserved is there: appends within it do not move the memory. */
    for (int i = 0; i < 1000; i++)
        assert_int_equal(buf_append_char(&buf, 'x'), 0);
    assert_int_equal(buf.capacity, capacity);
    assert_ptr_equal(buf.data, data);
    /* An impossible size fails and keeps the content. */
    assert_int_equal(buf_reserve(&buf, SIZE_MAX), -1);
    assert_int_equal(buf_reserve(&buf, SIZE_MAX / 2), -1);
    assert_int_equal(buf.length, 1000);
    assert_int_equal(buf_append(&buf, "y", SIZE_MAX - 10), -1);
    assert_int_equal(buf.length, 1000);
    assert_int_equal(buf.data[999], 'x');
    buf_free(&buf);
}

static void test_printf(void **state)
{
    (void)state;
    buffer buf = BUFFER_INIT;
    assert_int_equal(buf_printf(&buf, "%d-%s", 42, "x"), 0);
    ASSERT_CONTENT(&buf, "42-x");
    assert_int_equal(buf_printf(&buf, "%s", ""), 0);
    ASSERT_CONTENT(&buf, "42-x");
    assert_int_equal(buf_printf(&buf, ",%lld,%zu,%.3f", -9223372036854775807LL - 1,
                                (size_t)18446744073709551615ULL, 1.5),
                     0);
    ASSERT_CONTENT(&buf, "42-x,-9223372036854775808,18446744073709551615,1.500");

    /* Longer than any first allocation, appended after existing content. */
    char long_text[5000];
    memset(long_text, 'L', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    size_t before = buf.length;
    assert_int_equal(buf_printf(&buf, "<%s>", long_text), 0);
    assert_int_equal(buf.length, before + 5001);
    assert_int_equal(buf.data[before], '<');
    assert_int_equal(buf.data[before + 1], 'L');
    assert_int_equal(buf.data[before + 4999], 'L');
    assert_int_equal(buf.data[before + 5000], '>');

    /* Exactly at a capacity boundary: the terminating NUL must not be counted. */
    buffer exact = BUFFER_INIT;
    assert_int_equal(buf_append(&exact, long_text, 255), 0);
    assert_int_equal(buf_printf(&exact, "%c", 'z'), 0);
    assert_int_equal(exact.length, 256);
    assert_int_equal(exact.data[255], 'z');
    assert_int_equal(buf_append_char(&exact, '!'), 0);
    assert_int_equal(exact.data[256], '!');
    buf_free(&exact);
    buf_free(&buf);
}

/* Escapes length bytes of text into a fresh buffer and compares with the expected literal. */
static void check_escape(const char *text, size_t length, const char *expected,
                         size_t expected_length)
{
    buffer buf = BUFFER_INIT;
    assert_int_equal(buf_append_json_string(&buf, text, length), 0);
    if (buf.length != expected_length || memcmp(buf.data, expected, expected_length) != 0)
        fail_msg("escaped to '%.*s', expected '%.*s'", (int)buf.length, buf.data,
                 (int)expected_length, expected);
    buf_free(&buf);
}

#define CHECK_ESCAPE(text, expected)                                                               \
    check_escape((text), sizeof(text) - 1, (expected), sizeof(expected) - 1)

static void test_json_string_escaping(void **state)
{
    (void)state;
    CHECK_ESCAPE("", "\"\"");
    CHECK_ESCAPE("plain", "\"plain\"");
    CHECK_ESCAPE("a\"b", "\"a\\\"b\"");
    CHECK_ESCAPE("a\\b", "\"a\\\\b\"");
    CHECK_ESCAPE("/", "\"/\"");
    CHECK_ESCAPE("\n\r\t\b\f", "\"\\n\\r\\t\\b\\f\"");
    CHECK_ESCAPE("\0", "\"\\u0000\"");
    CHECK_ESCAPE("\x01\x1F\x0B", "\"\\u0001\\u001f\\u000b\"");
    CHECK_ESCAPE("\x7F", "\"\x7F\"");
    CHECK_ESCAPE(" ~", "\" ~\"");
    CHECK_ESCAPE("\"\"\\\\", "\"\\\"\\\"\\\\\\\\\"");
    CHECK_ESCAPE("x\n", "\"x\\n\"");
    CHECK_ESCAPE("\ny", "\"\\ny\"");
}

static void test_json_string_escaping_all_controls(void **state)
{
    (void)state;
    char text[32];
    for (int c = 0; c < 32; c++)
        text[c] = (char)c;
    buffer buf = BUFFER_INIT;
    assert_int_equal(buf_append_json_string(&buf, text, sizeof text), 0);
    /* No raw control byte may reach the output. */
    for (size_t i = 0; i < buf.length; i++)
        if ((unsigned char)buf.data[i] < 0x20)
            fail_msg("raw control byte 0x%02x at %zu", (unsigned char)buf.data[i], i);
    json_error_t error;
    json_t *parsed = json_loadb(buf.data, buf.length, JSON_DECODE_ANY | JSON_ALLOW_NUL, &error);
    assert_non_null(parsed);
    assert_int_equal(json_string_length(parsed), sizeof text);
    assert_memory_equal(json_string_value(parsed), text, sizeof text);
    json_decref(parsed);
    buf_free(&buf);
}

static void test_json_string_utf8(void **state)
{
    (void)state;
    /* Valid multibyte sequences are kept as they are. */
    CHECK_ESCAPE("\xC3\xA9", "\"\xC3\xA9\"");
    CHECK_ESCAPE("\xE2\x82\xAC\xF0\x9F\x98\x80", "\"\xE2\x82\xAC\xF0\x9F\x98\x80\"");
    CHECK_ESCAPE("\xF4\x8F\xBF\xBF", "\"\xF4\x8F\xBF\xBF\"");
    CHECK_ESCAPE("a\xC3\xA9\"\xE2\x82\xAC\n", "\"a\xC3\xA9\\\"\xE2\x82\xAC\\n\"");
    /* Invalid bytes become U+FFFD, one replacement per byte that cannot start a sequence. */
    CHECK_ESCAPE("\xFF", "\"\xEF\xBF\xBD\"");
    CHECK_ESCAPE("a\xFF"
                 "b",
                 "\"a\xEF\xBF\xBD"
                 "b\"");
    CHECK_ESCAPE("\x80", "\"\xEF\xBF\xBD\"");
    CHECK_ESCAPE("\xC3", "\"\xEF\xBF\xBD\"");
    CHECK_ESCAPE("\xC3z", "\"\xEF\xBF\xBDz\"");
    CHECK_ESCAPE("\xC0\x80", "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");
    CHECK_ESCAPE("\xED\xA0\x80", "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
    CHECK_ESCAPE("\xF4\x90\x80\x80", "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
    CHECK_ESCAPE("\xE2\x82\"", "\"\xEF\xBF\xBD\xEF\xBF\xBD\\\"\"");
    CHECK_ESCAPE("\xC3\xA9\xFF\xC3\xA9", "\"\xC3\xA9\xEF\xBF\xBD\xC3\xA9\"");
    /* A sequence cut by the length is invalid even if the next byte in memory completes it. */
    check_escape("\xC3\xA9", 1, "\"\xEF\xBF\xBD\"", 5);
}

static void test_json_string_output_is_valid_json(void **state)
{
    (void)state;
    /* Whatever the input, the output must be one valid JSON string. */
    unsigned int seed = 12345;
    for (int round = 0; round < 2000; round++) {
        char text[64];
        size_t length = (size_t)(round % 64);
        for (size_t i = 0; i < length; i++) {
            seed = seed * 1103515245u + 12345u;
            text[i] = (char)(seed >> 16);
        }
        buffer buf = BUFFER_INIT;
        assert_int_equal(buf_append_json_string(&buf, text, length), 0);
        json_error_t error;
        json_t *parsed = json_loadb(buf.data, buf.length, JSON_DECODE_ANY | JSON_ALLOW_NUL, &error);
        if (!parsed)
            fail_msg("round %d: output not JSON: %s", round, error.text);
        assert_true(json_is_string(parsed));
        json_decref(parsed);
        buf_free(&buf);
    }
}

static void test_json_string_round_trip(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        size_t length;
    } cases[] = {
#define CASE(literal) {literal, sizeof(literal) - 1}
        CASE(""),
        CASE("hello, world"),
        CASE("quote \" backslash \\ slash /"),
        CASE("line\nfeed\rreturn\ttab\bback\fform"),
        CASE("nul \0 inside"),
        CASE("\x01\x02\x03\x1E\x1F\x7F"),
        CASE("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF \xEF\xBF\xBF"),
        CASE("\xE4\xB8\xAD\xE6\x96\x87 \xD0\xA0\xD1\x83\xD1\x81"),
#undef CASE
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buffer buf = BUFFER_INIT;
        assert_int_equal(buf_append_string(&buf, "prefix "), 0);
        assert_int_equal(buf_append_json_string(&buf, cases[i].text, cases[i].length), 0);
        json_error_t error;
        json_t *parsed =
            json_loadb(buf.data + 7, buf.length - 7, JSON_DECODE_ANY | JSON_ALLOW_NUL, &error);
        if (!parsed)
            fail_msg("case %zu: %s", i, error.text);
        assert_true(json_is_string(parsed));
        assert_int_equal(json_string_length(parsed), cases[i].length);
        assert_memory_equal(json_string_value(parsed), cases[i].text, cases[i].length);
        json_decref(parsed);
        buf_free(&buf);
    }

    /* A long text with something to escape everywhere, across many growths. */
    size_t length = 100000;
    char *text = malloc(length);
    assert_non_null(text);
    static const char pattern[] = "ab\"\\\n\x01\xC3\xA9\xE2\x82\xAC";
    for (size_t i = 0; i < length; i++)
        text[i] = pattern[i % (sizeof pattern - 1)];
    length -= length % (sizeof pattern - 1); /* whole sequences only */
    buffer buf = BUFFER_INIT;
    assert_int_equal(buf_append_json_string(&buf, text, length), 0);
    json_error_t error;
    json_t *parsed = json_loadb(buf.data, buf.length, JSON_DECODE_ANY, &error);
    assert_non_null(parsed);
    assert_int_equal(json_string_length(parsed), length);
    assert_memory_equal(json_string_value(parsed), text, length);
    json_decref(parsed);
    buf_free(&buf);
    free(text);
}

static void test_clear_and_free(void **state)
{
    (void)state;
    buffer buf = BUFFER_INIT;
    assert_int_equal(buf_append_string(&buf, "some content"), 0);
    size_t capacity = buf.capacity;
    char *data = buf.data;
    buf_clear(&buf);
    assert_int_equal(buf.length, 0);
    assert_int_equal(buf.capacity, capacity); /* memory kept for the next line */
    assert_ptr_equal(buf.data, data);
    assert_int_equal(buf_append_string(&buf, "new"), 0);
    ASSERT_CONTENT(&buf, "new");
    assert_ptr_equal(buf.data, data);

    buf_free(&buf);
    assert_null(buf.data);
    assert_int_equal(buf.length, 0);
    assert_int_equal(buf.capacity, 0);
    /* Usable again after free. */
    assert_int_equal(buf_append_string(&buf, "again"), 0);
    ASSERT_CONTENT(&buf, "again");
    assert_int_equal(buf_printf(&buf, "%d", 7), 0);
    ASSERT_CONTENT(&buf, "again7");
    buf_free(&buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_buffer),
        cmocka_unit_test(test_appends),
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_reserve),
        cmocka_unit_test(test_printf),
        cmocka_unit_test(test_json_string_escaping),
        cmocka_unit_test(test_json_string_escaping_all_controls),
        cmocka_unit_test(test_json_string_utf8),
        cmocka_unit_test(test_json_string_output_is_valid_json),
        cmocka_unit_test(test_json_string_round_trip),
        cmocka_unit_test(test_clear_and_free),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
