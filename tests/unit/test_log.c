/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for log.c's lines built for signal handlers: the level decides, strings and integers
 * go in as given, what does not fit is cut and the line still ends with its newline; and for the
 * JSON format, whose every line is one valid JSON object whatever the text held.
 */
#include "base/log.h"

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

/* Runs build with the log on a pipe and returns what it wrote (NUL-terminated). */
static size_t logged(void (*build)(void), char *text, size_t capacity)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    log_set_fd(fds[1]);
    build();
    log_set_fd(STDERR_FILENO);
    close(fds[1]);
    size_t length = 0;
    ssize_t n;
    while (length < capacity - 1 && (n = read(fds[0], text + length, capacity - 1 - length)) > 0)
        length += (size_t)n;
    close(fds[0]);
    text[length] = '\0';
    return length;
}

static void build_numbers(void)
{
    log_line line;
    log_line_start(&line, LOG_WARNING);
    log_line_add(&line, "a ");
    log_line_addn(&line, "bcd", 2);
    log_line_add_int(&line, 0);
    log_line_add(&line, " ");
    log_line_add_int(&line, -42);
    log_line_add(&line, " ");
    log_line_add_int(&line, LLONG_MIN);
    log_line_end(&line);
}

static void build_line_breaks(void)
{
    log_message(LOG_WARNING, "one\rtwo\nthree");
}

/* A carriage return, as a newline, would break the one-line promise: both become spaces. */
static void test_line_breaks_become_spaces(void **state)
{
    (void)state;
    log_set_level(LOG_INFO);
    char text[1024];
    logged(build_line_breaks, text, sizeof text);
    assert_string_equal(text, "rpcd: warning: one two three\n");
}

static void test_strings_and_integers(void **state)
{
    (void)state;
    log_set_level(LOG_INFO);
    char text[1024];
    logged(build_numbers, text, sizeof text);
    assert_string_equal(text, "rpcd: warning: a bc0 -42 -9223372036854775808\n");
}

static void build_debug(void)
{
    log_line line;
    log_line_start(&line, LOG_DEBUG);
    log_line_add(&line, "not logged");
    log_line_end(&line);
    log_signal(LOG_DEBUG, 15, "not logged either");
    log_signal(LOG_INFO, 15, "logged");
}

static void test_level_decides(void **state)
{
    (void)state;
    log_set_level(LOG_INFO);
    char text[1024];
    logged(build_debug, text, sizeof text);
    assert_string_equal(text, "rpcd: info: signal 15: logged\n");
}

static void build_long(void)
{
    char long_text[1000];
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    log_line line;
    log_line_start(&line, LOG_ERROR);
    log_line_add(&line, long_text);
    log_line_add(&line, "lost");
    log_line_end(&line);
}

static void test_long_line_is_cut(void **state)
{
    (void)state;
    log_set_level(LOG_ERROR);
    char text[2048];
    size_t length = logged(build_long, text, sizeof text);
    assert_int_equal(length, sizeof((log_line *)NULL)->text);
    assert_memory_equal(text, "rpcd: error: xxx", 16);
    assert_int_equal(text[length - 2], 'x');
    assert_int_equal(text[length - 1], '\n');
}

static void build_text(void)
{
    log_text_prefixed(LOG_WARNING, "plug", "a\nb\r\tc\x1b[31m%s\x7f\\n \xc3\xa9");
    log_text_prefixed(LOG_DEBUG, "plug", "not logged");
    log_text_prefixed(LOG_ERROR, "plug", NULL);
}

/*
 * A text is taken as it is (no format), on one line: control bytes are escaped, a backslash
 * already in the text and UTF-8 are left alone; NULL writes nothing.
 */
static void test_text_is_one_escaped_line(void **state)
{
    (void)state;
    log_set_level(LOG_INFO);
    char text[1024];
    logged(build_text, text, sizeof text);
    assert_string_equal(text, "rpcd: warning: plug: a\\nb\\r\\tc\\x1b[31m%s\\x7f\\n \xc3\xa9\n");
}

