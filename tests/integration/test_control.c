/* SPDX-License-Identifier: MIT */
/*
 * The control socket through the real binary: status, calls, cancel, reload (what changed, and a
 * broken config refused), metrics counting calls; its refusals (a peer of another user, an
 * unsafe or symlinked socket directory, a bad mode, a live or foreign file at its path, malformed
 * and oversized lines, a ninth peer); a peer that stops reading while stdin is still served; and
 * rpcd ctl's commands and exit statuses.
 */
#include "harness.h"

#include <errno.h>
#include <grp.h>
#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

typedef struct session {
    char *dir;
    char *config;
    char socket[512];
    harness_process *rpcd;
} session;

static int session_setup(void **state)
{
    session *s = calloc(1, sizeof *s);
    if (!s || !(s->dir = harness_temp_dir()))
        return -1;
    snprintf(s->socket, sizeof s->socket, "%s/ctl.sock", s->dir);
    *state = s;
    return 0;
}

static int session_teardown(void **state)
{
    session *s = *state;
    harness_free(s->rpcd);
    if (s->dir)
        harness_remove_dir(s->dir);
    free(s->dir);
    free(s->config);
    free(s);
    return 0;
}

/* Writes the config: the bundled plugins, the socket at s->socket, and more [rpcd] lines. */
static void write_config(session *s, const char *more)
{
    char *plugins = harness_bundled_plugin_sections();
    assert_non_null(plugins);
    char *text;
    assert_true(asprintf(&text, "[rpcd]\ncontrol_socket = %s\n%s\n%s", s->socket, more ? more : "",
                         plugins) > 0);
    free(s->config);
    s->config = harness_write_file(s->dir, "rpcd.conf", text);
    assert_non_null(s->config);
    free(text);
    free(plugins);
}

/* Starts rpcd on the config and waits for its socket. */
static void start(session *s, const char *more)
{
    write_config(s, more);
    harness_argv args = harness_rpcd_argv(s->config);
    s->rpcd = harness_start(args.argv);
    assert_non_null(s->rpcd);
    assert_int_equal(harness_wait_for_stderr(s->rpcd, "listening", HARNESS_TIMEOUT_MS), HARNESS_OK);
}

