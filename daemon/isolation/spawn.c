/* SPDX-License-Identifier: MIT */
/*
 * A plugin host's start (posix_spawn of rpcd --plugin-host, the channel and the plugin's file
 * on fixed descriptors, stdin from /dev/null and stdout onto stderr: the protocol never reaches
 * a host) and its end (reaped, killed when it will not go).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "isolation/spawn.h"

#include "base/clock.h"
#include "isolation/channel.h"
#include "isolation/host_life.h"
#include "isolation/sandbox.h"
#include "base/log.h"
#include "base/log_capture.h"
#include "wire/mcp_events.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/*
 * The confinement of INIT, resolved here (user and group to ids, [rpcd]'s defaults): the host
 * reads no config and looks up no account. Returns 0, or -1 with the reason in error.
 */
static int put_confinement(buffer *out, const cfg_plugin *config, const iso_settings *settings,
                           char *error, size_t error_size)
{
    sandbox_settings sandbox;
    if (!settings->daemon) {
        memset(&sandbox, 0, sizeof sandbox); /* no config (tests): the default profile alone */
    } else if (sandbox_settings_from_config(settings->daemon, config, &sandbox, error,
                                            error_size) != 0) {
        return -1;
    }
    int failed = chan_put_u64(out, sandbox.limit_memory);
    failed |= chan_put_u64(out, sandbox.limit_cpu_seconds);
    failed |= chan_put_u64(out, sandbox.limit_open_files);
    failed |= chan_put_u64(out, sandbox.limit_processes);
    failed |= chan_put_u8(out, sandbox.target.change);
    failed |= chan_put_u32(out, (uint32_t)sandbox.target.uid);
    failed |= chan_put_u32(out, (uint32_t)sandbox.target.gid);
    failed |= chan_put_u8(out, (uint8_t)sandbox.seccomp);
    failed |= chan_put_opt(out, sandbox.read_paths, SIZE_MAX);
    failed |= chan_put_opt(out, sandbox.write_paths, SIZE_MAX);
    sandbox_settings_free(&sandbox);
    if (failed)
        snprintf(error, error_size, "plugin %s: out of memory", config->path);
    return failed ? -1 : 0;
}

/* The INIT message: everything the host's loader needs, the plugin's keys and its confinement
 * included. */
static int send_init(int fd, const cfg_plugin *config, const iso_settings *settings, char *error,
                     size_t error_size)
{
    buffer out = BUFFER_INIT;
    size_t start;
    int failed = chan_begin(&out, CHAN_INIT, &start);
    /* The level, and the format above it: the host's lines look like rpcd's. */
    failed |= chan_put_u32(&out, (uint32_t)settings->log_level | (uint32_t)log_get_format() << 8);
    /* Read after the proxy joined the watched ones (proxy.c): a change from now on is a LEVEL
     * frame for this host too. */
    failed |= chan_put_u32(&out, (uint32_t)(int32_t)mcp_events_client_log_level());
    failed |= chan_put_u64(&out, settings->limits.workers);
    failed |= chan_put_u64(&out, settings->limits.max_depth);
    failed |= chan_put_u8(&out, settings->insecure);
    failed |= chan_put_u64(&out, config->scheduler_slice_us);
    failed |= chan_put_str(&out, config->name, strlen(config->name));
    failed |= chan_put_str(&out, config->path, strlen(config->path));
    failed |= chan_put_u32(&out, (uint32_t)config->pair_count);
    for (size_t i = 0; i < config->pair_count; i++) {
        failed |= chan_put_str(&out, config->pairs[i].key, strlen(config->pairs[i].key));
        failed |= chan_put_str(&out, config->pairs[i].value, strlen(config->pairs[i].value));
    }
    if (!failed && put_confinement(&out, config, settings, error, error_size) != 0) {
        buf_free(&out);
        return -1;
    }
    int status = chan_end(&out, start, failed != 0);
    if (status == 0)
        status = chan_write_all(fd, out.data, out.length);
    buf_free(&out);
    return status;
}

