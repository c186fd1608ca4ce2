/* SPDX-License-Identifier: MIT */
/*
 * host_namespace: a child of the test plays the host. It enters a namespace, and the test sees
 * from outside what rpcd would: the host's own view (pid 2, parent 1), its end reported as it
 * ended (an exit status, a signal), its orphans ended with it, the namespace ended with rpcd.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "isolation/host_namespace.h"

#include "test_time.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

/* What the host (pid 2, when it entered) sends back before it does what the test asks. */
typedef struct seen {
    int entered;
    pid_t pid, parent, outer; /* getpid(), getppid() and the id outside */
    pid_t orphan;             /* the id outside of a process it started and left, or 0 */
    char why[256];
} seen;

typedef enum ending { END_EXIT_7, END_SEGV, END_LEAVE_ORPHAN, END_WAIT_FOREVER } ending;

/* This process's id outside its namespace: /proc/self names it. */
static pid_t outer_self(void)
{
    char link[32];
    ssize_t length = readlink("/proc/self", link, sizeof link - 1);
    if (length <= 0)
        return -1;
    link[length] = '\0';
    return (pid_t)strtol(link, NULL, 10);
}

/*
 * Starts the host: a child that enters a namespace (as the test's child, the test is its
 * "rpcd"), reports on report and ends as asked. Returns its pid.
 */
static pid_t start_host(ending how, int report)
{
    pid_t rpcd = getpid();
    pid_t child = fork();
    assert_true(child >= 0);
    if (child > 0)
        return child;
    seen view;
    memset(&view, 0, sizeof view);
    bool entered = false;
    if (host_ns_enter(rpcd, true, &entered, view.why, sizeof view.why) != 0)
        _exit(99);
    view.entered = entered;
    if (!entered) {
        /* Nothing to show: said, and gone at once (the test skips). */
        (void)!write(report, &view, sizeof view);
        _exit(0);
    }
    view.pid = getpid();
    view.parent = getppid();
    view.outer = outer_self();
    if (how == END_LEAVE_ORPHAN) {
        int ids[2];
        if (pipe(ids) != 0)
            _exit(98);
        pid_t middle = fork();
        if (middle == 0) {
            setsid();
            if (fork() == 0) {
                pid_t self = outer_self();
                (void)!write(ids[1], &self, sizeof self);
                for (;;)
                    pause();
            }
            _exit(0);
        }
        waitpid(middle, NULL, 0);
        (void)!read(ids[0], &view.orphan, sizeof view.orphan);
    }
    (void)!write(report, &view, sizeof view);
    switch (how) {
    case END_EXIT_7:
    case END_LEAVE_ORPHAN: _exit(7);
    case END_SEGV:
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
        _exit(98);
    case END_WAIT_FOREVER:
        for (;;)
            pause();
    }
    _exit(98);
}

/* Reads the host's report; skips the test where the kernel gave it no namespace. */
static seen read_report(int fd)
{
    seen view;
    assert_int_equal(read(fd, &view, sizeof view), (ssize_t)sizeof view);
    if (!view.entered) {
        print_message("no PID namespace here: %s\n", view.why);
        skip();
    }
    return view;
}

static int wait_status(pid_t pid)
{
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

/* Whether pid has ended (gone, or a zombie), polled within a bound. */
static bool ends(pid_t pid)
{
    for (int i = 0; i < test_time_ms(10000) / 10; i++) {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
        FILE *file = fopen(path, "re");
        if (!file)
            return true;
        char text[512] = "";
        size_t length = fread(text, 1, sizeof text - 1, file);
        fclose(file);
        text[length] = '\0';
        const char *state = strrchr(text, ')');
        if (!state || state[2] == 'Z' || state[2] == 'X')
            return true;
        struct timespec nap = {0, 10 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    return false;
}

/* The host sees itself as pid 2 (or so), child of pid 1; the process started ends with its
 * status. */
static void test_host_is_pid_two_and_its_status_comes_out(void **state)
{
    (void)state;
    int report[2];
    assert_int_equal(pipe(report), 0);
    pid_t host = start_host(END_EXIT_7, report[1]);
    close(report[1]);
    seen view = read_report(report[0]);
    close(report[0]);
    /* Pid 2 but where the sanitizer's runtime started a thread in pid 1 first (ThreadSanitizer's
     * background thread takes an id of the namespace): a number of its own, anyway. */
    assert_true(view.pid >= 2 && view.pid < 16);
    assert_int_not_equal(view.pid, view.outer);
    assert_int_equal(view.parent, 1);
    int status = wait_status(host);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 7);
}

/* A crash comes out as the same signal: rpcd's report of it stays true. */
static void test_crash_comes_out_as_its_signal(void **state)
{
    (void)state;
    int report[2];
    assert_int_equal(pipe(report), 0);
    pid_t host = start_host(END_SEGV, report[1]);
    close(report[1]);
    read_report(report[0]);
    close(report[0]);
    int status = wait_status(host);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGSEGV);
}

/* A daemon the host left (double fork, setsid) ends when the host does. */
static void test_orphans_end_with_the_host(void **state)
{
    (void)state;
    int report[2];
    assert_int_equal(pipe(report), 0);
    pid_t host = start_host(END_LEAVE_ORPHAN, report[1]);
    close(report[1]);
    seen view = read_report(report[0]);
    close(report[0]);
    assert_true(view.orphan > 0);
    int status = wait_status(host);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 7);
    if (!ends(view.orphan)) {
        kill(view.orphan, SIGKILL);
        fail_msg("the orphan outlived its host");
    }
}

