/* SPDX-License-Identifier: MIT */
/*
 * Fixture: what the official MCP server conformance suite expects of the server under test
 * (tests/mcp-conformance/), written against ABI 1.7: its tools (content of every kind, logging,
 * progress, an error, an argument the HTTP transport mirrors in a header, a client capability
 * required, questions to the client: a sampling, forms, its roots; long ones that run as MCP
 * tasks), its resources and resource template, its prompts and their completions.
 */
#include <rpcd/plugin.h>

#include <jansson.h>

#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const rpcd_host_api *host;
static rpcd_plugin *self;
/* How long test_reconnection runs: longer than the bridge lets a POST stream wait. */
static long reconnection_ms = 1500;

/* A 1x1 red PNG and a short silent 8-bit WAV, made for this fixture. */
#define PNG_BASE64                                                                                 \
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
#define WAV_BASE64 "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="

/* Sleeps ms milliseconds in short steps; returns -1 as soon as the call is cancelled. */
static int pause_ms(rpcd_call *call, long ms)
{
    while (ms > 0) {
        long step = ms < 10 ? ms : 10;
        struct timespec delay = {0, step * 1000000L};
        nanosleep(&delay, NULL);
        ms -= step;
        if (host->call_is_cancelled(call))
            return -1;
    }
    return 0;
}

static int text_result(rpcd_call *call, const char *json)
{
    return host->call_result(call, json, strlen(json));
}

static int tool_result(rpcd_call *call, const char *json)
{
    return host->call_tool_result(call, json, strlen(json));
}

/* Hands a jansson value over as the call's result and releases it (stolen). */
static int steal_result(rpcd_call *call, json_t *value)
{
    if (!value)
        return RPCD_ERR_NO_MEMORY;
    char *text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(value);
    if (!text)
        return RPCD_ERR_NO_MEMORY;
    int status = host->call_result(call, text, strlen(text));
    free(text);
    return status;
}

static json_t *parse_params(const char *params, size_t params_length)
{
    return params ? json_loadb(params, params_length, 0, NULL) : NULL;
}

/* ---- tools */

static int simple_text(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    /* A string result is the tool's text, as it is. */
    return text_result(call, "\"This is a simple text response for testing.\"");
}

static int image_content(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    return tool_result(call, "{\"content\":[{\"type\":\"image\",\"data\":\"" PNG_BASE64 "\","
                             "\"mimeType\":\"image/png\"}]}");
}

static int audio_content(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    return tool_result(call, "{\"content\":[{\"type\":\"audio\",\"data\":\"" WAV_BASE64 "\","
                             "\"mimeType\":\"audio/wav\"}]}");
}

static int embedded_resource(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    return tool_result(call, "{\"content\":[{\"type\":\"resource\",\"resource\":{"
                             "\"uri\":\"test://embedded-resource\",\"mimeType\":\"text/plain\","
                             "\"text\":\"This is an embedded resource content.\"}}]}");
}

static int multiple_content_types(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    return tool_result(
        call, "{\"content\":["
              "{\"type\":\"text\",\"text\":\"Multiple content types test:\"},"
              "{\"type\":\"image\",\"data\":\"" PNG_BASE64 "\",\"mimeType\":\"image/png\"},"
              "{\"type\":\"resource\",\"resource\":{\"uri\":\"test://mixed-content-resource\","
              "\"mimeType\":\"application/json\","
              "\"text\":\"{\\\"test\\\":\\\"data\\\",\\\"value\\\":123}\"}}]}");
}

/* Three log lines 50 ms apart: the client that asked for them gets notifications/message. */
static int tool_with_logging(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    host->log(self, RPCD_LOG_INFO, "Tool execution started");
    if (pause_ms(call, 50) < 0)
        return RPCD_ERR_CANCELLED;
    host->log(self, RPCD_LOG_INFO, "Tool processing data");
    if (pause_ms(call, 50) < 0)
        return RPCD_ERR_CANCELLED;
    host->log(self, RPCD_LOG_INFO, "Tool execution completed");
    return text_result(call, "\"Tool with logging executed successfully\"");
}

/* Three log lines at once: a stateless request that named no log level must hear none of them
 * (the suite reads the answer's stream for half a second, rpcd's start-up included). */
static int logging_tool(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    host->log(self, RPCD_LOG_INFO, "Logging tool started");
    host->log(self, RPCD_LOG_WARNING, "Logging tool warning");
    host->log(self, RPCD_LOG_ERROR, "Logging tool error");
    return text_result(call, "\"Logging tool executed successfully\"");
}

/* Progress 0, 50 and 100 of 100, 50 ms apart (sent only when the request has a token). */
static int tool_with_progress(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    for (int step = 0; step <= 2; step++) {
        if (step > 0 && pause_ms(call, 50) < 0)
            return RPCD_ERR_CANCELLED;
        host->call_progress(call, step * 50.0, 100.0, NULL);
    }
    /* The last report and the result apart, as two events rather than one read. */
    if (pause_ms(call, 20) < 0)
        return RPCD_ERR_CANCELLED;
    return text_result(call, "\"Tool with progress executed successfully\"");
}

/* A tool's failure: the client gets a result with isError and the message as text. */
static int error_handling(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    return host->call_fail(call, RPCD_ERR_INTERNAL,
                           "This tool intentionally returns an error for testing", NULL, 0);
}

/* Outlives the transport's patience, so that the client has to resume its stream. */
static int reconnection(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    if (pause_ms(call, reconnection_ms) < 0)
        return RPCD_ERR_CANCELLED;
    return text_result(call, "\"Reconnection test completed successfully\"");
}

/* Its input schema is what counts: JSON Schema 2020-12 keywords, passed through untouched. */
static int json_schema_tool(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)data;
    json_t *arguments = parse_params(params, length);
    json_t *name = json_object_get(arguments, "name");
    char text[256];
    snprintf(text, sizeof text, "Hello, %s",
             json_is_string(name) ? json_string_value(name) : "whoever you are");
    json_decref(arguments);
    return steal_result(call, json_string(text));
}