static int connect_to(const char *path)
{
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    assert_true(strlen(path) < sizeof address.sun_path);
    memcpy(address.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Reads one line from fd (new, without its line feed), or NULL at its end. */
static char *read_line(int fd)
{
    size_t used = 0, size = 65536;
    char *line = malloc(size);
    assert_non_null(line);
    for (;;) {
        if (used + 1 == size)
            assert_non_null(line = realloc(line, size *= 2));
        ssize_t got = recv(fd, line + used, 1, 0);
        if (got <= 0 && used == 0) {
            free(line);
            return NULL;
        }
        if (got <= 0 || line[used] == '\n')
            break;
        used++;
    }
    line[used] = '\0';
    return line;
}

/* Sends line on fd and reads the answer: the response (new), asserted to be JSON. */
static json_t *ask_on(int fd, const char *line)
{
    assert_int_equal(send(fd, line, strlen(line), MSG_NOSIGNAL), (ssize_t)strlen(line));
    char *answer = read_line(fd);
    assert_non_null(answer);
    json_error_t error;
    json_t *parsed = json_loads(answer, 0, &error);
    if (!parsed)
        fail_msg("not JSON: %s", answer);
    free(answer);
    return parsed;
}

/* One request on a connection of its own. */
static json_t *ask(const session *s, const char *method, const char *params)
{
    int fd = connect_to(s->socket);
    assert_true(fd >= 0);
    char line[512];
    snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\"%s%s}\n", method,
             params ? ",\"params\":" : "", params ? params : "");
    json_t *answer = ask_on(fd, line);
    close(fd);
    return answer;
}

static json_t *result_of(json_t *answer)
{
    json_t *result = json_object_get(answer, "result");
    if (!result) {
        char *text = json_dumps(answer, 0);
        fail_msg("no result: %s", text);
    }
    return result;
}

static long long metric(const session *s, const char *sample)
{
    json_t *answer = ask(s, "metrics", NULL);
    const char *text = json_string_value(json_object_get(result_of(answer), "text"));
    assert_non_null(text);
    const char *at = strstr(text, sample);
    long long value = at ? atoll(at + strlen(sample) + 1) : 0;
    json_decref(answer);
    return value;
}

static void test_status(void **state)
{
    session *s = *state;
    start(s, NULL);
    json_t *answer = ask(s, "status", NULL);
    json_t *result = result_of(answer);
    assert_true(json_is_string(json_object_get(result, "version")));
    assert_int_equal(json_integer_value(json_object_get(result, "generation")), 1);
    assert_int_equal(json_integer_value(json_object_get(result, "calls_in_flight")), 0);
    assert_true(json_is_true(json_object_get(result, "metrics")));
    json_t *plugins = json_object_get(result, "plugins");
    assert_int_equal(json_array_size(plugins), 4);
    json_t *first = json_array_get(plugins, 0);
    assert_string_equal(json_string_value(json_object_get(first, "name")), "echo");
    assert_string_equal(json_string_value(json_object_get(first, "isolation")), "none");
    assert_true(json_is_null(json_object_get(first, "host_pid")));
    json_decref(answer);
    /* SIGIO, which the kernel sends instead of the wake-up signal when its queue of real-time
     * signals overflows (a flood of connections), is ignored: rpcd serves on, and exits 0. */
    assert_int_equal(kill(harness_pid(s->rpcd), SIGIO), 0);
    answer = ask(s, "status", NULL);
    assert_non_null(result_of(answer));
    json_decref(answer);
    assert_int_equal(harness_write_text(s->rpcd,
                                        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"echo\","
                                        "\"params\":[7]}\n",
                                        HARNESS_TIMEOUT_MS),
                     HARNESS_OK);
    char *line;
    assert_int_equal(harness_read_line(s->rpcd, HARNESS_TIMEOUT_MS, &line, NULL, NULL), HARNESS_OK);
    assert_non_null(strstr(line, "\"id\":7"));
    free(line);
    /* The socket was made with its default mode. */
    struct stat info;
    assert_int_equal(lstat(s->socket, &info), 0);
    assert_true(S_ISSOCK(info.st_mode));
    assert_int_equal(info.st_mode & 0777, 0600);
    harness_close_stdin(s->rpcd);
    harness_exit status;
    assert_int_equal(harness_wait(s->rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    assert_int_equal(status.code, 0);
    /* Gone with rpcd. */
    assert_int_equal(lstat(s->socket, &info), -1);
}

/* calls until the call with id 42 has reported progress: it (new). */
static json_t *running_call(const session *s)
{
    for (int tries = 0; tries < 2000; tries++) {
        json_t *answer = ask(s, "calls", NULL);
        json_t *calls = json_object_get(result_of(answer), "calls");
        for (size_t i = 0; i < json_array_size(calls); i++) {
            json_t *call = json_array_get(calls, i);
            if (json_integer_value(json_object_get(call, "id")) == 42 &&
                json_is_object(json_object_get(call, "progress"))) {
                json_incref(call);
                json_decref(answer);
                return call;
            }
        }
        json_decref(answer);
        usleep(5000);
    }
    fail_msg("the call never showed in calls with progress");
    return NULL;
}

static void test_calls_and_cancel(void **state)
{
    session *s = *state;
    start(s, NULL);
    assert_int_equal(harness_write_text(s->rpcd,
                                        "{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"progress\","
                                        "\"params\":{\"steps\":1000,\"delay_ms\":50}}\n",
                                        HARNESS_TIMEOUT_MS),
                     HARNESS_OK);
    json_t *call = running_call(s);
    assert_string_equal(json_string_value(json_object_get(call, "method")), "progress");
    assert_string_equal(json_string_value(json_object_get(call, "plugin")), "progress");
    assert_string_equal(json_string_value(json_object_get(call, "state")), "running");
    assert_true(json_is_false(json_object_get(call, "cancelled")));
    assert_true(json_integer_value(json_object_get(call, "age_ms")) >= 0);
    json_decref(call);
    json_t *answer = ask(s, "status", NULL);
    assert_int_equal(json_integer_value(json_object_get(result_of(answer), "calls_in_flight")), 1);
    assert_int_equal(json_integer_value(json_object_get(result_of(answer), "calls_queued")), 0);
    json_decref(answer);
    answer = ask(s, "cancel", "{\"id\":42}");
    assert_true(json_is_true(json_object_get(result_of(answer), "cancelled")));
    json_decref(answer);
    /* The client gets the answer $/cancelRequest gives. */
    char *line;
    assert_int_equal(harness_read_line(s->rpcd, HARNESS_TIMEOUT_MS, &line, NULL, NULL), HARNESS_OK);
    json_t *response = json_loads(line, 0, NULL);
    free(line);
    assert_int_equal(json_integer_value(json_object_get(response, "id")), 42);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(response, "error"), "code")), -32800);
    json_decref(response);
    answer = ask(s, "cancel", "{\"id\":42}");
    assert_true(json_is_false(json_object_get(result_of(answer), "cancelled")));
    json_decref(answer);
    /* Ended: no longer listed. */
    answer = ask(s, "calls", NULL);
    assert_int_equal(json_array_size(json_object_get(result_of(answer), "calls")), 0);
    json_decref(answer);
}

