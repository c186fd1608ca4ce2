/* SPDX-License-Identifier: MIT */
/*
 * The requests of MCP's Tasks extension (tasks/get, tasks/update, tasks/cancel), the wire shape
 * of a task, and the asker of a task's calls: a round that asks once the call is a task waits in
 * the task for tasks/update, and the call then runs again with the answers.
 */
#include "mcp/mcp_tasks_internal.h"

#include "base/clock.h"
#include "wire/rpc_error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const state_names[] = {
    [TASK_WORKING] = "working",     [TASK_INPUT_REQUIRED] = "input_required",
    [TASK_COMPLETED] = "completed", [TASK_FAILED] = "failed",
    [TASK_CANCELLED] = "cancelled",
};

/* An ISO 8601 time in UTC with milliseconds, from CLOCK_REALTIME milliseconds. */
static void iso_time(long long wall_ms, char out[64])
{
    time_t seconds = (time_t)(wall_ms / 1000);
    struct tm parts;
    gmtime_r(&seconds, &parts);
    snprintf(out, 64, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1,
             parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec, (int)(wall_ms % 1000));
}

/* The members of a Task (no braces): id, status, times, ttlMs, pollIntervalMs. */
static int append_task_fields(buffer *out, const mcp_task *task)
{
    const mcp_tasks_limits *limits = &task->store->limits;
    char created[64], updated[64];
    iso_time(task->created_wall_ms, created);
    iso_time(task->updated_wall_ms, updated);
    task_state state = task->state < TASK_WORKING ? TASK_WORKING : task->state;
    return buf_printf(out,
                      "\"taskId\":\"%s\",\"status\":\"%s\",\"createdAt\":\"%s\","
                      "\"lastUpdatedAt\":\"%s\",\"ttlMs\":%lld,\"pollIntervalMs\":%lld",
                      task->id, state_names[state], created, updated, limits->ttl_ms,
                      limits->poll_ms);
}

int task_append_created(buffer *out, const mcp_task *task)
{
    int failed = buf_append_string(out, "{\"resultType\":\"task\",");
    failed |= append_task_fields(out, task);
    failed |= buf_append_char(out, '}');
    return failed ? -1 : 0;
}

static bool has_member(const buffer *members, js_span key);

/* The questions of the round not answered yet, as the client sees them: an object. */
static int append_outstanding(buffer *out, const mcp_task *task)
{
    buffer object = BUFFER_INIT, original = BUFFER_INIT;
    int failed = buf_append_char(&object, '{');
    failed |= buf_append(&object, task->wire_questions.data, task->wire_questions.length);
    failed |= buf_append_char(&object, '}');
    failed |= buf_append_char(out, '{');
    bool first = true;
    js_iter iter;
    js_span key, value;
    js_iter_init(&iter, (js_span){object.data, object.length});
    while (!failed && js_iter_next(&iter, &key, &value)) {
        /* "N.key" is the handler's "key", which the answers hold once answered */
        const char *dot = memchr(key.start, '.', key.length);
        buf_clear(&original);
        failed |= buf_append_char(&original, '"');
        failed |= buf_append(&original, dot + 1, (size_t)(key.start + key.length - dot - 1));
        if (has_member(&task->answers, (js_span){original.data, original.length}))
            continue;
        if (!first)
            failed |= buf_append_char(out, ',');
        failed |= buf_append(out, key.start, key.length);
        failed |= buf_append_char(out, ':');
        failed |= buf_append(out, value.start, value.length);
        first = false;
    }
    failed |= buf_append_char(out, '}');
    buf_free(&object);
    buf_free(&original);
    return failed;
}

