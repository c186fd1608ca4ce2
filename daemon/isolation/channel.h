/* SPDX-License-Identifier: MIT */
/*
 * The channel between rpcd and an isolated plugin's host process: length-prefixed frames, one
 * message kind per host function, many frames per read and write. rpcd sends over a socket (no
 * SIGPIPE, a send that never blocks when asked); the host answers over two pipes, the main lane
 * and the fast lane of a call rpcd's caller waits for itself (proxy_calls.h). One direction per
 * descriptor: a socket read from both ends wakes a reader asleep on it whenever its peer takes
 * bytes (a wasted switch each call), and a pipe costs less per message than a socket (no buffer
 * allocated and charged for each). What the host sends is untrusted: every read is bounded and
 * checked, and a frame that does not parse is an error the caller treats as a crash of the host.
 */
#ifndef RPCD_CHANNEL_H
#define RPCD_CHANNEL_H

#include "base/buffer.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The largest frame either side accepts: a result or params of up to 256 MiB. A length above it
 * is a broken (or hostile) peer, never a reason to allocate.
 */
#define CHAN_MAX_FRAME ((size_t)256 * 1024 * 1024)

/* clang-format off */
/*
 * The message kinds, with what each carries (u32/u64/i32/i64/f64 native, str = u32 length and
 * bytes, opt = u8 present and a str). Parent to host:
 *   INIT      u32 log level, i32 MCP client's log level (-1: none), u64 workers,
 *             u64 max_depth, u8 insecure, str name, str path, u32 pair count, then str key and
 *             str value per pair, then the confinement (spawn.c's put_confinement)
 *   CALL      u64 id, u32 method index, opt params, u8 _meta state + 1, opt _meta,
 *             u8 lane (CHAN_LANE_*: where every frame about the call goes), u32 what the
 *             client can be asked (contract_ask_capability bits), opt the previous round's
 *             answers (a JSON object), opt its state
 *   CANCEL    u64 id
 *   LEVEL     i32 MCP client's log level (-1: none), whenever it changes
 * Host to parent, answers to INIT:
 *   METHOD    u32 flags, str name, opt description, opt params_schema, opt title,
 *             opt annotations, opt output_schema, opt icons, u32 mcp_role,
 *             opt mcp_descriptor, u32 the plugin's ABI minor (one per method)
 *   LOG       as below: lines the plugin's init logged for the client (before READY)
 *   READY     i32 status (0: loaded), str plugin name or the reason it failed
 * Host to parent, one per host function a plugin calls on a call:
 *   RESULT    u64 id, str json                           call_result
 *   FAIL      u64 id, i32 status, opt message, opt data  call_fail
 *   FAIL_CODE u64 id, i64 code, str message, opt data    call_fail_code
 *   NOTIFY    u64 id, str method, opt params             call_notify
 *   PROGRESS  u64 id, f64 done, f64 total, opt message   call_progress
 *   END       u64 id, i32 status                         the handler's status, or call_complete
 *   TOOL_RESULT u64 id, str json                         call_tool_result
 *   ASK       u64 id, str key, str method, opt params    call_ask
 *   STATE     u64 id, opt state                          call_set_state
 * Host to parent, about no call (MCP events, mcp_events.h):
 *   RESOURCE_UPDATED str uri (UTF-8, at most CHAN_MAX_URI)  resource_updated
 *   LOG       i32 level, str text (UTF-8, at most CHAN_MAX_LOG_TEXT)
 *                                     a log line the MCP client asked for (its level or finer)
 * call_is_cancelled, call_method, call_meta, call_input, call_state and config_get are
 * answered in the host; the log
 * functions write to the log there, and send LOG only for the client.
 */
/* clang-format on */
typedef enum chan_kind {
    CHAN_INIT = 1,
    CHAN_CALL,
    CHAN_CANCEL,
    CHAN_METHOD,
    CHAN_READY,
    CHAN_RESULT,
    CHAN_FAIL,
    CHAN_FAIL_CODE,
    CHAN_NOTIFY,
    CHAN_PROGRESS,
    CHAN_END,
    CHAN_TOOL_RESULT, /* 1.4's call_tool_result: a complete MCP tool result */
    CHAN_RESOURCE_UPDATED,
    CHAN_LOG,
    CHAN_LEVEL,
    CHAN_ASK,   /* 1.6's call_ask */
    CHAN_STATE, /* 1.6's call_set_state */
    CHAN_KIND_COUNT
} chan_kind;

/*
 * The longest URI a host may name in RESOURCE_UPDATED (a plugin's longer one is dropped in the
 * host with a log line), and the longest text of a LOG line (the log functions' own bound).
 */
#define CHAN_MAX_URI ((size_t)64 * 1024)
#define CHAN_MAX_LOG_TEXT ((size_t)2048)

/*
 * The fixed descriptors of a host process: what rpcd sends (a socket), the plugin's file, the
 * two pipes the host answers on (the main lane, and the fast lane), and rpcd's log, which the
 * host writes its log lines to (its stdout and stderr are the plugin's).
 */
