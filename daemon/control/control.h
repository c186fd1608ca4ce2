/* SPDX-License-Identifier: MIT */
/*
 * The control socket ([rpcd] control_socket): operators ask a serving rpcd for its status, its
 * calls in flight, a reload, its metrics and the cancel of a call, in JSON-RPC 2.0 over
 * NDJSON (docs/control.md). It runs on a thread of its own, so that no peer, hostile or slow,
 * can hold up the protocol on stdin and stdout: every read and write is non-blocking, a line is
 * bounded, peers are few, and a peer that stops reading is dropped. The thread starts with the
 * first peer (ctl_before_read), so that a session no operator looks at stays single-threaded.
 */
#ifndef RPCD_CONTROL_H
#define RPCD_CONTROL_H

#include "control/control_request.h"
#include "serve/reload.h"
#include "serve/runtime.h"
#include "serve/server.h"

#include <stddef.h>

/* What the control socket looks at and acts on, all borrowed and alive until ctl_stop. */
typedef struct ctl_target {
    const rpcd_runtime *runtime;
    server *srv;
    reloader *reloads;    /* NULL: reload answers that it cannot */
    long long started_ms; /* clock_now_ms() when serving started: the uptime's start */
} ctl_target;

/* The most peers at once, how long a peer may leave an answer unread before it is dropped, and
 * how often the reader is woken to look for a first peer it may have missed. */
enum { CTL_MOST_PEERS = 8, CTL_WRITE_TIMEOUT_MS = 5000, CTL_TICK_MS = 1000 };

typedef struct control control;

/*
 * Starts the control socket of target's config: the socket made (ctl_socket_listen) and calls
 * counted when control_metrics. Its thread starts with the first peer, from ctl_before_read. On
 * the reading thread (the one the wake-up signal interrupts). Returns 0 and *out (new; NULL when
 * the config sets no control_socket), or -1 with a one-line reason in error (nothing left).
 */
int ctl_start(const ctl_target *target, control **out, char *error, size_t error_size);

/*
 * For the reader's hook before each read() (context: the control, may be NULL): starts the
 * thread once a peer waits. One relaxed load while no wake-up signal came.
 */
void ctl_before_read(void *context);

/* Stops the thread, closes every peer and removes the socket file. NULL is ignored. */
void ctl_stop(control *ctl);

/*
 * Appends the answer line to request (its result, or its error) for target. The methods: for the
 * control thread, and for tests. Returns 0 or -1 (memory).
 */
int ctl_answer(const ctl_target *target, const ctl_request *request, buffer *out);

#endif
