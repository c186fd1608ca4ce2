/* SPDX-License-Identifier: MIT */
/*
 * rpcd served over TCP by a service manager, inetd-style: systemd-socket-activate accepts each
 * loopback connection and starts one rpcd whose stdin and stdout are that socket. Clients at the
 * same time each get exactly their own answers, and each rpcd ends cleanly when its client goes.
 */
#include "harness.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

enum { PORT_ATTEMPTS = 5, MAX_CHILDREN = 4 };

/* The activator's path, found once in main. */
static char activator_path[4096];

/* The activator of the running test: teardown stops it whatever happened. */
static harness_process *activator;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Looks for systemd-socket-activate in PATH and where Debian puts it. Returns 0 or -1. */
static int find_activator(void)
{
    const char *path = getenv("PATH");
    char *copy = strdup(path && path[0] ? path : "");
    if (!copy)
        return -1;
    int found = -1;
    char *saved = NULL;
    for (char *dir = strtok_r(copy, ":", &saved); dir && found != 0;
         dir = strtok_r(NULL, ":", &saved)) {
        snprintf(activator_path, sizeof activator_path, "%s/systemd-socket-activate", dir);
        if (access(activator_path, X_OK) == 0)
            found = 0;
    }
    free(copy);
    if (found != 0) {
        snprintf(activator_path, sizeof activator_path, "/usr/bin/systemd-socket-activate");
        if (access(activator_path, X_OK) == 0)
            found = 0;
    }
    return found;
}

/* A loopback port nobody listens on now (the activator may still lose a race for it). */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = 0};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&address, sizeof address), 0);
    socklen_t length = sizeof address;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&address, &length), 0);
    close(fd);
    return ntohs(address.sin_port);
}

/*
 * Starts `systemd-socket-activate --inetd --accept -l 127.0.0.1:PORT rpcd -c <build config>` and
 * waits until it listens. Returns the port.
 */
static int start_activator(void)
{
    const char *config = harness_env("RPCD_BUILD_CONFIG");
    assert_non_null(config);
    for (int attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
        int port = free_port();
        char listen_on[64];
        snprintf(listen_on, sizeof listen_on, "127.0.0.1:%d", port);
        harness_argv rpcd = harness_rpcd_argv(config);
        assert_non_null(rpcd.argv[rpcd.count - 3]);
        harness_argv args = {.count = 0};
        const char *front[] = {activator_path, "--inetd", "--accept", "-l", listen_on};
        for (size_t i = 0; i < sizeof front / sizeof front[0]; i++)
            harness_argv_push(&args, front[i]);
        for (int i = 0; i < rpcd.count; i++)
            harness_argv_push(&args, rpcd.argv[i]);
        activator = harness_start(args.argv);
        assert_non_null(activator);
        char listening[96];
        snprintf(listening, sizeof listening, "Listening on %s", listen_on);
        if (harness_wait_for_stderr(activator, listening, HARNESS_TIMEOUT_MS) == HARNESS_OK)
            return port;
        fprintf(stderr, "the activator did not listen on %s:\n%s\n", listen_on,
                harness_stderr(activator));
        harness_free(activator);
        activator = NULL;
    }
    fail_msg("systemd-socket-activate did not listen on any of %d ports", PORT_ATTEMPTS);
    return -1;
}

static int stop_activator(void **state)
{
    (void)state;
    harness_free(activator); /* kills its process group, rpcd instances included */
    activator = NULL;
    return 0;
}

/* A client connection and what it has read and not yet taken as lines. */
typedef struct client {
    int fd;
    char buffer[65536];
    size_t used;
} client;

static void client_connect(client *c, int port)
{
    c->used = 0;
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(c->fd >= 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(c->fd, (struct sockaddr *)&address, sizeof address), 0);
}

