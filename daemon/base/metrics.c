/* SPDX-License-Identifier: MIT */
/*
 * The counter store behind the control socket's `metrics`: series made under a lock when methods
 * register, counted in per-thread shards when calls end, and written as OpenMetrics text.
 */
#include "base/metrics.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

atomic_bool mx_counting;

#define MX_BOUNDS 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 1000000, 10000000
const long long mx_bucket_bounds_us[MX_BUCKET_COUNT] = {MX_BOUNDS};
const long long mx_bucket_search[16] = {MX_BOUNDS, LLONG_MAX, LLONG_MAX, LLONG_MAX, LLONG_MAX};
_Static_assert(MX_BUCKET_COUNT == 12, "mx_bucket_search holds the bounds and 4 more");

typedef struct mx_plugin {
    char *name; /* owned */
    atomic_ullong events[MX_PLUGIN_EVENT_COUNT];
} mx_plugin;

/*
 * Entries are written before their count is published (release), and never move: a writer reads
 * count (acquire) and every entry below it without the lock, while registration appends.
 */
static pthread_mutex_t store_lock = PTHREAD_MUTEX_INITIALIZER;
static mx_series *series_at[MX_MOST_SERIES];
static atomic_size_t series_count;
static mx_plugin *plugins_at[MX_MOST_PLUGINS];
static atomic_size_t plugin_count;

void mx_enable(bool on)
{
    atomic_store(&mx_counting, on);
}

/* ---- Shards: which thread writes which ------------------------------------------------------ */

_Thread_local int mx_thread_shard = -1;

/* Bit i set: shard i (below MX_SHARDS - 1) is a live thread's. */
static atomic_uint shards_taken;
static pthread_key_t shard_key;
static pthread_once_t shard_key_once = PTHREAD_ONCE_INIT;

/* A thread that took a shard ends: the shard is free for the next (its counts stay). */
static void give_back(void *value)
{
    unsigned shard = (unsigned)((uintptr_t)value - 1);
    atomic_fetch_and(&shards_taken, ~(1u << shard));
}

static void make_shard_key(void)
{
    if (pthread_key_create(&shard_key, give_back) != 0)
        shard_key = (pthread_key_t)-1; /* shards are then never given back: still correct */
}

int mx_take_shard(void)
{
    pthread_once(&shard_key_once, make_shard_key);
    unsigned taken = atomic_load(&shards_taken);
    for (unsigned index = 0; index < MX_SHARDS - 1; index++) {
        if (taken & (1u << index))
            continue;
        if (!atomic_compare_exchange_strong(&shards_taken, &taken, taken | (1u << index))) {
            index = (unsigned)-1; /* taken changed: look again from the first */
            continue;
        }
        /* Without the key's destructor the shard would never be given back: keep it shared. */
        if (shard_key == (pthread_key_t)-1 ||
            pthread_setspecific(shard_key, (void *)(uintptr_t)(index + 1)) != 0) {
            atomic_fetch_and(&shards_taken, ~(1u << index));
            break;
        }
        return mx_thread_shard = (int)index;
    }
    return mx_thread_shard = MX_SHARDS - 1;
}

static bool same(const char *a, const char *b, size_t b_length)
{
    return strlen(a) == b_length && memcmp(a, b, b_length) == 0;
}

mx_series *mx_series_for(const char *method, size_t length, const char *plugin)
{
    if (!plugin)
        plugin = "";
    pthread_mutex_lock(&store_lock);
    size_t count = atomic_load(&series_count);
    mx_series *found = NULL;
    for (size_t i = 0; i < count && !found; i++)
        if (same(series_at[i]->method, method, length) && strcmp(series_at[i]->plugin, plugin) == 0)
            found = series_at[i];
    if (!found && count < MX_MOST_SERIES &&
        (found = aligned_alloc(alignof(mx_series), sizeof *found)) != NULL) {
        memset(found, 0, sizeof *found);
        found->method = strndup(method, length);
        found->plugin = strdup(plugin);
        if (!found->method || !found->plugin) {
            free(found->method);
            free(found->plugin);
            free(found);
            found = NULL;
        } else {
            series_at[count] = found;
            atomic_store_explicit(&series_count, count + 1, memory_order_release);
        }
    }
    pthread_mutex_unlock(&store_lock);
    return found;
}

mx_outcome mx_outcome_of_code(long long code)
{
    switch (code) {
    case 0: return MX_OK;
    case -32602: return MX_INVALID_PARAMS;
    case -32603: return MX_INTERNAL;
    case -32800: return MX_CANCELLED;
    default: return MX_OTHER_ERROR;
    }
}

