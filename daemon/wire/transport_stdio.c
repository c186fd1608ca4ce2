/* SPDX-License-Identifier: MIT */
/*
 * The protocol over stdin and stdout: the take-over of the standard descriptors at start-up, a
 * read that a stop interrupts, and the write.
 */
#include "wire/transport_stdio.h"

#include "base/output.h"
#include "wire/protocol_fds.h"
#include "base/signals.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * The reader waits in a plain read() of the input, not in poll() on it and a wake-up pipe: that
 * is one system call less a line, a visible part of a one-core ping-pong (bench/README.md,
 * "Figures behind design choices"). What must make it return (a stop, a failed write) interrupts
 * it with the wake-up signal instead, a real-time signal whose handler does nothing (see
 * signals.c for which one, and why). The signal may come just before the reader enters read(),
 * too early to interrupt it: so the input is first replaced by the read end of a pipe whose write
 * end is closed, which that read() then finds at its end. A read already waiting holds the old
 * input and needs the signal.
 */
struct stdio_transport {
    int input;
    int output;
    int ended; /* the read end of a pipe whose write end is closed */
    atomic_bool stopped;
    /* Set while the reader is in (or about to enter) read() or poll(): then it needs the signal. */
    atomic_bool reading;
    /* The reading thread, known from its first read on; only that thread writes these. */
    pthread_t reader;
    bool reader_known;
    void (*before_read)(void *context); /* see stdio_set_before_read */
    void *before_read_context;
};

/*
 * The name of a protocol descriptor the caller closed before starting rpcd ("<&-", ">&-"), or
 * NULL when both are open: an I/O condition of the caller's making, not a failure of rpcd.
 */
static const char *closed_protocol_fd(void)
{
    if (fcntl(STDIN_FILENO, F_GETFD) < 0 && errno == EBADF)
        return "stdin";
    if (fcntl(STDOUT_FILENO, F_GETFD) < 0 && errno == EBADF)
        return "stdout";
    return NULL;
}

int stdio_take_over(int *input_fd, int *output_fd, char *error, size_t error_size)
{
    if (sig_wake_install() != 0) {
        snprintf(error, error_size,
                 "no real-time signal is free to wake the reader with (all of SIGRTMIN + 2 to "
                 "SIGRTMAX - 1 are ignored or handled already)");
        return STDIO_FAILED;
    }
    const char *closed = closed_protocol_fd();
    if (closed) {
        snprintf(error, error_size, "%s is closed: rpcd speaks its protocol over stdin and stdout",
                 closed);
        return STDIO_CLOSED;
    }
    /* A closed stderr is /dev/null from now on: otherwise the next file opened (a plugin's
     * database, say) would become fd 2 and receive every log line. */
    if (fcntl(STDERR_FILENO, F_GETFD) < 0 && errno == EBADF &&
        open("/dev/null", O_WRONLY | O_NOCTTY) != STDERR_FILENO) {
        snprintf(error, error_size, "stderr is closed and /dev/null cannot take its place");
        return STDIO_CLOSED;
    }
    return pfd_take(input_fd, output_fd, error, error_size) == 0 ? STDIO_OK : STDIO_FAILED;
}

int stdio_new(int input_fd, int output_fd, stdio_transport **out)
{
    if (sig_wake_install() != 0) {
        errno = EAGAIN;
        return -1;
    }
    stdio_transport *transport = calloc(1, sizeof *transport);
    if (!transport)
        return -1;
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) {
        free(transport);
        return -1;
    }
    close(ends[1]);
    transport->input = input_fd;
    transport->output = output_fd;
    transport->ended = ends[0];
    atomic_init(&transport->stopped, false);
    atomic_init(&transport->reading, false);
    *out = transport;
    return 0;
}

void stdio_free(stdio_transport *transport)
{
    if (!transport)
        return;
    close(transport->ended);
    free(transport);
}

/* The wake-up signal must reach the reading thread, whatever mask it inherited. */
static void know_reader(stdio_transport *transport)
{
    transport->reader = pthread_self();
    transport->reader_known = true;
    sig_wake_unblock_here();
}

/*
 * Waits until fd has input, its end or an error to report (after a read failed with EAGAIN).
 * Returns 0, or -1 with errno (EINTR when a signal came: the caller looks for a stop, then reads).
 */
static int wait_readable(int fd)
{
    struct pollfd wanted = {fd, POLLIN, 0};
    /* Readiness includes the end and errors: the read that follows reports them. */
    return poll(&wanted, 1, -1) < 0 ? -1 : 0;
}

ssize_t stdio_read(void *source, char *bytes, size_t capacity)
{
    stdio_transport *transport = source;
    if (!transport->reader_known)
        know_reader(transport);
    /* Set before the flag is checked: a stop that the check misses sees it, and signals. */
    atomic_store(&transport->reading, true);
    ssize_t n;
    for (;;) {
        if (atomic_load(&transport->stopped)) {
            errno = ECANCELED;
            n = -1;
            break;
        }
        if (transport->before_read)
            transport->before_read(transport->before_read_context);
        n = read(transport->input, bytes, capacity);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            /* A non-blocking stdin (a parent may share one with rpcd, and the flag belongs to the
             * open file, the parent's too: it stays set): wait for input in poll(), which a stop
             * interrupts as it does read(); EINTR then goes round to the check above. */
            if (wait_readable(transport->input) == 0 || errno == EINTR)
                continue;
            n = -1;
        }
        if (n >= 0 || errno != EINTR) {
            /* The end a stop put in place of the input is no end of input. */
            if (n == 0 && atomic_load(&transport->stopped)) {
                errno = ECANCELED;
                n = -1;
            }
            break;
        }
    }
    int saved_errno = errno;
    atomic_store(&transport->reading, false);
    errno = saved_errno;
    return n;
}

void stdio_set_before_read(stdio_transport *transport, void (*before_read)(void *context),
                           void *context)
{
    transport->before_read = before_read;
    transport->before_read_context = context;
}

/* Only a flag, dup2 and pthread_kill: nothing here may take a lock. */
void stdio_stop_reading(void *source)
{
    stdio_transport *transport = source;
    int saved_errno = errno;
    atomic_store(&transport->stopped, true);
    dup2(transport->ended, transport->input);
    if (atomic_load(&transport->reading) && !pthread_equal(pthread_self(), transport->reader))
        pthread_kill(transport->reader, sig_wake_number());
    errno = saved_errno;
}

int stdio_write(void *sink, const struct iovec *parts, int part_count)
{
    stdio_transport *transport = sink;
    return out_write_fd(&transport->output, parts, part_count);
}

bool stdio_output_closed(void *source)
{
    stdio_transport *transport = source;
    /* POLLERR and POLLHUP come whatever is asked for; POLLOUT alone would only say "room". */
    struct pollfd reader = {transport->output, POLLOUT, 0};
    return poll(&reader, 1, 0) == 1 && (reader.revents & (POLLERR | POLLHUP)) != 0;
}
