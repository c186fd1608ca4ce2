/* SPDX-License-Identifier: MIT */
/*
 * The scheduler time slice a plugin host asks the kernel for (EEVDF's per-task slice, Linux 6.12
 * and later), and the reading of a thread's slice back.
 */
#ifndef RPCD_TIME_SLICE_H
#define RPCD_TIME_SLICE_H

#include "config/config_keys.h" /* SLICE_MIN_US, SLICE_MAX_US: the key's bounds */

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Asks the kernel to run the calling thread with a time slice of slice_us microseconds
 * (SLICE_MIN_US to SLICE_MAX_US); threads and processes it starts afterwards inherit it. Only
 * SCHED_OTHER and SCHED_BATCH have such a slice: under another policy, and for slice_us 0, it
 * changes nothing. The policy, nice value and reset-on-fork flag stay as they are, so no
 * privilege is needed. A kernel before 6.12 takes the request and ignores it. Not thread-safe
 * with other changes of the same thread's scheduling. Returns 0, or -1 with a one-line reason
 * in error (always NUL-terminated).
 */
int slice_request(size_t slice_us, char *error, size_t error_size);

/*
 * Writes to *slice_ns the time slice of thread (a thread id; 0: the calling thread) in
 * nanoseconds: 0 when the kernel has no per-task slice (before 6.12) or the thread's policy has
 * none. Returns 0, or -1 with errno set (ESRCH: no such thread).
 */
int slice_of(pid_t thread, uint64_t *slice_ns);
/*
 * Whether the kernel gives a task the slice it asks for (Linux 6.12 and later, EEVDF): 1 when
 * the calling thread's slice reads back (a kernel before 6.12 reads 0 for every task), 0 when
 * it does not, -1 when it cannot tell (sched_getattr fails, or the thread's policy has no
 * slice, as SCHED_FIFO). Changes nothing.
 */
int slice_honoured(void);

#endif
