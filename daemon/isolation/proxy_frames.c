/* SPDX-License-Identifier: MIT */
/*
 * What an isolated plugin's host sends, applied by the proxy's reader thread (and, on the fast
 * lane, by a caller waiting for its call): one function per message kind, in one table, each
 * reading its fields, checking that the frame holds exactly them, and handing them to rpcd's own
 * host function on the call the frame names (or, for the MCP events, which name no call, to
 * mcp_events).
 */
#include "isolation/proxy_calls.h"

#include "calls/call.h"
#include "base/clock.h"
#include "isolation/channel.h"
#include "json/json_scan.h"
#include "wire/mcp_events.h"
#include "base/output.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>

/* ---- The reader: frames from the host --------------------------------------------------- */

/*
 * A string of the frame as a C string in the reader's scratch (offset returned through *at).
 * It goes into the protocol: text that is not UTF-8 (or holds a NUL) marks the frame bad.
 */
static const char *scratch_string(pxy_lane *lane, chan_str text, size_t *at, chan_frame *frame)
{
    if (!text.bytes)
        return NULL;
    if (memchr(text.bytes, '\0', text.length) || !js_utf8_valid(text.bytes, text.length)) {
        frame->bad = true;
        return NULL;
    }
    *at = lane->scratch.length;
    if (buf_append(&lane->scratch, text.bytes, text.length) != 0 ||
        buf_append_char(&lane->scratch, '\0') != 0) {
        frame->bad = true;
        return NULL;
    }
    return "";
}

#define STRING_AT(lane, offset, was) ((was) ? (lane)->scratch.data + (offset) : NULL)

/* Each applies one kind of frame to call (NULL: a call that has ended, read and ignored). */
typedef int (*apply_fn)(iso_proxy *proxy, pxy_lane *lane, chan_frame *frame, rpcd_call *call);

static int apply_result(iso_proxy *proxy, pxy_lane *lane, chan_frame *frame, rpcd_call *call)
{
    (void)lane; /* no string of it is made a C string */
    chan_str json = chan_get_str(frame);
    if (!chan_finished(frame))
        return -1;
    if (call)
        proxy->api.call_result(call, json.bytes, json.length); /* checked there, as in-process */
    return 0;
}

static int apply_tool_result(iso_proxy *proxy, pxy_lane *lane, chan_frame *frame, rpcd_call *call)
{
    (void)lane; /* no string of it is made a C string */
    chan_str json = chan_get_str(frame);
    if (!chan_finished(frame))
        return -1;
    if (call)
        proxy->api.call_tool_result(call, json.bytes, json.length); /* checked there */
    return 0;
}

static int apply_fail(iso_proxy *proxy, pxy_lane *lane, chan_frame *frame, rpcd_call *call)
{
    int status = (int32_t)chan_get_u32(frame);
    size_t message_at = 0;
    const char *message = scratch_string(lane, chan_get_opt(frame), &message_at, frame);
    chan_str data = chan_get_opt(frame);
    if (!chan_finished(frame))
        return -1;
    if (call)
        proxy->api.call_fail(call, status, STRING_AT(lane, message_at, message), data.bytes,
                             data.length);
    return 0;
}

static int apply_fail_code(iso_proxy *proxy, pxy_lane *lane, chan_frame *frame, rpcd_call *call)
{
    int64_t code = chan_get_i64(frame);
    size_t message_at = 0;
    const char *message = scratch_string(lane, chan_get_str(frame), &message_at, frame);
    chan_str data = chan_get_opt(frame);
    if (!chan_finished(frame))
        return -1;
    if (call)
        proxy->api.call_fail_code(call, code, STRING_AT(lane, message_at, message), data.bytes,
                                  data.length);
    return 0;
}

static int apply_notify(iso_proxy *proxy, pxy_lane *lane, chan_frame *frame, rpcd_call *call)
{
    size_t method_at = 0, params_at = 0;
    const char *method = scratch_string(lane, chan_get_str(frame), &method_at, frame);
    chan_str params = chan_get_opt(frame);
    /* call_notify looks at the params' first byte as at a C string's. */
    const char *text = scratch_string(lane, params, &params_at, frame);
    if (!chan_finished(frame) || !method)
        return -1;
    if (call)
        proxy->api.call_notify(call, STRING_AT(lane, method_at, method),
                               STRING_AT(lane, params_at, text), params.length);
    return 0;
}

