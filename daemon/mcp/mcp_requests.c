/* SPDX-License-Identifier: MIT */
/*
 * rpcd's own requests to a client of MCP's handshake era: a round that asks goes out as
 * requests numbered by rpcd, waits for their responses (bounded in count, bytes and time), and
 * comes back whole for its call to run again. A thread of the store's fails the rounds whose
 * client does not answer in time.
 */
#include "mcp/mcp_requests.h"

#include "base/clock.h"
#include "base/log.h"
#include "base/signals.h"
#include "mcp/mcp.h"
#include "wire/response_line.h"
#include "wire/rpc_error.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One question of a round: its key (JSON string text, rpcd's own: valid) and its request's
 * method (JSON string text), for the answers and for what the log and a failure say. */
typedef struct question {
    buffer key;
    buffer method;
    bool answered;
} question;

typedef struct waiting_round {
    const char *message_method; /* static: the MCP request the call came from */
    buffer id;                  /* the call's id, as the client wrote it */
    buffer params;              /* the params of the call's message */
    buffer state;
    bool has_state;
    buffer answers;         /* "key":result members so far */
    uint64_t first_request; /* rpcd's requests are first_request .. + question_count - 1 */
    question *questions;    /* question_count */
    size_t question_count;
    size_t unanswered;
    long long due_ms; /* clock_now_ms() by which the answers must be in */
    size_t bytes;     /* what it holds, against limits.most_bytes */
} waiting_round;

struct mcp_requests {
    output *out;
    mcp_requests_limits limits;
    pthread_mutex_t lock; /* guards everything below */
    pthread_cond_t changed;
    waiting_round *rounds;
    size_t count, capacity;
    size_t bytes;
    atomic_size_t waiting; /* count, read without the lock */
    uint64_t next_request;
    bool closed;
    bool watching, stopping;
    pthread_t watcher;
};

static void round_free(waiting_round *item)
{
    buf_free(&item->id);
    buf_free(&item->params);
    buf_free(&item->state);
    buf_free(&item->answers);
    for (size_t i = 0; i < item->question_count; i++) {
        buf_free(&item->questions[i].key);
        buf_free(&item->questions[i].method);
    }
    free(item->questions);
    *item = (waiting_round){0};
}

/* Writes one line; a failed output is the reader's to find, as for every line. */
static void write_line(mcp_requests *requests, const buffer *line)
{
    struct iovec part = {line->data, line->length};
    (void)out_write_line(requests->out, &part, 1);
}

/* notifications/cancelled for each request of item still unanswered, with reason. */
static void cancel_requests(mcp_requests *requests, const waiting_round *item, const char *reason)
{
    buffer line = BUFFER_INIT;
    for (size_t i = 0; i < item->question_count; i++) {
        if (item->questions[i].answered)
            continue;
        buf_clear(&line);
        int failed = buf_printf(&line,
                                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                                "\"params\":{\"requestId\":%" PRIu64 ",\"reason\":",
                                item->first_request + i);
        failed |= buf_append_json_string(&line, reason, strlen(reason));
        failed |= buf_append_string(&line, "}}");
        if (!failed)
            write_line(requests, &line);
    }
    buf_free(&line);
}

/* Answers item's call with the JSON-RPC error code (and message; NULL: the code's): -32800 (its
 * session ends, or the client asked so), or -32603. */
static void answer_error(mcp_requests *requests, const waiting_round *item, int64_t code,
                         const char *message)
{
    buffer line = BUFFER_INIT;
    js_span id = {item->id.data, item->id.length};
    if (rl_append_error(&line, &id, code, message ? message : rpcerr_message(code), NULL, 0) == 0)
        write_line(requests, &line);
    buf_free(&line);
}

/* Answers item's call as failed for the reason text: a tool with a tool error (the model reads
 * it), a prompt or a resource with -32603 and the text as its message. */
