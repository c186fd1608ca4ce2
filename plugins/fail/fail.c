/* SPDX-License-Identifier: MIT */
/*
 * fail plugin: one method per way a handler can end badly, so that the daemon's mapping of
 * statuses to JSON-RPC errors can be exercised end to end (and shown to client authors).
 * Every method is "fail.<what>"; none of them has side effects.
 */
#include <stdio.h>

#include <rpcd/plugin-jansson.h>

/*
 * Set once by init, on the main thread before any call, and only read afterwards, so handlers
 * running at the same time on several threads need no lock.
 */
static const rpcd_host_api *host;

static int fail_invalid_params(rpcd_call *call, const char *params, size_t params_length,
                               void *user_data)
{
    (void)params;
    (void)params_length;
    (void)user_data;
    return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "always invalid", NULL, 0);
}

static int fail_internal(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    static const char data[] = "{\"where\":\"fail.internal\"}";

    (void)params;
    (void)params_length;
    (void)user_data;
    return host->call_fail(call, RPCD_ERR_INTERNAL, "internal failure on purpose", data,
                           sizeof(data) - 1);
}

static int fail_no_memory(rpcd_call *call, const char *params, size_t params_length,
                          void *user_data)
{
    (void)call;
    (void)params;
    (void)params_length;
    (void)user_data;
    return RPCD_ERR_NO_MEMORY;
}

static int fail_not_found(rpcd_call *call, const char *params, size_t params_length,
                          void *user_data)
{
    (void)call;
    (void)params;
    (void)params_length;
    (void)user_data;
    return RPCD_ERR_METHOD_NOT_FOUND;
}

static int fail_cancelled(rpcd_call *call, const char *params, size_t params_length,
                          void *user_data)
{
    (void)call;
    (void)params;
    (void)params_length;
    (void)user_data;
    return RPCD_ERR_CANCELLED;
}

/* A status outside rpcd_status, as a plugin built against a future ABI might return. */
static int fail_unknown_status(rpcd_call *call, const char *params, size_t params_length,
                               void *user_data)
{
    (void)call;
    (void)params;
    (void)params_length;
    (void)user_data;
    return 12345;
}

/* The daemon refuses the text, and the call must then fail even though the handler succeeds. */
static int fail_bad_result(rpcd_call *call, const char *params, size_t params_length,
                           void *user_data)
{
    static const char text[] = "{not json";

    (void)params;
    (void)params_length;
    (void)user_data;
    host->call_result(call, text, sizeof(text) - 1);
    return RPCD_OK;
}

static int fail_no_result(rpcd_call *call, const char *params, size_t params_length,
                          void *user_data)
{
    (void)call;
    (void)params;
    (void)params_length;
    (void)user_data;
    return RPCD_OK;
}

/* fail.custom: {"code": N}, N defaulting to 42; fails with that code through call_fail_code. */
static int fail_custom(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    json_t *root = NULL;
    const json_t *code = NULL;
    json_int_t value = 42;

    (void)user_data;
    if (rpcd_params_load(params, params_length, &root) != RPCD_OK ||
        (root != NULL && !json_is_object(root))) {
        json_decref(root);
        return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "params must be an object", NULL, 0);
    }
    code = root != NULL ? json_object_get(root, "code") : NULL;
    if (code != NULL && !json_is_integer(code)) {
        json_decref(root);
        return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "\"code\" must be an integer", NULL,
                               0);
    }
    if (code != NULL) {
        value = json_integer_value(code);
    }
    json_decref(root);
    return rpcd_call_fail_code_json(host, call, (int64_t)value, "custom failure",
                                    json_pack("{ss}", "hint", "custom data"));
}

/* Every method, registered in this order. */
static const struct {
    const char *name;
    rpcd_handler_fn handler;
    const char *description;
} fail_methods[] = {
    {"fail.invalid_params", fail_invalid_params, "Fails with Invalid params, \"always invalid\"."},
    {"fail.internal", fail_internal, "Fails with Internal error and data {\"where\": ...}."},
    {"fail.custom", fail_custom, "Fails with the code given as {\"code\": N} (default 42)."},
    {"fail.no_memory", fail_no_memory, "Returns RPCD_ERR_NO_MEMORY without a detail."},
    {"fail.not_found", fail_not_found, "Returns RPCD_ERR_METHOD_NOT_FOUND."},
    {"fail.cancelled", fail_cancelled, "Returns RPCD_ERR_CANCELLED."},
    {"fail.unknown_status", fail_unknown_status, "Returns 12345, a status that does not exist."},
    {"fail.bad_result", fail_bad_result, "Sets a result that is not JSON, then succeeds."},
    {"fail.no_result", fail_no_result, "Succeeds without a result: null."},
};

static int fail_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state, char *error,
                     size_t error_size)
{
    size_t i;
    int status;

    (void)state;
    host = host_api;
    for (i = 0; i < sizeof(fail_methods) / sizeof(fail_methods[0]); i++) {
        rpcd_method method = rpcd_method_new(fail_methods[i].name, fail_methods[i].handler);

        method.description = fail_methods[i].description;
        status = host->register_method(plugin, &method);
        if (status != RPCD_OK) {
            snprintf(error, error_size, "cannot register method %s (status %d)",
                     fail_methods[i].name, status);
            return status;
        }
    }
    return RPCD_OK;
}

RPCD_PLUGIN_DEFINE("fail", "1.0.0", fail_init, NULL);
