/* SPDX-License-Identifier: MIT */
/*
 * The rounds of calls that asked a client for input, kept in rpcd under a random reference that
 * the client carries back. A reference rather than the state itself, sealed: the state never
 * leaves the process (a plugin may keep there what the client must not read), a client cannot
 * forge one (16 random bytes) nor use one twice (a claim takes it), and the store is bounded in
 * count and age. A retry must name the same tool and the same arguments: a client cannot carry
 * an answer given about one thing over to another.
 */
#include "mcp/mcp_rounds.h"

#include "base/clock.h"

#include <jansson.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* Arguments up to this length are kept and compared as values; longer ones by their bytes. */
enum { KEPT_ARGUMENTS = 4096 };

typedef struct round {
    char token[MCP_ROUND_TOKEN_CHARS + 1];
    char *method;
    char *arguments; /* a copy, or NULL when longer than KEPT_ARGUMENTS */
    size_t arguments_length;
    uint64_t arguments_hash; /* of the bytes, when not kept */
    buffer keys;             /* the questions' keys, each NUL-terminated */
    buffer state;
    bool has_state;
    long long expires_ms;
} round;

struct mcp_rounds {
    pthread_mutex_t lock;
    round *items; /* oldest first */
    size_t count;
};

int mcp_rounds_new(mcp_rounds **out)
{
    mcp_rounds *rounds = calloc(1, sizeof *rounds);
    if (!rounds || pthread_mutex_init(&rounds->lock, NULL) != 0) {
        free(rounds);
        return -1;
    }
    *out = rounds;
    return 0;
}

static void round_free(round *item)
{
    free(item->method);
    free(item->arguments);
    buf_free(&item->keys);
    buf_free(&item->state);
}

/* Drops the round at index. Lock held. */
static void drop(mcp_rounds *rounds, size_t index)
{
    round_free(&rounds->items[index]);
    memmove(&rounds->items[index], &rounds->items[index + 1],
            (rounds->count - index - 1) * sizeof rounds->items[0]);
    rounds->count--;
}

void mcp_rounds_free(mcp_rounds *rounds)
{
    if (!rounds)
        return;
    for (size_t i = 0; i < rounds->count; i++)
        round_free(&rounds->items[i]);
    free(rounds->items);
    pthread_mutex_destroy(&rounds->lock);
    free(rounds);
}

static uint64_t hash_of(const char *bytes, size_t length)
{
    uint64_t hash = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < length; i++)
        hash = (hash ^ (unsigned char)bytes[i]) * 1099511628211ULL;
    return hash;
}

/* 16 random bytes as base64url, NUL-terminated. Returns 0 or -1. */
static int new_token(char token[MCP_ROUND_TOKEN_CHARS + 1])
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    unsigned char bytes[16];
    size_t got = 0;
    while (got < sizeof bytes) {
        ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
        if (n < 0)
            return -1; /* EINTR included: a round is not worth a retry loop on signals */
        got += (size_t)n;
    }
    /* 22 characters of 6 bits: 128 bits, the last character carrying 2. */
    uint32_t bits = 0;
    int held = 0;
    size_t out = 0;
    for (size_t i = 0; i < sizeof bytes; i++) {
        bits = (bits << 8) | bytes[i];
        held += 8;
        while (held >= 6) {
            held -= 6;
            token[out++] = alphabet[(bits >> held) & 63];
        }
    }
    token[out++] = alphabet[(bits << (6 - held)) & 63];
    token[out] = '\0';
    return 0;
}

/* The keys of the questions' members, each NUL-terminated, into keys. Returns 0 or -1. */
static int keys_of(const char *questions, size_t length, buffer *keys)
{
    buffer object = BUFFER_INIT;
    int failed = buf_append_char(&object, '{');
    failed |= buf_append(&object, questions, length);
    failed |= buf_append_char(&object, '}');
    js_iter members;
    js_span key, value;
    if (!failed) {
        js_iter_init(&members, (js_span){object.data, object.length});
        while (!failed && js_iter_next(&members, &key, &value)) {
            size_t needed = js_string_decoded_length(key), decoded = 0;
            failed |= buf_reserve(keys, needed + 1);
            if (!failed &&
                js_string_decode(key, keys->data + keys->length, needed + 1, &decoded) == 0) {
                keys->length += decoded;
                failed |= buf_append_char(keys, '\0');
            }
        }
    }
    buf_free(&object);
    return failed ? -1 : 0;
}

/* Drops the rounds past their time. Lock held. */
static void drop_expired(mcp_rounds *rounds, long long now_ms)
{
    size_t kept = 0;
    for (size_t i = 0; i < rounds->count; i++) {
        if (rounds->items[i].expires_ms <= now_ms)
            round_free(&rounds->items[i]);
        else
            rounds->items[kept++] = rounds->items[i];
    }
    rounds->count = kept;
}

