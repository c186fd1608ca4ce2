/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for rpc_error: the status to JSON-RPC code table documented in the plugin header,
 * which application codes a plugin may send, the standard messages and the status names.
 */
#include "rpc_error.h"

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
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *name = rpcerr_status_name(names[i].status);
        assert_non_null(name);
        assert_string_equal(name, names[i].name);
    }
    /* The enum is closed: -10 is the last value; anything else has no name. */
    static const int unknown[] = {1, 2, -11, -12, 100, -100, INT32_MIN, INT32_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        if (rpcerr_status_name(unknown[i]) != NULL)
            fail_msg("status %d has a name", unknown[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_codes),
        cmocka_unit_test(test_application_codes),
        cmocka_unit_test(test_standard_messages),
        cmocka_unit_test(test_status_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