static void client_send(client *c, const char *text)
{
    size_t length = strlen(text), done = 0;
    while (done < length) {
        ssize_t n = send(c->fd, text + done, length - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        assert_true(n > 0);
        done += (size_t)n;
    }
}

/* Reads more bytes before the deadline. Returns the count, 0 at the end, -1 on timeout. */
static ssize_t client_fill(client *c, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return -1;
        struct pollfd wanted = {.fd = c->fd, .events = POLLIN};
        int ready = poll(&wanted, 1, (int)left);
        if (ready < 0 && errno == EINTR)
            continue;
        assert_true(ready >= 0);
        if (ready == 0)
            continue;
        assert_true(c->used < sizeof c->buffer);
        ssize_t n = recv(c->fd, c->buffer + c->used, sizeof c->buffer - c->used, 0);
        if (n < 0 && errno == EINTR)
            continue;
        assert_true(n >= 0);
        c->used += (size_t)n;
        return n;
    }
}

/*
 * Reads the next line, which must be exactly one JSON message terminated by "\n" (a log line
 * there would fail here). Returns it (new; *text is the line, new too).
 */
static json_t *client_next(client *c, const char *waiting_for, char **text)
{
    int64_t deadline = now_ms() + HARNESS_TIMEOUT_MS;
    char *newline;
    while (!(newline = memchr(c->buffer, '\n', c->used))) {
        ssize_t n = client_fill(c, deadline);
        if (n <= 0)
            fail_msg("%s waiting for %s; got so far: %.*s", n == 0 ? "end of stream" : "timeout",
                     waiting_for, (int)c->used, c->buffer);
    }
    size_t length = (size_t)(newline - c->buffer);
    char *line = strndup(c->buffer, length);
    assert_non_null(line);
    c->used -= length + 1;
    memmove(c->buffer, newline + 1, c->used);
    json_error_t error;
    json_t *message = json_loadb(line, length, 0, &error);
    if (!message)
        fail_msg("not one JSON message on a line (%s): %s", error.text, line);
    *text = line;
    return message;
}

/* Reads the next line and checks that it equals expected (batches compared as multisets). */
static void client_expect(client *c, const char *expected)
{
    char *line;
    json_decref(client_next(c, expected, &line));
    if (!harness_json_equal(expected, line))
        fail_msg("expected %s\n     got %s", expected, line);
    free(line);
}

/* Ends the client's input (only its sending half: answers still come). */
static void client_end_input(client *c)
{
    assert_int_equal(shutdown(c->fd, SHUT_WR), 0);
}

/* Reads after the end of input: rpcd must close its end with nothing more said. */
static void client_wait_closed(client *c)
{
    int64_t deadline = now_ms() + HARNESS_TIMEOUT_MS;
    ssize_t n;
    while ((n = client_fill(c, deadline)) > 0) {
    }
    if (n < 0)
        fail_msg("rpcd did not close the connection after the end of input");
    if (c->used)
        fail_msg("unexpected output after the last answer: %.*s", (int)c->used, c->buffer);
    close(c->fd);
    c->fd = -1;
}

static void client_finish(client *c)
{
    client_end_input(c);
    client_wait_closed(c);
}

