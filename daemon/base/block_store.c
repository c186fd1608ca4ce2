/* SPDX-License-Identifier: MIT */
/*
 * Large blocks as mappings of their own, with a small store of freed ones. From malloc, large
 * buffers freed in another order than they were taken fragment the heap, and peak memory creeps
 * up with the number of messages; fresh mappings for every message cost their page faults each
 * time (bench/README.md, "Figures behind design choices"). Kept blocks are reused as they are,
 * and a block the store has no room for goes back to the kernel at once. A guard page after each
 * block turns an overrun into a crash, in every build.
 */
#include "base/block_store.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
/* A kept block is nobody's: under ASan, touching one is reported as a use after free. */
#define HIDE(data, size) ASAN_POISON_MEMORY_REGION(data, size)
#define SHOW(data, size) ASAN_UNPOISON_MEMORY_REGION(data, size)
#else
#define HIDE(data, size) ((void)(data), (void)(size))
#define SHOW(data, size) ((void)(data), (void)(size))
#endif

/*
 * What the store keeps: enough for a few 1 MB messages per worker at once, little enough that a
 * burst of huge lines does not pin its memory for the rest of the session.
 */
enum { KEEP_BLOCK_MOST = 4 * 1024 * 1024, KEEP_TOTAL_MOST = 16 * 1024 * 1024, KEPT_MOST = 16 };

typedef struct kept_block {
    char *data;
    size_t capacity;
} kept_block;

static pthread_mutex_t store_lock = PTHREAD_MUTEX_INITIALIZER;
static kept_block kept[KEPT_MOST];
static size_t kept_count;
static size_t kept_bytes;

static size_t page_size(void)
{
    return (size_t)sysconf(_SC_PAGESIZE);
}

static size_t round_to_pages(size_t bytes)
{
    size_t page = page_size();
    return (bytes + page - 1) / page * page;
}

/* A new mapping of capacity bytes followed by an inaccessible page. */
static int map_block(size_t capacity, char **out_data)
{
    size_t guard = page_size();
    char *data =
        mmap(NULL, capacity + guard, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (data == MAP_FAILED)
        return -1;
    if (mprotect(data + capacity, guard, PROT_NONE) != 0) {
        munmap(data, capacity + guard);
        return -1;
    }
    *out_data = data;
    return 0;
}

static void unmap_block(char *data, size_t capacity)
{
    munmap(data, capacity + page_size());
}

/* Takes the smallest kept block of at least capacity bytes, if there is one. */
static bool take_kept(size_t capacity, char **out_data, size_t *out_capacity)
{
    pthread_mutex_lock(&store_lock);
    size_t best = kept_count;
    for (size_t i = 0; i < kept_count; i++) {
        if (kept[i].capacity >= capacity &&
            (best == kept_count || kept[i].capacity < kept[best].capacity))
            best = i;
    }
    bool found = best < kept_count;
    if (found) {
        *out_data = kept[best].data;
        *out_capacity = kept[best].capacity;
        kept_bytes -= kept[best].capacity;
        kept[best] = kept[--kept_count];
    }
    pthread_mutex_unlock(&store_lock);
    if (found)
        SHOW(*out_data, *out_capacity);
    return found;
}

int block_alloc(size_t capacity, char **out_data, size_t *out_capacity)
{
    if (capacity > SIZE_MAX / 2)
        return -1;
    capacity = round_to_pages(capacity < BLOCK_MIN_BYTES ? BLOCK_MIN_BYTES : capacity);
    if (take_kept(capacity, out_data, out_capacity))
        return 0;
    if (map_block(capacity, out_data) != 0)
        return -1;
    *out_capacity = capacity;
    return 0;
}

int block_grow(char **data, size_t *capacity, size_t keep, size_t new_capacity)
{
    if (new_capacity <= *capacity)
        return 0;
    char *grown;
    size_t grown_capacity;
    if (block_alloc(new_capacity, &grown, &grown_capacity) != 0)
        return -1;
    memcpy(grown, *data, keep);
    block_free(*data, *capacity);
    *data = grown;
    *capacity = grown_capacity;
    return 0;
}

void block_free(char *data, size_t capacity)
{
    if (!data)
        return;
    pthread_mutex_lock(&store_lock);
    bool keep = capacity <= KEEP_BLOCK_MOST && kept_bytes + capacity <= KEEP_TOTAL_MOST &&
                kept_count < KEPT_MOST;
    if (keep) {
        HIDE(data, capacity);
        kept[kept_count].data = data;
        kept[kept_count].capacity = capacity;
        kept_count++;
        kept_bytes += capacity;
    }
    pthread_mutex_unlock(&store_lock);
    if (!keep)
        unmap_block(data, capacity);
}

void block_store_release(void)
{
    pthread_mutex_lock(&store_lock);
    for (size_t i = 0; i < kept_count; i++) {
        SHOW(kept[i].data, kept[i].capacity);
        unmap_block(kept[i].data, kept[i].capacity);
    }
    kept_count = 0;
    kept_bytes = 0;
    pthread_mutex_unlock(&store_lock);
}

size_t block_store_kept_bytes(void)
{
    pthread_mutex_lock(&store_lock);
    size_t bytes = kept_bytes;
    pthread_mutex_unlock(&store_lock);
    return bytes;
}
