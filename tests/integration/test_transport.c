/* SPDX-License-Identifier: MIT */
/*
 * Newline-delimited framing as a client sees it through the real binary: flushing while idle,
 * pipelining, CRLF, a last line without "\n", blank lines, byte-exact ids, bad bytes, the line
 * and depth limits, and the split between protocol on stdout and logs on stderr.
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#define LINE_TIMEOUT_MS test_time_ms(10000)

/* Starts rpcd on config (the build config when NULL), with one extra argument when not NULL. */
/*
 * Writes a config of the bundled plugins with extra [rpcd] settings; returns its path (new).
 * It has one worker: these tests are about framing, and read responses in request order, which
 * only workers = 1 promises.
 */
static char *write_config(const char *dir, const char *rpcd_settings)
{
    char *plugins = harness_bundled_plugin_sections();
    assert_non_null(plugins);
    char *text;
    assert_true(asprintf(&text, "[rpcd]\nworkers = 1\n%s\n%s", rpcd_settings, plugins) >= 0);
    char *path = harness_write_file(dir, "rpcd.conf", text);
    assert_non_null(path);
    free(text);
    free(plugins);
    return path;
}

/* The default config but for workers = 1 (see write_config), made once for all tests. */
static char *ordered_dir;
static char *ordered_config;

static int make_ordered_config(void **state)
{
    (void)state;
    ordered_dir = harness_temp_dir();
    ordered_config = ordered_dir ? write_config(ordered_dir, "") : NULL;
    return ordered_config ? 0 : -1;
}

static int remove_ordered_config(void **state)
{
    (void)state;
    harness_remove_dir(ordered_dir);
    free(ordered_dir);
    free(ordered_config);
    return 0;
}

static harness_process *start_rpcd(const char *config, const char *extra)
{
    if (!config)
        config = ordered_config;
    assert_non_null(config);
    harness_argv args = harness_rpcd_argv(config);
    assert_non_null(args.argv[0]);
    if (extra)
        harness_argv_push(&args, extra);
    harness_process *rpcd = harness_start(args.argv);
    assert_non_null(rpcd);
    return rpcd;
}

static void send_text(harness_process *rpcd, const char *text)
{
    assert_int_equal(harness_write_text(rpcd, text, LINE_TIMEOUT_MS), HARNESS_OK);
}

static void send_bytes(harness_process *rpcd, const char *data, size_t length)
{
    assert_int_equal(harness_write(rpcd, data, length, LINE_TIMEOUT_MS), HARNESS_OK);
}

/* Reads one line (new), failing the test when none comes in time. */
static char *expect_line(harness_process *rpcd)
{
    char *line = NULL;
    bool unterminated = false;
    int status = harness_read_line(rpcd, LINE_TIMEOUT_MS, &line, NULL, &unterminated);
    if (status != HARNESS_OK)
        print_error("no response line (status %d); rpcd's stderr:\n%s\n", status,
                    harness_stderr(rpcd));
    assert_int_equal(status, HARNESS_OK);
    assert_false(unterminated);
    return line;
}

/* Reads one line and checks it is JSON-equal to expected. */
static void expect_response(harness_process *rpcd, const char *expected)
{
    char *line = expect_line(rpcd);
    if (!harness_json_equal(expected, line))
        print_error("expected: %s\nactual:   %s\n", expected, line);
    assert_true(harness_json_equal(expected, line));
    free(line);
}