int task_append_detailed(buffer *out, const mcp_task *task)
{
    int failed = append_task_fields(out, task);
    const buffer *outcome = &task->outcome;
    if (task->state == TASK_INPUT_REQUIRED) {
        failed |= buf_append_string(out, ",\"inputRequests\":");
        failed |= append_outstanding(out, task);
    } else if (task->state == TASK_COMPLETED || task->state == TASK_FAILED) {
        js_span message;
        if (task->state == TASK_FAILED &&
            js_object_get((js_span){outcome->data, outcome->length}, "message", 7, &message) == 1 &&
            js_kind_of(message) == JS_STRING) {
            failed |= buf_append_string(out, ",\"statusMessage\":");
            failed |= buf_append(out, message.start, message.length);
        }
        failed |=
            buf_append_string(out, task->state == TASK_FAILED ? ",\"error\":" : ",\"result\":");
        failed |= buf_append(out, outcome->data, outcome->length);
    }
    return failed;
}

/* The refusals of the requests: -32602 with data naming the problem. */
static int refuse(buffer *out, int kind, const char *detail, js_span task_id)
{
    buf_clear(out);
    int failed = buf_append_string(out, "{\"detail\":");
    failed |= buf_append_json_string(out, detail, strlen(detail));
    if (task_id.length) {
        failed |= buf_append_string(out, ",\"taskId\":");
        failed |= buf_append(out, task_id.start, task_id.length);
    }
    failed |= buf_append_char(out, '}');
    return failed ? MCP_TASK_NO_MEMORY : kind;
}

/* The taskId of params, decoded into id (at most 64 bytes). Returns 0 or an mcp_task_answer. */
static int read_task_id(js_span params, js_span *raw, char id[65], size_t *length, buffer *out)
{
    *raw = (js_span){NULL, 0};
    if (params.length == 0 || js_kind_of(params) != JS_OBJECT ||
        js_object_get(params, "taskId", 6, raw) != 1 || js_kind_of(*raw) != JS_STRING)
        return refuse(out, MCP_TASK_INVALID, "\"taskId\" must be a string, given once",
                      (js_span){NULL, 0});
    if (js_string_decode(*raw, id, 65, length) != 0)
        return refuse(out, MCP_TASK_UNKNOWN, "no task has this id", (js_span){NULL, 0});
    return 0;
}

/* What each request names: its task id, read from params (raw: as written, for the refusal). */
typedef struct task_ref {
    js_span raw;
    char id[65];
    size_t length;
} task_ref;

static const char unknown_task[] = "no task has this id (never made, or expired)";

/* Reads params' taskId into ref: 0, or the refusal (out holds its data). A session that keeps
 * no tasks knows none. */
static int read_ref(const mcp_tasks *tasks, js_span params, buffer *out, task_ref *ref)
{
    int read = read_task_id(params, &ref->raw, ref->id, &ref->length, out);
    if (read == 0 && !tasks)
        return refuse(out, MCP_TASK_UNKNOWN, unknown_task, ref->raw);
    return read;
}

static int acknowledge(buffer *out)
{
    buf_clear(out);
    return buf_append_string(out, "{\"resultType\":\"complete\"}") ? MCP_TASK_NO_MEMORY
                                                                   : MCP_TASK_DONE;
}

int mcp_tasks_get(mcp_tasks *tasks, js_span params, buffer *out)
{
    task_ref ref;
    int read = read_ref(tasks, params, out, &ref);
    if (read != 0)
        return read;
    pthread_mutex_lock(&tasks->lock);
    mcp_task *task = task_find(tasks, ref.id, ref.length, clock_now_ms());
    int failed = 0;
    if (task) {
        buf_clear(out);
        failed = buf_append_string(out, "{\"resultType\":\"complete\",");
        failed |= task_append_detailed(out, task);
        failed |= buf_append_char(out, '}');
    }
    pthread_mutex_unlock(&tasks->lock);
    if (!task)
        return refuse(out, MCP_TASK_UNKNOWN, unknown_task, ref.raw);
    return failed ? MCP_TASK_NO_MEMORY : MCP_TASK_DONE;
}