/* Needs the client's sampling capability (it would ask the model through the client): a client
 * of the stateless revision that did not declare it in _meta gets -32021 naming it (a JSON-RPC
 * error in tools/call, plugins of ABI 1.6 on). One that did is told why the tool still cannot
 * run: rpcd does not hand a retried call the client's inputResponses. */
static int missing_capability(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    char capabilities[4096];
    size_t size = 0;
    int status = host->call_meta(call, "io.modelcontextprotocol/clientCapabilities", capabilities,
                                 sizeof capabilities, &size);
    json_t *declared =
        status == RPCD_OK && size > 0 ? json_loadb(capabilities, size, 0, NULL) : NULL;
    int sampling = json_is_object(json_object_get(declared, "sampling"));
    json_decref(declared);
    if (!sampling) {
        static const char required[] = "{\"requiredCapabilities\":{\"sampling\":{}}}";
        return host->call_fail_code(call, -32021, "Missing required client capability", required,
                                    sizeof required - 1);
    }
    return host->call_fail(call, RPCD_ERR_UNSUPPORTED,
                           "sampling through an input_required result: rpcd does not hand the "
                           "retried call the client's inputResponses",
                           NULL, 0);
}

/* Asks the client for input the stateless revision's way: an input_required result naming an
 * elicitation/create, never a request of its own on the answer's stream. It asks again on every
 * call: rpcd does not hand a retried call the client's inputResponses yet. */
static int streaming_elicitation(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    return tool_result(call, "{\"resultType\":\"input_required\",\"inputRequests\":{\"user_name\":{"
                             "\"method\":\"elicitation/create\",\"params\":{"
                             "\"message\":\"What is your name?\",\"requestedSchema\":{"
                             "\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},"
                             "\"required\":[\"name\"]}}}}}");
}

/* ---- asking the client in rounds (ABI 1.6): the input-required-result scenarios */

typedef struct question {
    const char *key, *method, *params;
} question;

static const char name_form[] =
    "{\"message\":\"What is your name?\",\"requestedSchema\":{\"type\":\"object\","
    "\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}}";
static const char confirm_form[] =
    "{\"message\":\"Please confirm\",\"requestedSchema\":{\"type\":\"object\","
    "\"properties\":{\"ok\":{\"type\":\"boolean\"}},\"required\":[\"ok\"]}}";
static const char color_form[] =
    "{\"message\":\"Step 2: What is your favorite color?\",\"requestedSchema\":{\"type\":"
    "\"object\",\"properties\":{\"color\":{\"type\":\"string\"}},\"required\":[\"color\"]}}";
static const char step1_form[] =
    "{\"message\":\"Step 1: What is your name?\",\"requestedSchema\":{\"type\":\"object\","
    "\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}}";
static const char capital[] = "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":"
                              "\"text\",\"text\":\"What is the capital of France?\"}}],"
                              "\"maxTokens\":100}";
static const char greeting[] = "{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":"
                               "\"text\",\"text\":\"Generate a greeting\"}}],\"maxTokens\":50}";

/* The answer to key of the previous round (new), or NULL. */
static json_t *answer_of(rpcd_call *call, const char *key)
{
    char text[8192];
    size_t length = 0;
    if (host->call_input(call, key, text, sizeof text, &length) != RPCD_OK || length == 0)
        return NULL;
    return json_loadb(text, length, 0, NULL);
}

/* The client's -32021 for a question it cannot be asked, naming the capability its method needs. */
static int missing_capability_for(rpcd_call *call, const char *method)
{
    const char *required = "{\"requiredCapabilities\":{\"elicitation\":{}}}";
    if (strcmp(method, "sampling/createMessage") == 0)
        required = "{\"requiredCapabilities\":{\"sampling\":{}}}";
    else if (strcmp(method, "roots/list") == 0)
        required = "{\"requiredCapabilities\":{\"roots\":{}}}";
    return host->call_fail_code(call, -32021, "Missing required client capability", required,
                                strlen(required));
}

/* Asks every question of the round (count of them) and keeps state: RPCD_INPUT_REQUIRED, or the
 * client's -32021 when it cannot be asked. */
static int ask_all(rpcd_call *call, const question *questions, size_t count, const char *state)
{
    for (size_t i = 0; i < count; i++) {
        const char *params = questions[i].params;
        int status = host->call_ask(call, questions[i].key, questions[i].method, params,
                                    params ? strlen(params) : 0);
        if (status == RPCD_ERR_UNSUPPORTED)
            return missing_capability_for(call, questions[i].method);
        if (status != RPCD_OK)
            return host->call_fail(call, RPCD_ERR_INTERNAL, "cannot ask", NULL, 0);
    }
    if (state && host->call_set_state(call, state, strlen(state)) != RPCD_OK)
        return host->call_fail(call, RPCD_ERR_INTERNAL, "cannot keep the state", NULL, 0);
    return RPCD_INPUT_REQUIRED;
}

/* The state the previous round kept is want. */
static bool state_is(rpcd_call *call, const char *want)
{
    char state[256];
    size_t length = 0;
    return host->call_state(call, state, sizeof state, &length) == RPCD_OK &&
           length == strlen(want) && memcmp(state, want, length) == 0;
}

/* The string at content.member of an elicitation's answer, or "". */
static const char *content_string(const json_t *answer, const char *member)
{
    const char *text =
        json_string_value(json_object_get(json_object_get(answer, "content"), member));
    return text ? text : "";
}

/* The text of a model's answer (a CreateMessageResult), or "": its content is one block, or an
 * array of them since 2025-11-25, of which the first counts. */
