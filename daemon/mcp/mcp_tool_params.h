/* SPDX-License-Identifier: MIT */
/*
 * What tools/call reads of its params, for mcp_call.c: the tool's name, its arguments, _meta and
 * a retry's members, and whether the call may run as a task.
 */
#ifndef RPCD_MCP_TOOL_PARAMS_H
#define RPCD_MCP_TOOL_PARAMS_H

#include "json/json_scan.h"
#include "methods/registry.h"

#include <stdbool.h>

/* What tools/call reads of its params. */
typedef struct tool_params {
    js_span name, arguments, meta;          /* meta: empty when there is none */
    js_span request_state, input_responses; /* a retry's (2026-07-28); empty: none */
    bool has_name, has_arguments;
    const char *duplicate; /* a member read here that appears twice, or NULL */
} tool_params;

/* Reads params (a tools/call's, or an empty span) into *out, members appearing twice noted. */
void mcp_read_tool_params(js_span params, tool_params *out);

/*
 * Whether a call of method from a request of era with meta (its _meta, or an empty span) may run
 * as a task: RPCD_METHOD_TASK or _REQUIRED, and the 2026-07-28 revision with the extension
 * declared (*may_be_task; *task_required for RPCD_METHOD_TASK_REQUIRED). Returns 0, or -1 when
 * the request cannot be served: a tool that requires a task, from a 2026-07-28 request that does
 * not declare the extension (-32021).
 */
int mcp_tool_task_mode(int era, js_span meta, const reg_method *method, bool *may_be_task,
                       bool *task_required);

#endif
