/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for block_store: sizes, reuse of freed blocks, what is kept and what is not,
 * growth keeping the contents, the guard page, large buffers round-tripping through it, and
 * what a failed mapping leaves (mmap and mprotect are wrapped, -Wl,--wrap, see meson.build).
 */
#include "base/block_store.h"
#include "base/buffer.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

enum { MIB = 1024 * 1024 };

static int empty_store(void **state)
{
    (void)state;
    block_store_release();
    return 0;
}

static void test_sizes_are_whole_pages(void **state)
{
    (void)state;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    static const size_t asked[] = {1, BLOCK_MIN_BYTES, BLOCK_MIN_BYTES + 1, 3 * MIB + 5};
    for (size_t i = 0; i < sizeof asked / sizeof asked[0]; i++) {
        char *data;
        size_t capacity;
        assert_int_equal(block_alloc(asked[i], &data, &capacity), 0);
        assert_true(capacity >= asked[i] && capacity >= BLOCK_MIN_BYTES);
        assert_int_equal(capacity % page, 0);
        memset(data, 'x', capacity); /* all of it is usable */
        block_free(data, capacity);
    }
}

/* A freed block comes back for the next request it fits, the smallest that fits first. */
static void test_freed_blocks_are_reused(void **state)
{
    (void)state;
    char *small, *large;
    size_t small_capacity, large_capacity;
    assert_int_equal(block_alloc(MIB, &small, &small_capacity), 0);
    assert_int_equal(block_alloc(2 * MIB, &large, &large_capacity), 0);
    block_free(large, large_capacity);
    block_free(small, small_capacity);
    assert_int_equal(block_store_kept_bytes(), small_capacity + large_capacity);

    char *again;
    size_t again_capacity;
    assert_int_equal(block_alloc(MIB / 2, &again, &again_capacity), 0);
    assert_ptr_equal(again, small);
    assert_int_equal(again_capacity, small_capacity);
    assert_int_equal(block_store_kept_bytes(), large_capacity);
    block_free(again, again_capacity);
}

/* Huge blocks go back at once, and what is kept stays within its bound. */
static void test_store_keeps_little(void **state)
{
    (void)state;
    char *huge;
    size_t huge_capacity;
    assert_int_equal(block_alloc(8 * MIB, &huge, &huge_capacity), 0);
    block_free(huge, huge_capacity);
    assert_int_equal(block_store_kept_bytes(), 0);

    enum { COUNT = 40 };
    char *blocks[COUNT];
    size_t capacities[COUNT];
    for (int i = 0; i < COUNT; i++)
        assert_int_equal(block_alloc(MIB, &blocks[i], &capacities[i]), 0);
    for (int i = 0; i < COUNT; i++)
        block_free(blocks[i], capacities[i]);
    assert_true(block_store_kept_bytes() > 0);
    assert_true(block_store_kept_bytes() <= 16 * MIB);
    block_store_release();
    assert_int_equal(block_store_kept_bytes(), 0);
}

/* The store keeps 16 blocks at the most, however small: the 17th goes back to the kernel. */
static void test_store_keeps_sixteen_blocks(void **state)
{
    (void)state;
    enum { COUNT = 20 };
    char *blocks[COUNT];
    size_t capacities[COUNT];
    for (int i = 0; i < COUNT; i++)
        assert_int_equal(block_alloc(BLOCK_MIN_BYTES, &blocks[i], &capacities[i]), 0);
    for (int i = 0; i < COUNT; i++)
        block_free(blocks[i], capacities[i]);
    assert_int_equal(block_store_kept_bytes(), 16 * capacities[0]);
}

/* A size whose rounding to pages would wrap around is refused, not mapped small. */
static void test_absurd_size_refused(void **state)
{
    (void)state;
    char *block = NULL;
    size_t capacity = 0;
    assert_int_equal(block_alloc(SIZE_MAX - 10, &block, &capacity), -1);
    assert_int_equal(block_alloc(SIZE_MAX / 2 + 1, &block, &capacity), -1);
    assert_null(block);
}

static void test_grow_keeps_contents(void **state)
{
    (void)state;
    char *data;
    size_t capacity;
    assert_int_equal(block_alloc(BLOCK_MIN_BYTES, &data, &capacity), 0);
    for (size_t i = 0; i < capacity; i++)
        data[i] = (char)(i * 7);
    size_t old_capacity = capacity;
    assert_int_equal(block_grow(&data, &capacity, old_capacity, 3 * old_capacity), 0);
    assert_true(capacity >= 3 * old_capacity);
    for (size_t i = 0; i < old_capacity; i++)
        assert_int_equal(data[i], (char)(i * 7));
    memset(data, 0, capacity);
    block_free(data, capacity);
}

