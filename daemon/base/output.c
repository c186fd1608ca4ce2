/* SPDX-License-Identifier: MIT */
/*
 * Mutex-guarded pending buffer in front of a write function. The write itself runs outside that
 * mutex, one writer at a time: lines finished meanwhile pile up and leave in the writer's next
 * write instead of each waiting for the lock and making a system call of its own.
 */
#include "base/output.h"

#include "base/lock.h"

#include "base/buffer.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Past this much pending output, write even while input keeps coming: memory stays bounded. A
 * line this long is written from its own parts, not copied (its small parts still are).
 */
enum { FLUSH_THRESHOLD = 64 * 1024, SMALL_PART_BYTES = 4096 };

/* The most parts a long line may have to be written from them (the daemon's lines have 5). */
enum { OUT_LINE_PARTS_MOST = OUT_PARTS_MOST / 2 - 1 };

/* A response that is ready before the responses it must follow. */
typedef struct parked_line {
    enum { TICKET_WAITING, TICKET_READY, TICKET_DROPPED } state;
    buffer line; /* with its newline */
} parked_line;

struct output {
    pthread_mutex_t lock; /* guards everything below but writing */
    out_write_fn write;
    void *sink;
    buffer pending;
    bool reader_idle;
    size_t batches_holding; /* threads whose batch (out_batch_begin) holds a line of it */
    atomic_bool failed;
    /* A write to the sink is under way (a signal may have interrupted it on its own thread). */
    atomic_bool write_busy;
    /* The state lock guards is being changed (see take_state). */
    atomic_bool changing;
    atomic_int write_errno; /* why the first failed write failed */

    /* Held by the one thread writing; taken before lock, or tried while holding it. */
    pthread_mutex_t write_lock;
    buffer writing;    /* the write_lock holder's: what it is writing */
    bool flush_wanted; /* someone wanted pending out while a write went on */

    atomic_bool ordered;
    uint64_t next_ticket;   /* the next one handed out; tickets start at 1 */
    uint64_t next_to_write; /* the oldest ticket not yet written or dropped */
    parked_line *parked;    /* ring indexed by ticket % parked_capacity */
    size_t parked_capacity;
};

/*
 * The state lock, and a mark that the state it guards is being changed. A dying thread that
 * seizes the output (out_seize_dying) and finds the mark set has interrupted its own thread in
 * the middle of a change (a buffer being reallocated, say): with one thread the lock is not even
 * taken, so the mark is all that tells. It then writes nothing.
 */
