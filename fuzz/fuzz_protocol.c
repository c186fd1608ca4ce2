/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: one input buffer through the whole data path (framing, validation, envelope,
 * dispatch, MCP front end, calls, output) to a registry of built-in methods that are also MCP
 * tools, with protocol_oracle.c judging what comes out of every run.
 */
#include "calls/call.h"
#include "config/config.h"
#include "base/log.h"
#include "mcp/mcp.h"
#include "protocol_oracle.h"
#include "methods/registry.h"
#include "serve/server.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static rpcd_host_api host;

static int echo(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)data;
    return params ? host.call_result(call, params, length) : RPCD_OK;
}

static int fail(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    return host.call_fail(call, RPCD_ERR_INVALID_PARAMS, "no", params, length);
}

static int progress(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    host.call_progress(call, 1, 2, "half");
    host.call_notify(call, "note", params, length);
    return host.call_result(call, "{\"done\":true}", 13);
}

typedef struct feed {
    const uint8_t *data;
    size_t size;
    size_t position;
    size_t chunk; /* how many bytes a read hands out, so lines split across reads */
} feed;

static ssize_t read_feed(void *source, char *buffer, size_t capacity)
{
    feed *f = source;
    size_t n = f->size - f->position;
    if (n > f->chunk)
        n = f->chunk;
    if (n > capacity)
        n = capacity;
    memcpy(buffer, f->data + f->position, n);
    f->position += n;
    return (ssize_t)n;
}

typedef struct sink {
    char *data;
    size_t length;
} sink;

static int write_sink(void *destination, const struct iovec *parts, int part_count)
{
    sink *s = destination;
    for (int i = 0; i < part_count; i++) {
        char *grown = realloc(s->data, s->length + parts[i].iov_len);
        if (!grown)
            return -1;
        memcpy(grown + s->length, parts[i].iov_base, parts[i].iov_len);
        s->data = grown;
        s->length += parts[i].iov_len;
    }
    return 0;
}

static registry *methods;
static mcp_tools *tools;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!methods) {
        log_set_level(LOG_ERROR); /* warnings for every odd line would only slow the search */
        call_fill_host_api(&host);
        reg_new(&methods);
        rpcd_method method = rpcd_method_new("echo", echo);
        reg_add(methods, &method, NULL, "fuzz", NULL);
        method = rpcd_method_new("fail", fail);
        reg_add(methods, &method, NULL, "fuzz", NULL);
        method = rpcd_method_new("progress", progress);
        reg_add(methods, &method, NULL, "fuzz", NULL);
        /* ABI 1.7: a tool that may run as a task, which a 2026-07-28 request that declares the
         * extension calls through the task store. */
        method = rpcd_method_new("long", echo);
        method.flags = RPCD_METHOD_TASK;
        reg_add(methods, &method, NULL, "fuzz", NULL);
        /* ABI 1.5 roles: URIs, template matching, prompt arguments and completions. */
        static const struct {
            const char *name;
            uint32_t role;
            const char *descriptor;
        } roles[] = {
            {"resource", RPCD_MCP_RESOURCE, "{\"uri\":\"f://a\",\"name\":\"a\"}"},
            {"template", RPCD_MCP_RESOURCE,
             "{\"uriTemplate\":\"f://{a}/x{b}/{+c}\",\"name\":\"t\"}"},
            {"prompt", RPCD_MCP_PROMPT,
             "{\"name\":\"p\",\"arguments\":[{\"name\":\"w\",\"required\":true}]}"},
            {"complete", RPCD_MCP_COMPLETION, "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"p\"}}"},
        };
        for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++) {
            method = rpcd_method_new(roles[i].name, echo);
            method.mcp_role = roles[i].role;
            method.mcp_descriptor = roles[i].descriptor;
            reg_add(methods, &method, NULL, "fuzz", NULL);
        }
        rpcd_config *config;
        char error[256];
        if (cfg_load_string("", "/fuzz/rpcd.conf", &config, error, sizeof error) != 0 ||
            mcp_tools_new(methods, config, &tools, error, sizeof error) != 0)
            abort();
        cfg_free(config);
    }
    /* Small limits, so that inputs of a few kilobytes reach them. */
    srv_options options = {
        .limits.max_line_bytes = 2048,
        .limits.max_depth = 32,
        .limits.max_batch = 16,
        .limits.workers = 0,
        .limits.max_in_flight = 64,
        .shutdown_grace_ms = 0,
        .ordered = size > 0 && (data[0] & 1),
        .tools = tools,
    };
    feed input = {data, size, 0, size > 0 ? 1 + data[size - 1] % 61 : 1};
    sink output = {NULL, 0};
    int result = srv_serve(methods, &options, read_feed, &input, write_sink, &output);
    if (result != SRV_DONE)
        abort();
    oracle_limits limits = {options.limits.max_line_bytes, options.limits.max_depth,
                            options.limits.max_batch};
    if (oracle_check(&limits, (const char *)data, size, output.data, output.length) != 0)
        abort();
    free(output.data);
    return 0;
}