/* A copy of a string from the host, NUL-terminated; NULL for an absent one or one with a NUL. */
static char *copy_string(chan_str text, bool *bad)
{
    if (!text.bytes)
        return NULL;
    char *copy = malloc(text.length + 1);
    if (!copy || memchr(text.bytes, '\0', text.length)) {
        free(copy);
        *bad = true;
        return NULL;
    }
    memcpy(copy, text.bytes, text.length);
    copy[text.length] = '\0';
    return copy;
}

/* One METHOD frame into info. Returns 0, or -1 (malformed, or memory). */
static int add_method(chan_frame *frame, iso_host_info *info)
{
    iso_method_info *grown = realloc(info->methods, (info->count + 1) * sizeof *grown);
    if (!grown)
        return -1;
    info->methods = grown;
    iso_method_info *method = &grown[info->count];
    bool bad = false;
    method->flags = chan_get_u32(frame);
    method->name = copy_string(chan_get_str(frame), &bad);
    method->description = copy_string(chan_get_opt(frame), &bad);
    method->params_schema = copy_string(chan_get_opt(frame), &bad);
    method->title = copy_string(chan_get_opt(frame), &bad);
    method->annotations = copy_string(chan_get_opt(frame), &bad);
    method->output_schema = copy_string(chan_get_opt(frame), &bad);
    method->icons = copy_string(chan_get_opt(frame), &bad);
    method->mcp_role = chan_get_u32(frame);
    method->mcp_descriptor = copy_string(chan_get_opt(frame), &bad);
    method->abi_minor = chan_get_u32(frame);
    bad |= method->abi_minor > RPCD_ABI_MINOR;
    info->count++;
    return bad || !method->name || !chan_finished(frame) ? -1 : 0;
}

/* Waits for fd to be readable until deadline (negative: none). Returns 0, or -1 on timeout. */
static int wait_readable(int fd, long long deadline)
{
    for (;;) {
        int wait_ms = -1;
        if (deadline >= 0) {
            long long left = deadline - clock_now_ms();
            if (left <= 0)
                return -1;
            wait_ms = left > 1000000 ? 1000000 : (int)left;
        }
        struct pollfd one = {fd, POLLIN, 0};
        int ready = poll(&one, 1, wait_ms);
        if (ready > 0)
            return 0;
        if (ready < 0 && errno != EINTR)
            return -1;
    }
}

/*
 * The lines the plugin's init logged for the MCP client, kept until READY says it loaded (then
 * sent, their logger the plugin's section). A host that sends more has them dropped: they are in
 * the log all the same.
 */
enum { MOST_INIT_LINES = 256 };
typedef struct init_lines {
    buffer texts; /* each text and its NUL */
    int levels[MOST_INIT_LINES];
    size_t count;
} init_lines;

static int keep_line(chan_frame *frame, init_lines *lines)
{
    int level;
    chan_str text;
    if (chan_read_log(frame, &level, &text) != 0)
        return -1;
    if (lines->count < MOST_INIT_LINES && buf_append(&lines->texts, text.bytes, text.length) == 0 &&
        buf_append_char(&lines->texts, '\0') == 0)
        lines->levels[lines->count++] = level;
    return 0;
}

static void send_lines(const init_lines *lines, const char *logger)
{
    const char *text = lines->texts.data;
    for (size_t i = 0; i < lines->count; i++) {
        size_t length = strlen(text);
        mcp_events_log(logger, lines->levels[i], text, length);
        text += length + 1;
    }
}

/*
 * Reads METHOD frames (and LOG, for logger: the plugin's section) up to READY. Returns 0, or -1
 * with the reason in error (what the host said when its plugin failed).
 */
