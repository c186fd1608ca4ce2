/* SPDX-License-Identifier: MIT */
/*
 * MCP's Tasks extension (2026-07-28): a tools/call of a tool that may run as a task
 * (RPCD_METHOD_TASK), from a request that declares the extension, answers directly when its call
 * ends within task_after_ms, and otherwise with a task the client polls (tasks/get), answers
 * (tasks/update) and ends (tasks/cancel). The store keeps the session's tasks, bounded in count,
 * bytes and lifetime, and is the sink and the asker of their calls.
 */
#ifndef RPCD_MCP_TASKS_H
#define RPCD_MCP_TASKS_H

#include "base/buffer.h"
#include "base/output.h"
#include "calls/call.h"
#include "json/json_scan.h"
#include "mcp/mcp_rounds.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a store keeps (the config's max_tasks, max_task_bytes, task_ttl_ms, task_after_ms). */
typedef struct mcp_tasks_limits {
    size_t most_tasks;  /* tasks kept at once, answered directly or not */
    size_t most_bytes;  /* what they hold: params, questions, answers, state, outcome */
    long long ttl_ms;   /* how long a task is kept from its creation (its ttlMs) */
    long long after_ms; /* how long a call runs before it becomes a task */
    long long poll_ms;  /* the pollIntervalMs the client is told */
} mcp_tasks_limits;
#define MCP_TASKS_LIMITS ((mcp_tasks_limits){256, 64u << 20, 3600000, 1000, 500})

/* One client's tasks. Thread-safe; every function takes NULL for a session that keeps none. */
typedef struct mcp_tasks mcp_tasks;
/* One tools/call that may become a task, from mcp_tasks_open until its last call ended. */
typedef struct mcp_task mcp_task;

/* An empty store writing to out, whose tasks ask through rounds when they answer directly (both
 * borrowed, outliving it). Returns 0 and *result (new), or -1 (memory). */
int mcp_tasks_new(output *out, mcp_rounds *rounds, mcp_tasks **result);
/* Sets the table the tasks' calls run in and the listen streams their changes are told on
 * (both borrowed, outliving the store's calls; listeners may be NULL), and the limits. Before the
 * first mcp_tasks_open. */
struct mcp_listeners;
void mcp_tasks_configure(mcp_tasks *tasks, call_table *calls, struct mcp_listeners *listeners,
                         mcp_tasks_limits limits);
/* Stops its thread and frees the store, once every call it was the sink of has ended. */
void mcp_tasks_free(mcp_tasks *tasks);
/* The end of serving: a task waiting for answers fails (-32800); none is made any more. */
void mcp_tasks_close(mcp_tasks *tasks);

/* The sink and the asker of a task's calls (sink_context, asker_context: its mcp_task). */
const call_sink *mcp_tasks_sink(void);
const call_asker *mcp_tasks_asker(void);

enum { MCP_TASKS_FULL = -2 };

/*
 * A tools/call request (its id's text and ticket, which the store answers from now on, and its
 * params whole, kept to run the tool again after tasks/update) that may become a task. Writes
 * the id its call runs under to call_id (a JSON string, NUL-terminated, MCP_TASK_CALL_ID_BYTES)
 * and returns 0 with *task; MCP_TASKS_FULL when max_tasks or max_task_bytes leave no room, -1
 * (memory). Then either mcp_tasks_started(task) once its call started, or mcp_tasks_abandon(task)
 * when it did not (its request was answered otherwise).
 */
enum { MCP_TASK_CALL_ID_BYTES = 48 };
int mcp_tasks_open(mcp_tasks *tasks, js_span request_id, uint64_t ticket, js_span params,
                   mcp_task **task, char *call_id);
void mcp_tasks_started(mcp_task *task);
void mcp_tasks_abandon(mcp_task *task);

/* Whether a request with this id waits for its call's answer through the store. Thread-safe. */
bool mcp_tasks_waiting(mcp_tasks *tasks, js_span request_id);
/* A client's cancellation of such a request (not yet a task): its call is cancelled (lsp: with
 * -32800, else silently). Returns 1 when one was found, 0 otherwise. */
int mcp_tasks_cancel_request(mcp_tasks *tasks, js_span request_id, bool lsp);

/* A task's call to run again with the answers of tasks/update (mcp_tasks_update's). */
typedef struct mcp_task_resume {
    mcp_task *task;
    char call_id[MCP_TASK_CALL_ID_BYTES];
    buffer params;         /* the tools/call's params */
    mcp_round_input input; /* the answers, by the handler's keys, and its state */
} mcp_task_resume;
/* Once the call was started (started) or could not be (code, message: the task's error). Frees
 * what resume holds. */
void mcp_tasks_resumed(mcp_task_resume *resume, bool started, int64_t code, const char *message);

enum mcp_task_answer {
    MCP_TASK_NO_MEMORY = -1,
    MCP_TASK_DONE = 0,    /* out holds the result */
    MCP_TASK_UNKNOWN = 1, /* no task has this id (never, or expired): -32602, out holds data */
    MCP_TASK_INVALID = 2, /* params are wrong: -32602, out holds data */
    MCP_TASK_RESUME = 3,  /* tasks/update completed a round: out holds the result, *resume the
                             call to start */
};

/* tasks/get, tasks/cancel and tasks/update of params (the request's). Return an
 * mcp_task_answer. */
int mcp_tasks_get(mcp_tasks *tasks, js_span params, buffer *out);
int mcp_tasks_cancel(mcp_tasks *tasks, js_span params, buffer *out);
int mcp_tasks_update(mcp_tasks *tasks, js_span params, buffer *out, mcp_task_resume *resume);

/*
 * Routing (mcp_task_route.c, for mcp_call.c): tasks/get, tasks/update and tasks/cancel (id) of a
 * request of era with params; a request of the handshake era gets -32601 (rpcd does not speak
 * that era's tasks), one that does not declare the extension -32021. Returns 0 with *route.
 */
struct mcp_route;
int mcp_route_task_method(int id, int era, js_span params, buffer *out, struct mcp_route *route);
/* The -32021 refusal of a request that does not declare the extension. Returns 0. */
int mcp_refuse_without_tasks(buffer *out, struct mcp_route *route);

/* How many tasks the store keeps (direct answers pending included). Thread-safe. */
size_t mcp_tasks_count(mcp_tasks *tasks);

#endif