static int apply_progress(iso_proxy *proxy, pxy_lane *lane, chan_frame *frame, rpcd_call *call)
{
    double done = chan_get_f64(frame), total = chan_get_f64(frame);
    size_t message_at = 0;
    const char *message = scratch_string(lane, chan_get_opt(frame), &message_at, frame);
    if (!chan_finished(frame))
        return -1;
    if (call)
        proxy->api.call_progress(call, done, total, STRING_AT(lane, message_at, message));
    return 0;
}

static int apply_end(iso_proxy *proxy, pxy_lane *lane, chan_frame *frame, rpcd_call *call)
{
    (void)lane; /* no string of it is made a C string */
    int status = (int32_t)chan_get_u32(frame);
    if (!chan_finished(frame))
        return -1;
    if (!call)
        return 0;
    /* Only a plugin built before 1.1 ends a call with 1, which was then an unknown status, and
     * is answered as one in process; call_complete would refuse it as RPCD_DEFERRED. */
    if (status == RPCD_DEFERRED)
        call_complete_with_status(call, status);
    else
        proxy->api.call_complete(call, status);
    return 0;
}

static int apply_ask(iso_proxy *proxy, pxy_lane *lane, chan_frame *frame, rpcd_call *call)
{
    size_t key_at = 0, method_at = 0;
    const char *key = scratch_string(lane, chan_get_str(frame), &key_at, frame);
    const char *method = scratch_string(lane, chan_get_str(frame), &method_at, frame);
    chan_str params = chan_get_opt(frame);
    if (!chan_finished(frame) || !key || !method)
        return -1;
    if (call) /* checked again there, as in-process */
        proxy->api.call_ask(call, STRING_AT(lane, key_at, key), STRING_AT(lane, method_at, method),
                            params.bytes, params.length);
    return 0;
}

static int apply_state(iso_proxy *proxy, pxy_lane *lane, chan_frame *frame, rpcd_call *call)
{
    (void)lane; /* bytes, never a C string */
    chan_str state = chan_get_opt(frame);
    if (!chan_finished(frame))
        return -1;
    if (call)
        proxy->api.call_set_state(call, state.bytes, state.length);
    return 0;
}

/* What the reader does with each kind a host may send once it runs: one row per host function. */
static const apply_fn apply_kind[CHAN_KIND_COUNT] = {
    [CHAN_RESULT] = apply_result,
    [CHAN_FAIL] = apply_fail,
    [CHAN_FAIL_CODE] = apply_fail_code,
    [CHAN_NOTIFY] = apply_notify,
    [CHAN_PROGRESS] = apply_progress,
    [CHAN_END] = apply_end,
    [CHAN_TOOL_RESULT] = apply_tool_result,
    [CHAN_ASK] = apply_ask,
    [CHAN_STATE] = apply_state,
};

/* ---- Frames about no call: MCP events, handed to rpcd's own sink ------------------------- */

static int apply_resource_updated(iso_proxy *proxy, pxy_lane *lane, chan_frame *frame)
{
    (void)proxy;
    chan_str uri;
    size_t at = 0;
    if (chan_read_resource_updated(frame, &uri) != 0 || !scratch_string(lane, uri, &at, frame))
        return -1;
    mcp_events_resource_updated(lane->scratch.data + at);
    return 0;
}

static int apply_log(iso_proxy *proxy, pxy_lane *lane, chan_frame *frame)
{
    (void)lane;
    int level;
    chan_str text;
    if (chan_read_log(frame, &level, &text) != 0)
        return -1;
    mcp_events_log(proxy->name, level, text.bytes, text.length);
    return 0;
}

typedef int (*apply_event_fn)(iso_proxy *proxy, pxy_lane *lane, chan_frame *frame);
static const apply_event_fn apply_event_kind[CHAN_KIND_COUNT] = {
    [CHAN_RESOURCE_UPDATED] = apply_resource_updated,
    [CHAN_LOG] = apply_log,
};

/* Says why frame broke the channel. Returns -1. */
static int malformed(const chan_frame *frame, char *why, size_t why_size)
{
    snprintf(why, why_size, "sent a malformed message of kind %d", (int)frame->kind);
    return -1;
}

