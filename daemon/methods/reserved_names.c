/* SPDX-License-Identifier: MIT */
/*
 * The names rpcd owns. A plugin registering one would shadow what the daemon answers; a plugin
 * sending one as a notification could forge progress, a cancellation or a change the client
 * would trust.
 */
#include "methods/reserved_names.h"

#include "methods/mcp_methods.h"

#include <stdbool.h>
#include <string.h>

static bool starts_with(const char *name, size_t length, const char *prefix)
{
    size_t prefix_length = strlen(prefix);
    return length >= prefix_length && memcmp(name, prefix, prefix_length) == 0;
}

const char *reserved_name_reason(const char *name, size_t length)
{
    /* JSON-RPC 2.0 specification, section 4. */
    if (starts_with(name, length, "rpc."))
        return "names starting with 'rpc.' are reserved by JSON-RPC";
    /* The notifications the daemon handles, and those MCP may add. */
    if (starts_with(name, length, "notifications/"))
        return "names starting with 'notifications/' are reserved by MCP";
    /* LSP's protocol notifications, of which rpcd answers $/cancelRequest. */
    if (starts_with(name, length, "$/"))
        return "names starting with '$/' are reserved for protocol notifications ($/cancelRequest)";
    /* The methods the MCP front end answers, or routes to a plugin, itself. */
    if (mcp_method_find(name, length) >= 0)
        return "the name is an MCP method that rpcd answers itself";
    return NULL;
}

const char *reserved_method_reason(const char *name, size_t length, unsigned abi_minor)
{
    int id = mcp_method_find(name, length);
    if (id >= 0 && abi_minor < mcp_method_reserved_since(id))
        return NULL;
    const char *reason = reserved_name_reason(name, length);
    /* The Tasks extension reserves its prefix (tasks/result and tasks/list are answered -32601
     * whatever a plugin built since registers); a plugin built before it keeps its names. */
    if (!reason && abi_minor >= 7 && starts_with(name, length, "tasks/"))
        return "names starting with 'tasks/' are reserved by MCP's Tasks extension";
    return reason;
}
