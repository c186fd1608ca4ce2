/* SPDX-License-Identifier: MIT */
/*
 * A plugin's file changed under a running rpcd: written over in place with garbage, or removed,
 * changes nothing for the calls, nor for an isolated plugin's restarted host, until a reload
 * loads the new file. And a host whose restarts keep failing: one line says rpcd gave up.
 * With RPCD_CASES_ISOLATION = process (upgrade_isolated) the plugin runs in a host process.
 */
#include "harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

typedef struct session {
    char *dir;
    char *plugin; /* dir/named.so, the file [plugin named] names */
    harness_process *rpcd;
    unsigned generation; /* the last one rpcd logged */
    json_int_t next_id;
} session;

static bool isolated(void)
{
    const char *isolation = getenv("RPCD_CASES_ISOLATION");
    return isolation && strcmp(isolation, "process") == 0;
}

/* The sanitizer runtimes leave a host's fatal signals to it (abort_init_if is about them). */
static void leave_fatal_signals_alone(void)
{
    static const char *const names[] = {"ASAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS"};
    static const char extra[] = "handle_abort=0";
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *old = getenv(names[i]);
        if (old && strstr(old, extra))
            continue;
        char *value;
        assert_true(asprintf(&value, "%s%s%s", old ? old : "", old && old[0] ? ":" : "", extra) >=
                    0);
        setenv(names[i], value, 1);
        free(value);
    }
}

/* Copies from to a new file beside to, then renames it into place, as an installer does. */
static void install(const char *from, const char *to)
{
    size_t length;
    char *bytes = harness_read_file(from, &length);
    assert_non_null(bytes);
    char staged[4096];
    snprintf(staged, sizeof staged, "%s.new", to);
    FILE *out = fopen(staged, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(bytes, 1, length, out), length);
    assert_int_equal(fclose(out), 0);
    assert_int_equal(chmod(staged, 0644), 0);
    assert_int_equal(rename(staged, to), 0);
    free(bytes);
}

/* Writes garbage over the file in place (same inode), as a careless cp or a build does. */
static void overwrite_in_place(const char *path)
{
    int fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    char garbage[8192];
    memset(garbage, 0xcc, sizeof garbage);
    assert_int_equal(write(fd, garbage, sizeof garbage), (ssize_t)sizeof garbage);
    assert_int_equal(close(fd), 0);
}

/* rpcd over [plugin named], build_a installed, with keys (may be "") in its section. */
static void start(session *s, const char *keys)
{
    leave_fatal_signals_alone();
    s->dir = harness_temp_dir();
    assert_non_null(s->dir);
    assert_true(asprintf(&s->plugin, "%s/named.so", s->dir) > 0);
    install(harness_env("RPCD_FIXTURE_BUILD_A"), s->plugin);
    char *text;
    assert_true(asprintf(&text, "[plugin named]\npath = %s\nisolation = %s\n%s", s->plugin,
                         isolated() ? "process" : "none", keys) > 0);
    char *config = harness_write_file(s->dir, "rpcd.conf", text);
    assert_non_null(config);
    free(text);
    harness_argv args = harness_rpcd_argv(config);
    s->rpcd = harness_start(args.argv);
    assert_non_null(s->rpcd);
    free(config);
    s->generation = 1;
}

static void send_text(session *s, const char *text)
{
    int status = harness_write_text(s->rpcd, text, HARNESS_TIMEOUT_MS);
    if (status != HARNESS_OK) {
        harness_collect_stderr(s->rpcd, HARNESS_TIMEOUT_MS);
        print_error("cannot write to rpcd (%d); stderr:\n%s\n", status, harness_stderr(s->rpcd));
    }
    assert_int_equal(status, HARNESS_OK);
}

/* Calls build.name: the response (new), which must answer this call. */
static json_t *call_name(session *s)
{
    json_int_t id = ++s->next_id;
    char text[128];
    snprintf(text, sizeof text, "{\"jsonrpc\":\"2.0\",\"id\":%lld,\"method\":\"build.name\"}\n",
             (long long)id);
    send_text(s, text);
    char *line = NULL;
    int status = harness_read_line(s->rpcd, HARNESS_TIMEOUT_MS, &line, NULL, NULL);
    if (status != HARNESS_OK)
        print_error("no line from rpcd (%d); stderr:\n%s\n", status, harness_stderr(s->rpcd));
    assert_int_equal(status, HARNESS_OK);
    json_t *response = json_loads(line, 0, NULL);
    assert_non_null(response);
    free(line);
    assert_int_equal(json_integer_value(json_object_get(response, "id")), id);
    return response;
}