int mcp_tasks_cancel(mcp_tasks *tasks, js_span params, buffer *out)
{
    task_ref ref;
    char call_id[MCP_TASK_CALL_ID_BYTES];
    int read = read_ref(tasks, params, out, &ref);
    if (read != 0)
        return read;
    pthread_mutex_lock(&tasks->lock);
    mcp_task *task = task_find(tasks, ref.id, ref.length, clock_now_ms());
    bool running = task && task->state == TASK_WORKING;
    if (running)
        snprintf(call_id, sizeof call_id, "%s", task->call_id);
    /* Cancelling an ended task is acknowledged, and changes nothing. */
    if (task && !task_terminal(task)) {
        task_finish(task, TASK_CANCELLED, NULL, 0);
        task_tell(task);
    }
    call_table *calls = tasks->calls;
    pthread_mutex_unlock(&tasks->lock);
    if (!task)
        return refuse(out, MCP_TASK_UNKNOWN, unknown_task, ref.raw);
    /* Its handler is told; whatever it ends with, the task stays cancelled. */
    if (running)
        call_cancel(calls, (js_span){call_id, strlen(call_id)}, CALL_CANCEL_RESPOND);
    return acknowledge(out);
}

/* Whether members (an object's text without its braces) have a member named key (raw JSON
 * string text, compared as it is written). */
static bool has_member(const buffer *members, js_span key)
{
    buffer object = BUFFER_INIT;
    bool found = false;
    if (buf_append_char(&object, '{') == 0 &&
        buf_append(&object, members->data, members->length) == 0 &&
        buf_append_char(&object, '}') == 0) {
        js_iter iter;
        js_span name, value;
        js_iter_init(&iter, (js_span){object.data, object.length});
        while (!found && js_iter_next(&iter, &name, &value))
            found = name.length == key.length && memcmp(name.start, key.start, key.length) == 0;
    }
    buf_free(&object);
    return found;
}

/* Whether every question of the round has its answer. */
static bool round_answered(const mcp_task *task)
{
    buffer object = BUFFER_INIT;
    bool all = true;
    if (buf_append_char(&object, '{') != 0 ||
        buf_append(&object, task->questions.data, task->questions.length) != 0 ||
        buf_append_char(&object, '}') != 0) {
        buf_free(&object);
        return false;
    }
    js_iter iter;
    js_span name, value;
    js_iter_init(&iter, (js_span){object.data, object.length});
    while (all && js_iter_next(&iter, &name, &value))
        all = has_member(&task->answers, name);
    buf_free(&object);
    return all;
}

/* The most questions of one round told apart (call_ask allows 16). */
enum { MOST_ROUND_KEYS = 64 };

/* The open round's keys (spans into questions, the round's questions as an object), and which
 * are answered: looked up once per tasks/update, not once per answer it brings. */
typedef struct round_keys {
    buffer questions;
    js_span keys[MOST_ROUND_KEYS];
    bool answered[MOST_ROUND_KEYS];
    size_t count;
} round_keys;

static int round_keys_of(const mcp_task *task, round_keys *out)
{
    memset(out, 0, sizeof *out);
    int failed = buf_append_char(&out->questions, '{');
    failed |= buf_append(&out->questions, task->questions.data, task->questions.length);
    failed |= buf_append_char(&out->questions, '}');
    if (failed)
        return -1;
    js_iter iter;
    js_span name, value;
    js_iter_init(&iter, (js_span){out->questions.data, out->questions.length});
    while (out->count < MOST_ROUND_KEYS && js_iter_next(&iter, &name, &value)) {
        out->answered[out->count] = has_member(&task->answers, name);
        out->keys[out->count++] = name;
    }
    return 0;
}

/*
 * Takes one answer of inputResponses: under a key the client was shown for the round still open
 * (its number, a dot, the handler's key) and not answered yet, an object. Anything else is
 * ignored, as the extension asks. Returns 0 or -1 (memory).
 */
