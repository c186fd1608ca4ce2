/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for isolation/proxy.c and spawn.c, with the real rpcd as the host program: the
 * methods a host reports become proxies (same names, flags and descriptions, a cancel hook),
 * and each way a start fails is one message with nothing left behind (no method, no process).
 */
#include "isolation/proxy.h"
#include "isolation/proxy_calls.h"
#include "isolation/spawn.h"

#include <pthread.h>

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "call_fixture.h"
#include "wire/mcp_events.h"
#include "base/signals.h"
#include "test_time.h"

#include <time.h>

/* No config: a host with the default seccomp profile and nothing else confined. */
static const iso_settings settings = {
    .limits = {.workers = 2, .max_depth = 64}, .log_level = 1, .insecure = true, .grace_ms = 1000};

/* No child process is left, reaped or not. */
static void assert_no_children(void)
{
    errno = 0;
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
}

/* Starts the plugin at the path in the environment variable, into methods. */
static int start(const char *variable, registry *methods, iso_proxy **out, char *error, size_t size)
{
    const char *path = getenv(variable);
    assert_non_null(path);
    static cfg_plugin config;
    static cfg_pair pair = {(char *)"greeting", (char *)"hi", false};
    config = (cfg_plugin){.name = (char *)"fixture",
                          .path = (char *)path,
                          .pairs = &pair,
                          .pair_count = 1,
                          .max_restarts = 10};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    static int owner;
    return iso_proxy_start(&config, fd, &settings, methods, &owner, out, error, size);
}

static void setup_program(void)
{
    const char *rpcd = getenv("RPCD_BINARY");
    assert_non_null(rpcd);
    iso_set_host_program(rpcd);
}

static void test_methods_become_proxies(void **state)
{
    (void)state;
    setup_program();
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    iso_proxy *proxy = NULL;
    char error[512] = "";
    if (start("RPCD_FIXTURE_ISOLATED_A", methods, &proxy, error, sizeof error) != 0)
        fail_msg("start failed: %s", error);
    const reg_method *echo = reg_find(methods, "a.echo", 6);
    assert_non_null(echo);
    /* Named by its section, as every log line about it: one file may serve several. */
    assert_string_equal(echo->owner_name, "fixture");
    assert_string_equal(echo->description, "an isolated fixture method");
    assert_true(echo->flags & RPCD_METHOD_QUICK);
    assert_non_null(echo->cancel_hook);
    assert_non_null(reg_find(methods, "a.null", 6));
    assert_int_equal(reg_count(methods), 20); /* every method of isolated.c */
    iso_proxy_stop(proxy);
    assert_no_children();
    reg_free(methods);
}

/* What a method is to an MCP client (1.5) crosses the channel with it. */
static void test_mcp_roles_become_proxies(void **state)
{
    (void)state;
    setup_program();
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    iso_proxy *proxy = NULL;
    char error[512] = "";
    if (start("RPCD_FIXTURE_EVENTS", methods, &proxy, error, sizeof error) != 0)
        fail_msg("start failed: %s", error);
    const reg_method *today = reg_find(methods, "ev.today", 8);
    assert_non_null(today);
    assert_int_equal(today->mcp_role, RPCD_MCP_RESOURCE);
    assert_string_equal(
        today->mcp_descriptor,
        "{\"uri\":\"notes://today\",\"name\":\"today\",\"mimeType\":\"text/plain\"}");
    const reg_method *greet = reg_find(methods, "ev.greet", 8);
    assert_non_null(greet);
    assert_int_equal(greet->mcp_role, RPCD_MCP_PROMPT);
    assert_string_equal(
        greet->mcp_descriptor,
        "{\"name\":\"greet\",\"arguments\":[{\"name\":\"who\",\"required\":true}]}");
    const reg_method *updated = reg_find(methods, "ev.updated", 10);
    assert_non_null(updated);
    assert_int_equal(updated->mcp_role, RPCD_MCP_TOOL);
    assert_null(updated->mcp_descriptor);
    iso_proxy_stop(proxy);
    assert_no_children();
    reg_free(methods);
}

static void refused(const char *variable, const char *expected)
{
    setup_program();
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    iso_proxy *proxy = NULL;
    char error[512] = "";
    assert_int_equal(start(variable, methods, &proxy, error, sizeof error), -1);
    if (!strstr(error, expected))
        fail_msg("expected '%s' in: %s", expected, error);
    assert_int_equal(reg_count(methods), 0);
    assert_no_children();
    reg_free(methods);
}