static const char *sampled_text(const json_t *answer)
{
    const json_t *content = json_object_get(answer, "content");
    if (json_is_array(content))
        content = json_array_get(content, 0);
    const char *text = json_string_value(json_object_get(content, "text"));
    return text ? text : "";
}

static int text_answer(rpcd_call *call, const char *text)
{
    return steal_result(call, json_string(text));
}

static int ask_name(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    json_t *answer = answer_of(call, "user_name");
    if (!answer) {
        static const question asked[] = {{"user_name", "elicitation/create", name_form}};
        return ask_all(call, asked, 1, NULL);
    }
    char text[512];
    snprintf(text, sizeof text, "Hello, %s!", content_string(answer, "name"));
    json_decref(answer);
    return text_answer(call, text);
}

static int ask_model(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    json_t *answer = answer_of(call, "capital_question");
    if (!answer) {
        static const question asked[] = {{"capital_question", "sampling/createMessage", capital}};
        return ask_all(call, asked, 1, NULL);
    }
    char text[512];
    snprintf(text, sizeof text, "The model said: %s", sampled_text(answer));
    json_decref(answer);
    return text_answer(call, text);
}

static int ask_roots(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    json_t *answer = answer_of(call, "client_roots");
    if (!answer) {
        static const question asked[] = {{"client_roots", "roots/list", NULL}};
        return ask_all(call, asked, 1, NULL);
    }
    char text[1024] = "Roots:";
    size_t i;
    json_t *root;
    json_array_foreach(json_object_get(answer, "roots"), i, root)
    {
        size_t used = strlen(text);
        snprintf(text + used, sizeof text - used, " %s",
                 json_string_value(json_object_get(root, "uri"))
                     ? json_string_value(json_object_get(root, "uri"))
                     : "?");
    }
    json_decref(answer);
    return text_answer(call, text);
}

/* requestState and tampered-state: the state round 1 kept must come back for round 2. */
static int ask_with_state(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    json_t *answer = answer_of(call, "confirm");
    if (!answer || !state_is(call, "confirm-pending")) {
        json_decref(answer);
        static const question asked[] = {{"confirm", "elicitation/create", confirm_form}};
        return ask_all(call, asked, 1, "confirm-pending");
    }
    json_decref(answer);
    return text_answer(call, "state-ok: confirmed");
}

static int ask_three(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    static const question asked[] = {
        {"user_name", "elicitation/create", name_form},
        {"greeting", "sampling/createMessage", greeting},
        {"client_roots", "roots/list", NULL},
    };
    json_t *name = answer_of(call, "user_name"), *said = answer_of(call, "greeting"),
           *roots = answer_of(call, "client_roots");
    bool all = name && said && roots && state_is(call, "three");
    char text[512];
    snprintf(text, sizeof text, "Hello, %s! All three answers came.", content_string(name, "name"));
    json_decref(name);
    json_decref(said);
    json_decref(roots);
    return all ? text_answer(call, text) : ask_all(call, asked, 3, "three");
}

static int ask_twice(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    char state[256] = "", text[512];
    size_t size = 0;
    if (host->call_state(call, state, sizeof state, &size) != RPCD_OK)
        size = 0;
    json_t *color = answer_of(call, "step2"), *name = answer_of(call, "step1");
    int status;
    if (size > 6 && strncmp(state, "round-2:", 8) == 0 && color) {
        snprintf(text, sizeof text, "Hello %s, your favorite color is %s.", state + 8,
                 content_string(color, "color"));
        status = text_answer(call, text);
    } else if (size == 7 && strcmp(state, "round-1") == 0 && name) {
        snprintf(text, sizeof text, "round-2:%s", content_string(name, "name"));
        static const question asked[] = {{"step2", "elicitation/create", color_form}};
        status = ask_all(call, asked, 1, text);
    } else {
        static const question asked[] = {{"step1", "elicitation/create", step1_form}};
        status = ask_all(call, asked, 1, "round-1");
    }
    json_decref(color);
    json_decref(name);
    return status;
}

/* Asks what the client can answer of a name, a model's greeting and its roots: call_ask says
 * which it did not declare. */
static int ask_what_it_can(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    static const question wanted[] = {
        {"user_name", "elicitation/create", name_form},
        {"greeting", "sampling/createMessage", greeting},
        {"client_roots", "roots/list", NULL},
    };
    json_t *answered = answer_of(call, "greeting");
    if (answered) {
        json_decref(answered);
        return text_answer(call, "Asked only what the client can answer.");
    }
    size_t asked = 0;
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; i++) {
        const char *text = wanted[i].params;
        if (host->call_ask(call, wanted[i].key, wanted[i].method, text, text ? strlen(text) : 0) ==
            RPCD_OK)
            asked++;
    }
    return asked > 0 ? RPCD_INPUT_REQUIRED : ask_all(call, wanted, 1, NULL);
}

/* ---- asking the client once: the scenarios of the handshake era (tools-call-sampling,
 * tools-call-elicitation, elicitation-sep1034-defaults, elicitation-sep1330-enums). A session of
 * 2025-11-25 gets the question as a request of rpcd's during the call, a client of 2026-07-28 as
 * an input_required result; the handler is the same. */

static const char user_form_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"username\":{\"type\":\"string\",\"description\":\"User's response\"},"
    "\"email\":{\"type\":\"string\",\"description\":\"User's email address\"}},"
    "\"required\":[\"username\",\"email\"]}";
/* SEP-1034: a default for each primitive type, the enum's one of its members. */
static const char defaults_form[] =
    "{\"message\":\"Please review the prefilled values\",\"requestedSchema\":{\"type\":\"object\","
    "\"properties\":{"
    "\"name\":{\"type\":\"string\",\"description\":\"User name\",\"default\":\"John Doe\"},"
    "\"age\":{\"type\":\"integer\",\"description\":\"User age\",\"default\":30},"
    "\"score\":{\"type\":\"number\",\"description\":\"User score\",\"default\":95.5},"
    "\"status\":{\"type\":\"string\",\"description\":\"User status\","
    "\"enum\":[\"active\",\"inactive\",\"pending\"],\"default\":\"active\"},"
    "\"verified\":{\"type\":\"boolean\",\"description\":\"Verification status\","
    "\"default\":true}}}}";