/* The requests of client name, step by step, and what each step must answer (NULL: nothing). */
static void client_step(client *c, const char *name, int step)
{
    char request[512], expected[512];
    const char *answer = expected;
    switch (step) {
    case 0:
        snprintf(request, sizeof request,
                 "{\"jsonrpc\":\"2.0\",\"id\":\"%s-1\",\"method\":\"echo\",\"params\":"
                 "{\"client\":\"%s\",\"n\":1}}\n",
                 name, name);
        snprintf(expected, sizeof expected,
                 "{\"jsonrpc\":\"2.0\",\"id\":\"%s-1\",\"result\":{\"client\":\"%s\",\"n\":1}}",
                 name, name);
        break;
    case 1: /* a notification: no answer, so the next line must be the next step's */
        snprintf(
            request, sizeof request,
            "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":{\"client\":\"%s\",\"n\":2}}\n",
            name);
        answer = NULL;
        break;
    case 2:
        snprintf(request, sizeof request,
                 "[{\"jsonrpc\":\"2.0\",\"id\":\"%s-3\",\"method\":\"echo\",\"params\":"
                 "{\"client\":\"%s\",\"n\":3}},"
                 "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":{\"client\":\"%s\"}},"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"%s-4\",\"method\":\"no.such.method\"}]\n",
                 name, name, name, name);
        snprintf(expected, sizeof expected,
                 "[{\"jsonrpc\":\"2.0\",\"id\":\"%s-3\",\"result\":{\"client\":\"%s\",\"n\":3}},"
                 "{\"jsonrpc\":\"2.0\",\"id\":\"%s-4\",\"error\":{\"code\":-32601,"
                 "\"message\":\"Method not found\"}}]",
                 name, name, name);
        break;
    case 3:
        snprintf(request, sizeof request, "{\"jsonrpc\":\"2.0\",\"id\":\"%s-5\",\"method\":\n",
                 name);
        snprintf(expected, sizeof expected,
                 "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,"
                 "\"message\":\"Parse error\"}}");
        break;
    default:
        snprintf(request, sizeof request,
                 "{\"jsonrpc\":\"2.0\",\"id\":\"%s-%d\",\"method\":\"echo\",\"params\":"
                 "{\"client\":\"%s\",\"n\":%d}}\n",
                 name, step + 2, name, step + 2);
        snprintf(expected, sizeof expected,
                 "{\"jsonrpc\":\"2.0\",\"id\":\"%s-%d\",\"result\":{\"client\":\"%s\",\"n\":%d}}",
                 name, step + 2, name, step + 2);
        break;
    }
    client_send(c, request);
    if (answer)
        client_expect(c, answer);
}

/*
 * The rpcd instances the activator started, from its "Spawned ... as PID N." lines, once there
 * are expected of them (its stderr is only read while the harness waits on it).
 */
static size_t spawned_pids(pid_t pids[MAX_CHILDREN], size_t expected)
{
    int64_t deadline = now_ms() + HARNESS_TIMEOUT_MS;
    size_t count;
    do {
        count = 0;
        const char *at = harness_stderr(activator);
        while ((at = strstr(at, "Spawned ")) && count < MAX_CHILDREN) {
            const char *as = strstr(at, " as PID ");
            if (!as || !strchr(as, '\n'))
                break; /* a line not complete yet */
            pids[count++] = (pid_t)strtol(as + strlen(" as PID "), NULL, 10);
            at = as;
        }
    } while (count < expected && now_ms() < deadline &&
             harness_collect_stderr(activator, 20) == HARNESS_TIMED_OUT);
    return count;
}

/* How many processes have parent as their parent, from /proc. */
static int children_of(pid_t parent)
{
    DIR *proc = opendir("/proc");
    assert_non_null(proc);
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(proc))) {
        char path[300];
        snprintf(path, sizeof path, "/proc/%s/stat", entry->d_name);
        char *stat = entry->d_name[0] >= '1' && entry->d_name[0] <= '9'
                         ? harness_read_file(path, NULL)
                         : NULL;
        /* pid (comm) state ppid: comm may hold anything, so read after its last ')'. */
        const char *end = stat ? strrchr(stat, ')') : NULL;
        char state;
        int ppid;
        if (end && sscanf(end + 1, " %c %d", &state, &ppid) == 2 && ppid == parent)
            count++;
        free(stat);
    }
    closedir(proc);
    return count;
}

/*
 * Checks that the activator started expected rpcd instances, and that each has ended with exit
 * status 0 and been reaped (the activator says so on stderr), leaving no child behind.
 */
static void expect_clean_exits(size_t expected)
{
    pid_t pids[MAX_CHILDREN];
    size_t count = spawned_pids(pids, expected);
    assert_int_equal(count, expected);
    for (size_t i = 0; i < count; i++) {
        char died[96];
        snprintf(died, sizeof died, "Child %d died with code 0\n", (int)pids[i]);
        if (harness_wait_for_stderr(activator, died, HARNESS_TIMEOUT_MS) != HARNESS_OK)
            fail_msg("rpcd %d did not exit with 0 after its client closed; activator said:\n%s",
                     (int)pids[i], harness_stderr(activator));
    }
    assert_int_equal(children_of(harness_pid(activator)), 0);
}

