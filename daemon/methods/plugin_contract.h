/* SPDX-License-Identifier: MIT */
/*
 * The plugin contract's argument checks, written once for both ways a plugin runs: rpcd's own
 * host functions (call_host.c) and a plugin host's (isolation/host_calls.c) ask here whether a
 * plugin's arguments are acceptable, so that a plugin gets the same status either way. Pure
 * functions of their arguments: thread-safe, no call state, nothing logged.
 */
#ifndef RPCD_PLUGIN_CONTRACT_H
#define RPCD_PLUGIN_CONTRACT_H

#include "schema/schema.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Why a notification was refused, for the log line rpcd writes naming the plugin and method
 * ("PLUGIN: METHOD <did> \"NAME\"<outcome>"): static strings. Both NULL when the refusal is
 * not logged (no name to show: NULL, or not UTF-8).
 */
typedef struct contract_refusal {
    const char *did;
    const char *outcome;
} contract_refusal;

/*
 * call_notify's arguments: a name that is UTF-8, not empty and not rpcd's own
 * (reserved_names.h); params NULL, or JSON text (at most max_depth deep) that is an array or an
 * object. Returns RPCD_OK, or RPCD_ERR_INVALID_ARGUMENT with *refusal filled.
 */
int contract_check_notify(const char *method, const char *params, size_t params_length,
                          size_t max_depth, contract_refusal *refusal);

/* What is wrong with a result, when contract_check_result refuses it. */
typedef enum contract_result_fault {
    CONTRACT_RESULT_FINE,
    CONTRACT_RESULT_NOT_JSON,   /* NULL, or not JSON text: the call fails, nothing logged */
    CONTRACT_RESULT_OFF_SCHEMA, /* not what output_schema asks: refused and logged, reason */
} contract_result_fault;

/*
 * call_result's arguments: JSON text (at most max_depth deep; skipped when known_json, for
 * text already checked, as a call's own params), and an object that fits output (the method's
 * compiled output schema, borrowed; NULL: none). Returns RPCD_OK, or RPCD_ERR_INVALID_ARGUMENT with
 * *fault and, for CONTRACT_RESULT_OFF_SCHEMA, the reason in reason.
 */
int contract_check_result(const char *json, size_t json_length, size_t max_depth, bool known_json,
                          const json_schema *output, contract_result_fault *fault, char *reason,
                          size_t reason_size);

/*
 * call_tool_result's arguments: JSON text, a tool result as MCP defines it, whose
 * structuredContent fits output (compiled, borrowed; NULL: none). Returns RPCD_OK, or
 * RPCD_ERR_INVALID_ARGUMENT with the reason (logged by rpcd) in reason.
 */
int contract_check_tool_result(const char *json, size_t json_length, size_t max_depth,
                               const json_schema *output, char *reason, size_t reason_size);

/* call_fail's status: any RPCD_ERR_* but RPCD_ERR_APPLICATION (call_fail_code's). Returns
 * RPCD_OK or RPCD_ERR_INVALID_ARGUMENT. */
int contract_check_fail_status(int status);

/* A failure's message and data: message required when message_required (call_fail_code); data
 * NULL or JSON text at most max_depth deep. Returns RPCD_OK or RPCD_ERR_INVALID_ARGUMENT. */
int contract_check_failure(const char *message, bool message_required, const char *data,
                           size_t data_length, size_t max_depth);

/* call_progress's arguments: done finite, total not NaN, message NULL or UTF-8. Returns RPCD_OK
 * or RPCD_ERR_INVALID_ARGUMENT. */
int contract_check_progress(double done, double total, const char *message);

/*
 * call_meta's start: its outputs emptied (*length 0 and out "", each when given), then its
 * arguments checked: room (out non-NULL when out_size is not 0), a name NULL or UTF-8. Returns
 * RPCD_OK or RPCD_ERR_INVALID_ARGUMENT.
 */
int contract_begin_meta(const char *name, char *out, size_t out_size, size_t *length);

/*
 * call_meta's answer: value (value_length bytes, on one line) reported in *length (when given)
 * whatever the room, and copied into out NUL-terminated when it fits. Returns RPCD_OK, or
 * RPCD_ERR_INVALID_ARGUMENT when out has no room for it (out left empty).
 */
int contract_answer_meta(const char *value, size_t value_length, char *out, size_t out_size,
                         size_t *length);

/* call_complete's status: anything but RPCD_DEFERRED, which is RPCD_ERR_UNSUPPORTED. */
int contract_check_complete(int status);

/*
 * (1.6) What a client declared it can be asked (MCP's ClientCapabilities), as the bits
 * call_ask checks: 0 for a call nobody can be asked in.
 */
enum contract_ask_capability {
    CONTRACT_ASK_ELICIT_FORM = 1u << 0, /* "elicitation" (a form) */
    CONTRACT_ASK_ELICIT_URL = 1u << 1,  /* "elicitation": {"url": {}} */
    CONTRACT_ASK_SAMPLING = 1u << 2,    /* "sampling" */
    CONTRACT_ASK_ROOTS = 1u << 3,       /* "roots" */
};

/* The most questions of a round, their keys' and params' lengths, and the state's. */
enum {
    CONTRACT_MOST_QUESTIONS = 16,
    CONTRACT_MOST_KEY_BYTES = 64,
    CONTRACT_MOST_ASK_PARAMS = 64 * 1024,
    CONTRACT_MOST_STATE_BYTES = 16 * 1024,
};

/*
 * call_ask's arguments, asked_so_far questions into the round, for a client that declared
 * capabilities (contract_ask_capability bits): a key of 1 to CONTRACT_MOST_KEY_BYTES UTF-8
 * bytes, a method call_ask names, params NULL or a JSON object of at most
 * CONTRACT_MOST_ASK_PARAMS bytes and max_depth deep. Returns RPCD_OK, RPCD_ERR_INVALID_ARGUMENT,
 * or RPCD_ERR_UNSUPPORTED when the capability the method needs is not among capabilities.
 * *replaces is set when key was asked already (the count does not grow then): the caller says
 * so through asked_key.
 */
int contract_check_ask(const char *key, const char *method, const char *params,
                       size_t params_length, size_t max_depth, unsigned capabilities,
                       size_t asked_so_far, bool asked_key);

/* call_set_state's: NULL with length 0, or at most CONTRACT_MOST_STATE_BYTES bytes. */
int contract_check_state(const char *state, size_t length);

#endif