static void build_long_text(void)
{
    char long_text[3000];
    memset(long_text, '\n', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    log_text_prefixed(LOG_ERROR, "plug", long_text);
}

/* A long text is cut at the length of every log line, and still ends the line. */
static void test_long_text_is_cut(void **state)
{
    (void)state;
    log_set_level(LOG_ERROR);
    char text[8192];
    size_t length = logged(build_long_text, text, sizeof text);
    assert_true(length < 2048);
    assert_memory_equal(text, "rpcd: error: plug: \\n\\n", 23);
    assert_memory_equal(text + length - 4, "...\n", 4);
    assert_null(memchr(text, '\n', length - 1));
}

/* ---- log_format = json ------------------------------------------------------------------- */

/* Each line of text as a JSON object with time, level and message (and plugin when given). */
static json_t *only_json_line(const char *text)
{
    const char *newline = strchr(text, '\n');
    assert_non_null(newline);
    assert_string_equal(newline + 1, ""); /* one line */
    json_error_t error;
    json_t *line = json_loadb(text, (size_t)(newline - text), 0, &error);
    if (!line)
        print_error("not JSON (%s): %s\n", error.text, text);
    assert_non_null(line);
    const char *time = json_string_value(json_object_get(line, "time"));
    assert_non_null(time);
    /* 2026-01-02T03:04:05.678Z */
    assert_int_equal(strlen(time), 24);
    assert_true(time[4] == '-' && time[7] == '-' && time[10] == 'T' && time[13] == ':' &&
                time[16] == ':' && time[19] == '.' && time[23] == 'Z');
    assert_true(strncmp(time, "20", 2) == 0);
    return line;
}

static void build_json_plugin_text(void)
{
    log_set_format(LOG_FORMAT_JSON);
    log_text_prefixed(LOG_WARNING, "weather",
                      "quote \" back \\ tab \t nl \n bell \a "
                      "\xc3\xa9 bad \xff \xed\xa0\x80 end");
    log_set_format(LOG_FORMAT_TEXT);
}

static void test_json_text_is_escaped(void **state)
{
    (void)state;
    log_set_level(LOG_INFO);
    char text[4096];
    logged(build_json_plugin_text, text, sizeof text);
    json_t *line = only_json_line(text);
    assert_string_equal(json_string_value(json_object_get(line, "level")), "warning");
    assert_string_equal(json_string_value(json_object_get(line, "plugin")), "weather");
    /* Valid UTF-8 kept, each byte of what is not UTF-8 replaced. */
    assert_string_equal(json_string_value(json_object_get(line, "message")),
                        "quote \" back \\ tab \t nl \n bell \a \xc3\xa9 bad \xef\xbf\xbd "
                        "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd end");
    json_decref(line);
}

static void build_json_utf8_bounds(void)
{
    log_set_format(LOG_FORMAT_JSON);
    /* The first and last of each length, kept; then the forms just past them, refused. */
    log_text_prefixed(LOG_WARNING, "weather",
                      "\xc2\x80 \xdf\xbf \xe0\xa0\x80 \xed\x9f\xbf \xef\xbf\xbf "
                      "\xf0\x90\x80\x80 \xf4\x8f\xbf\xbf | \xc1\xbf \xe0\x9f\xbf "
                      "\xf0\x8f\xbf\xbf \xf4\x90\x80\x80 \xf5\x80");
    log_set_format(LOG_FORMAT_TEXT);
}

/*
 * UTF-8 at the edges of each sequence length: U+0080, U+07FF, U+0800, U+D7FF, U+FFFF, U+10000
 * and U+10FFFF pass; an overlong form, a code point past U+10FFFF or a lead byte no sequence
 * has become one U+FFFD a byte.
 */
static void test_json_utf8_bounds(void **state)
{
    (void)state;
    log_set_level(LOG_INFO);
    char text[4096];
    logged(build_json_utf8_bounds, text, sizeof text);
    json_t *line = only_json_line(text);
#define BAD "\xef\xbf\xbd"
    assert_string_equal(json_string_value(json_object_get(line, "message")),
                        "\xc2\x80 \xdf\xbf \xe0\xa0\x80 \xed\x9f\xbf \xef\xbf\xbf "
                        "\xf0\x90\x80\x80 \xf4\x8f\xbf\xbf | " BAD BAD " " BAD BAD BAD
                        " " BAD BAD BAD BAD " " BAD BAD BAD BAD " " BAD BAD);
#undef BAD
    json_decref(line);
}

static void build_json_formatted(void)
{
    log_set_format(LOG_FORMAT_JSON);
    log_message(LOG_ERROR, "%d calls, \"%s\"", 3, "x");
    log_set_format(LOG_FORMAT_TEXT);
}

static void test_json_message(void **state)
{
    (void)state;
    log_set_level(LOG_INFO);
    char text[4096];
    logged(build_json_formatted, text, sizeof text);
    json_t *line = only_json_line(text);
    assert_string_equal(json_string_value(json_object_get(line, "level")), "error");
    assert_null(json_object_get(line, "plugin"));
    assert_string_equal(json_string_value(json_object_get(line, "message")), "3 calls, \"x\"");
    json_decref(line);
}

/* Escapes that fill the line: it is cut between escapes, never inside one. */
static void build_json_long(void)
{
    char many[3000];
    memset(many, '\x01', sizeof many - 1);
    many[sizeof many - 1] = '\0';
    log_set_format(LOG_FORMAT_JSON);
    log_text_prefixed(LOG_INFO, "p", many);
    log_line line;
    log_line_start(&line, LOG_ERROR);
    log_line_add(&line, many);
    log_line_end(&line);
    log_set_format(LOG_FORMAT_TEXT);
}

static void test_json_long_lines_stay_json(void **state)
{
    (void)state;
    log_set_level(LOG_INFO);
    char text[16384];
    logged(build_json_long, text, sizeof text);
    char *second = strchr(text, '\n') + 1;
    char first[8192];
    memcpy(first, text, (size_t)(second - text));
    first[second - text] = '\0';
    const char *each[2] = {first, second};
    for (int i = 0; i < 2; i++) {
        json_t *line = only_json_line(each[i]);
        const char *message = json_string_value(json_object_get(line, "message"));
        assert_true(strlen(message) > 50);
        for (const char *at = message; *at; at++)
            assert_int_equal(*at, '\x01');
        json_decref(line);
    }
}

static void test_json_format_names(void **state)
{
    (void)state;
    int format = -1;
    assert_int_equal(log_format_parse("json", &format), 0);
    assert_int_equal(format, LOG_FORMAT_JSON);
    assert_int_equal(log_format_parse("text", &format), 0);
    assert_int_equal(format, LOG_FORMAT_TEXT);
    assert_int_equal(log_format_parse("JSON", &format), -1);
    assert_int_equal(log_format_parse("", &format), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strings_and_integers),
        cmocka_unit_test(test_line_breaks_become_spaces),
        cmocka_unit_test(test_level_decides),
        cmocka_unit_test(test_long_line_is_cut),
        cmocka_unit_test(test_text_is_one_escaped_line),
        cmocka_unit_test(test_long_text_is_cut),
        cmocka_unit_test(test_json_text_is_escaped),
        cmocka_unit_test(test_json_utf8_bounds),
        cmocka_unit_test(test_json_message),
        cmocka_unit_test(test_json_long_lines_stay_json),
        cmocka_unit_test(test_json_format_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