static void test_reload(void **state)
{
    session *s = *state;
    start(s, NULL);
    /* The same config without the plugin fail. */
    char *plugins = harness_bundled_plugin_sections();
    *strstr(plugins, "[plugin fail]") = '\0';
    char *text;
    assert_true(asprintf(&text, "[rpcd]\ncontrol_socket = %s\n%s", s->socket, plugins) > 0);
    free(harness_write_file(s->dir, "rpcd.conf", text));
    free(text);
    free(plugins);
    json_t *answer = ask(s, "reload", NULL);
    json_t *result = result_of(answer);
    assert_int_equal(json_integer_value(json_object_get(result, "generation")), 2);
    const char *summary = json_string_value(json_object_get(result, "summary"));
    assert_non_null(strstr(summary, "removed [fail]"));
    assert_non_null(strstr(summary, "unchanged [echo, spec, progress]"));
    json_decref(answer);
    /* A broken config is refused, and said why; generation 2 stays. */
    free(harness_write_file(s->dir, "rpcd.conf", "[rpcd]\nno_such_key = 1\n"));
    answer = ask(s, "reload", NULL);
    json_t *error = json_object_get(answer, "error");
    assert_int_equal(json_integer_value(json_object_get(error, "code")), -32000);
    const char *message = json_string_value(json_object_get(error, "message"));
    assert_non_null(strstr(message, "reload refused"));
    assert_non_null(strstr(message, "no_such_key"));
    assert_non_null(strstr(message, "rpcd.conf"));
    json_decref(answer);
    answer = ask(s, "status", NULL);
    assert_int_equal(json_integer_value(json_object_get(result_of(answer), "generation")), 2);
    assert_int_equal(json_array_size(json_object_get(result_of(answer), "plugins")), 3);
    json_decref(answer);
}

static void test_metrics_count_calls(void **state)
{
    session *s = *state;
    start(s, NULL);
    static const char sample[] = "rpcd_calls_total{method=\"echo\",plugin=\"echo\"}";
    long long before = metric(s, sample);
    enum { CALLS = 25 };
    for (int i = 0; i < CALLS; i++) {
        char line[128];
        snprintf(line, sizeof line,
                 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"echo\","
                 "\"params\":[1]}\n",
                 i);
        assert_int_equal(harness_write_text(s->rpcd, line, HARNESS_TIMEOUT_MS), HARNESS_OK);
    }
    for (int i = 0; i < CALLS; i++) {
        char *line;
        assert_int_equal(harness_read_line(s->rpcd, HARNESS_TIMEOUT_MS, &line, NULL, NULL),
                         HARNESS_OK);
        free(line);
    }
    /* A call is counted right after its response is written: every response read, the count
     * reaches CALLS, and never more. */
    long long now = metric(s, sample);
    for (int tries = 0; tries < 1000 && now < before + CALLS; tries++, usleep(2000))
        now = metric(s, sample);
    assert_int_equal(now - before, CALLS);
    assert_true(metric(s, "rpcd_call_bytes_in_total{method=\"echo\",plugin=\"echo\"}") >=
                3 * CALLS);
    json_t *answer = ask(s, "metrics", NULL);
    const char *text = json_string_value(json_object_get(result_of(answer), "text"));
    assert_non_null(strstr(text, "# TYPE rpcd_call_duration_seconds histogram\n"));
    assert_non_null(strstr(text, "rpcd_policy_rejections_total{method=\"echo\""));
    assert_string_equal(text + strlen(text) - 6, "# EOF\n");
    json_decref(answer);
}

