/* SPDX-License-Identifier: MIT */
/*
 * The serve loop: reads lines until the end of input, hands each to the dispatcher, and
 * returns once every request read has been answered. The same loop serves pipes and memory.
 */
#ifndef RPCD_SERVER_H
#define RPCD_SERVER_H

#include "line_reader.h"
#include "output.h"
#include "registry.h"

#include <stddef.h>

typedef struct srv_options {
    size_t max_line_bytes;
    size_t max_depth;
} srv_options;

enum srv_result {
    SRV_DONE = 0,           /* end of input, everything answered */
    SRV_OUTPUT_FAILED = -1, /* the client closed our output (EPIPE) */
    SRV_INPUT_FAILED = -2,  /* reading failed */
    SRV_NO_MEMORY = -3,
};

/*
 * Serves requests for methods (borrowed, read-only while serving) from read/source to
 * write/sink. Returns SRV_DONE or an error above.
 */
int srv_serve(const registry *methods, const srv_options *options, lr_read_fn read, void *source,
              out_write_fn write, void *sink);

#endif