/* The process started killed (rpcd's SIGKILL after a grace period): the host ends with it. */
static void test_host_ends_with_the_process_started(void **state)
{
    (void)state;
    int report[2];
    assert_int_equal(pipe(report), 0);
    pid_t host = start_host(END_WAIT_FOREVER, report[1]);
    close(report[1]);
    read_report(report[0]);
    assert_int_equal(kill(host, SIGKILL), 0);
    int status = wait_status(host);
    assert_true(WIFSIGNALED(status));
    /* Its end of the report pipe closes once the host (pid 2) is gone. */
    struct pollfd end = {report[0], POLLIN, 0};
    char byte;
    assert_int_equal(poll(&end, 1, test_time_ms(10000)), 1);
    assert_int_equal(read(report[0], &byte, 1), 0);
    close(report[0]);
}

/* "rpcd" gone (the parent of the process started): the namespace ends. */
static void test_namespace_ends_with_rpcd(void **state)
{
    (void)state;
    int report[2];
    assert_int_equal(pipe(report), 0);
    /* A stand-in for rpcd, which starts the host and is then killed. */
    pid_t rpcd = fork();
    assert_true(rpcd >= 0);
    if (rpcd == 0) {
        close(report[0]);
        start_host(END_WAIT_FOREVER, report[1]);
        for (;;)
            pause();
    }
    close(report[1]);
    seen view;
    assert_int_equal(read(report[0], &view, sizeof view), (ssize_t)sizeof view);
    assert_int_equal(kill(rpcd, SIGKILL), 0);
    wait_status(rpcd);
    if (!view.entered) {
        close(report[0]);
        print_message("no PID namespace here: %s\n", view.why);
        skip();
    }
    struct pollfd end = {report[0], POLLIN, 0};
    char byte;
    assert_int_equal(poll(&end, 1, test_time_ms(10000)), 1);
    assert_int_equal(read(report[0], &byte, 1), 0);
    close(report[0]);
}

/* The probe says what entering finds. */
static void test_probe_agrees_with_entering(void **state)
{
    (void)state;
    bool available = false;
    char why[256] = "";
    assert_int_equal(host_ns_probe(true, &available, why, sizeof why), 0);
    int report[2];
    assert_int_equal(pipe(report), 0);
    pid_t host = start_host(END_EXIT_7, report[1]);
    close(report[1]);
    seen view;
    assert_int_equal(read(report[0], &view, sizeof view), (ssize_t)sizeof view);
    close(report[0]);
    wait_status(host);
    assert_int_equal(available, view.entered);
    if (!available)
        assert_string_equal(why, view.why);
    /* Asked again, the answer is the one kept. */
    bool again = !available;
    assert_int_equal(host_ns_probe(true, &again, why, sizeof why), 0);
    assert_int_equal(again, available);
    /* Root needs no user namespace, where the kernel gives namespaces at all. */
    if (geteuid() == 0 && available) {
        assert_int_equal(host_ns_probe(false, &again, why, sizeof why), 0);
        assert_true(again);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_is_pid_two_and_its_status_comes_out),
        cmocka_unit_test(test_crash_comes_out_as_its_signal),
        cmocka_unit_test(test_orphans_end_with_the_host),
        cmocka_unit_test(test_host_ends_with_the_process_started),
        cmocka_unit_test(test_namespace_ends_with_rpcd),
        cmocka_unit_test(test_probe_agrees_with_entering),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
