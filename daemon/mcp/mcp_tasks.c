/* SPDX-License-Identifier: MIT */
/*
 * The task store: a tools/call that may become a task, from its first call to its expiry. Its
 * calls answer through the store (the sink), which passes a quick answer on to the request and
 * keeps a task's outcome; its watcher makes a task of a call that runs past task_after_ms and
 * drops tasks past their ttlMs. The requests of the extension are in mcp_task_requests.c.
 */
#include "mcp/mcp_tasks_internal.h"

#include "base/clock.h"
#include "base/log.h"
#include "base/signals.h"
#include "mcp/mcp_listen.h"
#include "wire/response_line.h"
#include "wire/rpc_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

static long long wall_now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

void task_touch(mcp_task *task)
{
    task->updated_wall_ms = wall_now_ms();
}

bool task_terminal(const mcp_task *task)
{
    return task->state == TASK_COMPLETED || task->state == TASK_FAILED ||
           task->state == TASK_CANCELLED;
}

bool task_expired(const mcp_task *task, long long now)
{
    return task->state >= TASK_WORKING && now >= task->expires_at_ms;
}

static void task_free(mcp_task *task)
{
    buf_free(&task->request_id);
    buf_free(&task->params);
    buf_free(&task->outcome);
    buf_free(&task->questions);
    buf_free(&task->wire_questions);
    buf_free(&task->answers);
    buf_free(&task->state_kept);
    free(task);
}

/* What a task holds, against max_task_bytes. */
static size_t task_bytes(const mcp_task *task)
{
    return task->request_id.length + task->params.length + task->outcome.length +
           task->questions.length + task->wire_questions.length + task->answers.length +
           task->state_kept.length;
}

void task_recount(mcp_task *task)
{
    mcp_tasks *store = task->store;
    size_t now = task_bytes(task);
    store->bytes = store->bytes - task->bytes + now;
    task->bytes = now;
}

/* Unlinks and frees a task nothing holds any more that is done: answered directly, or past its
 * lifetime. Lock held. */
static void maybe_drop(mcp_task *task, long long now)
{
    if (task->holds > 0 || !(task->state == TASK_DIRECT || task_expired(task, now)))
        return;
    mcp_tasks *store = task->store;
    for (mcp_task **link = &store->first; *link; link = &(*link)->next)
        if (*link == task) {
            *link = task->next;
            break;
        }
    store->count--;
    store->bytes -= task->bytes;
    task_free(task);
}

void task_release(mcp_task *task)
{
    task->holds--;
    maybe_drop(task, clock_now_ms());
}

void task_finish(mcp_task *task, task_state state, const char *outcome, size_t length)
{
    task->state = state;
    buf_clear(&task->outcome);
    buf_clear(&task->questions);
    buf_clear(&task->wire_questions);
    buf_clear(&task->answers);
    buf_clear(&task->state_kept);
    if (outcome && buf_append(&task->outcome, outcome, length) != 0) {
        /* No room to keep it: the task fails, saying that much. */
        static const char lost[] = "{\"code\":-32603,\"message\":\"Internal error\"}";
        task->state = TASK_FAILED;
        buf_clear(&task->outcome);
        buf_append(&task->outcome, lost, sizeof lost - 1);
    }
    task_touch(task);
    task_recount(task);
}

void task_fail(mcp_task *task, int64_t code, const char *message)
{
    buffer error = BUFFER_INIT;
    int failed = buf_printf(&error, "{\"code\":%lld,\"message\":", (long long)code);
    failed |= buf_append_json_string(&error, message, strlen(message));
    failed |= buf_append_char(&error, '}');
    task_finish(task, TASK_FAILED, failed ? NULL : error.data, failed ? 0 : error.length);
    if (failed) /* task_finish's own words, with no room for these */
        task_finish(task, TASK_FAILED, "{\"code\":-32603,\"message\":\"Internal error\"}", 43);
    buf_free(&error);
}

mcp_task *task_find(mcp_tasks *store, const char *id, size_t length, long long now)
{
    for (mcp_task *task = store->first; task; task = task->next)
        if (task->state >= TASK_WORKING && !task_expired(task, now) && strlen(task->id) == length &&
            memcmp(task->id, id, length) == 0)
            return task;
    return NULL;
}

void task_tell(const mcp_task *task)
{
    mcp_tasks *store = task->store;
    if (!store->listeners)
        return;
    buffer members = BUFFER_INIT;
    if (task_append_detailed(&members, task) == 0)
        mcp_listen_task_changed(store->listeners, task->id, members.data, members.length);
    buf_free(&members);
}

