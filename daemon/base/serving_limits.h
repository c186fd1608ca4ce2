/* SPDX-License-Identifier: MIT */
/*
 * The serving limits, one value: the [rpcd] keys of those names (config/config_keys.c holds
 * each one's range and default) as the config reads them, and as every settings struct that
 * needs some of them (the server's, the call table's, the dispatcher's, a plugin host's) holds
 * them: copied whole, never member by member.
 */
#ifndef RPCD_SERVING_LIMITS_H
#define RPCD_SERVING_LIMITS_H

#include <stddef.h>

typedef struct serving_limits {
    size_t max_line_bytes; /* longest request line */
    size_t max_depth;      /* deepest JSON nesting: in a line, and in what plugins hand back */
    size_t max_batch;      /* most items in one batch */
    size_t workers;        /* handler threads; 0 runs each handler on the thread that starts it */
    size_t max_in_flight;  /* calls queued or running before reading pauses */
    size_t max_in_flight_bytes; /* params bytes they may hold before reading pauses; 0: none */
} serving_limits;

#endif