static void answer_failed(mcp_requests *requests, const waiting_round *item, const char *text)
{
    if (strcmp(item->message_method, "tools/call") != 0) {
        answer_error(requests, item, RPC_INTERNAL_ERROR, text);
        return;
    }
    buffer line = BUFFER_INIT;
    int failed = buf_append_string(&line, "{\"jsonrpc\":\"2.0\",\"id\":");
    failed |= buf_append(&line, item->id.data, item->id.length);
    failed |= buf_append_string(&line, ",\"result\":");
    failed |= mcp_append_tool_error(&line, text, strlen(text));
    failed |= buf_append_char(&line, '}');
    if (!failed)
        write_line(requests, &line);
    buf_free(&line);
    if (failed) /* still its one answer */
        answer_error(requests, item, RPC_INTERNAL_ERROR, NULL);
}

/* Takes round index out of the store into *item. Lock held. */
static void take_round(mcp_requests *requests, size_t index, waiting_round *item)
{
    *item = requests->rounds[index];
    requests->bytes -= item->bytes;
    requests->rounds[index] = requests->rounds[--requests->count];
    atomic_store(&requests->waiting, requests->count);
}

/* Fails the rounds past their time; the earliest time left, or -1 when none waits. Lock held. */
static long long expire_due(mcp_requests *requests)
{
    long long now = clock_now_ms(), earliest = -1;
    for (size_t i = 0; i < requests->count;) {
        waiting_round *item = &requests->rounds[i];
        if (item->due_ms > now) {
            if (earliest < 0 || item->due_ms < earliest)
                earliest = item->due_ms;
            i++;
            continue;
        }
        waiting_round gone;
        take_round(requests, i, &gone);
        char text[160];
        snprintf(text, sizeof text, "the client did not answer within %.3g s",
                 (double)requests->limits.wait_ms / 1000);
        log_message(LOG_INFO, "a call of id %.*s: %s",
                    (int)(gone.id.length < 64 ? gone.id.length : 64), gone.id.data, text);
        cancel_requests(requests, &gone, "not answered in time");
        answer_failed(requests, &gone, text);
        round_free(&gone);
    }
    return earliest;
}

static void *watch(void *context)
{
    mcp_requests *requests = context;
    pthread_mutex_lock(&requests->lock);
    while (!requests->stopping) {
        long long due = expire_due(requests);
        if (due < 0) {
            pthread_cond_wait(&requests->changed, &requests->lock);
            continue;
        }
        struct timespec until = {(time_t)(due / 1000), (long)(due % 1000) * 1000000};
        pthread_cond_timedwait(&requests->changed, &requests->lock, &until);
    }
    pthread_mutex_unlock(&requests->lock);
    return NULL;
}

int mcp_requests_new(output *out, mcp_requests_limits limits, mcp_requests **result)
{
    mcp_requests *requests = calloc(1, sizeof *requests);
    if (!requests)
        return -1;
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    int failed = pthread_cond_init(&requests->changed, &monotonic);
    pthread_condattr_destroy(&monotonic);
    if (failed) {
        free(requests);
        return -1;
    }
    pthread_mutex_init(&requests->lock, NULL);
    requests->out = out;
    requests->limits = limits;
    requests->next_request = 1;
    atomic_init(&requests->waiting, 0);
    *result = requests;
    return 0;
}

void mcp_requests_free(mcp_requests *requests)
{
    if (!requests)
        return;
    pthread_mutex_lock(&requests->lock);
    requests->stopping = true;
    pthread_cond_broadcast(&requests->changed);
    bool watching = requests->watching;
    pthread_mutex_unlock(&requests->lock);
    if (watching)
        pthread_join(requests->watcher, NULL);
    for (size_t i = 0; i < requests->count; i++)
        round_free(&requests->rounds[i]);
    free(requests->rounds);
    pthread_cond_destroy(&requests->changed);
    pthread_mutex_destroy(&requests->lock);
    free(requests);
}

/*
 * The round ended as a waiting round, its requests numbered from first, and their lines into
 * lines (each ending with a newline). The questions are "key":{"method":...,"params":...}
 * members, rpcd's own text. Returns 0, or -1 (memory).
 */
