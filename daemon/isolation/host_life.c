/* SPDX-License-Identifier: MIT */
/*
 * A plugin host's place among processes: its name, the signals it takes instead of dying, the
 * descendants it adopts and ends when it ends, and rpcd's end, which it learns from its channel.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "isolation/host_life.h"

#include "base/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* rpcd, the parent the host was started by; another parent means rpcd is gone. */
static pid_t started_by;
/* In a PID namespace of its own (host_namespace.h): the process outside watches rpcd, and the
 * namespace holds every descendant, so that its end ends them all. */
static bool in_namespace;

/*
 * A hangup or a user signal meant for rpcd (pkill, or a signal to a whole group) is logged and
 * ignored. A handler rather than SIG_IGN: exec resets a handled signal to its default, so the
 * programs a plugin starts get the dispositions they expect, where an ignored one would stay.
 */
static void on_stray_signal(int number)
{
    int saved = errno;
    log_signal(LOG_WARNING, number, "ignored by a plugin host");
    errno = saved;
}

int host_life_begin(void)
{
    started_by = getppid();
    /*
     * Not dumpable: its /proc entries (fd, mem, environ, maps) are closed to every other process
     * of its user, other hosts included, and it cannot be ptraced by them. exec made it dumpable
     * again; privileges.c sets it anew after a switch of user, which resets it as well.
     */
    int failed = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    /* Not "rpcd" to pkill -x rpcd, ps or top: comm is what the kernel matches, not argv[0]. */
    failed |= prctl(PR_SET_NAME, (unsigned long)ISO_HOST_NAME, 0, 0, 0);
    /* What the plugin starts and orphans is adopted by the host, which can then end it. */
    failed |= prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    sigemptyset(&action.sa_mask);
    action.sa_handler = on_stray_signal;
    action.sa_flags = SA_RESTART;
    static const int stray[] = {SIGHUP, SIGINT, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < sizeof stray / sizeof stray[0]; i++)
        failed |= sigaction(stray[i], &action, NULL);
    return failed ? -1 : 0;
}

void host_life_in_namespace(void)
{
    in_namespace = true;
}

bool host_life_rpcd_gone(void)
{
    /* In a namespace the parent is its pid 1, and rpcd's end, seen outside, ends the host. */
    return !in_namespace && getppid() != started_by;
}

/* SIGKILL to each child of each thread of this process. Returns how many were signalled. */
static size_t kill_children(void)
{
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks)
        return 0;
    size_t count = 0;
    const struct dirent *task;
    while ((task = readdir(tasks))) {
        if (task->d_name[0] == '.')
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/self/task/%.20s/children", task->d_name);
        FILE *children = fopen(path, "re");
        if (!children)
            continue;
        long pid;
        while (fscanf(children, "%ld", &pid) == 1)
            if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0)
                count++;
        fclose(children);
    }
    closedir(tasks);
    return count;
}

/*
 * The watch: once rpcd's end of the channel has closed, the host ends as soon as rpcd is gone
 * too, whatever its reading thread is doing (a plugin's init, or a quick handler, that never
 * returns). While rpcd lives, the close is a stop, which rpcd sees through.
 */
static void *watch_main(void *context)
{
    int fd = (int)(intptr_t)context;
    for (;;) {
        struct pollfd one = {fd, POLLRDHUP, 0};
        if (poll(&one, 1, -1) > 0)
            break;
    }
    for (;;) {
        if (host_life_rpcd_gone())
            host_life_exit(0);
        struct timespec nap = {0, 50 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    return NULL;
}

int host_life_watch(int fd)
{
    sigset_t all, before;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &before); /* the signals are the other threads' */
    pthread_t thread;
    int status = pthread_create(&thread, NULL, watch_main, (void *)(intptr_t)fd);
    pthread_sigmask(SIG_SETMASK, &before, NULL);
    if (status != 0) {
        errno = status;
        return -1;
    }
    pthread_detach(thread);
    return 0;
}

void host_life_end_descendants(void)
{
    /* Everyone else in the namespace but its pid 1 is of the plugin's making; /proc, mounted
     * outside, would give their ids as seen from there. */
    if (in_namespace) {
        kill(-1, SIGKILL);
        while (waitpid(-1, NULL, __WALL) >= 0 || errno == EINTR)
            ;
        return;
    }
    /*
     * Each round kills every child, then waits for one to end. A child killed hands its own
     * children to the host (a subreaper), where the next round finds them; a process killed
     * forks no more, so the rounds end when no child is left.
     */
    for (;;) {
        kill_children();
        pid_t done = waitpid(-1, NULL, __WALL);
        if (done < 0 && errno != EINTR)
            return; /* ECHILD: none left */
    }
}

void host_life_exit(int status)
{
    host_life_end_descendants();
    _exit(status);
}
