/* SPDX-License-Identifier: MIT */
/*
 * deny_syscall NAME PROGRAM [ARG...]: runs PROGRAM with the system call NAME refused (EPERM),
 * as a container's seccomp profile may refuse it: how a test provokes what rpcd does when the
 * kernel says no. The filter passes to every process PROGRAM starts.
 */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: deny_syscall NAME PROGRAM [ARG...]\n");
        return 64;
    }
    int number = seccomp_syscall_resolve_name(argv[1]);
    if (number == __NR_SCMP_ERROR) {
        fprintf(stderr, "deny_syscall: no system call named %s\n", argv[1]);
        return 64;
    }
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    int status = filter ? seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), number, 0) : -1;
    if (status == 0)
        status =
            seccomp_load(filter); /* sets no_new_privs first, as an unprivileged filter needs */
    seccomp_release(filter);
    if (status != 0) {
        fprintf(stderr, "deny_syscall: cannot load the filter: %s\n", strerror(-status));
        return 70;
    }
    execvp(argv[2], argv + 2);
    fprintf(stderr, "deny_syscall: cannot run %s: %s\n", argv[2], strerror(errno));
    return 127;
}