/* SEP-1330: the five shapes of an enum, single and multiple choices, with titles and without,
 * and the deprecated enumNames. */
static const char enums_form[] =
    "{\"message\":\"Please choose from each list\",\"requestedSchema\":{\"type\":\"object\","
    "\"properties\":{"
    "\"untitledSingle\":{\"type\":\"string\",\"description\":\"Choose one\","
    "\"enum\":[\"option1\",\"option2\",\"option3\"]},"
    "\"titledSingle\":{\"type\":\"string\",\"description\":\"Choose one, by title\",\"oneOf\":["
    "{\"const\":\"value1\",\"title\":\"First Option\"},"
    "{\"const\":\"value2\",\"title\":\"Second Option\"},"
    "{\"const\":\"value3\",\"title\":\"Third Option\"}]},"
    "\"legacyEnum\":{\"type\":\"string\",\"description\":\"Choose one (enumNames)\","
    "\"enum\":[\"opt1\",\"opt2\",\"opt3\"],"
    "\"enumNames\":[\"Option One\",\"Option Two\",\"Option Three\"]},"
    "\"untitledMulti\":{\"type\":\"array\",\"description\":\"Choose any\","
    "\"items\":{\"type\":\"string\",\"enum\":[\"option1\",\"option2\",\"option3\"]}},"
    "\"titledMulti\":{\"type\":\"array\",\"description\":\"Choose any, by title\","
    "\"items\":{\"anyOf\":["
    "{\"const\":\"value1\",\"title\":\"First Choice\"},"
    "{\"const\":\"value2\",\"title\":\"Second Choice\"},"
    "{\"const\":\"value3\",\"title\":\"Third Choice\"}]}}}}}";

/* Asks one question whose params (stolen; NULL when they could not be built) come from the
 * call's arguments. */
static int ask_built(rpcd_call *call, const char *key, const char *method, json_t *params)
{
    char *text = params ? json_dumps(params, JSON_COMPACT) : NULL;
    json_decref(params);
    if (!text)
        return RPCD_ERR_NO_MEMORY;
    const question asked[] = {{key, method, text}};
    int status = ask_all(call, asked, 1, NULL);
    free(text);
    return status;
}

/* The string argument name of the call, or NULL (the caller checks it was given). */
static json_t *string_argument(const char *params, size_t length, const char *name)
{
    json_t *arguments = parse_params(params, length);
    json_t *value = json_object_get(arguments, name);
    json_t *copy = json_is_string(value) ? json_string(json_string_value(value)) : NULL;
    json_decref(arguments);
    return copy;
}

/* "<said> action=..., content={...}": what the user did with a form (an ElicitResult, stolen),
 * its content as the client gave it ({} when it gave none: a decline, a cancel). */
static int form_answer(rpcd_call *call, json_t *answer, const char *said)
{
    const char *action = json_string_value(json_object_get(answer, "action"));
    json_t *content = json_object_get(answer, "content");
    char *shown = content ? json_dumps(content, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    json_t *text =
        json_sprintf("%s action=%s, content=%s", said, action ? action : "", shown ? shown : "{}");
    free(shown);
    json_decref(answer);
    return steal_result(call, text);
}

/* Asks the model, through the client, to answer the prompt argument. */
static int sampling(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)data;
    json_t *answer = answer_of(call, "llm");
    if (answer) {
        json_t *text = json_sprintf("LLM response: %s", sampled_text(answer));
        json_decref(answer);
        return steal_result(call, text);
    }
    json_t *prompt = string_argument(params, length, "prompt");
    if (!prompt)
        return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "need a prompt string", NULL, 0);
    return ask_built(call, "llm", "sampling/createMessage",
                     json_pack("{s:[{s:s, s:{s:s, s:o}}], s:i}", "messages", "role", "user",
                               "content", "type", "text", "text", prompt, "maxTokens", 100));
}

/* Shows the user the message argument and asks for a username and an email address. */
static int elicitation(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)data;
    json_t *answer = answer_of(call, "user_input");
    if (answer)
        return form_answer(call, answer, "User response:");
    json_t *message = string_argument(params, length, "message");
    if (!message)
        return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "need a message string", NULL, 0);
    return ask_built(call, "user_input", "elicitation/create",
                     json_pack("{s:o, s:o}", "message", message, "requestedSchema",
                               json_loads(user_form_schema, 0, NULL)));
}

/* A form whose fields have defaults (SEP-1034). */
static int elicitation_defaults(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    json_t *answer = answer_of(call, "prefilled");
    if (answer)
        return form_answer(call, answer, "Elicitation completed:");
    static const question asked[] = {{"prefilled", "elicitation/create", defaults_form}};
    return ask_all(call, asked, 1, NULL);
}

/* A form of enums of every shape (SEP-1330). */
static int elicitation_enums(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    json_t *answer = answer_of(call, "choices");
    if (answer)
        return form_answer(call, answer, "Elicitation completed:");
    static const question asked[] = {{"choices", "elicitation/create", enums_form}};
    return ask_all(call, asked, 1, NULL);
}

/* Its region argument is also sent as the HTTP header Mcp-Param-Region (x-mcp-header in its
 * schema), which the transport checks against the body; the tool itself just names it. */
static int header_param(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)data;
    json_t *arguments = parse_params(params, length);
    json_t *region = json_object_get(arguments, "region");
    char text[256];
    snprintf(text, sizeof text, "Region: %s",
             json_is_string(region) ? json_string_value(region) : "");
    json_decref(arguments);
    return steal_result(call, json_string(text));
}

