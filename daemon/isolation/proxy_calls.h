/* SPDX-License-Identifier: MIT */
/*
 * The insides of an isolated plugin's proxy, shared by proxy.c (start, restarts, stop) and
 * proxy_calls.c (the calls in flight in the host, the frames both ways, deadlines, the end of
 * a host). Nothing else includes it (its unit test does).
 */
#ifndef RPCD_PROXY_CALLS_H
#define RPCD_PROXY_CALLS_H

#include "base/buffer.h"
#include "calls/call.h"
#include "isolation/channel.h"
#include "isolation/proxy.h"
#include "isolation/spawn.h"
#include "isolation/supervisor.h"

#include <rpcd/plugin.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* One proxy method: its user data. */
typedef struct pxy_method {
    iso_proxy *proxy;
    uint32_t index; /* in the host's registration order: what a CALL frame names */
    char *name;     /* owned */
    bool quick;     /* the plugin flagged it RPCD_METHOD_QUICK: its caller may wait for it */
} pxy_method;

/* A lane of answers from the host (channel.h), as its reader has it. */
typedef struct pxy_lane {
    int fd;         /* the pipe's read end, -1: none */
    buffer in;      /* bytes from the host not applied yet */
    buffer scratch; /* strings of a frame made C strings */
} pxy_lane;

/*
 * Who reads the fast lane. A quick call alone in flight, whose caller has nothing else to read
 * (call_caller_may_wait) and is a thread the wake-up signal interrupts (signals.h), goes on it,
 * and its caller reads the answer itself (pxy_wait_fast): the reader thread's wake-up, two
 * context switches a call, is spared. The reader thread keeps the main lane, and takes the fast
 * lane when the caller gives up waiting.
 *
 * The caller's read blocks: a poll() before it, or a socket's receive timeout, costs more than
 * the hop it spares. The bound is the reader thread's: while calls go on the fast lane it
 * "watches", waking every CHAN_FAST_WAIT_MS, and interrupts (the wake-up signal) a caller that
 * has waited past it; it stops after a tick without a fast call. A call that finds it not
 * watching goes on the main lane, whose answer wakes the reader anyway, and starts the watching.
 */
typedef enum pxy_fast_state {
    PXY_FAST_IDLE,   /* no call on it: the reader thread reads it while not watching */
    PXY_FAST_CALLER, /* the caller of fast_id reads it */
    PXY_FAST_READER, /* the reader thread reads it, until fast_id ends */
} pxy_fast_state;

/* A call forwarded to the host; its id is (generation << 32) | index in the entry table. */
typedef struct pxy_entry {
    uint32_t generation; /* moves on when the entry is released */
    bool active;
    uint32_t next_free;
    rpcd_call *call;          /* answered at its deadline or not, until the host lets go */
    const pxy_method *method; /* borrowed from the proxy */
    long long kill_at;        /* answered at its deadline: the host must let go by then, 0: - */
} pxy_entry;

typedef enum pxy_state {
    PXY_UP,         /* a host runs: frames go out */
    PXY_RESTARTING, /* calls wait for the next host */
    PXY_DOWN,       /* given up on: calls fail at once */
    PXY_STOPPING,   /* rpcd unloads the plugin */
} pxy_state;

struct iso_proxy {
    cfg_plugin *config; /* borrowed */
    iso_settings settings;
    int plugin_fd; /* the plugin's file, opened and checked once, for every host */
    char *name;    /* owned: the plugin's own name, as its first host reported it */
    pxy_method *methods;
    size_t method_count;
    registry *registry; /* borrowed */
    const void *owner;  /* the loader's plugin, owner of the proxy methods */
    rpcd_host_api api;  /* rpcd's call functions, applied to the calls the host answers */
    sup_state restarts;
    pthread_t reader, writer;

    pthread_mutex_t lock;   /* guards everything below */
    pthread_cond_t wake;    /* for the writer: frames to send, a kill_at set, a stop */
    pthread_cond_t changed; /* for the reader: the writer let go of the channel, a stop */
    pthread_cond_t ended;   /* an entry was released, for pxy_wait_ended */
    unsigned ended_waiters;
    pxy_state state;
    int fd;       /* the socket frames go to the host on (set by the reader thread only) */
    pid_t pid;    /* the host (the same) */
    int pidfd;    /* the host's pidfd, readable once it has ended; -1 where there is none */
    bool writing; /* the writer is writing on fd */
    bool writer_waiting;
    bool stopping;
    buffer pending; /* frames not sent yet */
    buffer sending; /* the writer's batch */
    pxy_entry *entries;
    uint32_t entry_count, entry_capacity, free_head;
    size_t running;       /* active entries */
    bool served;          /* a call ended since the host started */
    long long next_check; /* the earliest kill_at, LLONG_MAX: none */
    bool kill_pending;    /* the host kept a timed-out call past the grace period */
    char kill_reason[160];
    char down_reason[256];
    /* For iso_proxy_describe: restarts, kills at a deadline, how the last host died. */
    unsigned long restart_count, deadline_kills;
    char last_crash[128];
    pxy_fast_state fast_state;
    uint64_t fast_id;        /* the call on the fast lane, while not PXY_FAST_IDLE */
    pthread_t fast_caller;   /* the thread reading it, while PXY_FAST_CALLER */
    long long fast_until_us; /* when that thread is to give up waiting */
    long long fast_last_us;  /* the last call put on it (or the start of the watching) */
    bool watching;           /* the reader thread wakes every CHAN_FAST_WAIT_MS (see above) */
    bool watch_wanted;       /* a call would have gone on the fast lane, had it watched */
    int wake_fd;             /* an eventfd: the reader thread is to take the fast lane */

