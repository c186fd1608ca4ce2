/* SPDX-License-Identifier: MIT */
/*
 * What the running kernel offers rpcd's isolation: its release, the Landlock ABI (0: none),
 * whether seccomp filters load, and whether a time slice asked for with sched_setattr is read
 * back by sched_getattr (Linux 6.12 and later). One line each, "name: value".
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

struct attr {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
};

int main(void)
{
    struct utsname name;
    if (uname(&name) == 0)
        printf("release: %s\n", name.release);
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, 1UL /* VERSION */);
    printf("landlock_abi: %ld%s%s\n", abi < 0 ? 0 : abi, abi < 0 ? " " : "",
           abi < 0 ? strerror(errno) : "");
    FILE *lsm = fopen("/sys/kernel/security/lsm", "r");
    char line[256] = "?";
    if (lsm) {
        if (!fgets(line, sizeof line, lsm))
            snprintf(line, sizeof line, "?");
        fclose(lsm);
    }
    line[strcspn(line, "\n")] = '\0';
    printf("lsm: %s\n", line);

    struct attr attr = {0};
    long got = syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0);
    printf("sched_getattr_runtime_ns: %llu%s\n", (unsigned long long)attr.runtime,
           got ? " (sched_getattr failed)" : "");
    attr.size = sizeof attr;
    attr.flags = 0;
    attr.runtime = 500000;
    long set = syscall(SYS_sched_setattr, 0, &attr, 0);
    int set_errno = errno;
    struct attr back = {0};
    syscall(SYS_sched_getattr, 0, &back, sizeof back, 0);
    printf("sched_setattr_500us: %s; read back: %llu ns\n", set ? strerror(set_errno) : "accepted",
           (unsigned long long)back.runtime);

    /* A filter that allows everything: does the kernel load one? */
    struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog program = {.len = 1, .filter = &allow};
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    long filter = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program);
    printf("seccomp_filter: %s\n", filter ? strerror(errno) : "loaded");
    return 0;
}
