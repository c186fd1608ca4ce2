/* SPDX-License-Identifier: MIT */
/*
 * What MCP lets a tool say beyond its name (ABI 1.4): the descriptor's title, annotations,
 * output schema and icons, checked at registration and shown in tools/list, and complete tool
 * results, checked before they are written.
 */
#ifndef RPCD_MCP_TOOL_H
#define RPCD_MCP_TOOL_H

#include "base/buffer.h"
#include "methods/registry.h"

#include <stdbool.h>
#include <stddef.h>

/*
 * Why a descriptor's 1.4 members cannot be registered (static text for a log line), or NULL
 * when they can. Each argument may be NULL (not given).
 */
const char *mcp_tool_refusal(const char *title, const char *annotations, const char *output_schema,
                             const char *icons);

/* Appends the method's ,"title":...,"annotations":...,"outputSchema":...,"icons":... members
 * (those it has) to a tools/list entry. Returns 0 or -1 (memory). */
int mcp_tool_append_members(buffer *out, const reg_method *method);

struct json_t;
/* Why a content block (jansson's) is not one of MCP's (static text), or NULL. */
const char *mcp_tool_block_problem(const struct json_t *block);

/*
 * Checks a complete tool result (validated JSON text, length bytes) against MCP's
 * CallToolResult, and its structuredContent against the compiled output schema (borrowed, NULL
 * for none). Returns 0, or -1 with a one-line reason in reason (reason_size bytes): for a result
 * off the schema, the pointer, the keyword and what it expects.
 */
int mcp_tool_check_result(const char *text, size_t length, const json_schema *output, char *reason,
                          size_t reason_size);

/*
 * Checks a plain result (validated JSON text) of a method with an output schema (compiled,
 * borrowed): it becomes the structuredContent, so it must be an object that fits the schema.
 * Returns 0, or -1 with a reason.
 */
int mcp_tool_check_output(const char *text, size_t length, const json_schema *output, char *reason,
                          size_t reason_size);

#endif
