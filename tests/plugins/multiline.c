/* SPDX-License-Identifier: MIT */
/*
 * Fixture: hands the daemon valid JSON written over several lines (LF, CRLF and lone CR between
 * tokens, as json_dumps with JSON_INDENT or a hand-written schema gives) through every host
 * function that takes JSON text, and in its params_schema; and a string result around them.
 */
#include <rpcd/plugin.h>

#include <stdio.h>

static const rpcd_host_api *host;

/* {"a": [1, 2], "s": "x\ny"} spread over lines; the escaped \n in the string stays. */
static const char pretty[] = "{\n  \"a\": [\r\n    1,\r    2\n  ],\n  \"s\": \"x\\ny\"\n}\n";

static int multiline_result(rpcd_call *call, const char *params, size_t params_length,
                            void *user_data)
{
    (void)params;
    (void)params_length;
    (void)user_data;
    return host->call_result(call, pretty, sizeof pretty - 1);
}

/* A string result, "two" and "lines" on two lines once decoded, between line breaks. */
static int multiline_lines(rpcd_call *call, const char *params, size_t params_length,
                           void *user_data)
{
    static const char lines[] = "\r\n  \"two\\nlines\"\n";
    (void)params;
    (void)params_length;
    (void)user_data;
    return host->call_result(call, lines, sizeof lines - 1);
}

static int multiline_fail(rpcd_call *call, const char *params, size_t params_length,
                          void *user_data)
{
    (void)params;
    (void)params_length;
    (void)user_data;
    return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "pretty data", pretty, sizeof pretty - 1);
}

static int multiline_fail_code(rpcd_call *call, const char *params, size_t params_length,
                               void *user_data)
{
    (void)params;
    (void)params_length;
    (void)user_data;
    return host->call_fail_code(call, 42, "pretty code", pretty, sizeof pretty - 1);
}

static int multiline_notify(rpcd_call *call, const char *params, size_t params_length,
                            void *user_data)
{
    (void)params;
    (void)params_length;
    (void)user_data;
    int status = host->call_notify(call, "multiline/event", pretty, sizeof pretty - 1);
    char text[16];
    int length = snprintf(text, sizeof text, "%d", status);
    return host->call_result(call, text, (size_t)length);
}

/* Deferred, completed from the handler itself: the deferred path copies the same way. */
static int multiline_deferred(rpcd_call *call, const char *params, size_t params_length,
                              void *user_data)
{
    (void)params;
    (void)params_length;
    (void)user_data;
    host->call_result(call, pretty, sizeof pretty - 1);
    host->call_complete(call, RPCD_OK);
    return RPCD_DEFERRED;
}

static int multiline_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state,
                          char *error, size_t error_size)
{
    static const char schema[] = "{\r\n  \"type\": \"object\",\n  \"properties\": {\r"
                                 "    \"n\": {\"type\": \"integer\"}\n  }\n}\n";
    (void)state;
    host = host_api;
    rpcd_method methods[] = {
        rpcd_method_new("multiline.result", multiline_result),
        rpcd_method_new("multiline.fail", multiline_fail),
        rpcd_method_new("multiline.fail_code", multiline_fail_code),
        rpcd_method_new("multiline.notify", multiline_notify),
        rpcd_method_new("multiline.deferred", multiline_deferred),
        rpcd_method_new("multiline.lines", multiline_lines),
    };
    methods[0].params_schema = schema;
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        int status = host->register_method(plugin, &methods[i]);
        if (status != RPCD_OK) {
            snprintf(error, error_size, "cannot register %s (status %d)", methods[i].name, status);
            return status;
        }
    }
    return RPCD_OK;
}

RPCD_PLUGIN_DEFINE("multiline", "1.0.0", multiline_init, NULL);
