/* SPDX-License-Identifier: MIT */
/*
 * The MCP methods rpcd handles itself, in one list: the MCP front end routes by it
 * (mcp_route_message), and reserved_names.c refuses them to plugins. It depends on nothing, so that
 * the registry can read it without depending on the MCP front end, which depends on the registry.
 */
#ifndef RPCD_MCP_METHODS_H
#define RPCD_MCP_METHODS_H

#include <stddef.h>

typedef enum mcp_method_id {
    MCP_INITIALIZE,
    MCP_PING,
    MCP_SERVER_DISCOVER,
    MCP_TOOLS_LIST,
    MCP_TOOLS_CALL,
    MCP_SUBSCRIPTIONS_LISTEN,
    MCP_RESOURCES_LIST,
    MCP_RESOURCES_TEMPLATES_LIST,
    MCP_RESOURCES_READ,
    MCP_RESOURCES_SUBSCRIBE,
    MCP_RESOURCES_UNSUBSCRIBE,
    MCP_PROMPTS_LIST,
    MCP_PROMPTS_GET,
    MCP_COMPLETION_COMPLETE,
    MCP_LOGGING_SET_LEVEL,
    MCP_TASKS_GET, /* the Tasks extension of 2026-07-28 (mcp_tasks.h) */
    MCP_TASKS_UPDATE,
    MCP_TASKS_CANCEL,
    MCP_METHOD_COUNT,
} mcp_method_id;

/* The name of the MCP method id (static text), or NULL outside 0..MCP_METHOD_COUNT-1. */
const char *mcp_method_name(int id);

/*
 * The ABI minor from which plugins may not register the method's name: 0 for the methods rpcd
 * answered before ABI 1.5, 5 for those it came to answer with 1.5 (resources, prompts,
 * completion, logging), which a plugin built earlier may still have registered as its own, 7 for
 * tasks/get, tasks/update and tasks/cancel (1.7).
 */
unsigned mcp_method_reserved_since(int id);

/* The id of the MCP method named name (length bytes, borrowed), or -1 when it is none. */
int mcp_method_find(const char *name, size_t length);

#endif
