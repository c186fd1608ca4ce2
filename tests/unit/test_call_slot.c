/* SPDX-License-Identifier: MIT */
/*
 * The slot store behind call handles: slots handed out and given back (the last given back is
 * the next taken), handles naming a slot and its generation (another generation, an inactive
 * slot or an index never made is refused), the store growing by chunks that never move, and a
 * large call's buffers given back when its slot is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/block_store.h"
#include "calls/call_internal.h"
#include "base/lock.h"

static int teardown(void **state)
{
    (void)state;
    call_store_release();
    assert_int_equal(slot_count(), 0);
    block_store_release();
    return 0;
}

static void test_released_slot_is_the_next_acquired(void **state)
{
    (void)state;
    uint32_t a, b, c;
    assert_int_equal(slot_acquire(&a), 0);
    assert_int_equal(slot_acquire(&b), 0);
    assert_int_equal(a, 0);
    assert_int_equal(b, 1);
    assert_int_equal(slot_count(), 2);
    slot_release(a);
    assert_int_equal(slot_acquire(&c), 0);
    assert_int_equal(c, a);
    /* Nothing new was made: the free slot was taken. */
    assert_int_equal(slot_count(), 2);
    slot_release(b);
    slot_release(c);
}

static void test_handle_names_index_and_generation(void **state)
{
    (void)state;
    uint32_t index;
    assert_int_equal(slot_acquire(&index), 0);
    assert_int_equal(slot_acquire(&index), 0);
    assert_int_equal(index, 1);
    call_slot *slot = slot_at(index);
    assert_non_null(slot);
    slot->generation = 41;

    rpcd_call *handle = slot_handle(index, 41);
    /* Index + 1 in the low bits: no handle is NULL. */
    assert_int_equal((uintptr_t)handle & INDEX_MASK, 2);
    /* Not active yet: a call that has not started (or has ended) is not found. */
    assert_null(slot_lock_live(handle));

    slot->active = true;
    assert_ptr_equal(slot_lock_live(handle), slot);
    lock_release(&slot->lock);
    assert_null(slot_lock_live(slot_handle(index, 40)));
    assert_null(slot_lock_live(slot_handle(index, 42)));
    assert_null(slot_lock_live(slot_handle(0, 41)));
    assert_null(slot_lock_live(NULL));
    assert_null(slot_lock_live(slot_handle(slot_count(), 41)));

    /* The call ends: its generation moves on, the handle it had is refused. */
    slot->generation++;
    assert_null(slot_lock_live(handle));
    assert_ptr_equal(slot_lock_live(slot_handle(index, 42)), slot);
    lock_release(&slot->lock);
    slot->active = false;
    slot_release(0);
    slot_release(1);
}

static void test_generation_wraps_within_the_handle(void **state)
{
    (void)state;
    uint32_t index;
    assert_int_equal(slot_acquire(&index), 0);
    call_slot *slot = slot_at(index);
    slot->active = true;
    slot->generation = GENERATION_MASK;
    rpcd_call *last = slot_handle(index, slot->generation);
    assert_ptr_equal(slot_lock_live(last), slot);
    lock_release(&slot->lock);
    slot->generation++; /* wraps to 0 */
    assert_null(slot_lock_live(last));
    assert_ptr_equal(slot_lock_live(slot_handle(index, 0)), slot);
    lock_release(&slot->lock);
    slot->active = false;
    slot_release(index);
}

enum { GROWN = 2 * SLOTS_PER_CHUNK + 3 };

static void test_store_grows_by_chunks_that_never_move(void **state)
{
    (void)state;
    static uint32_t indices[GROWN];
    assert_int_equal(slot_acquire(&indices[0]), 0);
    call_slot *first = slot_at(indices[0]);
    first->generation = 7;
    for (uint32_t i = 1; i < GROWN; i++) {
        assert_int_equal(slot_acquire(&indices[i]), 0);
        assert_int_equal(indices[i], i);
    }
    assert_int_equal(slot_count(), GROWN);
    /* Three chunks, each slot where it was put, the first untouched by the growth. */
    assert_ptr_equal(slot_at(0), first);
    assert_int_equal(first->generation, 7);
    assert_ptr_equal(slot_at(SLOTS_PER_CHUNK - 1), first + SLOTS_PER_CHUNK - 1);
    assert_non_null(slot_at(SLOTS_PER_CHUNK));
    assert_non_null(slot_at(GROWN - 1));
    assert_null(slot_at(3 * SLOTS_PER_CHUNK));
    /* Every slot made starts with no call in it. */
    for (uint32_t i = 0; i < GROWN; i++)
        assert_false(slot_at(i)->active);
    /* While any slot is taken, the store stays: a handle may still be looked up. */
    call_store_release();
    assert_int_equal(slot_count(), GROWN);
    for (uint32_t i = 0; i < GROWN; i++)
        slot_release(indices[i]);
    call_store_release();
    assert_int_equal(slot_count(), 0);
    assert_null(slot_at(0));
}

static void test_release_gives_back_large_buffers_and_keeps_small_ones(void **state)
{
    (void)state;
    uint32_t index;
    assert_int_equal(slot_acquire(&index), 0);
    call_slot *slot = slot_at(index);
    static char large[KEEP_BUFFER_BYTES + 1];
    assert_int_equal(buf_append(&slot->result, large, sizeof large), 0);
    assert_int_equal(buf_append(&slot->params_copy, large, sizeof large), 0);
    assert_int_equal(buf_append(&slot->id, "\"id\"", 4), 0);
    assert_int_equal(buf_append(&slot->line, "{}", 2), 0);
    size_t id_capacity = slot->id.capacity;
    slot_release(index);

    assert_null(slot->result.data);
    assert_int_equal(slot->result.capacity, 0);
    assert_null(slot->params_copy.data);
    assert_int_equal(slot->params_copy.length, 0);
    /* Small ones are kept for the next call, emptied. */
    assert_non_null(slot->id.data);
    assert_int_equal(slot->id.capacity, id_capacity);
    assert_int_equal(slot->id.length, 0);
    assert_int_equal(slot->line.length, 0);

    /* The next call in the slot starts with empty buffers. */
    uint32_t again;
    assert_int_equal(slot_acquire(&again), 0);
    assert_int_equal(again, index);
    assert_int_equal(slot_at(again)->result.length, 0);
    slot_release(again);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_released_slot_is_the_next_acquired, teardown),
        cmocka_unit_test_teardown(test_handle_names_index_and_generation, teardown),
        cmocka_unit_test_teardown(test_generation_wraps_within_the_handle, teardown),
        cmocka_unit_test_teardown(test_store_grows_by_chunks_that_never_move, teardown),
        cmocka_unit_test_teardown(test_release_gives_back_large_buffers_and_keeps_small_ones,
                                  teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
