/* SPDX-License-Identifier: MIT */
/*
 * A plugin taking the process down: a fatal signal or an exit() while an output is watched
 * leaves one log line naming the call the thread ran (plugin, method, request id, cut when long)
 * and the finished responses written out, then the same death. Each case runs in a forked
 * child whose output and log are pipes; the parent reads them and how the child ended.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/crash_report.h"
#include "base/running_call.h"
#include "base/log.h"
#include "base/output.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum death {
    DIE_SIGILL,
    DIE_SIGSEGV,
    DIE_EXIT,
    DIE_EXIT_UNWATCHED,
    DIE_LONG_ID,
    DIE_NESTED,
    DIE_LONG_UTF8_ID,
    DIE_CHAINED,
};

static int out_fd;
/* Kept reachable: a child that exits leaves it to the leak checker. */
static output *child_out;

static char long_id[301];
/* A handler installed before rpcd's (a sanitizer's, a language runtime's): it ends with 77. */
static void earlier_handler(int number)
{
    (void)number;
    _exit(77);
}
/* "é" 150 times, quoted: the cut at 128 bytes falls inside a character. */
static char long_utf8_id[1 + 300 + 1 + 1];

/* The child: a finished response waiting in the output, a call running, then the death. */
static void child(enum death how, int log_fd)
{
    log_set_fd(log_fd);
    /* cmocka's handlers, inherited, would take the signal back into the test runner. */
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        signal(fatal[i], SIG_DFL);
    if (how == DIE_CHAINED)
        signal(SIGILL, earlier_handler);
    if (out_new(out_write_fd, &out_fd, &child_out) != 0)
        _exit(120);
    output *out = child_out;
    struct iovec line = {"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":true}", 38};
    if (out_write_line(out, &line, 1) != 0)
        _exit(121);
    if (crash_report_install() != 0)
        _exit(122);
    crash_report_watch(how == DIE_EXIT_UNWATCHED ? NULL : out);
    running_call request = {"myplugin", "mymethod", "\"req-7\"", 7, NULL, NULL};
    running_call notification = {"myplugin", "notified", NULL, 0, NULL, NULL};
    running_call outer = {"outer", "first", "1", 1, NULL, NULL};
    running_call inner = {"inner", "second", "2", 1, NULL, NULL};
    running_call long_request = {"myplugin", "mymethod", long_id, sizeof long_id - 1, NULL, NULL};
    running_call long_utf8_request = {"myplugin", "mymethod", long_utf8_id, sizeof long_utf8_id - 1,
                                      NULL,       NULL};
    switch (how) {
    case DIE_SIGILL:
        running_call_enter(&request);
        raise(SIGILL);
        break;
    case DIE_SIGSEGV:
        /* No call entered: the signal comes on a thread running none. */
        raise(SIGSEGV);
        break;
    case DIE_EXIT:
    case DIE_EXIT_UNWATCHED: running_call_enter(&notification); exit(3);
    case DIE_LONG_ID:
        running_call_enter(&long_request);
        raise(SIGABRT);
        break;
    case DIE_CHAINED:
        running_call_enter(&request);
        raise(SIGILL);
        break;
    case DIE_LONG_UTF8_ID:
        running_call_enter(&long_utf8_request);
        raise(SIGABRT);
        break;
    case DIE_NESTED:
        running_call_enter(&outer);
        running_call_enter(&inner);
        running_call_leave(&inner);
        raise(SIGABRT);
        break;
    }
    _exit(123);
}

typedef struct ending {
    int wait_status;
    char out[1024];
    char log[4096];
} ending;

static void read_all(int fd, char *text, size_t size)
{
    size_t used = 0;
    ssize_t n;
    while (used + 1 < size && (n = read(fd, text + used, size - 1 - used)) > 0)
        used += (size_t)n;
    text[used] = '\0';
    close(fd);
}

static ending run_child(enum death how)
{
    int out_pipe[2], log_pipe[2];
    assert_int_equal(pipe(out_pipe), 0);
    assert_int_equal(pipe(log_pipe), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(out_pipe[0]);
        close(log_pipe[0]);
        out_fd = out_pipe[1];
        child(how, log_pipe[1]);
    }
    close(out_pipe[1]);
    close(log_pipe[1]);
    ending end;
    /* The output first: the child writes it after its log line, both small. */
    read_all(out_pipe[0], end.out, sizeof end.out);
    read_all(log_pipe[0], end.log, sizeof end.log);
    assert_int_equal(waitpid(pid, &end.wait_status, 0), pid);
    return end;
}

