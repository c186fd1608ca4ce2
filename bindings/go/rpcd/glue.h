/* SPDX-License-Identifier: MIT */
/*
 * The C side of the Go binding: cgo cannot call the host's function pointers, and a Go file that
 * exports functions cannot define C ones in its preamble, so both live in glue.c.
 */
#ifndef RPCD_GO_GLUE_H
#define RPCD_GO_GLUE_H

#include <rpcd/plugin.h>

#include <stdint.h>

#if RPCD_ABI_MAJOR != 1 || RPCD_ABI_MINOR < 5
#error "the Go binding needs <rpcd/plugin.h> 1.5 or later (mcp_role, resource_updated)"
#endif

/*
 * Registers a method whose handler is the Go handler number index, with the JSON Schema of its
 * params (NULL: none), in MCP role role with its descriptor (NULL: none) (init only).
 */
int rpcd_go_register(const char *name, const char *description, const char *params_schema,
                     uint32_t flags, uint32_t role, const char *descriptor, uintptr_t index);
/* config_get (init only); NULL when the key is absent. */
const char *rpcd_go_config(const char *key);
/* log_text, when the daemon has it. */
void rpcd_go_log(int level, const char *text);

int rpcd_go_result(rpcd_call *call, const char *json, size_t length);
int rpcd_go_fail(rpcd_call *call, int status, const char *message);
int rpcd_go_progress(rpcd_call *call, double done, double total, const char *message);
int rpcd_go_is_cancelled(rpcd_call *call);
int rpcd_go_complete(rpcd_call *call, int status);
/* call_tool_result; RPCD_ERR_UNSUPPORTED from a daemon older than 1.4. */
int rpcd_go_tool_result(rpcd_call *call, const char *json, size_t length);
/* call_meta; *length 0 from a daemon older than 1.4. */
int rpcd_go_meta(rpcd_call *call, const char *name, char *out, size_t out_size, size_t *length);
/* resource_updated; RPCD_ERR_UNSUPPORTED from a daemon older than 1.5. */
int rpcd_go_resource_updated(const char *uri);

#endif
