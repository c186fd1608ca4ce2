/* SPDX-License-Identifier: MIT */
/*
 * The process-wide store of call slots, in chunks that never move, and the handles that name a
 * slot and its generation: a handle from an ended call finds a newer generation and is refused.
 * Also the list of the calls a table still has in the store, for a stop that leaves them.
 */
#include "calls/call_internal.h"
#include "base/lock.h"
#include "base/log.h"

#include <stdlib.h>
#include <string.h>

static pthread_mutex_t store_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(call_slot *) chunks[MAX_CHUNKS];
/*
 * Slots handed out so far; only these are initialized. A chunk's slots are set up one by one as
 * they are first needed, not all when the chunk is allocated: touching a whole chunk faulted in
 * every page of it, memory and time the first request paid for (bench/README.md, "Figures behind
 * design choices"). Written under store_lock, read without it: stored once the new slot is ready.
 */
static _Atomic uint32_t slot_total;
static uint32_t free_head = NO_SLOT;
static uint32_t active_count;

call_slot *slot_at(uint32_t index)
{
    call_slot *chunk = atomic_load(&chunks[index / SLOTS_PER_CHUNK]);
    return chunk ? &chunk[index % SLOTS_PER_CHUNK] : NULL;
}

rpcd_call *slot_handle(uint32_t index, uint32_t slot_generation)
{
    uintptr_t value =
        ((uintptr_t)index + 1) | ((uintptr_t)(slot_generation & GENERATION_MASK) << INDEX_BITS);
    return (rpcd_call *)value;
}

call_slot *slot_lock_live(rpcd_call *call)
{
    uintptr_t value = (uintptr_t)call;
    uintptr_t index_plus_one = value & INDEX_MASK;
    if (index_plus_one == 0 || index_plus_one > atomic_load(&slot_total))
        return NULL;
    call_slot *slot = slot_at((uint32_t)(index_plus_one - 1));
    lock_take(&slot->lock);
    if (!slot->active || (slot->generation & GENERATION_MASK) != (uint32_t)(value >> INDEX_BITS)) {
        lock_release(&slot->lock);
        return NULL;
    }
    return slot;
}

int slot_acquire(uint32_t *out_index)
{
    int status = -1;
    lock_take(&store_lock);
    uint32_t index = free_head;
    if (index != NO_SLOT) {
        free_head = slot_at(index)->next_free;
    } else {
        index = atomic_load(&slot_total);
        if (index >= (uint32_t)MAX_CHUNKS * SLOTS_PER_CHUNK || index >= INDEX_MASK)
            goto done;
        if (index % SLOTS_PER_CHUNK == 0) {
            /* Not calloc: it would clear, and so fault in, the whole chunk at once. */
            call_slot *chunk = malloc(SLOTS_PER_CHUNK * sizeof *chunk);
            if (!chunk)
                goto done;
            atomic_store(&chunks[index / SLOTS_PER_CHUNK], chunk);
        }
        call_slot *slot = slot_at(index);
        memset(slot, 0, sizeof *slot);
        pthread_mutex_init(&slot->lock, NULL);
        atomic_store(&slot_total, index + 1);
    }
    active_count++;
    *out_index = index;
    status = 0;
done:
    lock_release(&store_lock);
    return status;
}

/* Every buffer of a slot, the one list of them: a buffer left out would leak, or keep a large
 * call's memory. */
#define SLOT_BUFFERS(X)                                                                            \
    X(id)                                                                                          \
    X(progress_token)                                                                              \
    X(params_copy)                                                                                 \
    X(progress_params)                                                                             \
    X(result)                                                                                      \
    X(failure_message)                                                                             \
    X(failure_data) X(scratch) X(line) X(answers) X(round_state) X(questions) X(next_state)

static void trim(buffer *buf)
{
    if (buf->capacity > KEEP_BUFFER_BYTES)
        buf_free(buf);
    else
        buf_clear(buf);
}

void slot_release(uint32_t index)
{
    call_slot *slot = slot_at(index);
#define TRIM(name) trim(&slot->name);
    SLOT_BUFFERS(TRIM)
#undef TRIM
    lock_take(&store_lock);
    slot->next_free = free_head;
    free_head = index;
    active_count--;
    lock_release(&store_lock);
}

uint32_t slot_count(void)
{
    return atomic_load(&slot_total);
}

void call_store_release(void)
{
    lock_take(&store_lock);
    if (active_count == 0) {
        uint32_t total = atomic_load(&slot_total);
        for (uint32_t chunk = 0; chunk * SLOTS_PER_CHUNK < total; chunk++) {
            call_slot *slots = atomic_load(&chunks[chunk]);
            for (uint32_t i = 0; i < SLOTS_PER_CHUNK && chunk * SLOTS_PER_CHUNK + i < total; i++) {
                call_slot *slot = &slots[i];
#define FREE(name) buf_free(&slot->name);
                SLOT_BUFFERS(FREE)
#undef FREE
                pthread_mutex_destroy(&slot->lock);
            }
            free(slots);
            atomic_store(&chunks[chunk], NULL);
        }
        atomic_store(&slot_total, 0);
        free_head = NO_SLOT;
    }
    lock_release(&store_lock);
}