/* ---- tasks (ABI 1.7, MCP's Tasks extension): the tasks-* scenarios. A tool flagged
 * RPCD_METHOD_TASK that is still running after the config's task_after_ms becomes a task for a
 * client of 2026-07-28 that declares the extension; one flagged RPCD_METHOD_TASK_REQUIRED also
 * refuses (-32021) such a client that does not. These wait longer than task_after_ms, and never
 * ask before then, so that each becomes a task; what asks first is answered as a plain call. */

/* How long the tools below wait before they ask or end: longer than task_after_ms. */
#define TASK_WAIT_MS 1500

static const char delete_form[] =
    "{\"message\":\"Delete the file?\",\"requestedSchema\":{\"type\":\"object\","
    "\"properties\":{\"confirm\":{\"type\":\"boolean\"}},\"required\":[\"confirm\"]}}";

/* The number argument name of the call, or fallback. */
static double number_argument(const char *params, size_t length, const char *name, double fallback)
{
    json_t *arguments = parse_params(params, length);
    json_t *value = json_object_get(arguments, name);
    double number = json_is_number(value) ? json_number_value(value) : fallback;
    json_decref(arguments);
    return number;
}

static int greet(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)data;
    json_t *name = string_argument(params, length, "name");
    char text[512];
    snprintf(text, sizeof text, "Hello, %s!", name ? json_string_value(name) : "World");
    json_decref(name);
    return text_answer(call, text);
}

/* Works for its seconds argument (at most ten minutes), ending as soon as it is cancelled. */
static int slow_compute(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)data;
    double seconds = number_argument(params, length, "seconds", 0);
    seconds = seconds < 0 ? 0 : seconds > 600 ? 600 : seconds;
    if (pause_ms(call, (long)(seconds * 1000)) < 0)
        return RPCD_ERR_CANCELLED;
    json_t *label = string_argument(params, length, "label");
    char text[512];
    snprintf(text, sizeof text, "Computed %s in %g s", label ? json_string_value(label) : "",
             seconds);
    json_decref(label);
    return text_answer(call, text);
}

/* A task that ends in a tool's failure: completed, its result an error. */
static int failing_job(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    if (pause_ms(call, 1000) < 0)
        return RPCD_ERR_CANCELLED;
    return host->call_fail(call, RPCD_ERR_INTERNAL, "The job failed", NULL, 0);
}

/* A task that ends in an error of MCP's protocol range (1.6: a JSON-RPC error): failed. */
static int protocol_error_job(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    if (pause_ms(call, 1000) < 0)
        return RPCD_ERR_CANCELLED;
    return host->call_fail_code(call, -32050, "The job broke the protocol", NULL, 0);
}

/* Asks to confirm the deletion of its filename once it is a task, then says what it did. */
static int confirm_delete(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)data;
    json_t *answer = answer_of(call, "confirm");
    if (!answer) {
        if (pause_ms(call, TASK_WAIT_MS) < 0)
            return RPCD_ERR_CANCELLED;
        static const question asked[] = {{"confirm", "elicitation/create", delete_form}};
        return ask_all(call, asked, 1, NULL);
    }
    json_t *filename = string_argument(params, length, "filename");
    bool confirmed = json_is_true(json_object_get(json_object_get(answer, "content"), "confirm"));
    char text[512];
    snprintf(text, sizeof text, "%s %s", confirmed ? "Deleted" : "Kept",
             filename ? json_string_value(filename) : "the file");
    json_decref(filename);
    json_decref(answer);
    return text_answer(call, text);
}

/* Asks two questions at once once it is a task; ends when both are answered. */
static int multi_input(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    json_t *name = answer_of(call, "name"), *confirm = answer_of(call, "confirm");
    int status;
    if (name && confirm) {
        char text[512];
        snprintf(text, sizeof text, "Hello, %s! Confirmed: %s.", content_string(name, "name"),
                 json_is_true(json_object_get(json_object_get(confirm, "content"), "confirm"))
                     ? "yes"
                     : "no");
        status = text_answer(call, text);
    } else if (pause_ms(call, TASK_WAIT_MS) < 0) {
        status = RPCD_ERR_CANCELLED;
    } else {
        static const question asked[] = {{"name", "elicitation/create", name_form},
                                         {"confirm", "elicitation/create", delete_form}};
        status = ask_all(call, asked, 2, NULL);
    }
    json_decref(name);
    json_decref(confirm);
    return status;
}

/* Asks the user's name at once (so the client is answered directly), then, given it, works
 * long enough to become a task and greets. */
static int tool_with_task(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    json_t *answer = answer_of(call, "user_name");
    if (!answer) {
        static const question asked[] = {{"user_name", "elicitation/create", name_form}};
        return ask_all(call, asked, 1, NULL);
    }
    char text[512];
    snprintf(text, sizeof text, "Hello, %s! The task is done.", content_string(answer, "name"));
    json_decref(answer);
    if (pause_ms(call, TASK_WAIT_MS) < 0)
        return RPCD_ERR_CANCELLED;
    return text_answer(call, text);
}

/* ---- resources */

static int static_text(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    return text_result(call, "\"This is the content of the static text resource.\"");
}

static int static_binary(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    return text_result(call, "{\"contents\":[{\"uri\":\"test://static-binary\","
                             "\"mimeType\":\"image/png\",\"blob\":\"" PNG_BASE64 "\"}]}");
}

static int watched(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    return text_result(call, "\"Watched resource content\"");
}

