/* SPDX-License-Identifier: MIT */
/*
 * Fixture: tools that may run as MCP tasks (ABI 1.7). Each waits {"ms":N}, or until the file
 * {"until":PATH} exists, or until it is cancelled, before it ends: tasks.wait with
 * {"waited":true,"pad":...} ({"pad":N} bytes), having created the file {"mark":PATH} when it
 * started; tasks.required the same, a tool that
 * requires a task; tasks.tool_error with a tool error; tasks.protocol_error with -32042, an
 * error of MCP's range; tasks.ask asks for {"ask":K} confirmations (after its wait), keeping a
 * state, and on its next round (after the file {"then":PATH} exists, if given) reports the
 * answers and the state; tasks.twice asks twice, one question a round, after its wait. tasks.plain
 * is the wait of a plugin built without the task flag.
 */
#include <rpcd/plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const rpcd_host_api *host;

static const char form[] = "{\"message\":\"Go on?\",\"requestedSchema\":{\"type\":\"object\","
                           "\"properties\":{\"ok\":{\"type\":\"boolean\"}},\"required\":[\"ok\"]}}";

/* The whole number after "key": in params, or fallback. */
static long number_of(const char *params, size_t length, const char *key, long fallback)
{
    char pattern[32], text[256];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    snprintf(text, sizeof text, "%.*s", (int)(length < 255 ? length : 255), params);
    const char *at = strstr(text, pattern);
    return at ? strtol(at + strlen(pattern), NULL, 10) : fallback;
}

/* Waits ms, or until the file params name in "until" exists (a minute at most), or until the
 * call is cancelled: 0, or -1 when cancelled. */
static int wait_for(rpcd_call *call, const char *params, size_t length, const char *key, long ms)
{
    char text[512], path[256] = "", pattern[32];
    snprintf(text, sizeof text, "%.*s", (int)(length < 511 ? length : 511), params);
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    const char *until = strstr(text, pattern);
    if (until) {
        snprintf(path, sizeof path, "%s", until + strlen(pattern));
        char *end = strchr(path, '"');
        if (end)
            *end = '\0';
        ms = 60000;
    }
    for (long i = 0; i < ms; i++) {
        if (host->call_is_cancelled(call))
            return -1;
        if (path[0] && access(path, F_OK) == 0)
            return 0;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return host->call_is_cancelled(call) ? -1 : 0;
}

/* Creates the file {"mark":PATH} names, if any: the handler has started. */
static void mark_start(const char *params, size_t length)
{
    char text[512], path[256];
    snprintf(text, sizeof text, "%.*s", (int)(length < 511 ? length : 511), params);
    const char *mark = strstr(text, "\"mark\":\"");
    if (!mark)
        return;
    snprintf(path, sizeof path, "%s", mark + 8);
    char *end = strchr(path, '"');
    if (end)
        *end = '\0';
    FILE *file = fopen(path, "w");
    if (file)
        fclose(file);
}

static int wait_ms(rpcd_call *call, const char *params, size_t length, long ms)
{
    mark_start(params, length);
    return wait_for(call, params, length, "until", ms);
}

/* {"waited":true}, and "pad" with {"pad":N} N bytes of padding (at most 1 MiB). */
static int waits(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    if (wait_ms(call, params, params_length, number_of(params, params_length, "ms", 0)) != 0) {
        fprintf(stderr, "tasks: a call was cancelled while it waited\n");
        return host->call_fail(call, RPCD_ERR_CANCELLED, "cancelled while waiting", NULL, 0);
    }
    long pad = number_of(params, params_length, "pad", 0);
    pad = pad < 0 ? 0 : pad > (1 << 20) ? (1 << 20) : pad;
    char *text = malloc((size_t)pad + 64);
    if (!text)
        return host->call_fail(call, RPCD_ERR_NO_MEMORY, "no memory", NULL, 0);
    int used = snprintf(text, 64, "{\"waited\":true,\"pad\":\"");
    memset(text + used, 'p', (size_t)pad);
    memcpy(text + used + pad, "\"}", 3);
    int status = host->call_result(call, text, strlen(text));
    free(text);
    return status;
}

static int tool_error(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    wait_ms(call, params, params_length, number_of(params, params_length, "ms", 0));
    return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "the job failed", NULL, 0);
}

static int protocol_error(rpcd_call *call, const char *params, size_t params_length,
                          void *user_data)
{
    (void)user_data;
    wait_ms(call, params, params_length, number_of(params, params_length, "ms", 0));
    return host->call_fail_code(call, -32042, "the job broke the protocol", "{\"why\":\"test\"}",
                                14);
}

/* Round 1 (no answers): waits, asks K questions a1..aK, keeps "round-state". Round 2: reports
 * every answer and the state. */