static int read_answer(int fd, int timeout_ms, const char *logger, iso_host_info *info, char *error,
                       size_t error_size)
{
    buffer in = BUFFER_INIT;
    init_lines lines = {.texts = BUFFER_INIT, .count = 0};
    long long deadline = timeout_ms >= 0 ? clock_now_ms() + timeout_ms : -1;
    int status = -1;
    snprintf(error, error_size, "its host ended before the plugin's init returned");
    for (;;) {
        size_t used;
        chan_frame frame;
        int next = chan_next(in.data, in.length, &used, &frame);
        if (next == CHAN_MALFORMED)
            break;
        if (next == CHAN_NEED_MORE) {
            if (wait_readable(fd, deadline) != 0) {
                snprintf(error, error_size, "its host did not finish the plugin's init in time");
                break;
            }
            if (chan_read_some(fd, &in) <= 0)
                break;
            continue;
        }
        if (frame.kind == CHAN_METHOD) {
            if (add_method(&frame, info) != 0)
                break;
        } else if (frame.kind == CHAN_LOG) {
            if (keep_line(&frame, &lines) != 0)
                break;
        } else if (frame.kind == CHAN_READY) {
            int32_t loaded = (int32_t)chan_get_u32(&frame);
            bool bad = false;
            char *text = copy_string(chan_get_str(&frame), &bad);
            if (!text || !chan_finished(&frame)) {
                free(text);
                break;
            }
            if (loaded == 0) {
                info->name = text;
                status = 0;
                send_lines(&lines, logger);
            } else {
                snprintf(error, error_size, "%s", text);
                free(text);
            }
            break;
        } else {
            break;
        }
        chan_consume(&in, used);
    }
    if (status != 0 && strstr(error, "ended before") && in.length > 0)
        snprintf(error, error_size, "its host sent a malformed answer to INIT");
    buf_free(&lines.texts);
    buf_free(&in);
    return status;
}

/* fd moved above the descriptors the host gets them on, so that no dup2 overwrites another. */
static int move_high(int fd)
{
    int high = fcntl(fd, F_DUPFD_CLOEXEC, CHAN_LAST_FD + 1);
    close(fd);
    return high;
}

/*
 * The host's ends of its channel, each moved high (see move_high), the plugin's file, rpcd's
 * log, and with log_format = json the write ends of the captures of its stdout and stderr (-1
 * otherwise: both are then rpcd's stderr).
 */
typedef struct child_ends {
    int requests, answers, fast_answers, plugin, log, output, errors;
} child_ends;

static void close_if_open(int fd)
{
    if (fd >= 0)
        close(fd);
}

static void close_child_ends(const child_ends *ends)
{
    close_if_open(ends->requests);
    close_if_open(ends->answers);
    close_if_open(ends->fast_answers);
    close_if_open(ends->plugin);
    close_if_open(ends->log);
    close_if_open(ends->output);
    close_if_open(ends->errors);
}

/*
 * The channel (channel.h): a socket rpcd sends on and two pipes it reads the answers from; of
 * each pair, [0] is rpcd's end and [1] the host's. Returns 0 with rpcd's ends in *own and the
 * host's in *child, or -1 with errno (nothing left open).
 */
static int make_channel(int plugin_fd, iso_channel *own, child_ends *child)
{
    int requests[2] = {-1, -1}, answers[2] = {-1, -1}, fast[2] = {-1, -1};
    int status = -1;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, requests) == 0 &&
        pipe2(answers, O_CLOEXEC) == 0 && pipe2(fast, O_CLOEXEC) == 0) {
        *child = (child_ends){move_high(requests[1]),
                              move_high(answers[1]),
                              move_high(fast[1]),
                              fcntl(plugin_fd, F_DUPFD_CLOEXEC, CHAN_LAST_FD + 1),
                              fcntl(log_get_fd(), F_DUPFD_CLOEXEC, CHAN_LAST_FD + 1),
                              -1,
                              -1};
        requests[1] = answers[1] = fast[1] = -1; /* closed by move_high */
        status = child->requests >= 0 && child->answers >= 0 && child->fast_answers >= 0 &&
                         child->plugin >= 0 && child->log >= 0
                     ? 0
                     : -1;
        if (status != 0)
            close_child_ends(child);
    }
    if (status == 0) {
        *own = (iso_channel){requests[0], answers[0], fast[0]};
        return 0;
    }
    int saved = errno;
    int all[] = {requests[0], requests[1], answers[0], answers[1], fast[0], fast[1]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        close_if_open(all[i]);
    errno = saved;
    return -1;
}

