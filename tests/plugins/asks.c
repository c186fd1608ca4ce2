/* SPDX-License-Identifier: MIT */
/*
 * Fixture: a plugin that asks the client mid-call (ABI 1.6), in rounds. asks.confirm asks for a
 * confirmation and keeps a state, then reports the answer and the state; asks.deferred asks
 * from a deferred call; asks.nothing claims to ask without a question; asks.probe reports what
 * each host function of 1.6 returns for each class of argument; asks.late waits until it is
 * cancelled, then asks. The prompt asks_prompt and the resource asks://topic ask as asks.confirm
 * does, and answer with what they were told.
 */
#include <rpcd/plugin.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

static const rpcd_host_api *host;

static const char form[] = "{\"message\":\"Delete it?\",\"requestedSchema\":{\"type\":\"object\","
                           "\"properties\":{\"ok\":{\"type\":\"boolean\"}},\"required\":[\"ok\"]}}";
static const char missing[] = "{\"requiredCapabilities\":{\"elicitation\":{}}}";

/* Round 1 asks and keeps "kept-state"; round 2 tells the answer and the state it found. */
static int confirm(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    char answer[512], state[64], text[1024];
    size_t answer_length = 0, state_length = 0;
    (void)params;
    (void)params_length;
    (void)user_data;
    if (host->call_input(call, "confirm", answer, sizeof answer, &answer_length) != RPCD_OK ||
        host->call_state(call, state, sizeof state, &state_length) != RPCD_OK)
        return host->call_fail(call, RPCD_ERR_INTERNAL, "cannot read the round", NULL, 0);
    if (answer_length > 0) {
        snprintf(text, sizeof text, "{\"answer\":%s,\"state\":\"%.*s\"}", answer, (int)state_length,
                 state);
        return host->call_result(call, text, strlen(text));
    }
    int asked = host->call_ask(call, "confirm", "elicitation/create", form, sizeof form - 1);
    if (asked == RPCD_ERR_UNSUPPORTED)
        return host->call_fail_code(call, -32021, "Missing required client capability", missing,
                                    sizeof missing - 1);
    if (asked != RPCD_OK || host->call_set_state(call, "kept-state", 10) != RPCD_OK)
        return host->call_fail(call, RPCD_ERR_INTERNAL, "cannot ask", NULL, 0);
    return RPCD_INPUT_REQUIRED;
}

/* The same question, the round ended through call_complete. */
static int deferred(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params;
    (void)params_length;
    (void)user_data;
    if (host->call_ask(call, "roots", "roots/list", NULL, 0) != RPCD_OK)
        return host->call_fail(call, RPCD_ERR_INTERNAL, "cannot ask", NULL, 0);
    host->call_complete(call, RPCD_INPUT_REQUIRED);
    return RPCD_DEFERRED;
}

/* Asks only once the call is cancelled (a minute at most): a round that ends so is answered as
 * cancelled, nobody asked. */
static int late(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params;
    (void)params_length;
    (void)user_data;
    for (int i = 0; i < 60000 && !host->call_is_cancelled(call); i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    if (host->call_ask(call, "confirm", "elicitation/create", form, sizeof form - 1) != RPCD_OK)
        return host->call_fail(call, RPCD_ERR_INTERNAL, "cannot ask", NULL, 0);
    return RPCD_INPUT_REQUIRED;
}

static int nothing(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)call;
    (void)params;
    (void)params_length;
    (void)user_data;
    return RPCD_INPUT_REQUIRED;
}

/* Appends "name":status to the report. */
static void report(char *out, size_t size, const char *name, int status)
{
    size_t used = strlen(out);
    snprintf(out + used, size - used, "%s\"%s\":%d", used > 1 ? "," : "", name, status);
}

/* What each host function of 1.6 returns for each class of argument; the result, nothing asked
 * (a question asked here is dropped: the handler returns RPCD_OK). */
static int probe(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    char out[2048] = "{", key[80], small[2];
    size_t length = 0;
    static const char sampling[] = "{\"messages\":[],\"maxTokens\":1}";
    static const char url[] =
        "{\"mode\":\"url\",\"url\":\"https://example.org\",\"message\":\"m\"}";
    static char big[16 * 1024 + 1];
    (void)params;
    (void)params_length;
    (void)user_data;
    memset(key, 'k', 65);
    key[65] = '\0';
    report(out, sizeof out, "form",
           host->call_ask(call, "a", "elicitation/create", form, sizeof form - 1));
    report(out, sizeof out, "url",
           host->call_ask(call, "b", "elicitation/create", url, sizeof url - 1));
    report(out, sizeof out, "sampling",
           host->call_ask(call, "c", "sampling/createMessage", sampling, sizeof sampling - 1));
    report(out, sizeof out, "roots", host->call_ask(call, "d", "roots/list", NULL, 0));
    report(out, sizeof out, "empty_key", host->call_ask(call, "", "roots/list", NULL, 0));
    report(out, sizeof out, "long_key", host->call_ask(call, key, "roots/list", NULL, 0));
    report(out, sizeof out, "bad_utf8_key", host->call_ask(call, "\xff", "roots/list", NULL, 0));
    report(out, sizeof out, "null_method", host->call_ask(call, "e", NULL, NULL, 0));
    report(out, sizeof out, "other_method", host->call_ask(call, "e", "tools/list", NULL, 0));
    report(out, sizeof out, "array_params", host->call_ask(call, "e", "roots/list", "[]", 2));
    report(out, sizeof out, "bad_json", host->call_ask(call, "e", "roots/list", "{", 1));
    int many = RPCD_OK, refused_at = -1;
    for (int i = 0; i < 16 && many == RPCD_OK; i++) {
        snprintf(key, sizeof key, "q%d", i);
        many = host->call_ask(call, key, "roots/list", NULL, 0);
        refused_at = many == RPCD_OK ? -1 : i;
    }
    report(out, sizeof out, "sixteen", many);
    report(out, sizeof out, "refused_at", refused_at);
    report(out, sizeof out, "seventeenth", host->call_ask(call, "q16", "roots/list", NULL, 0));
    report(out, sizeof out, "again", host->call_ask(call, "q3", "roots/list", NULL, 0));
    report(out, sizeof out, "state_big", host->call_set_state(call, big, sizeof big));
    report(out, sizeof out, "state_null", host->call_set_state(call, NULL, 1));
    report(out, sizeof out, "state", host->call_set_state(call, "abc", 3));
    report(out, sizeof out, "input_none",
           host->call_input(call, "a", small, sizeof small, &length));
    report(out, sizeof out, "input_null_key",
           host->call_input(call, NULL, small, sizeof small, &length));
    report(out, sizeof out, "state_none", host->call_state(call, small, sizeof small, &length));
    report(out, sizeof out, "state_length", (int)length);
    size_t used = strlen(out);
    snprintf(out + used, sizeof out - used, "}");
    return host->call_result(call, out, strlen(out));
}