/* Applies one frame read from lane. Returns 0, or -1 with why when the host broke the channel. */
static int apply(iso_proxy *proxy, pxy_lane *lane, chan_frame *frame, char *why, size_t why_size)
{
    apply_event_fn event = apply_event_kind[frame->kind];
    if (event) {
        buf_clear(&lane->scratch);
        return event(proxy, lane, frame) == 0 ? 0 : malformed(frame, why, why_size);
    }
    apply_fn fn = apply_kind[frame->kind];
    if (!fn) {
        snprintf(why, why_size, "sent a message of kind %d, which is not its to send",
                 (int)frame->kind);
        return -1;
    }
    uint64_t id = chan_get_u64(frame);
    if (frame->bad) /* too short for an id: it names no call at all */
        return malformed(frame, why, why_size);
    rpcd_call *call;
    if (pxy_take_for_frame(proxy, id, &call) == PXY_ID_NEVER) {
        snprintf(why, why_size, "named a call it was never given");
        return -1;
    }
    buf_clear(&lane->scratch);
    if (fn(proxy, lane, frame, call) != 0)
        return malformed(frame, why, why_size);
    if (frame->kind == CHAN_END)
        pxy_end_entry(proxy, id);
    return 0;
}

/* Applies the whole frames lane holds. Returns 0, or -1 with why when the host broke it. */
static int apply_frames(iso_proxy *proxy, pxy_lane *lane, char *why, size_t why_size)
{
    size_t offset = 0, used;
    chan_frame frame;
    int next;
    while ((next = chan_next(lane->in.data + offset, lane->in.length - offset, &used, &frame)) ==
           CHAN_FRAME) {
        if (apply(proxy, lane, &frame, why, why_size) != 0)
            return -1;
        offset += used;
    }
    if (next == CHAN_MALFORMED) {
        snprintf(why, why_size, "sent a malformed frame");
        return -1;
    }
    chan_consume(&lane->in, offset);
    return 0;
}

/* ---- The reader thread ------------------------------------------------------------------ */

enum { READY_MAIN = 1, READY_FAST = 2, READY_ENDED = 4 };

/*
 * The watching of the fast lane (proxy_calls.h), at each wake-up of the reader thread: starts it
 * when a call asked, interrupts a caller past its time, stops it after a tick without a fast
 * call. Returns the reader's next poll() timeout.
 */
static int watch_fast_lane(iso_proxy *proxy)
{
    enum { IDLE_US = 2 * CHAN_FAST_WAIT_MS * 1000 };
    long long now = clock_now_us();
    pthread_mutex_lock(&proxy->lock);
    if (proxy->watch_wanted) {
        proxy->watching = true;
        proxy->watch_wanted = false;
        proxy->fast_last_us = now;
    }
    if (proxy->fast_state == PXY_FAST_CALLER && now >= proxy->fast_until_us)
        pxy_interrupt_caller(proxy); /* again at each tick: the first may come before its read */
    if (proxy->watching && proxy->fast_state != PXY_FAST_CALLER &&
        now - proxy->fast_last_us > IDLE_US)
        proxy->watching = false;
    int timeout = proxy->watching ? CHAN_FAST_WAIT_MS : -1;
    pthread_mutex_unlock(&proxy->lock);
    return timeout;
}

/*
 * Whether the reader thread reads the fast lane: once a caller left it, and whenever no call can
 * take it (not watching, which only this thread starts), so that what a host writes there
 * unasked (bytes that are no frame, late frames of a call the main lane ended) is read and
 * judged, never left to hang the lane. Not at its end (fast_ended: seen already). Lock held.
 */
static bool reader_reads_fast_lane(const iso_proxy *proxy, bool fast_ended)
{
    if (fast_ended)
        return false;
    return proxy->fast_state == PXY_FAST_READER ||
           (proxy->fast_state == PXY_FAST_IDLE && !proxy->watching);
}

/*
 * Waits until a lane the reader thread reads has bytes (or its end), or the host has ended: a
 * child the plugin forked may hold the channel open after the host died, and the end of the
 * channel would then never come. Returns READY_* bits.
 */
