/* SPDX-License-Identifier: MIT */
/*
 * Fixture for the confinement tests: each method tries one thing a confined plugin host must not
 * do (ptrace, mount, keyctl, signal rpcd, exec a shell, an AF_INET socket, read or write outside
 * its paths, allocate past its memory, fork past its processes, spin past its CPU time) and reports
 * the errno it got as {"errno": N} (0: it was allowed), so that nothing here crashes by itself.
 */
#include <rpcd/plugin.h>

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/keyctl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { MOST_CHILDREN = 256 };

static const rpcd_host_api *host;

static int reply(rpcd_call *call, const char *format, ...) __attribute__((format(printf, 2, 3)));

static int reply(rpcd_call *call, const char *format, ...)
{
    char text[256];
    va_list args;
    va_start(args, format);
    int length = vsnprintf(text, sizeof text, format, args);
    va_end(args);
    return host->call_result(call, text, (size_t)length);
}

static int reply_errno(rpcd_call *call, long result)
{
    return reply(call, "{\"errno\":%d}", result < 0 ? errno : 0);
}

/* params' member name, a string or an integer; NULL when params lack it (call failed). */
static json_t *param(rpcd_call *call, const char *params, size_t params_length, const char *name)
{
    json_t *object = params ? json_loadb(params, params_length, 0, NULL) : NULL;
    json_t *member = object ? json_object_get(object, name) : NULL;
    if (member)
        json_incref(member);
    json_decref(object);
    if (!member)
        host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "params lack a member", NULL, 0);
    return member;
}

/*
 * A request on a process the host does not trace, itself: ESRCH when ptrace is allowed, and
 * nothing is attached or stopped either way.
 */
static int try_ptrace(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    return reply_errno(call, ptrace(PTRACE_CONT, getpid(), NULL, NULL));
}

/* A mount point that does not exist: a host allowed to mount gets ENOENT, never a mount. */
static int try_mount(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    return reply_errno(call, mount("none", "/nonexistent/rpcd-forbidden", "tmpfs", 0, NULL));
}