/* test://template/{id}/data: the contents name the id the URI gave. */
static int template_data(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)data;
    json_t *request = parse_params(params, length);
    const char *uri = json_string_value(json_object_get(request, "uri"));
    const char *id =
        json_string_value(json_object_get(json_object_get(request, "variables"), "id"));
    if (!uri || !id) {
        json_decref(request);
        return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "need uri and variables.id", NULL, 0);
    }
    char text[512];
    snprintf(text, sizeof text, "Data for ID: %s", id);
    json_t *inner = json_pack("{s:s, s:b, s:s}", "id", id, "templateTest", 1, "data", text);
    char *inner_text = inner ? json_dumps(inner, JSON_COMPACT) : NULL;
    json_decref(inner);
    json_t *result = inner_text ? json_pack("{s:[{s:s, s:s, s:s}]}", "contents", "uri", uri,
                                            "mimeType", "application/json", "text", inner_text)
                                : NULL;
    free(inner_text);
    json_decref(request);
    return steal_result(call, result);
}

/* ---- prompts */

static int simple_prompt(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    /* A string result is one user message of text. */
    return text_result(call, "\"This is a simple prompt for testing.\"");
}

static int prompt_with_arguments(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)data;
    json_t *request = parse_params(params, length);
    json_t *arguments = json_object_get(request, "arguments");
    const char *arg1 = json_string_value(json_object_get(arguments, "arg1"));
    const char *arg2 = json_string_value(json_object_get(arguments, "arg2"));
    char text[1024];
    snprintf(text, sizeof text, "Prompt with arguments: arg1='%s', arg2='%s'", arg1 ? arg1 : "",
             arg2 ? arg2 : "");
    json_decref(request);
    return steal_result(call, json_string(text));
}

static int prompt_with_embedded_resource(rpcd_call *call, const char *params, size_t length,
                                         void *data)
{
    (void)data;
    json_t *request = parse_params(params, length);
    const char *uri =
        json_string_value(json_object_get(json_object_get(request, "arguments"), "resourceUri"));
    json_t *result = json_pack(
        "{s:[{s:s, s:{s:s, s:{s:s, s:s, s:s}}}, {s:s, s:{s:s, s:s}}]}", "messages", "role", "user",
        "content", "type", "resource", "resource", "uri", uri ? uri : "", "mimeType", "text/plain",
        "text", "Embedded resource content for testing.", "role", "user", "content", "type", "text",
        "text", "Please process the embedded resource above.");
    json_decref(request);
    return steal_result(call, result);
}

/* Asks the client for the context first (1.6: a prompt asks as a tool does), then uses it. */
static int prompt_asking(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    static const char context_form[] =
        "{\"message\":\"What context should the prompt use?\",\"requestedSchema\":{\"type\":"
        "\"object\",\"properties\":{\"context\":{\"type\":\"string\"}},\"required\":[\"context\"]}"
        "}";
    json_t *answer = answer_of(call, "user_context");
    if (!answer) {
        static const question asked[] = {{"user_context", "elicitation/create", context_form}};
        return ask_all(call, asked, 1, NULL);
    }
    char text[512];
    snprintf(text, sizeof text, "Use this context: %s", content_string(answer, "context"));
    json_decref(answer);
    return steal_result(call, json_pack("{s:[{s:s, s:{s:s, s:s}}]}", "messages", "role", "user",
                                        "content", "type", "text", "text", text));
}

static int prompt_with_image(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)params, (void)length, (void)data;
    return text_result(call, "{\"messages\":["
                             "{\"role\":\"user\",\"content\":{\"type\":\"image\",\"data\":"
                             "\"" PNG_BASE64 "\",\"mimeType\":\"image/png\"}},"
                             "{\"role\":\"user\",\"content\":{\"type\":\"text\","
                             "\"text\":\"Please analyze the image above.\"}}]}");
}

/* ---- completions: the candidates (user_data, NULL-terminated) that start with the value */

static const char *const arg_candidates[] = {"paris", "park", "party", "test", "testing", NULL};
static const char *const id_candidates[] = {"1", "12", "123", "42", NULL};

static int complete(rpcd_call *call, const char *params, size_t length, void *data)
{
    const char *const *candidates = data;
    json_t *request = parse_params(params, length);
    const char *value =
        json_string_value(json_object_get(json_object_get(request, "argument"), "value"));
    json_t *values = json_array();
    for (size_t i = 0; values && candidates[i]; i++)
        if (!value || strncmp(candidates[i], value, strlen(value)) == 0)
            json_array_append_new(values, json_string(candidates[i]));
    json_decref(request);
    /* An array of strings: rpcd adds total and hasMore. */
    return steal_result(call, values);
}

/* ---- registration */

typedef struct fixture_method {
    const char *name;
    rpcd_handler_fn handler;
    uint32_t role;
    const char *description; /* tools */
    const char *schema;      /* tools: params_schema */
    const char *descriptor;  /* other roles: mcp_descriptor */
    const char *const *data; /* completions: their candidates */
} fixture_method;

#define NO_ARGUMENTS "{\"type\":\"object\",\"properties\":{}}"

