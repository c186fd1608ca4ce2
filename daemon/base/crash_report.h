/* SPDX-License-Identifier: MIT */
/*
 * What rpcd leaves behind when a plugin takes the process down: one line on stderr naming the
 * plugin, the method and the request id that were running on the thread, and the responses that
 * were finished written out, before it dies of the same signal (or exits as asked).
 */
#ifndef RPCD_CRASH_REPORT_H
#define RPCD_CRASH_REPORT_H

#include "base/output.h"

#include <stddef.h>

/* A call a thread is running. Every member borrowed, valid while the call runs. */
typedef struct crash_call {
    const char *plugin;
    const char *method;
    const char *id; /* the request id as JSON text, not NUL-terminated; NULL for a notification */
    size_t id_length;
} crash_call;

/*
 * Marks call (borrowed) as the one the calling thread runs, until crash_call_leave is given the
 * pointer this returns (calls may nest). Cheap: one thread-local store each.
 */
const crash_call *crash_call_enter(const crash_call *call);
void crash_call_leave(const crash_call *previous);

/*
 * Installs the handlers of the fatal signals (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
 * SIGTRAP, SIGSYS), an alternate signal stack for the calling thread, and the hook that reports
 * an exit() while serving. Before any plugin is loaded: a language runtime that loads later (Go)
 * keeps these handlers for the faults that are not its own. Returns 0, or -1 with errno.
 */
int crash_report_install(void);

/*
 * The output whose complete lines a crash writes out (borrowed; NULL when nothing is served). An
 * exit() while an output is watched is reported.
 */
void crash_report_watch(output *out);

/*
 * Gives the calling thread an alternate signal stack, so that a stack overflow is reported too;
 * it is freed when the thread ends. Does nothing when the thread has one (sanitizers set their
 * own).
 */
void crash_report_thread_start(void);

#endif
