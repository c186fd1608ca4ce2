/* SPDX-License-Identifier: MIT */
/*
 * When an isolated plugin's host died: whether to start it again and after how long. The first
 * restart is at once; a host that dies again before it has answered a call waits longer each
 * time; more than the plugin's limit of restarts within a minute, and it stays down.
 */
#ifndef RPCD_SUPERVISOR_H
#define RPCD_SUPERVISOR_H

#include <stdbool.h>
#include <stddef.h>

enum {
    SUP_WINDOW_MS = 60 * 1000, /* the limit counts the restarts of the last minute */
    SUP_FIRST_DELAY_MS = 50,   /* the second restart in a row without a call answered */
    SUP_MOST_DELAY_MS = 2000,  /* the delay doubles up to this */
};

typedef struct sup_state {
    long long *times; /* owned: when each of the last restarts was, a ring of limit entries */
    size_t limit;     /* restarts allowed per minute; 0: none */
    size_t next;      /* the ring's oldest entry, which the next restart overwrites */
    unsigned streak;  /* restarts in a row whose host died before it answered a call */
} sup_state;

/* Prepares state for limit restarts a minute. Returns 0, or -1 (memory). */
int sup_init(sup_state *state, size_t limit);
void sup_fini(sup_state *state);

/*
 * A host died at now_ms; served says whether it had answered a call since it started.
 * Returns the milliseconds to wait before the restart (0: at once), or -1 when the limit is
 * reached and the plugin is to stay down.
 */
long long sup_on_crash(sup_state *state, long long now_ms, bool served);

#endif