static const char finished[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":true}\n";

static void expect_logged(const ending *end, const char *line)
{
    if (!strstr(end->log, line))
        print_error("not in the log: %s\n--- log:\n%s\n", line, end->log);
    assert_non_null(strstr(end->log, line));
}

static void test_fatal_signal_names_the_call_and_writes_the_responses(void **state)
{
    (void)state;
    ending end = run_child(DIE_SIGILL);
    expect_logged(&end, "rpcd: error: signal 4 (SIGILL) in plugin myplugin, method mymethod, "
                        "request id \"req-7\": writing out the finished responses and ending\n");
    assert_string_equal(end.out, finished);
    assert_true(WIFSIGNALED(end.wait_status));
    assert_int_equal(WTERMSIG(end.wait_status), SIGILL);
}

static void test_fault_on_a_thread_running_no_call(void **state)
{
    (void)state;
    ending end = run_child(DIE_SIGSEGV);
    expect_logged(&end, "rpcd: error: signal 11 (SIGSEGV) on a thread running no call: writing "
                        "out the finished responses and ending\n");
    assert_string_equal(end.out, finished);
    assert_true(WIFSIGNALED(end.wait_status));
    assert_int_equal(WTERMSIG(end.wait_status), SIGSEGV);
}

static void test_exit_in_a_plugin_keeps_its_status(void **state)
{
    (void)state;
    ending end = run_child(DIE_EXIT);
    expect_logged(&end, "rpcd: error: exit(3) called in plugin myplugin, method notified (a "
                        "notification): writing out the finished responses and ending\n");
    assert_string_equal(end.out, finished);
    assert_true(WIFEXITED(end.wait_status));
    assert_int_equal(WEXITSTATUS(end.wait_status), 3);
}

static void test_exit_with_nothing_watched_is_not_reported(void **state)
{
    (void)state;
    ending end = run_child(DIE_EXIT_UNWATCHED);
    assert_null(strstr(end.log, "exit(3)"));
    assert_true(WIFEXITED(end.wait_status));
    assert_int_equal(WEXITSTATUS(end.wait_status), 3);
}

static void test_long_request_id_cut(void **state)
{
    (void)state;
    memset(long_id, 'a', sizeof long_id - 1);
    long_id[0] = '"';
    long_id[sizeof long_id - 2] = '"';
    ending end = run_child(DIE_LONG_ID);
    char expected[512];
    snprintf(expected, sizeof expected,
             "signal 6 (SIGABRT) in plugin myplugin, method mymethod, request id %.128s...: "
             "writing out",
             long_id);
    expect_logged(&end, expected);
    assert_string_equal(end.out, finished);
    assert_true(WIFSIGNALED(end.wait_status));
    assert_int_equal(WTERMSIG(end.wait_status), SIGABRT);
}

/* A long id is cut at a character's start, never inside one: the log line stays UTF-8. */
static void test_long_request_id_cut_at_a_character(void **state)
{
    (void)state;
    long_utf8_id[0] = '"';
    for (int i = 0; i < 150; i++)
        memcpy(long_utf8_id + 1 + 2 * i, "\xC3\xA9", 2);
    long_utf8_id[301] = '"';
    ending end = run_child(DIE_LONG_UTF8_ID);
    char expected[512];
    /* 128 bytes would end in the first byte of an é: 127 are kept, the quote and 63 of them. */
    snprintf(expected, sizeof expected, "request id %.127s...: writing out", long_utf8_id);
    expect_logged(&end, expected);
}

#if defined(__SANITIZE_THREAD__)
#define UNDER_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_THREAD_SANITIZER 1
#endif
#endif

/*
 * The handler that was there before rpcd's gets the signal after the report. Not under
 * ThreadSanitizer, which holds a signal raised inside a handler back until that handler
 * returns: rpcd's then ends the process by the default action first.
 */
static void test_previous_handler_chained(void **state)
{
    (void)state;
#ifdef UNDER_THREAD_SANITIZER
    skip();
#endif
    ending end = run_child(DIE_CHAINED);
    expect_logged(&end, "signal 4 (SIGILL) in plugin myplugin, method mymethod");
    assert_string_equal(end.out, finished);
    assert_true(WIFEXITED(end.wait_status));
    assert_int_equal(WEXITSTATUS(end.wait_status), 77);
}

static void test_call_left_names_the_one_around_it(void **state)
{
    (void)state;
    ending end = run_child(DIE_NESTED);
    expect_logged(&end, "signal 6 (SIGABRT) in plugin outer, method first, request id 1: ");
    assert_null(strstr(end.log, "inner"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fatal_signal_names_the_call_and_writes_the_responses),
        cmocka_unit_test(test_fault_on_a_thread_running_no_call),
        cmocka_unit_test(test_exit_in_a_plugin_keeps_its_status),
        cmocka_unit_test(test_exit_with_nothing_watched_is_not_reported),
        cmocka_unit_test(test_long_request_id_cut),
        cmocka_unit_test(test_long_request_id_cut_at_a_character),
        cmocka_unit_test(test_previous_handler_chained),
        cmocka_unit_test(test_call_left_names_the_one_around_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
