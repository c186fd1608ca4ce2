/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for rpc_error: the status to JSON-RPC code table documented in the plugin header,
 * which application codes a plugin may send, the standard messages and the status names.
 */
#include "wire/rpc_error.h"

#include <rpcd/plugin.h>

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static void test_status_codes(void **state)
{
    (void)state;
    assert_int_equal(rpcerr_code_for_status(RPCD_ERR_INVALID_PARAMS, 0), -32602);
    assert_int_equal(rpcerr_code_for_status(RPCD_ERR_METHOD_NOT_FOUND, 0), -32601);
    assert_int_equal(rpcerr_code_for_status(RPCD_ERR_CANCELLED, 0), -32800);
    assert_int_equal(rpcerr_code_for_status(RPCD_ERR_APPLICATION, 42), 42);
    /* Everything else is an internal error, whatever application code comes with it. */
    static const int internal[] = {RPCD_ERR_INTERNAL,
                                   RPCD_ERR_NO_MEMORY,
                                   RPCD_ERR_INVALID_ARGUMENT,
                                   RPCD_ERR_STALE,
                                   RPCD_ERR_EXISTS,
                                   RPCD_ERR_UNSUPPORTED,
                                   -11,
                                   -1000,
                                   1,
                                   7,
                                   INT32_MIN,
                                   INT32_MAX};
    for (size_t i = 0; i < sizeof internal / sizeof internal[0]; i++) {
        if (rpcerr_code_for_status(internal[i], 0) != -32603)
            fail_msg("status %d not mapped to -32603", internal[i]);
        assert_int_equal(rpcerr_code_for_status(internal[i], 42), -32603);
    }
    assert_int_equal(RPC_PARSE_ERROR, -32700);
    assert_int_equal(RPC_INVALID_REQUEST, -32600);
    assert_int_equal(RPC_METHOD_NOT_FOUND, -32601);
    assert_int_equal(RPC_INVALID_PARAMS, -32602);
    assert_int_equal(RPC_INTERNAL_ERROR, -32603);
    assert_int_equal(RPC_REQUEST_CANCELLED, -32800);
}

static void test_application_codes(void **state)
{
    (void)state;
    static const int64_t allowed[] = {0,      1,      -1,        42,        -32000,
                                      -32001, -32050, -32099,    -32769,    -31999,
                                      -40000, 32000,  INT64_MIN, INT64_MAX, -32800};
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
        if (!rpcerr_code_allowed_for_plugin(allowed[i]))
            fail_msg("code %lld refused", (long long)allowed[i]);
        if (rpcerr_code_for_status(RPCD_ERR_APPLICATION, allowed[i]) != allowed[i])
            fail_msg("code %lld not kept", (long long)allowed[i]);
    }
    static const int64_t refused[] = {-32100, -32101, -32600, -32601, -32602, -32603,
                                      -32700, -32768, -32767, -32500, -32199};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        if (rpcerr_code_allowed_for_plugin(refused[i]))
            fail_msg("code %lld allowed", (long long)refused[i]);
        if (rpcerr_code_for_status(RPCD_ERR_APPLICATION, refused[i]) != -32603)
            fail_msg("code %lld not replaced by -32603", (long long)refused[i]);
    }
}

static void test_standard_messages(void **state)
{
    (void)state;
    assert_string_equal(rpcerr_standard_message(-32700), "Parse error");
    assert_string_equal(rpcerr_standard_message(-32600), "Invalid Request");
    assert_string_equal(rpcerr_standard_message(-32601), "Method not found");
    assert_string_equal(rpcerr_standard_message(-32602), "Invalid params");
    assert_string_equal(rpcerr_standard_message(-32603), "Internal error");
    assert_string_equal(rpcerr_standard_message(-32800), "Request cancelled");
    static const int64_t others[] = {0,
                                     1,
                                     -32000,
                                     -32099,
                                     -32604,
                                     -32768,
                                     -32701,
                                     42,
                                     INT64_MIN,
                                     INT64_MAX,
                                     -32700LL - 0x100000000LL};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
        if (rpcerr_standard_message(others[i]) != NULL)
            fail_msg("code %lld has a standard message", (long long)others[i]);
}