void iso_channel_close(iso_channel *channel)
{
    close_if_open(channel->requests);
    close_if_open(channel->answers);
    close_if_open(channel->fast_answers);
    *channel = (iso_channel){-1, -1, -1};
}

/*
 * With log_format = json, the host's stdout and stderr become captures naming the plugin
 * (log_capture.h), and its log descriptor a relay that lets only JSON lines through as they
 * are; all end by themselves when the host and whatever it started are gone. Returns 0, or -1
 * with errno.
 */
static int capture_output(const char *name, child_ends *child)
{
    if (log_get_format() != LOG_FORMAT_JSON)
        return 0;
    if (lcap_start(name, "stdout", true, NULL, &child->output) != 0)
        return -1;
    child->output = move_high(child->output);
    if (child->output < 0 || lcap_start(name, "stderr", true, NULL, &child->errors) != 0)
        return -1;
    child->errors = move_high(child->errors);
    int relay = -1;
    if (child->errors < 0 || lcap_start_relay(name, &relay) != 0)
        return -1;
    close(child->log);
    child->log = move_high(relay);
    return child->log < 0 ? -1 : 0;
}

/*
 * rpcd's own program by the name the kernel gives it: a program under valgrind (or another
 * loader) is not what /proc/self/exe names, while readlink answers the program's own path. Once
 * the file is gone (deleted or replaced by an upgrade), /proc/self/exe still runs it.
 */
static const char *own_program(const char *program, char *path, size_t size)
{
    if (strcmp(program, "/proc/self/exe") != 0)
        return program;
    ssize_t length = readlink(program, path, size - 1);
    if (length <= 0 || (size_t)length >= size - 1)
        return program;
    path[length] = '\0';
    if (path[0] != '/' || strstr(path, " (deleted)") || access(path, X_OK) != 0)
        return program;
    return path;
}

static int start_process(const char *program, const child_ends *ends, pid_t *pid)
{
    char path[4096];
    program = own_program(program, path, sizeof path);
    posix_spawn_file_actions_t actions;
    if (posix_spawn_file_actions_init(&actions) != 0)
        return -1;
    int failed = posix_spawn_file_actions_adddup2(&actions, ends->requests, CHAN_HOST_FD);
    failed |= posix_spawn_file_actions_adddup2(&actions, ends->plugin, CHAN_PLUGIN_FD);
    failed |= posix_spawn_file_actions_adddup2(&actions, ends->answers, CHAN_ANSWER_FD);
    failed |= posix_spawn_file_actions_adddup2(&actions, ends->fast_answers, CHAN_FAST_ANSWER_FD);
    failed |= posix_spawn_file_actions_adddup2(&actions, ends->log, CHAN_LOG_FD);
    failed |= posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    /* What a plugin prints goes to the log, never into the protocol. */
    if (ends->output >= 0) {
        failed |= posix_spawn_file_actions_adddup2(&actions, ends->output, STDOUT_FILENO);
        failed |= posix_spawn_file_actions_adddup2(&actions, ends->errors, STDERR_FILENO);
    } else {
        failed |= posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
    }
    char *const argv[] = {(char *)ISO_HOST_NAME, (char *)"--plugin-host", NULL};
    posix_spawnattr_t attributes;
    failed |= posix_spawnattr_init(&attributes);
    /* A session of its own, and so a group of its own, which what the plugin starts shares: a
     * signal to rpcd's group (a terminal's, a service manager's) does not reach it, rpcd ends the
     * group with it, and no setpgid() can take it back into rpcd's group to signal it there. */
    /* Back to the default dispositions and an empty mask: the host's signals are its own. */
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    failed |= posix_spawnattr_setsigdefault(&attributes, &all);
    failed |= posix_spawnattr_setsigmask(&attributes, &none);
    failed |= posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK |
                                                        POSIX_SPAWN_SETSID);
    if (failed == 0)
        failed = posix_spawn(pid, program, &actions, &attributes, argv, environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    if (failed != 0) {
        errno = failed;
        return -1;
    }
    return 0;
}