/* clang-format off */
static const fixture_method methods[] = {
    {"test_simple_text", simple_text, RPCD_MCP_TOOL,
     "Tests simple text content response", NO_ARGUMENTS, NULL, NULL},
    {"test_image_content", image_content, RPCD_MCP_TOOL,
     "Tests image content response", NO_ARGUMENTS, NULL, NULL},
    {"test_audio_content", audio_content, RPCD_MCP_TOOL,
     "Tests audio content response", NO_ARGUMENTS, NULL, NULL},
    {"test_embedded_resource", embedded_resource, RPCD_MCP_TOOL,
     "Tests embedded resource content response", NO_ARGUMENTS, NULL, NULL},
    {"test_multiple_content_types", multiple_content_types, RPCD_MCP_TOOL,
     "Tests response with multiple content types (text, image, resource)", NO_ARGUMENTS, NULL,
     NULL},
    {"test_tool_with_logging", tool_with_logging, RPCD_MCP_TOOL,
     "Tests tool that emits log messages during execution", NO_ARGUMENTS, NULL, NULL},
    {"test_tool_with_progress", tool_with_progress, RPCD_MCP_TOOL,
     "Tests tool that reports progress notifications", NO_ARGUMENTS, NULL, NULL},
    {"test_error_handling", error_handling, RPCD_MCP_TOOL,
     "Tests error response handling", NO_ARGUMENTS, NULL, NULL},
    {"test_reconnection", reconnection, RPCD_MCP_TOOL,
     "Tests SSE stream disconnection and client reconnection: runs longer than the transport "
     "keeps a stream open", NO_ARGUMENTS, NULL, NULL},
    {"json_schema_2020_12_tool", json_schema_tool, RPCD_MCP_TOOL,
     "Tool with JSON Schema 2020-12 features",
     "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","
     "\"$defs\":{\"address\":{\"$anchor\":\"addressDef\",\"type\":\"object\","
     "\"properties\":{\"street\":{\"type\":\"string\"},\"city\":{\"type\":\"string\"}}}},"
     "\"properties\":{\"name\":{\"type\":\"string\"},\"address\":{\"$ref\":\"#/$defs/address\"},"
     "\"contactMethod\":{\"type\":\"string\",\"enum\":[\"phone\",\"email\"]},"
     "\"phone\":{\"type\":\"string\"},\"email\":{\"type\":\"string\"}},"
     "\"allOf\":[{\"anyOf\":[{\"required\":[\"phone\"]},{\"required\":[\"email\"]}]}],"
     "\"if\":{\"properties\":{\"contactMethod\":{\"const\":\"phone\"}},"
     "\"required\":[\"contactMethod\"]},"
     "\"then\":{\"required\":[\"phone\"]},\"else\":{\"required\":[\"email\"]},"
     "\"additionalProperties\":false}", NULL, NULL},
    {"test_logging_tool", logging_tool, RPCD_MCP_TOOL,
     "Logs three lines: a client that named no log level hears none of them", NO_ARGUMENTS, NULL,
     NULL},
    {"test_missing_capability", missing_capability, RPCD_MCP_TOOL,
     "Needs the client's sampling capability: -32021 without it", NO_ARGUMENTS, NULL, NULL},
    {"test_streaming_elicitation", streaming_elicitation, RPCD_MCP_TOOL,
     "Asks the client for its name through an input_required result", NO_ARGUMENTS, NULL, NULL},
    {"test_input_required_result_elicitation", ask_name, RPCD_MCP_TOOL,
     "Asks the user's name, then greets", NO_ARGUMENTS, NULL, NULL},
    {"test_input_required_result_sampling", ask_model, RPCD_MCP_TOOL,
     "Asks the model for France's capital", NO_ARGUMENTS, NULL, NULL},
    {"test_input_required_result_list_roots", ask_roots, RPCD_MCP_TOOL,
     "Asks the client's roots", NO_ARGUMENTS, NULL, NULL},
    {"test_input_required_result_request_state", ask_with_state, RPCD_MCP_TOOL,
     "Asks for a confirmation and checks its state came back", NO_ARGUMENTS, NULL, NULL},
    {"test_input_required_result_tampered_state", ask_with_state, RPCD_MCP_TOOL,
     "As request_state: a tampered requestState is refused", NO_ARGUMENTS, NULL, NULL},
    {"test_input_required_result_multiple_inputs", ask_three, RPCD_MCP_TOOL,
     "Asks three questions at once", NO_ARGUMENTS, NULL, NULL},
    {"test_input_required_result_multi_round", ask_twice, RPCD_MCP_TOOL,
     "Asks in two rounds", NO_ARGUMENTS, NULL, NULL},
    {"test_input_required_result_capabilities", ask_what_it_can, RPCD_MCP_TOOL,
     "Asks only what the client declared it can answer", NO_ARGUMENTS, NULL, NULL},
    {"test_sampling", sampling, RPCD_MCP_TOOL,
     "Asks the model, through the client, to answer a prompt",
     "{\"type\":\"object\",\"properties\":{\"prompt\":{\"type\":\"string\","
     "\"description\":\"The prompt to send to the LLM\"}},\"required\":[\"prompt\"]}", NULL,
     NULL},
    {"test_elicitation", elicitation, RPCD_MCP_TOOL,
     "Asks the user, through the client, for a username and an email address",
     "{\"type\":\"object\",\"properties\":{\"message\":{\"type\":\"string\","
     "\"description\":\"The message to show the user\"}},\"required\":[\"message\"]}", NULL,
     NULL},
    {"test_elicitation_sep1034_defaults", elicitation_defaults, RPCD_MCP_TOOL,
     "Asks the user to fill a form whose fields have defaults (SEP-1034)", NO_ARGUMENTS, NULL,
     NULL},
    {"test_elicitation_sep1330_enums", elicitation_enums, RPCD_MCP_TOOL,
     "Asks the user to choose from enums of every shape (SEP-1330)", NO_ARGUMENTS, NULL, NULL},
    {"test_header_param", header_param, RPCD_MCP_TOOL,
     "Tests an argument mirrored in an HTTP header (x-mcp-header)",
     "{\"type\":\"object\",\"properties\":{\"region\":{\"type\":\"string\","
     "\"x-mcp-header\":\"Region\"}},\"required\":[\"region\"]}", NULL, NULL},

    {"conformance.static_text", static_text, RPCD_MCP_RESOURCE, NULL, NULL,
     "{\"uri\":\"test://static-text\",\"name\":\"static-text\","
     "\"description\":\"A static text resource\",\"mimeType\":\"text/plain\"}", NULL},
    {"conformance.static_binary", static_binary, RPCD_MCP_RESOURCE, NULL, NULL,
     "{\"uri\":\"test://static-binary\",\"name\":\"static-binary\","
     "\"description\":\"A static binary resource (a PNG image)\",\"mimeType\":\"image/png\"}", NULL},
    {"conformance.watched", watched, RPCD_MCP_RESOURCE, NULL, NULL,
     "{\"uri\":\"test://watched-resource\",\"name\":\"watched-resource\","
     "\"description\":\"A resource to subscribe to\",\"mimeType\":\"text/plain\"}", NULL},
    {"conformance.template", template_data, RPCD_MCP_RESOURCE, NULL, NULL,
     "{\"uriTemplate\":\"test://template/{id}/data\",\"name\":\"template\","
     "\"description\":\"Data for the id the URI gives\",\"mimeType\":\"application/json\"}", NULL},

    {"conformance.simple_prompt", simple_prompt, RPCD_MCP_PROMPT, NULL, NULL,
     "{\"name\":\"test_simple_prompt\",\"description\":\"A prompt without arguments\"}", NULL},
    {"conformance.prompt_with_arguments", prompt_with_arguments, RPCD_MCP_PROMPT, NULL, NULL,
     "{\"name\":\"test_prompt_with_arguments\",\"description\":\"A prompt with arguments\","
     "\"arguments\":[{\"name\":\"arg1\",\"description\":\"First test argument\",\"required\":true},"
     "{\"name\":\"arg2\",\"description\":\"Second test argument\",\"required\":true}]}", NULL},
    {"conformance.prompt_with_embedded_resource", prompt_with_embedded_resource, RPCD_MCP_PROMPT,
     NULL, NULL,
     "{\"name\":\"test_prompt_with_embedded_resource\","
     "\"description\":\"A prompt with an embedded resource\","
     "\"arguments\":[{\"name\":\"resourceUri\",\"description\":\"URI of the resource to embed\","
     "\"required\":true}]}", NULL},
    {"conformance.prompt_with_image", prompt_with_image, RPCD_MCP_PROMPT, NULL, NULL,
     "{\"name\":\"test_prompt_with_image\",\"description\":\"A prompt with an image\"}", NULL},
    {"conformance.prompt_asking", prompt_asking, RPCD_MCP_PROMPT, NULL, NULL,
     "{\"name\":\"test_input_required_result_prompt\","
     "\"description\":\"A prompt that asks the client for its context first\"}", NULL},

    {"conformance.complete_prompt", complete, RPCD_MCP_COMPLETION, NULL, NULL,
     "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"test_prompt_with_arguments\"}}",
     arg_candidates},
    {"conformance.complete_template", complete, RPCD_MCP_COMPLETION, NULL, NULL,
     "{\"ref\":{\"type\":\"ref/resource\",\"uri\":\"test://template/{id}/data\"}}",
     id_candidates},
};