static int ask(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    long count = number_of(params, params_length, "ask", 1);
    count = count < 1 ? 1 : count > 8 ? 8 : count;
    char key[32], answer[512], state[64], text[2048];
    size_t answer_length = 0, state_length = 0;
    if (host->call_input(call, "a1", answer, sizeof answer, &answer_length) != RPCD_OK)
        return host->call_fail(call, RPCD_ERR_INTERNAL, "cannot read the round", NULL, 0);
    if (answer_length > 0) {
        /* The file {"then":PATH} names, if any, before it ends. */
        if (wait_for(call, params, params_length, "then", 0) != 0)
            return host->call_fail(call, RPCD_ERR_CANCELLED, "cancelled while waiting", NULL, 0);
        if (host->call_state(call, state, sizeof state, &state_length) != RPCD_OK)
            return host->call_fail(call, RPCD_ERR_INTERNAL, "cannot read the state", NULL, 0);
        int used = snprintf(text, sizeof text, "{\"state\":\"%.*s\",\"answers\":[",
                            (int)state_length, state);
        for (long i = 1; i <= count && used < (int)sizeof text - 600; i++) {
            snprintf(key, sizeof key, "a%ld", i);
            if (host->call_input(call, key, answer, sizeof answer, &answer_length) != RPCD_OK)
                return host->call_fail(call, RPCD_ERR_INTERNAL, "an answer is missing", NULL, 0);
            used += snprintf(text + used, sizeof text - used, "%s%s", i > 1 ? "," : "", answer);
        }
        snprintf(text + used, sizeof text - used, "]}");
        return host->call_result(call, text, strlen(text));
    }
    if (wait_ms(call, params, params_length, number_of(params, params_length, "ms", 0)) != 0)
        return host->call_fail(call, RPCD_ERR_CANCELLED, "cancelled while waiting", NULL, 0);
    for (long i = 1; i <= count; i++) {
        snprintf(key, sizeof key, "a%ld", i);
        if (host->call_ask(call, key, "elicitation/create", form, sizeof form - 1) != RPCD_OK)
            return host->call_fail(call, RPCD_ERR_INTERNAL, "cannot ask", NULL, 0);
    }
    if (host->call_set_state(call, "round-state", 11) != RPCD_OK)
        return host->call_fail(call, RPCD_ERR_INTERNAL, "cannot keep the state", NULL, 0);
    return RPCD_INPUT_REQUIRED;
}

/* Asks "q" once a round, twice in all (the state counts the rounds), then reports both. */
static int twice(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    if (wait_ms(call, params, params_length, 0) != 0)
        return host->call_fail(call, RPCD_ERR_CANCELLED, "cancelled while waiting", NULL, 0);
    char answer[512], state[512], text[1200];
    size_t answer_length = 0, state_length = 0;
    if (host->call_input(call, "q", answer, sizeof answer, &answer_length) != RPCD_OK ||
        host->call_state(call, state, sizeof state - 1, &state_length) != RPCD_OK)
        return host->call_fail(call, RPCD_ERR_INTERNAL, "cannot read the round", NULL, 0);
    state[state_length] = '\0';
    if (answer_length > 0 && state_length > 0 && strncmp(state, "second:", 7) == 0) {
        snprintf(text, sizeof text, "{\"first\":%s,\"second\":%.*s}", state + 7, (int)answer_length,
                 answer);
        return host->call_result(call, text, strlen(text));
    }
    if (host->call_ask(call, "q", "elicitation/create", form, sizeof form - 1) != RPCD_OK)
        return host->call_fail(call, RPCD_ERR_INTERNAL, "cannot ask", NULL, 0);
    if (answer_length > 0) {
        snprintf(text, sizeof text, "second:%.*s", (int)answer_length, answer);
        host->call_set_state(call, text, strlen(text));
    }
    return RPCD_INPUT_REQUIRED;
}

static int tasks_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state, char *error,
                      size_t error_size)
{
    static const struct {
        const char *name;
        rpcd_handler_fn handler;
        uint32_t flags;
    } methods[] = {
        {"tasks.wait", waits, RPCD_METHOD_TASK},
        {"tasks.required", waits, RPCD_METHOD_TASK_REQUIRED},
        {"tasks.tool_error", tool_error, RPCD_METHOD_TASK},
        {"tasks.protocol_error", protocol_error, RPCD_METHOD_TASK},
        {"tasks.ask", ask, RPCD_METHOD_TASK},
        {"tasks.twice", twice, RPCD_METHOD_TASK},
        {"tasks.plain", waits, 0},
    };
    (void)state;
    host = host_api;
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        rpcd_method method = rpcd_method_new(methods[i].name, methods[i].handler);
        method.flags = methods[i].flags;
        int status = host->register_method(plugin, &method);
        if (status != RPCD_OK) {
            snprintf(error, error_size, "cannot register %s (status %d)", methods[i].name, status);
            return status;
        }
    }
    return RPCD_OK;
}

RPCD_PLUGIN_DEFINE("tasks", "1.0.0", tasks_init, NULL);
