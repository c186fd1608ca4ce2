/* SPDX-License-Identifier: MIT */
/*
 * Fixture: tools that say what MCP lets a tool say (ABI 1.4): a title, annotations, an output
 * schema and icons in the descriptor; complete results of every content kind through
 * call_tool_result, one that is not valid, and a tool that hands back the request's _meta.
 */
#include <rpcd/plugin.h>

#include <stdio.h>
#include <string.h>

static const rpcd_host_api *host;
static rpcd_plugin *self;

static int set_tool_result(rpcd_call *call, const char *json)
{
    return host->call_tool_result(call, json, strlen(json));
}

/* A complete result whose structuredContent fits the output schema, with a result _meta. */
static int weather(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params;
    (void)params_length;
    (void)user_data;
    return set_tool_result(call,
                           "{\"content\":[{\"type\":\"text\",\"text\":\"21.5 C, sunny\"}],"
                           "\"structuredContent\":{\"temperature\":21.5,\"conditions\":\"sunny\"},"
                           "\"isError\":false,\"_meta\":{\"example.org/source\":\"fixture\"}}");
}

/* Every content kind MCP defines, in one result. */
static int every_kind(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params;
    (void)params_length;
    (void)user_data;
    return set_tool_result(
        call,
        "{\"content\":["
        "{\"type\":\"text\",\"text\":\"a picture\",\"annotations\":{\"audience\":[\"user\"],"
        "\"priority\":0.5}},"
        "{\"type\":\"image\",\"data\":\"iVBORw0KGgo=\",\"mimeType\":\"image/png\"},"
        "{\"type\":\"audio\",\"data\":\"UklGRg==\",\"mimeType\":\"audio/wav\"},"
        "{\"type\":\"resource_link\",\"uri\":\"file:///tmp/a.txt\",\"name\":\"a.txt\","
        "\"mimeType\":\"text/plain\"},"
        "{\"type\":\"resource\",\"resource\":{\"uri\":\"file:///tmp/b.txt\",\"text\":\"b\"}},"
        "{\"type\":\"resource\",\"resource\":{\"uri\":\"file:///tmp/c.bin\",\"blob\":\"AAE=\"}}"
        "],\"isError\":true}");
}

/* An image block without its mimeType: refused, and the status is logged for the test. */
static int bad_result(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    char line[64];
    (void)params;
    (void)params_length;
    (void)user_data;
    int status =
        set_tool_result(call, "{\"content\":[{\"type\":\"image\",\"data\":\"iVBORw0KGgo=\"}]}");
    snprintf(line, sizeof line, "call_tool_result returned %d", status);
    host->log_text(self, RPCD_LOG_WARNING, line);
    return RPCD_OK;
}

/* Hands back the arguments as the result: the output schema decides whether it may go out. */
static int echo(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    return host->call_result(call, params, params_length);
}

/* The request's _meta, whole and by member, and what a buffer too small gives. */
static int meta(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    char whole[1024], traceparent[256], result[1500], tiny[4];
    size_t whole_length, traceparent_length, needed, absent_length = 99;
    (void)params;
    (void)params_length;
    (void)user_data;
    if (host->call_meta(call, NULL, whole, sizeof whole, &whole_length) != RPCD_OK ||
        host->call_meta(call, "traceparent", traceparent, sizeof traceparent,
                        &traceparent_length) != RPCD_OK ||
        host->call_meta(call, "absent", tiny, sizeof tiny, &absent_length) != RPCD_OK)
        return RPCD_ERR_INTERNAL;
    int small = host->call_meta(call, NULL, tiny, sizeof tiny, &needed);
    snprintf(result, sizeof result,
             "{\"meta\":%s,\"traceparent\":%s,\"absent\":%zu,\"small\":%d,\"needed\":%zu,"
             "\"length\":%zu}",
             whole_length ? whole : "null", traceparent_length ? traceparent : "null",
             absent_length, small, needed, whole_length);
    return host->call_result(call, result, strlen(result));
}

static int tool_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state, char *error,
                     size_t error_size)
{
    (void)state;
    host = host_api;
    self = plugin;
    if (!RPCD_HOST_HAS(host, call_tool_result) || !RPCD_HOST_HAS(host, call_meta)) {
        snprintf(error, error_size, "needs rpcd 1.4");
        return RPCD_ERR_UNSUPPORTED;
    }
    rpcd_method methods[5];
    methods[0] = rpcd_method_new("weather", weather);
    methods[0].description = "Current weather for a city.";
    methods[0].params_schema = "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":"
                               "\"string\"}},\"required\":[\"city\"]}";
    methods[0].title = "Get weather";
    methods[0].annotations = "{\"readOnlyHint\":true,\"destructiveHint\":false,"
                             "\"idempotentHint\":true,\"openWorldHint\":true}";
    /* Written over several lines, as a plugin may: tools/list shows it on one. */
    methods[0].output_schema = "{\"type\":\"object\",\n \"properties\":{\"temperature\":{\"type\":"
                               "\"number\"},\"conditions\":{\"type\":\"string\"}},\n"
                               " \"required\":[\"temperature\",\"conditions\"]}";
    methods[0].icons = "[{\"src\":\"https://example.org/sun.png\",\"mimeType\":\"image/png\","
                       "\"sizes\":[\"48x48\"],\"theme\":\"light\"}]";
    methods[1] = rpcd_method_new("every_kind", every_kind);
    methods[2] = rpcd_method_new("bad_result", bad_result);
    methods[3] = rpcd_method_new("counted", echo);
    methods[3].output_schema = "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":"
                               "\"integer\"}},\"required\":[\"n\"]}";
    methods[4] = rpcd_method_new("meta", meta);
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        int status = host->register_method(plugin, &methods[i]);
        if (status != RPCD_OK) {
            snprintf(error, error_size, "cannot register %s (status %d)", methods[i].name, status);
            return status;
        }
    }
    return RPCD_OK;
}

RPCD_PLUGIN_DEFINE("tool_result", "1.0.0", tool_init, NULL);