void mx_count_policy_rejection(mx_series *series)
{
    if (series)
        mx_add(&series->rejections_by_policy, 1);
}

void mx_count_plugin_event(const char *plugin, mx_plugin_event event)
{
    if (!plugin || event >= MX_PLUGIN_EVENT_COUNT)
        return;
    pthread_mutex_lock(&store_lock);
    size_t count = atomic_load(&plugin_count);
    mx_plugin *found = NULL;
    for (size_t i = 0; i < count && !found; i++)
        if (strcmp(plugins_at[i]->name, plugin) == 0)
            found = plugins_at[i];
    if (!found && count < MX_MOST_PLUGINS && (found = calloc(1, sizeof *found)) != NULL) {
        if (!(found->name = strdup(plugin))) {
            free(found);
            found = NULL;
        } else {
            plugins_at[count] = found;
            atomic_store_explicit(&plugin_count, count + 1, memory_order_release);
        }
    }
    if (found)
        mx_add(&found->events[event], 1);
    pthread_mutex_unlock(&store_lock);
}

/* ---- OpenMetrics text ------------------------------------------------------------------- */

static unsigned long long get(const atomic_ullong *counter)
{
    return atomic_load_explicit(counter, memory_order_relaxed);
}

/* A counter of series summed over its shards: offset is the counter's place in a shard. */
static unsigned long long sum(const mx_series *series, size_t offset)
{
    unsigned long long total = 0;
    for (int i = 0; i < MX_SHARDS; i++)
        total += get((const atomic_ullong *)((const char *)&series->shards[i] + offset));
    return total;
}

#define SUM(series, member) sum((series), offsetof(mx_shard, member))
#define SUM_AT(series, member, i)                                                                  \
    sum((series), offsetof(mx_shard, member) + (size_t)(i) * sizeof(atomic_ullong))

/* A label value: backslash, quote and line feed escaped as OpenMetrics says; other control
 * bytes, which a name should never hold, become '?' so that a line stays one line. */
static int append_label(buffer *out, const char *name, const char *value)
{
    int failed = buf_printf(out, "%s=\"", name);
    for (const char *at = value; *at; at++) {
        unsigned char c = (unsigned char)*at;
        if (c == '\\' || c == '"')
            failed |= buf_append_char(out, '\\') | buf_append_char(out, (char)c);
        else if (c == '\n')
            failed |= buf_append(out, "\\n", 2);
        else
            failed |= buf_append_char(out, c < 0x20 || c == 0x7f ? '?' : (char)c);
    }
    return failed | buf_append_char(out, '"');
}

/* "name{method="...",plugin="..."" without the closing brace, for one more label or none. */
static int open_sample(buffer *out, const char *name, const mx_series *series)
{
    int failed = buf_printf(out, "%s{", name);
    failed |= append_label(out, "method", series->method);
    failed |= buf_append_char(out, ',');
    return failed | append_label(out, "plugin", series->plugin);
}

static int family(buffer *out, const char *name, const char *type, const char *help)
{
    return buf_printf(out, "# TYPE %s %s\n# HELP %s %s\n", name, type, name, help);
}

typedef enum counter_of {
    OF_CALLS,
    OF_BYTES_IN,
    OF_BYTES_OUT,
    OF_REJECTIONS,
} counter_of;

/* Every call is in one bucket: their sum is the count. */
static unsigned long long calls_of(const mx_series *series)
{
    unsigned long long calls = 0;
    for (int b = 0; b <= MX_BUCKET_COUNT; b++)
        calls += SUM_AT(series, buckets, b);
    return calls;
}

static unsigned long long counter(const mx_series *series, counter_of which)
{
    switch (which) {
    case OF_CALLS: return calls_of(series);
    case OF_BYTES_IN: return SUM(series, bytes_in);
    case OF_BYTES_OUT: return SUM(series, bytes_out);
    case OF_REJECTIONS: return get(&series->rejections_by_policy);
    }
    return 0;
}

static int write_counter(buffer *out, size_t count, const char *name, counter_of which,
                         const char *help)
{
    int failed = family(out, name, "counter", help);
    char sample[96];
    snprintf(sample, sizeof sample, "%s_total", name);
    for (size_t i = 0; i < count; i++) {
        failed |= open_sample(out, sample, series_at[i]);
        failed |= buf_printf(out, "} %llu\n", counter(series_at[i], which));
    }
    return failed;
}

