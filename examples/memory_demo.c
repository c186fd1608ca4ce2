/* SPDX-License-Identifier: MIT */
/*
 * A scripted session through rpcd's real serve loop over memory: no subprocess, no timeout.
 * It prints the transcript, then checks it (every request answered once, nothing for
 * notifications, progress before its response) and exits non-zero if anything is off.
 */
#include "serve/runtime.h"
#include "serve/server.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef RPCD_BUILD_CONFIG
#define RPCD_BUILD_CONFIG "etc/rpcd.conf"
#endif

static const char *const script[] = {
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":{\"hello\":\"world\"}}",
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\",\"params\":[1,2",
    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"subtract\",\"params\":[42,23]}",
    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"no.such.method\"}",
    "{\"jsonrpc\":\"2.0\",\"method\":\"notify_hello\",\"params\":[7]}",
    /* Long lines in parentheses: one element each, however many pieces. */
    ("[{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"sum\",\"params\":[1,2,4]},"
     "{\"jsonrpc\":\"2.0\",\"method\":\"notify_hello\",\"params\":[7]},"
     "{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"get_data\"}]"),
    ("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"progress\","
     "\"params\":{\"steps\":2,\"_meta\":{\"progressToken\":\"p1\"}}}"),
};
enum { SCRIPT_LINES = sizeof script / sizeof script[0] };

typedef struct session {
    size_t next_line;
    char *received; /* everything rpcd wrote */
    size_t received_length;
} session;

/* Hands rpcd one script line per read, printing it as the client's. */
static ssize_t read_script(void *source, char *bytes, size_t capacity)
{
    session *s = source;
    if (s->next_line == SCRIPT_LINES)
        return 0;
    const char *line = script[s->next_line++];
    size_t length = strlen(line);
    if (length + 1 > capacity)
        return -1;
    printf("--> %s\n", line);
    memcpy(bytes, line, length);
    bytes[length] = '\n';
    return (ssize_t)length + 1;
}

/* Receives what rpcd writes; it flushes before each read, so lines print in order. */
static int write_transcript(void *sink, const struct iovec *parts, int part_count)
{
    session *s = sink;
    size_t length = 0;
    for (int i = 0; i < part_count; i++)
        length += parts[i].iov_len;
    char *grown = realloc(s->received, s->received_length + length + 1);
    if (!grown)
        return -1;
    s->received = grown;
    char *data = s->received + s->received_length;
    for (int i = 0; i < part_count; i++) {
        memcpy(s->received + s->received_length, parts[i].iov_base, parts[i].iov_len);
        s->received_length += parts[i].iov_len;
    }
    s->received[s->received_length] = '\0';
    for (const char *line = data; line < data + length;) {
        const char *end = memchr(line, '\n', (size_t)(data + length - line));
        printf("<-- %.*s\n", (int)(end - line), line);
        line = end + 1;
    }
    return 0;
}

static int problems;

static void expect(bool condition, const char *what)
{
    if (!condition) {
        fprintf(stderr, "rpcd-demo: FAILED: %s\n", what);
        problems++;
    }
}

/* Checks the transcript against what the script asks for. */
static void check(const char *received)
{
    int seen[6] = {0}, seen_a = 0, seen_b = 0, parse_errors = 0, progress = 0;
    bool progress_before_response = true;
    char *copy = strdup(received);
    for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
        json_t *message = json_loads(line, JSON_DECODE_ANY, NULL);
        expect(message != NULL, "every line rpcd writes is JSON");
        if (!message)
            continue;
        size_t count = json_is_array(message) ? json_array_size(message) : 1;
        for (size_t i = 0; i < count; i++) {
            json_t *item = json_is_array(message) ? json_array_get(message, i) : message;
            json_t *id = json_object_get(item, "id");
            if (json_is_string(json_object_get(item, "method"))) {
                progress++;
                continue;
            }
            if (json_is_integer(id) && json_integer_value(id) >= 1 && json_integer_value(id) <= 5) {
                seen[json_integer_value(id)]++;
                if (json_integer_value(id) == 5)
                    progress_before_response = progress == 2;
            } else if (json_is_string(id)) {
                seen_a += strcmp(json_string_value(id), "a") == 0;
                seen_b += strcmp(json_string_value(id), "b") == 0;
            } else if (json_is_null(id)) {
                parse_errors += json_integer_value(json_object_get(json_object_get(item, "error"),
                                                                   "code")) == -32700;
            }
        }
        json_decref(message);
    }
    free(copy);
    expect(seen[1] == 1 && seen[3] == 1 && seen[4] == 1 && seen[5] == 1,
           "requests 1, 3, 4 and 5 each answered once");
    expect(seen[2] == 0 && parse_errors == 1, "the broken line answered once, with id null");
    expect(seen_a == 1 && seen_b == 1, "both batch requests answered once");
    expect(progress == 2 && progress_before_response, "two progress notifications, then 5");
}

int main(int argc, char **argv)
{
    const char *config = argc > 1 ? argv[1] : RPCD_BUILD_CONFIG;
    rpcd_runtime runtime;
    char error[1024];
    rt_flags flags = {.log_level = 1 /* warnings only: the transcript is the point */};
    if (rt_start(config, &flags, &runtime, error, sizeof error) != 0) {
        fprintf(stderr, "rpcd-demo: %s\n", error);
        return 78;
    }
    session s = {0, NULL, 0};
    srv_options options = rt_serve_options(&runtime);
    /* Handlers run on the reading thread, so each response is out before the next line is
     * read and the transcript reads in order; the daemon itself uses a pool of workers. */
    options.limits.workers = 0;
    int result = srv_serve(runtime.methods, &options, read_script, &s, write_transcript, &s);
    rt_stop(&runtime);
    expect(result == SRV_DONE, "the session ends at end of input");
    check(s.received ? s.received : "");
    free(s.received);
    if (problems == 0)
        printf("demo: %d lines sent, every request answered exactly once\n", SCRIPT_LINES);
    return problems == 0 ? 0 : 1;
}
