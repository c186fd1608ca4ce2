/* SPDX-License-Identifier: MIT */
/*
 * What the parts of a plugin host share: host.c (the process: INIT, confinement, the load,
 * the frames from rpcd, running calls), host_calls.c (the host functions a plugin calls, each
 * a frame to rpcd) and host_events.c (MCP events to rpcd). Nothing else includes it.
 */
#ifndef RPCD_ISOLATION_HOST_INTERNAL_H
#define RPCD_ISOLATION_HOST_INTERNAL_H

#include "base/buffer.h"
#include "base/executor.h"
#include "methods/plugin_contract.h"
#include "isolation/channel.h"
#include "methods/registry.h"

#include <rpcd/plugin.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* A call in this process; its handle is (generation << 32) | (index + 1), never NULL. */
typedef struct host_call {
    exec_job job;
    uint32_t index;
    uint32_t generation;
    bool active;
    bool running; /* the handler has not returned yet */
    bool deferred;
    bool completed_early;
    int early_status;
    bool cancelled;
    uint32_t next_free;
    uint64_t id;  /* rpcd's */
    uint8_t lane; /* CHAN_LANE_*: where its frames go */
    const reg_method *method;
    buffer params;
    bool has_params;
    int meta_state; /* the request's _meta: 1 in meta, 0 none, -1 sent twice */
    buffer meta;
    /* (1.6) The round: what the client can be asked, the previous round's answers and state
     * (call_input and call_state answer from them), and the keys asked so far (call_ask
     * answers as rpcd will: a key asked again replaces its question). */
    unsigned ask_capabilities;
    buffer answers;
    bool has_state;
    buffer state;
    size_t question_count;
    char asked[CONTRACT_MOST_QUESTIONS][CONTRACT_MOST_KEY_BYTES + 1];
} host_call;

enum { CALLS_PER_CHUNK = 256, MOST_CHUNKS = 4096 };
#define NO_CALL UINT32_MAX

/* One lane of answers to rpcd (channel.h): a pipe, and the frames waiting for it. */
typedef struct host_lane {
    int fd;
    buffer pending; /* frames to send */
    buffer sending;
    bool writing; /* a thread is writing: what is appended meanwhile, it sends too */
} host_lane;

/* The process's one state: one plugin, one channel. Guarded by lock where it changes. */
struct host_state {
    pthread_mutex_t lock;
    host_call *chunks[MOST_CHUNKS]; /* never move: a handler keeps its call's address */
    uint32_t count;
    uint32_t free_head;
    host_lane lanes[CHAN_LANES];
    bool corked; /* the reader is applying a batch of frames and sends once at its end */
    size_t max_depth;
    executor *pool;
    registry *methods;
};
extern struct host_state host;

/* The call at index (below host.count). */
host_call *host_call_at(uint32_t index);
/* Sends what is pending unless someone else is, or the reader will at the end of its batch. Lock
 * held. */
void host_flush_locked(void);
/* Where the frames about call go. Lock held. */
buffer *host_out(const host_call *call);
/*
 * Where what the plugin tells the client from this thread goes: its call's lane while a handler
 * runs here on a call still in the host, the main lane otherwise. Lock held.
 */
buffer *host_event_out(void);
/* The live call of a plugin's handle, with host.lock taken; NULL (lock not held) when stale. */
host_call *host_lock_live(rpcd_call *handle);

/* (1.6, host_calls.c) A call's round from its CALL frame: what the client can be asked, the
 * previous round's answers and state (copied). Lock held. Returns 0, or -1 (memory). */
int host_begin_round(host_call *call, uint32_t ask_capabilities, chan_str answers, chan_str state);
/* Frees the round's buffers, once the workers are joined. */
void host_free_round(host_call *call);
/* The handle a plugin gets for call. */
rpcd_call *host_handle_of(const host_call *call);
/* Sends END and frees the call. Lock held. */
void host_end_locked(host_call *call, int status);
/* Fills the call_* members of the host table with the functions that forward to rpcd. */
void host_fill_call_api(rpcd_host_api *api);
/*
 * Makes the host's MCP events (resource_updated, the log lines the client asked for) frames to
 * rpcd, with client_level the client's log level (INIT's). Before the plugin loads.
 */
void host_events_attach(int client_level);
/* LEVEL: the client's new log level. Returns 0, or -1 (malformed). */
int host_apply_level(chan_frame *frame);

#endif