/* The tools of the tasks-* scenarios, each with its flags (ABI 1.7). */
static const struct {
    const char *name;
    rpcd_handler_fn handler;
    uint32_t flags;
    const char *description, *schema;
} task_tools[] = {
    {"greet", greet, 0, "Greets by name, at once",
     "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},"
     "\"required\":[\"name\"]}"},
    {"slow_compute", slow_compute, RPCD_METHOD_TASK,
     "Works for the given seconds: a task when that is long",
     "{\"type\":\"object\",\"properties\":{\"seconds\":{\"type\":\"number\","
     "\"minimum\":0},\"label\":{\"type\":\"string\"}},\"required\":[\"seconds\"]}"},
    {"failing_job", failing_job, RPCD_METHOD_TASK_REQUIRED,
     "Runs as a task only, for a second, and fails as a tool", NO_ARGUMENTS},
    {"protocol_error_job", protocol_error_job, RPCD_METHOD_TASK_REQUIRED,
     "Runs as a task only, for a second, and ends in a protocol error", NO_ARGUMENTS},
    {"confirm_delete", confirm_delete, RPCD_METHOD_TASK,
     "Asks, as a task, to confirm the deletion of a file",
     "{\"type\":\"object\",\"properties\":{\"filename\":{\"type\":\"string\"}},"
     "\"required\":[\"filename\"]}"},
    {"multi_input", multi_input, RPCD_METHOD_TASK,
     "Asks, as a task, two questions at once", NO_ARGUMENTS},
    {"test_tool_with_task", tool_with_task, RPCD_METHOD_TASK_REQUIRED,
     "Asks the user's name at once, then runs as a task and greets", NO_ARGUMENTS},
};
/* clang-format on */

static int conformance_init(rpcd_plugin *plugin, const rpcd_host_api *api, void **state,
                            char *error, size_t error_size)
{
    (void)state;
    host = api;
    self = plugin;
    if (!RPCD_HOST_HAS(host, call_tool_result)) {
        snprintf(error, error_size, "needs a daemon with ABI 1.4 or later");
        return RPCD_ERR_UNSUPPORTED;
    }
    const char *ms = host->config_get(plugin, "reconnection_ms");
    if (ms)
        reconnection_ms = strtol(ms, NULL, 10);
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        rpcd_method method = rpcd_method_new(methods[i].name, methods[i].handler);
        method.description = methods[i].description;
        method.params_schema = methods[i].schema;
        method.mcp_role = methods[i].role;
        method.mcp_descriptor = methods[i].descriptor;
        method.user_data = (void *)(uintptr_t)methods[i].data;
        int status = host->register_method(plugin, &method);
        if (status != RPCD_OK) {
            snprintf(error, error_size, "cannot register %s (%d)", methods[i].name, status);
            return status;
        }
    }
    for (size_t i = 0; i < sizeof task_tools / sizeof task_tools[0]; i++) {
        rpcd_method method = rpcd_method_new(task_tools[i].name, task_tools[i].handler);
        method.description = task_tools[i].description;
        method.params_schema = task_tools[i].schema;
        method.mcp_role = RPCD_MCP_TOOL;
        method.flags = task_tools[i].flags;
        int status = host->register_method(plugin, &method);
        if (status != RPCD_OK) {
            snprintf(error, error_size, "cannot register %s (%d)", task_tools[i].name, status);
            return status;
        }
    }
    return RPCD_OK;
}

RPCD_PLUGIN_DEFINE("conformance", "1.0.0", conformance_init, NULL);