static int try_keyctl(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    return reply_errno(call,
                       syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
}

/*
 * Signal 0 (nothing sent) to rpcd, by the pid the test gives ({"pid":N}, as a plugin would
 * find it in /proc), or to the host's parent.
 */
static int try_signal(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    pid_t target = getppid();
    char text[64];
    if (params && params_length < sizeof text) {
        memcpy(text, params, params_length);
        text[params_length] = '\0';
        const char *at = strstr(text, "\"pid\":");
        if (at)
            target = (pid_t)strtol(at + 6, NULL, 10);
    }
    return reply_errno(call, kill(target, 0));
}

/* In a child, so that an exec that works replaces the child and not the host. */
static int try_exec(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    pid_t child = fork();
    if (child < 0)
        return reply_errno(call, -1);
    if (child == 0) {
        char *const args[] = {"sh", "-c", "exit 0", NULL};
        char *const environment[] = {NULL};
        execve("/bin/sh", args, environment);
        _exit(errno);
    }
    int status;
    if (waitpid(child, &status, 0) != child)
        return reply_errno(call, -1);
    return reply(call, "{\"errno\":%d}", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

static int try_socket(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0)
        close(fd);
    return reply_errno(call, fd);
}

/* {"path": P}: opens P for reading. */
static int try_read(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    json_t *path = param(call, params, params_length, "path");
    if (!path)
        return RPCD_ERR_INVALID_PARAMS;
    int fd = open(json_string_value(path), O_RDONLY | O_CLOEXEC);
    int saved = errno;
    json_decref(path);
    if (fd >= 0)
        close(fd);
    errno = saved;
    return reply_errno(call, fd);
}

/* {"path": P}: creates P for writing, and removes it again when that worked. */
static int try_write(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    json_t *path = param(call, params, params_length, "path");
    if (!path)
        return RPCD_ERR_INVALID_PARAMS;
    const char *name = json_string_value(path);
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int saved = errno;
    if (fd >= 0) {
        close(fd);
        unlink(name);
    }
    json_decref(path);
    errno = saved;
    return reply_errno(call, fd);
}

/* {"bytes": N}: allocates N bytes, touches the last, frees them. */
static int try_allocate(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    json_t *bytes = param(call, params, params_length, "bytes");
    if (!bytes)
        return RPCD_ERR_INVALID_PARAMS;
    size_t size = (size_t)json_integer_value(bytes);
    json_decref(bytes);
    char *memory = size ? malloc(size) : NULL;
    if (!memory)
        return reply(call, "{\"errno\":%d}", ENOMEM);
    memory[size - 1] = 1;
    free(memory);
    return reply(call, "{\"errno\":0}");
}

/*
 * {"count": N}: forks N children that wait, stopping at the first fork that fails, then ends
 * them all. Reports that fork's errno and how many children there were.
 */
static int try_fork(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    json_t *count = param(call, params, params_length, "count");
    if (!count)
        return RPCD_ERR_INVALID_PARAMS;
    json_int_t wanted = json_integer_value(count);
    json_decref(count);
    pid_t children[MOST_CHILDREN];
    int forked = 0, error = 0;
    while (forked < wanted && forked < MOST_CHILDREN) {
        pid_t child = fork();
        if (child < 0) {
            error = errno;
            break;
        }
        if (child == 0) {
            pause();
            _exit(0);
        }
        children[forked++] = child;
    }
    for (int i = 0; i < forked; i++) {
        kill(children[i], SIGKILL);
        waitpid(children[i], NULL, 0);
    }
    return reply(call, "{\"errno\":%d,\"forked\":%d}", error, forked);
}

/* {"seconds": S}: spins for S seconds of CPU time, then answers. */
static int spin(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    json_t *seconds = param(call, params, params_length, "seconds");
    if (!seconds)
        return RPCD_ERR_INVALID_PARAMS;
    double limit = json_number_value(seconds);
    json_decref(seconds);
    struct timespec now;
    do
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    while ((double)now.tv_sec + (double)now.tv_nsec / 1e9 < limit);
    return reply(call, "{\"errno\":0}");
}

/* Who the host runs as: {"uid": U, "gid": G}. */
static int whoami(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    /* In a PID namespace of its own the host's id there is not the one /proc/self names. */
    char link[32] = "";
    ssize_t length = readlink("/proc/self", link, sizeof link - 1);
    int namespaced = length > 0 && strtol(link, NULL, 10) != (long)getpid();
    return reply(call, "{\"uid\":%u,\"gid\":%u,\"namespaced\":%d}", (unsigned)getuid(),
                 (unsigned)getgid(), namespaced);
}

static int forbidden_init(rpcd_plugin *plugin, const rpcd_host_api *api, void **state, char *error,
                          size_t error_size)
{
    (void)state, (void)error, (void)error_size;
    host = api;
    static const struct {
        const char *name;
        rpcd_handler_fn handler;
    } methods[] = {
        {"forbidden.ptrace", try_ptrace}, {"forbidden.mount", try_mount},
        {"forbidden.keyctl", try_keyctl}, {"forbidden.exec", try_exec},
        {"forbidden.socket", try_socket}, {"forbidden.read", try_read},
        {"forbidden.write", try_write},   {"forbidden.allocate", try_allocate},
        {"forbidden.fork", try_fork},     {"forbidden.spin", spin},
        {"forbidden.whoami", whoami},     {"forbidden.signal", try_signal},
    };
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        rpcd_method method = rpcd_method_new(methods[i].name, methods[i].handler);
        int status = host->register_method(plugin, &method);
        if (status != RPCD_OK)
            return status;
    }
    return RPCD_OK;
}

RPCD_PLUGIN_DEFINE("forbidden", "1.0.0", forbidden_init, NULL);