/* Asks for a topic (keeping "prompt-state"), then tells it, and its state, in a message. */
static int prompt(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    char answer[512], state[64], text[1024];
    size_t answer_length = 0, state_length = 0;
    (void)params, (void)params_length, (void)user_data;
    if (host->call_input(call, "topic", answer, sizeof answer, &answer_length) != RPCD_OK ||
        host->call_state(call, state, sizeof state, &state_length) != RPCD_OK)
        return host->call_fail(call, RPCD_ERR_INTERNAL, "cannot read the round", NULL, 0);
    if (answer_length == 0) {
        int asked = host->call_ask(call, "topic", "elicitation/create", form, sizeof form - 1);
        if (asked == RPCD_ERR_UNSUPPORTED)
            return host->call_fail_code(call, -32021, "Missing required client capability", missing,
                                        sizeof missing - 1);
        if (asked != RPCD_OK || host->call_set_state(call, "prompt-state", 12) != RPCD_OK)
            return host->call_fail(call, RPCD_ERR_INTERNAL, "cannot ask", NULL, 0);
        return RPCD_INPUT_REQUIRED;
    }
    /* A string result is one user message of text: the answer, escaped, and the state. */
    snprintf(text, sizeof text,
             "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":"
             "\"text\",\"text\":\"state %.*s\"}}],\"description\":%s}",
             (int)state_length, state, answer_length > 0 ? "\"answered\"" : "\"\"");
    return host->call_result(call, text, strlen(text));
}

/* The resource asks://topic: asks for a topic first, then reads "told". */
static int resource(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    char answer[512];
    size_t answer_length = 0;
    (void)params, (void)params_length, (void)user_data;
    if (host->call_input(call, "topic", answer, sizeof answer, &answer_length) != RPCD_OK)
        return host->call_fail(call, RPCD_ERR_INTERNAL, "cannot read the round", NULL, 0);
    if (answer_length == 0) {
        if (host->call_ask(call, "topic", "elicitation/create", form, sizeof form - 1) != RPCD_OK)
            return host->call_fail(call, RPCD_ERR_INTERNAL, "cannot ask", NULL, 0);
        return RPCD_INPUT_REQUIRED;
    }
    static const char told[] = "\"told\"";
    return host->call_result(call, told, sizeof told - 1);
}

static int asks_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state, char *error,
                     size_t error_size)
{
    static const struct {
        const char *name;
        rpcd_handler_fn handler;
    } methods[] = {
        {"asks.confirm", confirm}, {"asks.deferred", deferred}, {"asks.nothing", nothing},
        {"asks.probe", probe},     {"asks.late", late},
    };
    (void)state;
    host = host_api;
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        rpcd_method method = rpcd_method_new(methods[i].name, methods[i].handler);
        int status = host->register_method(plugin, &method);
        if (status != RPCD_OK) {
            snprintf(error, error_size, "cannot register %s (status %d)", methods[i].name, status);
            return status;
        }
    }
    rpcd_method asking_prompt = rpcd_method_new("asks.prompt", prompt);
    asking_prompt.mcp_role = RPCD_MCP_PROMPT;
    asking_prompt.mcp_descriptor = "{\"name\":\"asks_prompt\",\"description\":\"Asks first\"}";
    rpcd_method asking_resource = rpcd_method_new("asks.resource", resource);
    asking_resource.mcp_role = RPCD_MCP_RESOURCE;
    asking_resource.mcp_descriptor = "{\"uri\":\"asks://topic\",\"name\":\"topic\"}";
    int status = host->register_method(plugin, &asking_prompt);
    if (status == RPCD_OK)
        status = host->register_method(plugin, &asking_resource);
    if (status != RPCD_OK)
        snprintf(error, error_size, "cannot register the prompt or the resource (status %d)",
                 status);
    return status;
}

RPCD_PLUGIN_DEFINE("asks", "1.0.0", asks_init, NULL);