/* A round for the call, filled but for its token. Returns 0 or -1. */
static int make_round(round *item, const char *method, js_span arguments, const char *questions,
                      size_t questions_length, const char *state, size_t state_length,
                      bool has_state)
{
    memset(item, 0, sizeof *item);
    item->method = strdup(method);
    item->arguments_length = arguments.length;
    if (arguments.length <= KEPT_ARGUMENTS) {
        item->arguments = malloc(arguments.length + 1);
        if (item->arguments) {
            memcpy(item->arguments, arguments.start, arguments.length);
            item->arguments[arguments.length] = '\0';
        }
    } else {
        item->arguments_hash = hash_of(arguments.start, arguments.length);
    }
    item->has_state = has_state;
    int failed = !item->method || (arguments.length <= KEPT_ARGUMENTS && !item->arguments);
    failed |= keys_of(questions, questions_length, &item->keys);
    failed |= has_state ? buf_append(&item->state, state, state_length) : 0;
    item->expires_ms = clock_now_ms() + MCP_ROUND_TTL_MS;
    if (failed)
        round_free(item);
    return failed ? -1 : 0;
}

int mcp_rounds_ask(mcp_rounds *rounds, buffer *out, const char *method, js_span arguments,
                   const char *questions, size_t questions_length, const char *state,
                   size_t state_length, bool has_state)
{
    round item;
    if (make_round(&item, method, arguments, questions, questions_length, state, state_length,
                   has_state) != 0)
        return -1;
    if (new_token(item.token) != 0) {
        round_free(&item);
        return -1;
    }
    pthread_mutex_lock(&rounds->lock);
    drop_expired(rounds, clock_now_ms());
    if (rounds->count == MCP_MOST_ROUNDS)
        drop(rounds, 0);
    if (!rounds->items) {
        rounds->items = malloc(MCP_MOST_ROUNDS * sizeof rounds->items[0]);
        if (!rounds->items) {
            pthread_mutex_unlock(&rounds->lock);
            round_free(&item);
            return -1;
        }
    }
    rounds->items[rounds->count++] = item;
    pthread_mutex_unlock(&rounds->lock);
    int failed = buf_append_string(out, "{\"resultType\":\"input_required\",\"inputRequests\":{");
    failed |= buf_append(out, questions, questions_length);
    failed |= buf_append_string(out, "},\"requestState\":\"");
    failed |= buf_append_string(out, item.token);
    return failed | buf_append_string(out, "\"}");
}

/* Two arguments' texts the same value (or, when either is no JSON jansson reads, the same
 * bytes). */
static bool same_arguments(const round *item, js_span arguments)
{
    if (!item->arguments)
        return arguments.length == item->arguments_length &&
               hash_of(arguments.start, arguments.length) == item->arguments_hash;
    json_t *kept = json_loadb(item->arguments, item->arguments_length, JSON_DECODE_ANY, NULL);
    json_t *given = json_loadb(arguments.start, arguments.length, JSON_DECODE_ANY, NULL);
    bool same = kept && given ? json_equal(kept, given)
                              : arguments.length == item->arguments_length &&
                                    memcmp(arguments.start, item->arguments, arguments.length) == 0;
    json_decref(kept);
    json_decref(given);
    return same;
}

/* Every byte compared, whatever differs first: a guess learns nothing from the time taken. */
static bool same_token(const char *a, const char *b)
{
    unsigned char differs = 0;
    for (size_t i = 0; i < MCP_ROUND_TOKEN_CHARS; i++)
        differs |= (unsigned char)(a[i] ^ b[i]);
    return differs == 0;
}

/* The round named token, taken out of the store into *taken. Returns 1, or 0 when none. */
static int take(mcp_rounds *rounds, const char *token, round *taken)
{
    int found = 0;
    if (!rounds)
        return 0; /* a session that keeps no rounds gave none */
    pthread_mutex_lock(&rounds->lock);
    drop_expired(rounds, clock_now_ms());
    for (size_t i = 0; i < rounds->count && !found; i++) {
        if (same_token(rounds->items[i].token, token)) {
            *taken = rounds->items[i];
            memmove(&rounds->items[i], &rounds->items[i + 1],
                    (rounds->count - i - 1) * sizeof rounds->items[0]);
            rounds->count--;
            found = 1;
        }
    }
    pthread_mutex_unlock(&rounds->lock);
    return found;
}

/* True when key (a JSON string) is one of the round's keys. */
static bool was_asked(const round *item, js_span key)
{
    for (size_t at = 0; at < item->keys.length;) {
        const char *asked = item->keys.data + at;
        size_t length = strlen(asked);
        if (js_string_equals(key, asked, length))
            return true;
        at += length + 1;
    }
    return false;
}

/* The answers to the round's questions among responses (item NULL: every answer), into
 * answers. Returns 0, -1, or -2 with *problem. */