static int write_errors(buffer *out, size_t count)
{
    static const char *const codes[MX_OUTCOME_COUNT] = {
        NULL, "-32602", "-32603", "-32800", "tool_error", "other",
    };
    int failed =
        family(out, "rpcd_call_errors", "counter", "Calls that ended in an error, by code.");
    for (size_t i = 0; i < count; i++) {
        for (int outcome = MX_OK + 1; outcome < MX_OUTCOME_COUNT; outcome++) {
            failed |= open_sample(out, "rpcd_call_errors_total", series_at[i]);
            failed |= buf_append_char(out, ',') | append_label(out, "code", codes[outcome]);
            failed |= buf_printf(out, "} %llu\n", SUM_AT(series_at[i], errors, outcome));
        }
    }
    return failed;
}

static int write_histogram(buffer *out, size_t count)
{
    int failed = family(out, "rpcd_call_duration_seconds", "histogram",
                        "How long calls took, from their read to their response.");
    for (size_t i = 0; i < count; i++) {
        const mx_series *series = series_at[i];
        /* Each bucket read once, the count their sum: cumulative, and +Inf is the count, even
         * while calls end meanwhile. */
        unsigned long long cumulative = 0;
        for (int b = 0; b < MX_BUCKET_COUNT; b++) {
            cumulative += SUM_AT(series, buckets, b);
            failed |= open_sample(out, "rpcd_call_duration_seconds_bucket", series);
            failed |= buf_printf(out, ",le=\"%g\"} %llu\n", (double)mx_bucket_bounds_us[b] / 1e6,
                                 cumulative);
        }
        unsigned long long calls = cumulative + SUM_AT(series, buckets, MX_BUCKET_COUNT);
        failed |= open_sample(out, "rpcd_call_duration_seconds_bucket", series);
        failed |= buf_printf(out, ",le=\"+Inf\"} %llu\n", calls);
        failed |= open_sample(out, "rpcd_call_duration_seconds_count", series);
        failed |= buf_printf(out, "} %llu\n", calls);
        failed |= open_sample(out, "rpcd_call_duration_seconds_sum", series);
        failed |= buf_printf(out, "} %.6f\n", (double)SUM(series, latency_us) / 1e6);
    }
    return failed;
}

static int write_plugins(buffer *out)
{
    static const char *const names[MX_PLUGIN_EVENT_COUNT][2] = {
        {"rpcd_plugin_crashes", "Deaths of an isolated plugin's host."},
        {"rpcd_plugin_restarts", "Starts of an isolated plugin's host after the first."},
        {"rpcd_plugin_deadline_kills",
         "Hosts killed for holding a call past its deadline and grace period."},
    };
    size_t count = atomic_load_explicit(&plugin_count, memory_order_acquire);
    int failed = 0;
    for (int event = 0; event < MX_PLUGIN_EVENT_COUNT; event++) {
        failed |= family(out, names[event][0], "counter", names[event][1]);
        for (size_t i = 0; i < count; i++) {
            failed |= buf_printf(out, "%s_total{", names[event][0]);
            failed |= append_label(out, "plugin", plugins_at[i]->name);
            failed |= buf_printf(out, "} %llu\n", get(&plugins_at[i]->events[event]));
        }
    }
    return failed;
}

int mx_write_openmetrics(buffer *out)
{
    size_t count = atomic_load_explicit(&series_count, memory_order_acquire);
    int failed = write_counter(out, count, "rpcd_calls", OF_CALLS, "Calls ended.");
    failed |= write_errors(out, count);
    failed |= write_histogram(out, count);
    failed |= write_counter(out, count, "rpcd_call_bytes_in", OF_BYTES_IN,
                            "Bytes of params the calls were given.");
    failed |= write_counter(out, count, "rpcd_call_bytes_out", OF_BYTES_OUT,
                            "Bytes of the response lines the calls wrote.");
    failed |= write_counter(out, count, "rpcd_policy_rejections", OF_REJECTIONS,
                            "Calls a tool policy refused before they ran.");
    failed |= write_plugins(out);
    failed |= buf_append_string(out, "# EOF\n");
    return failed ? -1 : 0;
}

void mx_release(void)
{
    pthread_mutex_lock(&store_lock);
    size_t count = atomic_load(&series_count);
    for (size_t i = 0; i < count; i++) {
        free(series_at[i]->method);
        free(series_at[i]->plugin);
        free(series_at[i]);
        series_at[i] = NULL;
    }
    atomic_store(&series_count, 0);
    count = atomic_load(&plugin_count);
    for (size_t i = 0; i < count; i++) {
        free(plugins_at[i]->name);
        free(plugins_at[i]);
        plugins_at[i] = NULL;
    }
    atomic_store(&plugin_count, 0);
    pthread_mutex_unlock(&store_lock);
}
