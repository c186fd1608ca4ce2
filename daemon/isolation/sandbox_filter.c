/* SPDX-License-Identifier: MIT */
/*
 * A plugin host's seccomp filter (libseccomp): what a tool never needs, and what would reach
 * rpcd, fails with EPERM so that a plugin sees an ordinary error.
 */
#include "isolation/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sched.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_LEAK__)
#define SANDBOX_LEAK_CHECKED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define SANDBOX_LEAK_CHECKED 1
#endif
#endif

/* ---- seccomp ----------------------------------------------------------------------------- */

/*
 * What a tool never needs, and what would let it reach beyond its process: other processes'
 * memory, mounts and namespaces, the kernel's modules, keys, BPF, clocks and power, and
 * io_uring, whose operations no seccomp filter sees.
 */
/* clang-format off */
static const char *const forbidden_default[] = {
#ifndef SANDBOX_LEAK_CHECKED
    /* LeakSanitizer stops the process's own threads with ptrace at exit. */
    "ptrace",
#endif
    "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr",
    "init_module", "finit_module", "delete_module", "create_module",
    "kexec_load", "kexec_file_load", "reboot", "swapon", "swapoff",
    "keyctl", "add_key", "request_key",
    "bpf", "perf_event_open", "userfaultfd",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "stime",
    "acct", "quotactl", "quotactl_fd",
    "unshare", "setns", "open_by_handle_at",
    "iopl", "ioperm", "syslog", "sethostname", "setdomainname", "vhangup", "uselib", "_sysctl",
    "lookup_dcookie", "nfsservctl",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    /* A signal to a thread named by its id alone, which may be one of rpcd's; and one through a
     * pidfd, which an open of /proc/PID gives for any process. kill and tgkill remain. */
    "tkill", "pidfd_send_signal",
};
/* clang-format on */
static const char *const forbidden_strict[] = {"execve", "execveat", "socket"};

/* clone() flags that make a namespace: unshare by another name. */
static const uint64_t namespace_flags[] = {CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWUTS,
                                           CLONE_NEWIPC, CLONE_NEWUSER,   CLONE_NEWPID,
                                           CLONE_NEWNET};

/* An argument compared on its low 32 bits, as the kernel reads an int: SCMP_A0_32's meaning,
 * written so that clang's -Wgnu-zero-variadic-macro-arguments has nothing to say of it. */
#define LOW_32_BITS 0xffffffffULL

static int forbid(scmp_filter_ctx filter, const char *name)
{
    int number = seccomp_syscall_resolve_name(name);
    if (number == __NR_SCMP_ERROR)
        return 0; /* unknown to this libseccomp: nothing to call it by either */
    return seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), number, 0);
}

/*
 * No signal, queued signal or pidfd aimed at rpcd (its process, its group, or every process at
 * once), whatever the kernel: Landlock scopes signals only from ABI 6 (Linux 6.12), and a host
 * of rpcd's own user could otherwise kill it. Other hosts are not named here (they come and go):
 * rpcd.conf(5) says what keeps them apart.
 */
