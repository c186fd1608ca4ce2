/* SPDX-License-Identifier: MIT */
/*
 * What the protocol fuzzer checks of every run: each line written is one valid UTF-8 JSON
 * object, a response or a notification of the right shape, and every request with an id got
 * exactly one response with that id.
 */
#ifndef RPCD_FUZZ_PROTOCOL_ORACLE_H
#define RPCD_FUZZ_PROTOCOL_ORACLE_H

#include <stddef.h>

/* The limits the run was served with: they decide which lines hold requests. */
typedef struct oracle_limits {
    size_t max_line_bytes;
    size_t max_depth;
    size_t max_batch;
} oracle_limits;

/*
 * Checks output (everything written while serving input) against input. Returns 0, or -1
 * after printing what is wrong to stderr.
 */
int oracle_check(const oracle_limits *limits, const char *input, size_t input_length,
                 const char *output, size_t output_length);

#endif
