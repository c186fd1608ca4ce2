/* SPDX-License-Identifier: MIT */
/*
 * The names of MCP's stateless revision that requests carry in params._meta: read by the MCP
 * front end (which revision a request speaks) and by the call layer (the log lines a request
 * asked for), which must not depend on the front end. Names only, no code.
 */
#ifndef RPCD_MCP_META_H
#define RPCD_MCP_META_H

/* The stateless revision rpcd speaks; the handshake era's versions are mcp.c's. */
#define MCP_STATELESS_VERSION "2026-07-28"

/* Where a request of the stateless revision names its version, in params._meta. */
#define MCP_META_PROTOCOL_VERSION "io.modelcontextprotocol/protocolVersion"

/* What the client can do (ClientCapabilities): an object every such request carries. */
#define MCP_META_CLIENT_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"

/* Where such a request asks for the log lines of its handler, and from which level on. */
#define MCP_META_LOG_LEVEL "io.modelcontextprotocol/logLevel"

#endif