/* The task whose request (not yet a task) has this id. Lock held. */
static mcp_task *find_request(mcp_tasks *store, js_span request_id)
{
    for (mcp_task *task = store->first; task; task = task->next)
        if ((task->state == TASK_OPENING || task->state == TASK_PENDING) &&
            task->request_id.length == request_id.length &&
            memcmp(task->request_id.data, request_id.start, request_id.length) == 0)
            return task;
    return NULL;
}

/* ---- The watcher: promotions and expiries --------------------------------------------------- */

/*
 * Makes a task of the first call past task_after_ms, its CreateTaskResult into line for the
 * request (id into request_id, ticket): 1; or cancels the call of the first task past its
 * lifetime (its call id into call_id): 2; or nothing due: 0, *next the next time something is
 * (-1: none). Lock held.
 */
static int next_due(mcp_tasks *store, long long now, buffer *line, buffer *request_id,
                    uint64_t *ticket, char *call_id, long long *next)
{
    *next = -1;
    mcp_task *after = NULL;
    for (mcp_task *task = store->first; task; task = after) {
        after = task->next;
        long long due = -1;
        if (task->state == TASK_PENDING && !task->settled) {
            if (now >= task->promote_at_ms) {
                task->state = TASK_WORKING;
                atomic_fetch_sub(&store->open_requests, 1);
                task_touch(task);
                *ticket = task->ticket;
                buf_clear(line);
                buf_clear(request_id);
                if (task_append_created(line, task) != 0 ||
                    buf_append(request_id, task->request_id.data, task->request_id.length) != 0)
                    return -1;
                task_tell(task);
                return 1;
            }
            due = task->promote_at_ms;
        } else if (task->state >= TASK_WORKING) {
            if (now >= task->expires_at_ms) {
                bool running = task->state == TASK_WORKING;
                if (!task_terminal(task)) {
                    task_fail(task, RPC_INTERNAL_ERROR, "the task outlived its ttlMs");
                    task_tell(task);
                }
                maybe_drop(task, now);
                if (running) {
                    snprintf(call_id, MCP_TASK_CALL_ID_BYTES, "%s", task->call_id);
                    return 2;
                }
                continue;
            }
            due = task->expires_at_ms;
        }
        if (due >= 0 && (*next < 0 || due < *next))
            *next = due;
    }
    return 0;
}

static void *watch(void *context)
{
    mcp_tasks *store = context;
    buffer line = BUFFER_INIT, request_id = BUFFER_INIT;
    pthread_mutex_lock(&store->lock);
    while (!store->stopping) {
        long long next;
        uint64_t ticket = 0;
        char call_id[MCP_TASK_CALL_ID_BYTES];
        int due = next_due(store, clock_now_ms(), &line, &request_id, &ticket, call_id, &next);
        if (due != 0) {
            pthread_mutex_unlock(&store->lock);
            if (due == 1) {
                const js_span id = {request_id.data, request_id.length};
                struct iovec parts[RL_RESULT_PARTS];
                int count = rl_result_parts(parts, &id, line.data, line.length);
                out_write_ticket(store->out, ticket, parts, count);
            } else if (due == 2) {
                call_cancel(store->calls, (js_span){call_id, strlen(call_id)}, CALL_CANCEL_RESPOND);
            } else if (due < 0) {
                log_message(LOG_ERROR, "out of memory making a task");
            }
            pthread_mutex_lock(&store->lock);
            continue;
        }
        if (next < 0) {
            pthread_cond_wait(&store->changed, &store->lock);
            continue;
        }
        struct timespec until = clock_timespec_of_ms(next);
        pthread_cond_timedwait(&store->changed, &store->lock, &until);
    }
    pthread_mutex_unlock(&store->lock);
    buf_free(&line);
    buf_free(&request_id);
    return NULL;
}

/* ---- The store ---------------------------------------------------------------------------- */

int mcp_tasks_new(output *out, mcp_rounds *rounds, mcp_tasks **result)
{
    mcp_tasks *store = calloc(1, sizeof *store);
    if (!store)
        return -1;
    store->out = out;
    store->rounds = rounds;
    store->limits = MCP_TASKS_LIMITS;
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    int failed = pthread_cond_init(&store->changed, &monotonic);
    pthread_condattr_destroy(&monotonic);
    if (failed) {
        free(store);
        return -1;
    }
    pthread_mutex_init(&store->lock, NULL);
    *result = store;
    return 0;
}