static int pick_answers(const round *item, js_span responses, buffer *answers, const char **problem)
{
    if (responses.length == 0)
        return 0;
    if (js_kind_of(responses) != JS_OBJECT) {
        *problem = "\"inputResponses\" must be an object of answers";
        return -2;
    }
    int failed = buf_append_char(answers, '{');
    js_iter members;
    js_span key, value, again;
    js_iter_init(&members, responses);
    bool first = true;
    while (!failed && js_iter_next(&members, &key, &value)) {
        if (item && !was_asked(item, key))
            continue; /* not a question of this round: ignored */
        if (js_object_get(responses, key.start + 1, key.length - 2, &again) > 1) {
            *problem = "\"inputResponses\" answers a question twice";
            return -2;
        }
        if (js_kind_of(value) != JS_OBJECT) {
            *problem = "an answer in \"inputResponses\" must be an object (the client's result)";
            return -2;
        }
        failed |= first ? 0 : buf_append_char(answers, ',');
        failed |= buf_append(answers, key.start, key.length);
        failed |= buf_append_char(answers, ':');
        size_t at = answers->length;
        failed |= buf_append(answers, value.start, value.length);
        if (!failed)
            answers->length = at + js_drop_line_breaks(answers->data + at, value.length);
        first = false;
    }
    failed |= buf_append_char(answers, '}');
    return failed ? -1 : 0;
}

int mcp_rounds_claim(mcp_rounds *rounds, const char *method, js_span arguments,
                     js_span request_state, js_span responses, mcp_round_input *input,
                     const char **problem)
{
    *input = (mcp_round_input){BUFFER_INIT, BUFFER_INIT, false};
    /* Answers without a round (MCP's ephemeral retry) reach the handler as given, with no
     * state: a client answers what it likes either way, and only the state is rpcd's to keep. */
    if (request_state.length == 0) {
        int status = pick_answers(NULL, responses, &input->answers, problem);
        if (status != 0)
            mcp_round_input_free(input);
        return status;
    }
    static const char stale[] = "\"requestState\" is not one rpcd gave for this tool and these "
                                "arguments, or it was used already or has expired";
    char token[MCP_ROUND_TOKEN_CHARS + 1];
    size_t length = 0;
    round item;
    if (js_kind_of(request_state) != JS_STRING ||
        js_string_decode(request_state, token, sizeof token, &length) != 0 ||
        length != MCP_ROUND_TOKEN_CHARS) {
        *problem = stale;
        return -2;
    }
    token[length] = '\0';
    if (!take(rounds, token, &item)) {
        *problem = stale;
        return -2;
    }
    int status = 0;
    if (strcmp(item.method, method) != 0 || !same_arguments(&item, arguments)) {
        *problem = stale;
        status = -2;
    } else {
        status = pick_answers(&item, responses, &input->answers, problem);
    }
    if (status == 0) {
        input->has_state = item.has_state;
        input->state = item.state;
        item.state = (buffer)BUFFER_INIT;
    } else {
        mcp_round_input_free(input);
    }
    round_free(&item);
    return status;
}

void mcp_round_input_free(mcp_round_input *input)
{
    buf_free(&input->answers);
    buf_free(&input->state);
    input->has_state = false;
}

const char *mcp_rounds_read_retry(js_span params, js_span *request_state, js_span *responses)
{
    js_span state, answers;
    size_t states = js_object_get(params, "requestState", 12, &state);
    size_t given = js_object_get(params, "inputResponses", 14, &answers);
    if (states > 1 || given > 1)
        return states > 1 ? "\"requestState\" appears twice" : "\"inputResponses\" appears twice";
    *request_state = states == 1 ? state : (js_span){NULL, 0};
    *responses = given == 1 ? answers : (js_span){NULL, 0};
    return NULL;
}

int mcp_rounds_identity(const reg_method *method, js_span params, buffer *scratch,
                        js_span *identity)
{
    *identity = params;
    if (method->mcp_role != RPCD_MCP_PROMPT || params.length == 0 ||
        js_kind_of(params) != JS_OBJECT)
        return 0;
    js_span name = {"null", 4}, arguments = {"{}", 2}, value;
    if (js_object_get(params, "name", 4, &value) == 1)
        name = value;
    if (js_object_get(params, "arguments", 9, &value) == 1)
        arguments = value;
    buf_clear(scratch);
    int failed =
        buf_append_string(scratch, "{\"name\":") | buf_append(scratch, name.start, name.length) |
        buf_append_string(scratch, ",\"arguments\":") |
        buf_append(scratch, arguments.start, arguments.length) | buf_append_char(scratch, '}');
    *identity = (js_span){scratch->data, scratch->length};
    return failed ? -1 : 0;
}

static int ask_through(void *context, buffer *out, const call_round_end *ended)
{
    buffer scratch = BUFFER_INIT;
    js_span identity;
    int status = mcp_rounds_identity(ended->method, ended->arguments, &scratch, &identity);
    if (status == 0)
        status = mcp_rounds_ask(context, out, ended->method->name, identity, ended->questions,
                                ended->questions_length, ended->state, ended->state_length,
                                ended->has_state);
    buf_free(&scratch);
    return status;
}

static const call_asker asker = {ask_through};

const call_asker *mcp_rounds_asker(void)
{
    return &asker;
}
