/* SPDX-License-Identifier: MIT */
/*
 * Fixture for the containment tests: an isolated plugin that turns on rpcd and on another
 * plugin's host (their descriptors and memory through /proc, a signal, ptrace, its own file on
 * disk, and the ways around a filter that names rpcd's pid) and reports the errno of each try (0:
 * it worked), leaves programs behind (a child, and a daemon that left its process group), and says
 * on stderr when its shutdown runs. Built twice, with the method prefix HOSTILE_PREFIX ("a" and
 * "b"), so that one host can turn on the other.
 */
#include <rpcd/plugin.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef HOSTILE_PREFIX
#define HOSTILE_PREFIX "a"
#endif

static const rpcd_host_api *host;

static int reply(rpcd_call *call, const char *format, ...) __attribute__((format(printf, 2, 3)));

static int reply(rpcd_call *call, const char *format, ...)
{
    char text[512];
    va_list args;
    va_start(args, format);
    int length = vsnprintf(text, sizeof text, format, args);
    va_end(args);
    return host->call_result(call, text, (size_t)length);
}

/* The integer after "name": in params (no JSON library: the test writes them), or fallback. */
static long number_param(const char *params, size_t params_length, const char *name, long fallback)
{
    char text[512], key[64];
    if (!params || params_length >= sizeof text)
        return fallback;
    memcpy(text, params, params_length);
    text[params_length] = '\0';
    snprintf(key, sizeof key, "\"%s\":", name);
    const char *at = strstr(text, key);
    return at ? strtol(at + strlen(key), NULL, 10) : fallback;
}

/* The errno of an open of path with flags (0 when it opened). */
static int try_open(const char *path, int flags)
{
    int fd = open(path, flags | O_CLOEXEC);
    if (fd < 0)
        return errno;
    close(fd);
    return 0;
}

/*
 * Process ids as the test (and rpcd) see them. A host may run in a PID namespace of its own,
 * where getpid() and getppid() give its own numbers; /proc, mounted outside it, gives theirs,
 * and is where a hostile plugin would look for rpcd.
 */

/* This process's id outside: /proc/self names it. */
static pid_t outer_self(void)
{
    char link[32];
    ssize_t length = readlink("/proc/self", link, sizeof link - 1);
    if (length <= 0)
        return -1;
    link[length] = '\0';
    return (pid_t)strtol(link, NULL, 10);
}

/* Field number field (4: the parent, 5: the process group) of /proc/PID/stat, or -1. */
static long stat_field(pid_t pid, int field)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t length = read(fd, text, sizeof text - 1);
    close(fd);
    if (length <= 0)
        return -1;
    text[length] = '\0';
    const char *at = strrchr(text, ')'); /* after the name, which may hold anything */
    for (int i = 2; at && i < field; i++)
        at = strchr(at + 1, ' ');
    return at ? strtol(at + 1, NULL, 10) : -1;
}

/* Whether pid's name is the hosts' (rpcd-host). */
static bool is_host(pid_t pid)
{
    char path[64], comm[32] = "";
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t length = read(fd, comm, sizeof comm - 1);
    close(fd);
    return length > 0 && strncmp(comm, "rpcd-host\n", (size_t)length) == 0;
}

/* rpcd, as a plugin finds it: the first of its ancestors outside that is not a host. */
static pid_t find_rpcd(void)
{
    pid_t pid = outer_self();
    for (int hops = 0; pid > 1 && hops < 8 && is_host(pid); hops++)
        pid = (pid_t)stat_field(pid, 4);
    return pid;
}

/*
 * PREFIX.whoami: {"pid":P,"pgid":G,"rpcd":R,"namespaced":N}: the host's id and process group,
 * and rpcd's, as seen outside; N 1 when the host runs in a PID namespace of its own.
 */
static int whoami(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    pid_t self = outer_self();
    return reply(call, "{\"pid\":%d,\"pgid\":%ld,\"rpcd\":%d,\"namespaced\":%d}", (int)self,
                 stat_field(self, 5), (int)find_rpcd(), getpid() != self);
}

/*
 * PREFIX.attack {"pid": P} (rpcd when absent): P's standard output opened for writing (where a
 * forged response would go), its memory for writing, a signal 0 (the right to kill it, without
 * killing), a ptrace attach (detached at once when it worked).
 */
static int attack(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    pid_t target = (pid_t)number_param(params, params_length, "pid", (long)find_rpcd());
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/1", (int)target);
    int fd = try_open(path, O_WRONLY);
    snprintf(path, sizeof path, "/proc/%d/mem", (int)target);
    int mem = try_open(path, O_RDWR);
    int signal = kill(target, 0) == 0 ? 0 : errno;
    int traced = 0;
    if (ptrace(PTRACE_ATTACH, target, NULL, NULL) != 0) {
        traced = errno;
    } else {
        waitpid(target, NULL, __WALL);
        ptrace(PTRACE_DETACH, target, NULL, NULL);
    }
    return reply(call, "{\"fd\":%d,\"mem\":%d,\"kill\":%d,\"ptrace\":%d}", fd, mem, signal, traced);
}

/* One of pid's threads other than its first, by id (0 when none is found). */
static pid_t other_thread(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *tasks = opendir(path);
    if (!tasks)
        return 0;
    pid_t found = 0;
    for (struct dirent *entry; !found && (entry = readdir(tasks));) {
        long id = strtol(entry->d_name, NULL, 10);
        if (id > 0 && id != (long)pid)
            found = (pid_t)id;
    }
    closedir(tasks);
    return found;
}

