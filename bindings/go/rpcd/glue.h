/* SPDX-License-Identifier: MIT */
/*
 * The C side of the Go binding: cgo cannot call the host's function pointers, and a Go file that
 * exports functions cannot define C ones in its preamble, so both live in glue.c.
 */
#ifndef RPCD_GO_GLUE_H
#define RPCD_GO_GLUE_H

#include <rpcd/plugin.h>

#include <stdint.h>

#if RPCD_ABI_MAJOR != 1 || RPCD_ABI_MINOR < 7
#error "the Go binding needs <rpcd/plugin.h> 1.7 or later (RPCD_METHOD_TASK)"
#endif

/* What a Go method declares (rpcd.MethodOptions), the strings NULL when not declared. */
typedef struct rpcd_go_method {
    const char *name;
    const char *description;
    const char *params_schema;
    const char *title;
    const char *annotations;
    const char *output_schema;
    const char *icons;
    const char *mcp_descriptor;
    uint32_t flags;
    uint32_t mcp_role;
} rpcd_go_method;

/*
 * Registers the method method declares, whose handler is the Go handler number index, with a
 * descriptor of the header's own size (rpcd_method_new) (init only).
 */
int rpcd_go_register(const rpcd_go_method *method, uintptr_t index);
/* config_get (init only); NULL when the key is absent. */
const char *rpcd_go_config(const char *key);
/* log_text, when the daemon has it. */
void rpcd_go_log(int level, const char *text);

int rpcd_go_result(rpcd_call *call, const char *json, size_t length);
int rpcd_go_fail(rpcd_call *call, int status, const char *message);
int rpcd_go_fail_code(rpcd_call *call, int64_t code, const char *message, const char *data,
                      size_t data_length);
int rpcd_go_progress(rpcd_call *call, double done, double total, const char *message);
int rpcd_go_is_cancelled(rpcd_call *call);
int rpcd_go_complete(rpcd_call *call, int status);
/* call_tool_result; RPCD_ERR_UNSUPPORTED from a daemon older than 1.4. */
int rpcd_go_tool_result(rpcd_call *call, const char *json, size_t length);
/* call_meta; *length 0 from a daemon older than 1.4. */
int rpcd_go_meta(rpcd_call *call, const char *name, char *out, size_t out_size, size_t *length);
/* resource_updated; RPCD_ERR_UNSUPPORTED from a daemon older than 1.5. */
int rpcd_go_resource_updated(const char *uri);
/* call_ask and call_set_state; RPCD_ERR_UNSUPPORTED from a daemon older than 1.6. */
int rpcd_go_ask(rpcd_call *call, const char *key, const char *method, const char *params,
                size_t params_length);
int rpcd_go_set_state(rpcd_call *call, const char *state, size_t length);
/* call_input and call_state; *length 0 from a daemon older than 1.6. */
int rpcd_go_input(rpcd_call *call, const char *key, char *out, size_t out_size, size_t *length);
int rpcd_go_state(rpcd_call *call, char *out, size_t out_size, size_t *length);

#endif
