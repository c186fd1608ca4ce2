/* SPDX-License-Identifier: MIT */
/*
 * A host's PID namespace: made and entered by the host itself, with the two small processes that
 * tie it to rpcd (host_namespace.h draws them); and the probe rpcd runs to say, before any host
 * starts, whether its hosts will have one.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "isolation/host_namespace.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Writes text to path (a /proc/self file). Returns 0 or an errno. */
static int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    size_t length = strlen(text);
    ssize_t written = write(fd, text, length);
    int status = written == (ssize_t)length ? 0 : written < 0 ? errno : EIO;
    close(fd);
    return status;
}

/*
 * Maps uid and gid (the ids from before the user namespace) onto themselves inside it, so that
 * files keep their owners and the host its rights; nothing else is mapped. The writes need the
 * process dumpable for a moment: not dumpable, its /proc/self files belong to root, whom the new
 * namespace does not map. Returns 0 or an errno.
 */
static int map_own_ids(uid_t uid, gid_t gid)
{
    int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    char line[64];
    /* setgroups is denied first, as the kernel requires of a gid_map written without privilege. */
    int status = write_text("/proc/self/setgroups", "deny");
    if (status == 0) {
        snprintf(line, sizeof line, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
        status = write_text("/proc/self/uid_map", line);
    }
    if (status == 0) {
        snprintf(line, sizeof line, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
        status = write_text("/proc/self/gid_map", line);
    }
    prctl(PR_SET_DUMPABLE, dumpable > 0 ? dumpable : 0, 0, 0, 0);
    return status;
}

/* How the namespaces were made, or why not. */
typedef struct made {
    int pid_errno;  /* unshare(CLONE_NEWPID) alone: 0 when it worked */
    int user_errno; /* unshare with CLONE_NEWUSER, when tried: 0 when it worked, -1 untried */
    int map_errno;  /* the id maps of the user namespace: 0 when written */
} made;

/*
 * The next child of the caller will be pid 1 of a new PID namespace: made alone where the caller
 * may (CAP_SYS_ADMIN), else inside a new user namespace when allowed. Returns true when it was
 * made (check map_errno with a user namespace).
 */
static bool make_namespaces(bool user_namespace_allowed, made *out)
{
    out->user_errno = -1;
    out->map_errno = 0;
    out->pid_errno = unshare(CLONE_NEWPID) == 0 ? 0 : errno;
    if (out->pid_errno == 0)
        return true;
    if (!user_namespace_allowed || out->pid_errno != EPERM)
        return false;
    uid_t uid = geteuid();
    gid_t gid = getegid();
    out->user_errno = unshare(CLONE_NEWUSER | CLONE_NEWPID) == 0 ? 0 : errno;
    if (out->user_errno != 0)
        return false;
    out->map_errno = map_own_ids(uid, gid);
    return true;
}

/* Why no namespace was made, for a log line. */
static void describe_refusal(const made *m, char *out, size_t size)
{
    if (m->user_errno < 0)
        snprintf(out, size, "the kernel refused a PID namespace (%s)", strerror(m->pid_errno));
    else
        snprintf(out, size,
                 "the kernel refused a PID namespace (%s) and a user namespace to make it in (%s)",
                 strerror(m->pid_errno), strerror(m->user_errno));
}

/* Every descriptor but keep closed: what the waiting processes must not hold open. */
static void close_all_but(int keep)
{
    if (keep > 0)
        close_range(0, (unsigned)keep - 1, 0);
    close_range((unsigned)keep + 1, ~0u, 0);
}

/* Signals meant for rpcd or sent to the host's group: the waiting processes take none of them. */
static void ignore_stray_signals(void)
{
    static const int stray[] = {SIGHUP, SIGINT, SIGUSR1, SIGUSR2, SIGPIPE};
    for (size_t i = 0; i < sizeof stray / sizeof stray[0]; i++)
        signal(stray[i], SIG_IGN);
}

/* Ends the calling process as status (a wait status) says the host ended. */
static _Noreturn void end_as(int status)
{
    if (WIFSIGNALED(status)) {
        int number = WTERMSIG(status);
        signal(number, SIG_DFL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, number);
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        raise(number);
        _exit(128 + number);
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

/*
 * The process rpcd started: waits for the host's end, reported by pid 1 on link, or for rpcd's,
 * and then ends the namespace (its pid 1 dies with it: PR_SET_PDEATHSIG).
 */
static _Noreturn void wait_outside(pid_t rpcd_pid, pid_t reaper, int link)
{
    close_all_but(link);
    ignore_stray_signals();
    int rpcd_fd = -1;
#ifdef SYS_pidfd_open
    rpcd_fd = (int)syscall(SYS_pidfd_open, rpcd_pid, 0);
#endif
    int status = 0;
    bool reported = false;
    /* Checked after pidfd_open: rpcd may have gone before, and its pid been taken since. */
    while (getppid() == rpcd_pid) {
        struct pollfd watched[2] = {{link, POLLIN, 0}, {rpcd_fd, POLLIN, 0}};
        /* Without pidfd_open (Linux 5.3) rpcd's end is seen by the parent changing. */
        int ready = poll(watched, rpcd_fd >= 0 ? 2 : 1, rpcd_fd >= 0 ? -1 : 100);
        if (ready <= 0)
            continue;
        if (watched[0].revents) {
            reported = read(link, &status, sizeof status) == (ssize_t)sizeof status;
            int own = 0;
            while (waitpid(reaper, &own, 0) < 0 && errno == EINTR)
                ;
            end_as(reported ? status : own);
        }
        if (watched[1].revents)
            break;
    }
    /* rpcd is gone: so is everything it started. */
    kill(reaper, SIGKILL);
    while (waitpid(reaper, NULL, 0) < 0 && errno == EINTR)
        ;
    _exit(0);
}

/*
 * Pid 1 of the namespace: starts the host (pid 2) and returns in it; itself reaps what is
 * orphaned in the namespace until the host ends, reports the host's wait status on link and
 * exits, and the kernel kills whatever is left in the namespace.
 */
static void serve_as_pid_one(int link)
{
    /* Dies with the process rpcd started, which may already be gone: then its end is closed. */
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    struct pollfd peer = {link, POLLRDHUP, 0};
    if (poll(&peer, 1, 0) > 0 && (peer.revents & (POLLHUP | POLLRDHUP)))
        _exit(1);
    pid_t host = fork();
    if (host == 0) {
        close(link);
        return;
    }
    if (host < 0)
        _exit(1); /* nothing reported: the outer process ends as this one */
    close_all_but(link);
    ignore_stray_signals();
    for (;;) {
        int status;
        pid_t ended = waitpid(-1, &status, __WALL);
        if (ended == host) {
            (void)!write(link, &status, sizeof status);
            _exit(0);
        }
        if (ended < 0 && errno != EINTR)
            _exit(1);
    }
}

int host_ns_enter(pid_t rpcd_pid, bool user_namespace_allowed, bool *entered, char *error,
                  size_t error_size)
{
    *entered = false;
    made m;
    if (!make_namespaces(user_namespace_allowed, &m)) {
        describe_refusal(&m, error, error_size);
        return 0;
    }
    /* The user namespace is made and cannot be left: without its maps the host's files would
     * be created as nobody's, so it does not go on. */
    if (m.map_errno != 0) {
        snprintf(error, error_size, "cannot map its user into its user namespace: %s",
                 strerror(m.map_errno));
        return -1;
    }
    int link[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, link) != 0) {
        snprintf(error, error_size, "cannot start its PID namespace: %s", strerror(errno));
        return -1;
    }
    pid_t reaper = fork();
    if (reaper < 0) {
        snprintf(error, error_size, "cannot start its PID namespace: %s", strerror(errno));
        close(link[0]);
        close(link[1]);
        return -1;
    }
    if (reaper > 0) {
        close(link[1]);
        wait_outside(rpcd_pid, reaper, link[0]);
    }
    close(link[0]);
    serve_as_pid_one(link[1]);
    *entered = true;
    return 0;
}

/* ---- the probe ---------------------------------------------------------------------------- */

typedef struct probe_answer {
    bool known, available;
    char why[256];
} probe_answer;

static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static probe_answer answers[2]; /* by user_namespace_allowed */

int host_ns_probe(bool user_namespace_allowed, bool *available, char *why, size_t why_size)
{
    pthread_mutex_lock(&probe_lock);
    probe_answer *answer = &answers[user_namespace_allowed ? 1 : 0];
    int status = 0;
    if (!answer->known) {
        /* A child tries, and reports what the kernel said through a pipe: rpcd's own namespaces
         * must not change (its next child would be pid 1 of a namespace of its own). Only
         * system calls between fork and _exit: rpcd may have threads. */
        int report[2];
        status = pipe2(report, O_CLOEXEC);
        pid_t child = status == 0 ? fork() : -1;
        if (child == 0) {
            made m;
            make_namespaces(user_namespace_allowed, &m);
            (void)!write(report[1], &m, sizeof m);
            _exit(0);
        }
        if (status == 0) {
            close(report[1]);
            made m;
            ssize_t got = child > 0 ? read(report[0], &m, sizeof m) : -1;
            close(report[0]);
            if (child > 0)
                while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
                    ;
            if (got == (ssize_t)sizeof m) {
                answer->known = true;
                answer->available = m.pid_errno == 0 || (m.user_errno == 0 && m.map_errno == 0);
                if (m.user_errno == 0 && m.map_errno != 0)
                    snprintf(answer->why, sizeof answer->why,
                             "its user cannot be mapped into a user namespace (%s)",
                             strerror(m.map_errno));
                else if (!answer->available)
                    describe_refusal(&m, answer->why, sizeof answer->why);
            } else {
                status = -1;
            }
        }
    }
    if (status == 0) {
        *available = answer->available;
        snprintf(why, why_size, "%s", answer->why);
    }
    pthread_mutex_unlock(&probe_lock);
    return status == 0 ? 0 : -1;
}
