/* SPDX-License-Identifier: MIT */
/*
 * The rounds of calls that asked a client of MCP 2026-07-28 for input (ABI 1.6's call_ask): each
 * kept under a random requestState, with the state its handler kept, until the client retries
 * the call with its answers, at most once, within MCP_ROUND_TTL_MS.
 */
#ifndef RPCD_MCP_ROUNDS_H
#define RPCD_MCP_ROUNDS_H

#include "base/buffer.h"
#include "calls/call.h"
#include "json/json_scan.h"

#include <stdbool.h>
#include <stddef.h>

/*
 * How many rounds wait at once (a new one beyond drops the oldest, whose retry is then refused
 * as stale), how long one waits (a person answers; a client that never retries leaves nothing
 * behind for long), and the length of a requestState (16 random bytes, base64url).
 */
enum {
    MCP_MOST_ROUNDS = 1024,
    MCP_ROUND_TTL_MS = 10 * 60 * 1000,
    MCP_ROUND_TOKEN_CHARS = 22,
};

/* The rounds of one client's session. Thread-safe: rounds end on workers, and are claimed on
 * the reading thread. */
typedef struct mcp_rounds mcp_rounds;

/* Returns 0 and *out (new, empty), or -1 (memory). */
int mcp_rounds_new(mcp_rounds **out);
/* Frees the store and every round in it. NULL is fine. */
void mcp_rounds_free(mcp_rounds *rounds);

/*
 * Keeps a round of the call of method (its name, NUL-terminated) with arguments (JSON text, the
 * handler's params): the keys of questions (the members' text of the inputRequests object,
 * rpcd's own: valid), and state (state_length bytes; has_state false: none). Appends to out the
 * result that asks: {"resultType":"input_required","inputRequests":{questions},
 * "requestState":"TOKEN"}. Returns 0, or -1 (memory, or no randomness: nothing kept).
 */
int mcp_rounds_ask(mcp_rounds *rounds, buffer *out, const char *method, js_span arguments,
                   const char *questions, size_t questions_length, const char *state,
                   size_t state_length, bool has_state);

/* What a retry brings back (mcp_rounds_claim): the answers to the round's questions and its
 * state. */
typedef struct mcp_round_input {
    buffer answers; /* a JSON object on one line: the asked keys the client answered */
    buffer state;
    bool has_state;
} mcp_round_input;

/*
 * Takes the round a retry of method with arguments names: request_state (a JSON value of the
 * request, "requestState"; empty span: none) and responses (its "inputResponses"; empty: none).
 * A round is used once; its answers are those to its questions. Responses without a
 * requestState (MCP's ephemeral retry) are every answer given, with no state. Returns 0 with
 * *input filled (empty when neither was given: a first round), -1 (memory), or -2 with
 * *problem (static text) for the client's -32602: a requestState rpcd did not give for this
 * tool and these arguments (or gave, and it was used, dropped or expired), responses that are
 * not an object, a key given twice, or an answer kept that is not an object. rounds may be
 * NULL (a session that keeps none): every requestState is then unknown.
 */
int mcp_rounds_claim(mcp_rounds *rounds, const char *method, js_span arguments,
                     js_span request_state, js_span responses, mcp_round_input *input,
                     const char **problem);

/*
 * What a request (params, an object) brings back for its round: its "requestState" and its
 * "inputResponses" (empty spans when absent). Returns NULL, or the problem (static text) when
 * either appears twice.
 */
const char *mcp_rounds_read_retry(js_span params, js_span *request_state, js_span *responses);

/*
 * The part of a call's params (the handler's) that a round is kept for and its retry must
 * repeat, into *identity: a prompt's "name" and "arguments" (built in scratch: its params are
 * the request's as they are, with what changes between retries, _meta, requestState and
 * inputResponses); any other method's params whole. Returns 0, or -1 (memory).
 */
int mcp_rounds_identity(const reg_method *method, js_span params, buffer *scratch,
                        js_span *identity);

/* The asker of calls whose rounds a store keeps (asker_context: the mcp_rounds). Static. */
const call_asker *mcp_rounds_asker(void);

/* Frees what a claim filled in. */
void mcp_round_input_free(mcp_round_input *input);

#endif
