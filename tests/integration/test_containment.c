/* SPDX-License-Identifier: MIT */
/*
 * A hostile isolated plugin kept in its host: no way into rpcd or another host (/proc, signals,
 * ptrace), no death by a signal meant for rpcd, a host that lives as long as rpcd and not as
 * long as the thread that started it, and no program of the plugin's left once rpcd is gone.
 */
#include "harness.h"

#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/landlock.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

/* The user the tests run rpcd as when they run as root, to try a host of rpcd's own user. */
enum { NOBODY = 65534 };

typedef struct session {
    char *dir;    /* temporary: the config and its drop-ins */
    char *config; /* rpcd.conf */
    harness_process *rpcd;
    int next_id;
} session;

/* The [plugin hostile_X] section of the fixture built with prefix X, isolated, with keys. */
static char *section(char prefix, const char *keys)
{
    char variable[32];
    snprintf(variable, sizeof variable, "RPCD_FIXTURE_HOSTILE_%c", prefix == 'a' ? 'A' : 'B');
    const char *fixture = harness_env(variable);
    assert_non_null(fixture);
    char *text;
    assert_true(asprintf(&text, "[plugin hostile_%c]\npath = %s\nisolation = process\n%s", prefix,
                         fixture, keys ? keys : "") >= 0);
    return text;
}

/*
 * Starts rpcd with sections (the plugins' part of the config), as user (NOBODY, or 0 for the
 * user the test runs as), and waits until it serves.
 */
static void start_wrapped(session *s, const char *sections, unsigned user,
                          const char *const *wrapper)
{
    s->dir = harness_temp_dir();
    assert_non_null(s->dir);
    assert_int_equal(chmod(s->dir, 0755), 0);
    char *text;
    assert_true(asprintf(&text, "[rpcd]\nworkers = 2\n%s", sections) >= 0);
    s->config = harness_write_file(s->dir, "rpcd.conf", text);
    free(text);
    assert_non_null(s->config);
    assert_int_equal(chmod(s->config, 0644), 0);
    char dropins[4096];
    snprintf(dropins, sizeof dropins, "%s/rpcd.conf.d", s->dir);
    assert_int_equal(mkdir(dropins, 0755), 0);
    harness_argv inner = harness_rpcd_argv(s->config);
    assert_non_null(inner.argv[0]);
    harness_argv args = inner;
    static const char *const as_nobody[] = {
        "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", NULL};
    if (user == NOBODY)
        args = harness_argv_wrapped(as_nobody, &inner);
    if (wrapper)
        args = harness_argv_wrapped(wrapper, &inner);
    s->rpcd = harness_start(args.argv);
    assert_non_null(s->rpcd);
    s->next_id = 1;
}

static void start(session *s, const char *sections, unsigned user)
{
    start_wrapped(s, sections, user, NULL);
}

/* start with both fixtures, hostile_a with keys_a and hostile_b with keys_b (each may be NULL). */
static void start_both(session *s, const char *keys_a, const char *keys_b, unsigned user)
{
    char *a = section('a', keys_a), *b = section('b', keys_b);
    char *sections;
    assert_true(asprintf(&sections, "%s%s", a, b) >= 0);
    free(a);
    free(b);
    start(s, sections, user);
    free(sections);
}

static void remove_all(session *s)
{
    char dropins[4096];
    snprintf(dropins, sizeof dropins, "%s/rpcd.conf.d", s->dir);
    harness_remove_dir(dropins);
    harness_remove_dir(s->dir);
    free(s->dir);
    free(s->config);
}

