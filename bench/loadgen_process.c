/* SPDX-License-Identifier: MIT */
/*
 * loadgen's server process: forks and execs the command with pipes on its stdin and stdout,
 * reads its CPU time while it runs, and reaps it for its peak RSS and total CPU time.
 */
#include "loadgen.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static int set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return -1;
    return 0;
}

void close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

/*
 * Forks and execs opt.command with pipes on stdin and stdout. An exec failure comes back
 * through a close-on-exec pipe, so a mistyped command fails here rather than as a timeout.
 */
int server_start(server *srv)
{
    int to[2] = {-1, -1}, from[2] = {-1, -1}, report[2] = {-1, -1};
    int err_fd = -1, child_errno = 0;

    srv->pid = -1;
    srv->to_server = srv->from_server = -1;
    if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0 || pipe2(report, O_CLOEXEC) < 0) {
        fail_note("pipe: %s", strerror(errno));
        goto fail;
    }
    err_fd = open(opt.stderr_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (err_fd < 0) {
        fail_note("%s: %s", opt.stderr_path, strerror(errno));
        goto fail;
    }
    srv->pid = fork();
    if (srv->pid < 0) {
        fail_note("fork: %s", strerror(errno));
        goto fail;
    }
    if (srv->pid == 0) {
        /* An ignored SIGPIPE survives exec; the server gets the default it would normally have. */
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigaction(SIGPIPE, &dfl, NULL);
        if (dup2(to[0], STDIN_FILENO) >= 0 && dup2(from[1], STDOUT_FILENO) >= 0 &&
            dup2(err_fd, STDERR_FILENO) >= 0)
            execvp(opt.command[0], opt.command);
        child_errno = errno;
        ssize_t ignored = write(report[1], &child_errno, sizeof child_errno);
        (void)ignored;
        _exit(127);
    }
    close_fd(&to[0]);
    close_fd(&from[1]);
    close_fd(&report[1]);
    close_fd(&err_fd);
    ssize_t got;
    do
        got = read(report[0], &child_errno, sizeof child_errno);
    while (got < 0 && errno == EINTR);
    close_fd(&report[0]);
    if (got > 0) {
        fail_note("cannot run %s: %s", opt.command[0], strerror(child_errno));
        waitpid(srv->pid, NULL, 0);
        srv->pid = -1;
        goto fail;
    }
    srv->to_server = to[1];
    srv->from_server = from[0];
    if (set_nonblocking(srv->to_server) < 0 || set_nonblocking(srv->from_server) < 0) {
        fail_note("fcntl: %s", strerror(errno));
        goto fail;
    }
    return 0;
fail:
    if (srv->pid > 0) {
        kill(srv->pid, SIGKILL);
        waitpid(srv->pid, NULL, 0);
        srv->pid = -1;
    }
    close_fd(&srv->to_server);
    close_fd(&srv->from_server);
    close_fd(&to[0]);
    close_fd(&to[1]);
    close_fd(&from[0]);
    close_fd(&from[1]);
    close_fd(&report[0]);
    close_fd(&report[1]);
    close_fd(&err_fd);
    return -1;
}

void server_kill(server *srv)
{
    close_fd(&srv->to_server);
    close_fd(&srv->from_server);
    if (srv->pid > 0) {
        kill(srv->pid, SIGKILL);
        waitpid(srv->pid, NULL, 0);
        srv->pid = -1;
    }
}

/*
 * The CPU time the server's threads have used so far, in µs: the sum of the first field of
 * /proc/PID/task/<tid>/schedstat (ns on the CPU). -1 when the kernel does not provide it.
 * Subtracted from the total that wait4() reports, it leaves what the server spent after this
 * point, start-up excluded (threads that already ended are in neither figure).
 */
long server_cpu_now_us(pid_t pid)
{
    char path[64];
    long long total_ns = 0;
    int found = 0;

    snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
    DIR *dir = opendir(path);
    if (!dir)
        return -1;
    for (struct dirent *entry; (entry = readdir(dir)) != NULL;) {
        if (entry->d_name[0] == '.')
            continue;
        char file[sizeof path + 280];
        snprintf(file, sizeof file, "/proc/%ld/task/%s/schedstat", (long)pid, entry->d_name);
        FILE *stat = fopen(file, "r");
        if (!stat)
            continue; /* the thread has just ended */
        long long ns;
        if (fscanf(stat, "%lld", &ns) == 1) {
            total_ns += ns;
            found = 1;
        }
        fclose(stat);
    }
    closedir(dir);
    return found ? (long)(total_ns / 1000) : -1;
}

/*
 * Closes the server's stdin and waits, at most opt.timeout_ms, for it to exit; its peak RSS and
 * CPU time come from wait4(). The caller has already read its stdout to the end.
 */
int server_finish(server *srv, server_usage *usage)
{
    struct rusage ru;
    int status = 0;
    double deadline = now_s() + opt.timeout_ms / 1000.0;
    useconds_t nap = 100;

    close_fd(&srv->to_server);
    close_fd(&srv->from_server);
    for (;;) {
        pid_t done = wait4(srv->pid, &status, WNOHANG, &ru);
        if (done == srv->pid)
            break;
        if (done < 0 && errno != EINTR) {
            fail_note("wait4: %s", strerror(errno));
            server_kill(srv);
            return -1;
        }
        if (now_s() > deadline) {
            fail_note("the server did not exit within %d s of the end of its input",
                      opt.timeout_ms / 1000);
            server_kill(srv);
            return -1;
        }
        usleep(nap);
        if (nap < 10000)
            nap *= 2;
    }
    srv->pid = -1;
    usage->max_rss_kib = ru.ru_maxrss;
    usage->cpu_us = (long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000L +
                    ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
    if (WIFSIGNALED(status)) {
        fail_note("the server was killed by signal %d", WTERMSIG(status));
        return -1;
    }
    if (WEXITSTATUS(status) != 0) {
        fail_note("the server exited with status %d", WEXITSTATUS(status));
        return -1;
    }
    return 0;
}
