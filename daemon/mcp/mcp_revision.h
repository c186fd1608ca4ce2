/* SPDX-License-Identifier: MIT */
/*
 * MCP's stateless revision (2026-07-28) beside the handshake era: which revision a request
 * speaks (its _meta names it), the refusal of a version rpcd does not speak, and the members
 * every result of that revision carries.
 */
#ifndef RPCD_MCP_REVISION_H
#define RPCD_MCP_REVISION_H

#include "base/buffer.h"
#include "methods/mcp_methods.h"
#include "json/json_scan.h"
#include "wire/mcp_meta.h"

#include <stdbool.h>
#include <stddef.h>

/* How long a client may keep a list (ttlMs): a reload changes it, and says so to listeners. */
enum { MCP_LIST_TTL_MS = 60000 };

typedef enum mcp_era {
    MCP_ERA_HANDSHAKE = 0, /* no version in _meta, or a handshake-era one: today's shapes */
    MCP_ERA_STATELESS = 1, /* the stateless revision: resultType, _meta, cache hints */
} mcp_era;

enum mcp_revision_refusal {
    MCP_REVISION_INVALID = -2,     /* the version is not a string, or given twice: -32602 */
    MCP_REVISION_UNSUPPORTED = -4, /* a version rpcd does not speak: -32022 (rpc_error.h) */
};

/*
 * The era of a request, from params._meta's protocol version (params may be an empty span).
 * Returns an mcp_era, or an mcp_revision_refusal with error.data appended to data (JSON text):
 * {"detail"} for MCP_REVISION_INVALID, {"supported","requested"} for MCP_REVISION_UNSUPPORTED;
 * -3 when memory ran out.
 */
int mcp_revision_read(js_span params, buffer *data);

/* The same for the value of params._meta, when the caller found it (an empty span: none). */
int mcp_revision_of_meta(js_span meta, buffer *data);

/* True when params._meta names a protocol version (of any era, valid or not). */
bool mcp_revision_named(js_span params);

/*
 * True for the MCP methods (mcp_method_id) the stateless revision removed: initialize, ping,
 * logging/setLevel, resources/subscribe and resources/unsubscribe. A request of that revision
 * naming one gets -32601, as from a server that never had it.
 */
bool mcp_revision_removed(int id);

/*
 * What a request's _meta (its span; empty: none) says the client can be asked, from its
 * "io.modelcontextprotocol/clientCapabilities": contract_ask_capability bits ("elicitation"
 * with no members, or with "form": a form; with "url": a URL; "sampling"; "roots").
 */
unsigned mcp_ask_capabilities(js_span meta);

/* The id of MCP's Tasks extension, in capabilities.extensions. */
#define MCP_TASKS_EXTENSION "io.modelcontextprotocol/tasks"
/* Whether a request's _meta declares the Tasks extension among its client capabilities
 * (capabilities.extensions["io.modelcontextprotocol/tasks"], an object). */
bool mcp_declares_tasks(js_span meta);
/* The same for a capabilities object (initialize's params.capabilities); 0 for anything else. */
unsigned mcp_ask_capabilities_of(js_span capabilities);

/* Appends every version rpcd speaks as a JSON array, newest first. Returns 0 or -1 (memory). */
int mcp_append_versions(buffer *out);

/* True when version (a validated JSON string) is one of the handshake era's rpcd speaks. */
bool mcp_handshake_version(js_span version);

/*
 * Makes the result object that ends out, and began at start, one of the stateless revision:
 * appends resultType "complete", _meta with the server's identity when with_meta (not for tool
 * results, whose _meta is the handler's), and ttlMs and cacheScope when cacheable (lists).
 * Returns 0, or -1 (memory, or out does not end with an object).
 */
int mcp_finish_stateless_result(buffer *out, size_t start, bool with_meta, bool cacheable);

/* The deepest result mcp_result_type_is reads: deeper ones name no type. */
enum { MCP_RESULT_DEPTH = 512 };

/*
 * True when result (length bytes of valid JSON text, borrowed) is an object whose "resultType"
 * is type (NUL-terminated).
 */
bool mcp_result_type_is(const char *result, size_t length, const char *type);

/* Appends {"name":"rpcd","version":...}. Returns 0 or -1. */
int mcp_append_implementation(buffer *out);

/* The tools/call shaper of the stateless revision: the tool result, and resultType. Static. */
const struct call_shaper *mcp_stateless_tool_shaper(void);

#endif