static void take_state(output *out)
{
    lock_take(&out->lock);
    atomic_store_explicit(&out->changing, true, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
}

static void release_state(output *out)
{
    atomic_signal_fence(memory_order_seq_cst);
    atomic_store_explicit(&out->changing, false, memory_order_relaxed);
    lock_release(&out->lock);
}

/* Parts to the sink, marked busy meanwhile for out_seize_dying. */
static int write_parts(output *out, const struct iovec *parts, int part_count)
{
    atomic_store_explicit(&out->write_busy, true, memory_order_relaxed);
    int status = out->write(out->sink, parts, part_count);
    atomic_store_explicit(&out->write_busy, false, memory_order_relaxed);
    if (status != 0) {
        int none = 0;
        atomic_compare_exchange_strong(&out->write_errno, &none, errno);
    }
    return status;
}

/* One buffer to the sink. */
static int write_bytes(output *out, const char *data, size_t length)
{
    struct iovec part = {(void *)data, length};
    return write_parts(out, &part, 1);
}

int out_new(out_write_fn write, void *sink, output **out)
{
    output *o = calloc(1, sizeof *o);
    if (!o)
        return -1;
    if (pthread_mutex_init(&o->lock, NULL) != 0) {
        free(o);
        return -1;
    }
    if (pthread_mutex_init(&o->write_lock, NULL) != 0) {
        pthread_mutex_destroy(&o->lock);
        free(o);
        return -1;
    }
    o->write = write;
    o->sink = sink;
    *out = o;
    return 0;
}

/*
 * Writes pending out, and whatever is added meanwhile that someone wanted flushed. Called with
 * both locks held; returns with lock held and write_lock released.
 */
static int write_out_locked(output *out)
{
    int status = 0;
    for (;;) {
        out->flush_wanted = false;
        if (atomic_load(&out->failed)) {
            buf_clear(&out->pending);
            status = -1;
            break;
        }
        if (out->pending.length == 0)
            break;
        buffer swap = out->writing;
        out->writing = out->pending;
        out->pending = swap;
        release_state(out);
        int written = write_bytes(out, out->writing.data, out->writing.length);
        buf_clear(&out->writing);
        /* A burst of large lines must not pin its peak memory for the rest of the run. */
        if (out->writing.capacity > 4 * FLUSH_THRESHOLD)
            buf_free(&out->writing);
        take_state(out);
        if (written != 0) {
            atomic_store(&out->failed, true);
            buf_clear(&out->pending);
            status = -1;
            break;
        }
        if (!out->flush_wanted)
            break;
    }
    lock_release(&out->write_lock);
    return status;
}

/*
 * Flushes. While another thread writes, a little pending output is left for it to take along
 * before it lets go; more than FLUSH_THRESHOLD waits for it and is written here. Waiting is the
 * back-pressure: the calls whose lines wait stay in flight, reading stops at max_in_flight, and
 * memory stays bounded (without it, large responses pile up behind a slow client, more with every
 * request; bench/README.md, "Figures behind design choices"). Called with the lock held; returns
 * with it held, but may have let go of it meanwhile.
 */
static int flush_locked(output *out)
{
    if (atomic_load(&out->failed)) {
        buf_clear(&out->pending);
        return -1;
    }
    if (out->pending.length == 0)
        return 0;
    if (lock_try(&out->write_lock) != 0) {
        if (out->pending.length < FLUSH_THRESHOLD) {
            out->flush_wanted = true;
            return 0;
        }
        release_state(out); /* the lock order is write_lock, then lock */
        lock_take(&out->write_lock);
        take_state(out);
    }
    return write_out_locked(out);
}

void out_free(output *out)
{
    if (!out)
        return;
    /* A thread whose batch holds a line of this output still flushes it at the batch's end,
     * after the call that wrote it has ended and whoever frees the output may have seen that.
     * The batch ends without waiting for anything, so this waits a moment at most. */
    for (;;) {
        take_state(out);
        bool held = out->batches_holding > 0;
        release_state(out);
        if (!held)
            break;
        sched_yield();
    }
    out_flush(out);
    for (size_t i = 0; i < out->parked_capacity; i++)
        buf_free(&out->parked[i].line);
    free(out->parked);
    buf_free(&out->pending);
    buf_free(&out->writing);
    pthread_mutex_destroy(&out->write_lock);
    pthread_mutex_destroy(&out->lock);
    free(out);
}

/* Appends the parts and a newline to buf. Returns 0 or -1. */
static int append_line(buffer *buf, const struct iovec *parts, int part_count)
{
    size_t total = 1;
    for (int i = 0; i < part_count; i++)
        total += parts[i].iov_len;
    if (buf_reserve(buf, total) != 0)
        return -1;
    for (int i = 0; i < part_count; i++)
        buf_append(buf, parts[i].iov_base, parts[i].iov_len);
    buf_append_char(buf, '\n');
    return 0;
}

/* This thread's batch (out_batch_begin), and the output its first held line went to. */
static _Thread_local bool batching;
static _Thread_local output *batched;

/*
 * Flushes when nothing else will soon: the reader waits (unless this thread's batch holds the
 * line), or enough has piled up.
 */
static int maybe_flush_locked(output *out)
{
    if (out->pending.length >= FLUSH_THRESHOLD)
        return flush_locked(out);
    if (!out->reader_idle)
        return 0;
    if (batching && (!batched || batched == out)) {
        if (!batched)
            out->batches_holding++;
        batched = out;
        return 0;
    }
    return flush_locked(out);
}

void out_batch_begin(void)
{
    batching = true;
    batched = NULL;
}

int out_batch_end(void)
{
    output *out = batched;
    batching = false;
    batched = NULL;
    if (!out)
        return 0;
    take_state(out);
    int status = out->reader_idle ? flush_locked(out) : 0;
    out->batches_holding--; /* the last this thread touches of it: out_free may go on */
    release_state(out);
    return status;
}

/*
 * Writes a long line after what is pending, in one writev, its large parts from where they are:
 * copied into the pending buffer, each large result would cost a copy and hold its size again
 * while pending (bench/README.md, "Figures behind design choices"). The small parts are copied
 * behind what is pending.
 */
static int write_long_line(output *out, const struct iovec *parts, int part_count)
{
    size_t small_total = 1;
    for (int i = 0; i < part_count; i++) {
        if (parts[i].iov_len < SMALL_PART_BYTES)
            small_total += parts[i].iov_len;
    }
    lock_take(&out->write_lock);
    take_state(out);
    /* Room made first: the pieces below point into the buffer, which must not move. */
    if (atomic_load(&out->failed) || buf_reserve(&out->pending, small_total) != 0) {
        release_state(out);
        lock_release(&out->write_lock);
        return -1;
    }
    buffer swap = out->writing;
    out->writing = out->pending;
    out->pending = swap;
    release_state(out);

    /* At most two pieces per part: the copied bytes before it, and the part itself. */
    struct iovec pieces[2 * (OUT_LINE_PARTS_MOST + 1)];
    int piece_count = 0;
    buffer *writing = &out->writing;
    size_t copied_from = 0; /* where the copied bytes not yet in a piece start */
    for (int i = 0; i <= part_count; i++) {
        bool last = i == part_count;
        if (!last && parts[i].iov_len < SMALL_PART_BYTES) {
            buf_append(writing, parts[i].iov_base, parts[i].iov_len);
            continue;
        }
        if (last)
            buf_append_char(writing, '\n');
        if (writing->length > copied_from) {
            pieces[piece_count].iov_base = writing->data + copied_from;
            pieces[piece_count++].iov_len = writing->length - copied_from;
            copied_from = writing->length;
        }
        if (!last)
            pieces[piece_count++] = parts[i];
    }
    int status = write_parts(out, pieces, piece_count);
    buf_clear(writing);
    if (writing->capacity > 4 * FLUSH_THRESHOLD)
        buf_free(writing);

    take_state(out);
    if (status != 0) {
        atomic_store(&out->failed, true);
        buf_clear(&out->pending);
    }
    /* Lines that someone wanted out while this one was written go now. */
    if (status == 0 && out->flush_wanted)
        status = write_out_locked(out);
    else
        lock_release(&out->write_lock);
    release_state(out);
    return status;
}

int out_write_line(output *out, const struct iovec *parts, int part_count)
{
    if (atomic_load(&out->failed))
        return -1;
    size_t total = 1;
    for (int i = 0; i < part_count; i++)
        total += parts[i].iov_len;
    if (total >= FLUSH_THRESHOLD && part_count <= OUT_LINE_PARTS_MOST)
        return write_long_line(out, parts, part_count);
    take_state(out);
    int status = append_line(&out->pending, parts, part_count);
    if (status == 0)
        status = maybe_flush_locked(out);
    release_state(out);
    return status;
}

void out_set_ordered(output *out, bool ordered)
{
    take_state(out);
    out->ordered = ordered;
    if (ordered && out->next_ticket == 0)
        out->next_ticket = out->next_to_write = 1;
    release_state(out);
}

static parked_line *parked_at(output *out, uint64_t ticket)
{
    return &out->parked[ticket % out->parked_capacity];
}

/* Makes the ring hold every ticket handed out but not yet written. Lock held. */
static int grow_parked(output *out)
{
    size_t capacity = out->parked_capacity ? out->parked_capacity * 2 : 64;
    parked_line *parked = calloc(capacity, sizeof *parked);
    if (!parked)
        return -1;
    for (uint64_t t = out->next_to_write; t < out->next_ticket; t++)
        parked[t % capacity] = *parked_at(out, t);
    free(out->parked);
    out->parked = parked;
    out->parked_capacity = capacity;
    return 0;
}

uint64_t out_ticket_take(output *out)
{
    /* Set before serving starts: unordered output, the common case, needs no lock here. */
    if (!atomic_load(&out->ordered))
        return 0;
    take_state(out);
    uint64_t ticket = 0;
    if (out->ordered &&
        (out->next_ticket - out->next_to_write < out->parked_capacity || grow_parked(out) == 0)) {
        ticket = out->next_ticket++;
        parked_line *slot = parked_at(out, ticket);
        slot->state = TICKET_WAITING;
        buf_clear(&slot->line);
    }
    release_state(out);
    return ticket;
}

/* Writes every ticket that no longer waits for an earlier one. Lock held. */
static void release_tickets_locked(output *out)
{
    while (out->next_to_write < out->next_ticket) {
        parked_line *slot = parked_at(out, out->next_to_write);
        if (slot->state == TICKET_WAITING)
            break;
        if (slot->state == TICKET_READY)
            buf_append(&out->pending, slot->line.data, slot->line.length);
        if (slot->line.capacity > FLUSH_THRESHOLD)
            buf_free(&slot->line);
        else
            buf_clear(&slot->line);
        out->next_to_write++;
    }
}

int out_write_ticket(output *out, uint64_t ticket, const struct iovec *parts, int part_count)
{
    if (ticket == 0)
        return out_write_line(out, parts, part_count);
    take_state(out);
    if (ticket < out->next_to_write) {
        /* Given up already (out_ticket_drop): its place in the order is gone. */
        release_state(out);
        return 0;
    }
    parked_line *slot = parked_at(out, ticket);
    int status;
    if (ticket == out->next_to_write) {
        /* Its turn already: no need to park it. */
        status = append_line(&out->pending, parts, part_count);
        slot->state = TICKET_DROPPED;
    } else {
        status = append_line(&slot->line, parts, part_count);
        slot->state = status == 0 ? TICKET_READY : TICKET_DROPPED;
    }
    release_tickets_locked(out);
    if (status == 0)
        status = maybe_flush_locked(out);
    if (atomic_load(&out->failed))
        status = -1;
    release_state(out);
    return status;
}

void out_ticket_drop(output *out, uint64_t ticket)
{
    if (ticket == 0)
        return;
    take_state(out);
    if (ticket < out->next_to_write) {
        release_state(out); /* given up already */
        return;
    }
    parked_at(out, ticket)->state = TICKET_DROPPED;
    release_tickets_locked(out);
    maybe_flush_locked(out);
    release_state(out);
}

int out_flush(output *out)
{
    /* Waits for a writer at work: when this returns, everything written before is out. */
    lock_take(&out->write_lock);
    take_state(out);
    int status = write_out_locked(out);
    release_state(out);
    return status;
}

void out_set_reader_idle(output *out, bool idle)
{
    take_state(out);
    out->reader_idle = idle;
    if (idle)
        flush_locked(out);
    release_state(out);
}

bool out_failed(const output *out)
{
    return atomic_load(&((output *)out)->failed);
}

int out_error(const output *out)
{
    return atomic_load(&((output *)out)->write_errno);
}

void out_set_failed(output *out, int error)
{
    int none = 0;
    atomic_compare_exchange_strong(&out->write_errno, &none, error);
    atomic_store(&out->failed, true);
}

int out_seize_dying(output *out, int wait_ms)
{
    if (atomic_load(&out->failed))
        return -1;
    /* Both locks, or nothing: the other threads go on meanwhile and let go of them soon, unless
     * one is stuck writing to a client that does not read. They stay taken: nothing may be
     * written after these lines, not even half a line. */
    if (lock_try_for(&out->write_lock, &wait_ms) != 0 || lock_try_for(&out->lock, &wait_ms) != 0)
        return -1;
    /* With both locks held, a write under way is this thread's own, interrupted (or the process
     * has one thread and took no lock): its bytes are half out, nothing may follow them. */
    if (atomic_load(&out->write_busy) || atomic_load(&out->changing) || atomic_load(&out->failed))
        return -1;
    /* Up to the last newline: the signal may have come while this thread added a line. */
    const char *end =
        out->pending.length > 0 ? memrchr(out->pending.data, '\n', out->pending.length) : NULL;
    if (end && write_bytes(out, out->pending.data, (size_t)(end - out->pending.data) + 1) != 0)
        goto failed;
    out->pending.length = 0;
    /* Parked lines are whole, out of order or not. */
    for (uint64_t t = out->next_to_write; t < out->next_ticket; t++) {
        parked_line *slot = parked_at(out, t);
        if (slot->state == TICKET_READY && slot->line.length > 0 &&
            write_bytes(out, slot->line.data, slot->line.length) != 0)
            goto failed;
    }
    return 0;
failed:
    atomic_store(&out->failed, true);
    return -1;
}

int out_write_seized(output *out, const struct iovec *parts, int part_count)
{
    struct iovec all[OUT_PARTS_MOST];
    int count = 0;
    for (int i = 0; i < part_count && count < OUT_PARTS_MOST - 1; i++)
        all[count++] = parts[i];
    all[count++] = (struct iovec){"\n", 1};
    if (atomic_load(&out->failed) || write_parts(out, all, count) != 0) {
        atomic_store(&out->failed, true);
        return -1;
    }
    return 0;
}
