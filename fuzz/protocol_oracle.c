/* SPDX-License-Identifier: MIT */
/*
 * The protocol fuzzer's output oracle. The input is read by its own rules here (which lines
 * can hold requests, which members make a request with an id), and jansson judges the output
 * too, so that a bug in the daemon's scanner cannot hide itself.
 */
#include "protocol_oracle.h"

#include "json/json_scan.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How often one id text was asked and answered. */
typedef struct id_tally {
    const char *text; /* borrowed from the input or the output */
    size_t length;
    size_t requests, responses;
} id_tally;

typedef struct tally {
    id_tally *ids;
    size_t count, capacity;
    bool relaxed; /* an id may go unanswered: a cancellation, or a line at the length limit */
} tally;

static id_tally *tally_find(tally *t, const char *text, size_t length, bool add)
{
    for (size_t i = 0; i < t->count; i++)
        if (t->ids[i].length == length && memcmp(t->ids[i].text, text, length) == 0)
            return &t->ids[i];
    if (!add)
        return NULL;
    if (t->count == t->capacity) {
        size_t capacity = t->capacity ? t->capacity * 2 : 32;
        id_tally *grown = realloc(t->ids, capacity * sizeof *grown);
        if (!grown)
            abort();
        t->ids = grown;
        t->capacity = capacity;
    }
    t->ids[t->count] = (id_tally){text, length, 0, 0};
    return &t->ids[t->count++];
}

/* One message of the input (a line's object, or a batch element): notes the id it must get. */
static void note_message(tally *t, js_span message)
{
    if (js_kind_of(message) != JS_OBJECT)
        return;
    js_iter members;
    js_span key, value, id = {NULL, 0}, method = {NULL, 0};
    size_t ids = 0;
    bool has_method = false, has_answer = false;
    js_iter_init(&members, message);
    while (js_iter_next(&members, &key, &value)) {
        if (js_string_equals(key, "id", 2)) {
            id = value;
            ids++;
        } else if (js_string_equals(key, "method", 6)) {
            method = value;
            has_method = true;
        } else if (js_string_equals(key, "result", 6) || js_string_equals(key, "error", 5)) {
            has_answer = true;
        }
    }
    if (has_method && js_kind_of(method) == JS_STRING &&
        js_string_equals(method, "notifications/cancelled", 23))
        t->relaxed = true; /* the call it names gets no response at all */
    if (ids != 1 || (!has_method && has_answer))
        return; /* no id to echo, or a response sent to rpcd: never answered */
    js_kind kind = js_kind_of(id);
    if (kind == JS_STRING || kind == JS_NUMBER)
        tally_find(t, id.start, id.length, true)->requests++;
}

/* Every request with an id, line by line, as the framing and the envelope rules see them. */
static void note_input(tally *t, const oracle_limits *limits, const char *input, size_t length)
{
    for (size_t start = 0; start < length;) {
        const char *line = input + start;
        const char *newline = memchr(line, '\n', length - start);
        size_t line_length = newline ? (size_t)(newline - line) : length - start;
        start += line_length + 1;
        if (line_length > 0 && line[line_length - 1] == '\r')
            line_length--;
        if (line_length + 1 >= limits->max_line_bytes && line_length <= limits->max_line_bytes + 1)
            t->relaxed = true; /* which side of the limit it falls on is the reader's business */
        else if (line_length > limits->max_line_bytes)
            continue; /* answered with id null */
        js_span value;
        if (js_validate(line, line_length, limits->max_depth, &value, NULL) != 0)
            continue; /* a parse error: id null */
        if (js_kind_of(value) != JS_ARRAY) {
            note_message(t, value);
            continue;
        }
        js_iter elements;
        js_span element;
        size_t count = 0;
        js_iter_init(&elements, value);
        while (js_iter_next(&elements, NULL, &element))
            count++;
        if (count == 0 || count > limits->max_batch)
            continue; /* one error for the whole line, id null */
        js_iter_init(&elements, value);
        while (js_iter_next(&elements, NULL, &element))
            note_message(t, element);
    }
}

/*
 * jansson refuses some valid JSON that rpcd passes through untouched (ids, params): numbers it
 * cannot hold, lone surrogates, \u0000 in a key.
 */
static bool jansson_limit(const char *reason)
{
    static const char *const reasons[] = {"too big",
                                          "overflow",
                                          "surrogate",
                                          "invalid Unicode",
                                          "NUL byte in object key",
                                          "maximum parsing depth"};
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
        if (strstr(reason, reasons[i]))
            return true;
    return false;
}

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "oracle: " __VA_ARGS__);                                                   \
        fprintf(stderr, "\n  line: %.*s\n", (int)(length > 2000 ? 2000 : length), line);           \
        return -1;                                                                                 \
    } while (0)

static bool raw_key_is(js_span key, const char *name)
{
    size_t length = strlen(name);
    return key.length == length + 2 && memcmp(key.start + 1, name, length) == 0;
}

