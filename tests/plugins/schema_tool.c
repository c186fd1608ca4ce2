/* SPDX-License-Identifier: MIT */
/*
 * Fixture: tools with a params_schema whose handlers count their calls, so that a test can see
 * that params rpcd refused never reached them: schema.strict (six properties, no others),
 * schema.own (the same schema, RPCD_METHOD_VALIDATES_ITSELF) and schema.calls, the count.
 * With "register = remote" or "= invalid" in its section it also registers schema.bad, whose
 * schema rpcd refuses, and fails its init with the status it got.
 */
#include <rpcd/plugin.h>

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static const rpcd_host_api *host;
static atomic_uint calls;

#define STRICT_SCHEMA                                                                              \
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"city\"],"                 \
    "\"properties\":{\"city\":{\"type\":\"string\",\"minLength\":1},"                              \
    "\"days\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":14},"                                \
    "\"units\":{\"enum\":[\"metric\",\"imperial\"]},\"hourly\":{\"type\":\"boolean\"},"            \
    "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"                               \
    "\"since\":{\"type\":\"string\",\"format\":\"date\"}}}"

static int counted(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params;
    (void)params_length;
    atomic_fetch_add(&calls, 1);
    const char *result = user_data;
    return host->call_result(call, result, strlen(result));
}

static int count(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params;
    (void)params_length;
    (void)user_data;
    char text[64];
    int length = snprintf(text, sizeof text, "{\"calls\":%u}", atomic_load(&calls));
    return host->call_result(call, text, (size_t)length);
}

static int schema_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state,
                       char *error, size_t error_size)
{
    (void)state;
    host = host_api;
    rpcd_method methods[3];
    methods[0] = rpcd_method_new("schema.strict", counted);
    methods[0].params_schema = STRICT_SCHEMA;
    methods[0].user_data = (void *)"{\"ok\":true}";
    methods[1] = rpcd_method_new("schema.own", counted);
    methods[1].params_schema = STRICT_SCHEMA;
    methods[1].flags = RPCD_METHOD_VALIDATES_ITSELF;
    methods[1].user_data = (void *)"{\"own\":true}";
    methods[2] = rpcd_method_new("schema.calls", count);
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        int status = host->register_method(plugin, &methods[i]);
        if (status != RPCD_OK) {
            snprintf(error, error_size, "cannot register %s (status %d)", methods[i].name, status);
            return status;
        }
    }
    const char *bad = host->config_get(plugin, "register");
    if (!bad)
        return RPCD_OK;
    rpcd_method method = rpcd_method_new("schema.bad", count);
    method.params_schema =
        strcmp(bad, "remote") == 0
            ? "{\"properties\":{\"a\":{\"$ref\":\"https://example.org/a.json\"}}}"
            : "{\"properties\":{\"a\":{\"type\":\"text\"}}}";
    int status = host->register_method(plugin, &method);
    if (status != RPCD_OK)
        snprintf(error, error_size, "cannot register schema.bad (status %d)", status);
    return status;
}

RPCD_PLUGIN_DEFINE("schema_tool", "1.0.0", schema_init, NULL);