static int make_round(const call_round_end *ended, uint64_t first, waiting_round *item,
                      buffer *lines)
{
    js_span params = ended->call_params.length ? ended->call_params : ended->arguments;
    /* The request a handler of this role serves: the call runs again as it. */
    static const char *const by_role[] = {"tools/call", "resources/read", "prompts/get"};
    *item = (waiting_round){
        .message_method =
            ended->method->mcp_role < 3 ? by_role[ended->method->mcp_role] : "tools/call",
        .has_state = ended->has_state,
        .first_request = first,
    };
    buffer object = BUFFER_INIT;
    int failed = buf_append(&item->id, ended->id.start, ended->id.length) |
                 buf_append(&item->params, params.start, params.length) |
                 buf_append(&item->state, ended->state, ended->state_length) |
                 buf_append_char(&object, '{') |
                 buf_append(&object, ended->questions, ended->questions_length) |
                 buf_append_char(&object, '}');
    item->questions =
        calloc(ended->question_count ? ended->question_count : 1, sizeof *item->questions);
    js_iter members;
    js_span key, value, method, request_params;
    js_iter_init(&members, (js_span){object.data, object.length});
    while (!failed && item->questions && item->question_count < ended->question_count &&
           js_iter_next(&members, &key, &value)) {
        question *asked = &item->questions[item->question_count];
        js_object_get(value, "method", 6, &method);
        js_object_get(value, "params", 6, &request_params);
        failed |= buf_append(&asked->key, key.start, key.length) |
                  buf_append(&asked->method, method.start, method.length) |
                  buf_printf(lines, "{\"jsonrpc\":\"2.0\",\"id\":%" PRIu64 ",\"method\":",
                             first + item->question_count) |
                  buf_append(lines, method.start, method.length) |
                  buf_append_string(lines, ",\"params\":") |
                  buf_append(lines, request_params.start, request_params.length) |
                  buf_append_string(lines, "}\n");
        item->question_count++;
    }
    buf_free(&object);
    item->unanswered = item->question_count;
    item->bytes =
        item->id.length + item->params.length + item->state.length + ended->questions_length;
    if (failed || item->question_count == 0) {
        round_free(item);
        return -1;
    }
    return 0;
}

/* Writes each line of lines (newline-terminated) as a line of the output. */
static void write_lines(mcp_requests *requests, const buffer *lines)
{
    for (size_t at = 0; at < lines->length;) {
        const char *end = memchr(lines->data + at, '\n', lines->length - at);
        size_t length = (size_t)(end - (lines->data + at));
        struct iovec part = {lines->data + at, length};
        (void)out_write_line(requests->out, &part, 1);
        at += length + 1;
    }
}

static int ask_by_request(void *context, buffer *out, const call_round_end *ended)
{
    (void)out;
    mcp_requests *requests = context;
    waiting_round item = {0};
    buffer lines = BUFFER_INIT;
    pthread_mutex_lock(&requests->lock);
    int status = CALL_ASK_DEFERRED;
    if (requests->closed) {
        status = CALL_ASK_CANCELLED;
    } else if (make_round(ended, requests->next_request, &item, &lines) != 0) {
        status = -1;
    } else if (requests->count >= requests->limits.most_rounds ||
               item.bytes > requests->limits.most_bytes - requests->bytes) {
        log_message(LOG_WARNING,
                    "%zu calls holding %zu bytes wait for the client's answers already: a call "
                    "of %s asking for %zu more fails",
                    requests->count, requests->bytes, ended->method->name, item.bytes);
        status = -1;
    } else if (requests->count == requests->capacity) {
        size_t capacity = requests->capacity ? requests->capacity * 2 : 8;
        waiting_round *grown = realloc(requests->rounds, capacity * sizeof *grown);
        if (grown)
            requests->rounds = grown, requests->capacity = capacity;
        else
            status = -1;
    }
    /* The thread that fails rounds not answered in time, started with the first. */
    if (status == CALL_ASK_DEFERRED && !requests->watching)
        requests->watching = sig_start_quiet_thread(&requests->watcher, watch, requests) == 0;
    if (status == CALL_ASK_DEFERRED && requests->watching) {
        item.due_ms = clock_now_ms() + requests->limits.wait_ms;
        requests->next_request += item.question_count;
        requests->rounds[requests->count++] = item;
        requests->bytes += item.bytes;
        atomic_store(&requests->waiting, requests->count);
        pthread_cond_broadcast(&requests->changed);
        /* Under the lock: a cancellation of the round cannot go out before its requests. */
        write_lines(requests, &lines);
    } else {
        status = status == CALL_ASK_DEFERRED ? -1 : status;
        round_free(&item);
    }
    pthread_mutex_unlock(&requests->lock);
    buf_free(&lines);
    return status;
}

