/* SPDX-License-Identifier: MIT */
/*
 * The shapers of the results of resources/read, prompts/get and completion/complete (ABI 1.5):
 * a handler's short form made MCP's, an object given whole checked first.
 */
#ifndef RPCD_MCP_RESULTS_H
#define RPCD_MCP_RESULTS_H

#include "calls/call.h"

#include <stdbool.h>

typedef enum mcp_result_kind {
    MCP_RESULT_RESOURCE = 0,   /* resources/read: {"contents":[...]} */
    MCP_RESULT_PROMPT = 1,     /* prompts/get: {"description"?,"messages":[...]} */
    MCP_RESULT_COMPLETION = 2, /* completion/complete: {"completion":{"values":[...],...}} */
} mcp_result_kind;

/* The shaper of kind, in the handshake era's shape or the stateless revision's. Static. */
const call_shaper *mcp_result_shaper(mcp_result_kind kind, bool stateless);

/*
 * The tools/call shaper of the handshake era: a tool's result as text content (and
 * structuredContent), a failure as a tool error (isError), a complete result unchanged unless
 * it asks for input as only the stateless revision can. Static.
 */
const call_shaper *mcp_tool_shaper(void);

#endif
