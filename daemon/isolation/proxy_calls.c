/* SPDX-License-Identifier: MIT */
/*
 * The calls an isolated plugin's host has: an entry table whose ids the host must name back
 * exactly (any other id is a broken host), the frames queued for the writer thread
 * (proxy_threads.c), and the calls failed when a host dies. The deadlines themselves are the call
 * layer's (call_deadline.c), as in process.
 */
#include "isolation/proxy_calls.h"

#include "calls/call.h"
#include "base/clock.h"
#include "isolation/channel.h"
#include "isolation/spawn.h"
#include "base/lock.h"
#include "base/log.h"
#include "base/signals.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NO_ENTRY UINT32_MAX

void pxy_calls_init(iso_proxy *proxy)
{
    pthread_mutex_init(&proxy->lock, NULL);
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&proxy->wake, &monotonic);
    pthread_cond_init(&proxy->changed, &monotonic);
    pthread_cond_init(&proxy->ended, &monotonic);
    pthread_condattr_destroy(&monotonic);
    proxy->free_head = NO_ENTRY;
    proxy->next_check = LLONG_MAX;
    proxy->fd = -1;
    proxy->pidfd = -1;
    proxy->state = PXY_UP;
    for (int i = 0; i < CHAN_LANES; i++)
        proxy->lanes[i].fd = -1;
    /* Without it (no memory for one), the reader thread never takes the fast lane: pxy_queue_call
     * then puts no call on it. */
    proxy->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