static void test_init_fails(void **state)
{
    (void)state;
    refused("RPCD_FIXTURE_INIT_FAIL", "init failed");
}

static void test_not_a_plugin(void **state)
{
    (void)state;
    refused("RPCD_FIXTURE_NO_ENTRY", "not an rpcd plugin");
}

static void test_host_program_is_not_rpcd(void **state)
{
    (void)state;
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    iso_set_host_program("/bin/true");
    iso_proxy *proxy = NULL;
    char error[512] = "";
    assert_int_equal(start("RPCD_FIXTURE_ISOLATED_A", methods, &proxy, error, sizeof error), -1);
    assert_non_null(strstr(error, "its host ended before the plugin's init returned"));
    assert_no_children();
    reg_free(methods);
}

static int dummy(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)call, (void)params, (void)params_length, (void)user_data;
    return RPCD_OK;
}

/* A name another plugin has: refused, the host ended, none of its proxies left. */
static void test_duplicate_name(void **state)
{
    (void)state;
    setup_program();
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    rpcd_method taken = rpcd_method_new("a.info", dummy);
    static int other;
    assert_int_equal(reg_add(methods, &taken, &other, "other", NULL), 0);
    iso_proxy *proxy = NULL;
    char error[512] = "";
    assert_int_equal(start("RPCD_FIXTURE_ISOLATED_A", methods, &proxy, error, sizeof error), -1);
    assert_non_null(strstr(error, "'a.info' is registered by both [plugin other]"));
    assert_int_equal(reg_count(methods), 1);
    assert_no_children();
    reg_free(methods);
}

static void test_describe_status(void **state)
{
    (void)state;
    char text[96];
    pid_t child = fork();
    if (child == 0)
        _exit(3);
    iso_describe_status(iso_reap(child, 5000), text, sizeof text);
    assert_string_equal(text, "exited with status 3");
    /* One that never ends is killed once the wait is over. */
    child = fork();
    if (child == 0)
        for (;;)
            pause();
    iso_describe_status(iso_reap(child, 10), text, sizeof text);
    assert_string_equal(text, "killed by signal 9 (SIGKILL)");
    assert_no_children();
}

/* ---- MCP events from an isolated plugin ------------------------------------------------- */

/* What reached the sink rpcd's server attaches. */
static struct {
    pthread_mutex_t lock;
    char uris[8][128];
    size_t uri_count;
    struct {
        char logger[32];
        int level;
        char text[128];
    } lines[16];
    size_t line_count;
} seen = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* A count of seen, read under its lock: the proxy's reader thread writes them. */
static size_t seen_count(const size_t *count)
{
    pthread_mutex_lock(&seen.lock);
    size_t value = *count;
    pthread_mutex_unlock(&seen.lock);
    return value;
}

static void seen_updated(void *context, const char *uri, size_t length)
{
    (void)context;
    pthread_mutex_lock(&seen.lock);
    if (seen.uri_count < 8)
        snprintf(seen.uris[seen.uri_count++], sizeof seen.uris[0], "%.*s", (int)length, uri);
    pthread_mutex_unlock(&seen.lock);
}

static void seen_line(void *context, const char *logger, int level, const char *text, size_t length)
{
    (void)context;
    pthread_mutex_lock(&seen.lock);
    if (seen.line_count < 16) {
        snprintf(seen.lines[seen.line_count].logger, sizeof seen.lines[0].logger, "%s", logger);
        seen.lines[seen.line_count].level = level;
        snprintf(seen.lines[seen.line_count].text, sizeof seen.lines[0].text, "%.*s", (int)length,
                 text);
        seen.line_count++;
    }
    pthread_mutex_unlock(&seen.lock);
}

static const mcp_event_sink test_sink = {NULL, seen_updated, seen_line};

/* The events plugin isolated, its proxies in a call fixture, the sink attached and empty. */
static iso_proxy *start_events(fixture *f)
{
    setup_program();
    seen.uri_count = seen.line_count = 0;
    mcp_events_attach(&test_sink);
    fixture_open(f);
    iso_proxy *proxy = NULL;
    char error[512] = "";
    if (start("RPCD_FIXTURE_EVENTS", f->methods, &proxy, error, sizeof error) != 0)
        fail_msg("start failed: %s", error);
    fixture_start(f, (call_settings){.limits.workers = 2, .limits.max_in_flight = 64});
    return proxy;
}

