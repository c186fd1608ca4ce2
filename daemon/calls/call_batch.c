/* SPDX-License-Identifier: MIT */
/*
 * Batches: the responses of a batch's calls gathered into one array, written when the last
 * of them has ended (nothing when none answered).
 */
#include "calls/call_internal.h"
#include "base/lock.h"

#include "base/buffer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct call_batch {
    pthread_mutex_t lock; /* guards the items */
    atomic_size_t references;
    size_t item_count;
    buffer items; /* the responses so far, comma-separated */
    call_table *table;
    uint64_t ticket;
};

int call_batch_new(call_table *table, uint64_t ticket, call_batch **out)
{
    call_batch *batch = calloc(1, sizeof *batch);
    if (!batch || pthread_mutex_init(&batch->lock, NULL) != 0) {
        free(batch);
        return -1;
    }
    atomic_init(&batch->references, 1);
    batch->table = table;
    batch->ticket = ticket;
    *out = batch;
    return 0;
}

void call_batch_hold(call_batch *batch)
{
    atomic_fetch_add(&batch->references, 1);
}

int call_batch_append(call_batch *batch, const struct iovec *parts, int part_count)
{
    int status = 0;
    lock_take(&batch->lock);
    if (batch->item_count > 0)
        status |= buf_append_char(&batch->items, ',');
    for (int i = 0; i < part_count; i++)
        status |= buf_append(&batch->items, parts[i].iov_base, parts[i].iov_len);
    batch->item_count++;
    lock_release(&batch->lock);
    return status ? -1 : 0;
}

void call_batch_release(call_batch *batch)
{
    /* Each item appends its response before it lets go: the last one sees them all. */
    if (atomic_fetch_sub(&batch->references, 1) != 1)
        return;
    if (batch->item_count > 0) {
        struct iovec parts[] = {
            {"[", 1},
            {batch->items.data, batch->items.length},
            {"]", 1},
        };
        out_write_ticket(batch->table->out, batch->ticket, parts, 3);
    } else {
        out_ticket_drop(batch->table->out, batch->ticket);
    }
    buf_free(&batch->items);
    pthread_mutex_destroy(&batch->lock);
    free(batch);
}
