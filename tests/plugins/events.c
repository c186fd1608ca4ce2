/* SPDX-License-Identifier: MIT */
/*
 * Fixture for what a plugin tells an MCP client outside its results (ABI 1.5), in process or
 * isolated: methods that are a resource and a prompt, resource_updated, log lines (one during
 * init), and, for a plugin host, frames about no call written into the channel by hand: well
 * formed, or malformed in each way rpcd must take for a broken host.
 */
#include <rpcd/plugin.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const rpcd_host_api *host;
static rpcd_plugin *self;

static int answer_status(rpcd_call *call, int status)
{
    char result[32];
    int length = snprintf(result, sizeof result, "{\"status\":%d}", status);
    return host->call_result(call, result, (size_t)length);
}

/* The string of params ["text"] (no escapes, no spaces) into out, or "" for anything else. */
static void only_string(const char *params, size_t length, char *out, size_t size)
{
    out[0] = '\0';
    if (params && length >= 4 && length - 4 < size && memcmp(params, "[\"", 2) == 0 &&
        memcmp(params + length - 2, "\"]", 2) == 0) {
        memcpy(out, params + 2, length - 4);
        out[length - 4] = '\0';
    }
}

/* ev.updated ["URI"]: resource_updated of the URI. */
static int updated(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    char uri[256];
    only_string(params, params_length, uri, sizeof uri);
    return answer_status(call, host->resource_updated(self, uri));
}

/* ev.updated_bad: a URI that is not UTF-8, which the host function refuses. */
static int updated_bad(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    return answer_status(call, host->resource_updated(self, "notes://\xff\xfe"));
}

/* ev.updated_long: a URI one byte longer than resource_updated takes (refused). */
static int updated_long(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    size_t length = 64 * 1024 + 1;
    char *uri = malloc(length + 1);
    if (!uri)
        return RPCD_ERR_NO_MEMORY;
    memset(uri, 'u', length);
    uri[length] = '\0';
    int status = host->resource_updated(self, uri);
    free(uri);
    return answer_status(call, status);
}

/* ev.log: a line of each log function, at warning, info (bytes not UTF-8) and debug. */
static int log_lines(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    host->log(self, RPCD_LOG_WARNING, "events log %d", 1);
    host->log_text(self, RPCD_LOG_INFO, "events caf\xc3\xa9 \xff end");
    host->log(self, RPCD_LOG_DEBUG, "events debug");
    return host->call_result(call, "true", 4);
}

/*
 * ev.log_quick: quick, so that rpcd's reading thread reads its answer on the fast lane: a
 * warning line, then the result. The line must reach the client first, as in process.
 */
static int log_quick(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    host->log(self, RPCD_LOG_WARNING, "events quick %d", 1);
    return host->call_result(call, "true", 4);
}

/* A frame about no call: kind, then an i32 (when with_level) and a string of length bytes. */
static void write_frame(unsigned char kind, int with_level, const char *text, size_t length)
{
    size_t size = 4 + 1 + (with_level ? 4 : 0) + 4 + length;
    unsigned char *frame = malloc(size);
    if (!frame)
        return;
    uint32_t frame_length = (uint32_t)(size - 4), text_length = (uint32_t)length;
    int32_t level = RPCD_LOG_ERROR;
    unsigned char *at = frame;
    memcpy(at, &frame_length, 4);
    at[4] = kind;
    at += 5;
    if (with_level) {
        memcpy(at, &level, 4);
        at += 4;
    }
    memcpy(at, &text_length, 4);
    memcpy(at + 4, text, length);
    (void)!write(5, frame, size);
    free(frame);
}

enum { KIND_RESOURCE_UPDATED = 13, KIND_LOG = 14 };

/*
 * ev.forge: params ["updated"] or ["log"] write a well-formed frame, then answer;
 * ["updated_utf8"], ["updated_long"], ["updated_nul"] and ["log_utf8"] a malformed one, then
 * wait for the end.
 */
static int forge(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    char what[32];
    only_string(params, params_length, what, sizeof what);
    if (strcmp(what, "updated") == 0) {
        write_frame(KIND_RESOURCE_UPDATED, 0, "notes://forged", 14);
        return host->call_result(call, "true", 4);
    }
    if (strcmp(what, "log") == 0) {
        write_frame(KIND_LOG, 1, "forged line", 11);
        return host->call_result(call, "true", 4);
    }
    if (strcmp(what, "updated_utf8") == 0) {
        write_frame(KIND_RESOURCE_UPDATED, 0, "notes://\xc3", 9);
    } else if (strcmp(what, "updated_nul") == 0) {
        write_frame(KIND_RESOURCE_UPDATED, 0, "notes://\0x", 10);
    } else if (strcmp(what, "updated_long") == 0) {
        size_t length = 64 * 1024 + 1;
        char *uri = malloc(length);
        if (uri) {
            memset(uri, 'u', length);
            write_frame(KIND_RESOURCE_UPDATED, 0, uri, length);
            free(uri);
        }
    } else if (strcmp(what, "log_utf8") == 0) {
        write_frame(KIND_LOG, 1, "bad \xe2\x82", 6);
    } else {
        return RPCD_ERR_INVALID_PARAMS;
    }
    pause();
    return RPCD_OK;
}

/* ev.today and ev.greet, a resource and a prompt: their text. */
static int today(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    return host->call_result(call, "\"a quiet day\"", 13);
}

static int greet(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    return host->call_result(call, "\"say hello\"", 11);
}

static int events_init(rpcd_plugin *plugin, const rpcd_host_api *api, void **state, char *error,
                       size_t error_size)
{
    (void)state, (void)error, (void)error_size;
    host = api;
    self = plugin;
    host->log(plugin, RPCD_LOG_WARNING, "events init");
    if (host->resource_updated(plugin, "notes://init") != RPCD_ERR_UNSUPPORTED)
        return RPCD_ERR_INTERNAL;
    static const struct {
        const char *name;
        rpcd_handler_fn handler;
        uint32_t role;
        const char *descriptor;
        uint32_t flags;
    } methods[] = {
        {"ev.updated", updated, RPCD_MCP_TOOL, NULL, 0},
        {"ev.updated_bad", updated_bad, RPCD_MCP_TOOL, NULL, 0},
        {"ev.updated_long", updated_long, RPCD_MCP_TOOL, NULL, 0},
        {"ev.log", log_lines, RPCD_MCP_TOOL, NULL, 0},
        {"ev.log_quick", log_quick, RPCD_MCP_TOOL, NULL, RPCD_METHOD_QUICK},
        {"ev.forge", forge, RPCD_MCP_TOOL, NULL, 0},
        {"ev.today", today, RPCD_MCP_RESOURCE,
         "{\"uri\":\"notes://today\",\"name\":\"today\",\"mimeType\":\"text/plain\"}", 0},
        {"ev.greet", greet, RPCD_MCP_PROMPT,
         "{\"name\":\"greet\",\"arguments\":[{\"name\":\"who\",\"required\":true}]}", 0},
    };
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        rpcd_method method = rpcd_method_new(methods[i].name, methods[i].handler);
        method.mcp_role = methods[i].role;
        method.mcp_descriptor = methods[i].descriptor;
        method.flags = methods[i].flags;
        int status = host->register_method(plugin, &method);
        if (status != RPCD_OK)
            return status;
    }
    return RPCD_OK;
}

RPCD_PLUGIN_DEFINE("events", "1.0.0", events_init, NULL);