static const call_asker asker = {ask_by_request};

const call_asker *mcp_requests_asker(void)
{
    return &asker;
}

void mcp_resumed_free(mcp_resumed *resumed)
{
    buf_free(&resumed->id);
    buf_free(&resumed->params);
    mcp_round_input_free(&resumed->input);
}

/* The round of rpcd's request number, and the question's index in it: its place, or -1. Lock
 * held. */
static long find_request(const mcp_requests *requests, uint64_t number, size_t *index)
{
    for (size_t i = 0; i < requests->count; i++) {
        const waiting_round *item = &requests->rounds[i];
        if (number >= item->first_request && number - item->first_request < item->question_count) {
            *index = (size_t)(number - item->first_request);
            return item->questions[*index].answered ? -1 : (long)i;
        }
    }
    return -1;
}

/* The request number an id names: a JSON number of digits alone, as rpcd writes them. */
static bool request_number(js_span id, uint64_t *number)
{
    if (id.length == 0 || id.length > 19 || js_kind_of(id) != JS_NUMBER)
        return false;
    uint64_t value = 0;
    for (size_t i = 0; i < id.length; i++) {
        if (id.start[i] < '0' || id.start[i] > '9')
            return false;
        value = value * 10 + (uint64_t)(id.start[i] - '0');
    }
    *number = value;
    return true;
}

/* Why the client's response is no answer (an error, a result that is not an object, or one
 * past what rounds may hold), as the tool error says it, into text. */
static void describe_refusal(const question *asked, js_span error, bool too_large, char *text,
                             size_t size)
{
    js_span message;
    const char *method = asked->method.data + 1;
    int method_length = (int)asked->method.length - 2;
    if (error.length > 0 && js_kind_of(error) == JS_OBJECT &&
        js_object_get(error, "message", 7, &message) == 1 && js_kind_of(message) == JS_STRING) {
        /* Its first 256 bytes, cut where a character ends (it is valid UTF-8: rpcd's scanner
         * checked the line), and where a NUL would have. */
        size_t needed = js_string_decoded_length(message), length = 0, shown = 0;
        char *decoded = malloc(needed + 1);
        if (decoded && js_string_decode(message, decoded, needed + 1, &length) != 0)
            length = 0;
        while (shown < length && decoded[shown] != '\0') {
            size_t step = js_utf8_sequence_length(decoded + shown, length - shown);
            if (step == 0 || shown + step > 256)
                break;
            shown += step;
        }
        snprintf(text, size, "the client answered %.*s with an error: %.*s", method_length, method,
                 (int)shown, decoded ? decoded : "");
        free(decoded);
    } else if (error.length > 0) {
        snprintf(text, size, "the client answered %.*s with an error", method_length, method);
    } else if (too_large) {
        snprintf(text, size,
                 "the client's answer to %.*s is larger than rpcd keeps for the "
                 "calls that wait",
                 method_length, method);
    } else {
        snprintf(text, size, "the client's answer to %.*s is not an object", method_length, method);
    }
}

/* Fills resumed from a round whose answers are all in (taken out of the store: the caller frees
 * it). Returns 0 or -1. */
static int resume(waiting_round *item, mcp_resumed *resumed)
{
    *resumed = (mcp_resumed){.method = item->message_method, .input.has_state = item->has_state};
    resumed->id = item->id;
    resumed->params = item->params;
    resumed->input.state = item->state;
    item->id = item->params = item->state = (buffer)BUFFER_INIT;
    buffer *answers = &resumed->input.answers;
    int failed = buf_append_char(answers, '{') |
                 buf_append(answers, item->answers.data, item->answers.length) |
                 buf_append_char(answers, '}');
    if (failed)
        mcp_resumed_free(resumed);
    return failed ? -1 : 0;
}

