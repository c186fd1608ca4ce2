/* SPDX-License-Identifier: MIT */
/*
 * What dispatch.c shares with dispatch_mcp.c, which handles the MCP session's own traffic: the
 * client's answers to rpcd's requests, and tasks.
 */
#ifndef RPCD_DISPATCH_INTERNAL_H
#define RPCD_DISPATCH_INTERNAL_H

#include "serve/dispatch.h"
#include "mcp/mcp_rounds.h"
#include "wire/envelope.h"

/* Answers a request with an error (data: raw JSON text or NULL); a notification gets nothing. */
int disp_answer_error(const dispatcher *dispatch, const env_message *message, call_batch *batch,
                      uint64_t ticket, int64_t code, const char *data, size_t data_length);

/*
 * Starts a call once there is room for it, after its checks (the policy, its params' schema); a
 * request that cannot start gets its one answer. *started says whether the call started.
 * Returns 0, or -1 when answering failed.
 */
int disp_start_call(const dispatcher *dispatch, const env_message *message, call_request *request,
                    bool *started);

/*
 * The MCP methods, which the MCP front end answers or turns into a plugin's call; resumed: the
 * answers of a round, for a call run again (NULL otherwise). Returns 1 when the message was one
 * of them (answered, started, or a notification of one), 0 otherwise.
 */
int disp_handle_mcp(const dispatcher *dispatch, const env_message *message, const char *name,
                    size_t name_length, call_batch *batch, uint64_t ticket,
                    const mcp_round_input *resumed, int *status);

/* ---- dispatch_mcp.c ---- */

/* A response object from the client (dispatch_mcp.c). Returns 0, or -1 (memory, output). */
int disp_take_response(const dispatcher *dispatch, js_span value, const env_message *message);

/*
 * tools/call of a tool that may run as a task (route->may_be_task), from a request outside a
 * batch: request (filled for a plain call) runs under its task's id, answering through the task
 * store. Returns as disp_start_call.
 */
int disp_start_task_call(const dispatcher *dispatch, const env_message *message,
                         const mcp_route *route, call_request *request);

/* tasks/get, tasks/update, tasks/cancel (route->kind MCP_TASK). Returns 0 or -1. */
int disp_task_request(const dispatcher *dispatch, const env_message *message,
                      const mcp_route *route, call_batch *batch, uint64_t ticket);

#endif