void mcp_tasks_configure(mcp_tasks *tasks, call_table *calls, mcp_listeners *listeners,
                         mcp_tasks_limits limits)
{
    if (!tasks)
        return;
    pthread_mutex_lock(&tasks->lock);
    tasks->calls = calls;
    tasks->listeners = listeners;
    tasks->limits = limits;
    pthread_mutex_unlock(&tasks->lock);
}

void mcp_tasks_free(mcp_tasks *tasks)
{
    if (!tasks)
        return;
    pthread_mutex_lock(&tasks->lock);
    tasks->stopping = true;
    pthread_cond_broadcast(&tasks->changed);
    bool watching = tasks->watching;
    pthread_mutex_unlock(&tasks->lock);
    if (watching)
        pthread_join(tasks->watcher, NULL);
    for (mcp_task *task = tasks->first, *next; task; task = next) {
        next = task->next;
        task_free(task);
    }
    pthread_cond_destroy(&tasks->changed);
    pthread_mutex_destroy(&tasks->lock);
    free(tasks);
}

void mcp_tasks_close(mcp_tasks *tasks)
{
    if (!tasks)
        return;
    pthread_mutex_lock(&tasks->lock);
    tasks->closed = true;
    for (mcp_task *task = tasks->first; task; task = task->next)
        if (task->state == TASK_INPUT_REQUIRED)
            task_fail(task, RPC_REQUEST_CANCELLED, "rpcd stopped before the task was answered");
    pthread_mutex_unlock(&tasks->lock);
}

size_t mcp_tasks_count(mcp_tasks *tasks)
{
    if (!tasks)
        return 0;
    pthread_mutex_lock(&tasks->lock);
    size_t count = tasks->count;
    pthread_mutex_unlock(&tasks->lock);
    return count;
}

/* 16 random bytes as 32 hex digits: an id nobody can guess. Returns 0 or -1. */
static int random_id(char out[33])
{
    unsigned char bytes[16];
    size_t got = 0;
    while (got < sizeof bytes) {
        ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof bytes; i++)
        snprintf(out + 2 * i, 3, "%02x", bytes[i]);
    return 0;
}

int mcp_tasks_open(mcp_tasks *tasks, js_span request_id, uint64_t ticket, js_span params,
                   mcp_task **result, char *call_id)
{
    if (!tasks)
        return MCP_TASKS_FULL;
    mcp_task *task = calloc(1, sizeof *task);
    if (!task || random_id(task->id) != 0 ||
        buf_append(&task->request_id, request_id.start, request_id.length) != 0 ||
        buf_append(&task->params, params.start, params.length) != 0) {
        if (task)
            task_free(task);
        return -1;
    }
    snprintf(task->call_id, sizeof task->call_id, "\"task-%s\"", task->id);
    task->store = tasks;
    task->ticket = ticket;
    task->holds = 2; /* the opener's, and its call's */
    task->created_wall_ms = task->updated_wall_ms = wall_now_ms();
    task->bytes = task_bytes(task);
    pthread_mutex_lock(&tasks->lock);
    if (tasks->closed || tasks->count >= tasks->limits.most_tasks ||
        tasks->bytes + task->bytes > tasks->limits.most_bytes) {
        pthread_mutex_unlock(&tasks->lock);
        task_free(task);
        return MCP_TASKS_FULL;
    }
    long long now = clock_now_ms();
    task->expires_at_ms = now + tasks->limits.ttl_ms;
    /* Last: the watcher goes through tasks oldest first, and so makes them tasks in order. */
    mcp_task **end = &tasks->first;
    while (*end)
        end = &(*end)->next;
    *end = task;
    tasks->count++;
    atomic_fetch_add(&tasks->open_requests, 1);
    tasks->bytes += task->bytes;
    if (!tasks->watching)
        tasks->watching = sig_start_quiet_thread(&tasks->watcher, watch, tasks) == 0;
    pthread_mutex_unlock(&tasks->lock);
    snprintf(call_id, MCP_TASK_CALL_ID_BYTES, "%s", task->call_id);
    *result = task;
    return 0;
}

void mcp_tasks_started(mcp_task *task)
{
    mcp_tasks *store = task->store;
    pthread_mutex_lock(&store->lock);
    if (task->state == TASK_OPENING) {
        task->state = TASK_PENDING;
        task->promote_at_ms = clock_now_ms() + store->limits.after_ms;
        pthread_cond_broadcast(&store->changed);
    }
    task_release(task);
    pthread_mutex_unlock(&store->lock);
}

