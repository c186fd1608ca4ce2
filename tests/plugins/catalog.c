/* SPDX-License-Identifier: MIT */
/*
 * Fixture: every ABI 1.5 role. Resources (a string, a whole ReadResourceResult, a JSON value,
 * a result of the wrong shape), a template, prompts (a string, whole messages, wrong shape), a
 * completion of 150 values filtered by the typed prefix, a hidden method, and a tool that
 * announces a resource update and logs a line at each level.
 */
#include <rpcd/plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const rpcd_host_api *host;
static rpcd_plugin *self;

static int say(rpcd_call *call, const char *json)
{
    return host->call_result(call, json, strlen(json));
}

static int hello(rpcd_call *call, const char *params, size_t length, void *user_data)
{
    (void)params, (void)length, (void)user_data;
    return say(call, "\"Hello, reader.\\n\"");
}

static int whole(rpcd_call *call, const char *params, size_t length, void *user_data)
{
    (void)params, (void)length, (void)user_data;
    return say(call, "{\"contents\":[{\"uri\":\"mem://whole\",\"mimeType\":\"image/png\","
                     "\"blob\":\"iVBORw0KGgo=\"},{\"uri\":\"mem://whole#2\",\"text\":\"two\"}]}");
}

static int value(rpcd_call *call, const char *params, size_t length, void *user_data)
{
    (void)params, (void)length, (void)user_data;
    return say(call, "[1,2,3]");
}

static int wrong(rpcd_call *call, const char *params, size_t length, void *user_data)
{
    (void)params, (void)length, (void)user_data;
    return say(call, "{\"contents\":[{\"text\":\"no uri\"}]}");
}

/* A JSON string of text (length bytes, no control characters) in json (size bytes). */
static size_t quote(const char *text, size_t length, char *json, size_t size)
{
    size_t at = 0;
    json[at++] = '"';
    for (size_t i = 0; i < length && at < size - 3; i++) {
        if (text[i] == '"' || text[i] == '\\')
            json[at++] = '\\';
        json[at++] = text[i];
    }
    json[at++] = '"';
    return at;
}

/* The template's handler tells what it was given: the URI and the variables, as text. */
static int item(rpcd_call *call, const char *params, size_t length, void *user_data)
{
    (void)user_data;
    char json[2048];
    return host->call_result(call, json, quote(params, length, json, sizeof json));
}

static int failing(rpcd_call *call, const char *params, size_t length, void *user_data)
{
    (void)params, (void)length, (void)user_data;
    return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "no such page", NULL, 0);
}

/* The prompt's handler: one text made of its params, so the test sees what it got. */
static int greet(rpcd_call *call, const char *params, size_t length, void *user_data)
{
    (void)user_data;
    char text[512];
    int used = snprintf(text, sizeof text, "Greet, given %.*s", (int)length, params);
    char json[1100];
    size_t text_length = used < 0 ? 0 : (size_t)used < sizeof text ? (size_t)used : sizeof text - 1;
    return host->call_result(call, json, quote(text, text_length, json, sizeof json));
}

static int chat(rpcd_call *call, const char *params, size_t length, void *user_data)
{
    (void)params, (void)length, (void)user_data;
    return say(call,
               "{\"description\":\"a chat\",\"messages\":[{\"role\":\"user\",\"content\":"
               "{\"type\":\"text\",\"text\":\"hi\"}},{\"role\":\"assistant\",\"content\":"
               "{\"type\":\"image\",\"data\":\"iVBORw0KGgo=\",\"mimeType\":\"image/png\"}}]}");
}

static int bad_prompt(rpcd_call *call, const char *params, size_t length, void *user_data)
{
    (void)params, (void)length, (void)user_data;
    return say(call, "{\"messages\":[{\"role\":\"system\",\"content\":{\"type\":\"text\","
                     "\"text\":\"no\"}}]}");
}

