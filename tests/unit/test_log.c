/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for log.c's lines built for signal handlers: the level decides, strings and integers
 * go in as given, what does not fit is cut and the line still ends with its newline.
 */
#include "log.h"

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strings_and_integers),
        cmocka_unit_test(test_level_decides),
        cmocka_unit_test(test_long_line_is_cut),
        cmocka_unit_test(test_text_is_one_escaped_line),
        cmocka_unit_test(test_long_text_is_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
