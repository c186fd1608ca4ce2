/* SPDX-License-Identifier: MIT */
/*
 * The method and notification names rpcd owns, in one place: plugins may neither register them
 * nor send them as notifications.
 */
#ifndef RPCD_RESERVED_NAMES_H
#define RPCD_RESERVED_NAMES_H

#include <stddef.h>

/*
 * Why name (length bytes, borrowed) is reserved, in words for a log line (static text), or NULL
 * when it is not: "rpc." names are JSON-RPC's, "notifications/" names and the methods the MCP
 * front end answers are MCP's, "$/" names are protocol notifications. Thread-safe.
 */
const char *reserved_name_reason(const char *name, size_t length);

/*
 * reserved_name_reason for a method a plugin built against abi_minor registers: an MCP method
 * rpcd came to answer in a later minor stays the plugin's (mcp_method_reserved_since), and the
 * plugin then serves it as before. Thread-safe.
 */
const char *reserved_method_reason(const char *name, size_t length, unsigned abi_minor);

#endif