static void stop_events(fixture *f, iso_proxy *proxy)
{
    iso_proxy_stop(proxy);
    fixture_close(f);
    mcp_events_attach(NULL);
    mcp_events_set_client_log_level(-1);
    assert_no_children();
}

/* Calls name (numeric id) and waits for its response, which must contain expected. */
static void call_and_wait(fixture *f, const char *name, int id, const char *params,
                          const char *expected)
{
    char id_text[16], response[64];
    snprintf(id_text, sizeof id_text, "%d", id);
    snprintf(response, sizeof response, "\"id\":%d,", id);
    assert_int_equal(start_call(f, name, id_text, params, NULL), 0);
    for (int waited = 0; !strstr(written(f), response); waited += 2) {
        if (waited > test_time_ms(10000))
            fail_msg("no response to %d in: %s", id, written(f));
        nanosleep(&(struct timespec){0, 2 * 1000 * 1000}, NULL);
    }
    const char *at = strstr(written(f), response);
    const char *end = strchr(at, '\n');
    if (!strstr(at, expected) || (end && strstr(at, expected) > end))
        fail_msg("expected %s in the response to %d: %s", expected, id, at);
}

/* resource_updated in the host reaches rpcd's sink; a URI that is not UTF-8 is refused there. */
static void test_resource_updated_reaches_the_sink(void **state)
{
    (void)state;
    fixture f;
    iso_proxy *proxy = start_events(&f);
    call_and_wait(&f, "ev.updated", 1, "[\"notes://today\"]", "{\"status\":0}");
    char refused[32];
    snprintf(refused, sizeof refused, "{\"status\":%d}", RPCD_ERR_INVALID_ARGUMENT);
    call_and_wait(&f, "ev.updated_bad", 2, NULL, refused);
    /* A well-formed frame the plugin wrote itself is an event like any other. */
    call_and_wait(&f, "ev.forge", 3, "[\"updated\"]", "\"result\":true");
    stop_events(&f, proxy);
    assert_int_equal(seen_count(&seen.uri_count), 2);
    assert_string_equal(seen.uris[0], "notes://today");
    assert_string_equal(seen.uris[1], "notes://forged");
}

static void expect_line(size_t index, int level, const char *text)
{
    assert_true(index < seen_count(&seen.line_count));
    pthread_mutex_lock(&seen.lock);
    char logger[32], line[128];
    memcpy(logger, seen.lines[index].logger, sizeof logger);
    memcpy(line, seen.lines[index].text, sizeof line);
    int got_level = seen.lines[index].level;
    pthread_mutex_unlock(&seen.lock);
    assert_string_equal(logger, "fixture"); /* the section's name */
    assert_int_equal(got_level, level);
    assert_string_equal(line, text);
}

/*
 * A host hears the client's level as it changes (LEVEL) and sends only the lines asked for:
 * none before, those at the level or above after, none once the client asks for none again.
 */
static void test_log_lines_follow_the_level(void **state)
{
    (void)state;
    mcp_events_set_client_log_level(-1);
    fixture f;
    iso_proxy *proxy = start_events(&f);
    call_and_wait(&f, "ev.log", 1, NULL, "true");
    assert_int_equal(seen_count(&seen.line_count), 0);
    mcp_events_set_client_log_level(RPCD_LOG_INFO);
    call_and_wait(&f, "ev.log", 2, NULL, "true");
    assert_int_equal(seen_count(&seen.line_count), 2);
    expect_line(0, RPCD_LOG_WARNING, "events log 1");
    /* Not UTF-8: each byte outside ASCII made '?' in the host, as rpcd's sink does in process. */
    expect_line(1, RPCD_LOG_INFO, "events caf?? ? end");
    mcp_events_set_client_log_level(-1);
    call_and_wait(&f, "ev.log", 3, NULL, "true");
    assert_int_equal(seen_count(&seen.line_count), 2);
    stop_events(&f, proxy);
}

