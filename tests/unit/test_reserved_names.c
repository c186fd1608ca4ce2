/* SPDX-License-Identifier: MIT */
/*
 * Reserved names: each rule with its reason, names that only look like reserved ones, and names
 * read by length, not up to a NUL.
 */
#include "methods/reserved_names.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

static const char *reason_of(const char *name)
{
    return reserved_name_reason(name, strlen(name));
}

static void test_reasons(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        const char *reason;
    } cases[] = {
        {"rpc.discover", "names starting with 'rpc.' are reserved by JSON-RPC"},
        {"rpc.", "names starting with 'rpc.' are reserved by JSON-RPC"},
        {"notifications/progress", "names starting with 'notifications/' are reserved by MCP"},
        {"notifications/", "names starting with 'notifications/' are reserved by MCP"},
        {"$/cancelRequest",
         "names starting with '$/' are reserved for protocol notifications ($/cancelRequest)"},
        {"$/",
         "names starting with '$/' are reserved for protocol notifications ($/cancelRequest)"},
        {"initialize", "the name is an MCP method that rpcd answers itself"},
        {"ping", "the name is an MCP method that rpcd answers itself"},
        {"server/discover", "the name is an MCP method that rpcd answers itself"},
        {"tools/list", "the name is an MCP method that rpcd answers itself"},
        {"tools/call", "the name is an MCP method that rpcd answers itself"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *reason = reason_of(cases[i].name);
        assert_non_null(reason);
        assert_string_equal(reason, cases[i].reason);
    }
}

static void test_free_names(void **state)
{
    (void)state;
    static const char *const names[] = {
        "echo",   "rpc",   "rpcx.a",         "RPC.a",  "notifications", "notification/x", "$",
        "x$/",    "pings", "initialize.now", "tools/", "tools/call2",   "ping ",          "tool",
        "a.rpc.", "",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        assert_null(reason_of(names[i]));
}

/* Only length bytes count: a prefix of a reserved name is free, and NUL is just a byte. */
static void test_by_length(void **state)
{
    (void)state;
    assert_null(reserved_name_reason("rpc.x", 3));
    assert_null(reserved_name_reason("pingpong", 4 + 1));
    assert_non_null(reserved_name_reason("pingpong", 4));
    assert_null(reserved_name_reason("ping\0x", 6));
    assert_non_null(reserved_name_reason("$/\0", 3));
}

/* By the plugin's ABI minor: the Tasks extension's methods, and its whole prefix, are rpcd's
 * from 1.7; a plugin built before keeps the names it registered. */
static void test_by_minor(void **state)
{
    (void)state;
    static const char *const names[] = {"tasks/get",  "tasks/update", "tasks/cancel",
                                        "tasks/list", "tasks/result", "tasks/"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t length = strlen(names[i]);
        assert_null(reserved_method_reason(names[i], length, 6));
        assert_non_null(reserved_method_reason(names[i], length, 7));
    }
    assert_string_equal(reserved_method_reason("tasks/list", 10, 7),
                        "names starting with 'tasks/' are reserved by MCP's Tasks extension");
    assert_string_equal(reserved_method_reason("tasks/get", 9, 7),
                        "the name is an MCP method that rpcd answers itself");
    assert_null(reserved_method_reason("tasks.wait", 10, 7));
    assert_null(reserved_method_reason("task/get", 8, 7));
    /* resources/read is rpcd's from 1.5. */
    assert_null(reserved_method_reason("resources/read", 14, 4));
    assert_non_null(reserved_method_reason("resources/read", 14, 5));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reasons),
        cmocka_unit_test(test_by_minor),
        cmocka_unit_test(test_free_names),
        cmocka_unit_test(test_by_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