/* 150 names "a000" to "a149", those starting with the typed value when it is a digit string. */
static int names(rpcd_call *call, const char *params, size_t length, void *user_data)
{
    (void)user_data;
    char text[1024]; /* params are not NUL-terminated */
    snprintf(text, sizeof text, "%.*s", (int)length, params ? params : "");
    const char *at = strstr(text, "\"value\":\"");
    char typed[16] = "";
    if (at)
        sscanf(at + 9, "%15[a0-9]", typed);
    char json[2048] = "[";
    size_t used = 1;
    for (int i = 0; i < 150; i++) {
        char name[8];
        snprintf(name, sizeof name, "a%03d", i);
        if (strncmp(name, typed, strlen(typed)) != 0)
            continue;
        used += (size_t)snprintf(json + used, sizeof json - used, "%s\"%s\"", used > 1 ? "," : "",
                                 name);
    }
    json[used++] = ']';
    return host->call_result(call, json, used);
}

/* Tells of an update of the URI params name ({"uri":"..."}), and logs at every level. */
static int touch(rpcd_call *call, const char *params, size_t length, void *user_data)
{
    (void)user_data;
    char uri[256] = "", text[1024]; /* params are not NUL-terminated */
    snprintf(text, sizeof text, "%.*s", (int)length, params ? params : "");
    const char *at = strstr(text, "\"uri\":\"");
    if (!at || sscanf(at + 7, "%255[^\"]", uri) != 1)
        return RPCD_ERR_INVALID_PARAMS;
    int status = host->resource_updated(self, uri);
    /* One byte longer than resource_updated takes, in process and isolated alike; a buffer
     * of the call's own, since two workers may run touch at once. */
    enum { OVERLONG_SIZE = 64 * 1024 + 2 };
    char *overlong = malloc(OVERLONG_SIZE);
    if (!overlong)
        return RPCD_ERR_NO_MEMORY;
    memset(overlong, 'u', OVERLONG_SIZE - 1);
    overlong[OVERLONG_SIZE - 1] = '\0';
    int refused = host->resource_updated(self, overlong);
    free(overlong);
    /* Methods are registered during init only. */
    rpcd_method late = rpcd_method_new("late", hello);
    int registered = host->register_method(self, &late);
    host->log(self, RPCD_LOG_ERROR, "touched %s (error)", uri);
    host->log(self, RPCD_LOG_WARNING, "touched %s (warning)", uri);
    host->log_text(self, RPCD_LOG_INFO, "touched (info)");
    host->log(self, RPCD_LOG_DEBUG, "touched %s (debug)", uri);
    char json[32];
    snprintf(json, sizeof json, "[%d,%d,%d]", status, refused, registered);
    return say(call, json);
}

static int add(const char *name, rpcd_handler_fn handler, uint32_t role, const char *descriptor)
{
    rpcd_method method = rpcd_method_new(name, handler);
    method.mcp_role = role;
    method.mcp_descriptor = descriptor;
    return host->register_method(self, &method);
}