static int take_answer(mcp_task *task, round_keys *round, js_span key, js_span value)
{
    char prefix[24];
    int prefix_length = snprintf(prefix, sizeof prefix, "\"%u.", task->round);
    if (key.length <= (size_t)prefix_length + 1 || memcmp(key.start, prefix, prefix_length) != 0 ||
        js_kind_of(value) != JS_OBJECT)
        return 0;
    /* What follows the prefix is the handler's key without its opening quote. */
    const char *rest = key.start + prefix_length;
    size_t rest_length = key.length - prefix_length;
    for (size_t i = 0; i < round->count; i++) {
        js_span name = round->keys[i];
        if (name.length != rest_length + 1 || memcmp(name.start + 1, rest, rest_length) != 0)
            continue;
        if (round->answered[i])
            return 0;
        round->answered[i] = true;
        int failed = task->answers.length ? buf_append_char(&task->answers, ',') : 0;
        failed |= buf_append(&task->answers, name.start, name.length);
        failed |= buf_append_char(&task->answers, ':');
        failed |= buf_append(&task->answers, value.start, value.length);
        return failed ? -1 : 0;
    }
    return 0;
}

/* A round whose answers are all in: the call to run again, into resume. Lock held. */
static int resume_round(mcp_task *task, mcp_task_resume *resume)
{
    memset(resume, 0, sizeof *resume);
    resume->task = task;
    snprintf(resume->call_id, sizeof resume->call_id, "%s", task->call_id);
    mcp_round_input *input = &resume->input;
    int failed = buf_append(&resume->params, task->params.data, task->params.length);
    failed |= buf_append_char(&input->answers, '{');
    failed |= buf_append(&input->answers, task->answers.data, task->answers.length);
    failed |= buf_append_char(&input->answers, '}');
    failed |= buf_append(&input->state, task->state_kept.data, task->state_kept.length);
    input->has_state = task->has_state;
    if (failed) {
        buf_free(&resume->params);
        mcp_round_input_free(input);
        return -1;
    }
    task->state = TASK_WORKING;
    buf_clear(&task->questions);
    buf_clear(&task->wire_questions);
    buf_clear(&task->answers);
    buf_clear(&task->state_kept);
    task->holds++; /* the call about to start */
    task_touch(task);
    task_recount(task);
    return 0;
}

int mcp_tasks_update(mcp_tasks *tasks, js_span params, buffer *out, mcp_task_resume *resume)
{
    js_span responses;
    task_ref ref;
    int read = read_task_id(params, &ref.raw, ref.id, &ref.length, out);
    if (read != 0)
        return read;
    if (js_object_get(params, "inputResponses", 14, &responses) != 1 ||
        js_kind_of(responses) != JS_OBJECT)
        return refuse(out, MCP_TASK_INVALID, "\"inputResponses\" must be an object, given once",
                      ref.raw);
    if ((read = read_ref(tasks, params, out, &ref)) != 0)
        return read;
    pthread_mutex_lock(&tasks->lock);
    mcp_task *task = task_find(tasks, ref.id, ref.length, clock_now_ms());
    int status = task ? MCP_TASK_DONE : MCP_TASK_UNKNOWN;
    /* Answers to a task that asks nothing now are ignored: it may have been answered already. */
    if (task && task->state == TASK_INPUT_REQUIRED) {
        js_iter iter;
        js_span key, value;
        round_keys round;
        if (round_keys_of(task, &round) != 0)
            status = MCP_TASK_NO_MEMORY;
        js_iter_init(&iter, responses);
        while (status == MCP_TASK_DONE && js_iter_next(&iter, &key, &value))
            if (take_answer(task, &round, key, value) != 0)
                status = MCP_TASK_NO_MEMORY;
        buf_free(&round.questions);
        if (status == MCP_TASK_DONE &&
            task->bytes + task->answers.length > tasks->limits.most_bytes)
            task_fail(task, RPC_INTERNAL_ERROR, "the task's answers are over max_task_bytes");
        else if (status == MCP_TASK_DONE && round_answered(task))
            status = resume_round(task, resume) == 0 ? MCP_TASK_RESUME : MCP_TASK_NO_MEMORY;
        if (task->state == TASK_INPUT_REQUIRED)
            task_recount(task);
        else
            task_tell(task);
    }
    pthread_mutex_unlock(&tasks->lock);
    if (status == MCP_TASK_UNKNOWN)
        return refuse(out, MCP_TASK_UNKNOWN, unknown_task, ref.raw);
    if (status == MCP_TASK_NO_MEMORY)
        return status;
    int acked = acknowledge(out);
    if (acked != MCP_TASK_DONE && status == MCP_TASK_RESUME) {
        mcp_tasks_resumed(resume, false, RPC_INTERNAL_ERROR, "out of memory");
        return acked;
    }
    return acked == MCP_TASK_DONE ? status : acked;
}

