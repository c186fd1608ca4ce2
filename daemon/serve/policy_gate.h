/* SPDX-License-Identifier: MIT */
/*
 * The tool policy at the door of every call, plain JSON-RPC and MCP alike: a denied method is
 * answered as one that does not exist, a rate-limited one with -32029 and when to retry, and an
 * admitted call is given its result cap. Each refusal goes to the access log with its rule.
 */
#ifndef RPCD_POLICY_GATE_H
#define RPCD_POLICY_GATE_H

#include "serve/dispatch.h"

#include "wire/envelope.h"

#include <stdbool.h>

/*
 * Asks the generation's policy (the tools of dispatch's reader) about request, whose method is
 * set: true when the call is refused, answered already (a request; a notification gets nothing)
 * with *status the answer's; false when it may start, with request's max_result_bytes and
 * result_cap_rule set. Reading thread.
 */
bool gate_refuses(const dispatcher *dispatch, const env_message *message, call_request *request,
                  int *status);

#endif
