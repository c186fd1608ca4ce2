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

/* The call the report names is the thread's running call (base/running_call.h). */

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