int pxy_open_pidfd(pid_t pid)
{
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

void pxy_calls_fini(iso_proxy *proxy)
{
    pthread_cond_destroy(&proxy->wake);
    pthread_cond_destroy(&proxy->changed);
    pthread_cond_destroy(&proxy->ended);
    pthread_mutex_destroy(&proxy->lock);
    free(proxy->entries);
    buf_free(&proxy->pending);
    buf_free(&proxy->sending);
    for (int i = 0; i < CHAN_LANES; i++) {
        buf_free(&proxy->lanes[i].in);
        buf_free(&proxy->lanes[i].scratch);
    }
    if (proxy->wake_fd >= 0)
        close(proxy->wake_fd);
}

/* ---- The entry table (lock held) ------------------------------------------------------- */

static int acquire_entry(iso_proxy *proxy, uint32_t *out)
{
    uint32_t index = proxy->free_head;
    if (index != NO_ENTRY) {
        proxy->free_head = proxy->entries[index].next_free;
    } else {
        if (proxy->entry_count == proxy->entry_capacity) {
            uint32_t capacity = proxy->entry_capacity ? proxy->entry_capacity * 2 : 64;
            pxy_entry *grown = realloc(proxy->entries, capacity * sizeof *grown);
            if (!grown || capacity >= NO_ENTRY / 2) {
                free(grown == proxy->entries ? NULL : grown);
                return -1;
            }
            proxy->entries = grown;
            proxy->entry_capacity = capacity;
        }
        index = proxy->entry_count++;
        proxy->entries[index].generation = 1;
    }
    pxy_entry *entry = &proxy->entries[index];
    entry->active = true;
    entry->call = NULL;
    entry->kill_at = 0;
    proxy->running++;
    *out = index;
    return 0;
}

static void release_entry(iso_proxy *proxy, uint32_t index)
{
    pxy_entry *entry = &proxy->entries[index];
    entry->active = false;
    entry->generation++;
    entry->call = NULL;
    entry->next_free = proxy->free_head;
    proxy->free_head = index;
    proxy->running--;
    if (proxy->ended_waiters)
        pthread_cond_broadcast(&proxy->ended);
}

static uint64_t entry_id(const iso_proxy *proxy, uint32_t index)
{
    return (uint64_t)proxy->entries[index].generation << 32 | index;
}

/* Whether id names a call in the host now, one that has ended, or one it was never given. */
static int classify(const iso_proxy *proxy, uint64_t id, uint32_t *index)
{
    *index = (uint32_t)id;
    uint32_t named = (uint32_t)(id >> 32);
    if (*index >= proxy->entry_count || named == 0)
        return PXY_ID_NEVER;
    const pxy_entry *entry = &proxy->entries[*index];
    if (entry->active && entry->generation == named)
        return PXY_ID_LIVE;
    return named < entry->generation ? PXY_ID_OLD : PXY_ID_NEVER;
}

int pxy_take_for_frame(iso_proxy *proxy, uint64_t id, rpcd_call **call)
{
    uint32_t index;
    *call = NULL;
    pthread_mutex_lock(&proxy->lock);
    int known = classify(proxy, id, &index);
    if (known == PXY_ID_LIVE)
        *call = proxy->entries[index].call;
    pthread_mutex_unlock(&proxy->lock);
    return known;
}

void pxy_end_entry(iso_proxy *proxy, uint64_t id)
{
    uint32_t index;
    pthread_mutex_lock(&proxy->lock);
    if (classify(proxy, id, &index) == PXY_ID_LIVE) {
        release_entry(proxy, index);
        proxy->served = true;
    }
    pthread_mutex_unlock(&proxy->lock);
}

static void wake_writer(iso_proxy *proxy)
{
    if (proxy->writer_waiting)
        pthread_cond_signal(&proxy->wake);
}

/* Queues CANCEL for entry index. Lock held. */
static void queue_cancel(iso_proxy *proxy, uint32_t index)
{
    size_t start;
    int failed = chan_begin(&proxy->pending, CHAN_CANCEL, &start);
    failed |= chan_put_u64(&proxy->pending, entry_id(proxy, index));
    chan_end(&proxy->pending, start, failed != 0); /* without memory the host is not told */
    wake_writer(proxy);
}

/* ---- Calls in ------------------------------------------------------------------------- */

/*
 * A call alone in flight, whose frame is all that waits, goes out from the calling thread in one
 * send() that never blocks: a round trip then spares the writer thread's wake-up and the two
 * context switches it costs, most of an isolated ping-pong's overhead beyond the host's own. With
 * other calls in flight the writer batches as before (one send per call would halve pipelined
 * throughput), and whatever the socket does not take at once is left to the writer, so that a
 * host that stops reading never blocks the caller (the thread reading requests). Lock held.
 * Returns true when the writer still has something to send.
 */
static bool send_lone_call(iso_proxy *proxy)
{
    if (proxy->running != 1 || proxy->writing || proxy->state != PXY_UP)
        return true;
    ssize_t sent;
    do
        sent = send(proxy->fd, proxy->pending.data, proxy->pending.length,
                    MSG_NOSIGNAL | MSG_DONTWAIT);
    while (sent < 0 && errno == EINTR);
    if (sent <= 0)
        return true; /* EAGAIN, or a dead host, which is the reader's to notice */
    size_t left = proxy->pending.length - (size_t)sent;
    memmove(proxy->pending.data, proxy->pending.data + sent, left);
    proxy->pending.length = left;
    return left > 0;
}

int pxy_queue_call(iso_proxy *proxy, const pxy_method *method, rpcd_call *call, const char *params,
                   size_t params_length, const pxy_meta *meta, bool may_wait, bool *wait_here,
                   uint64_t *id, char *reason, size_t reason_size)
{
    *wait_here = false;
    pthread_mutex_lock(&proxy->lock);
    if (proxy->state == PXY_DOWN || proxy->state == PXY_STOPPING) {
        snprintf(reason, reason_size, "%s",
                 proxy->state == PXY_DOWN ? proxy->down_reason : "rpcd is stopping");
        pthread_mutex_unlock(&proxy->lock);
        return PXY_DOWN_STATUS;
    }
    uint32_t index;
    if (acquire_entry(proxy, &index) != 0) {
        pthread_mutex_unlock(&proxy->lock);
        return -1;
    }
    pxy_entry *entry = &proxy->entries[index];
    entry->call = call;
    entry->method = method;
    bool fast = may_wait && method->quick && proxy->running == 1 && proxy->state == PXY_UP &&
                proxy->fast_state == PXY_FAST_IDLE && proxy->lanes[CHAN_LANE_FAST].fd >= 0 &&
                proxy->wake_fd >= 0 && sig_wake_reaches_here();
    if (fast && !proxy->watching) {
        proxy->watch_wanted = true; /* this call's answer wakes the reader thread */
        fast = false;
    }
    size_t start;
    int failed = chan_begin(&proxy->pending, CHAN_CALL, &start);
    failed |= chan_put_u64(&proxy->pending, entry_id(proxy, index));
    failed |= chan_put_u32(&proxy->pending, method->index);
    failed |= chan_put_opt(&proxy->pending, params, params_length);
    failed |= chan_put_u8(&proxy->pending, (uint8_t)(meta->state + 1));
    failed |= chan_put_opt(&proxy->pending, meta->state == 1 ? meta->text : NULL, meta->length);
    failed |= chan_put_u8(&proxy->pending, fast ? CHAN_LANE_FAST : CHAN_LANE_MAIN);
    failed |= chan_put_u32(&proxy->pending, meta->round.ask_capabilities);
    failed |=
        chan_put_opt(&proxy->pending, meta->round.answers.length ? meta->round.answers.start : NULL,
                     meta->round.answers.length);
    failed |= chan_put_opt(&proxy->pending, meta->round.has_state ? meta->round.state.start : NULL,
                           meta->round.state.length);
    if (chan_end(&proxy->pending, start, failed != 0) != 0) {
        release_entry(proxy, index);
        pthread_mutex_unlock(&proxy->lock);
        return -1;
    }
    *id = entry_id(proxy, index);
    if (fast) {
        proxy->fast_state = PXY_FAST_CALLER;
        proxy->fast_id = *id;
        proxy->fast_caller = pthread_self();
        proxy->fast_last_us = clock_now_us();
        proxy->fast_until_us = proxy->fast_last_us + CHAN_FAST_WAIT_MS * 1000LL;
        *wait_here = true;
    }
    if (send_lone_call(proxy))
        wake_writer(proxy);
    pthread_mutex_unlock(&proxy->lock);
    return 0;
}

void pxy_interrupt_caller(iso_proxy *proxy)
{
    /* It is in pxy_wait_fast, which it leaves under the lock held here: it is alive. */
    pthread_kill(proxy->fast_caller, sig_wake_number());
}

bool pxy_is_live(iso_proxy *proxy, uint64_t id)
{
    uint32_t index;
    pthread_mutex_lock(&proxy->lock);
    bool live = classify(proxy, id, &index) == PXY_ID_LIVE;
    pthread_mutex_unlock(&proxy->lock);
    return live;
}

void pxy_kill_broken(iso_proxy *proxy, const char *why)
{
    pthread_mutex_lock(&proxy->lock);
    if (!proxy->kill_reason[0])
        snprintf(proxy->kill_reason, sizeof proxy->kill_reason, "%s", why);
    if (proxy->state == PXY_UP)
        kill(proxy->pid, SIGKILL); /* not reaped before the reader sees it: the pid is its */
    pthread_mutex_unlock(&proxy->lock);
}

void pxy_leave_fast(iso_proxy *proxy, bool idle)
{
    pthread_mutex_lock(&proxy->lock);
    proxy->fast_state = idle ? PXY_FAST_IDLE : PXY_FAST_READER;
    pthread_cond_broadcast(&proxy->changed); /* pxy_host_died may wait for the lane */
    pthread_mutex_unlock(&proxy->lock);
    if (!idle) {
        uint64_t one = 1;
        ssize_t written = write(proxy->wake_fd, &one, sizeof one);
        (void)written; /* a full counter has woken the reader already */
    }
}

void pxy_wait_ended(iso_proxy *proxy, uint64_t id)
{
    uint32_t index;
    pthread_mutex_lock(&proxy->lock);
    proxy->ended_waiters++;
    /* A call answered at its deadline holds the worker until its host lets go, or is killed. */
    while (classify(proxy, id, &index) == PXY_ID_LIVE)
        pthread_cond_wait(&proxy->ended, &proxy->lock);
    proxy->ended_waiters--;
    pthread_mutex_unlock(&proxy->lock);
}

void pxy_cancel(iso_proxy *proxy, rpcd_call *call)
{
    /* Asked before the proxy's lock: the call's own lock is never taken under it. */
    bool timed_out = call_answered_at_deadline(call);
    long long now = clock_now_ms();
    pthread_mutex_lock(&proxy->lock);
    for (uint32_t i = 0; i < proxy->entry_count; i++) {
        pxy_entry *entry = &proxy->entries[i];
        if (!entry->active || entry->call != call)
            continue;
        queue_cancel(proxy, i);
        if (timed_out && !entry->kill_at) {
            entry->kill_at = now + (long long)proxy->settings.grace_ms;
            if (entry->kill_at < proxy->next_check)
                proxy->next_check = entry->kill_at;
        }
    }
    pthread_mutex_unlock(&proxy->lock);
}

void pxy_queue_level(iso_proxy *proxy, int level)
{
    pthread_mutex_lock(&proxy->lock);
    if (proxy->state != PXY_DOWN && proxy->state != PXY_STOPPING) {
        size_t start;
        int failed = chan_begin(&proxy->pending, CHAN_LEVEL, &start);
        failed |= chan_put_u32(&proxy->pending, (uint32_t)(int32_t)level);
        chan_end(&proxy->pending, start, failed != 0); /* without memory the host is not told */
        wake_writer(proxy);
    }
    pthread_mutex_unlock(&proxy->lock);
}

/* ---- A host's end ----------------------------------------------------------------------- */

/* The fast lane's caller is gone by now. */
void pxy_close_channel(iso_proxy *proxy)
{
    iso_channel channel = {proxy->fd, proxy->lanes[CHAN_LANE_MAIN].fd,
                           proxy->lanes[CHAN_LANE_FAST].fd};
    iso_channel_close(&channel);
    proxy->fd = -1;
    for (int i = 0; i < CHAN_LANES; i++) {
        proxy->lanes[i].fd = -1;
        buf_clear(&proxy->lanes[i].in); /* what a dead host sent means nothing to the next */
    }
    proxy->fast_state = PXY_FAST_IDLE;
}

/* Takes every call of the entry table out (they fail), releasing the entries. Lock held. */
static rpcd_call **take_all_calls(iso_proxy *proxy, size_t *count, char *methods, size_t size)
{
    rpcd_call **calls = malloc((proxy->running + 1) * sizeof *calls);
    size_t taken = 0, written = 0;
    methods[0] = '\0';
    for (uint32_t i = 0; i < proxy->entry_count; i++) {
        pxy_entry *entry = &proxy->entries[i];
        if (!entry->active)
            continue;
        /* Each method once, in the log line. */
        const char *name = entry->method->name;
        if (!strstr(methods, name) && written + strlen(name) + 3 < size)
            written += (size_t)snprintf(methods + written, size - written, "%s%s",
                                        written ? ", " : "", name);
        if (entry->call && calls)
            calls[taken++] = entry->call;
        release_entry(proxy, i);
    }
    *count = taken;
    return calls;
}

static void fail_calls(iso_proxy *proxy, rpcd_call **calls, size_t count, const char *exception,
                       const char *detail, const char *data)
{
    /* A call answered at its deadline takes no failure (it is stale for that), but it still
     * ends here: its host let go of it by dying. */
    for (size_t i = 0; i < count; i++) {
        call_fail_exception(calls[i], exception, detail, data, data ? strlen(data) : 0);
        proxy->api.call_complete(calls[i], RPCD_ERR_INTERNAL);
    }
    free(calls);
}

void pxy_host_died(iso_proxy *proxy, pid_t pid, int status, const char *why, bool *served)
{
    char ended[96], exception[200], detail[320], data[64], methods[256];
    iso_describe_status(status, ended, sizeof ended);
    pthread_mutex_lock(&proxy->lock);
    if (why[0])
        snprintf(exception, sizeof exception, "plugin host %s", why);
    else if (proxy->kill_reason[0])
        snprintf(exception, sizeof exception, "plugin host %s", proxy->kill_reason);
    else
        snprintf(exception, sizeof exception, "plugin host %s", ended);
    proxy->kill_reason[0] = '\0';
    proxy->kill_pending = false;
    if (WIFSIGNALED(status))
        snprintf(data, sizeof data, "{\"signal\":%d}", WTERMSIG(status));
    else
        snprintf(data, sizeof data, "{\"exit_status\":%d}", WEXITSTATUS(status));
    size_t count;
    rpcd_call **calls = take_all_calls(proxy, &count, methods, sizeof methods);
    buf_clear(&proxy->pending);
    proxy->next_check = LLONG_MAX;
    *served = proxy->served;
    proxy->served = false;
    if (proxy->state == PXY_UP)
        proxy->state = PXY_RESTARTING;
    /* Neither the writer nor a caller on the fast lane may be using the channel it closes. The
     * caller sees the host's end, unless a child of the plugin holds the lane open: it is
     * interrupted then, as at its time up. */
    while (proxy->writing || proxy->fast_state == PXY_FAST_CALLER) {
        if (proxy->fast_state == PXY_FAST_CALLER)
            pxy_interrupt_caller(proxy);
        long long until = clock_now_ms() + CHAN_FAST_WAIT_MS;
        struct timespec at = clock_timespec_of_ms(until);
        pthread_cond_timedwait(&proxy->changed, &proxy->lock, &at);
    }
    pxy_close_channel(proxy);
    if (proxy->pidfd >= 0)
        close(proxy->pidfd);
    proxy->pidfd = -1;
    pthread_mutex_unlock(&proxy->lock);

    /* One line per death: the plugin, how its host ended, the methods it was running. */
    log_message(LOG_ERROR, "plugin %s: its host (pid %d) %s%s%s; %s%s%s", proxy->name, (int)pid,
                exception + strlen("plugin host "), why[0] ? ", " : "", why[0] ? ended : "",
                methods[0] ? "calls in flight failed, running: " : "no call was running",
                methods[0] ? methods : "", "");
    snprintf(detail, sizeof detail, "the host process of plugin %s %s", proxy->name,
             exception + strlen("plugin host "));
    if (calls)
        fail_calls(proxy, calls, count, exception, detail, data);
}

void pxy_host_up(iso_proxy *proxy, const iso_channel *channel, pid_t pid)
{
    pthread_mutex_lock(&proxy->lock);
    proxy->fd = channel->requests;
    proxy->lanes[CHAN_LANE_MAIN].fd = channel->answers;
    proxy->lanes[CHAN_LANE_FAST].fd = channel->fast_answers;
    proxy->pid = pid;
    proxy->pidfd = pxy_open_pidfd(pid);
    if (proxy->stopping)
        shutdown(proxy->fd, SHUT_WR);
    else
        proxy->state = PXY_UP;
    pthread_cond_signal(&proxy->wake);
    pthread_mutex_unlock(&proxy->lock);
}

void pxy_host_down(iso_proxy *proxy, const char *reason)
{
    char methods[256];
    size_t count;
    pthread_mutex_lock(&proxy->lock);
    if (proxy->state != PXY_STOPPING)
        proxy->state = PXY_DOWN;
    snprintf(proxy->down_reason, sizeof proxy->down_reason, "%s", reason);
    rpcd_call **calls = take_all_calls(proxy, &count, methods, sizeof methods);
    buf_clear(&proxy->pending);
    pthread_mutex_unlock(&proxy->lock);
    if (calls)
        fail_calls(proxy, calls, count, "plugin host down", reason, NULL);
}

int pxy_sleep_unless_stopping(iso_proxy *proxy, long long ms)
{
    long long until = clock_now_ms() + ms;
    pthread_mutex_lock(&proxy->lock);
    while (!proxy->stopping && clock_now_ms() < until) {
        struct timespec at = clock_timespec_of_ms(until);
        pthread_cond_timedwait(&proxy->changed, &proxy->lock, &at);
    }
    bool stopping = proxy->stopping;
    pthread_mutex_unlock(&proxy->lock);
    return stopping ? -1 : 0;
}

void pxy_wait_for_stop(iso_proxy *proxy)
{
    pthread_mutex_lock(&proxy->lock);
    while (!proxy->stopping)
        pthread_cond_wait(&proxy->changed, &proxy->lock);
    pthread_mutex_unlock(&proxy->lock);
}
