/* SPDX-License-Identifier: MIT */
/*
 * Compiles the public plugin headers as C (the build does it as C99 and as C11, with -Wpedantic
 * -Werror), calling their inline functions and macros so that their bodies are checked too.
 */
#include <rpcd/plugin.h>
#include <rpcd/plugin-jansson.h>

int plugin_header_check(const rpcd_host_api *host, rpcd_plugin *plugin, rpcd_call *call);

static int plugin_header_handler(rpcd_call *call, const char *params, size_t params_length,
                                 void *user_data)
{
    (void)call;
    (void)params;
    (void)params_length;
    (void)user_data;
    return RPCD_OK;
}

int plugin_header_check(const rpcd_host_api *host, rpcd_plugin *plugin, rpcd_call *call)
{
    rpcd_method method = rpcd_method_new("header.check", plugin_header_handler);
    json_t *params = NULL;
    int status;

    if (!RPCD_HOST_HAS(host, call_method)) {
        return RPCD_ERR_UNSUPPORTED;
    }
    status = host->register_method(plugin, &method);
    if (status == RPCD_OK) {
        status = rpcd_params_load("[1]", 3, &params);
    }
    if (status == RPCD_OK) {
        status = rpcd_call_result_json(host, call, params);
    }
    if (status == RPCD_OK) {
        status = rpcd_call_notify_json(host, call, "header/check", json_object());
    }
    if (status == RPCD_OK) {
        status = rpcd_call_fail_json(host, call, RPCD_ERR_INTERNAL, "check", json_null());
    }
    if (status == RPCD_ERR_INTERNAL) {
        status = rpcd_call_fail_code_json(host, call, 1, "check", NULL);
    }
    return status;
}

RPCD_PLUGIN_DEFINE("header_check", "0", NULL, NULL);
