/* SPDX-License-Identifier: MIT */
/*
 * The call whose handler runs on this thread: one record per thread, set in one place (the
 * scheduler, around the handler) and read by everything that needs to know it: the crash report
 * names it, the call layer sends its log lines to its client, a stop tells a handler's thread.
 */
#ifndef RPCD_RUNNING_CALL_H
#define RPCD_RUNNING_CALL_H

#include <stddef.h>

/* A call a thread runs. Every member borrowed, valid while the call runs. */
typedef struct running_call {
    const char *plugin;
    const char *method;
    const char *id; /* the request id as JSON text, not NUL-terminated; NULL for a notification */
    size_t id_length;
    void *handle; /* the call layer's handle of the call (rpcd_call *), opaque here */
    const struct running_call *outer; /* the record it nests in (set by running_call_enter) */
} running_call;

/*
 * Makes call (borrowed until running_call_leave) the calling thread's running call; a handler
 * that runs a call of its own nests it (call->outer keeps the one before). One thread-local
 * store. Async-signal-safe to read (running_call_current).
 */
void running_call_enter(running_call *call);
/* Ends call (the current one), the one it nested in running again. */
void running_call_leave(const running_call *call);

/* The calling thread's running call, or NULL when it runs no handler. Async-signal-safe. */
const running_call *running_call_current(void);

#endif