/* A host started once the client asked has the level from its start: its init's line too. */
static void test_a_later_host_starts_with_the_level(void **state)
{
    (void)state;
    mcp_events_set_client_log_level(RPCD_LOG_WARNING);
    fixture f;
    iso_proxy *proxy = start_events(&f);
    assert_int_equal(seen_count(&seen.line_count), 1);
    expect_line(0, RPCD_LOG_WARNING, "events init");
    call_and_wait(&f, "ev.log", 1, NULL, "true");
    assert_int_equal(seen_count(&seen.line_count), 2);
    expect_line(1, RPCD_LOG_WARNING, "events log 1");
    stop_events(&f, proxy);
}

/* The bytes waiting on fd, read without blocking (0 when none). */
static size_t waiting_bytes(int fd)
{
    char bytes[4096];
    ssize_t got = recv(fd, bytes, sizeof bytes, MSG_DONTWAIT);
    return got > 0 ? (size_t)got : 0;
}

/*
 * A call alone in flight goes out from the calling thread at once, no writer thread needed; a
 * second one, with the first still in the host, waits in the queue for the writer to batch it.
 */
static void test_lone_call_sent_by_its_caller(void **state)
{
    (void)state;
    iso_proxy proxy;
    memset(&proxy, 0, sizeof proxy);
    pxy_calls_init(&proxy);
    int ends[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends), 0);
    proxy.fd = ends[0];
    proxy.state = PXY_UP;
    pxy_method method = {&proxy, 0, (char *)"m", false};
    const pxy_meta none = {0, NULL, 0, {0}};
    uint64_t first, second;
    bool wait_here = true;
    char reason[64];
    assert_int_equal(pxy_queue_call(&proxy, &method, NULL, "[1]", 3, &none, true, &wait_here,
                                    &first, reason, sizeof reason),
                     0);
    assert_false(wait_here); /* not a quick method: its answer comes to the reader thread */
    assert_true(waiting_bytes(ends[1]) > 0);
    assert_int_equal(proxy.pending.length, 0);
    assert_int_equal(pxy_queue_call(&proxy, &method, NULL, "[2]", 3, &none, true, &wait_here,
                                    &second, reason, sizeof reason),
                     0);
    assert_int_equal(waiting_bytes(ends[1]), 0);
    assert_true(proxy.pending.length > 0);
    close(ends[0]);
    close(ends[1]);
    pxy_calls_fini(&proxy);
}

/* Starts count calls of "keep" in f (ids 0, 1, ...) and waits until each is kept (kept[i]). */
static void keep_calls(fixture *f, int count)
{
    for (int i = 0; i < count; i++) {
        char id[16];
        snprintf(id, sizeof id, "%d", i);
        assert_int_equal(start_call(f, "keep", id, "[1]", NULL), 0);
    }
    for (int waited = 0; atomic_load(&kept_count) < (size_t)count; waited++) {
        assert_true(waited < test_time_ms(5000));
        nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
    }
}

/*
 * A proxy whose host is up, rpcd's call functions applied to what it reads: it sends on ends[0]
 * and reads lane's answers on lane[0] (ends and lane made here), its other lane closed.
 */
static void proxy_on_pipes(iso_proxy *proxy, int lane_index, int ends[2], int lane[2])
{
    memset(proxy, 0, sizeof *proxy);
    pxy_calls_init(proxy);
    call_fill_host_api(&proxy->api);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends), 0);
    assert_int_equal(pipe2(lane, O_CLOEXEC), 0);
    proxy->fd = ends[0];
    proxy->lanes[lane_index].fd = lane[0];
    proxy->lanes[1 - lane_index].fd = -1;
    proxy->state = PXY_UP;
}

/* Undoes proxy_on_pipes (lane[1] closed already). */
static void proxy_off_pipes(iso_proxy *proxy, int ends[2], int lane[2])
{
    close(lane[0]);
    close(ends[0]);
    close(ends[1]);
    pxy_calls_fini(proxy);
}

/* Appends RESULT (result) and END (status 0) for the call id to frames. */
static void put_answer(buffer *frames, uint64_t id, const char *result)
{
    size_t start;
    int failed = chan_begin(frames, CHAN_RESULT, &start);
    failed |= chan_put_u64(frames, id);
    failed |= chan_put_str(frames, result, strlen(result));
    assert_int_equal(chan_end(frames, start, failed != 0), 0);
    failed = chan_begin(frames, CHAN_END, &start);
    failed |= chan_put_u64(frames, id);
    failed |= chan_put_u32(frames, 0);
    assert_int_equal(chan_end(frames, start, failed != 0), 0);
}

