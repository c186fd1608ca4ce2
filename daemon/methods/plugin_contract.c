/* SPDX-License-Identifier: MIT */
/*
 * The argument checks of the host functions on a call, for in-process plugins and plugin hosts
 * alike (plugin_contract.h): what plugin.h promises to refuse is refused here, once.
 */
#include "methods/plugin_contract.h"

#include "json/json_scan.h"
#include "methods/mcp_tool.h"
#include "methods/reserved_names.h"

#include <rpcd/plugin.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

static bool is_json(const char *text, size_t length, size_t max_depth)
{
    return text && js_validate(text, length, max_depth, NULL, NULL) == 0;
}

static int refuse(contract_refusal *refusal, const char *did, const char *outcome)
{
    refusal->did = did;
    refusal->outcome = outcome;
    return RPCD_ERR_INVALID_ARGUMENT;
}

int contract_check_notify(const char *method, const char *params, size_t params_length,
                          size_t max_depth, contract_refusal *refusal)
{
    *refusal = (contract_refusal){NULL, NULL};
    if (!method || !js_utf8_valid(method, strlen(method)))
        return RPCD_ERR_INVALID_ARGUMENT;
    if (method[0] == '\0')
        return refuse(refusal, "tried to send a notification", " with an empty name; refused");
    if (reserved_name_reason(method, strlen(method)))
        return refuse(refusal, "tried to send a notification",
                      ", a name rpcd reserves for itself; refused");
    if (!params)
        return RPCD_OK;
    /* JSON-RPC's params are structured: an array or an object, never a scalar. */
    size_t first = 0;
    while (first < params_length && strchr(" \t\r\n", params[first]) && params[first] != '\0')
        first++;
    if (!is_json(params, params_length, max_depth) ||
        (params_length > 0 && params[first] != '{' && params[first] != '['))
        return refuse(refusal, "sent a notification",
                      " with params that are not a JSON array or object; dropped");
    return RPCD_OK;
}

int contract_check_result(const char *json, size_t json_length, size_t max_depth, bool known_json,
                          const json_schema *output, contract_result_fault *fault, char *reason,
                          size_t reason_size)
{
    *fault = CONTRACT_RESULT_FINE;
    if (reason_size)
        reason[0] = '\0';
    if (!known_json && !is_json(json, json_length, max_depth)) {
        *fault = CONTRACT_RESULT_NOT_JSON;
        return RPCD_ERR_INVALID_ARGUMENT;
    }
    if (output && mcp_tool_check_output(json, json_length, output, reason, reason_size) != 0) {
        *fault = CONTRACT_RESULT_OFF_SCHEMA;
        return RPCD_ERR_INVALID_ARGUMENT;
    }
    return RPCD_OK;
}

int contract_check_tool_result(const char *json, size_t json_length, size_t max_depth,
                               const json_schema *output, char *reason, size_t reason_size)
{
    if (!is_json(json, json_length, max_depth)) {
        snprintf(reason, reason_size, "a complete tool result must be JSON");
        return RPCD_ERR_INVALID_ARGUMENT;
    }
    if (mcp_tool_check_result(json, json_length, output, reason, reason_size) != 0)
        return RPCD_ERR_INVALID_ARGUMENT;
    return RPCD_OK;
}

int contract_check_fail_status(int status)
{
    return status == RPCD_OK || status == RPCD_ERR_APPLICATION ? RPCD_ERR_INVALID_ARGUMENT
                                                               : RPCD_OK;
}

int contract_check_failure(const char *message, bool message_required, const char *data,
                           size_t data_length, size_t max_depth)
{
    if ((message_required && !message) || (data && !is_json(data, data_length, max_depth)))
        return RPCD_ERR_INVALID_ARGUMENT;
    return RPCD_OK;
}

int contract_check_progress(double done, double total, const char *message)
{
    if (!isfinite(done) || isnan(total) || (message && !js_utf8_valid(message, strlen(message))))
        return RPCD_ERR_INVALID_ARGUMENT;
    return RPCD_OK;
}

int contract_begin_meta(const char *name, char *out, size_t out_size, size_t *length)
{
    if (length)
        *length = 0;
    if (out && out_size > 0)
        out[0] = '\0';
    if ((!out && out_size > 0) || (name && !js_utf8_valid(name, strlen(name))))
        return RPCD_ERR_INVALID_ARGUMENT;
    return RPCD_OK;
}

int contract_answer_meta(const char *value, size_t value_length, char *out, size_t out_size,
                         size_t *length)
{
    if (length)
        *length = value_length;
    if (value_length >= out_size)
        return RPCD_ERR_INVALID_ARGUMENT;
    memcpy(out, value, value_length);
    out[value_length] = '\0';
    return RPCD_OK;
}

int contract_check_complete(int status)
{
    return status == RPCD_DEFERRED ? RPCD_ERR_UNSUPPORTED : RPCD_OK;
}

/* The capability a question needs: 0 for a method call_ask does not know. */
static unsigned needed_capability(const char *method, const char *params, size_t params_length,
                                  size_t max_depth)
{
    if (strcmp(method, "sampling/createMessage") == 0)
        return CONTRACT_ASK_SAMPLING;
    if (strcmp(method, "roots/list") == 0)
        return CONTRACT_ASK_ROOTS;
    if (strcmp(method, "elicitation/create") != 0)
        return 0;
    js_span object, mode;
    if (params && js_validate(params, params_length, max_depth, &object, NULL) == 0 &&
        js_object_get(object, "mode", 4, &mode) > 0 && js_kind_of(mode) == JS_STRING &&
        js_string_equals(mode, "url", 3))
        return CONTRACT_ASK_ELICIT_URL;
    return CONTRACT_ASK_ELICIT_FORM;
}

int contract_check_ask(const char *key, const char *method, const char *params,
                       size_t params_length, size_t max_depth, unsigned capabilities,
                       size_t asked_so_far, bool asked_key)
{
    if (!key || !method || (!params && params_length > 0))
        return RPCD_ERR_INVALID_ARGUMENT;
    size_t key_length = strlen(key);
    if (key_length == 0 || key_length > CONTRACT_MOST_KEY_BYTES || !js_utf8_valid(key, key_length))
        return RPCD_ERR_INVALID_ARGUMENT;
    js_span object;
    if (params && (params_length > CONTRACT_MOST_ASK_PARAMS ||
                   js_validate(params, params_length, max_depth, &object, NULL) != 0 ||
                   js_kind_of(object) != JS_OBJECT))
        return RPCD_ERR_INVALID_ARGUMENT;
    /* Checked after the params (a mode is read from them), before the count: a question the
     * client could never answer is refused as such, whatever else is wrong. */
    unsigned needed = needed_capability(method, params, params_length, max_depth);
    if (needed == 0)
        return RPCD_ERR_INVALID_ARGUMENT;
    if ((capabilities & needed) == 0)
        return RPCD_ERR_UNSUPPORTED;
    if (!asked_key && asked_so_far >= CONTRACT_MOST_QUESTIONS)
        return RPCD_ERR_INVALID_ARGUMENT;
    return RPCD_OK;
}

int contract_check_state(const char *state, size_t length)
{
    if ((!state && length > 0) || length > CONTRACT_MOST_STATE_BYTES)
        return RPCD_ERR_INVALID_ARGUMENT;
    return RPCD_OK;
}
