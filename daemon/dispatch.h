/* SPDX-License-Identifier: MIT */
/*
 * One line in, its responses out: validation, batches, envelope rules and method lookup,
 * in that order. Everything the client can get wrong is answered here, never fatal.
 */
#ifndef RPCD_DISPATCH_H
#define RPCD_DISPATCH_H

#include "call.h"
#include "registry.h"

#include <stddef.h>

typedef struct dispatcher {
    const registry *methods; /* borrowed */
    call_context calls;      /* where responses go */
    size_t max_depth;        /* deepest nesting accepted in a line */
} dispatcher;

/*
 * Handles one line (without its newline): writes one response per request it holds, none for
 * notifications or blank lines. Returns 0, or -1 when the output failed.
 */
int disp_line(const dispatcher *dispatch, const char *line, size_t length);

/* Answers a line that was longer than the limit and skipped: one -32600 with id null. */
int disp_line_too_long(const dispatcher *dispatch, size_t length, size_t limit);

#endif
