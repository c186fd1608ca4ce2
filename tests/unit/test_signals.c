/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for signals.c: the backstop that ends a process on its way out, whatever it still
 * waits for.
 */
#include "base/signals.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

/*
 * A process that blocks SIGALRM, ignores it, then arms the backstop and waits for ever in a
 * write no one reads (as a crash report to a client that reads nothing does) dies of SIGALRM
 * when the backstop runs out.
 */
static void test_backstop_ends_a_process_held_in_a_write(void **state)
{
    (void)state;
    int pipe_ends[2];
    assert_int_equal(pipe(pipe_ends), 0);
    struct timespec started;
    clock_gettime(CLOCK_MONOTONIC, &started);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        close(pipe_ends[0]);
        signal(SIGALRM, SIG_IGN);
        sigset_t alarm_only;
        sigemptyset(&alarm_only);
        sigaddset(&alarm_only, SIGALRM);
        sigprocmask(SIG_BLOCK, &alarm_only, NULL);
        sig_arm_backstop(1);
        static char block[65536];
        for (;;)
            if (write(pipe_ends[1], block, sizeof block) < 0)
                _exit(2);
    }
    close(pipe_ends[1]);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    close(pipe_ends[0]);
    struct timespec ended;
    clock_gettime(CLOCK_MONOTONIC, &ended);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGALRM);
    long long waited_ms =
        (ended.tv_sec - started.tv_sec) * 1000LL + (ended.tv_nsec - started.tv_nsec) / 1000000;
    assert_true(waited_ms >= 900);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backstop_ends_a_process_held_in_a_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