static int protect_rpcd(scmp_filter_ctx filter, pid_t rpcd, pid_t group)
{
    const int denied = SCMP_ACT_ERRNO(EPERM);
    int status = 0;
    /* By rpcd's pid: none in a PID namespace of the host's own, where that pid names nothing
     * outside, and in time one of the plugin's own processes. */
    if (rpcd > 0) {
        /* kill takes a process, a group (negated) or -1 for all: rpcd's, its group's, all. */
        const uint32_t targets[] = {(uint32_t)rpcd, (uint32_t)-rpcd, (uint32_t)-1,
                                    (uint32_t) - (group > 0 ? group : rpcd)};
        for (size_t i = 0; status == 0 && i < sizeof targets / sizeof targets[0]; i++)
            if (i == 0 || targets[i] != targets[i - 1])
                status = seccomp_rule_add(filter, denied, SCMP_SYS(kill), 1,
                                          SCMP_A0(SCMP_CMP_MASKED_EQ, LOW_32_BITS, targets[i]));
        const int by_process[] = {SCMP_SYS(tgkill), SCMP_SYS(rt_sigqueueinfo),
                                  SCMP_SYS(rt_tgsigqueueinfo), SCMP_SYS(pidfd_open)};
        for (size_t i = 0; status == 0 && i < sizeof by_process / sizeof by_process[0]; i++)
            status = seccomp_rule_add(filter, denied, by_process[i], 1,
                                      SCMP_A0(SCMP_CMP_MASKED_EQ, LOW_32_BITS, (uint32_t)rpcd));
    }
    /* A signal sent by the kernel on the host's behalf: SIGIO (or any signal, F_SETSIG) to
     * whichever process or group a descriptor's owner names, checked only against the host's
     * user when it is set. */
    const int owner_commands[] = {F_SETOWN, F_SETOWN_EX, F_SETSIG};
    for (size_t i = 0; status == 0 && i < sizeof owner_commands / sizeof owner_commands[0]; i++)
        status =
            seccomp_rule_add(filter, denied, SCMP_SYS(fcntl), 1,
                             SCMP_A1(SCMP_CMP_MASKED_EQ, LOW_32_BITS, (uint32_t)owner_commands[i]));
    /* The same owner by ioctl, and TIOCSTI, which types into a terminal rpcd may be reading. */
    const unsigned long owner_requests[] = {FIOSETOWN, SIOCSPGRP, TIOCSTI};
    for (size_t i = 0; status == 0 && i < sizeof owner_requests / sizeof owner_requests[0]; i++)
        status =
            seccomp_rule_add(filter, denied, SCMP_SYS(ioctl), 1,
                             SCMP_A1(SCMP_CMP_MASKED_EQ, LOW_32_BITS, (uint32_t)owner_requests[i]));
    /* A child made rpcd's instead of the host's: out of the host's reach at its end, and a
     * zombie rpcd would never reap. */
    if (status == 0)
        status = seccomp_rule_add(filter, denied, SCMP_SYS(clone), 1,
                                  SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_PARENT, CLONE_PARENT));
#ifdef SANDBOX_LEAK_CHECKED
    /* ptrace stays for LeakSanitizer (forbidden_default), but never on rpcd. */
    if (status == 0 && rpcd > 0)
        status = seccomp_rule_add(filter, denied, SCMP_SYS(ptrace), 1,
                                  SCMP_A1(SCMP_CMP_MASKED_EQ, LOW_32_BITS, (uint32_t)rpcd));
#endif
    return status;
}

static int build_filter(scmp_filter_ctx filter, const sandbox_settings *s)
{
    sandbox_seccomp profile = s->seccomp;
    int status = protect_rpcd(filter, s->rpcd_pid, s->rpcd_pid > 0 ? getpgid(s->rpcd_pid) : 0);
    for (size_t i = 0; status == 0 && i < sizeof forbidden_default / sizeof forbidden_default[0];
         i++)
        status = forbid(filter, forbidden_default[i]);
    for (size_t i = 0; status == 0 && i < sizeof namespace_flags / sizeof namespace_flags[0]; i++)
        status =
            seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, namespace_flags[i], namespace_flags[i]));
    /* clone3 passes its flags in memory a filter cannot read: ENOSYS makes glibc use clone. */
    if (status == 0)
        status = seccomp_rule_add(filter, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    if (profile != SANDBOX_SECCOMP_STRICT)
        return status;
    for (size_t i = 0; status == 0 && i < sizeof forbidden_strict / sizeof forbidden_strict[0]; i++)
        status = forbid(filter, forbidden_strict[i]);
    if (status == 0)
        status = seccomp_rule_add(filter, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socketpair), 1,
                                  SCMP_A0(SCMP_CMP_NE, AF_UNIX, 0));
    return status;
}

int sandbox_filter_apply(const sandbox_settings *s, char *error, size_t error_size)
{
    if (s->seccomp == SANDBOX_SECCOMP_OFF)
        return 0;
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    if (!filter) {
        snprintf(error, error_size, "[plugin %s]: cannot start a seccomp filter", s->name);
        return -1;
    }
    /* System calls of another ABI (int 0x80 on x86-64) would pass a filter written for this one. */
    int status = seccomp_attr_set(filter, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
    /* Every thread, a sanitizer's own included, gets the filter (and no_new_privs with it). */
    if (status == 0)
        status = seccomp_attr_set(filter, SCMP_FLTATR_CTL_TSYNC, 1);
    if (status == 0)
        status = build_filter(filter, s);
    if (status == 0)
        status = seccomp_load(filter);
    seccomp_release(filter);
    if (status != 0) {
        snprintf(error, error_size, "[plugin %s]: cannot load the seccomp filter: %s", s->name,
                 strerror(-status));
        return -1;
    }
    return 0;
}
