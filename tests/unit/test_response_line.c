/* SPDX-License-Identifier: MIT */
/*
 * The lines rpcd writes, compared byte for byte: success and error responses, a plugin's
 * notification, progress, and the answer given from a signal handler to a call that never ran.
 */
#include "wire/response_line.h"

#include "wire/rpc_error.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define SPAN(literal) ((js_span){(literal), sizeof(literal) - 1})

/* The parts, joined. New buffer. */
static buffer joined(const struct iovec *parts, int count)
{
    buffer out = BUFFER_INIT;
    for (int i = 0; i < count; i++)
        assert_int_equal(buf_append(&out, parts[i].iov_base, parts[i].iov_len), 0);
    return out;
}

static void assert_bytes(const buffer *out, const char *expected)
{
    if (out->length != strlen(expected) || memcmp(out->data, expected, out->length) != 0)
        fail_msg("got '%.*s', expected '%s'", (int)out->length, out->data, expected);
}

static void test_result(void **state)
{
    (void)state;
    js_span id = SPAN("\"a\\u0062\"");
    static const char result[] = "{\"x\":[1, 2]}";
    struct iovec parts[RL_RESULT_PARTS];
    int count = rl_result_parts(parts, &id, result, sizeof result - 1);
    assert_int_equal(count, RL_RESULT_PARTS);
    /* The id and the result go out as the client and the handler wrote them, not copied. */
    assert_ptr_equal(parts[1].iov_base, id.start);
    assert_ptr_equal(parts[3].iov_base, result);
    buffer out = joined(parts, count);
    assert_bytes(&out, "{\"jsonrpc\":\"2.0\",\"id\":\"a\\u0062\",\"result\":{\"x\":[1, 2]}}");
    buf_free(&out);
}

static void test_error(void **state)
{
    (void)state;
    buffer out = BUFFER_INIT;
    assert_int_equal(rl_append_error(&out, NULL, -32700, "Parse error", NULL, 0), 0);
    assert_bytes(&out, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":"
                       "\"Parse error\"}}");
    buf_clear(&out);
    js_span id = SPAN("-7.5e3");
    static const char data[] = "{\"detail\":\"x\"}";
    assert_int_equal(
        rl_append_error(&out, &id, INT64_MIN, "say \"\xc3\xa9\"\n", data, sizeof data - 1), 0);
    assert_bytes(&out,
                 "{\"jsonrpc\":\"2.0\",\"id\":-7.5e3,\"error\":{\"code\":-9223372036854775808,"
                 "\"message\":\"say \\\"\xc3\xa9\\\"\\n\",\"data\":{\"detail\":\"x\"}}}");
    /* Appended: what the buffer held stays in front. */
    buf_clear(&out);
    assert_int_equal(buf_append_string(&out, "["), 0);
    assert_int_equal(rl_append_error(&out, &id, 42, "m", NULL, 0), 0);
    assert_bytes(&out,
                 "[{\"jsonrpc\":\"2.0\",\"id\":-7.5e3,\"error\":{\"code\":42,\"message\":\"m\"}}");
    buf_free(&out);
}

static void test_notification(void **state)
{
    (void)state;
    buffer out = BUFFER_INIT;
    assert_int_equal(rl_append_notification(&out, "a/\"b\"", 5, NULL, 0), 0);
    assert_bytes(&out, "{\"jsonrpc\":\"2.0\",\"method\":\"a/\\\"b\\\"\"}");
    buf_clear(&out);
    /* Pretty-printed params come out on one line, their strings untouched. */
    static const char params[] = "{\r\n  \"k\": \"v\\n\",\n  \"n\": [1,\n 2]\n}";
    assert_int_equal(rl_append_notification(&out, "log", 3, params, sizeof params - 1), 0);
    assert_bytes(&out, "{\"jsonrpc\":\"2.0\",\"method\":\"log\",\"params\":{  \"k\": \"v\\n\",  "
                       "\"n\": [1, 2]}}");
    buf_clear(&out);
    assert_int_equal(rl_append_notification(&out, "e", 1, "[]", 2), 0);
    assert_bytes(&out, "{\"jsonrpc\":\"2.0\",\"method\":\"e\",\"params\":[]}");
    buf_free(&out);
}

static void test_progress(void **state)
{
    (void)state;
    buffer out = BUFFER_INIT;
    assert_int_equal(rl_append_progress(&out, "\"t\"", 3, 1, 3, "half \"way\""), 0);
    assert_bytes(&out, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
                       "{\"progressToken\":\"t\",\"progress\":1,\"total\":3,\"message\":"
                       "\"half \\\"way\\\"\"}}");
    buf_clear(&out);
    /* No total when it is negative or infinite; fractions and large numbers in full. */
    assert_int_equal(rl_append_progress(&out, "17", 2, 0.1, -1, NULL), 0);
    assert_bytes(&out, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
                       "{\"progressToken\":17,\"progress\":0.10000000000000001}}");
    buf_clear(&out);
    assert_int_equal(rl_append_progress(&out, "17", 2, 9007199254740992.0, INFINITY, NULL), 0);
    assert_bytes(&out, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
                       "{\"progressToken\":17,\"progress\":9007199254740992}}");
    buf_clear(&out);
    /* Past 2^53 an integral double is no exact integer: it keeps an exponent, so that a client
     * never reads 21 digits into a 64-bit integer. */
    assert_int_equal(rl_append_progress(&out, "17", 2, 1e20, 1e300, NULL), 0);
    assert_bytes(&out,
                 "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
                 "{\"progressToken\":17,\"progress\":1e+20,\"total\":1.0000000000000001e+300}}");
    buf_clear(&out);
    assert_int_equal(rl_append_progress(&out, "17", 2, -2, 0, NULL), 0);
    assert_bytes(&out, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":"
                       "{\"progressToken\":17,\"progress\":-2,\"total\":0}}");
    buf_clear(&out);
    /* JSON has no NaN or infinity. */
    assert_int_equal(rl_append_progress(&out, "17", 2, NAN, 1, NULL), -1);
    buf_free(&out);
}

static void test_never_ran(void **state)
{
    (void)state;
    static const char id[] = "\"c-1\"";
    struct iovec parts[RL_NEVER_RAN_PARTS];
    int count = rl_never_ran_parts(parts, id, sizeof id - 1);
    assert_int_equal(count, RL_NEVER_RAN_PARTS);
    assert_ptr_equal(parts[1].iov_base, id);
    buffer out = joined(parts, count);
    assert_bytes(&out, "{\"jsonrpc\":\"2.0\",\"id\":\"c-1\",\"error\":{\"code\":-32800,\"message\":"
                       "\"Request cancelled\",\"data\":{\"detail\":\"rpcd stopped before the call "
                       "ran\"}}}");
    /* The line a signal handler writes is the one an error response of that code would be. */
    buffer built = BUFFER_INIT;
    static const char data[] = "{\"detail\":\"" RPCERR_NEVER_RAN_DETAIL "\"}";
    js_span span = SPAN(id);
    assert_int_equal(rl_append_error(&built, &span, RPC_REQUEST_CANCELLED,
                                     rpcerr_standard_message(RPC_REQUEST_CANCELLED), data,
                                     sizeof data - 1),
                     0);
    assert_int_equal(built.length, out.length);
    assert_memory_equal(built.data, out.data, out.length);
    buf_free(&built);
    buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_result),       cmocka_unit_test(test_error),
        cmocka_unit_test(test_notification), cmocka_unit_test(test_progress),
        cmocka_unit_test(test_never_ran),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