/* Ends rpcd by the end of its input; it must exit 0. Its stderr stays readable until free. */
static void stop(session *s)
{
    harness_close_stdin(s->rpcd);
    harness_exit status;
    assert_int_equal(harness_wait(s->rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    if (!status.exited || status.code != 0)
        print_error("rpcd ended with %s:\n%s\n", harness_exit_describe(&status),
                    harness_stderr(s->rpcd));
    assert_true(status.exited);
    assert_int_equal(status.code, 0);
}

static void finish(session *s)
{
    harness_free(s->rpcd);
    remove_all(s);
}

/* One call, answered before the next is sent. Returns its result (new); fails on an error. */
static json_t *call(session *s, const char *method, const char *params)
{
    char request[4096];
    int id = s->next_id++;
    snprintf(request, sizeof request, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\"%s%s}\n", id,
             method, params ? ",\"params\":" : "", params ? params : "");
    assert_int_equal(harness_write_text(s->rpcd, request, HARNESS_TIMEOUT_MS), HARNESS_OK);
    char *line = NULL;
    if (harness_read_line(s->rpcd, HARNESS_TIMEOUT_MS, &line, NULL, NULL) != HARNESS_OK)
        fail_msg("no answer to %s; stderr:\n%s", request, harness_stderr(s->rpcd));
    json_t *response = json_loads(line, 0, NULL);
    json_t *result = json_object_get(response, "result");
    if (!response || json_integer_value(json_object_get(response, "id")) != id || !result)
        fail_msg("not a result to %s: %s\nstderr:\n%s", request, line, harness_stderr(s->rpcd));
    free(line);
    json_incref(result);
    json_decref(response);
    return result;
}

/* The integer member name of a call's result. */
static long call_number(session *s, const char *method, const char *params, const char *name)
{
    json_t *result = call(s, method, params);
    json_t *member = json_object_get(result, name);
    assert_true(json_is_integer(member));
    long number = (long)json_integer_value(member);
    json_decref(result);
    return number;
}

static void expect_stderr(session *s, const char *text)
{
    int status = harness_wait_for_stderr(s->rpcd, text, HARNESS_TIMEOUT_MS);
    if (status != HARNESS_OK)
        print_error("stderr lacks \"%s\":\n%s\n", text, harness_stderr(s->rpcd));
    assert_int_equal(status, HARNESS_OK);
}

/* Whether pid has ended (gone, or a zombie no one has reaped yet). */
static bool ended(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    char *text = harness_read_file(path, NULL);
    if (!text)
        return true;
    const char *state = strrchr(text, ')');
    bool dead = !state || state[1] == '\0' || state[2] == 'Z' || state[2] == 'X';
    free(text);
    return dead;
}

/* Polls until pid has ended, within a generous bound. */
static bool ends(pid_t pid)
{
    for (int i = 0; i < HARNESS_TIMEOUT_MS / 10; i++) {
        if (ended(pid))
            return true;
        struct timespec nap = {0, 10 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    return false;
}

/* The Landlock ABI of the kernel, 0 without Landlock. */
static long landlock_abi(void)
{
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : abi;
}

/* Whether the host of plugin hostile_PREFIX runs in a PID namespace of its own. */
static bool namespaced(session *s, char prefix)
{
    char method[32];
    snprintf(method, sizeof method, "hostile_%c.whoami", prefix);
    return call_number(s, method, NULL, "namespaced") != 0;
}

/* Field 4 (the parent) or 5 (the process group) of /proc/PID/stat, or -1. */
static long stat_field(pid_t pid, int field)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    char *text = harness_read_file(path, NULL);
    const char *at = text ? strrchr(text, ')') : NULL;
    for (int i = 2; at && i < field; i++)
        at = strchr(at + 1, ' ');
    long value = at ? strtol(at + 1, NULL, 10) : -1;
    free(text);
    return value;
}

/* A hangup, a user signal or an interrupt meant for rpcd leaves the host serving. */
static void test_host_ignores_stray_signals(void **state)
{
    (void)state;
    session s;
    char *sections = section('a', NULL);
    start(&s, sections, 0);
    free(sections);
    pid_t host = (pid_t)call_number(&s, "hostile_a.whoami", NULL, "pid");
    pid_t group = (pid_t)call_number(&s, "hostile_a.whoami", NULL, "pgid");
    static const int stray[] = {SIGHUP, SIGUSR1, SIGUSR2, SIGINT};
    for (size_t i = 0; i < sizeof stray / sizeof stray[0]; i++) {
        /* To the host's whole group: the processes that hold its namespace take none either. */
        assert_int_equal(kill(-group, stray[i]), 0);
        /* The call first: under ThreadSanitizer the handler runs only once the host's reading
         * thread leaves read(), which the call makes it do. */
        assert_int_equal(call_number(&s, "hostile_a.whoami", NULL, "pid"), host);
        char text[64];
        snprintf(text, sizeof text, "signal %d: ignored by a plugin host", stray[i]);
        expect_stderr(&s, text);
    }
    stop(&s);
    finish(&s);
}

/* A host in a group of its own, named so that pkill -x rpcd passes it by. */
static void test_host_group_and_name(void **state)
{
    (void)state;
    session s;
    char *sections = section('a', NULL);
    start(&s, sections, 0);
    free(sections);
    pid_t host = (pid_t)call_number(&s, "hostile_a.whoami", NULL, "pid");
    pid_t group = (pid_t)call_number(&s, "hostile_a.whoami", NULL, "pgid");
    /* The group is the one of the process rpcd started: the host itself, or, with a namespace
     * of its own, the process outside it that holds it. */
    assert_int_equal(stat_field(group, 4), harness_pid(s.rpcd));
    if (!namespaced(&s, 'a'))
        assert_int_equal(group, host);
    assert_int_not_equal(group, getpgid(harness_pid(s.rpcd)));
    pid_t named[] = {host, group};
    for (size_t i = 0; i < 2; i++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/comm", (int)named[i]);
        char *comm = harness_read_file(path, NULL);
        assert_non_null(comm);
        assert_string_equal(comm, "rpcd-host\n");
        free(comm);
    }
    /* A hangup to rpcd's whole group (a terminal closed) reaches rpcd alone. */
    assert_int_equal(kill(-getpgid(harness_pid(s.rpcd)), SIGUSR1), 0);
    expect_stderr(&s, "signal 10: ignored");
    assert_int_equal(call_number(&s, "hostile_a.whoami", NULL, "pid"), host);
    assert_null(strstr(harness_stderr(s.rpcd), "ignored by a plugin host"));
    stop(&s);
    finish(&s);
}

/*
 * A host started by a reload (on the reloading thread, which ends before the plugins stop) ends
 * at rpcd's exit as any other: by the end of its channel, neither killed nor restarted.
 */
static void test_host_started_by_reload_lives(void **state)
{
    (void)state;
    session s;
    start(&s, "", 0);
    /* Serving first: the drop-in must be new to a reload, and a SIGHUP before serving would
     * find no reloader. */
    char *line = NULL;
    assert_int_equal(harness_write_text(s.rpcd,
                                        "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}\n",
                                        HARNESS_TIMEOUT_MS),
                     HARNESS_OK);
    assert_int_equal(harness_read_line(s.rpcd, HARNESS_TIMEOUT_MS, &line, NULL, NULL), HARNESS_OK);
    free(line);
    char *text = section('a', NULL);
    char dropins[4096];
    snprintf(dropins, sizeof dropins, "%s/rpcd.conf.d", s.dir);
    char *dropin = harness_write_file(dropins, "50-hostile.conf", text);
    assert_non_null(dropin);
    free(dropin);
    free(text);
    assert_int_equal(harness_signal(s.rpcd, SIGHUP), 0);
    /* ThreadSanitizer runs the handler once the reading thread leaves read(): a notification,
     * never answered, wakes it. */
    const char *sanitize = getenv("RPCD_SANITIZE");
    if (sanitize && strcmp(sanitize, "thread") == 0 &&
        harness_wait_for_stderr(s.rpcd, "plugins added [hostile_a]", 1000) != HARNESS_OK)
        assert_int_equal(harness_write_text(s.rpcd, "{\"jsonrpc\":\"2.0\",\"method\":\"nudge\"}\n",
                                            HARNESS_TIMEOUT_MS),
                         HARNESS_OK);
    expect_stderr(&s, "reloaded: generation 2: plugins added [hostile_a]");
    pid_t host = (pid_t)call_number(&s, "hostile_a.whoami", NULL, "pid");
    /* At exit the reloading thread ends first: the host must outlive it, end when its channel
     * does, and run its plugin's shutdown. */
    stop(&s);
    char shut[64];
    snprintf(shut, sizeof shut, "hostile_a: shut down by pid %d", (int)host);
    const char *log = harness_stderr(s.rpcd);
    if (!strstr(log, shut) || strstr(log, "SIGKILL") || strstr(log, "restarted"))
        fail_msg("the host was killed or restarted:\n%s", log);
    finish(&s);
}

/* The programs of spawn: a child, and a daemon outside the host's group. */
typedef struct left_behind {
    pid_t child, daemon;
} left_behind;

static left_behind spawn(session *s)
{
    json_t *result = call(s, "hostile_a.spawn", NULL);
    left_behind pids = {(pid_t)json_integer_value(json_object_get(result, "child")),
                        (pid_t)json_integer_value(json_object_get(result, "daemon"))};
    json_decref(result);
    assert_true(pids.child > 0);
    assert_true(pids.daemon > 0);
    assert_false(ended(pids.child));
    assert_false(ended(pids.daemon));
    return pids;
}

static void expect_ended(left_behind pids, const session *s)
{
    bool child = ends(pids.child), daemon = ends(pids.daemon);
    if (!child || !daemon) {
        kill(pids.child, SIGKILL);
        kill(pids.daemon, SIGKILL);
        fail_msg("left running: child %s, daemon %s; stderr:\n%s", child ? "no" : "yes",
                 daemon ? "no" : "yes", harness_stderr(s->rpcd));
    }
}

/* What a plugin started ends when rpcd exits. */
static void test_descendants_end_with_rpcd(void **state)
{
    (void)state;
    session s;
    char *sections = section('a', NULL);
    start(&s, sections, 0);
    free(sections);
    left_behind pids = spawn(&s);
    stop(&s);
    expect_ended(pids, &s);
    finish(&s);
}

/* And when rpcd is killed: its hosts see the end of their channels. */
static void test_descendants_end_with_killed_rpcd(void **state)
{
    (void)state;
    session s;
    char *sections = section('a', NULL);
    start(&s, sections, 0);
    free(sections);
    pid_t host = (pid_t)call_number(&s, "hostile_a.whoami", NULL, "pid");
    left_behind pids = spawn(&s);
    assert_int_equal(harness_signal(s.rpcd, SIGKILL), 0);
    harness_exit status;
    assert_int_equal(harness_wait(s.rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    assert_int_equal(status.signal, SIGKILL);
    expect_ended(pids, &s);
    assert_true(ends(host));
    finish(&s);
}

/* And when the host's reading thread never comes back (a quick handler that hangs): as
 * started under wrapper (NULL: none), in a PID namespace of its own or not (namespaced). */
static void hung_host_ends_with_killed_rpcd(const char *const *wrapper, bool namespaced_host)
{
    session s;
    char *sections = section('a', NULL);
    start_wrapped(&s, sections, 0, wrapper);
    free(sections);
    assert_int_equal(namespaced(&s, 'a'), namespaced_host);
    pid_t host = (pid_t)call_number(&s, "hostile_a.whoami", NULL, "pid");
    left_behind pids = spawn(&s);
    assert_int_equal(
        harness_write_text(s.rpcd,
                           "{\"jsonrpc\":\"2.0\",\"id\":\"h\",\"method\":\"hostile_a.hang\"}\n",
                           HARNESS_TIMEOUT_MS),
        HARNESS_OK);
    /* The hang reached the host: its reading thread sleeps in pause(). */
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/wchan", (int)host);
    bool paused = false;
    for (int i = 0; i < HARNESS_TIMEOUT_MS / 10 && !paused; i++) {
        char *wchan = harness_read_file(path, NULL);
        paused = wchan && strstr(wchan, "pause");
        free(wchan);
        if (!paused) {
            struct timespec nap = {0, 10 * 1000 * 1000};
            nanosleep(&nap, NULL);
        }
    }
    if (!paused)
        print_message("the host's wchan never showed pause(): the test may prove less\n");
    assert_int_equal(harness_signal(s.rpcd, SIGKILL), 0);
    harness_exit status;
    assert_int_equal(harness_wait(s.rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    expect_ended(pids, &s);
    if (!ends(host)) {
        kill(host, SIGKILL);
        fail_msg("the host outlived rpcd");
    }
    finish(&s);
}

static void test_hung_host_ends_with_killed_rpcd(void **state)
{
    (void)state;
    /* Where the kernel gives no namespace, test_without_a_namespace covers this. */
    session probe;
    char *sections = section('a', NULL);
    start(&probe, sections, 0);
    free(sections);
    bool own = namespaced(&probe, 'a');
    stop(&probe);
    finish(&probe);
    hung_host_ends_with_killed_rpcd(NULL, own);
}

/*
 * Where the kernel refuses a PID namespace (unshare refused, as a container's seccomp profile
 * may): rpcd says so for the plugin, and the host, a subreaper watching rpcd's end through its
 * channel, still ends with rpcd and ends what its plugin started, daemons included.
 */
static void test_without_a_namespace(void **state)
{
    (void)state;
    const char *const wrapper[] = {harness_env("RPCD_DENY_SYSCALL"), "unshare", NULL};
    assert_non_null(wrapper[0]);
    session s;
    char *sections = section('a', NULL);
    start_wrapped(&s, sections, 0, wrapper);
    free(sections);
    expect_stderr(&s, "plugin hostile_a: its host can have no PID namespace of its own: the "
                      "kernel refused a PID namespace");
    expect_stderr(&s, "plugin hostile_a: its host has no PID namespace of its own");
    assert_false(namespaced(&s, 'a'));
    left_behind pids = spawn(&s);
    stop(&s);
    expect_ended(pids, &s);
    finish(&s);
    hung_host_ends_with_killed_rpcd(wrapper, false);
}

/* A host killed outright had no time to end its child: rpcd ends its process group. */
static void test_group_ends_with_killed_host(void **state)
{
    (void)state;
    session s;
    char *sections = section('a', NULL);
    start(&s, sections, 0);
    free(sections);
    pid_t host = (pid_t)call_number(&s, "hostile_a.whoami", NULL, "pid");
    bool own_namespace = namespaced(&s, 'a');
    left_behind pids = spawn(&s);
    assert_int_equal(kill(host, SIGKILL), 0);
    bool child = ends(pids.child);
    /* The daemon left the group: only the host's PID namespace catches it (rpcd.conf(5)). */
    bool daemon = own_namespace ? ends(pids.daemon) : true;
    kill(pids.daemon, SIGKILL);
    assert_true(child);
    assert_true(daemon);
    /* The host's end was reported as it happened. */
    expect_stderr(&s, "killed by signal 9 (SIGKILL)");
    stop(&s);
    finish(&s);
}

/* The errnos attack reports for target (0: rpcd, the host's parent). */
typedef struct refusals {
    long fd, mem, kill, ptrace;
} refusals;

static refusals attack(session *s, const char *method, pid_t target)
{
    char params[64] = "{}";
    if (target)
        snprintf(params, sizeof params, "{\"pid\":%d}", (int)target);
    json_t *result = call(s, method, params);
    refusals got = {json_integer_value(json_object_get(result, "fd")),
                    json_integer_value(json_object_get(result, "mem")),
                    json_integer_value(json_object_get(result, "kill")),
                    json_integer_value(json_object_get(result, "ptrace"))};
    char *text = json_dumps(result, 0);
    print_message("%s on %d: %s\n", method, (int)target, text);
    free(text);
    json_decref(result);
    return got;
}

/* Neither rpcd's descriptors nor its memory, nor another host's; no ptrace of either. */
static void expect_closed(refusals got)
{
    assert_int_not_equal(got.fd, 0);
    assert_int_not_equal(got.mem, 0);
    assert_int_not_equal(got.ptrace, 0);
}

/*
 * Two hosts of rpcd's own user (nobody), seccomp off: what keeps rpcd and the other host out of
 * reach is that neither is dumpable.
 */
static void test_same_user_cannot_reach_in(void **state)
{
    (void)state;
    if (getuid() != 0)
        skip(); /* the test runs rpcd as nobody, which needs root */
    session s;
    start_both(&s, "seccomp = off\n", "seccomp = off\n", NOBODY);
    pid_t other = (pid_t)call_number(&s, "hostile_b.whoami", NULL, "pid");
    /* What seccomp = off leaves open is said: without a PID namespace of its own (a user
     * namespace, for a host not root's), the host can signal rpcd. */
    const char *gap = "plugin hostile_a: seccomp = off: nothing keeps its host from signalling";
    if (namespaced(&s, 'a')) {
        assert_null(strstr(harness_stderr(s.rpcd), gap));
    } else {
        expect_stderr(&s, gap);
        expect_stderr(&s, "plugin hostile_a: its host can have no PID namespace of its own");
    }
    expect_closed(attack(&s, "hostile_a.attack", 0));
    expect_closed(attack(&s, "hostile_a.attack", other));
    /* The answers still reach the client, and nothing else did. */
    assert_int_equal(call_number(&s, "hostile_b.whoami", NULL, "pid"), other);
    stop(&s);
    finish(&s);
}

/*
 * Each host in a PID namespace of its own, where no id names rpcd or the other host: a signal
 * or ptrace aimed at either by its id outside finds no such process, even without the filter.
 * Where the kernel refuses the namespace, rpcd says so, naming the plugin.
 */
static void test_hosts_in_namespaces_of_their_own(void **state)
{
    (void)state;
    session s;
    start_both(&s, "seccomp = off\n", NULL, 0);
    assert_int_equal(call_number(&s, "hostile_a.whoami", NULL, "rpcd"), harness_pid(s.rpcd));
    if (!namespaced(&s, 'a')) {
        expect_stderr(&s, "plugin hostile_a: its host can have no PID namespace of its own");
        print_message("no PID namespace here: %s\n", harness_stderr(s.rpcd));
    } else {
        assert_true(namespaced(&s, 'b'));
        pid_t other = (pid_t)call_number(&s, "hostile_b.whoami", NULL, "pid");
        refusals got = attack(&s, "hostile_a.attack", other);
        assert_int_equal(got.kill, ESRCH);
        assert_int_equal(got.ptrace, ESRCH);
        got = attack(&s, "hostile_a.attack", 0);
        assert_int_equal(got.kill, ESRCH);
        assert_int_equal(got.ptrace, ESRCH);
        assert_null(strstr(harness_stderr(s.rpcd), "PID namespace"));
    }
    stop(&s);
    finish(&s);
}

/*
 * The ways around a filter that names rpcd's pid, from a filtered host of rpcd's own user: its
 * group cannot be joined, no descriptor's owner can be rpcd, no child can be made rpcd's. A
 * thread of rpcd named by its id only Landlock's scope (Linux 6.12) keeps out of reach: before
 * it, rpcd says so, naming the plugin.
 */
static void test_routes_around_the_filter(void **state)
{
    (void)state;
    session s;
    char *sections = section('b', NULL);
    start(&s, sections, 0);
    free(sections);
    json_t *got = call(&s, "hostile_b.routes", "{}");
    char *text = json_dumps(got, 0);
    print_message("hostile_b.routes: %s\n", text);
    free(text);
    assert_int_equal(json_integer_value(json_object_get(got, "group")), EPERM);
    assert_int_equal(json_integer_value(json_object_get(got, "owner")), EPERM);
    assert_int_equal(json_integer_value(json_object_get(got, "parent")), EPERM);
    long thread = json_integer_value(json_object_get(got, "thread"));
    json_decref(got);
    const char *warning = "plugin hostile_b: this kernel's Landlock";
    if (namespaced(&s, 'b')) {
        /* In a namespace of its own no id names a thread of rpcd's, on any kernel. */
        assert_int_equal(thread, ESRCH);
        assert_null(strstr(harness_stderr(s.rpcd), warning));
    } else if (landlock_abi() >= 6) {
        assert_int_equal(thread, EPERM);
        /* Under a wrapper rpcd sees the kernel through it: valgrind knows no Landlock system
         * call, so rpcd finds no Landlock there, and warns. */
        if (!harness_wrapped())
            assert_null(strstr(harness_stderr(s.rpcd), warning));
    } else {
        /* rpcd runs worker threads: one is found, and the signal goes through. */
        assert_int_equal(thread, 0);
        expect_stderr(&s, "can signal rpcd (through the id of one of rpcd's threads");
    }
    stop(&s);
    finish(&s);
}

/*
 * rpcd as root and a host that stays root: without its capabilities, it cannot reach into rpcd,
 * and in the default profile it can neither signal rpcd nor rewrite its own file (Landlock).
 */
static void test_root_host_cannot_reach_in(void **state)
{
    (void)state;
    if (getuid() != 0)
        skip();
    session s;
    start_both(&s, "seccomp = off\n", NULL, 0);
    pid_t other = (pid_t)call_number(&s, "hostile_b.whoami", NULL, "pid");
    expect_closed(attack(&s, "hostile_a.attack", 0));
    expect_closed(attack(&s, "hostile_a.attack", other));
    refusals got = attack(&s, "hostile_b.attack", 0);
    expect_closed(got);
    /* rpcd's pid names nothing in the host's namespace; outside one, the filter refuses it. */
    assert_int_equal(got.kill, namespaced(&s, 'b') ? ESRCH : EPERM);
    /* Root owns the file: Landlock alone keeps the filtered host from rewriting it. */
    char params[4200];
    snprintf(params, sizeof params, "{\"path\":\"%s\"}", harness_env("RPCD_FIXTURE_HOSTILE_B"));
    if (landlock_abi() > 0)
        assert_int_equal(call_number(&s, "hostile_b.rewrite", params, "errno"), EACCES);
    /* Without the filter (seccomp = off) nothing does: the control. */
    snprintf(params, sizeof params, "{\"path\":\"%s\"}", harness_env("RPCD_FIXTURE_HOSTILE_A"));
    assert_int_equal(call_number(&s, "hostile_a.rewrite", params, "errno"), 0);
    stop(&s);
    finish(&s);
}

/*
 * A kernel without Landlock (landlock_create_ruleset refused, as on one before 5.13 or with it
 * disabled; signal scoping needs 6.12): the seccomp filter alone keeps a host's signals off
 * rpcd's pid, and rpcd warns, at start-up and in --check, of what it cannot keep out.
 */
static void test_no_landlock_rpcd_out_of_reach(void **state)
{
    (void)state;
    const char *const wrapper[] = {harness_env("RPCD_DENY_SYSCALL"), "landlock_create_ruleset",
                                   NULL};
    assert_non_null(wrapper[0]);
    session s;
    char *sections = section('a', NULL);
    start_wrapped(&s, sections, 0, wrapper);
    free(sections);
    refusals got = attack(&s, "hostile_a.attack", 0);
    assert_int_equal(got.kill, namespaced(&s, 'a') ? ESRCH : EPERM);
    expect_closed(got);
    expect_stderr(&s, "plugin hostile_a: this kernel has no Landlock (or it is not among the LSMs "
                      "it booted with): its host may write wherever its user may");
    stop(&s);
    harness_free(s.rpcd);
    harness_argv inner = harness_rpcd_argv(s.config);
    harness_argv_push(&inner, "--check");
    harness_argv args = harness_argv_wrapped(wrapper, &inner);
    harness_run_result check;
    assert_int_equal(harness_run(args.argv, NULL, 0, HARNESS_TIMEOUT_MS, &check), HARNESS_OK);
    assert_true(check.status.exited);
    assert_int_equal(check.status.code, 0);
    if (!strstr(check.err, "plugin hostile_a: this kernel has no Landlock (or it is not among the "
                           "LSMs it booted with): its host may write wherever its user may"))
        fail_msg("--check does not say it:\n%s", check.err);
    harness_run_result_free(&check);
    remove_all(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_ignores_stray_signals),
        cmocka_unit_test(test_host_group_and_name),
        cmocka_unit_test(test_host_started_by_reload_lives),
        cmocka_unit_test(test_descendants_end_with_rpcd),
        cmocka_unit_test(test_descendants_end_with_killed_rpcd),
        cmocka_unit_test(test_hung_host_ends_with_killed_rpcd),
        cmocka_unit_test(test_without_a_namespace),
        cmocka_unit_test(test_group_ends_with_killed_host),
        cmocka_unit_test(test_same_user_cannot_reach_in),
        cmocka_unit_test(test_root_host_cannot_reach_in),
        cmocka_unit_test(test_routes_around_the_filter),
        cmocka_unit_test(test_hosts_in_namespaces_of_their_own),
        cmocka_unit_test(test_no_landlock_rpcd_out_of_reach),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
