/* SPDX-License-Identifier: MIT */
/*
 * The read-dispatch loop, and the three ways it ends: end of input (finish everything), a stop
 * (cancel, wait a bounded time), a closed output (nobody to answer: cancel and go).
 */
#include "server.h"

#include "call.h"
#include "dispatch.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct server {
    srv_options options;
    const registry *methods;
    out_write_fn write;
    void *sink;
    output *out;
    call_context *calls;
    int wake[2]; /* a byte in wake[1] makes srv_read_fd return */
    atomic_bool stopping;
    /* Set before the reader is woken: the output marks itself failed only once the write
     * returns, and a reader woken before that went back to waiting for input for good. */
    atomic_bool write_failed;
};

static void wake_reader(server *srv)
{
    char byte = 1;
    ssize_t ignored = write(srv->wake[1], &byte, 1);
    (void)ignored; /* a full pipe already wakes the reader */
}

/* Writes through the caller's function; a failure also wakes a reader blocked on input. */
static int write_through(void *sink, const struct iovec *parts, int part_count)
{
    server *srv = sink;
    int status = srv->write(srv->sink, parts, part_count);
    if (status != 0) {
        atomic_store(&srv->write_failed, true);
        wake_reader(srv);
    }
    return status;
}

enum { LONG_LINE_BYTES = 64 * 1024 };

/*
 * The reader is about to read (and maybe wait): calls it held back go to the workers, and what
 * is written from now on goes out at once. Inside a long line, reading waits while the calls in
 * flight hold max_in_flight_bytes: memory stays bounded however far ahead a client sends large
 * messages, and short lines (a cancel, a ping) are never held back by the limit.
 */
static void reader_idle(void *context, bool idle, size_t held_bytes)
{
    server *srv = context;
    if (idle)
        call_submit_group(srv->calls);
    out_set_reader_idle(srv->out, idle);
    if (idle && held_bytes >= LONG_LINE_BYTES)
        call_wait_for_bytes(srv->calls);
}

int srv_new(const registry *methods, const srv_options *options, out_write_fn write, void *sink,
            server **out)
{
    server *srv = calloc(1, sizeof *srv);
    if (!srv)
        return -1;
    srv->options = *options;
    srv->methods = methods;
    srv->write = write;
    srv->sink = sink;
    srv->wake[0] = srv->wake[1] = -1;
    if (pipe2(srv->wake, O_CLOEXEC | O_NONBLOCK) != 0 ||
        out_new(write_through, srv, &srv->out) != 0)
        goto fail;
    out_set_ordered(srv->out, options->ordered);
    call_settings settings = {
        .out = srv->out,
        .methods = methods,
        .max_depth = options->max_depth,
        .workers = options->workers,
        .max_in_flight = options->max_in_flight,
        .max_in_flight_bytes = options->max_in_flight_bytes,
    };
    if (call_context_new(&settings, &srv->calls) != 0)
        goto fail;
    *out = srv;
    return 0;
fail:
    srv_free(srv);
    return -1;
}

void srv_free(server *srv)
{
    if (!srv)
        return;
    call_context_free(srv->calls);
    out_free(srv->out);
    if (srv->wake[0] >= 0)
        close(srv->wake[0]);
    if (srv->wake[1] >= 0)
        close(srv->wake[1]);
    free(srv);
}

void srv_stop(server *srv)
{
    atomic_store(&srv->stopping, true);
    call_cancel_all(srv->calls);
    call_interrupt_waits(srv->calls);
    wake_reader(srv);
}