enum {
    CHAN_HOST_FD = 3,
    CHAN_PLUGIN_FD = 4,
    CHAN_ANSWER_FD = 5,
    CHAN_FAST_ANSWER_FD = 6,
    CHAN_LOG_FD = 7,
    CHAN_LAST_FD = CHAN_LOG_FD
};

/*
 * The lanes a host answers on. Every frame about a call goes on the call's lane, and so does
 * what a plugin's handler tells the client (resource updates, log lines) from the thread that
 * runs it while its call is in the host: in the order the plugin sent them. All else goes on
 * the main lane.
 */
enum { CHAN_LANE_MAIN = 0, CHAN_LANE_FAST = 1, CHAN_LANES = 2 };

/*
 * The most a caller waits for its answer on the fast lane, give or take as much again: a quick
 * handler answers in microseconds, and one that does not must not hold the thread reading
 * requests (in process, it would).
 */
enum { CHAN_FAST_WAIT_MS = 2 };

/* ---- Writing frames ---------------------------------------------------------------------- */

/*
 * Starts a frame of kind at the end of out; *start remembers where, for chan_end. The put
 * functions append its fields; each returns 0 or -1 (memory), which the caller ORs together and
 * hands to chan_end. Returns 0 or -1 (memory).
 */
int chan_begin(buffer *out, chan_kind kind, size_t *start);
int chan_put_u8(buffer *out, uint8_t value);
int chan_put_u32(buffer *out, uint32_t value);
int chan_put_u64(buffer *out, uint64_t value);
int chan_put_i64(buffer *out, int64_t value);
int chan_put_f64(buffer *out, double value);
int chan_put_str(buffer *out, const char *bytes, size_t length);
/* An optional string: NULL is absent; length SIZE_MAX stands for strlen(bytes). */
int chan_put_opt(buffer *out, const char *bytes, size_t length);
/*
 * Ends the frame begun at start: writes its length. Returns 0, or -1 when an append failed or
 * the frame is larger than CHAN_MAX_FRAME, in which case the frame is taken back out of out.
 */
int chan_end(buffer *out, size_t start, bool failed);

/* ---- Reading frames ---------------------------------------------------------------------- */

/* A frame being read: its kind and what is left of its payload (borrowed from the input). */
typedef struct chan_frame {
    chan_kind kind;
    const char *at;
    const char *end;
    bool bad; /* a read went past the end, or a string was not what was asked */
} chan_frame;

/* A string read from a frame: bytes borrowed from the input, or NULL when absent. */
typedef struct chan_str {
    const char *bytes;
    size_t length;
} chan_str;

enum {
    CHAN_FRAME = 1,     /* *frame is the next frame, *used the bytes it took */
    CHAN_NEED_MORE = 0, /* the input holds no complete frame yet */
    CHAN_MALFORMED = -1 /* a length above CHAN_MAX_FRAME, or an unknown kind */
};
/* Looks at the start of data (length bytes). Returns CHAN_FRAME, CHAN_NEED_MORE or CHAN_MALFORMED.
 */
int chan_next(const char *data, size_t length, size_t *used, chan_frame *frame);

uint8_t chan_get_u8(chan_frame *frame);
uint32_t chan_get_u32(chan_frame *frame);
uint64_t chan_get_u64(chan_frame *frame);
int64_t chan_get_i64(chan_frame *frame);
double chan_get_f64(chan_frame *frame);
chan_str chan_get_str(chan_frame *frame);
chan_str chan_get_opt(chan_frame *frame);
/*
 * A string that a C function will read up to its NUL: copied into out (size bytes) with a NUL.
 * Marks the frame bad when it holds a NUL or does not fit. Returns out, or NULL when absent
 * (opt) or bad.
 */
const char *chan_get_cstr(chan_frame *frame, bool optional, char *out, size_t size);
/* True when every field was read and the payload is used up exactly. */
bool chan_finished(const chan_frame *frame);

/*
 * The fields of the frames about no call, checked as rpcd checks what goes into the protocol:
 * UTF-8 without a NUL, within CHAN_MAX_URI or CHAN_MAX_LOG_TEXT bytes, and nothing after them.
 * Return 0, or -1 (the frame is malformed, which a host's frames must never be).
 */
int chan_read_resource_updated(chan_frame *frame, chan_str *uri);
int chan_read_log(chan_frame *frame, int *level, chan_str *text);

/* ---- The socket -------------------------------------------------------------------------- */

/* Writes all of data to fd, a socket (retrying on EINTR, no SIGPIPE). Returns 0, or -1 with
 * errno. */
int chan_write_all(int fd, const char *data, size_t length);
/* The same on a pipe (the host's answers; a host ignores SIGPIPE). */
int chan_write_pipe(int fd, const char *data, size_t length);

/*
 * Reads what fd has into in (at least 64 KiB of room). Returns the bytes read, 0 at the end,
 * or -1 with errno (EINTR retried).
 */
long chan_read_some(int fd, buffer *in);
/* The same, but a signal ends it: -1 with EINTR. */
long chan_read_once(int fd, buffer *in);

/* Drops the first used bytes of in (after the frames they held were handled). */
void chan_consume(buffer *in, size_t used);

#endif
