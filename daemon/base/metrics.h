/* SPDX-License-Identifier: MIT */
/*
 * The counters the control socket's `metrics` reads: per method and plugin (calls, errors by
 * code, latency buckets, bytes in and out, rejections by policy) and per plugin (host crashes,
 * restarts, deadline kills), in one process-wide store, and their OpenMetrics text.
 *
 * The hot path adds to counters without a lock and, mostly, without a locked instruction: a
 * series is found once, when its method is registered (mx_series_for), and is split in shards,
 * one per thread that counts (MX_SHARDS), so that a call's end adds to counters no other thread
 * writes (a relaxed load and store: a locked addition costs as much as the rest of the counting).
 * Series live until mx_release (at exit); the same method and plugin names get the same series
 * again, so counters go on across reloads.
 */
#ifndef RPCD_METRICS_H
#define RPCD_METRICS_H

#include "base/buffer.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* How a call ended, for its error counter (MX_OK counts no error). */
typedef enum mx_outcome {
    MX_OK,
    MX_INVALID_PARAMS, /* -32602 */
    MX_INTERNAL,       /* -32603 (a handler's failure, a deadline, a dead host) */
    MX_CANCELLED,      /* -32800, or a silent cancel */
    MX_TOOL_ERROR,     /* an MCP tool result with isError */
    MX_OTHER_ERROR,    /* any other code (a plugin's own) */
    MX_OUTCOME_COUNT,
} mx_outcome;

/* The upper bounds of the latency buckets, in microseconds; +Inf is the count. */
enum { MX_BUCKET_COUNT = 12 };
extern const long long mx_bucket_bounds_us[MX_BUCKET_COUNT];

/* The most series kept (method and plugin pairs); mx_series_for returns NULL past it. */
enum { MX_MOST_SERIES = 4096, MX_MOST_PLUGINS = 1024 };

/*
 * Shards a series has: each of the first MX_SHARDS - 1 threads that count at once has one of its
 * own (given back when the thread ends); any more share the last, with atomic additions.
 */
enum { MX_SHARDS = 8 };

/* The counters of one series that one thread writes; a cache line of its own. */
typedef struct mx_shard {
    alignas(64) atomic_ullong errors[MX_OUTCOME_COUNT]; /* [MX_OK] unused */
    /* Not cumulative: the writer sums them. The last is past every bound (+Inf), so that their
     * sum is the count of calls, and a call adds to one counter for both. */
    atomic_ullong buckets[MX_BUCKET_COUNT + 1];
    atomic_ullong latency_us; /* the sum */
    atomic_ullong bytes_in;   /* params */
    atomic_ullong bytes_out;  /* response lines */
} mx_shard;

/* The counters of one method of one plugin, the sum of its shards. */
typedef struct mx_series {
    char *method;                       /* owned */
    char *plugin;                       /* owned; "" for rpcd's own methods */
    atomic_ullong rejections_by_policy; /* mx_count_policy_rejection */
    mx_shard shards[MX_SHARDS];
} mx_series;

/* What happened to a plugin's host (isolation = process). */
typedef enum mx_plugin_event {
    MX_CRASH,         /* its host died with calls or without */
    MX_RESTART,       /* its host was started again */
    MX_DEADLINE_KILL, /* its host was killed for holding a call past its deadline */
    MX_PLUGIN_EVENT_COUNT,
} mx_plugin_event;

/* Turns counting on or off (off at start). Any thread. */
void mx_enable(bool on);
/* What mx_on reads; set only through mx_enable. */
extern atomic_bool mx_counting;
/* Whether calls are counted: one relaxed load. */
static inline bool mx_on(void)
{
    return atomic_load_explicit(&mx_counting, memory_order_relaxed);
}

/*
 * The series of method (length bytes) of plugin (NUL-terminated, NULL for ""), made on first
 * use. Takes a lock: for registration, not for calls. Returns it (borrowed, alive until
 * mx_release), or NULL when memory ran out or MX_MOST_SERIES are taken.
 */
mx_series *mx_series_for(const char *method, size_t length, const char *plugin);

