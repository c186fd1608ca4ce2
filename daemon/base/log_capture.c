/* SPDX-License-Identifier: MIT */
/*
 * Pipes whose reader threads turn a plugin's raw output into log lines (log_output): cut at
 * LOG_OUTPUT_MOST bytes, the rest of a longer line dropped, so that memory stays bounded whatever
 * a plugin writes.
 */
#include "base/log_capture.h"

#include "base/log.h"

#include <jansson.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct log_capture {
    int read_fd;
    int stop[2]; /* a byte in stop[1]: log what the pipe holds, then end */
    bool detached;
    const char *stream;
    char *plugin; /* owned, or NULL */
    pthread_t thread;
    bool relay;      /* lines that are JSON objects go out as they are (lcap_start_relay) */
    size_t capacity; /* of text: LOG_OUTPUT_MOST, or a host's longest log line when relaying */
    size_t used;     /* bytes of the line so far in text */
    bool dropping;   /* the line was cut: its rest is dropped up to its newline */
    char text[];
};

/* The longest line a host's own log writes (log.c's longest JSON line): relayed whole. */
enum { RELAY_MOST = 8192 };

static void capture_free(log_capture *capture)
{
    close(capture->read_fd);
    if (capture->stop[0] >= 0) {
        close(capture->stop[0]);
        close(capture->stop[1]);
    }
    free(capture->plugin);
    free(capture);
}

/* Whether text is one JSON object and nothing else: a line of the log as it is. */
static bool is_log_line(const char *text, size_t length)
{
    json_t *value = json_loadb(text, length, 0, NULL);
    bool object = json_is_object(value);
    json_decref(value);
    return object;
}

/* One whole line: relayed when it is a log line already, else wrapped (cut past the most). */
static void capture_line(log_capture *capture)
{
    if (capture->relay && is_log_line(capture->text, capture->used)) {
        log_relay(capture->text, capture->used);
        return;
    }
    bool cut = capture->used > LOG_OUTPUT_MOST;
    log_output(capture->plugin, capture->stream, capture->text,
               cut ? LOG_OUTPUT_MOST : capture->used, cut);
}

/* Takes bytes into the line, logging each line as it ends or fills up. */
static void capture_take(log_capture *capture, const char *bytes, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        if (bytes[i] == '\n') {
            if (!capture->dropping)
                capture_line(capture);
            capture->used = 0;
            capture->dropping = false;
        } else if (!capture->dropping) {
            capture->text[capture->used++] = bytes[i];
            if (capture->used == capture->capacity) {
                log_output(capture->plugin, capture->stream, capture->text, LOG_OUTPUT_MOST, true);
                capture->used = 0;
                capture->dropping = true;
            }
        }
    }
}

