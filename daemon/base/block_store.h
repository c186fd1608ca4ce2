/* SPDX-License-Identifier: MIT */
/*
 * Memory for large buffers (a long line, a big params or result): each block is a mapping of its
 * own, and a few freed blocks are kept for the next large message.
 */
#ifndef RPCD_BLOCK_STORE_H
#define RPCD_BLOCK_STORE_H

#include <stddef.h>

/* Buffers of this capacity or more take their memory from here; smaller ones from malloc. */
enum { BLOCK_MIN_BYTES = 256 * 1024 };

/*
 * Gives a block of at least capacity bytes (a whole number of pages): a kept one when one fits,
 * else a new mapping. *out_data is new, owned by the caller, and goes back through block_free
 * with *out_capacity. Returns 0, or -1 when memory runs out. Thread-safe.
 */
int block_alloc(size_t capacity, char **out_data, size_t *out_capacity);

/*
 * Copies the first keep bytes of the block (*data, *capacity) into a block of at least
 * new_capacity bytes, which replaces it. Returns 0, or -1 with the block unchanged. Thread-safe.
 */
int block_grow(char **data, size_t *capacity, size_t keep, size_t new_capacity);

/* Takes the block (stolen) back: kept for reuse while the store is small, else unmapped. */
void block_free(char *data, size_t capacity);

/*
 * Unmaps every kept block: for the end of the process, so that leak checkers see nothing held.
 * Thread-safe; blocks handed out stay valid.
 */
void block_store_release(void);

/* Bytes held in kept blocks: for tests. Thread-safe. */
size_t block_store_kept_bytes(void);

#endif