/* Counts the occurrences of text in haystack. */
static size_t occurrences(const char *haystack, const char *text)
{
    size_t count = 0;
    for (const char *at = haystack; (at = strstr(at, text)); at += strlen(text))
        count++;
    return count;
}

/*
 * Two clients at once, their requests interleaved: requests, a notification, a batch with a
 * notification and an unknown method, a line that does not parse. Each reads only its own
 * answers, line by line, then ends its input; its rpcd exits 0.
 */
static void two_clients_get_their_own_answers(void **state)
{
    (void)state;
    int port = start_activator();
    client a, b;
    client_connect(&a, port);
    client_connect(&b, port);
    enum { STEPS = 6 };
    for (int step = 0; step < STEPS; step++) {
        client_step(&a, "a", step);
        client_step(&b, "b", step);
    }
    /* Both connections are served at the same time by two rpcd instances. */
    pid_t pids[MAX_CHILDREN];
    assert_int_equal(spawned_pids(pids, 2), 2);
    assert_int_not_equal(pids[0], pids[1]);
    client_finish(&a);
    client_finish(&b);
    expect_clean_exits(2);
    /* Their logs went to the activator's stderr, none to the sockets (checked line by line). */
    assert_int_equal(occurrences(harness_stderr(activator), "rpcd: info: 4 plugins loaded"), 2);
}

/*
 * An MCP session over the socket: initialize, a tool call, and at the end of its input a call in
 * flight that is cancelled.
 */
static void mcp_client_calls_a_tool(void **state)
{
    (void)state;
    int port = start_activator();
    client c;
    client_connect(&c, port);
    client_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
                    "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                    "\"clientInfo\":{\"name\":\"socket-test\",\"version\":\"1\"}}}\n");
    char *line;
    json_t *initialized = client_next(&c, "the answer to initialize", &line);
    json_t *result = json_object_get(initialized, "result");
    if (!json_is_integer(json_object_get(initialized, "id")) ||
        json_integer_value(json_object_get(initialized, "id")) != 0 ||
        !json_is_string(json_object_get(result, "protocolVersion")) ||
        !json_is_object(json_object_get(json_object_get(result, "capabilities"), "tools")))
        fail_msg("not an answer to initialize that offers tools: %s", line);
    json_decref(initialized);
    free(line);
    client_send(&c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":"
                    "{\"name\":\"echo\",\"arguments\":{\"over\":\"tcp\"}}}\n");
    client_expect(&c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":"
                      "\"text\",\"text\":\"{\\\"over\\\":\\\"tcp\\\"}\"}],"
                      "\"structuredContent\":{\"over\":\"tcp\"},\"isError\":false}}");
    /* A call in flight when the session's input ends is cancelled, not waited for. */
    client_send(&c, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                    "{\"name\":\"sleep\",\"arguments\":{\"ms\":60000}}}\n");
    int64_t ended = now_ms();
    client_end_input(&c);
    json_t *cancelled = client_next(&c, "the answer to the cancelled call", &line);
    if (json_integer_value(json_object_get(cancelled, "id")) != 2 ||
        json_integer_value(json_object_get(json_object_get(cancelled, "error"), "code")) != -32800)
        fail_msg("expected -32800 Request cancelled for id 2, got %s", line);
    json_decref(cancelled);
    free(line);
    client_wait_closed(&c);
    assert_true(now_ms() - ended < HARNESS_TIMEOUT_MS);
    expect_clean_exits(1);
}

int main(void)
{
    if (find_activator() != 0) {
        const char *ci = getenv("CI");
        if (ci && ci[0] && strcmp(ci, "false") != 0 && strcmp(ci, "0") != 0) {
            fprintf(stderr, "systemd-socket-activate is not installed (Debian package systemd), "
                            "and CI is set: scripts/deps.sh should have installed it\n");
            return 1;
        }
        fprintf(stderr, "skipped: systemd-socket-activate is not installed (package systemd)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(two_clients_get_their_own_answers, stop_activator),
        cmocka_unit_test_teardown(mcp_client_calls_a_tool, stop_activator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