/* Calls build.name, which must be answered by build. */
static void expect_build(session *s, const char *build)
{
    json_t *response = call_name(s);
    const char *got =
        json_string_value(json_object_get(json_object_get(response, "result"), "build"));
    if (!got || strcmp(got, build) != 0) {
        char *text = json_dumps(response, 0);
        print_error("expected build %s, got %s; stderr:\n%s\n", build, text,
                    harness_stderr(s->rpcd));
        free(text);
    }
    assert_non_null(got);
    assert_string_equal(got, build);
    json_decref(response);
}

static void expect_stderr(session *s, const char *text)
{
    int status = harness_wait_for_stderr(s->rpcd, text, HARNESS_TIMEOUT_MS);
    if (status != HARNESS_OK)
        print_error("stderr lacks \"%s\":\n%s\n", text, harness_stderr(s->rpcd));
    assert_int_equal(status, HARNESS_OK);
}

static int count_of(const char *text, const char *part)
{
    int count = 0;
    for (const char *at = strstr(text, part); at; at = strstr(at + 1, part))
        count++;
    return count;
}

/* SIGHUP, and the log line of the next generation. */
static void reload(session *s)
{
    char text[128];
    snprintf(text, sizeof text, "reloaded: generation %u:", ++s->generation);
    assert_int_equal(harness_signal(s->rpcd, SIGHUP), 0);
    expect_stderr(s, text);
}

/* The one child of rpcd (its plugin's host), from /proc. */
static pid_t host_of(pid_t parent)
{
    DIR *proc = opendir("/proc");
    assert_non_null(proc);
    pid_t found = 0;
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
        if (end && sscanf(end + 1, " %c %d", &state, &ppid) == 2 && ppid == parent) {
            found = (pid_t)atoi(entry->d_name);
            count++;
        }
        free(stat);
    }
    closedir(proc);
    assert_int_equal(count, 1);
    return found;
}

/* Kills the plugin's host and waits for its restart, the restarts-th. */
static void crash_host(session *s, int restarts)
{
    assert_int_equal(kill(host_of(harness_pid(s->rpcd)), SIGKILL), 0);
    /* Each wait is bounded: a restart that never comes fails the test, not stalls it. */
    for (int waits = 0; count_of(harness_stderr(s->rpcd), "host restarted") < restarts; waits++) {
        if (waits == HARNESS_TIMEOUT_MS / 20)
            print_error("no restart %d; stderr:\n%s\n", restarts, harness_stderr(s->rpcd));
        assert_true(waits < HARNESS_TIMEOUT_MS / 20);
        harness_collect_stderr(s->rpcd, 20);
    }
    assert_int_equal(count_of(harness_stderr(s->rpcd), "host restarted"), restarts);
}