static void test_status_names(void **state)
{
    (void)state;
    static const struct {
        int status;
        const char *name;
    } names[] = {
        {RPCD_OK, "RPCD_OK"},
        {RPCD_ERR_INVALID_PARAMS, "RPCD_ERR_INVALID_PARAMS"},
        {RPCD_ERR_METHOD_NOT_FOUND, "RPCD_ERR_METHOD_NOT_FOUND"},
        {RPCD_ERR_INTERNAL, "RPCD_ERR_INTERNAL"},
        {RPCD_ERR_NO_MEMORY, "RPCD_ERR_NO_MEMORY"},
        {RPCD_ERR_CANCELLED, "RPCD_ERR_CANCELLED"},
        {RPCD_ERR_APPLICATION, "RPCD_ERR_APPLICATION"},
        {RPCD_ERR_INVALID_ARGUMENT, "RPCD_ERR_INVALID_ARGUMENT"},
        {RPCD_ERR_STALE, "RPCD_ERR_STALE"},
        {RPCD_ERR_EXISTS, "RPCD_ERR_EXISTS"},
        {RPCD_ERR_UNSUPPORTED, "RPCD_ERR_UNSUPPORTED"},
        {RPCD_INPUT_REQUIRED, "RPCD_INPUT_REQUIRED"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *name = rpcerr_status_name(names[i].status);
        assert_non_null(name);
        assert_string_equal(name, names[i].name);
    }
    /* The enum is closed: -10 and 2 (1.6) are the last values; anything else has no name, and
     * RPCD_DEFERRED none either: it never ends a call. */
    static const int unknown[] = {1, 3, -11, -12, 100, -100, INT32_MIN, INT32_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        if (rpcerr_status_name(unknown[i]) != NULL)
            fail_msg("status %d has a name", unknown[i]);
}

static void test_messages_sent(void **state)
{
    (void)state;
    assert_string_equal(rpcerr_message(-32602), "Invalid params");
    assert_string_equal(rpcerr_message(-32800), "Request cancelled");
    assert_string_equal(rpcerr_message(-32000), "Server error");
    /* MCP's own code has MCP's text; it is no JSON-RPC standard code. */
    assert_string_equal(rpcerr_message(-32022), "Unsupported protocol version");
    assert_null(rpcerr_standard_message(-32022));
    assert_string_equal(rpcerr_message(42), "Server error");
}

static void test_status_names_by_minor(void **state)
{
    (void)state;
    /* RPCD_DEFERRED came with 1.1: to a 1.0 plugin, 1 is no status at all. */
    assert_null(rpcerr_status_name_in(RPCD_DEFERRED, 0));
    assert_string_equal(rpcerr_status_name_in(RPCD_ERR_INTERNAL, 0), "RPCD_ERR_INTERNAL");
    assert_string_equal(rpcerr_status_name_in(RPCD_ERR_CANCELLED, 1), "RPCD_ERR_CANCELLED");
    assert_null(rpcerr_status_name_in(-11, 1));
    /* RPCD_INPUT_REQUIRED came with 1.6: to a plugin built before, 2 is no status at all. */
    assert_null(rpcerr_status_name_in(RPCD_INPUT_REQUIRED, 5));
    assert_string_equal(rpcerr_status_name_in(RPCD_INPUT_REQUIRED, 6), "RPCD_INPUT_REQUIRED");
}

/* A failure of method "sum" of plugin "math" (an ABI 1.1 plugin). */
static rpcerr_failure failure_of(int status, bool recorded, int64_t code, const char *message,
                                 const char *data)
{
    return (rpcerr_failure){
        .status = status,
        .abi_minor = 1,
        .recorded = recorded,
        .code = code,
        .message = message,
        .data = data,
        .data_length = data ? strlen(data) : 0,
        .plugin = "math",
        .method = "sum",
        .method_length = 3,
    };
}

/* Checks the error a failure is answered with: code, message, data (NULL: none). */
static void assert_error(const rpcerr_failure *failure, int64_t code, const char *message,
                         const char *data)
{
    buffer scratch = BUFFER_INIT;
    assert_int_equal(buf_append_string(&scratch, "left over"), 0);
    rpcerr_error error;
    assert_int_equal(rpcerr_for_failure(failure, &scratch, &error), 0);
    assert_int_equal(error.code, code);
    assert_string_equal(error.message, message);
    if (!data) {
        assert_null(error.data);
    } else {
        assert_non_null(error.data);
        if (error.data_length != strlen(data) || memcmp(error.data, data, error.data_length) != 0)
            fail_msg("data '%.*s', expected '%s'", (int)error.data_length, error.data, data);
    }
    buf_free(&scratch);
}

static void test_failure_errors(void **state)
{
    (void)state;
    rpcerr_failure failure =
        failure_of(RPCD_ERR_INVALID_PARAMS, true, 0, "need two numbers", "[1]");
    assert_error(&failure, -32602, "Invalid params",
                 "{\"exception\":\"RPCD_ERR_INVALID_PARAMS\",\"plugin\":\"math\",\"method\":"
                 "\"sum\",\"detail\":\"need two numbers\",\"data\":[1]}");
    /* Nothing recorded: the status alone. */
    failure = failure_of(RPCD_ERR_INTERNAL, false, 0, NULL, NULL);
    assert_error(&failure, -32603, "Internal error",
                 "{\"exception\":\"RPCD_ERR_INTERNAL\",\"plugin\":\"math\",\"method\":\"sum\"}");
    failure = failure_of(RPCD_ERR_CANCELLED, true, 0, RPCERR_NEVER_RAN_DETAIL, NULL);
    assert_error(&failure, -32800, "Request cancelled",
                 "{\"exception\":\"RPCD_ERR_CANCELLED\",\"plugin\":\"math\",\"method\":\"sum\","
                 "\"detail\":\"rpcd stopped before the call ran\"}");
    /* Success with a result that is not JSON: told as the invalid argument it was. */
    failure = failure_of(RPCD_OK, false, 0, NULL, NULL);
    assert_error(&failure, -32603, "Internal error",
                 "{\"exception\":\"RPCD_ERR_INVALID_ARGUMENT\",\"plugin\":\"math\",\"method\":"
                 "\"sum\",\"detail\":\"the handler's result is not valid JSON\"}");
    failure = failure_of(RPCD_ERR_APPLICATION, false, 0, NULL, NULL);
    assert_error(&failure, -32603, "Internal error",
                 "{\"exception\":\"RPCD_ERR_APPLICATION\",\"plugin\":\"math\",\"method\":\"sum\","
                 "\"detail\":\"RPCD_ERR_APPLICATION returned without call_fail_code\"}");
    failure = failure_of(RPCD_ERR_APPLICATION, true, -32700, "mine", "{\"k\":1}");
    assert_error(&failure, -32603, "Internal error",
                 "{\"exception\":\"RPCD_ERR_APPLICATION\",\"plugin\":\"math\",\"method\":\"sum\","
                 "\"detail\":\"error code -32700 is reserved\",\"data\":{\"k\":1}}");
    /* The plugin's own error goes out as it gave it. */
    failure = failure_of(RPCD_ERR_APPLICATION, true, 42, "not \"here\"", "{\"k\":1}");
    assert_error(&failure, 42, "not \"here\"", "{\"k\":1}");
    failure = failure_of(RPCD_ERR_APPLICATION, true, -32099, "edge", NULL);
    assert_error(&failure, -32099, "edge", NULL);
    /* Statuses without a name, in the plugin's minor. */
    failure = failure_of(7, false, 0, NULL, NULL);
    assert_error(&failure, -32603, "Internal error",
                 "{\"exception\":\"unknown status\",\"status\":7,\"plugin\":\"math\",\"method\":"
                 "\"sum\"}");
    failure = failure_of(RPCD_DEFERRED, false, 0, NULL, NULL);
    failure.abi_minor = 0;
    assert_error(&failure, -32603, "Internal error",
                 "{\"exception\":\"unknown status\",\"status\":1,\"plugin\":\"math\",\"method\":"
                 "\"sum\"}");
    /* Names are escaped, and the method read by its length. */
    failure = failure_of(RPCD_ERR_INTERNAL, false, 0, NULL, NULL);
    failure.plugin = "a\"b";
    failure.method = "sum.more";
    assert_error(&failure, -32603, "Internal error",
                 "{\"exception\":\"RPCD_ERR_INTERNAL\",\"plugin\":\"a\\\"b\",\"method\":\"sum\"}");
}

static void assert_text(const rpcerr_failure *failure, size_t size, const char *expected)
{
    char text[512];
    memset(text, 'x', sizeof text);
    rpcerr_failure_text(failure, text, size);
    assert_string_equal(text, expected);
}

static void test_failure_texts(void **state)
{
    (void)state;
    rpcerr_failure failure = failure_of(RPCD_ERR_INVALID_PARAMS, true, 0, "need two numbers", NULL);
    assert_text(&failure, 512, "Invalid params: need two numbers");
    failure = failure_of(RPCD_ERR_APPLICATION, true, 42, "not here", NULL);
    assert_text(&failure, 512, "not here (error 42)");
    /* A reserved code is the plugin's all the same in the text. */
    failure = failure_of(RPCD_ERR_APPLICATION, true, -32700, "mine", NULL);
    assert_text(&failure, 512, "mine (error -32700)");
    failure = failure_of(RPCD_OK, false, 0, NULL, NULL);
    assert_text(&failure, 512, "Internal error: the handler's result is not valid JSON");
    failure = failure_of(RPCD_ERR_INTERNAL, false, 0, NULL, NULL);
    assert_text(&failure, 512, "Internal error (RPCD_ERR_INTERNAL, in sum)");
    failure = failure_of(RPCD_ERR_CANCELLED, false, 0, NULL, NULL);
    assert_text(&failure, 512, "Request cancelled (RPCD_ERR_CANCELLED, in sum)");
    failure = failure_of(-11, false, 0, NULL, NULL);
    assert_text(&failure, 512, "Internal error (unknown status, in sum)");
    /* The code without a standard message: "Error". */
    failure = failure_of(RPCD_ERR_APPLICATION, false, 0, NULL, NULL);
    assert_text(&failure, 512, "Error (RPCD_ERR_APPLICATION, in sum)");
    /* A code left in the record by an earlier failure is not this one's. */
    failure = failure_of(RPCD_ERR_APPLICATION, false, -32602, NULL, NULL);
    assert_text(&failure, 512, "Error (RPCD_ERR_APPLICATION, in sum)");
    failure = failure_of(RPCD_ERR_INTERNAL, true, 0, "disk full", NULL);
    assert_text(&failure, 512, "Internal error: disk full");
    /* Cut to the room given. */
    failure = failure_of(RPCD_ERR_INVALID_PARAMS, true, 0, "need two numbers", NULL);
    assert_text(&failure, 8, "Invalid");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_codes),      cmocka_unit_test(test_application_codes),
        cmocka_unit_test(test_standard_messages), cmocka_unit_test(test_status_names),
        cmocka_unit_test(test_messages_sent),     cmocka_unit_test(test_status_names_by_minor),
        cmocka_unit_test(test_failure_errors),    cmocka_unit_test(test_failure_texts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