static void *capture_main(void *context)
{
    log_capture *capture = context;
    struct pollfd fds[2] = {{capture->read_fd, POLLIN, 0}, {capture->stop[0], POLLIN, 0}};
    bool stopping = false;
    char chunk[4096];
    for (;;) {
        if (!stopping && poll(fds, capture->stop[0] >= 0 ? 2 : 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (!stopping && (fds[1].revents & POLLIN)) {
            /* What was written before the stop is in the pipe: read it without waiting. */
            stopping = true;
            fcntl(capture->read_fd, F_SETFL, O_NONBLOCK);
        }
        ssize_t got = read(capture->read_fd, chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        capture_take(capture, chunk, (size_t)got);
    }
    /* A last line without its newline is a line too. */
    if (capture->used > 0 && !capture->dropping)
        capture_line(capture);
    if (capture->detached)
        capture_free(capture);
    return NULL;
}

static int start(const char *plugin, const char *stream, bool detached, bool relay,
                 log_capture **out, int *write_fd)
{
    int ends[2] = {-1, -1};
    size_t capacity = relay ? RELAY_MOST : LOG_OUTPUT_MOST;
    log_capture *capture = calloc(1, sizeof *capture + capacity);
    if (!capture || pipe2(ends, O_CLOEXEC) != 0)
        goto fail;
    capture->read_fd = ends[0];
    capture->stop[0] = capture->stop[1] = -1;
    capture->detached = detached;
    capture->stream = stream;
    capture->relay = relay;
    capture->capacity = capacity;
    if ((plugin && !(capture->plugin = strdup(plugin))) ||
        (!detached && pipe2(capture->stop, O_CLOEXEC) != 0))
        goto fail;
    pthread_attr_t attributes;
    if (pthread_attr_init(&attributes) != 0)
        goto fail;
    if (detached)
        pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    /* Signals are for rpcd's main thread. */
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    /* Not into capture: a detached thread may have freed it by the time pthread_create returns. */
    pthread_t thread;
    int failed = pthread_create(&thread, &attributes, capture_main, capture);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    pthread_attr_destroy(&attributes);
    if (failed != 0) {
        errno = failed;
        goto fail;
    }
    if (!detached)
        capture->thread = thread;
    *write_fd = ends[1];
    if (out)
        *out = detached ? NULL : capture;
    return 0;
fail:;
    int saved = errno;
    if (ends[1] >= 0)
        close(ends[1]);
    if (capture && ends[0] >= 0) {
        capture->read_fd = ends[0];
        capture_free(capture);
    } else {
        free(capture);
    }
    errno = saved;
    return -1;
}

int lcap_start(const char *plugin, const char *stream, bool detached, log_capture **out,
               int *write_fd)
{
    return start(plugin, stream, detached, false, out, write_fd);
}

int lcap_start_relay(const char *plugin, int *write_fd)
{
    return start(plugin, "log", true, true, NULL, write_fd);
}

void lcap_stop(log_capture *capture)
{
    if (!capture)
        return;
    ssize_t ignored = write(capture->stop[1], "", 1);
    (void)ignored;
    pthread_join(capture->thread, NULL);
    capture_free(capture);
}

/* ---- The daemon's own fds 1 and 2 ---------------------------------------------------------- */

/* Set by lcap_take_std: the captures, and copies of their write ends to point fds 1 and 2 back at
 * after a plugin's init. */
static struct {
    bool taken;
    log_capture *out, *err;
    int out_fd, err_fd, log_fd;
} std_capture = {false, NULL, NULL, -1, -1, -1};

int lcap_take_std(char *error, size_t error_size)
{
    int log_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    int out_fd = -1, err_fd = -1;
    log_capture *out = NULL, *err = NULL;
    fflush(stdout);
    if (log_fd < 0 || lcap_start(NULL, "stdout", false, &out, &out_fd) != 0 ||
        lcap_start(NULL, "stderr", false, &err, &err_fd) != 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
        dup2(err_fd, STDERR_FILENO) < 0) {
        snprintf(error, error_size, "cannot capture what plugins print: %s", strerror(errno));
        if (log_fd >= 0) {
            dup2(log_fd, STDOUT_FILENO);
            dup2(log_fd, STDERR_FILENO);
            close(log_fd);
        }
        if (out_fd >= 0)
            close(out_fd);
        if (err_fd >= 0)
            close(err_fd);
        lcap_stop(out);
        lcap_stop(err);
        return -1;
    }
    log_set_fd(log_fd);
    std_capture.taken = true;
    std_capture.out = out;
    std_capture.err = err;
    std_capture.out_fd = out_fd;
    std_capture.err_fd = err_fd;
    std_capture.log_fd = log_fd;
    return 0;
}

void lcap_release_std(void)
{
    if (!std_capture.taken)
        return;
    fflush(stdout);
    dup2(std_capture.log_fd, STDOUT_FILENO);
    dup2(std_capture.log_fd, STDERR_FILENO);
    close(std_capture.out_fd);
    close(std_capture.err_fd);
    lcap_stop(std_capture.out);
    lcap_stop(std_capture.err);
    /* The log keeps its descriptor open: a host's capture may still be writing its last lines. */
    std_capture.taken = false;
}

void lcap_plugin_begin(const char *name, lcap_redirect *redirect)
{
    *redirect = (lcap_redirect){NULL, NULL};
    if (!std_capture.taken)
        return;
    int out_fd = -1, err_fd = -1;
    fflush(stdout);
    /* Without the plugin's own captures its output still reaches the daemon's, unnamed. */
    if (lcap_start(name, "stdout", false, &redirect->out, &out_fd) == 0) {
        dup2(out_fd, STDOUT_FILENO);
        close(out_fd);
    }
    if (lcap_start(name, "stderr", false, &redirect->err, &err_fd) == 0) {
        dup2(err_fd, STDERR_FILENO);
        close(err_fd);
    }
}

void lcap_plugin_end(lcap_redirect *redirect)
{
    if (!std_capture.taken)
        return;
    fflush(stdout);
    dup2(std_capture.out_fd, STDOUT_FILENO);
    dup2(std_capture.err_fd, STDERR_FILENO);
    lcap_stop(redirect->out);
    lcap_stop(redirect->err);
    *redirect = (lcap_redirect){NULL, NULL};
}
