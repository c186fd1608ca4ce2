/* SPDX-License-Identifier: MIT */
/*
 * The stdio transport: the protocol over the client's stdin and stdout. It takes them over before
 * plugins load, reads with a plain read() that stopping interrupts with the wake-up signal, and
 * writes with out_write_fd. The serve loop sees only its read, write and stop-reading functions:
 * another stream (a socket handed over by a service manager) is a sibling with the same three.
 */
#ifndef RPCD_TRANSPORT_STDIO_H
#define RPCD_TRANSPORT_STDIO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

enum stdio_status {
    STDIO_OK = 0,
    STDIO_CLOSED = -1, /* the caller closed stdin or stdout (or stderr, and /dev/null cannot
                          take its place): an I/O condition of the caller's making */
    STDIO_FAILED = -2, /* rpcd cannot set up what it needs (no real-time signal is free, or the
                          descriptors cannot be moved) */
};

/*
 * Before the first plugin loads: chooses the wake-up signal (sig_wake_install), makes a closed
 * stderr /dev/null, and moves the protocol off fds 0 and 1 (pfd_take), so that what a plugin
 * writes to stdout or reads from stdin never touches the protocol stream. Returns STDIO_OK with
 * *input_fd and *output_fd set to the private descriptors (never closed: the process keeps them),
 * or STDIO_CLOSED or STDIO_FAILED with a one-line message in error.
 */
int stdio_take_over(int *input_fd, int *output_fd, char *error, size_t error_size);

typedef struct stdio_transport stdio_transport;

/*
 * A transport reading input_fd and writing output_fd (both borrowed). It makes the pipe that
 * stdio_stop_reading puts in place of input_fd now, so that it is there when a stop comes: this
 * fails when no descriptor is left (or no real-time signal is free for the wake-up signal).
 * Returns 0 and *out (new), or -1 with errno.
 */
int stdio_new(int input_fd, int output_fd, stdio_transport **out);

/* Frees the transport; input_fd and output_fd stay open. Only once nothing reads or writes. */
void stdio_free(stdio_transport *transport);

/*
 * An lr_read_fn over the input (transport: a stdio_transport): reads what is there, waits for
 * input when there is none (in poll() when the descriptor is non-blocking, whose flag belongs to
 * the client too and stays as it is), retries after a signal. Returns the count, 0 at the end of
 * input, or -1 with errno: ECANCELED once stdio_stop_reading was called. One reading thread.
 */
ssize_t stdio_read(void *transport, char *bytes, size_t capacity);

/*
 * Has stdio_read call before_read(context) on the reading thread before each read() of the
 * input, the first and each one after a signal interrupted the one before (EINTR): work a
 * signal handler may not do itself can wait there. NULL: nothing. Before the first read.
 */
void stdio_set_before_read(stdio_transport *transport, void (*before_read)(void *context),
                           void *context);

/*
 * Makes the read in progress, or the next one, return -1 with errno ECANCELED, for good: a read
 * waiting for input is interrupted with the wake-up signal, and the input is replaced by a
 * descriptor at its end for the read about to start. Async-signal-safe, any thread.
 */
void stdio_stop_reading(void *transport);

/* An out_write_fn over the output (transport: a stdio_transport): see out_write_fd. */
int stdio_write(void *transport, const struct iovec *parts, int part_count);

/*
 * Whether the output's reader has gone: true when the descriptor reports an error or a hang-up
 * (a pipe whose read end is closed, a Unix socket closed by its peer, a tty hung up), without
 * writing or waiting. A full pipe, a file, /dev/null, or a socket whose peer only shut down its
 * sending is not gone; nor, until a write fails, is a TCP peer that closed (it looks the same).
 * Any thread.
 */
bool stdio_output_closed(void *transport);

#endif