    /* The answers (fds set by the reader thread, under the lock): the main lane is the reader
     * thread's; the fast lane is whoever fast_state names. */
    pxy_lane lanes[CHAN_LANES];

    iso_proxy *next_live; /* the proxies told the MCP client's log level (proxy.c) */
};

void pxy_calls_init(iso_proxy *proxy);
/* A pidfd of pid (new), or -1 where the kernel has none: the end of the channel then tells. */
int pxy_open_pidfd(pid_t pid);
void pxy_calls_fini(iso_proxy *proxy);

enum { PXY_DOWN_STATUS = -2 };
/* The request's _meta as the host's call_meta answers from it. */
typedef struct pxy_meta {
    int state;        /* 1: text is _meta (JSON, one line); 0: none; -1: sent twice */
    const char *text; /* borrowed */
    size_t length;
    call_round_view round; /* (1.6) what the host answers call_input and call_state from */
} pxy_meta;
/*
 * Queues call of method with its params for the host. With may_wait (the caller can wait for
 * the answer: call_caller_may_wait), a quick method's call alone in flight goes on the fast
 * lane, *wait_here true: the caller must then call pxy_wait_fast. Returns 0; PXY_DOWN_STATUS with
 * why in reason when the plugin is down or stopping; -1 (memory).
 */
int pxy_queue_call(iso_proxy *proxy, const pxy_method *method, rpcd_call *call, const char *params,
                   size_t params_length, const pxy_meta *meta, bool may_wait, bool *wait_here,
                   uint64_t *id, char *reason, size_t reason_size);
/*
 * Reads the fast lane for the call queued as id, applying what the host sends, until the call
 * ends or CHAN_FAST_WAIT_MS have passed, the host has ended, or it broke the lane (killed, with
 * the reason kept for its death's report); then leaves the lane to the reader thread. The
 * caller's thread, after pxy_queue_call set *wait_here.
 */
void pxy_wait_fast(iso_proxy *proxy, uint64_t id);
/* Leaves the fast lane: to nobody (idle true, its call ended) or to the reader thread. */
void pxy_leave_fast(iso_proxy *proxy, bool idle);
/* Whether the call queued as id is still in the host. */
bool pxy_is_live(iso_proxy *proxy, uint64_t id);
/* Interrupts the caller reading the fast lane (its read returns EINTR). Lock held, and
 * PXY_FAST_CALLER. */
void pxy_interrupt_caller(iso_proxy *proxy);
/*
 * Kills a host that broke its fast lane (why: how, as pxy_read_frames says it), for the reader
 * thread to see it die and report why.
 */
void pxy_kill_broken(iso_proxy *proxy, const char *why);
/* Waits until the call queued as id has ended (answered, failed, timed out). */
void pxy_wait_ended(iso_proxy *proxy, uint64_t id);
enum { PXY_ID_LIVE, PXY_ID_OLD, PXY_ID_NEVER };
/*
 * What a frame's id names: a call in the host now (PXY_ID_LIVE, *call its handle; one answered
 * at its deadline finds what the host sends stale, but for its end), one that has ended
 * (PXY_ID_OLD), or one the host was never given (PXY_ID_NEVER: a broken host).
 */
int pxy_take_for_frame(iso_proxy *proxy, uint64_t id, rpcd_call **call);
/*
 * Releases the entry of id once its END has been applied: only then may pxy_wait_ended return,
 * the call's response on its way.
 */
void pxy_end_entry(iso_proxy *proxy, uint64_t id);
/*
 * Tells the host that call was cancelled (nothing when it is not the host's any more). A call
 * answered at its deadline (call_answered_at_deadline) must also be let go of within the grace
 * period, or its host is killed.
 */
void pxy_cancel(iso_proxy *proxy, rpcd_call *call);
/*
 * Queues LEVEL: the MCP client's log level changed. For the host running now, or the next one
 * when it is restarting (whose INIT may have it already: twice is harmless); nothing when the
 * plugin is down or stopping.
 */
void pxy_queue_level(iso_proxy *proxy, int level);

/* Starts the writer thread and the reader thread (reader_main). Returns 0, or -1. */
int pxy_start_threads(iso_proxy *proxy, void *(*reader_main)(void *));
/* Stops both: the channel ended for the host, threads joined. */
void pxy_stop_threads(iso_proxy *proxy);

/*
 * The reader's loop on the main lane, and on the fast lane when it is the reader's: reads and
 * applies frames. Returns 0 at an end of the channel rpcd asked for, -1 when the host died (why
 * empty) or broke the channel (why says how).
 */
int pxy_read_frames(iso_proxy *proxy, char *why, size_t why_size);
/*
 * After a host (pid, wait status) died: fails every call it had with -32603, data.exception
 * naming how it ended, logs one line, closes the channel. *served: whether it had answered a
 * call.
 */
void pxy_host_died(iso_proxy *proxy, pid_t pid, int status, const char *why, bool *served);
/* A new host runs on channel (its descriptors taken): the calls that waited go to it. */
void pxy_host_up(iso_proxy *proxy, const iso_channel *channel, pid_t pid);
/* The plugin stays down: the calls that waited, and every call from now on, fail with reason. */
void pxy_host_down(iso_proxy *proxy, const char *reason);

/* Closes the host's channel and drops what its lanes held (a dead host's bytes mean nothing to
 * the next). Lock held, or the threads stopped. */
void pxy_close_channel(iso_proxy *proxy);
/* Waits ms unless rpcd stops meanwhile. Returns 0, or -1 when it stops. */
int pxy_sleep_unless_stopping(iso_proxy *proxy, long long ms);
void pxy_wait_for_stop(iso_proxy *proxy);

#endif