void mcp_tasks_abandon(mcp_task *task)
{
    mcp_tasks *store = task->store;
    pthread_mutex_lock(&store->lock);
    task->state = TASK_DIRECT;
    atomic_fetch_sub(&store->open_requests, 1);
    task->holds--; /* its call's, which never started */
    task_release(task);
    pthread_mutex_unlock(&store->lock);
}

bool mcp_tasks_waiting(mcp_tasks *tasks, js_span request_id)
{
    /* Every request asks: without a request that is not yet a task, no lock is taken. */
    if (!tasks || atomic_load(&tasks->open_requests) == 0)
        return false;
    pthread_mutex_lock(&tasks->lock);
    bool waiting = find_request(tasks, request_id) != NULL;
    pthread_mutex_unlock(&tasks->lock);
    return waiting;
}

int mcp_tasks_cancel_request(mcp_tasks *tasks, js_span request_id, bool lsp)
{
    if (!tasks || atomic_load(&tasks->open_requests) == 0)
        return 0;
    char call_id[MCP_TASK_CALL_ID_BYTES];
    pthread_mutex_lock(&tasks->lock);
    mcp_task *task = find_request(tasks, request_id);
    if (task)
        snprintf(call_id, sizeof call_id, "%s", task->call_id);
    call_table *calls = tasks->calls;
    pthread_mutex_unlock(&tasks->lock);
    if (!task)
        return 0;
    call_cancel(calls, (js_span){call_id, strlen(call_id)},
                lsp ? CALL_CANCEL_RESPOND : CALL_CANCEL_SILENT);
    return 1;
}

/* ---- The sink: a call's response, to its request or into its task --------------------------- */

/* The member of a response line that is its outcome: "result" (*is_error false) or "error". */
static int outcome_of(const buffer *line, js_span *outcome, bool *is_error)
{
    js_span value = {line->data, line->length};
    *is_error = false;
    if (js_object_get(value, "result", 6, outcome) == 1)
        return 0;
    *is_error = true;
    return js_object_get(value, "error", 5, outcome) == 1 ? 0 : -1;
}

static void task_deliver(void *context, const struct iovec *parts, int count)
{
    mcp_task *task = context;
    mcp_tasks *store = task->store;
    buffer line = BUFFER_INIT, request_id = BUFFER_INIT;
    int joined = 0;
    for (int i = 0; i < count; i++)
        joined |= buf_append(&line, parts[i].iov_base, parts[i].iov_len);
    js_span outcome = {NULL, 0};
    bool is_error = false;
    if (count > 0 && (joined != 0 || outcome_of(&line, &outcome, &is_error) != 0)) {
        static const char lost[] = "{\"code\":-32603,\"message\":\"Internal error\"}";
        outcome = (js_span){lost, sizeof lost - 1};
        is_error = true;
    }
    bool answer = false, drop = false;
    uint64_t ticket = 0;
    pthread_mutex_lock(&store->lock);
    if (count == 0 && task->deferred_ends > 0) {
        task->deferred_ends--; /* the end of a round that asked: the task waits for answers */
    } else if (task->state == TASK_OPENING || task->state == TASK_PENDING) {
        /* Not a task (yet): the request gets the call's answer under its own id. */
        task->state = TASK_DIRECT;
        atomic_fetch_sub(&store->open_requests, 1);
        ticket = task->ticket;
        buffer swap = task->request_id;
        task->request_id = request_id;
        request_id = swap;
        answer = count > 0;
        drop = count == 0;
    } else if (!task_terminal(task)) {
        if (count == 0)
            task_finish(task, TASK_CANCELLED, NULL, 0);
        else if (store->bytes + outcome.length > store->limits.most_bytes) /* its own too */
            task_fail(task, RPC_INTERNAL_ERROR, "the task's outcome is over max_task_bytes");
        else
            task_finish(task, is_error ? TASK_FAILED : TASK_COMPLETED, outcome.start,
                        outcome.length);
        task_tell(task);
    }
    task_release(task);
    pthread_mutex_unlock(&store->lock);
    if (answer) {
        static const char head[] = RL_HEAD "\"id\":";
        const char *member = is_error ? ",\"error\":" : ",\"result\":";
        struct iovec out[5] = {
            {(void *)head, sizeof head - 1},
            {request_id.data, request_id.length},
            {(void *)member, strlen(member)},
            {(void *)outcome.start, outcome.length},
            {"}", 1},
        };
        out_write_ticket(store->out, ticket, out, 5);
    } else if (drop) {
        out_ticket_drop(store->out, ticket);
    }
    buf_free(&line);
    buf_free(&request_id);
}

const call_sink *mcp_tasks_sink(void)
{
    static const call_sink sink = {task_deliver};
    return &sink;
}