int iso_spawn(const char *program, int plugin_fd, const cfg_plugin *config,
              const iso_settings *settings, int timeout_ms, iso_channel *channel, pid_t *pid,
              iso_host_info *info, char *error, size_t error_size)
{
    memset(info, 0, sizeof *info);
    iso_channel own;
    child_ends child_end;
    if (make_channel(plugin_fd, &own, &child_end) != 0) {
        snprintf(error, error_size, "cannot make its channel: %s", strerror(errno));
        return -1;
    }
    if (capture_output(config->name, &child_end) != 0) {
        snprintf(error, error_size, "cannot capture its output: %s", strerror(errno));
        close_child_ends(&child_end);
        iso_channel_close(&own);
        return -1;
    }
    pid_t child = -1;
    int started = start_process(program, &child_end, &child);
    int saved = errno;
    close_child_ends(&child_end);
    if (started != 0) {
        snprintf(error, error_size, "cannot start its host %s: %s", program, strerror(saved));
        iso_channel_close(&own);
        return -1;
    }
    snprintf(error, error_size, "its host ended before the plugin's init returned");
    if (send_init(own.requests, config, settings, error, error_size) != 0 ||
        read_answer(own.answers, timeout_ms, config->name, info, error, error_size) != 0) {
        iso_channel_close(&own);
        bool ended = strstr(error, "ended before") != NULL;
        int status = iso_reap(child, ended ? ISO_END_WAIT_MS : 0);
        /* How it ended, when it did by itself: the plugin's init crashed, or exited. */
        if (ended) {
            char how[96];
            iso_describe_status(status, how, sizeof how);
            size_t length = strlen(error);
            snprintf(error + length, error_size - length, " (%s)", how);
        }
        iso_host_info_free(info);
        return -1;
    }
    *channel = own;
    *pid = child;
    return 0;
}

void iso_host_info_free(iso_host_info *info)
{
    for (size_t i = 0; i < info->count; i++) {
        free(info->methods[i].name);
        free(info->methods[i].description);
        free(info->methods[i].params_schema);
        free(info->methods[i].title);
        free(info->methods[i].annotations);
        free(info->methods[i].output_schema);
        free(info->methods[i].icons);
        free(info->methods[i].mcp_descriptor);
    }
    free(info->methods);
    free(info->name);
    memset(info, 0, sizeof *info);
}

/*
 * Once pid (the host, the leader of its process group) has ended, and before it is reaped: the
 * rest of its group, what its plugin started and left there, which a host killed had no chance
 * to end. While the leader is a zombie its id, the group's, is no one else's; reaped, a new
 * process could take it and lead a group of its own. Returns pid's wait status.
 */
static int end_group_and_reap(pid_t pid)
{
    kill(-pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

/* Whether pid has ended, without reaping it; *error on a failure other than EINTR. */
static bool has_ended(pid_t pid, int flags, bool *error)
{
    siginfo_t info;
    memset(&info, 0, sizeof info);
    *error = false;
    if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT | flags) != 0) {
        *error = errno != EINTR;
        return false;
    }
    return info.si_pid == pid;
}

int iso_reap(pid_t pid, int wait_ms)
{
    long long deadline = clock_now_ms() + wait_ms;
    for (;;) {
        bool error;
        if (has_ended(pid, WNOHANG, &error))
            return end_group_and_reap(pid);
        if (error)
            return 0; /* not a child of rpcd's (reaped already): nothing to wait for */
        if (clock_now_ms() >= deadline)
            break;
        struct timespec nap = {0, 2 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    kill(pid, SIGKILL);
    bool error = false;
    while (!has_ended(pid, 0, &error) && !error) {
    }
    return end_group_and_reap(pid);
}

void iso_describe_status(int status, char *out, size_t size)
{
    if (WIFSIGNALED(status)) {
        const char *name = sigabbrev_np(WTERMSIG(status));
        snprintf(out, size, "killed by signal %d (SIG%s)", WTERMSIG(status), name ? name : "?");
    } else if (WIFEXITED(status)) {
        snprintf(out, size, "exited with status %d", WEXITSTATUS(status));
    } else {
        snprintf(out, size, "ended (wait status %d)", status);
    }
}
