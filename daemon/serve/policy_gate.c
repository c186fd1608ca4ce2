/* SPDX-License-Identifier: MIT */
/*
 * The policy's answers: what a denial looks like (exactly an unknown method's), and a rate
 * limit's refusal, whose data says when a token is there again.
 */
#include "serve/policy_gate.h"

#include "base/buffer.h"
#include "base/clock.h"
#include "calls/call_log.h"
#include "methods/tool_policy.h"
#include "wire/rpc_error.h"

#include <stdio.h>
#include <string.h>

/* A rate limit's refusal: -32029, the wait in the message and in data.retryAfterMs. */
static int refuse_rate(const dispatcher *dispatch, const env_message *message,
                       const call_request *request, const pol_refusal *refusal)
{
    char text[96];
    snprintf(text, sizeof text, "Rate limited: retry after %lld ms", refusal->retry_ms);
    buffer data = BUFFER_INIT;
    int failed = buf_printf(&data, "{\"retryAfterMs\":%lld,\"detail\":", refusal->retry_ms);
    failed |= buf_append_json_string(&data, refusal->rule, strlen(refusal->rule));
    failed |= buf_append_char(&data, '}');
    int status = call_respond_error(dispatch->calls, request->batch, request->ticket, &message->id,
                                    RPC_RATE_LIMITED, text, failed ? NULL : data.data,
                                    failed ? 0 : data.length);
    buf_free(&data);
    return status;
}

bool gate_refuses(const dispatcher *dispatch, const env_message *message, call_request *request,
                  int *status)
{
    tool_policy *policy = mcp_tools_policy(dispatch->generations->tools);
    if (!policy)
        return false;
    pol_refusal refusal;
    pol_verdict verdict = pol_admit(policy, request->method, clock_now_ms(), &refusal);
    if (verdict == POL_ADMITTED) {
        request->max_result_bytes =
            pol_result_cap(policy, request->method, &request->result_cap_rule);
        return false;
    }
    bool answered = message->kind == ENV_REQUEST;
    int64_t code = verdict == POL_DENIED ? RPC_METHOD_NOT_FOUND : RPC_RATE_LIMITED;
    call_log_refused(request->method, answered ? &message->id : NULL, answered ? code : 0,
                     refusal.rule);
    *status = 0;
    if (!answered)
        return true;
    if (verdict == POL_DENIED) /* the very answer a method that does not exist gets */
        *status = call_respond_error(dispatch->calls, request->batch, request->ticket, &message->id,
                                     RPC_METHOD_NOT_FOUND, NULL, NULL, 0);
    else
        *status = refuse_rate(dispatch, message, request, &refusal);
    return true;
}
