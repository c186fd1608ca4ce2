/* SPDX-License-Identifier: MIT */
/*
 * Fixture: a plugin built against a frozen, released plugin.h (tests/abi/plugin-1.N.h, named by
 * FROZEN_HEADER), to check that the daemon keeps the meanings of that minor: a handler status
 * that minor did not have, a method flag bit that meant nothing then, what a failure with one
 * of MCP's protocol codes is in tools/call, and tools flagged to run as tasks (0x8, 0x10: the
 * task flags of 1.7, bits without meaning before).
 */
#include FROZEN_HEADER

#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define STRINGIFY2(x) #x
#define STRINGIFY(x) STRINGIFY2(x)
#define PREFIX "abi1" STRINGIFY(RPCD_ABI_MINOR)

static const rpcd_host_api *host;

/*
 * Returns 1. Before 1.1 that is an unknown status (an internal error); from 1.1 on it is
 * RPCD_DEFERRED, and the call is completed before the handler returns.
 */
static int return_one(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    static const char result[] = "\"completed\"";
    (void)params;
    (void)params_length;
    (void)user_data;
    host->call_result(call, result, sizeof result - 1);
#if RPCD_ABI_MINOR >= 1
    host->call_complete(call, RPCD_OK);
#endif
    return 1;
}

/* Whether the handler runs on the thread that reads requests (the process's main thread). */
static int on_reader(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    int main_thread = (pid_t)syscall(SYS_gettid) == getpid();
    (void)params;
    (void)params_length;
    (void)user_data;
    return host->call_result(call, main_thread ? "true" : "false", main_thread ? 4 : 5);
}

#if RPCD_ABI_MINOR == 4
static int return_mine(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params;
    (void)params_length;
    (void)user_data;
    return host->call_result(call, "\"mine\"", 6);
}
#endif

#if RPCD_ABI_MINOR >= 5
/* Fails with MCP's -32021: a tool error in tools/call before 1.6, that JSON-RPC error from 1.6. */
static int fail_protocol(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    static const char data[] = "{\"requiredCapabilities\":{\"sampling\":{}}}";
    (void)params;
    (void)params_length;
    (void)user_data;
    return host->call_fail_code(call, -32021, "Missing required client capability", data,
                                sizeof data - 1);
}
#endif

#if RPCD_ABI_MINOR >= 6
/* Answers at once; its tools carry the task flags of 1.7, which a 1.6 plugin had no name for. */
static int answer_now(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params;
    (void)params_length;
    (void)user_data;
    return host->call_result(call, "\"now\"", 5);
}

/* PREFIX.task (0x8, RPCD_METHOD_TASK from 1.7) and PREFIX.task_required (0x10,
 * RPCD_METHOD_TASK_REQUIRED from 1.7). */
static int register_task_tools(rpcd_plugin *plugin)
{
    rpcd_method task = rpcd_method_new(PREFIX ".task", answer_now);
    rpcd_method required = rpcd_method_new(PREFIX ".task_required", answer_now);
    task.flags = 0x8u;
    required.flags = 0x10u;
    int status = host->register_method(plugin, &task);
    return status == RPCD_OK ? host->register_method(plugin, &required) : status;
}
#endif

static int old_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state, char *error,
                    size_t error_size)
{
    rpcd_method one = rpcd_method_new(PREFIX ".one", return_one);
    rpcd_method reader = rpcd_method_new(PREFIX ".on_reader", on_reader);
    int status;

    (void)state;
    host = host_api;
    /* 0x2 is RPCD_METHOD_QUICK since 1.2; before, a bit without meaning. */
    reader.flags = 0x2u;
    status = host->register_method(plugin, &one);
    if (status == RPCD_OK)
        status = host->register_method(plugin, &reader);
#if RPCD_ABI_MINOR == 4
    /* Before 1.5, MCP's prompts/list was a name like any other: this plugin serves it. */
    rpcd_method prompts = rpcd_method_new("prompts/list", return_mine);
    if (status == RPCD_OK)
        status = host->register_method(plugin, &prompts);
#endif
#if RPCD_ABI_MINOR >= 5
    rpcd_method protocol = rpcd_method_new(PREFIX ".fail_protocol", fail_protocol);
    if (status == RPCD_OK)
        status = host->register_method(plugin, &protocol);
#endif
#if RPCD_ABI_MINOR >= 6
    if (status == RPCD_OK)
        status = register_task_tools(plugin);
#endif
    if (status != RPCD_OK)
        snprintf(error, error_size, "cannot register (status %d)", status);
    return status;
}

RPCD_PLUGIN_DEFINE(PREFIX, "1.0.0", old_init, NULL);