static int wait_for_answers(iso_proxy *proxy, bool fast_ended)
{
    for (;;) {
        int timeout = watch_fast_lane(proxy);
        pthread_mutex_lock(&proxy->lock);
        bool fast = reader_reads_fast_lane(proxy, fast_ended);
        pthread_mutex_unlock(&proxy->lock);
        struct pollfd wanted[4] = {{proxy->lanes[CHAN_LANE_MAIN].fd, POLLIN, 0},
                                   {proxy->wake_fd, POLLIN, 0},
                                   {proxy->pidfd, POLLIN, 0},
                                   {fast ? proxy->lanes[CHAN_LANE_FAST].fd : -1, POLLIN, 0}};
        int polled = poll(wanted, 4, timeout);
        if (polled == 0)
            continue;
        if (polled < 0) {
            if (errno == EINTR)
                continue;
            return READY_MAIN; /* the read then reports it */
        }
        if (wanted[1].revents) {
            uint64_t count;
            ssize_t drained = read(proxy->wake_fd, &count, sizeof count);
            (void)drained; /* the state it tells of is read under the lock above */
        }
        int ready = (wanted[0].revents ? READY_MAIN : 0) | (wanted[3].revents ? READY_FAST : 0);
        if (ready)
            return ready;
        if (wanted[2].revents)
            return READY_ENDED;
    }
}

/*
 * Reads and applies what the fast lane has, for the reader thread; gives it up once its call has
 * ended. Returns 1 at its end (the host's death, which the main lane or the pidfd then tells, or
 * a host that closed the lane and ends at its next answer on it), 0, or -1 with why.
 */
static int read_fast(iso_proxy *proxy, char *why, size_t why_size)
{
    pxy_lane *lane = &proxy->lanes[CHAN_LANE_FAST];
    long got = chan_read_some(lane->fd, &lane->in);
    if (got <= 0)
        return 1;
    if (apply_frames(proxy, lane, why, why_size) != 0)
        return -1;
    pthread_mutex_lock(&proxy->lock);
    bool given = proxy->fast_state == PXY_FAST_READER;
    uint64_t id = proxy->fast_id;
    pthread_mutex_unlock(&proxy->lock);
    if (given && !pxy_is_live(proxy, id))
        pxy_leave_fast(proxy, true);
    return 0;
}

/*
 * Reads and applies what the lanes that are ready hold. Returns 1 to go on, 0 at the end of the
 * channel rpcd asked for, -1 with why.
 */
static int read_ready(iso_proxy *proxy, int ready, bool *fast_ended, char *why, size_t why_size)
{
    pxy_lane *lane = &proxy->lanes[CHAN_LANE_MAIN];
    if (ready & READY_FAST) {
        int fast = read_fast(proxy, why, why_size);
        if (fast < 0)
            return -1;
        *fast_ended |= fast == 1;
    }
    if (!(ready & (READY_MAIN | READY_ENDED)))
        return 1;
    long got = ready & READY_MAIN ? chan_read_some(lane->fd, &lane->in) : 0;
    if (got <= 0) {
        pthread_mutex_lock(&proxy->lock);
        bool stopping = proxy->stopping;
        pthread_mutex_unlock(&proxy->lock);
        if (stopping)
            return 0;
        /* A host that died with bytes of rpcd's unread resets the connection: that is its
         * death, described by how it ended. */
        if (got < 0 && errno != ECONNRESET)
            snprintf(why, why_size, "broke its channel (%s)", strerror(errno));
        return -1;
    }
    return apply_frames(proxy, lane, why, why_size) != 0 ? -1 : 1;
}

int pxy_read_frames(iso_proxy *proxy, char *why, size_t why_size)
{
    bool fast_ended = false;
    for (;;) {
        int ready = wait_for_answers(proxy, fast_ended);
        /* The responses of one read leave in one write, not one each. */
        out_batch_begin();
        int going = read_ready(proxy, ready, &fast_ended, why, why_size);
        out_batch_end();
        if (going <= 0)
            return going;
    }
}

/* ---- A caller on the fast lane ---------------------------------------------------------- */

void pxy_wait_fast(iso_proxy *proxy, uint64_t id)
{
    pxy_lane *lane = &proxy->lanes[CHAN_LANE_FAST];
    long long until = clock_now_us() + CHAN_FAST_WAIT_MS * 1000LL;
    char why[128] = "";
    bool ended = false;
    for (bool first = true;; first = false) {
        if (!pxy_is_live(proxy, id)) {
            ended = true;
            break;
        }
        /* One read always: an answer already on the lane is taken, however late this thread
         * came to run (a busy machine may keep it off a core for longer than the wait). */
        if (!first && clock_now_us() >= until)
            break;
        /* The reader thread interrupts it past its time (EINTR), or a death with a child of
         * the plugin holding the lane open. */
        long got = chan_read_once(lane->fd, &lane->in);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        if (apply_frames(proxy, lane, why, sizeof why) != 0) {
            pxy_kill_broken(proxy, why);
            break;
        }
    }
    pxy_leave_fast(proxy, ended);
}