/*
 * PREFIX.routes: the errnos of the ways around a filter that names rpcd's pid (0: it worked):
 * "group", joining rpcd's process group (to signal it there with kill(0)); "owner", a pipe's
 * owner set to rpcd (SIGIO, sent by the kernel); "parent", a child made rpcd's (CLONE_PARENT);
 * "thread", a signal 0 to one of rpcd's threads by its id (-1: none found).
 */
static int routes(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    pid_t rpcd = find_rpcd();
    int group = setpgid(0, (pid_t)stat_field(rpcd, 5)) == 0 ? 0 : errno;
    int ends[2], owner = -1;
    if (pipe(ends) == 0) {
        owner = fcntl(ends[0], F_SETOWN, (int)rpcd) == 0 ? 0 : errno;
        close(ends[0]);
        close(ends[1]);
    }
    long child = syscall(SYS_clone, (unsigned long)(CLONE_PARENT | SIGCHLD), NULL, NULL, NULL, 0);
    if (child == 0)
        _exit(0);
    int parent = child > 0 ? 0 : errno;
    pid_t thread = other_thread(rpcd);
    int signal = thread <= 0 ? -1 : kill(thread, 0) == 0 ? 0 : errno;
    return reply(call, "{\"group\":%d,\"owner\":%d,\"parent\":%d,\"thread\":%d}", group, owner,
                 parent, signal);
}

/* PREFIX.rewrite {"path": "..."}: opens the file (its own .so) for writing; writes nothing. */
static int rewrite(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    char text[4096];
    if (!params || params_length >= sizeof text)
        return RPCD_ERR_INVALID_PARAMS;
    memcpy(text, params, params_length);
    text[params_length] = '\0';
    const char *start = strstr(text, "\"path\":\"");
    char *end = start ? strchr(start + 8, '"') : NULL;
    if (!end)
        return RPCD_ERR_INVALID_PARAMS;
    *end = '\0';
    return reply(call, "{\"errno\":%d}", try_open(start + 8, O_WRONLY));
}

/* exec of sleep 30 in a child whose stdout and stderr are the host's (the channel's ends are
 * close-on-exec), after its id outside is written to report. */
static void run_sleep(int report)
{
    pid_t self = outer_self();
    (void)!write(report, &self, sizeof self);
    char *const args[] = {"sleep", "30", NULL};
    execv("/bin/sleep", args);
    execv("/usr/bin/sleep", args);
    _exit(127);
}

/*
 * PREFIX.spawn: {"child":C,"daemon":D}: C a sleep the host forked and never waits for, D one
 * started by a child that left the process group (setsid) and exited, as a daemon does.
 */
static int spawn(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    int pids[2];
    if (pipe(pids) != 0)
        return RPCD_ERR_INTERNAL;
    pid_t child = -1, daemon = -1;
    pid_t forked = fork();
    if (forked == 0)
        run_sleep(pids[1]);
    if (forked > 0)
        (void)!read(pids[0], &child, sizeof child);
    pid_t middle = fork();
    if (middle == 0) {
        setsid();
        if (fork() == 0)
            run_sleep(pids[1]);
        _exit(0);
    }
    close(pids[1]);
    if (middle > 0) {
        waitpid(middle, NULL, 0);
        (void)!read(pids[0], &daemon, sizeof daemon);
    }
    close(pids[0]);
    return reply(call, "{\"child\":%d,\"daemon\":%d}", (int)child, (int)daemon);
}

/* PREFIX.hang (quick, so on the host's reading thread): never returns. */
static int hang(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)call, (void)params, (void)params_length, (void)user_data;
    for (;;)
        pause();
    return RPCD_OK;
}

static int hostile_init(rpcd_plugin *plugin, const rpcd_host_api *api, void **state, char *error,
                        size_t error_size)
{
    (void)state, (void)error, (void)error_size;
    host = api;
    static const struct {
        const char *name;
        rpcd_handler_fn handler;
    } methods[] = {
        {"hostile_" HOSTILE_PREFIX ".whoami", whoami},
        {"hostile_" HOSTILE_PREFIX ".attack", attack},
        {"hostile_" HOSTILE_PREFIX ".routes", routes},
        {"hostile_" HOSTILE_PREFIX ".rewrite", rewrite},
        {"hostile_" HOSTILE_PREFIX ".spawn", spawn},
        {"hostile_" HOSTILE_PREFIX ".hang", hang},
    };
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        rpcd_method method = rpcd_method_new(methods[i].name, methods[i].handler);
        if (methods[i].handler == hang)
            method.flags = RPCD_METHOD_QUICK;
        int status = host->register_method(plugin, &method);
        if (status != RPCD_OK)
            return status;
    }
    return RPCD_OK;
}

/* Says so on stderr (the log): a host that was killed never gets here. */
static void hostile_shutdown(void *state)
{
    (void)state;
    fprintf(stderr, "hostile_" HOSTILE_PREFIX ": shut down by pid %d\n", (int)outer_self());
}

RPCD_PLUGIN_DEFINE("hostile_" HOSTILE_PREFIX, "1.0.0", hostile_init, hostile_shutdown);