/* Closes stdin, expects no more output and exit status 0, frees the process. */
static void finish(harness_process *rpcd)
{
    harness_close_stdin(rpcd);
    char *rest = NULL;
    assert_int_equal(harness_read_all(rpcd, HARNESS_TIMEOUT_MS, &rest, NULL), HARNESS_OK);
    if (rest[0])
        print_error("unexpected output at the end:\n%s\n", rest);
    assert_string_equal(rest, "");
    free(rest);
    harness_exit status;
    assert_int_equal(harness_wait(rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    if (!status.exited || status.code != 0)
        print_error("rpcd ended with %s; stderr:\n%s\n", harness_exit_describe(&status),
                    harness_stderr(rpcd));
    assert_true(status.exited);
    assert_int_equal(status.code, 0);
    harness_free(rpcd);
}

/* Loads a response line, failing the test when it is not JSON. New reference. */
static json_t *load_line(const char *line)
{
    json_error_t error;
    json_t *root = json_loads(line, JSON_DECODE_ANY, &error);
    if (!root)
        print_error("not JSON (%s): %s\n", error.text, line);
    assert_non_null(root);
    return root;
}

static json_int_t error_code_of(const json_t *response)
{
    const json_t *code = json_object_get(json_object_get(response, "error"), "code");
    assert_true(json_is_integer(code));
    return json_integer_value(code);
}

static const char *detail_of(const json_t *response)
{
    const json_t *detail =
        json_object_get(json_object_get(json_object_get(response, "error"), "data"), "detail");
    assert_true(json_is_string(detail));
    return json_string_value(detail);
}

static const char parse_error[] =
    "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}";

/* A request on its own is answered while stdin stays open: rpcd flushes when it has to wait. */
static void test_answer_while_stdin_open(void **state)
{
    (void)state;
    harness_process *rpcd = start_rpcd(NULL, NULL);
    send_text(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[\"one\"]}\n");
    expect_response(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[\"one\"]}");
    send_text(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"subtract\",\"params\":[5,2]}\n");
    expect_response(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":3}");
    /* Errors are flushed the same way. */
    send_text(rpcd, "not json\n");
    expect_response(rpcd, parse_error);
    finish(rpcd);
}

/* 1000 requests in one write are all answered, each once, in order. */
/*
 * 1000 requests in one write: every id answered exactly once, and with one worker (the config
 * these tests use) in request order. The default config's pool may answer in any order.
 */
static void pipelined_requests(const char *config, bool in_order)
{
    enum { COUNT = 1000 };
    size_t capacity = COUNT * 96, used = 0;
    char *input = malloc(capacity);
    assert_non_null(input);
    for (int i = 0; i < COUNT; i++)
        used += (size_t)snprintf(input + used, capacity - used,
                                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"echo\","
                                 "\"params\":[%d]}\n",
                                 i, i * 7);
    harness_process *rpcd = start_rpcd(config, NULL);
    send_bytes(rpcd, input, used);
    free(input);
    bool seen[COUNT] = {false};
    for (int i = 0; i < COUNT; i++) {
        char *line = expect_line(rpcd);
        json_t *response = load_line(line);
        const json_t *id = json_object_get(response, "id");
        assert_true(json_is_integer(id));
        json_int_t n = json_integer_value(id);
        if (in_order && n != i)
            print_error("response %d out of order: %s\n", i, line);
        if (in_order)
            assert_int_equal(n, i);
        assert_true(n >= 0 && n < COUNT);
        assert_false(seen[n]);
        seen[n] = true;
        const json_t *result = json_array_get(json_object_get(response, "result"), 0);
        assert_int_equal(json_integer_value(result), n * 7);
        json_decref(response);
        free(line);
    }
    finish(rpcd);
}

static void test_pipelined_requests_in_order(void **state)
{
    (void)state;
    pipelined_requests(NULL, true);
}

static void test_pipelined_requests_default_pool(void **state)
{
    (void)state;
    pipelined_requests(harness_env("RPCD_BUILD_CONFIG"), false);
}

/* "\r\n" ends a line as "\n" does, and the "\r" is not part of the message. */
static void test_crlf_line_endings(void **state)
{
    (void)state;
    harness_process *rpcd = start_rpcd(NULL, NULL);
    send_text(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[\"crlf\"]}\r\n"
                    "\r\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":\"two\",\"method\":\"sum\",\"params\":[1,2]}\r\n");
    char *first = expect_line(rpcd);
    char *second = expect_line(rpcd);
    /* The answers end in "\n" alone, whatever the client used. */
    assert_null(strchr(first, '\r'));
    assert_null(strchr(second, '\r'));
    assert_true(harness_json_equal("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[\"crlf\"]}", first));
    assert_true(harness_json_equal("{\"jsonrpc\":\"2.0\",\"id\":\"two\",\"result\":3}", second));
    free(first);
    free(second);
    finish(rpcd);
}

/* A last line cut short by EOF, without its "\n", is still a message. */
static void test_last_line_without_newline(void **state)
{
    (void)state;
    harness_process *rpcd = start_rpcd(NULL, NULL);
    send_text(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\",\"params\":[\"last\"]}");
    harness_close_stdin(rpcd);
    expect_response(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[1]}");
    expect_response(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":[\"last\"]}");
    finish(rpcd);
}

/* Empty and whitespace-only lines are not messages: no response, not even a parse error. */
static void test_blank_lines_ignored(void **state)
{
    (void)state;
    harness_process *rpcd = start_rpcd(NULL, NULL);
    send_text(rpcd, "\n   \n\t\n \t \r\n\r\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}\n"
                    "\n\n    \n");
    harness_close_stdin(rpcd);
    harness_lines lines;
    assert_int_equal(harness_read_all_lines(rpcd, HARNESS_TIMEOUT_MS, &lines), HARNESS_OK);
    if (lines.count != 1)
        for (size_t i = 0; i < lines.count; i++)
            print_error("line %zu: %s\n", i + 1, lines.items[i]);
    assert_int_equal(lines.count, 1);
    assert_true(
        harness_json_equal("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[1]}", lines.items[0]));
    harness_lines_free(&lines);
    finish(rpcd);
}

/*
 * Ids come back as the exact bytes the client sent: no rounding of big integers, no rewriting
 * of 1.0, -0 or 1e400, no unescaping of strings.
 */
static void test_ids_echoed_byte_for_byte(void **state)
{
    (void)state;
    static const char *const ids[] = {
        "9007199254740993",
        "1.0",
        "-0",
        "1e400",
        "18446744073709551617",
        "\"\\u00e9\"",
        "-1.5E-7",
        "0.10",
        "\"a\\/b\"",
        "\"\\uD834\\uDD1E\"",
        "null",
    };
    harness_process *rpcd = start_rpcd(NULL, NULL);
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char *request, *needle;
        assert_true(asprintf(&request,
                             "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"echo\","
                             "\"params\":[%zu]}\n",
                             ids[i], i) >= 0);
        assert_true(asprintf(&needle, "\"id\":%s,", ids[i]) >= 0);
        send_text(rpcd, request);
        char *line = expect_line(rpcd);
        if (!strstr(line, needle))
            print_error("id %s not echoed as sent: %s\n", ids[i], line);
        assert_non_null(strstr(line, needle));
        assert_non_null(strstr(line, "\"result\":["));
        free(line);
        free(needle);
        free(request);
    }
    /* The same holds for an id echoed in an error. */
    send_text(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":1.0,\"method\":\"no.such\"}\n");
    char *line = expect_line(rpcd);
    assert_non_null(strstr(line, "\"id\":1.0,"));
    assert_non_null(strstr(line, "-32601"));
    free(line);
    finish(rpcd);
}

/* A line that does not parse costs that line only: the next one is answered. */
static void test_parse_error_then_valid(void **state)
{
    (void)state;
    harness_process *rpcd = start_rpcd(NULL, NULL);
    send_text(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\",\"params\":[2]}\n"
                    "]\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"echo\",\"params\":[3]} trailing\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"echo\",\"params\":[5]}"
                    "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"echo\",\"params\":[6]}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"echo\",\"params\":[4]}\n");
    expect_response(rpcd, parse_error);
    expect_response(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":[2]}");
    expect_response(rpcd, parse_error);
    expect_response(rpcd, parse_error);
    /* Two objects on one line are not one JSON text. */
    expect_response(rpcd, parse_error);
    expect_response(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":[4]}");
    finish(rpcd);
}

/*
 * Bytes that are not UTF-8, NUL bytes and a BOM make a line unparseable. RFC 8259 forbids a BOM
 * in JSON sent over a network; rpcd treats it as the stray bytes it is, a documented decision.
 */
static void test_bad_bytes_are_parse_errors(void **state)
{
    (void)state;
    static const struct {
        const char *bytes;
        size_t length;
    } lines[] = {
#define LINE(text) {text, sizeof(text) - 1}
        /* Invalid UTF-8 in a string: a lone continuation byte, 0xff, an overlong "/", an
           encoded surrogate, a truncated sequence. */
        LINE("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[\"\x80\"]}\n"),
        LINE("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[\"\xff\"]}\n"),
        LINE("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[\"\xc0\xaf\"]}\n"),
        LINE("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[\"\xed\xa0\x80\"]}\n"),
        LINE("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[\"\xe2\x82\"]}\n"),
        /* NUL inside a string, between tokens, and after the value. */
        LINE("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[\"a\0b\"]}\n"),
        LINE("{\"jsonrpc\":\"2.0\",\"id\":1,\0\"method\":\"echo\",\"params\":[1]}\n"),
        LINE("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}\0\n"),
        /* A UTF-8 byte order mark before a valid request. */
        LINE("\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}\n"),
#undef LINE
    };
    harness_process *rpcd = start_rpcd(NULL, NULL);
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        send_bytes(rpcd, lines[i].bytes, lines[i].length);
        char *line = expect_line(rpcd);
        if (!harness_json_equal(parse_error, line))
            print_error("bad line %zu answered with %s\n", i, line);
        assert_true(harness_json_equal(parse_error, line));
        free(line);
    }
    /* Valid multi-byte UTF-8, for contrast, goes through untouched. */
    send_text(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\","
                    "\"params\":[\"\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e\"]}\n");
    char *line = expect_line(rpcd);
    assert_non_null(strstr(line, "[\"\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e\"]"));
    free(line);
    finish(rpcd);
}

/* A request padded with spaces to exactly length bytes (without the newline). */
static char *padded_request(int id, size_t length)
{
    char *request;
    int n = asprintf(&request,
                     "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"echo\",\"params\":[%d]}", id, id);
    assert_true(n > 0 && (size_t)n <= length);
    char *padded = malloc(length + 1);
    assert_non_null(padded);
    memcpy(padded, request, (size_t)n);
    memset(padded + n, ' ', length - (size_t)n);
    padded[length] = '\0';
    free(request);
    return padded;
}

/*
 * A line longer than max_line_bytes is skipped with one Invalid Request (its id cannot be known)
 * that says why, and the lines after it are served.
 */
static void test_line_too_long(void **state)
{
    (void)state;
    char *dir = harness_temp_dir();
    assert_non_null(dir);
    char *config = write_config(dir, "max_line_bytes = 1024");
    harness_process *rpcd = start_rpcd(config, NULL);

    enum { HUGE = 100 * 1024 };
    char *huge = malloc(HUGE + 1);
    assert_non_null(huge);
    memset(huge, 'x', HUGE);
    huge[0] = '"';
    huge[HUGE - 1] = '"';
    huge[HUGE] = '\n';
    send_bytes(rpcd, huge, HUGE + 1);
    free(huge);
    send_text(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\",\"params\":[\"after\"]}\n");

    char *line = expect_line(rpcd);
    json_t *response = load_line(line);
    assert_true(json_is_null(json_object_get(response, "id")));
    assert_int_equal(error_code_of(response), -32600);
    if (!strstr(detail_of(response), "max_line_bytes"))
        print_error("detail does not name max_line_bytes: %s\n", line);
    assert_non_null(strstr(detail_of(response), "max_line_bytes"));
    json_decref(response);
    free(line);
    expect_response(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":[\"after\"]}");

    /* The limit is inclusive, and a "\r" before the "\n" does not count against it. */
    char *at_limit = padded_request(3, 1024);
    send_text(rpcd, at_limit);
    send_text(rpcd, "\r\n");
    expect_response(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":[3]}");
    free(at_limit);
    char *over_limit = padded_request(4, 1025);
    send_text(rpcd, over_limit);
    send_text(rpcd, "\n");
    line = expect_line(rpcd);
    response = load_line(line);
    assert_int_equal(error_code_of(response), -32600);
    assert_true(json_is_null(json_object_get(response, "id")));
    json_decref(response);
    free(line);
    free(over_limit);

    /* An over-long last line without "\n" is refused the same way at EOF. */
    huge = malloc(HUGE);
    assert_non_null(huge);
    memset(huge, ' ', HUGE);
    send_bytes(rpcd, huge, HUGE);
    free(huge);
    harness_close_stdin(rpcd);
    line = expect_line(rpcd);
    response = load_line(line);
    assert_int_equal(error_code_of(response), -32600);
    json_decref(response);
    free(line);
    finish(rpcd);

    free(config);
    harness_remove_dir(dir);
    free(dir);
}

/* Builds a request whose total nesting (the request object included) is depth. New string. */
static char *nested_request(int id, size_t depth)
{
    size_t arrays = depth - 1;
    size_t length = arrays * 2 + 128;
    char *text = malloc(length);
    assert_non_null(text);
    int n = snprintf(text, length,
                     "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"echo\",\"params\":", id);
    size_t used = (size_t)n;
    memset(text + used, '[', arrays);
    used += arrays;
    memset(text + used, ']', arrays);
    used += arrays;
    memcpy(text + used, "}\n", 3);
    return text;
}

/* Nesting deeper than max_depth (512 by default) is a parse error that says so. */
static void test_nesting_deeper_than_max_depth(void **state)
{
    (void)state;
    harness_process *rpcd = start_rpcd(NULL, NULL);
    char *request = nested_request(1, 512);
    send_text(rpcd, request);
    free(request);
    char *line = expect_line(rpcd);
    json_t *response = load_line(line);
    assert_int_equal(json_integer_value(json_object_get(response, "id")), 1);
    assert_non_null(json_object_get(response, "result"));
    json_decref(response);
    free(line);

    request = nested_request(2, 513);
    send_text(rpcd, request);
    free(request);
    line = expect_line(rpcd);
    response = load_line(line);
    assert_true(json_is_null(json_object_get(response, "id")));
    assert_int_equal(error_code_of(response), -32700);
    if (!strstr(detail_of(response), "max_depth"))
        print_error("detail does not name max_depth: %s\n", line);
    assert_non_null(strstr(detail_of(response), "max_depth"));
    json_decref(response);
    free(line);

    /* Far deeper, as hostile input would be: the same answer, and rpcd carries on. */
    enum { DEEP = 200000 };
    char *deep = malloc(DEEP + 1);
    assert_non_null(deep);
    memset(deep, '[', DEEP);
    deep[DEEP] = '\n';
    send_bytes(rpcd, deep, DEEP + 1);
    free(deep);
    line = expect_line(rpcd);
    response = load_line(line);
    assert_int_equal(error_code_of(response), -32700);
    json_decref(response);
    free(line);
    send_text(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"echo\",\"params\":[3]}\n");
    expect_response(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":[3]}");
    finish(rpcd);
}

/*
 * Only protocol lines reach stdout, even with debug logging on: every line is JSON. Logs go to
 * stderr, each line prefixed with "rpcd: ".
 */
static void test_stdout_protocol_stderr_logs(void **state)
{
    (void)state;
    harness_process *rpcd = start_rpcd(NULL, "-v");
    send_text(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}\n"
                    "garbage\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"nope\"}\n"
                    "{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":1}\n"
                    "{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"echo\"}\n"
                    "[{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"fail.internal\"},1]\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"fail.bad_result\"}\n"
                    "{\"jsonrpc\":\"2.0\",\"method\":\"fail.unknown_status\"}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"progress\","
                    "\"params\":{\"_meta\":{\"progressToken\":\"t\"}}}\n");
    harness_close_stdin(rpcd);
    harness_lines lines;
    assert_int_equal(harness_read_all_lines(rpcd, HARNESS_TIMEOUT_MS, &lines), HARNESS_OK);
    assert_false(lines.unterminated);
    /* 1, parse error, 2, 3, the batch, 5, three progress notifications and 6 */
    assert_int_equal(lines.count, 10);
    for (size_t i = 0; i < lines.count; i++) {
        json_t *message = load_line(lines.items[i]);
        assert_true(json_is_object(message) || json_is_array(message));
        json_decref(message);
    }
    harness_lines_free(&lines);
    assert_int_equal(harness_collect_stderr(rpcd, HARNESS_TIMEOUT_MS), HARNESS_OK);
    const char *err = harness_stderr(rpcd);
    if (!strstr(err, "rpcd: debug:"))
        print_error("no debug lines on stderr with -v:\n%s\n", harness_stderr(rpcd));
    assert_non_null(strstr(err, "rpcd: debug:"));
    for (const char *at = err; *at;) {
        assert_int_equal(strncmp(at, "rpcd: ", 6), 0);
        const char *end = strchr(at, '\n');
        assert_non_null(end);
        at = end + 1;
    }
    finish(rpcd);
}

/*
 * A plugin that writes to the process's stdout (printf, puts, fwrite, write(1)) must not put
 * those bytes among the protocol lines: the plugin API says the daemon redirects stdout.
 */
static void test_plugin_stdout_writes_stay_off_protocol(void **state)
{
    (void)state;
    char *dir = harness_temp_dir();
    assert_non_null(dir);
    char *text;
    assert_true(asprintf(&text, "[plugin misbehave]\npath = %s\n",
                         harness_env("RPCD_FIXTURE_MISBEHAVE")) >= 0);
    char *config = harness_write_file(dir, "rpcd.conf", text);
    assert_non_null(config);
    free(text);
    harness_process *rpcd = start_rpcd(config, NULL);
    send_text(rpcd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"misbehave.printf\"}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"misbehave.greeting\"}\n");
    harness_close_stdin(rpcd);
    harness_lines lines;
    assert_int_equal(harness_read_all_lines(rpcd, HARNESS_TIMEOUT_MS, &lines), HARNESS_OK);
    size_t not_json = 0;
    for (size_t i = 0; i < lines.count; i++) {
        json_error_t error;
        json_t *message = json_loads(lines.items[i], 0, &error);
        if (!message) {
            print_error("stdout line %zu is not protocol: %s\n", i + 1, lines.items[i]);
            not_json++;
        }
        json_decref(message);
    }
    size_t count = lines.count;
    harness_lines_free(&lines);
    finish(rpcd);
    free(config);
    harness_remove_dir(dir);
    free(dir);
    assert_int_equal(not_json, 0);
    assert_int_equal(count, 2);
}

/* Messages far larger than rpcd's read and write chunks go through whole, in both directions. */
static void test_large_message(void **state)
{
    (void)state;
    enum { PAYLOAD = 3 * 1024 * 1024 };
    char *request = malloc(PAYLOAD + 128);
    assert_non_null(request);
    int head = snprintf(request, 128,
                        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\","
                        "\"params\":[\"");
    memset(request + head, 'z', PAYLOAD);
    memcpy(request + head + PAYLOAD, "\"]}\n", 5);
    harness_process *rpcd = start_rpcd(NULL, NULL);
    /* The notification after it gets nothing back: exactly one line must come. */
    send_bytes(rpcd, request, (size_t)head + PAYLOAD + 4);
    send_text(rpcd, "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[\"quiet\"]}\n");
    char *line = expect_line(rpcd);
    size_t expected_length = strlen("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[\"\"]}") + PAYLOAD;
    assert_int_equal(strlen(line), expected_length);
    assert_non_null(strstr(line, "zzzz\"]}"));
    free(line);
    free(request);
    finish(rpcd);
}

/* End of input on its own, before any request: exit 0 and no output. */
static void test_exit_zero_at_eof(void **state)
{
    (void)state;
    harness_process *rpcd = start_rpcd(NULL, NULL);
    finish(rpcd);
}

/*
 * Runs rpcd on one request with a shell redirection of its stdin or stdout (such as "<&-"), and
 * expects exit 74, nothing on stdout, and expected_line on stderr.
 */
static void redirected_exits_74(const char *redirect, const char *expected_line)
{
    harness_argv rpcd = harness_rpcd_argv(ordered_config);
    assert_non_null(rpcd.argv[0]);
    char script[64]; /* "exec" and the redirection */
    snprintf(script, sizeof script, "exec \"$@\" %s", redirect);
    harness_argv args = harness_argv_in_shell(script, &rpcd);
    static const char request[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\"}\n";
    harness_run_result result;
    harness_run(args.argv, request, strlen(request), HARNESS_TIMEOUT_MS, &result);
    bool ok = result.status.exited && result.status.code == 74 && result.out_length == 0 &&
              strstr(result.err, expected_line) != NULL;
    if (!ok)
        print_error("%s: expected exit 74 and \"%s\"; got %s\nstderr:\n%s\n", redirect,
                    expected_line, harness_exit_describe(&result.status),
                    result.err ? result.err : "");
    harness_run_result_free(&result);
    assert_true(ok);
}

/*
 * A write that fails for another reason than a closed pipe (stdout is /dev/full): exit 74, and
 * the log says why instead of blaming the client.
 */
static void test_stdout_write_error_is_named(void **state)
{
    (void)state;
    redirected_exits_74(">/dev/full",
                        "rpcd: error: writing responses failed: No space left on device");
}

/*
 * stdin or stdout closed before rpcd starts (a shell's "<&-" or ">&-"): an I/O condition, not a
 * failure of rpcd, so exit 74 with one line naming the descriptor.
 */
static void test_stdin_closed_at_start_exits_74(void **state)
{
    (void)state;
    redirected_exits_74("<&-", "rpcd: error: stdin is closed");
}

static void test_stdout_closed_at_start_exits_74(void **state)
{
    (void)state;
    redirected_exits_74(">&-", "rpcd: error: stdout is closed");
}

/*
 * stderr closed before rpcd starts ("2>&-"): the file a plugin opens in its init must not become
 * fd 2 and receive rpcd's log lines; rpcd serves as usual.
 */
static void test_stderr_closed_at_start_keeps_logs_out_of_plugin_files(void **state)
{
    (void)state;
    /* valgrind reports on the stderr this test closes, and fails without it. */
    if (harness_wrapped())
        skip();
    char *dir = harness_temp_dir();
    assert_non_null(dir);
    char *kept = NULL, *text = NULL;
    assert_true(asprintf(&kept, "%s/plugin.db", dir) > 0);
    assert_true(asprintf(&text,
                         "[rpcd]\nlog_level = debug\n[plugin keeps_file]\npath = %s\nfile = %s\n",
                         harness_env("RPCD_FIXTURE_KEEPS_FILE"), kept) > 0);
    char *config = harness_write_file(dir, "rpcd.conf", text);
    assert_non_null(config);
    harness_argv rpcd = harness_rpcd_argv(config);
    harness_argv args = harness_argv_in_shell("exec \"$@\" 2>&-", &rpcd);
    static const char request[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"keeps_file.ping\"}\n";
    harness_run_result result;
    assert_int_equal(harness_run(args.argv, request, strlen(request), HARNESS_TIMEOUT_MS, &result),
                     HARNESS_OK);
    static const char expected[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":null}\n";
    assert_true(result.status.exited);
    assert_int_equal(result.status.code, 0);
    assert_int_equal(result.out_length, strlen(expected));
    assert_memory_equal(result.out, expected, strlen(expected));
    struct stat info;
    assert_int_equal(stat(kept, &info), 0);
    if (info.st_size != 0)
        print_error("%s received %lld bytes of rpcd's output\n", kept, (long long)info.st_size);
    assert_int_equal(info.st_size, 0);
    harness_run_result_free(&result);
    harness_remove_dir(dir);
    free(dir);
    free(kept);
    free(text);
    free(config);
}

/* ---- Non-blocking stdin and stdout --------------------------------------------------------- */

enum { NONBLOCKING_REQUESTS = 64, NONBLOCKING_PAYLOAD = 8000 };

/* Sends the requests after a pause (rpcd's first reads find nothing), then ends the input. */
static void *send_late(void *context)
{
    int fd = *(int *)context;
    struct timespec pause = {0, 200 * 1000 * 1000};
    nanosleep(&pause, NULL);
    static char payload[NONBLOCKING_PAYLOAD + 1];
    memset(payload, 'p', NONBLOCKING_PAYLOAD);
    intptr_t failed = 0;
    for (int i = 0; i < NONBLOCKING_REQUESTS && !failed; i++) {
        char *request;
        int length = asprintf(
            &request, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"echo\",\"params\":[\"%s\"]}\n",
            i, payload);
        for (int done = 0; length > 0 && done < length;) {
            /* Bounded: this test holds the read end too, so a dead rpcd would block a write. */
            struct pollfd room = {fd, POLLOUT, 0};
            ssize_t n = poll(&room, 1, LINE_TIMEOUT_MS) == 1
                            ? write(fd, request + done, (size_t)(length - done))
                            : -1;
            if (n < 0) {
                failed = 1;
                break;
            }
            done += (int)n;
        }
        free(request);
    }
    close(fd);
    return (void *)failed;
}

/* Reads one line of up to capacity bytes from fd, waiting at most LINE_TIMEOUT_MS for each read. */
static bool read_line_from(int fd, char *line, size_t capacity)
{
    size_t used = 0;
    while (used < capacity) {
        struct pollfd ready = {fd, POLLIN, 0};
        if (poll(&ready, 1, LINE_TIMEOUT_MS) != 1 || read(fd, line + used, 1) != 1)
            return false;
        if (line[used] == '\n') {
            line[used] = '\0';
            return true;
        }
        used++;
    }
    return false;
}

/*
 * stdin and stdout non-blocking, as when a parent shares its own non-blocking pipe or terminal
 * with rpcd: its first reads find nothing (EAGAIN), and its writes find stdout full while the
 * client waits before reading (EAGAIN again). Neither is a failure: every request is answered,
 * rpcd exits 0, and the flags stay set (they belong to the parent's open files as well).
 */
static void test_nonblocking_stdin_and_stdout(void **state)
{
    (void)state;
    harness_argv args = harness_rpcd_argv(ordered_config);
    assert_non_null(args.argv[0]);
    int in[2], out[2], err[2];
    assert_int_equal(pipe2(in, O_CLOEXEC), 0);
    assert_int_equal(pipe2(out, O_CLOEXEC), 0);
    assert_int_equal(pipe2(err, O_CLOEXEC), 0);
    assert_int_equal(fcntl(in[0], F_SETFL, fcntl(in[0], F_GETFL) | O_NONBLOCK), 0);
    assert_int_equal(fcntl(out[1], F_SETFL, fcntl(out[1], F_GETFL) | O_NONBLOCK), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
            _exit(127);
        execv(args.argv[0], (char *const *)args.argv);
        _exit(127);
    }
    close(err[1]);
    pthread_t sender;
    assert_int_equal(pthread_create(&sender, NULL, send_late, &in[1]), 0);

    /* Nothing read for a while: rpcd fills the pipe (64 KiB, the answers are 512 KiB). */
    struct timespec pause = {0, 400 * 1000 * 1000};
    nanosleep(&pause, NULL);
    static char line[NONBLOCKING_PAYLOAD + 256];
    int answered = 0;
    for (int i = 0; i < NONBLOCKING_REQUESTS; i++) {
        if (!read_line_from(out[0], line, sizeof line))
            break;
        json_t *response = load_line(line);
        assert_int_equal(json_integer_value(json_object_get(response, "id")), i);
        assert_int_equal(
            strlen(json_string_value(json_array_get(json_object_get(response, "result"), 0))),
            NONBLOCKING_PAYLOAD);
        json_decref(response);
        answered++;
    }
    void *send_failed;
    pthread_join(sender, &send_failed);
    assert_true((fcntl(in[0], F_GETFL) & O_NONBLOCK) != 0);
    assert_true((fcntl(out[1], F_GETFL) & O_NONBLOCK) != 0);
    close(in[0]);
    close(out[1]);

    static char errors[65536];
    size_t error_length = 0;
    for (;;) {
        struct pollfd ready = {err[0], POLLIN, 0};
        if (poll(&ready, 1, HARNESS_TIMEOUT_MS) != 1)
            break;
        ssize_t n = read(err[0], errors + error_length, sizeof errors - 1 - error_length);
        if (n <= 0)
            break;
        error_length += (size_t)n;
    }
    errors[error_length] = '\0';
    int status = 0;
    pid_t reaped = 0;
    for (int tries = 0; tries < HARNESS_TIMEOUT_MS / 10 && reaped == 0; tries++) {
        reaped = waitpid(pid, &status, WNOHANG);
        if (reaped == 0) {
            struct timespec tick = {0, 10 * 1000 * 1000};
            nanosleep(&tick, NULL);
        }
    }
    if (reaped == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    char rest[16];
    bool more = read(out[0], rest, sizeof rest) > 0;
    close(out[0]);
    close(err[0]);
    bool ok = answered == NONBLOCKING_REQUESTS && !more && send_failed == NULL && reaped == pid &&
              WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok)
        print_error("%d of %d answered, %s, status %#x; stderr:\n%s\n", answered,
                    NONBLOCKING_REQUESTS, reaped == pid ? "exited" : "killed", status, errors);
    assert_true(ok);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_answer_while_stdin_open),
        cmocka_unit_test(test_pipelined_requests_in_order),
        cmocka_unit_test(test_pipelined_requests_default_pool),
        cmocka_unit_test(test_crlf_line_endings),
        cmocka_unit_test(test_last_line_without_newline),
        cmocka_unit_test(test_blank_lines_ignored),
        cmocka_unit_test(test_ids_echoed_byte_for_byte),
        cmocka_unit_test(test_parse_error_then_valid),
        cmocka_unit_test(test_bad_bytes_are_parse_errors),
        cmocka_unit_test(test_line_too_long),
        cmocka_unit_test(test_nesting_deeper_than_max_depth),
        cmocka_unit_test(test_stdout_protocol_stderr_logs),
        cmocka_unit_test(test_plugin_stdout_writes_stay_off_protocol),
        cmocka_unit_test(test_large_message),
        cmocka_unit_test(test_exit_zero_at_eof),
        cmocka_unit_test(test_nonblocking_stdin_and_stdout),
        cmocka_unit_test(test_stdout_write_error_is_named),
        cmocka_unit_test(test_stdin_closed_at_start_exits_74),
        cmocka_unit_test(test_stdout_closed_at_start_exits_74),
        cmocka_unit_test(test_stderr_closed_at_start_keeps_logs_out_of_plugin_files),
    };
    return cmocka_run_group_tests(tests, make_ordered_config, remove_ordered_config);
}
