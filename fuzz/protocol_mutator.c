/* SPDX-License-Identifier: MIT */
/*
 * A structure-aware mutator for the protocol fuzzer: it reads one line of the input as JSON
 * (jansson), changes it the way a client could (methods, ids, the members rpcd reads, names
 * too long or spelled with escapes, members given twice, batches) and writes it back, so that
 * most runs get past the parser and the envelope into the MCP front end and the calls. What it
 * cannot parse goes to libFuzzer's own byte mutations.
 */
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static uint64_t rng_state;

static size_t pick(size_t n)
{
    /* xorshift64*: any fixed sequence per seed is enough, libFuzzer replays by seed. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (size_t)((rng_state * 2685821657736338717ull) >> 33) % n;
}

#define PICK(array) (array)[pick(sizeof(array) / sizeof((array)[0]))]

static const char *const methods[] = {
    "tools/call",
    "tools/call",
    "tools/call",
    "tools/list",
    "initialize",
    "ping",
    "server/discover",
    "resources/read",
    "resources/list",
    "resources/templates/list",
    "resources/subscribe",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "notifications/initialized",
    "echo",
    "fail",
    "progress",
    "notifications/cancelled",
    "$/cancelRequest",
    "rpc.discover",
    "notifications/progress",
    "no/such",
};

static const char *const keys[] = {
    "jsonrpc",      "id",         "method",        "params",     "result", "error",
    "name",         "arguments",  "_meta",         "uri",        "ref",    "argument",
    "value",        "level",      "progressToken", "requestId",  "cursor", "protocolVersion",
    "capabilities", "clientInfo", "reason",        "n\\u0061me", "x",
};

static const char *const tool_names[] = {"echo", "fail", "progress", "no.such", ""};

/*
 * Raw JSON texts put in place of a value: long names, names spelled with escapes, escapes
 * jansson would never write, numbers it cannot hold. Built once: the long ones by repetition.
 */
static char *raw_values[32];
static size_t raw_count;

static char *repeat(const char *prefix, const char *unit, size_t count, const char *suffix)
{
    size_t length = strlen(prefix) + strlen(unit) * count + strlen(suffix) + 1;
    char *text = malloc(length);
    if (!text)
        abort();
    strcpy(text, prefix);
    for (size_t i = 0; i < count; i++)
        strcat(text, unit);
    strcat(text, suffix);
    return text;
}

static void init_raw_values(void)
{
    static const char *const fixed[] = {
        "\"\\u0000\"",
        "\"\\ud800\"",
        "\"\\udc00\\ud800\"",
        "\"\\ud83d\\ude00\"",
        "\"\\u00e9\"",
        "1e400",
        "18446744073709551617",
        "-0",
        "1.0",
        "{}",
        "[]",
        "null",
        "\"\\u0065\\u0063\\u0068\\u006f\"",
        "\"2.0\"",
        "\"\"",
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        raw_values[raw_count++] = strdup(fixed[i]);
    raw_values[raw_count++] = repeat("\"", "x", 128, "\"");
    raw_values[raw_count++] = repeat("\"", "x", 129, "\"");
    raw_values[raw_count++] = repeat("\"", "x", 300, "\"");
    raw_values[raw_count++] = repeat("\"", "\\u0078", 129, "\"");
    raw_values[raw_count++] = repeat("\"", "\\u00e9", 65, "\"");
    raw_values[raw_count++] = repeat("\"", "\\ud800", 43, "\"");
    raw_values[raw_count++] = repeat("\"", "x", 1500, "\"");
}

/* A placeholder string that the writer later replaces with raw_values[index]. */
static json_t *raw_placeholder(void)
{
    char text[16];
    snprintf(text, sizeof text, "\x01RAW%02zu", pick(raw_count));
    return json_string(text);
}

static json_t *random_value(void)
{
    switch (pick(9)) {
    case 0: return json_string(PICK(methods));
    case 1: return json_string(PICK(tool_names));
    case 2: return json_integer((json_int_t)pick(5));
    case 3: return json_object();
    case 4: return json_pack("{s:s}", "progressToken", "t");
    case 5: return json_array();
    case 6: return json_null();
    default: return raw_placeholder();
    }
}

/* Every container in the tree, depth first, up to a bound. */
typedef struct node_list {
    json_t *items[256];
    size_t count;
} node_list;

static void collect(json_t *value, node_list *list)
{
    if (list->count == sizeof list->items / sizeof list->items[0])
        return;
    if (json_is_object(value)) {
        list->items[list->count++] = value;
        const char *key;
        json_t *member;
        json_object_foreach(value, key, member) collect(member, list);
    } else if (json_is_array(value)) {
        list->items[list->count++] = value;
        size_t i;
        json_t *element;
        json_array_foreach(value, i, element) collect(element, list);
    }
}

static json_t *template_request(void)
{
    return json_pack("{s:s,s:i,s:s,s:{s:s,s:{}}}", "jsonrpc", "2.0", "id", (int)pick(100), "method",
                     "tools/call", "params", "name", PICK(tool_names), "arguments");
}

/* The request object to work on: the line's, or a batch element's. */
static json_t *some_request(json_t *line)
{
    if (json_is_array(line) && json_array_size(line) > 0)
        line = json_array_get(line, pick(json_array_size(line)));
    return json_is_object(line) ? line : NULL;
}

/* One change to a parsed line; may replace the line itself. Returns the new line. */
static json_t *mutate_tree(json_t *line)
{
    json_t *request = some_request(line);
    switch (pick(10)) {
    case 0:
        if (request)
            json_object_set_new(request, "method", json_string(PICK(methods)));
        break;
    case 1: /* a tools/call with a name to try */
        if (request) {
            json_object_set_new(request, "method", json_string("tools/call"));
            json_t *params = json_object_get(request, "params");
            if (!json_is_object(params)) {
                params = json_object();
                json_object_set_new(request, "params", params);
            }
            json_object_set_new(params, "name",
                                pick(2) ? raw_placeholder() : json_string(PICK(tool_names)));
        }
        break;
    case 2: /* the id */
        if (request) {
            if (pick(3) == 0)
                json_object_del(request, "id");
            else
                json_object_set_new(
                    request, "id", pick(2) ? json_integer((json_int_t)pick(8)) : raw_placeholder());
        }
        break;
    case 3: /* progress asked for */
        if (request) {
            json_t *params = json_object_get(request, "params");
            if (json_is_object(params))
                json_object_set_new(params, "_meta",
                                    json_pack("{s:o}", "progressToken", raw_placeholder()));
        }
        break;
    case 4: { /* into a batch, or out of one */
        if (json_is_array(line) && json_array_size(line) > 0) {
            json_t *element = json_incref(json_array_get(line, 0));
            json_decref(line);
            return element;
        }
        json_t *batch = json_array();
        json_array_append_new(batch, line);
        if (pick(2))
            json_array_append_new(batch, template_request());
        return batch;
    }
    default: { /* any container: a member added, replaced or removed */
        node_list list = {.count = 0};
        collect(line, &list);
        if (list.count == 0)
            return line;
        json_t *target = list.items[pick(list.count)];
        if (json_is_array(target)) {
            json_array_append_new(target, random_value());
        } else if (pick(4) == 0 && json_object_size(target) > 0) {
            void *iter = json_object_iter(target);
            for (size_t skip = pick(json_object_size(target)); skip > 0 && iter; skip--)
                iter = json_object_iter_next(target, iter);
            if (iter)
                json_object_del(target, json_object_iter_key(iter));
        } else {
            json_object_set_new(target, PICK(keys), random_value());
        }
        break;
    }
    }
    return line;
}

/* Appends text to a growing string; aborts without memory (a fuzzer has nothing else to do). */
static void append(char **out, size_t *length, const char *text, size_t text_length)
{
    char *grown = realloc(*out, *length + text_length + 1);
    if (!grown)
        abort();
    memcpy(grown + *length, text, text_length);
    *length += text_length;
    grown[*length] = '\0';
    *out = grown;
}

/*
 * Writes a line: placeholders become their raw texts, and sometimes a member is given twice
 * (which jansson's objects cannot hold) by writing one more in front of an existing object's
 * members.
 */
static char *write_line(json_t *line, size_t *length)
{
    size_t flags = JSON_COMPACT | JSON_ENCODE_ANY | (pick(4) == 0 ? JSON_ENSURE_ASCII : 0);
    char *text = json_dumps(line, flags);
    if (!text)
        return NULL;
    char *out = NULL;
    *length = 0;
    size_t duplicate_at = pick(3) == 0 ? pick(strlen(text) + 1) : (size_t)-1;
    for (const char *p = text; *p;) {
        if ((size_t)(p - text) >= duplicate_at && p[0] == '{' && p[1] == '"') {
            const char *key = PICK(keys);
            const char *value = raw_values[pick(raw_count)];
            append(&out, length, "{\"", 2);
            append(&out, length, key, strlen(key));
            append(&out, length, "\":", 2);
            append(&out, length, value, strlen(value));
            append(&out, length, ",", 1);
            duplicate_at = (size_t)-1;
            p++;
            continue;
        }
        if (strncmp(p, "\"\\u0001RAW", 10) == 0 && p[10] && p[11] && p[12] == '"') {
            size_t index = (size_t)((p[10] - '0') * 10 + (p[11] - '0'));
            if (index < raw_count) {
                append(&out, length, raw_values[index], strlen(raw_values[index]));
                p += 13;
                continue;
            }
        }
        append(&out, length, p, 1);
        p++;
    }
    free(text);
    return out;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
    if (raw_count == 0)
        init_raw_values();
    if (pick(5) == 0)
        return LLVMFuzzerMutate(data, size, max_size);

    /* The lines, and one of them to change. */
    size_t line_count = 1;
    for (size_t i = 0; i < size; i++)
        line_count += data[i] == '\n';
    size_t chosen = pick(line_count);
    size_t start = 0, index = 0;
    while (index < chosen) {
        if (data[start++] == '\n')
            index++;
    }
    const uint8_t *newline = memchr(data + start, '\n', size - start);
    size_t end = newline ? (size_t)(newline - data) : size;

    json_t *line =
        json_loadb((const char *)data + start, end - start, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (!line) {
        if (pick(2))
            return LLVMFuzzerMutate(data, size, max_size);
        line = template_request();
    }
    for (size_t rounds = 1 + pick(3); rounds > 0; rounds--)
        line = mutate_tree(line);
    size_t length;
    char *text = write_line(line, &length);
    json_decref(line);
    if (!text || size - (end - start) + length > max_size) {
        free(text);
        return LLVMFuzzerMutate(data, size, max_size);
    }
    memmove(data + start + length, data + end, size - end);
    memcpy(data + start, text, length);
    free(text);
    return size - (end - start) + length;
}
