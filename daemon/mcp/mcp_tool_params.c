/* SPDX-License-Identifier: MIT */
/*
 * What tools/call reads of its params: one pass over its members, and the task mode of the call
 * (mcp_tasks.h) from the method's flags and the request's _meta.
 */
#include "mcp/mcp_tool_params.h"

#include "mcp/mcp_revision.h"
#include "wire/envelope.h"

#include <string.h>

void mcp_read_tool_params(js_span params, tool_params *out)
{
    memset(out, 0, sizeof *out);
    if (params.length == 0 || js_kind_of(params) != JS_OBJECT)
        return;
    bool seen_name = false, seen_meta = false;
    js_iter members;
    js_span key, value;
    js_iter_init(&members, params);
    while (js_iter_next(&members, &key, &value)) {
        if (js_string_equals(key, "name", 4)) {
            if (seen_name)
                out->duplicate = "\"name\" appears twice";
            seen_name = true;
            out->name = value;
            out->has_name = js_kind_of(value) == JS_STRING;
        } else if (js_string_equals(key, "arguments", 9)) {
            if (out->has_arguments)
                out->duplicate = "\"arguments\" appears twice";
            out->arguments = value;
            out->has_arguments = true;
        } else if (js_string_equals(key, "_meta", 5)) {
            /* The progress token is read from it later: it must mean one thing now. */
            if (seen_meta)
                out->duplicate = "\"_meta\" appears twice";
            else if (env_meta_has_duplicate(value))
                out->duplicate = "\"progressToken\" appears twice in \"_meta\"";
            seen_meta = true;
            out->meta = value;
        } else if (js_string_equals(key, "requestState", 12)) {
            if (out->request_state.length)
                out->duplicate = "\"requestState\" appears twice";
            out->request_state = value;
        } else if (js_string_equals(key, "inputResponses", 14)) {
            if (out->input_responses.length)
                out->duplicate = "\"inputResponses\" appears twice";
            out->input_responses = value;
        }
    }
}

int mcp_tool_task_mode(int era, js_span meta, const reg_method *method, bool *may_be_task,
                       bool *task_required)
{
    bool declared = era == MCP_ERA_STATELESS && mcp_declares_tasks(meta);
    *may_be_task = declared && (method->flags & (RPCD_METHOD_TASK | RPCD_METHOD_TASK_REQUIRED));
    *task_required = declared && (method->flags & RPCD_METHOD_TASK_REQUIRED);
    return era == MCP_ERA_STATELESS && !declared && (method->flags & RPCD_METHOD_TASK_REQUIRED) ? -1
                                                                                                : 0;
}