static int catalog_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state,
                        char *error, size_t error_size)
{
    (void)state;
    host = host_api;
    self = plugin;
    if (!RPCD_HOST_HAS(host, resource_updated)) {
        snprintf(error, error_size, "the daemon has no resource_updated");
        return RPCD_ERR_UNSUPPORTED;
    }
    if (host->resource_updated(plugin, "mem://hello") != RPCD_ERR_UNSUPPORTED) {
        snprintf(error, error_size, "resource_updated during init was not refused");
        return RPCD_ERR_INTERNAL;
    }
    /* Descriptors register_method must refuse, each with RPCD_ERR_INVALID_ARGUMENT. */
    static const struct {
        uint32_t role;
        const char *descriptor;
    } refused[] = {
        {9, NULL},
        {RPCD_MCP_TOOL, "{\"uri\":\"mem://x\",\"name\":\"x\"}"},
        {RPCD_MCP_HIDDEN, "{}"},
        {RPCD_MCP_RESOURCE, NULL},
        {RPCD_MCP_RESOURCE, "[1]"},
        {RPCD_MCP_RESOURCE, "{\"name\":\"x\"}"},
        {RPCD_MCP_RESOURCE, "{\"uri\":\"mem://x\",\"uriTemplate\":\"mem://{x}\",\"name\":\"x\"}"},
        {RPCD_MCP_RESOURCE, "{\"uri\":\"mem://x\"}"},
        {RPCD_MCP_RESOURCE, "{\"uri\":\"mem://x\",\"name\":\"x\",\"mimeType\":1}"},
        {RPCD_MCP_RESOURCE, "{\"uriTemplate\":\"mem://{?q}\",\"name\":\"x\"}"},
        {RPCD_MCP_RESOURCE, "{\"uriTemplate\":\"mem://{a}{b}\",\"name\":\"x\"}"},
        {RPCD_MCP_RESOURCE, "{\"uriTemplate\":\"mem://{a\",\"name\":\"x\"}"},
        {RPCD_MCP_PROMPT, "{\"title\":\"no name\"}"},
        {RPCD_MCP_PROMPT, "{\"name\":\"p\",\"arguments\":[{\"required\":true}]}"},
        {RPCD_MCP_PROMPT, "{\"name\":\"p\",\"arguments\":{}}"},
        {RPCD_MCP_COMPLETION, "{\"ref\":{\"type\":\"ref/tool\",\"name\":\"t\"}}"},
        {RPCD_MCP_COMPLETION, "{\"ref\":{\"type\":\"ref/resource\"}}"},
        {RPCD_MCP_COMPLETION, "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"p\"}"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        if (add("refused", hello, refused[i].role, refused[i].descriptor) !=
            RPCD_ERR_INVALID_ARGUMENT) {
            snprintf(error, error_size, "descriptor %zu was not refused", i);
            return RPCD_ERR_INTERNAL;
        }
    }
    int failed = 0;
    failed |= add("mem.hello", hello, RPCD_MCP_RESOURCE,
                  "{\"uri\":\"mem://hello\",\"name\":\"hello\",\"title\":\"Hello\","
                  "\"mimeType\":\"text/plain\"}");
    failed |=
        add("mem.whole", whole, RPCD_MCP_RESOURCE, "{\"uri\":\"mem://whole\",\"name\":\"whole\"}");
    failed |=
        add("mem.value", value, RPCD_MCP_RESOURCE, "{\"uri\":\"mem://value\",\"name\":\"value\"}");
    failed |=
        add("mem.wrong", wrong, RPCD_MCP_RESOURCE, "{\"uri\":\"mem://wrong\",\"name\":\"wrong\"}");
    failed |= add("mem.failing", failing, RPCD_MCP_RESOURCE,
                  "{\"uri\":\"mem://failing\",\"name\":\"failing\"}");
    failed |= add("mem.item", item, RPCD_MCP_RESOURCE,
                  "{\"uriTemplate\":\"mem://item/{id}/{+rest}\",\"name\":\"item\"}");
    failed |= add("prompt.greet", greet, RPCD_MCP_PROMPT,
                  "{\"name\":\"greet\",\"description\":\"Greets someone\",\"arguments\":"
                  "[{\"name\":\"who\",\"required\":true},{\"name\":\"mood\"}]}");
    failed |= add("prompt.chat", chat, RPCD_MCP_PROMPT, "{\"name\":\"chat\"}");
    failed |= add("prompt.bad", bad_prompt, RPCD_MCP_PROMPT, "{\"name\":\"bad\"}");
    failed |= add("complete.greet", names, RPCD_MCP_COMPLETION,
                  "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"greet\"}}");
    failed |= add("hidden.ping", hello, RPCD_MCP_HIDDEN, NULL);
    failed |= add("touch", touch, RPCD_MCP_TOOL, NULL);
    return failed ? RPCD_ERR_INTERNAL : RPCD_OK;
}

RPCD_PLUGIN_DEFINE("catalog", "1.0.0", catalog_init, NULL);