/*
 * The answers the reader thread gets in one read reach the client in one write, not one each,
 * while rpcd's reader waits for input (as it does behind a pipelined client).
 */
static void test_answers_of_one_read_in_one_write(void **state)
{
    (void)state;
    enum { CALLS = 20 };
    fixture f;
    fixture_with(&f, "keep", handle_keep, 0,
                 (call_settings){.limits.workers = 1, .limits.max_in_flight = 64});
    keep_calls(&f, CALLS);
    iso_proxy proxy;
    int ends[2], lane[2];
    proxy_on_pipes(&proxy, CHAN_LANE_MAIN, ends, lane);
    close(proxy.wake_fd);
    proxy.wake_fd = proxy.pidfd = -1;
    pxy_method method = {&proxy, 0, (char *)"keep", false};
    const pxy_meta none = {0, NULL, 0, {0}};
    buffer frames = BUFFER_INIT;
    for (int i = 0; i < CALLS; i++) {
        uint64_t id;
        bool wait_here;
        char reason[64];
        assert_int_equal(pxy_queue_call(&proxy, &method, kept[i], "[1]", 3, &none, false,
                                        &wait_here, &id, reason, sizeof reason),
                         0);
        put_answer(&frames, id, "1");
    }
    assert_int_equal(write(lane[1], frames.data, frames.length), (ssize_t)frames.length);
    close(lane[1]);
    out_set_reader_idle(f.out, true);
    pthread_mutex_lock(&f.written.lock);
    size_t before = f.written.writes;
    pthread_mutex_unlock(&f.written.lock);
    proxy.stopping = true; /* the end of the lane is then the end rpcd asked for */
    char why[128] = "";
    assert_int_equal(pxy_read_frames(&proxy, why, sizeof why), 0);
    pthread_mutex_lock(&f.written.lock);
    size_t writes = f.written.writes - before, lines = f.written.lines;
    pthread_mutex_unlock(&f.written.lock);
    assert_int_equal(lines, CALLS);
    assert_int_equal(writes, 1);
    buf_free(&frames);
    proxy_off_pipes(&proxy, ends, lane);
    fixture_close(&f);
}

/*
 * A quick method's call alone in flight, whose caller may wait, goes on the fast lane: its caller
 * reads the answer. Not when the caller may not wait, nor with another call in flight, nor
 * while the lane has a call, nor on a thread the wake-up signal does not interrupt, nor before
 * the reader thread watches the lane (the call asks it to).
 */