static void end(session *s)
{
    harness_close_stdin(s->rpcd);
    harness_exit status;
    assert_int_equal(harness_wait(s->rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    if (!status.exited || status.code != 0)
        print_error("rpcd ended with %s; stderr:\n%s\n", harness_exit_describe(&status),
                    harness_stderr(s->rpcd));
    assert_true(status.exited);
    assert_int_equal(status.code, 0);
    harness_free(s->rpcd);
    harness_remove_dir(s->dir);
    free(s->dir);
    free(s->plugin);
}

/*
 * Garbage written over the running plugin's file in place: calls go on with what was loaded, an
 * isolated plugin's host restarts with it, a reload of the garbage fails and keeps it, and a
 * reload after a new version was installed serves the new one.
 */
static void test_overwritten_in_place(void **state)
{
    (void)state;
    session s = {0};
    start(&s, "");
    expect_build(&s, "a");
    overwrite_in_place(s.plugin);
    for (int i = 0; i < 20; i++)
        expect_build(&s, "a");
    if (isolated()) {
        crash_host(&s, 1);
        expect_build(&s, "a");
        crash_host(&s, 2);
        expect_build(&s, "a");
    }
    assert_int_equal(harness_signal(s.rpcd, SIGHUP), 0);
    expect_stderr(&s, "reload failed, still serving generation 1");
    expect_build(&s, "a");
    install(harness_env("RPCD_FIXTURE_BUILD_B"), s.plugin);
    reload(&s);
    expect_build(&s, "b");
    end(&s);
}

/*
 * The running plugin's file removed: the same, also when its host may read only a directory of
 * its own (read_paths): the file is not what a restarted host loads.
 */
static void test_removed(void **state)
{
    (void)state;
    session s = {0};
    char *keys;
    char *dir = harness_temp_dir(); /* all its host may read, besides libraries */
    assert_non_null(dir);
    assert_true(asprintf(&keys, "read_paths = %s\n", dir) > 0);
    start(&s, isolated() ? keys : "");
    expect_build(&s, "a");
    assert_int_equal(unlink(s.plugin), 0);
    for (int i = 0; i < 20; i++)
        expect_build(&s, "a");
    if (isolated()) {
        crash_host(&s, 1);
        expect_build(&s, "a");
    }
    install(harness_env("RPCD_FIXTURE_BUILD_B"), s.plugin);
    reload(&s);
    expect_build(&s, "b");
    end(&s);
    harness_remove_dir(dir);
    free(dir);
    free(keys);
}

/*
 * A host whose plugin's init crashes on every restart: past max_restarts, one error line says
 * that rpcd stopped restarting it, why, and what brings it back; every call then fails with
 * "plugin host down". Isolated only.
 */
static void test_gives_up_once_and_says_so(void **state)
{
    (void)state;
    if (!isolated())
        skip();
    session s = {0};
    char *dir = harness_temp_dir(), *flag, *keys;
    assert_non_null(dir);
    assert_true(asprintf(&flag, "%s/broken", dir) > 0);
    assert_true(asprintf(&keys, "max_restarts = 3\nabort_init_if = %s\n", flag) > 0);
    start(&s, keys);
    expect_build(&s, "a");
    char *path = harness_write_file(dir, "broken", "");
    assert_non_null(path);
    free(path);
    assert_int_equal(kill(host_of(harness_pid(s.rpcd)), SIGKILL), 0);
    expect_stderr(&s, "stopped restarting");
    const char *err = harness_stderr(s.rpcd);
    assert_int_equal(count_of(err, "stopped restarting"), 1);
    const char *line = strstr(err, "stopped restarting");
    while (line > err && line[-1] != '\n')
        line--;
    const char *line_end = strchr(line, '\n');
    assert_non_null(line_end);
    char *said = strndup(line, (size_t)(line_end - line));
    /* An error naming the plugin, why (the limit, the last failure: the init's crash) and how to
     * recover. */
    static const char *const parts[] = {
        "error: plugin named: rpcd stopped restarting its host", /* its section's name */
        "more than 3 times within a minute (max_restarts = 3)",
        "the last time: its host ended before the plugin's init returned",
        "SIGABRT",
        "reloaded (SIGHUP) with the plugin's file or section changed",
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (!strstr(said, parts[i]))
            print_error("\"%s\" lacks \"%s\"\n", said, parts[i]);
        assert_non_null(strstr(said, parts[i]));
    }
    /* Every attempt said it would try again, and the last did not. */
    assert_int_equal(count_of(err, "trying again in"), 2);
    free(said);
    for (int i = 0; i < 3; i++) {
        json_t *response = call_name(&s);
        json_t *error = json_object_get(response, "error");
        assert_int_equal(json_integer_value(json_object_get(error, "code")), -32603);
        json_t *data = json_object_get(error, "data");
        assert_string_equal(json_string_value(json_object_get(data, "exception")),
                            "plugin host down");
        assert_non_null(strstr(json_string_value(json_object_get(data, "detail")),
                               "fail until rpcd is restarted, or reloaded (SIGHUP)"));
        json_decref(response);
    }
    /* The fix: a new file, and a reload. */
    assert_int_equal(unlink(flag), 0);
    install(harness_env("RPCD_FIXTURE_BUILD_B"), s.plugin);
    reload(&s);
    expect_build(&s, "b");
    assert_int_equal(count_of(harness_stderr(s.rpcd), "stopped restarting"), 1);
    end(&s);
    harness_remove_dir(dir);
    free(dir);
    free(flag);
    free(keys);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overwritten_in_place),
        cmocka_unit_test(test_removed),
        cmocka_unit_test(test_gives_up_once_and_says_so),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