static inline void mx_add(atomic_ullong *counter, unsigned long long amount)
{
    atomic_fetch_add_explicit(counter, amount, memory_order_relaxed);
}

/* The calling thread's shard, -1 until it first counts (mx_take_shard). */
extern _Thread_local int mx_thread_shard;
/* Gives the calling thread a shard, its own while one is free. Returns its index. */
int mx_take_shard(void);

/* Adds to a counter of the calling thread's shard: a plain load and store when the shard is the
 * thread's alone (no other thread writes it; readers see either value), else atomically. */
static inline void mx_add_to_shard(atomic_ullong *counter, unsigned long long amount, bool alone)
{
    if (alone)
        atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + amount,
                              memory_order_relaxed);
    else
        mx_add(counter, amount);
}

/* The bounds again, padded to 16 with bounds no latency passes, for mx_bucket_of. */
extern const long long mx_bucket_search[16];

/* The bucket of latency_us: the first whose bound is not below it, MX_BUCKET_COUNT past all. A
 * binary search in four steps without a branch, so that a slow call costs no more to count than
 * a quick one. */
static inline size_t mx_bucket_of(long long latency_us)
{
    size_t bucket = latency_us > mx_bucket_search[7] ? 8 : 0;
    bucket += latency_us > mx_bucket_search[bucket + 3] ? 4 : 0;
    bucket += latency_us > mx_bucket_search[bucket + 1] ? 2 : 0;
    return bucket + (latency_us > mx_bucket_search[bucket]);
}

/*
 * calls calls of series (not NULL) ended as outcome, each after latency_us (not negative),
 * having read bytes_in bytes of params and written bytes_out in all. Lock-free, any thread;
 * inline, as it runs at every call's end (or once for a burst of calls that ended alike).
 */
static inline void mx_count_calls(mx_series *series, mx_outcome outcome, long long latency_us,
                                  unsigned long long calls, size_t bytes_in, size_t bytes_out)
{
    int index = mx_thread_shard >= 0 ? mx_thread_shard : mx_take_shard();
    bool alone = index < MX_SHARDS - 1;
    mx_shard *shard = &series->shards[index];
    if (outcome != MX_OK)
        mx_add_to_shard(&shard->errors[outcome], calls, alone);
    mx_add_to_shard(&shard->buckets[mx_bucket_of(latency_us)], calls, alone);
    mx_add_to_shard(&shard->latency_us, (unsigned long long)latency_us * calls, alone);
    mx_add_to_shard(&shard->bytes_in, bytes_in, alone);
    mx_add_to_shard(&shard->bytes_out, bytes_out, alone);
}

/* One call of series ended as outcome after latency_us (mx_count_calls of one). */
static inline void mx_count_call(mx_series *series, mx_outcome outcome, long long latency_us,
                                 size_t bytes_in, size_t bytes_out)
{
    mx_count_calls(series, outcome, latency_us, 1, bytes_in, bytes_out);
}

/* The outcome for a JSON-RPC error code (0: none). */
mx_outcome mx_outcome_of_code(long long code);

/*
 * The hook for a tool policy: a call of series (may be NULL) refused by policy before it ran.
 * Lock-free, any thread; counted whether or not mx_on.
 */
void mx_count_policy_rejection(mx_series *series);

/* An event of plugin's host (name borrowed). Takes the store's lock: for rare events only. */
void mx_count_plugin_event(const char *plugin, mx_plugin_event event);

/*
 * Appends every counter as OpenMetrics text (families rpcd_calls, rpcd_call_errors,
 * rpcd_call_duration_seconds, rpcd_call_bytes_in, rpcd_call_bytes_out,
 * rpcd_policy_rejections, rpcd_plugin_crashes, rpcd_plugin_restarts,
 * rpcd_plugin_deadline_kills), ending with "# EOF\n". Any thread. Returns 0 or -1 (memory).
 */
int mx_write_openmetrics(buffer *out);

/* Frees every series (at exit, or between tests): no counting may run meanwhile. */
void mx_release(void);

#endif