static void test_fast_lane_only_for_a_lone_quick_call(void **state)
{
    (void)state;
    iso_proxy proxy;
    memset(&proxy, 0, sizeof proxy);
    pxy_calls_init(&proxy);
    int ends[2], lane[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, lane), 0);
    proxy.fd = ends[0];
    proxy.lanes[CHAN_LANE_FAST].fd = lane[0];
    proxy.state = PXY_UP;
    pxy_method quick = {&proxy, 0, (char *)"q", true};
    const pxy_meta none = {0, NULL, 0, {0}};
    uint64_t first, second;
    bool wait_here = true;
    char reason[64];
    assert_int_equal(sig_wake_install(), 0);
    assert_int_equal(pxy_queue_call(&proxy, &quick, NULL, "[0]", 3, &none, true, &wait_here, &first,
                                    reason, sizeof reason),
                     0);
    assert_false(wait_here); /* the wake-up signal does not reach this thread yet */
    pxy_end_entry(&proxy, first);
    sig_wake_unblock_here();
    assert_int_equal(pxy_queue_call(&proxy, &quick, NULL, "[0]", 3, &none, true, &wait_here, &first,
                                    reason, sizeof reason),
                     0);
    assert_false(wait_here); /* the reader thread does not watch the lane yet */
    assert_true(proxy.watch_wanted);
    pxy_end_entry(&proxy, first);
    proxy.watching = true;
    assert_int_equal(pxy_queue_call(&proxy, &quick, NULL, "[1]", 3, &none, false, &wait_here,
                                    &first, reason, sizeof reason),
                     0);
    assert_false(wait_here); /* its caller may not wait: more input behind it */
    assert_int_equal(pxy_queue_call(&proxy, &quick, NULL, "[1]", 3, &none, true, &wait_here,
                                    &second, reason, sizeof reason),
                     0);
    assert_false(wait_here); /* the first is in flight still */
    pxy_end_entry(&proxy, first);
    pxy_end_entry(&proxy, second);
    assert_int_equal(pxy_queue_call(&proxy, &quick, NULL, "[2]", 3, &none, true, &wait_here, &first,
                                    reason, sizeof reason),
                     0);
    assert_true(wait_here);
    assert_int_equal(proxy.fast_state, PXY_FAST_CALLER);
    assert_true(proxy.fast_id == first);
    assert_int_equal(pxy_queue_call(&proxy, &quick, NULL, "[3]", 3, &none, true, &wait_here,
                                    &second, reason, sizeof reason),
                     0);
    assert_false(wait_here); /* another call in flight */
    pxy_end_entry(&proxy, second);
    pxy_leave_fast(&proxy, false); /* left to the reader thread: the lane is not free yet */
    assert_int_equal(proxy.fast_state, PXY_FAST_READER);
    pxy_end_entry(&proxy, first); /* alone again, but for the lane */
    assert_int_equal(pxy_queue_call(&proxy, &quick, NULL, "[4]", 3, &none, true, &wait_here,
                                    &second, reason, sizeof reason),
                     0);
    assert_false(wait_here);
    close(ends[0]);
    close(ends[1]);
    close(lane[0]);
    close(lane[1]);
    pxy_calls_fini(&proxy);
}

/*
 * The caller of a call on the fast lane reads its answer there, and once the call has ended
 * leaves the lane free, not to the reader thread: the next lone quick call takes it again.
 */
static void test_fast_caller_frees_the_lane_at_its_end(void **state)
{
    (void)state;
    fixture f;
    fixture_with(&f, "keep", handle_keep, 0,
                 (call_settings){.limits.workers = 1, .limits.max_in_flight = 64});
    keep_calls(&f, 1);
    iso_proxy proxy;
    int ends[2], lane[2];
    proxy_on_pipes(&proxy, CHAN_LANE_FAST, ends, lane);
    proxy.watching = true;
    assert_int_equal(sig_wake_install(), 0);
    sig_wake_unblock_here();
    pxy_method quick = {&proxy, 0, (char *)"q", true};
    const pxy_meta none = {0, NULL, 0, {0}};
    uint64_t id;
    bool wait_here = false;
    char reason[64];
    assert_int_equal(pxy_queue_call(&proxy, &quick, kept[0], "[1]", 3, &none, true, &wait_here, &id,
                                    reason, sizeof reason),
                     0);
    assert_true(wait_here);
    buffer frames = BUFFER_INIT;
    put_answer(&frames, id, "\"fast\"");
    assert_int_equal(write(lane[1], frames.data, frames.length), (ssize_t)frames.length);
    /* Closed, so that a caller that read on past its call's end would find the lane's end. */
    close(lane[1]);
    pxy_wait_fast(&proxy, id);
    assert_int_equal(proxy.fast_state, PXY_FAST_IDLE);
    assert_non_null(strstr(written(&f), "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":\"fast\"}"));
    buf_free(&frames);
    proxy_off_pipes(&proxy, ends, lane);
    fixture_close(&f);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_methods_become_proxies),
        cmocka_unit_test(test_mcp_roles_become_proxies),
        cmocka_unit_test(test_init_fails),
        cmocka_unit_test(test_not_a_plugin),
        cmocka_unit_test(test_host_program_is_not_rpcd),
        cmocka_unit_test(test_duplicate_name),
        cmocka_unit_test(test_describe_status),
        cmocka_unit_test(test_resource_updated_reaches_the_sink),
        cmocka_unit_test(test_log_lines_follow_the_level),
        cmocka_unit_test(test_a_later_host_starts_with_the_level),
        cmocka_unit_test(test_lone_call_sent_by_its_caller),
        cmocka_unit_test(test_answers_of_one_read_in_one_write),
        cmocka_unit_test(test_fast_lane_only_for_a_lone_quick_call),
        cmocka_unit_test(test_fast_caller_frees_the_lane_at_its_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