int mcp_requests_answer(mcp_requests *requests, js_span id, js_span result, js_span error,
                        mcp_resumed *resumed)
{
    uint64_t number;
    size_t index = 0;
    if (!requests || !request_number(id, &number))
        return MCP_ANSWER_UNKNOWN;
    pthread_mutex_lock(&requests->lock);
    long place = find_request(requests, number, &index);
    if (place < 0) {
        pthread_mutex_unlock(&requests->lock);
        return MCP_ANSWER_UNKNOWN;
    }
    waiting_round *item = &requests->rounds[place];
    question *asked = &item->questions[index];
    int status = MCP_ANSWER_TAKEN;
    bool too_large = result.length > requests->limits.most_bytes - requests->bytes;
    if (error.length > 0 || js_kind_of(result) != JS_OBJECT || too_large) {
        char text[400];
        describe_refusal(asked, error, too_large, text, sizeof text);
        asked->answered = true;
        waiting_round gone;
        take_round(requests, (size_t)place, &gone);
        cancel_requests(requests, &gone, "the round failed");
        answer_failed(requests, &gone, text);
        round_free(&gone);
        status = MCP_ANSWER_FAILED;
    } else {
        int failed = (item->answers.length > 0 ? buf_append_char(&item->answers, ',') : 0) |
                     buf_append(&item->answers, asked->key.data, asked->key.length) |
                     buf_append_char(&item->answers, ':') |
                     buf_append(&item->answers, result.start, result.length);
        item->bytes += result.length;
        requests->bytes += result.length;
        asked->answered = true;
        if (failed)
            status = MCP_ANSWER_NO_MEMORY;
        else if (--item->unanswered == 0) {
            waiting_round whole;
            take_round(requests, (size_t)place, &whole);
            status = resume(&whole, resumed) == 0 ? MCP_ANSWER_RESUMED : MCP_ANSWER_NO_MEMORY;
            if (status == MCP_ANSWER_NO_MEMORY)
                answer_failed(requests, &whole, "out of memory");
            round_free(&whole);
        }
    }
    pthread_mutex_unlock(&requests->lock);
    return status;
}

/* The place of the round of the call id, or -1. Lock held. */
static long find_call(const mcp_requests *requests, js_span id)
{
    for (size_t i = 0; i < requests->count; i++) {
        const buffer *known = &requests->rounds[i].id;
        if (known->length == id.length && memcmp(known->data, id.start, id.length) == 0)
            return (long)i;
    }
    return -1;
}

bool mcp_requests_waiting(mcp_requests *requests, js_span id)
{
    if (!requests || atomic_load(&requests->waiting) == 0)
        return false;
    pthread_mutex_lock(&requests->lock);
    bool found = find_call(requests, id) >= 0;
    pthread_mutex_unlock(&requests->lock);
    return found;
}

int mcp_requests_cancel(mcp_requests *requests, js_span id, bool respond)
{
    if (!requests || atomic_load(&requests->waiting) == 0)
        return 0;
    pthread_mutex_lock(&requests->lock);
    long place = find_call(requests, id);
    if (place >= 0) {
        waiting_round gone;
        take_round(requests, (size_t)place, &gone);
        cancel_requests(requests, &gone, "the client cancelled the call");
        if (respond)
            answer_error(requests, &gone, RPC_REQUEST_CANCELLED, NULL);
        round_free(&gone);
    }
    pthread_mutex_unlock(&requests->lock);
    return place >= 0;
}

void mcp_requests_close(mcp_requests *requests)
{
    if (!requests)
        return;
    pthread_mutex_lock(&requests->lock);
    requests->closed = true;
    while (requests->count > 0) {
        waiting_round gone;
        take_round(requests, requests->count - 1, &gone);
        cancel_requests(requests, &gone, "the session ends");
        answer_error(requests, &gone, RPC_REQUEST_CANCELLED, NULL);
        round_free(&gone);
    }
    pthread_mutex_unlock(&requests->lock);
}
