/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for control_request: each method read with its id, cancel's id kept as the peer
 * wrote it, notifications, and every refusal with its code (not JSON, not an object, a wrong
 * version, an id or method of the wrong kind or given twice, params not an object, an unknown
 * method, cancel without an id, a line too long), and the lines that answer.
 */
#include "control/control_request.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int parse(const char *line, ctl_request *request, ctl_refusal *refusal)
{
    return ctl_parse_request(line, strlen(line), request, refusal);
}

static void assert_span(js_span span, const char *text)
{
    assert_int_equal(span.length, strlen(text));
    assert_memory_equal(span.start, text, span.length);
}

static void test_methods(void **state)
{
    (void)state;
    static const char *const names[] = {"status", "calls", "reload", "metrics"};
    for (int i = 0; i < 4; i++) {
        char line[128];
        snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":\"x%d\",\"method\":\"%s\"}", i,
                 names[i]);
        ctl_request request;
        ctl_refusal refusal;
        assert_int_equal(parse(line, &request, &refusal), 0);
        assert_int_equal(request.method, (ctl_method)i);
        assert_true(request.has_id);
        char id[8];
        snprintf(id, sizeof id, "\"x%d\"", i);
        assert_span(request.id, id);
        assert_string_equal(ctl_method_name(request.method), names[i]);
    }
    assert_string_equal(ctl_method_name(CTL_METHOD_COUNT), "?");
}

static void test_cancel(void **state)
{
    (void)state;
    ctl_request request;
    ctl_refusal refusal;
    assert_int_equal(parse(" {\"params\":{\"id\":\"a\\u0062\"},\"method\":\"cancel\",\"id\":7,"
                           "\"jsonrpc\":\"2.0\"} ",
                           &request, &refusal),
                     0);
    assert_int_equal(request.method, CTL_CANCEL);
    assert_span(request.id, "7");
    assert_span(request.cancel, "\"a\\u0062\""); /* the text, as the client's id was */
    assert_int_equal(
        parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"cancel\",\"params\":{\"id\":12}}",
              &request, &refusal),
        0);
    assert_span(request.cancel, "12");
}

static void test_notification(void **state)
{
    (void)state;
    ctl_request request;
    ctl_refusal refusal;
    assert_int_equal(parse("{\"jsonrpc\":\"2.0\",\"method\":\"status\"}", &request, &refusal), 0);
    assert_false(request.has_id);
    assert_int_equal(
        parse("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"status\"}", &request, &refusal), 0);
    assert_true(request.has_id);
    assert_span(request.id, "null");
}

typedef struct refused_case {
    const char *line;
    int64_t code;
    const char *id; /* NULL: answered with id null */
} refused_case;

static void test_refusals(void **state)
{
    (void)state;
    static const refused_case cases[] = {
        {"", -32700, NULL},
        {"{\"jsonrpc\":\"2.0\",", -32700, NULL},
        {"\xff", -32700, NULL},
        {"[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]", -32700, NULL}, /* deeper than 16 */
        {"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\"}]", -32600, NULL},
        {"{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"status\"}", -32600, "1"},
        {"{\"id\":1,\"method\":\"status\"}", -32600, "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"status\"}", -32600, NULL},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"status\"}", -32600, NULL},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":5}", -32600, "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\",\"method\":\"calls\"}", -32600, "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\",\"params\":[]}", -32602, "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\"}", -32601, "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"Status\"}", -32601, "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"cancel\"}", -32602, "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"cancel\",\"params\":{}}", -32602, "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"cancel\",\"params\":{\"id\":null}}", -32602,
         "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"cancel\",\"params\":{\"id\":[1]}}", -32602,
         "1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ctl_request request;
        ctl_refusal refusal;
        assert_int_equal(parse(cases[i].line, &request, &refusal), -1);
        assert_int_equal(refusal.code, cases[i].code);
        assert_non_null(refusal.message);
        assert_int_equal(refusal.has_id, cases[i].id != NULL);
        if (cases[i].id)
            assert_span(refusal.id, cases[i].id);
        buffer out = BUFFER_INIT;
        assert_int_equal(ctl_append_refusal(&out, &refusal), 0);
        assert_int_equal(out.data[out.length - 1], '\n');
        assert_int_equal(js_validate(out.data, out.length - 1, 8, NULL, NULL), 0);
        buf_free(&out);
    }
}

static void test_too_long(void **state)
{
    (void)state;
    size_t length = CTL_MAX_LINE_BYTES + 1;
    char *line = malloc(length);
    assert_non_null(line);
    memset(line, ' ', length);
    memcpy(line, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\"}", 42);
    ctl_request request;
    ctl_refusal refusal;
    assert_int_equal(ctl_parse_request(line, length, &request, &refusal), -1);
    assert_int_equal(refusal.code, -32600);
    /* At the bound, the same line is served. */
    assert_int_equal(ctl_parse_request(line, length - 1, &request, &refusal), 0);
    free(line);
}

static void test_result_line(void **state)
{
    (void)state;
    buffer out = BUFFER_INIT;
    js_span id = {"\"a\"", 3};
    assert_int_equal(ctl_append_result(&out, id, "{\"x\":1}", 7), 0);
    assert_int_equal(buf_append_char(&out, '\0'), 0);
    assert_string_equal(out.data, "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"x\":1}}\n");
    buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_methods),      cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_notification), cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_too_long),     cmocka_unit_test(test_result_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
