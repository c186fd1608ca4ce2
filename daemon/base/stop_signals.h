/* SPDX-License-Identifier: MIT */
/*
 * The signals that stop rpcd (SIGTERM, SIGINT), and how the reading thread takes them while it
 * waits for calls to end instead of for input.
 */
#ifndef RPCD_STOP_SIGNALS_H
#define RPCD_STOP_SIGNALS_H

#include <signal.h>

/* Fills set with the stop signals. */
void stop_signals_fill(sigset_t *set);

/*
 * Around a wait of the reading thread on a condition variable: hold blocks the stop signals on
 * the calling thread, deliver_pending lets one that came meanwhile reach its handler now (call
 * it between short waits), release unblocks them. A stop signal then runs its handler at a
 * known point instead of inside the wait: under ThreadSanitizer, whose runtime defers signals,
 * one that came while the reader waited was sometimes never handled. Another thread that does
 * not block them may take them meanwhile, as it may at any time. Not for workers.
 */
void stop_signals_hold(void);
void stop_signals_deliver_pending(void);
void stop_signals_release(void);

#endif