ssize_t srv_read_fd(void *source, char *bytes, size_t capacity)
{
    srv_fd_source *input = source;
    struct pollfd fds[2] = {
        {.fd = input->fd, .events = POLLIN},
        {.fd = input->srv->wake[0], .events = POLLIN},
    };
    for (;;) {
        /* write_failed is set before the output marks itself failed: it is the one to check. */
        if (atomic_load(&input->srv->stopping) || atomic_load(&input->srv->write_failed)) {
            errno = ECANCELED;
            return -1;
        }
        int ready = poll(fds, 2, -1);
        if (ready < 0 && errno != EINTR)
            return -1;
        if (ready <= 0)
            continue;
        if (fds[1].revents) {
            char drain[16];
            while (read(input->srv->wake[0], drain, sizeof drain) > 0)
                ;
            continue;
        }
        ssize_t n = read(input->fd, bytes, capacity);
        if (n >= 0 || errno != EINTR)
            return n;
    }
}

int srv_run(server *srv, lr_read_fn read, void *source)
{
    line_reader *reader = NULL;
    if (lr_new(read, source, srv->options.max_line_bytes, &reader) != 0)
        return SRV_NO_MEMORY;
    lr_set_idle_hook(reader, reader_idle, srv);
    /* Calls started from one read are handed to the workers together (see reader_idle). */
    call_begin_group(srv->calls);

    dispatcher dispatch = {
        .methods = srv->methods,
        .calls = srv->calls,
        .out = srv->out,
        .max_depth = srv->options.max_depth,
        .max_batch = srv->options.max_batch,
        .tools = srv->options.tools,
    };
    int result = SRV_DONE;
    while (!atomic_load(&srv->stopping) && !out_failed(srv->out)) {
        const char *line;
        size_t length;
        int status = lr_next(reader, &line, &length);
        if (status == LR_LINE) {
            /* Scanning a long line takes a while: calls held back must not wait for it. */
            if (length >= LONG_LINE_BYTES)
                call_submit_group(srv->calls);
            disp_line(&dispatch, line, length);
        } else if (status == LR_TOO_LONG) {
            disp_line_too_long(&dispatch, length, srv->options.max_line_bytes);
        } else if (status == LR_EOF) {
            break;
        } else if (status == LR_ERROR) {
            if (errno != ECANCELED) {
                log_message(LOG_ERROR, "reading requests failed: %s", strerror(errno));
                result = SRV_INPUT_FAILED;
            }
            break;
        } else {
            log_message(LOG_ERROR, "out of memory while reading a line");
            result = SRV_NO_MEMORY;
            break;
        }
    }
    call_end_group(srv->calls);
    lr_free(reader);
    /* From here on nothing is read: whatever is still in flight, a flush must not wait. */
    out_set_reader_idle(srv->out, true);

    bool stopped = atomic_load(&srv->stopping);
    if (out_failed(srv->out) || result != SRV_DONE || stopped) {
        /* Nobody to answer, or asked to go: tell the calls, give them the grace period. */
        call_cancel_all(srv->calls);
        call_interrupt_waits(srv->calls);
        if (call_wait_idle(srv->calls, srv->options.shutdown_grace_ms) != 0) {
            log_message(LOG_WARNING, "calls still running after %d ms; leaving them",
                        srv->options.shutdown_grace_ms);
            if (result == SRV_DONE)
                result = SRV_STOPPED_EARLY;
        } else if (result == SRV_DONE) {
            result = SRV_STOPPED;
        }
    } else {
        call_wait_idle(srv->calls, -1); /* end of input: every request read gets its answer */
    }
    if (out_flush(srv->out) != 0 || out_failed(srv->out)) {
        log_message(LOG_ERROR, "writing responses failed: the client closed its end");
        result = SRV_OUTPUT_FAILED;
    }
    return result;
}

bool srv_finished(server *srv)
{
    return call_wait_idle(srv->calls, 0) == 0;
}

int srv_serve(const registry *methods, const srv_options *options, lr_read_fn read, void *source,
              out_write_fn write, void *sink)
{
    server *srv;
    if (srv_new(methods, options, write, sink, &srv) != 0)
        return SRV_NO_MEMORY;
    int result = srv_run(srv, read, source);
    if (srv_finished(srv))
        srv_free(srv); /* else calls still hold it: the process is about to end anyway */
    return result;
}
