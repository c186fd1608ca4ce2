/* SPDX-License-Identifier: MIT */
/*
 * The access log (log_calls = true): one line per call a handler ran, with its method, request
 * id, plugin, duration and outcome, and the W3C traceparent the client put in params._meta.
 */
#include "calls/call_log.h"

#include "calls/call_internal.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/metrics.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static atomic_bool logging_calls;

void call_log_enable(bool on)
{
    atomic_store(&logging_calls, on);
}

bool call_log_on(void)
{
    return atomic_load_explicit(&logging_calls, memory_order_relaxed);
}

/* A traceparent is "00-<32 hex>-<16 hex>-<2 hex>" (W3C Trace Context): the client's text goes
 * into the log only when it has that shape, so that it can never break a line. */
static bool is_traceparent(const char *text, size_t length)
{
    if (length != 55)
        return false;
    for (size_t i = 0; i < length; i++) {
        bool dash = i == 2 || i == 35 || i == 52;
        if (dash ? text[i] != '-' : !strchr("0123456789abcdef", text[i]) || text[i] == '\0')
            return false;
    }
    return true;
}

static const char *outcome_name(call_outcome_kind kind)
{
    switch (kind) {
    case CALL_OUTCOME_OK: return "ok";
    case CALL_OUTCOME_ERROR: return "error";
    case CALL_OUTCOME_TOOL_ERROR: return "tool_error";
    case CALL_OUTCOME_CANCELLED: return "cancelled";
    case CALL_OUTCOME_ASKED: return "input_required";
    }
    return "?";
}

void call_log_ended(const call_slot *slot, const call_outcome *outcome)
{
    long long took_us = clock_now_us() - slot->started_us;
    char duration[32], code[24];
    snprintf(duration, sizeof duration, "%lld.%03lld", took_us / 1000, took_us % 1000);
    snprintf(code, sizeof code, "%lld", outcome->code);
    const char *outcome_text = outcome_name(outcome->kind);
    log_field fields[8];
    size_t count = 0;
    fields[count++] = (log_field){"method", slot->method->name, slot->method->name_length, false};
    if (slot->is_request)
        fields[count++] = (log_field){"id", slot->id.data, slot->id.length, true};
    const char *plugin = slot->method->owner_name ? slot->method->owner_name : "";
    fields[count++] = (log_field){"plugin", plugin, strlen(plugin), false};
    fields[count++] = (log_field){"duration_ms", duration, strlen(duration), true};
    fields[count++] = (log_field){"outcome", outcome_text, strlen(outcome_text), false};
    if (outcome->code)
        fields[count++] = (log_field){"code", code, strlen(code), true};
    if (slot->result_capped && slot->result_cap_rule)
        fields[count++] =
            (log_field){"rule", slot->result_cap_rule, strlen(slot->result_cap_rule), false};
    js_span traceparent;
    if (call_find_meta(slot, "traceparent", &traceparent) == 1 && traceparent.length == 57 &&
        is_traceparent(traceparent.start + 1, 55))
        fields[count++] = (log_field){"traceparent", traceparent.start + 1, 55, false};
    log_fields(LOG_INFO, "call", fields, count);
}

void call_log_refused(const reg_method *method, const js_span *id, long long code, const char *rule)
{
    /* Every refusal by the tool policy passes here: the one place that counts them too. */
    mx_count_policy_rejection(method->series);
    if (!call_log_on())
        return;
    char code_text[24];
    snprintf(code_text, sizeof code_text, "%lld", code);
    log_field fields[6];
    size_t count = 0;
    fields[count++] = (log_field){"method", method->name, method->name_length, false};
    if (id)
        fields[count++] = (log_field){"id", id->start, id->length, true};
    const char *plugin = method->owner_name ? method->owner_name : "";
    fields[count++] = (log_field){"plugin", plugin, strlen(plugin), false};
    fields[count++] = (log_field){"outcome", "refused", 7, false};
    if (code)
        fields[count++] = (log_field){"code", code_text, strlen(code_text), true};
    fields[count++] = (log_field){"rule", rule, strlen(rule), false};
    log_fields(LOG_INFO, "call", fields, count);
}
