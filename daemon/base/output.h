/* SPDX-License-Identifier: MIT */
/*
 * The one writer of protocol lines. Any thread may write; each line goes out whole, never
 * interleaved with another. Lines are batched while the reader still has input to work on and
 * flushed as soon as it would wait, so a lone request is answered at once and a pipelined
 * stream costs one write() per burst rather than per line.
 */
#ifndef RPCD_OUTPUT_H
#define RPCD_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* The most parts one call of an out_write_fn is given. */
enum { OUT_PARTS_MOST = 16 };

/*
 * Writes the bytes of all parts (1 to OUT_PARTS_MOST, borrowed), in order, or fails: returns 0,
 * or -1 with errno. Parts let a long line go out from where its pieces are, in one writev.
 */
typedef int (*out_write_fn)(void *sink, const struct iovec *parts, int part_count);

typedef struct output output;

/* Creates an output over sink (borrowed). Returns 0 and *out (new), or -1. */
int out_new(out_write_fn write, void *sink, output **out);
/*
 * Flushes what is pending and frees the output, once no thread's batch (out_batch_begin) holds a
 * line of it: never call it inside a batch that wrote to it.
 */
void out_free(output *out);

/*
 * Appends one line made of the given parts, plus "\n". The parts are copied once, into the
 * pending buffer; no part may hold a newline. A line of 64 KiB or more is written at once
 * instead, after what is pending, its large parts without a copy: the call returns when it is
 * out. Returns 0, or -1 when the output has failed (the client closed it) or memory ran out.
 * Thread-safe.
 */
int out_write_line(output *out, const struct iovec *parts, int part_count);

/*
 * Ordered mode, for clients that want responses in request order: a response takes a ticket
 * when its request is read, and a line written with a ticket waits until every earlier ticket
 * has been written or dropped. Lines without a ticket (notifications) go out at once.
 */
void out_set_ordered(output *out, bool ordered);

/* A ticket for the next response, or 0 (no ordering) when not in ordered mode. Thread-safe. */
uint64_t out_ticket_take(output *out);

/* Writes a line for ticket (0: at once, as out_write_line). Returns as out_write_line. */
int out_write_ticket(output *out, uint64_t ticket, const struct iovec *parts, int part_count);

/*
 * Gives a ticket up: its request ends without a response. A line written later for a ticket
 * given up is dropped once the lines after it have gone out. Thread-safe.
 */
void out_ticket_drop(output *out, uint64_t ticket);

/* Writes what is pending. Returns 0, or -1 when the output has failed. Thread-safe. */
int out_flush(output *out);

/*
 * Tells the output whether the reader is waiting for input. While it is, every line is flushed
 * as soon as it is written; when it starts waiting, pending lines are flushed. Thread-safe.
 */
void out_set_reader_idle(output *out, bool idle);

/*
 * A batch on the calling thread, for a thread that ends many calls at once (an isolated plugin's
 * reader thread applying one read of answers): between out_batch_begin and out_batch_end, the
 * lines this thread writes while the reader is idle wait, and out_batch_end writes them in one
 * go (when the reader is still idle; otherwise they go when it next waits, as any line). Lines
 * of other threads, and a batch's lines past the size threshold, go as usual. Batches do not
 * nest; the thread must not wait on anything but the output between the two calls.
 */
void out_batch_begin(void);
/* Ends this thread's batch. Returns 0, or -1 when the output has failed. */
int out_batch_end(void);
/* True once a write has failed (for instance EPIPE); later lines are dropped. Thread-safe. */
bool out_failed(const output *out);
/* The errno of the first write that failed (EPIPE: the client closed its end), 0 if none. */
int out_error(const output *out);
/*
 * Marks the output failed as a write failing with error would, for a sink known to be gone
 * before anything more is written to it: later lines are dropped, and out_error gives error
 * unless a write failed first. Thread-safe.
 */
void out_set_failed(output *out, int error);

/*
 * For a process about to die (a fatal signal, exit() from a plugin, the end of a stop's grace
 * period while a handler holds the reading thread): takes the output for good, its locks never
 * given back, waiting at most wait_ms in all for other threads to let go of it, and writes the
 * complete lines waiting to go out, parked ones included. Async-signal-safe as far as the write
 * function is (out_write_fd is): no allocation, only trylock and nanosleep. Returns 0, or -1 when
 * nothing may be written (the output stayed busy, a write was under way on this thread, or the
 * output failed, here or before).
 */
int out_seize_dying(output *out, int wait_ms);
/* After out_seize_dying: writes one line of parts (fewer than OUT_PARTS_MOST) and "\n". */
int out_write_seized(output *out, const struct iovec *parts, int part_count);

/*
 * Writes to a file descriptor (sink points to an int) with writev, resuming after EINTR and
 * short writes. On a non-blocking descriptor, EAGAIN waits in poll() for room instead of failing.
 */
int out_write_fd(void *sink, const struct iovec *parts, int part_count);

#endif