/* A call the tool policy refuses is counted as such, by name and over MCP alike. */
static void test_metrics_count_policy_rejections(void **state)
{
    session *s = *state;
    start(s, "[mcp]\ntools_deny = echo\n");
    static const char sample[] = "rpcd_policy_rejections_total{method=\"echo\",plugin=\"echo\"}";
    assert_int_equal(metric(s, sample), 0);
    static const char *const refused[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}\n",
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\"}}\n",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        assert_int_equal(harness_write_text(s->rpcd, refused[i], HARNESS_TIMEOUT_MS), HARNESS_OK);
        char *line;
        assert_int_equal(harness_read_line(s->rpcd, HARNESS_TIMEOUT_MS, &line, NULL, NULL),
                         HARNESS_OK);
        assert_non_null(strstr(line, "\"error\""));
        free(line);
    }
    /* Counted before the refusal is written: both are in once their answers are read. */
    assert_int_equal(metric(s, sample), 2);
}

static void test_malformed_and_oversized(void **state)
{
    session *s = *state;
    start(s, NULL);
    int fd = connect_to(s->socket);
    assert_true(fd >= 0);
    static const struct {
        const char *line;
        int code;
    } cases[] = {
        {"not json\n", -32700},
        {"[1]\n", -32600},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"stop\"}\n", -32601},
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"cancel\"}\n", -32602},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *answer = ask_on(fd, cases[i].line);
        assert_int_equal(
            json_integer_value(json_object_get(json_object_get(answer, "error"), "code")),
            cases[i].code);
        json_decref(answer);
    }
    /* The same connection still serves; a notification is answered with nothing, and so are
     * empty lines, CR LF ones included (control.md: "empty lines are skipped"). */
    static const char notification[] = "{\"jsonrpc\":\"2.0\",\"method\":\"status\"}\r\n"
                                       "\n\r\n";
    assert_int_equal(send(fd, notification, sizeof notification - 1, MSG_NOSIGNAL),
                     (ssize_t)sizeof notification - 1);
    json_t *answer = ask_on(fd, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"status\"}\n");
    assert_int_equal(json_integer_value(json_object_get(answer, "id")), 2);
    assert_non_null(result_of(answer));
    json_decref(answer);
    /* A line past 64 KiB: refused, and the peer dropped. */
    size_t length = 70000;
    char *huge = malloc(length);
    memset(huge, 'x', length);
    assert_int_equal(send(fd, huge, length, MSG_NOSIGNAL), (ssize_t)length);
    free(huge);
    char *line = read_line(fd);
    assert_non_null(line);
    assert_non_null(strstr(line, "-32600"));
    free(line);
    assert_null(read_line(fd));
    close(fd);
    assert_int_equal(
        harness_wait_for_stderr(s->rpcd, "a line longer than 65536 bytes", HARNESS_TIMEOUT_MS),
        HARNESS_OK);
}

