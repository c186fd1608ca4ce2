/* SPDX-License-Identifier: MIT */
/*
 * Fixture for the crash tests: methods that take the process down the ways plugins do (a NULL
 * dereference, abort(), exit(3), a stack overflow), on the reading thread (quick) or on a
 * worker, and a quick echo whose responses are still buffered when the next line crashes.
 */
#include <rpcd/plugin.h>

#include <signal.h>
#include <stdlib.h>

static const rpcd_host_api *host;

static int echo(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    return params ? host->call_result(call, params, params_length) : RPCD_OK;
}

/* Sanitizers would report the dereference themselves: the fault is what is tested. */
#if defined(__GNUC__) || defined(__clang__)
#define NO_SANITIZE __attribute__((no_sanitize("address", "undefined")))
#else
#define NO_SANITIZE
#endif

static int *volatile nowhere;

NO_SANITIZE static int dereference_null(rpcd_call *call, const char *params, size_t params_length,
                                        void *user_data)
{
    (void)call, (void)params, (void)params_length, (void)user_data;
    return *nowhere;
}

static int call_abort(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)call, (void)params, (void)params_length, (void)user_data;
    abort();
}

static int call_exit(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)call, (void)params, (void)params_length, (void)user_data;
    exit(3);
}

/* Set by crash.exit_then_fault: the object's destructor, which exit() runs after its handlers,
 * then faults, as a plugin's own clean-up may. */
static volatile int fault_when_unloaded;

NO_SANITIZE __attribute__((destructor)) static void at_unload(void)
{
    if (fault_when_unloaded)
        *nowhere = 1;
}

static int exit_then_fault(rpcd_call *call, const char *params, size_t params_length,
                           void *user_data)
{
    (void)call, (void)params, (void)params_length, (void)user_data;
    fault_when_unloaded = 1;
    exit(3);
}

/* Never reached: the recursion below ends in the stack's guard page. */
static volatile int bottom = -1;

/* Volatile frames, so that it is neither a loop nor a tail call. */
NO_SANITIZE static int recurse(int depth)
{
    volatile char frame[256];
    frame[0] = (char)depth;
    if (depth == bottom)
        return 0;
    return recurse(depth + 1) + frame[0];
}

static int overflow(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)call, (void)params, (void)params_length, (void)user_data;
    return recurse(0);
}

static int crash_init(rpcd_plugin *plugin, const rpcd_host_api *api, void **state, char *error,
                      size_t error_size)
{
    (void)state, (void)error, (void)error_size;
    host = api;
    static const struct {
        const char *name;
        rpcd_handler_fn handler;
        uint32_t flags;
    } methods[] = {
        {"crash.echo", echo, RPCD_METHOD_QUICK},
        {"crash.null", dereference_null, RPCD_METHOD_QUICK},
        {"crash.abort", call_abort, RPCD_METHOD_QUICK},
        {"crash.exit", call_exit, RPCD_METHOD_QUICK},
        {"crash.exit_then_fault", exit_then_fault, RPCD_METHOD_QUICK},
        {"crash.null_on_worker", dereference_null, 0},
        {"crash.overflow", overflow, 0},
    };
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        rpcd_method method = rpcd_method_new(methods[i].name, methods[i].handler);
        method.flags = methods[i].flags;
        int status = host->register_method(plugin, &method);
        if (status != RPCD_OK)
            return status;
    }
    return RPCD_OK;
}

RPCD_PLUGIN_DEFINE("crash", "1.0.0", crash_init, NULL);
