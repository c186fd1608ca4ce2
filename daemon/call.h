/* SPDX-License-Identifier: MIT */
/*
 * Calls: the per-call context plugins see (rpcd_call), the host functions that act on it, and
 * the response each call ends with, written alone or gathered into its batch.
 *
 * A plugin's rpcd_call pointer is a handle (slot index and generation), not an address: when
 * the call ends its slot's generation moves on, so a handle kept too long finds a mismatch and
 * gets RPCD_ERR_STALE instead of touching freed or reused memory. Slots live in one
 * process-wide store, so a handle alone finds its slot from any thread.
 */
#ifndef RPCD_CALL_H
#define RPCD_CALL_H

#include "json_scan.h"
#include "output.h"
#include "registry.h"

#include <rpcd/plugin.h>

#include <stdbool.h>
#include <stdint.h>

/* What every call of one server shares: where responses go and how deep results may nest. */
typedef struct call_context {
    output *out; /* borrowed */
    size_t max_depth;
} call_context;

/* A batch in progress: one response array, written when its last item is done. */
typedef struct call_batch call_batch;

/*
 * Starts a batch. The creator holds one reference, released with call_batch_release once every
 * item has been started. Returns 0 and *out (new), or -1 (memory).
 */
int call_batch_new(const call_context *context, call_batch **out);
/* Drops a reference; the last one writes the array (nothing when it is empty) and frees. */
void call_batch_release(call_batch *batch);

/*
 * Writes an error response for id (NULL: "id": null), alone or into batch (may be NULL).
 * message NULL uses the specification's text for code. data is raw JSON text or NULL.
 * Returns 0 or -1.
 */
int call_respond_error(const call_context *context, call_batch *batch, const js_span *id,
                       int64_t code, const char *message, const char *data, size_t data_length);

/* A request or notification ready to run. Spans are borrowed for the duration of call_run. */
typedef struct call_request {
    const reg_method *method;
    const js_span *id;             /* NULL for a notification */
    const js_span *params;         /* NULL when the request had none */
    const js_span *progress_token; /* NULL when absent */
    call_batch *batch;             /* NULL when not part of a batch */
} call_request;

/*
 * Runs the method's handler and ends the call with its response (none for a notification).
 * Returns 0, or -1 when not even an error response could be written.
 */
int call_run(const call_context *context, const call_request *request);

/* Puts the call_* members of the host table in place. */
void call_fill_host_api(rpcd_host_api *api);

/* Frees the slot store once no call is left (at exit), so leak checkers see a clean heap. */
void call_store_release(void);

#endif