static void test_ninth_peer(void **state)
{
    session *s = *state;
    start(s, NULL);
    int fds[8];
    for (int i = 0; i < 8; i++) {
        fds[i] = connect_to(s->socket);
        assert_true(fds[i] >= 0);
        json_t *answer = ask_on(fds[i], "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\"}\n");
        json_decref(answer);
    }
    int ninth = connect_to(s->socket);
    assert_true(ninth >= 0);
    assert_null(read_line(ninth));
    close(ninth);
    assert_int_equal(harness_wait_for_stderr(s->rpcd, "8 peers already", HARNESS_TIMEOUT_MS),
                     HARNESS_OK);
    close(fds[0]);
    /* A place freed serves again. */
    json_t *answer = NULL;
    for (int tries = 0; tries < 1000 && !answer; tries++) {
        int fd = connect_to(s->socket);
        const char *status = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\"}\n";
        assert_int_equal(send(fd, status, strlen(status), MSG_NOSIGNAL), (ssize_t)strlen(status));
        char *line = read_line(fd);
        answer = line ? json_loads(line, 0, NULL) : NULL;
        free(line);
        close(fd);
        if (!answer)
            usleep(2000);
    }
    assert_non_null(result_of(answer));
    json_decref(answer);
    for (int i = 1; i < 8; i++)
        close(fds[i]);
}

/* The CPU time process pid has used so far, in seconds (from /proc). */
static double cpu_seconds(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char text[1024];
    size_t length = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[length] = '\0';
    /* Past the command's ")": state is field 3, utime and stime fields 14 and 15. */
    const char *at = strrchr(text, ')');
    assert_non_null(at);
    unsigned long long user = 0, system = 0;
    assert_int_equal(
        sscanf(at + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &user, &system), 2);
    return (double)(user + system) / (double)sysconf(_SC_CLK_TCK);
}

