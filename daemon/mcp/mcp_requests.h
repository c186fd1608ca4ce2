/* SPDX-License-Identifier: MIT */
/*
 * rpcd's own requests to a client of MCP's handshake era (2025-11-25 and before): a round of a
 * call that asks (ABI 1.6's call_ask) goes out as one request per question, and the client's
 * responses are gathered under the call until the round is whole; the call then runs again.
 */
#ifndef RPCD_MCP_REQUESTS_H
#define RPCD_MCP_REQUESTS_H

#include "base/buffer.h"
#include "base/output.h"
#include "calls/call.h"
#include "json/json_scan.h"
#include "mcp/mcp_rounds.h"

#include <stdbool.h>
#include <stddef.h>

/*
 * What a store keeps: how many rounds wait at once and how many bytes they hold (their call's
 * params, state, questions and the answers so far: a round beyond either fails its call with
 * -32603, an answer beyond it fails its round), and how long a round waits for all its answers
 * before its call fails (a tool error) and its requests are cancelled. A session's are
 * MCP_REQUESTS_LIMITS: a person answers, as long as a round of the stateless revision waits.
 */
typedef struct mcp_requests_limits {
    size_t most_rounds;
    size_t most_bytes;
    long long wait_ms; /* > 0 */
} mcp_requests_limits;
#define MCP_REQUESTS_LIMITS ((mcp_requests_limits){1024, 64u << 20, MCP_ROUND_TTL_MS})

/* The rounds of one session that wait for the client's answers. Thread-safe. Every function
 * below takes NULL for a session that keeps none (nothing waits, nothing is an answer). */
typedef struct mcp_requests mcp_requests;

/* An empty store writing to out (borrowed, outlives it), within limits. Returns 0 and *result
 * (new), or -1 (memory). */
int mcp_requests_new(output *out, mcp_requests_limits limits, mcp_requests **result);
/* Stops its thread and frees the store; rounds still waiting are dropped unanswered
 * (mcp_requests_close answers them). NULL is fine. */
void mcp_requests_free(mcp_requests *requests);

/* The asker that sends a round's questions as requests (asker_context: the store). Static. */
const call_asker *mcp_requests_asker(void);

/* A round whose answers are all in: the call to run again, with them. */
typedef struct mcp_resumed {
    /* static: the request the call came from: tools/call, prompts/get or resources/read (by its
     * method's role) */
    const char *method;
    buffer id;     /* the call's request id, as the client wrote it */
    buffer params; /* the params of that request */
    /* answers: a JSON object, each question's key and the client's result; and the state the
     * handler kept for the next round */
    mcp_round_input input;
} mcp_resumed;

/* Frees what mcp_requests_answer filled in. */
void mcp_resumed_free(mcp_resumed *resumed);

enum mcp_answer_result {
    MCP_ANSWER_NO_MEMORY = -1,
    MCP_ANSWER_UNKNOWN = 0, /* no request of rpcd's waits for this id: ignored */
    MCP_ANSWER_TAKEN = 1,   /* kept; its round waits for more */
    MCP_ANSWER_RESUMED = 2, /* its round is whole: *resumed (filled, the caller's) */
    /* an error, or a result that is not an object: its call was answered with a tool error
     * saying so (a prompt's or a resource's with -32603), and the round's other requests
     * cancelled */
    MCP_ANSWER_FAILED = 3,
};

/*
 * A response object from the client: its id, and its result or its error (the one it has; an
 * empty span for the other). Returns an mcp_answer_result. Thread-safe.
 */
int mcp_requests_answer(mcp_requests *requests, js_span id, js_span result, js_span error,
                        mcp_resumed *resumed);

/* Whether the call with this id (its text) waits for the client's answers. Thread-safe. */
bool mcp_requests_waiting(mcp_requests *requests, js_span id);

/*
 * The client cancelled the call id while its round waits: the round is dropped, its requests
 * cancelled (notifications/cancelled), and with respond the call answered -32800. Returns 1
 * when one waited, 0 otherwise. Thread-safe.
 */
int mcp_requests_cancel(mcp_requests *requests, js_span id, bool respond);

/*
 * The session ends: each waiting round's call is answered -32800 and its requests cancelled; a
 * round that ends later is refused (its call answered -32800 too). Thread-safe.
 */
void mcp_requests_close(mcp_requests *requests);

#endif
