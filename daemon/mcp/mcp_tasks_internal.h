/* SPDX-License-Identifier: MIT */
/*
 * What the task store (mcp_tasks.c) and the requests of the extension (mcp_task_requests.c)
 * share: a task's record and the store's lock-held helpers.
 */
#ifndef RPCD_MCP_TASKS_INTERNAL_H
#define RPCD_MCP_TASKS_INTERNAL_H

#include "mcp/mcp_tasks.h"

#include <pthread.h>
#include <stdatomic.h>

typedef enum task_state {
    TASK_OPENING, /* its first call is being started */
    TASK_PENDING, /* its call runs, and answers the request itself unless it becomes a task */
    TASK_DIRECT,  /* its request was answered without a task: dropped once nothing holds it */
    TASK_WORKING, /* a task whose call runs */
    TASK_INPUT_REQUIRED, /* a task waiting for tasks/update */
    TASK_COMPLETED,
    TASK_FAILED,
    TASK_CANCELLED,
} task_state;

struct mcp_task {
    mcp_tasks *store;
    mcp_task *next;
    task_state state;
    bool settled;      /* its call asked before it became a task: it answers the request */
    int holds;         /* its opener's, and each call of it that has not ended */
    int deferred_ends; /* rounds that asked, whose calls have yet to say they ended */
    char id[33];       /* 32 hex digits: the taskId */
    char call_id[MCP_TASK_CALL_ID_BYTES]; /* "task-ID", the id its calls run under */
    buffer request_id;                    /* the tools/call's id, until it is answered */
    uint64_t ticket;
    long long created_wall_ms,
        updated_wall_ms;                    /* CLOCK_REALTIME, for createdAt and lastUpdatedAt */
    long long promote_at_ms, expires_at_ms; /* clock_now_ms() */
    buffer params;  /* the tools/call's params, to run the tool again after tasks/update */
    buffer outcome; /* TASK_COMPLETED: the result; TASK_FAILED: the error object */
    /* TASK_INPUT_REQUIRED: the round's questions ("key":{...} members) by the handler's keys
     * and by the keys the client sees (the round's number, a dot, the handler's key: unique
     * over the task's life), the answers so far by the handler's keys, and its state. */
    buffer questions, wire_questions, answers, state_kept;
    bool has_state;
    unsigned round;
    size_t bytes; /* task_bytes when last counted */
};

struct mcp_tasks {
    /* A plain mutex, not base/lock.h's: the watcher waits on changed with it, and is started
     * while it is held. */
    pthread_mutex_t lock;
    pthread_cond_t changed; /* CLOCK_MONOTONIC: a call started, the store stops */
    output *out;
    mcp_rounds *rounds;
    call_table *calls;
    struct mcp_listeners *listeners; /* where status changes are told, or NULL */
    mcp_tasks_limits limits;
    mcp_task *first;
    size_t count, bytes;
    /* How many are requests not yet tasks (TASK_OPENING, TASK_PENDING): changed under the
     * lock, read without it by the look-ups every request makes. */
    atomic_size_t open_requests;
    bool watching, stopping, closed;
    pthread_t watcher;
};

/* Lock held for all of these. */
bool task_terminal(const mcp_task *task);
bool task_expired(const mcp_task *task, long long now);
void task_touch(mcp_task *task);
/* Counts what the task holds anew against the store's bytes. */
void task_recount(mcp_task *task);
/* Drops one hold; a task nothing holds that is done is freed. */
void task_release(mcp_task *task);
/* Ends the task in state with outcome (length bytes of JSON, or NULL), dropping its round. */
void task_finish(mcp_task *task, task_state state, const char *outcome, size_t length);
/* Ends the task failed with the JSON-RPC error code and message. */
void task_fail(mcp_task *task, int64_t code, const char *message);
/* The live task (made, not expired) with this id (length bytes), or NULL. */
mcp_task *task_find(mcp_tasks *store, const char *id, size_t length, long long now);
/* Appends a CreateTaskResult for the task. Returns 0 or -1 (memory). */
int task_append_created(buffer *out, const mcp_task *task);
/* Appends a DetailedTask's members (no braces). Returns 0 or -1 (memory). */
int task_append_detailed(buffer *out, const mcp_task *task);

/* Tells the task's status as it is now on the listen streams that asked for it
 * (notifications/tasks), under the lock so that they hear its changes in the order made. */
void task_tell(const mcp_task *task);

#endif