static double wall_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static void test_peer_that_stops_reading(void **state)
{
    session *s = *state;
    start(s, NULL);
    int stuck = connect_to(s->socket);
    assert_true(stuck >= 0);
    /* Far more answers than the socket holds, none read. */
    static const char request[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"metrics\"}\n";
    int buffer_bytes = 4096;
    assert_int_equal(setsockopt(stuck, SOL_SOCKET, SO_RCVBUF, &buffer_bytes, sizeof buffer_bytes),
                     0);
    for (int i = 0; i < 4000; i++)
        if (send(stuck, request, sizeof request - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
            break;
    /* Until it is dropped, and after: stdin is answered, and so are other peers. */
    double cpu_before = cpu_seconds(harness_pid(s->rpcd)), wall_before = wall_seconds();
    for (int round = 0; round < 2; round++) {
        char line[96];
        snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"echo\"}\n", round);
        assert_int_equal(harness_write_text(s->rpcd, line, HARNESS_TIMEOUT_MS), HARNESS_OK);
        char *answer;
        assert_int_equal(harness_read_line(s->rpcd, HARNESS_TIMEOUT_MS, &answer, NULL, NULL),
                         HARNESS_OK);
        free(answer);
        json_t *status = ask(s, "status", NULL);
        assert_non_null(result_of(status));
        json_decref(status);
        if (round == 0)
            assert_int_equal(
                harness_wait_for_stderr(s->rpcd, "it left an answer unread", test_time_ms(60000)),
                HARNESS_OK);
        if (round == 0) {
            /* The 5 s of waiting for the peer to read were waited, not spun: rpcd used a small
             * part of them (a thread that spun would use all it was given, on any machine). */
            double cpu = cpu_seconds(harness_pid(s->rpcd)) - cpu_before;
            double wall = wall_seconds() - wall_before;
            print_message("waited %.2f s for the peer, rpcd used %.2f s of CPU\n", wall, cpu);
            assert_true(wall >= 4.0);
            assert_true(cpu < wall / 5);
        }
    }
    close(stuck);
}

/* status until plugin echo (isolated) shows a host whose pid is not avoid: its entry (new). */
static json_t *isolated_echo(const session *s, long long avoid, long long restarts)
{
    for (int tries = 0; tries < 2000; tries++) {
        json_t *answer = ask(s, "status", NULL);
        json_t *echo = json_array_get(json_object_get(result_of(answer), "plugins"), 0);
        json_t *pid = json_object_get(echo, "host_pid");
        if (json_is_integer(pid) && json_integer_value(pid) != avoid &&
            json_integer_value(json_object_get(echo, "restarts")) == restarts) {
            json_incref(echo);
            json_decref(answer);
            return echo;
        }
        json_decref(answer);
        usleep(5000);
    }
    fail_msg("plugin echo never showed a host of its own");
    return NULL;
}

static void test_isolated_plugin(void **state)
{
    session *s = *state;
    start(s, "isolation = process\n");
    json_t *echo = isolated_echo(s, 0, 0);
    assert_string_equal(json_string_value(json_object_get(echo, "isolation")), "process");
    assert_true(json_is_null(json_object_get(echo, "last_crash")));
    long long pid = json_integer_value(json_object_get(echo, "host_pid"));
    json_decref(echo);
    /* Its host killed: started again, the death told and counted. */
    assert_int_equal(kill((pid_t)pid, SIGKILL), 0);
    echo = isolated_echo(s, pid, 1);
    assert_non_null(strstr(json_string_value(json_object_get(echo, "last_crash")), "signal 9"));
    json_decref(echo);
    assert_int_equal(metric(s, "rpcd_plugin_crashes_total{plugin=\"echo\"}"), 1);
    assert_int_equal(metric(s, "rpcd_plugin_restarts_total{plugin=\"echo\"}"), 1);
}

/* Starting refused, with reason in stderr and exit 78. */
static void assert_refused(session *s, const char *more, const char *reason)
{
    write_config(s, more);
    harness_argv args = harness_rpcd_argv(s->config);
    harness_run_result run;
    assert_int_equal(harness_run(args.argv, "", 0, HARNESS_TIMEOUT_MS, &run), 0);
    if (!run.status.exited || run.status.code != 78 || !strstr(run.err, reason))
        fail_msg("expected exit 78 and '%s', got %s: %s", reason,
                 harness_exit_describe(&run.status), run.err);
    harness_run_result_free(&run);
}

static void test_refused_at_start(void **state)
{
    session *s = *state;
    /* A directory others can write to. */
    char sub[256];
    snprintf(sub, sizeof sub, "%s/open", s->dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(chmod(sub, 0777), 0);
    snprintf(s->socket, sizeof s->socket, "%s/ctl.sock", sub);
    assert_refused(s, NULL, "is writable by others");
    /* Writable by a group that is not its owner's alone (root only: chgrp to another group). */
    if (geteuid() == 0) {
        assert_int_equal(chmod(sub, 0770), 0);
        assert_int_equal(chown(sub, 0, 100), 0);
        assert_refused(s, NULL, "is writable by its group");
    }
    rmdir(sub);
    /* A symbolic link where the socket goes. */
    snprintf(s->socket, sizeof s->socket, "%s/ctl.sock", s->dir);
    assert_int_equal(symlink("/etc/passwd", s->socket), 0);
    assert_refused(s, NULL, "exists and is no socket of rpcd's user");
    unlink(s->socket);
    /* A directory reached through a link someone else owns (root only). */
    if (geteuid() == 0) {
        char link_path[256], target[256];
        snprintf(target, sizeof target, "%s/real", s->dir);
        snprintf(link_path, sizeof link_path, "%s/via", s->dir);
        assert_int_equal(mkdir(target, 0700), 0);
        assert_int_equal(symlink(target, link_path), 0);
        assert_int_equal(lchown(link_path, 65534, 65534), 0);
        snprintf(s->socket, sizeof s->socket, "%s/ctl.sock", link_path);
        assert_refused(s, NULL, "the symbolic link");
        unlink(link_path);
        rmdir(target);
        snprintf(s->socket, sizeof s->socket, "%s/ctl.sock", s->dir);
    }
    assert_refused(s, "control_socket_mode = 0800\n", "control_socket_mode must be octal");
    /* --check reads them as serving would. */
    harness_argv check = harness_rpcd_argv(s->config);
    harness_argv_push(&check, "--check");
    harness_run_result run;
    assert_int_equal(harness_run(check.argv, "", 0, HARNESS_TIMEOUT_MS, &run), 0);
    assert_int_equal(run.status.code, 78);
    assert_non_null(strstr(run.err, "control_socket_mode must be octal"));
    harness_run_result_free(&run);
    assert_refused(s, "control_socket_group = no-such-group-here\n", "no group");
    /* A socket some process listens on. */
    int listener = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    assert_true(strlen(s->socket) < sizeof address.sun_path);
    memcpy(address.sun_path, s->socket, strlen(s->socket) + 1);
    assert_int_equal(bind(listener, (struct sockaddr *)&address, sizeof address), 0);
    assert_int_equal(listen(listener, 1), 0);
    assert_refused(s, NULL, "another process listens on it");
    /* Once nobody does, the stale socket is replaced. */
    close(listener);
    start(s, "control_socket_mode = 0660\n");
    struct stat info;
    assert_int_equal(lstat(s->socket, &info), 0);
    assert_int_equal(info.st_mode & 0777, 0660);
}

/* In a child of uid 65534 with gid and groups: whether the socket answered status. */
static bool answered_as(const session *s, gid_t gid, gid_t supplementary)
{
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        gid_t groups[1] = {supplementary};
        if (setgroups(supplementary ? 1 : 0, groups) != 0 || setresgid(gid, gid, gid) != 0 ||
            setresuid(65534, 65534, 65534) != 0)
            _exit(2);
        int fd = connect_to(s->socket);
        if (fd < 0)
            _exit(3); /* the socket's mode lets anyone connect */
        static const char line[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\"}\n";
        /* A refused peer may find its connection closed before it writes. */
        if (send(fd, line, sizeof line - 1, MSG_NOSIGNAL) < 0)
            _exit(1);
        char *answer = read_line(fd);
        _exit(answer && strstr(answer, "\"result\"") ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
        fail_msg("the child could not ask (status %d)", status);
    return WEXITSTATUS(status) == 0;
}

static void test_peers_by_credentials(void **state)
{
    session *s = *state;
    if (geteuid() != 0) {
        print_message("skipped: a peer of another user needs root (setresuid in a child)\n");
        skip();
    }
    /* Others may reach the socket; its peer check alone decides. */
    assert_int_equal(chmod(s->dir, 0711), 0);
    start(s, "control_socket_mode = 0666\ncontrol_socket_group = 4242\n");
    assert_false(answered_as(s, 65534, 0));
    assert_int_equal(
        harness_wait_for_stderr(s->rpcd, "refused a peer (uid 65534", HARNESS_TIMEOUT_MS),
        HARNESS_OK);
    assert_true(answered_as(s, 4242, 0));     /* its group */
    assert_true(answered_as(s, 65534, 4242)); /* a supplementary group */
    json_t *answer = ask(s, "status", NULL);  /* root */
    assert_non_null(result_of(answer));
    json_decref(answer);
}

/*
 * control_socket_owner gives the socket to another user, who may then connect as root may
 * (rpcd.conf(5)); a user that does not exist stops the start.
 */
static void test_socket_owner(void **state)
{
    session *s = *state;
    if (geteuid() != 0) {
        print_message("skipped: giving the socket to another user needs root\n");
        skip();
    }
    assert_refused(s, "control_socket_owner = no-such-user-here\n",
                   "control_socket_owner: no user 'no-such-user-here'");
    assert_int_equal(chmod(s->dir, 0711), 0);
    start(s, "control_socket_owner = nobody\n");
    struct stat info;
    assert_int_equal(lstat(s->socket, &info), 0);
    assert_int_equal(info.st_uid, 65534);
    assert_int_equal(info.st_mode & 0777, 0600);
    assert_true(answered_as(s, 65534, 0));
    json_t *answer = ask(s, "status", NULL); /* root still */
    assert_non_null(result_of(answer));
    json_decref(answer);
}

/* control_metrics = false: status says so, and calls are not counted. */
static void test_metrics_off(void **state)
{
    session *s = *state;
    start(s, "control_metrics = false\n");
    json_t *answer = ask(s, "status", NULL);
    assert_true(json_is_false(json_object_get(result_of(answer), "metrics")));
    json_decref(answer);
    static const char line[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}\n";
    assert_int_equal(harness_write_text(s->rpcd, line, HARNESS_TIMEOUT_MS), HARNESS_OK);
    char *reply;
    assert_int_equal(harness_read_line(s->rpcd, HARNESS_TIMEOUT_MS, &reply, NULL, NULL),
                     HARNESS_OK);
    assert_non_null(strstr(reply, "\"result\":[1]"));
    free(reply);
    answer = ask(s, "metrics", NULL);
    assert_true(json_is_false(json_object_get(result_of(answer), "enabled")));
    json_decref(answer);
    assert_int_equal(metric(s, "rpcd_calls_total{method=\"echo\",plugin=\"echo\"}"), 0);
}

/* rpcd ctl ARGS...: its exit status, its stdout in *out (new). */
static int run_ctl(const char *const *extra, char **out)
{
    harness_argv args = harness_rpcd_argv(NULL);
    harness_argv_push(&args, "ctl");
    for (; *extra; extra++)
        harness_argv_push(&args, *extra);
    harness_run_result run;
    assert_int_equal(harness_run(args.argv, NULL, 0, HARNESS_TIMEOUT_MS, &run), 0);
    assert_true(run.status.exited);
    *out = run.out;
    run.out = NULL;
    int code = run.status.code;
    harness_run_result_free(&run);
    return code;
}

static void test_ctl_client(void **state)
{
    session *s = *state;
    start(s, NULL);
    char *out;
    assert_int_equal(run_ctl((const char *[]){"--socket", s->socket, "status", NULL}, &out), 0);
    assert_non_null(strstr(out, "generation 1"));
    assert_non_null(strstr(out, "PLUGIN"));
    assert_non_null(strstr(out, "progress"));
    free(out);
    assert_int_equal(run_ctl((const char *[]){"-c", s->config, "status", "--json", NULL}, &out), 0);
    json_t *status = json_loads(out, 0, NULL);
    assert_int_equal(json_integer_value(json_object_get(status, "generation")), 1);
    json_decref(status);
    free(out);
    assert_int_equal(run_ctl((const char *[]){"-c", s->config, "calls", NULL}, &out), 0);
    assert_non_null(strstr(out, "METHOD"));
    free(out);
    assert_int_equal(run_ctl((const char *[]){"-c", s->config, "metrics", NULL}, &out), 0);
    assert_int_equal(strncmp(out, "# TYPE rpcd_calls counter", 25), 0);
    free(out);
    assert_int_equal(run_ctl((const char *[]){"-c", s->config, "reload", NULL}, &out), 0);
    assert_non_null(strstr(out, "reloaded: generation 2"));
    free(out);
    assert_int_equal(run_ctl((const char *[]){"-c", s->config, "cancel", "999", NULL}, &out), 1);
    free(out);
    assert_int_equal(run_ctl((const char *[]){"-c", s->config, "cancel", NULL}, &out), 64);
    free(out);
    assert_int_equal(run_ctl((const char *[]){"-c", s->config, "stop", NULL}, &out), 64);
    free(out);
    /* A refused reload: told on stderr, status 1. */
    free(harness_write_file(s->dir, "rpcd.conf", "[rpcd]\nno_such_key = 1\n"));
    assert_int_equal(run_ctl((const char *[]){"--socket", s->socket, "reload", NULL}, &out), 1);
    free(out);
    char missing[300];
    snprintf(missing, sizeof missing, "%s/none.sock", s->dir);
    assert_int_equal(run_ctl((const char *[]){"--socket", missing, "status", NULL}, &out), 69);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_status, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_calls_and_cancel, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_reload, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_metrics_count_calls, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_metrics_count_policy_rejections, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_malformed_and_oversized, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_ninth_peer, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_peer_that_stops_reading, session_setup,
                                        session_teardown),
        cmocka_unit_test_setup_teardown(test_isolated_plugin, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_refused_at_start, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_peers_by_credentials, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_socket_owner, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_metrics_off, session_setup, session_teardown),
        cmocka_unit_test_setup_teardown(test_ctl_client, session_setup, session_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
