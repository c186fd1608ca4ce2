/* SPDX-License-Identifier: MIT */
/*
 * The names of the MCP methods rpcd handles itself. A method added here is reserved at once;
 * mcp_route_message then answers it, or turns it into a plugin's call.
 */
#include "methods/mcp_methods.h"

#include <string.h>

/* Every message's method is looked up here first: lengths are compared before any byte. */
#define METHOD(id, name) [id] = {name, sizeof name - 1}
static const struct {
    const char *name;
    size_t length;
} methods[MCP_METHOD_COUNT] = {
    METHOD(MCP_INITIALIZE, "initialize"),
    METHOD(MCP_PING, "ping"),
    METHOD(MCP_SERVER_DISCOVER, "server/discover"),
    METHOD(MCP_TOOLS_LIST, "tools/list"),
    METHOD(MCP_TOOLS_CALL, "tools/call"),
    METHOD(MCP_SUBSCRIPTIONS_LISTEN, "subscriptions/listen"),
    METHOD(MCP_RESOURCES_LIST, "resources/list"),
    METHOD(MCP_RESOURCES_TEMPLATES_LIST, "resources/templates/list"),
    METHOD(MCP_RESOURCES_READ, "resources/read"),
    METHOD(MCP_RESOURCES_SUBSCRIBE, "resources/subscribe"),
    METHOD(MCP_RESOURCES_UNSUBSCRIBE, "resources/unsubscribe"),
    METHOD(MCP_PROMPTS_LIST, "prompts/list"),
    METHOD(MCP_PROMPTS_GET, "prompts/get"),
    METHOD(MCP_COMPLETION_COMPLETE, "completion/complete"),
    METHOD(MCP_LOGGING_SET_LEVEL, "logging/setLevel"),
    METHOD(MCP_TASKS_GET, "tasks/get"),
    METHOD(MCP_TASKS_UPDATE, "tasks/update"),
    METHOD(MCP_TASKS_CANCEL, "tasks/cancel"),
};
#undef METHOD

const char *mcp_method_name(int id)
{
    return id >= 0 && id < MCP_METHOD_COUNT ? methods[id].name : NULL;
}

int mcp_method_find(const char *name, size_t length)
{
    for (int id = 0; id < MCP_METHOD_COUNT; id++)
        if (methods[id].length == length && memcmp(methods[id].name, name, length) == 0)
            return id;
    return -1;
}

unsigned mcp_method_reserved_since(int id)
{
    return id >= MCP_TASKS_GET ? 7 : id >= MCP_RESOURCES_LIST ? 5 : 0;
}
