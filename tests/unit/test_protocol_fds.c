/* SPDX-License-Identifier: MIT */
/*
 * pfd_take, in a child process of its own (it rewires fds 0 and 1): the protocol moves to
 * close-on-exec descriptors, fd 0 reads /dev/null, fd 1 writes where stderr goes, and a program
 * started afterwards holds neither protocol descriptor.
 */
#include "wire/protocol_fds.h"

#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static bool same_file(int a, int b)
{
    struct stat first, second;
    return fstat(a, &first) == 0 && fstat(b, &second) == 0 && first.st_dev == second.st_dev &&
           first.st_ino == second.st_ino;
}

/* What the child checks, one exit code per failed check (0: all good). */
static int child_checks(void)
{
    int original_in = dup(STDIN_FILENO), original_out = dup(STDOUT_FILENO);
    int in, out;
    char error[256];
    if (pfd_take(&in, &out, error, sizeof error) != 0)
        return 10;
    if (in <= 2 || out <= 2)
        return 11;
    if (!same_file(in, original_in) || !same_file(out, original_out))
        return 12; /* the protocol still reaches the client */
    if (!(fcntl(in, F_GETFD) & FD_CLOEXEC) || !(fcntl(out, F_GETFD) & FD_CLOEXEC))
        return 13;
    int null = open("/dev/null", O_RDONLY);
    struct stat zero, devnull;
    if (fstat(STDIN_FILENO, &zero) != 0 || fstat(null, &devnull) != 0 ||
        zero.st_rdev != devnull.st_rdev)
        return 14; /* fd 0 is not /dev/null */
    if (!same_file(STDOUT_FILENO, STDERR_FILENO))
        return 15; /* a stray printf would not land on stderr */
    char buffer[8];
    if (read(STDIN_FILENO, buffer, sizeof buffer) != 0)
        return 16; /* reading stdin must see end of input, not protocol bytes */

    /* A program started now, as a plugin might, must not hold the protocol descriptors. */
    char script[128];
    snprintf(script, sizeof script, "test ! -e /proc/$$/fd/%d && test ! -e /proc/$$/fd/%d", in,
             out);
    pid_t shell = fork();
    if (shell == 0) {
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    int status;
    if (waitpid(shell, &status, 0) != shell || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return 17;
    return 0;
}

static void test_protocol_moves_off_standard_descriptors(void **state)
{
    (void)state;
    int to_child[2], from_child[2];
    assert_int_equal(pipe(to_child), 0);
    assert_int_equal(pipe(from_child), 0);
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        dup2(to_child[0], STDIN_FILENO);
        dup2(from_child[1], STDOUT_FILENO);
        close(to_child[0]);
        close(to_child[1]);
        close(from_child[0]);
        close(from_child[1]);
        _exit(child_checks());
    }
    close(to_child[0]);
    close(from_child[1]);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0)
        fail_msg("check %d failed in the child (see child_checks)", WEXITSTATUS(status));
    close(to_child[1]);
    close(from_child[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_protocol_moves_off_standard_descriptors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