/* Writing past the end of a block crashes there and then, instead of corrupting a neighbour. */
static void test_guard_page_stops_an_overrun(void **state)
{
    (void)state;
    char *data;
    size_t capacity;
    assert_int_equal(block_alloc(BLOCK_MIN_BYTES, &data, &capacity), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        signal(SIGSEGV, SIG_DFL); /* cmocka's handler would catch it and go on testing */
        volatile char *end = data + capacity;
        end[0] = 1;
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    /* Killed by SIGSEGV, or (under a sanitizer that reports it first) ended by the report. */
    assert_false(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    block_free(data, capacity);
}

/* A buffer crosses from malloc to the store and back without losing a byte. */
static void test_buffer_through_the_store(void **state)
{
    (void)state;
    buffer buf = BUFFER_INIT;
    char chunk[1000];
    for (size_t i = 0; i < sizeof chunk; i++)
        chunk[i] = (char)('a' + i % 26);
    size_t total = 0;
    while (total < 3 * BLOCK_MIN_BYTES) {
        assert_int_equal(buf_append(&buf, chunk, sizeof chunk), 0);
        total += sizeof chunk;
    }
    assert_true(buf.capacity >= BLOCK_MIN_BYTES);
    assert_int_equal(buf.length, total);
    for (size_t i = 0; i < total; i += sizeof chunk)
        assert_memory_equal(buf.data + i, chunk, sizeof chunk);
    /* Its block goes to the store (the smaller ones it grew from went there already). */
    size_t kept_before = block_store_kept_bytes(), capacity = buf.capacity;
    buf_free(&buf);
    assert_int_equal(block_store_kept_bytes(), kept_before + capacity);
    assert_null(buf.data);
    assert_int_equal(buf_append(&buf, "small", 5), 0);
    assert_true(buf.capacity < BLOCK_MIN_BYTES);
    buf_free(&buf);
}

/* While set, the wrapped calls below fail as the kernel does when memory runs out. */
static bool refuse_mmap, refuse_mprotect;

/*
 * The daemon's calls to mmap reach mmap64 when files have 64-bit offsets (meson's default) and
 * mmap otherwise: both are wrapped, so the test does not depend on the build's choice.
 */
void *__real_mmap(void *address, size_t length, int protection, int flags, int fd, off_t offset);
void *__real_mmap64(void *address, size_t length, int protection, int flags, int fd, off_t offset);
void *__wrap_mmap(void *address, size_t length, int protection, int flags, int fd, off_t offset);
void *__wrap_mmap64(void *address, size_t length, int protection, int flags, int fd, off_t offset);
void *__wrap_mmap(void *address, size_t length, int protection, int flags, int fd, off_t offset)
{
    if (refuse_mmap) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    return __real_mmap(address, length, protection, flags, fd, offset);
}
void *__wrap_mmap64(void *address, size_t length, int protection, int flags, int fd, off_t offset)
{
    if (refuse_mmap) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    return __real_mmap64(address, length, protection, flags, fd, offset);
}

int __real_mprotect(void *address, size_t length, int protection);
int __wrap_mprotect(void *address, size_t length, int protection);
int __wrap_mprotect(void *address, size_t length, int protection)
{
    if (refuse_mprotect) {
        errno = ENOMEM;
        return -1;
    }
    return __real_mprotect(address, length, protection);
}

/* No mapping, or no guard page: allocation fails, and growth leaves the block as it was. */
static void test_failed_mapping_changes_nothing(void **state)
{
    (void)state;
    char *data;
    size_t capacity;
    assert_int_equal(block_alloc(BLOCK_MIN_BYTES, &data, &capacity), 0);
    memset(data, 'x', capacity);
    char *kept_data = data;
    size_t kept_capacity = capacity;
    for (int which = 0; which < 2; which++) {
        refuse_mmap = which == 0;
        refuse_mprotect = which == 1;
        char *other;
        size_t other_capacity;
        assert_int_equal(block_alloc(2 * MIB, &other, &other_capacity), -1);
        assert_int_equal(block_grow(&data, &capacity, capacity, 2 * MIB), -1);
        assert_ptr_equal(data, kept_data);
        assert_int_equal(capacity, kept_capacity);
        /* A buffer that cannot grow keeps what it holds. */
        buffer buf = BUFFER_INIT;
        refuse_mmap = refuse_mprotect = false;
        assert_int_equal(buf_append(&buf, data, 100), 0);
        refuse_mmap = which == 0;
        refuse_mprotect = which == 1;
        assert_int_equal(buf_reserve(&buf, 2 * MIB), -1);
        assert_int_equal(buf.length, 100);
        assert_memory_equal(buf.data, data, 100);
        refuse_mmap = refuse_mprotect = false;
        buf_free(&buf);
    }
    for (size_t i = 0; i < capacity; i++)
        if (data[i] != 'x')
            fail_msg("byte %zu changed", i);
    block_free(data, capacity);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_sizes_are_whole_pages, empty_store),
        cmocka_unit_test_teardown(test_freed_blocks_are_reused, empty_store),
        cmocka_unit_test_teardown(test_store_keeps_little, empty_store),
        cmocka_unit_test_teardown(test_store_keeps_sixteen_blocks, empty_store),
        cmocka_unit_test_teardown(test_absurd_size_refused, empty_store),
        cmocka_unit_test_teardown(test_grow_keeps_contents, empty_store),
        cmocka_unit_test_teardown(test_guard_page_stops_an_overrun, empty_store),
        cmocka_unit_test_teardown(test_buffer_through_the_store, empty_store),
        cmocka_unit_test_teardown(test_failed_mapping_changes_nothing, empty_store),
    };
    return cmocka_run_group_tests(tests, empty_store, NULL);
}