void mcp_tasks_resumed(mcp_task_resume *resume, bool started, int64_t code, const char *message)
{
    mcp_task *task = resume->task;
    if (!started) {
        mcp_tasks *store = task->store;
        pthread_mutex_lock(&store->lock);
        if (!task_terminal(task)) {
            task_fail(task, code, message);
            task_tell(task);
        }
        task_release(task); /* the call that never started */
        pthread_mutex_unlock(&store->lock);
    }
    buf_free(&resume->params);
    mcp_round_input_free(&resume->input);
}

/* ---- Asking, once a call is a task ------------------------------------------------------- */

/* The round's questions under the keys the client sees: its number, a dot, the handler's key. */
static int wire_questions(const mcp_task *task, const char *questions, size_t length, buffer *out)
{
    buffer object = BUFFER_INIT;
    int failed = buf_append_char(&object, '{');
    failed |= buf_append(&object, questions, length);
    failed |= buf_append_char(&object, '}');
    if (!failed) {
        js_iter iter;
        js_span key, value;
        bool first = true;
        js_iter_init(&iter, (js_span){object.data, object.length});
        while (!failed && js_iter_next(&iter, &key, &value)) {
            failed |= buf_printf(out, "%s\"%u.", first ? "" : ",", task->round);
            failed |= buf_append(out, key.start + 1, key.length - 1);
            failed |= buf_append_char(out, ':');
            failed |= buf_append(out, value.start, value.length);
            first = false;
        }
    }
    buf_free(&object);
    return failed ? -1 : 0;
}

static int task_ask(void *context, buffer *out, const call_round_end *round)
{
    mcp_task *task = context;
    mcp_tasks *store = task->store;
    pthread_mutex_lock(&store->lock);
    if (task->state == TASK_OPENING || task->state == TASK_PENDING) {
        /* Not a task yet: the request is answered with the questions, as any call's. */
        task->settled = true;
        pthread_mutex_unlock(&store->lock);
        return mcp_rounds_asker()->ask(store->rounds, out, round);
    }
    if (task->state != TASK_WORKING) { /* cancelled, or past its lifetime */
        pthread_mutex_unlock(&store->lock);
        return CALL_ASK_CANCELLED;
    }
    size_t more = 2 * round->questions_length + round->state_length + 64;
    int status = CALL_ASK_DEFERRED;
    task->round++;
    buf_clear(&task->questions);
    buf_clear(&task->wire_questions);
    buf_clear(&task->answers);
    buf_clear(&task->state_kept);
    if (store->bytes + more > store->limits.most_bytes ||
        buf_append(&task->questions, round->questions, round->questions_length) != 0 ||
        wire_questions(task, round->questions, round->questions_length, &task->wire_questions) !=
            0 ||
        (round->has_state &&
         buf_append(&task->state_kept, round->state, round->state_length) != 0)) {
        status = -1; /* the call fails with -32603, which the task keeps */
        buf_clear(&task->questions);
        buf_clear(&task->wire_questions);
        buf_clear(&task->state_kept);
    } else {
        task->has_state = round->has_state;
        task->state = TASK_INPUT_REQUIRED;
        task->deferred_ends++;
        task_touch(task);
    }
    task_recount(task);
    if (status == CALL_ASK_DEFERRED)
        task_tell(task);
    pthread_mutex_unlock(&store->lock);
    return status;
}

const call_asker *mcp_tasks_asker(void)
{
    static const call_asker asker = {task_ask};
    return &asker;
}
