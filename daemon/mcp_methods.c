/* SPDX-License-Identifier: MIT */
/*
 * The names of the MCP methods rpcd handles itself. A method added here is reserved at once;
 * mcp_route_message then answers it, or turns it into a plugin's call.
 */
#include "mcp_methods.h"

#include <string.h>

const char *const mcp_method_names[MCP_METHOD_COUNT] = {
    [MCP_INITIALIZE] = "initialize",           [MCP_PING] = "ping",
    [MCP_SERVER_DISCOVER] = "server/discover", [MCP_TOOLS_LIST] = "tools/list",
    [MCP_TOOLS_CALL] = "tools/call",
};

int mcp_method_find(const char *name, size_t length)
{
    for (int id = 0; id < MCP_METHOD_COUNT; id++) {
        const char *candidate = mcp_method_names[id];
        if (strlen(candidate) == length && memcmp(candidate, name, length) == 0)
            return id;
    }
    return -1;
}
