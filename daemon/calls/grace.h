/* SPDX-License-Identifier: MIT */
/*
 * The grace period after a stop, kept whatever the reading thread is doing: the stop arms a
 * timer, and when the period is over while the reading thread is still held in a handler (a
 * quick method that blocks), the timer's signal handler answers the calls that never ran, names
 * those still running, writes what is complete and ends the process.
 */
#ifndef RPCD_GRACE_H
#define RPCD_GRACE_H

#include "calls/call.h"
#include "base/output.h"

typedef struct grace_target {
    output *out;            /* borrowed */
    call_table *calls;      /* borrowed */
    int grace_ms;           /* how long after the stop */
    int exit_stopped;       /* the process's exit status after a stop */
    int exit_output_failed; /* ... when its output had failed */
} grace_target;

/* Where the reading thread is, for the timer's handler. */
enum grace_phase {
    GRACE_SERVING, /* reading, or held in a handler */
    GRACE_WAITING, /* in its own wait for the calls: it ends the period itself */
    GRACE_ENDING,  /* answering and writing the last lines */
};

/*
 * Installs the handler of the timer's signal (see sig_grace_install), once; later calls do
 * nothing. At start-up, before the first plugin loads, so that a plugin's init that takes the
 * signal is noticed. Returns 0, or -1 with errno.
 */
int grace_install(void);

/*
 * Watches target (borrowed until grace_unwatch) for the calling thread, the reading one: makes
 * the timer, on the signal grace_install took. One at a time per process. Returns 0, or -1 when
 * the timer cannot be made (the reading thread then keeps the period alone, as it can).
 */
int grace_watch(const grace_target *target);

/* The stop: the period starts now, unless it has already. Async-signal-safe; any thread. */
void grace_start(void);

/* Milliseconds left of the period (the whole of it before grace_start); 0 once over. */
int grace_left_ms(void);

/* The reading thread says where it is (enum grace_phase). */
void grace_set_phase(int phase);

/* Stops watching and deletes the timer. */
void grace_unwatch(void);

#endif
