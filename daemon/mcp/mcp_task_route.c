/* SPDX-License-Identifier: MIT */
/*
 * Which requests reach the task store: the extension's methods, in the revision that has it and
 * from a request that declares it, and the refusal of a request that does not.
 */
#include "mcp/mcp.h"
#include "mcp/mcp_revision.h"
#include "mcp/mcp_tasks.h"
#include "wire/rpc_error.h"

#include <stdio.h>

int mcp_refuse_without_tasks(buffer *out, mcp_route *route)
{
    buf_clear(out);
    int failed = buf_append_string(
        out, "{\"requiredCapabilities\":{\"extensions\":{\"" MCP_TASKS_EXTENSION "\":{}}}}");
    *route = (mcp_route){
        .kind = MCP_REFUSED, .code = RPC_MISSING_CLIENT_CAPABILITY, .has_data = failed == 0};
    snprintf(route->message, sizeof route->message, "Missing required client capability");
    return 0;
}

int mcp_route_task_method(int id, int era, js_span params, buffer *out, mcp_route *route)
{
    js_span meta = {NULL, 0};
    if (era != MCP_ERA_STATELESS) {
        buf_clear(out);
        *route = (mcp_route){.kind = MCP_REFUSED, .status = RPCD_ERR_METHOD_NOT_FOUND};
        return 0;
    }
    if (params.length > 0 && js_kind_of(params) == JS_OBJECT)
        js_object_get(params, "_meta", 5, &meta);
    if (!mcp_declares_tasks(meta))
        return mcp_refuse_without_tasks(out, route);
    buf_clear(out);
    *route = (mcp_route){.kind = MCP_TASK, .task_method = id};
    return 0;
}