/* An error object: {"code": integer, "message": string[, "data": any]}, each once. */
static bool valid_error(js_span error)
{
    if (js_kind_of(error) != JS_OBJECT)
        return false;
    bool code = false, message = false, data = false;
    js_iter members;
    js_span key, value;
    js_iter_init(&members, error);
    while (js_iter_next(&members, &key, &value)) {
        if (raw_key_is(key, "code") && !code) {
            code = js_kind_of(value) == JS_NUMBER && !memchr(value.start, '.', value.length) &&
                   !memchr(value.start, 'e', value.length) &&
                   !memchr(value.start, 'E', value.length);
            if (!code)
                return false;
        } else if (raw_key_is(key, "message") && !message) {
            message = js_kind_of(value) == JS_STRING;
            if (!message)
                return false;
        } else if (raw_key_is(key, "data") && !data) {
            data = true;
        } else {
            return false;
        }
    }
    return code && message;
}

/*
 * One message written (line and length: the whole line, for the report): a response, or a
 * notification when it is not inside a batch's array.
 */
static int check_message(tally *t, js_span value, bool in_batch, const char *line, size_t length)
{
    if (js_kind_of(value) != JS_OBJECT)
        FAIL("a message written is not an object");

    /* The members rpcd writes are unescaped, each at most once. */
    static const char *const names[] = {"jsonrpc", "id", "result", "error", "method", "params"};
    enum { JSONRPC, ID, RESULT, ERROR, METHOD, PARAMS, COUNT };
    js_span seen[COUNT] = {{NULL, 0}};
    js_iter members;
    js_span key, member;
    js_iter_init(&members, value);
    while (js_iter_next(&members, &key, &member)) {
        size_t which = 0;
        while (which < COUNT && !raw_key_is(key, names[which]))
            which++;
        if (which == COUNT)
            FAIL("a line written has a member %.*s", (int)key.length, key.start);
        if (seen[which].start)
            FAIL("a line written has %s twice", names[which]);
        seen[which] = member;
    }
    if (!seen[JSONRPC].start || seen[JSONRPC].length != 5 ||
        memcmp(seen[JSONRPC].start, "\"2.0\"", 5) != 0)
        FAIL("a line written lacks \"jsonrpc\":\"2.0\"");
    if (seen[METHOD].start) {
        if (in_batch)
            FAIL("a notification written inside a batch's response");
        if (seen[ID].start || seen[RESULT].start || seen[ERROR].start)
            FAIL("a notification written with id, result or error");
        if (js_kind_of(seen[METHOD]) != JS_STRING)
            FAIL("a notification's method is no string");
        if (seen[PARAMS].start && js_kind_of(seen[PARAMS]) != JS_OBJECT &&
            js_kind_of(seen[PARAMS]) != JS_ARRAY)
            FAIL("a notification's params are no object or array");
        return 0;
    }
    if (!seen[ID].start || seen[PARAMS].start || !seen[RESULT].start == !seen[ERROR].start)
        FAIL("a line written is neither a response nor a notification");
    if (seen[ERROR].start && !valid_error(seen[ERROR]))
        FAIL("an error object written is not {code, message[, data]}");
    js_kind kind = js_kind_of(seen[ID]);
    if (kind == JS_NULL)
        return 0;
    if (kind != JS_STRING && kind != JS_NUMBER)
        FAIL("a response's id is no string, number or null");
    id_tally *id = tally_find(t, seen[ID].start, seen[ID].length, false);
    if (!id)
        FAIL("a response's id is no request's id");
    id->responses++;
    return 0;
}

/* One line written: valid JSON for both parsers, one message or a batch's responses. */
static int check_line(tally *t, const char *line, size_t length)
{
    js_span value;
    if (js_validate(line, length, 1000, &value, NULL) != 0 || !js_utf8_valid(line, length))
        FAIL("a line written is not valid UTF-8 JSON");
    json_error_t error;
    json_t *parsed = json_loadb(line, length, JSON_ALLOW_NUL, &error);
    if (!parsed && !jansson_limit(error.text))
        FAIL("jansson refuses a line written: %s", error.text);
    json_decref(parsed);
    if (js_kind_of(value) != JS_ARRAY)
        return check_message(t, value, false, line, length);
    js_iter elements;
    js_span element;
    size_t count = 0;
    js_iter_init(&elements, value);
    while (js_iter_next(&elements, NULL, &element)) {
        if (check_message(t, element, true, line, length) != 0)
            return -1;
        count++;
    }
    if (count == 0)
        FAIL("an empty batch response written");
    return 0;
}

int oracle_check(const oracle_limits *limits, const char *input, size_t input_length,
                 const char *output, size_t output_length)
{
    tally t = {NULL, 0, 0, false};
    int status = 0;
    note_input(&t, limits, input, input_length);
    if (output_length > 0 && output[output_length - 1] != '\n') {
        fprintf(stderr, "oracle: the output ends inside a line\n");
        status = -1;
    }
    for (size_t start = 0; start < output_length && status == 0;) {
        const char *line = output + start;
        const char *newline = memchr(line, '\n', output_length - start);
        size_t length = newline ? (size_t)(newline - line) : output_length - start;
        status = check_line(&t, line, length);
        start += length + 1;
    }
    for (size_t i = 0; i < t.count && status == 0; i++) {
        const id_tally *id = &t.ids[i];
        if (id->responses > id->requests || (!t.relaxed && id->responses < id->requests)) {
            fprintf(stderr, "oracle: id %.*s asked %zu times, answered %zu times\n",
                    (int)id->length, id->text, id->requests, id->responses);
            status = -1;
        }
    }
    free(t.ids);
    return status;
}
