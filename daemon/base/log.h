/* SPDX-License-Identifier: MIT */
/*
 * Logging to stderr: one line per message, written with a single write() so that lines from
 * different threads never mix. stdout is never touched: it carries the protocol.
 */
#ifndef RPCD_LOG_H
#define RPCD_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

enum log_level { LOG_ERROR = 0, LOG_WARNING = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

/* Sets the most verbose level written. Thread-safe. */
void log_set_level(int level);
int log_get_level(void);
/* Parses "error", "warning", "info" or "debug". Returns 0 and *level, or -1. */
int log_level_parse(const char *name, int *level);

/* How lines are written: "rpcd: LEVEL: text" (the default), or one JSON object per line. */
enum { LOG_FORMAT_TEXT = 0, LOG_FORMAT_JSON = 1 };
/*
 * LOG_FORMAT_JSON writes {"time":"2026-01-02T03:04:05.678Z","level":"info","plugin":"P",
 * "message":"..."} ("plugin" only for a plugin's own lines): valid JSON and UTF-8 whatever the
 * text held (bytes that are not UTF-8 become U+FFFD). Thread-safe; for every line after it.
 */
void log_set_format(int format);
int log_get_format(void);
/* "text" or "json" into *format. Returns 0, or -1 for another name. */
int log_format_parse(const char *name, int *format);
/* Sets the file descriptor written to (stderr by default). */
void log_set_fd(int fd);
int log_get_fd(void);

/*
 * The most bytes of a plugin's output line that log_output takes: escaped at their longest
 * (six bytes each), with the rest of the JSON line, they stay within PIPE_BUF (4096), so that a
 * line reaches a pipe (a service manager's, journald's) in one write, never interleaved with
 * another writer's.
 */
enum { LOG_OUTPUT_MOST = 512 };
/*
 * One line a plugin wrote on its stdout or stderr (log_capture.h), whatever the level: in JSON
 * {"time":...,"level":"info","plugin":plugin,"message":bytes,"stream":stream} ("plugin" only when
 * not NULL, "cut":true when the line was longer and cut at length), bytes that are not UTF-8 as
 * U+FFFD; in text, the bytes and a newline as they came. length is at most LOG_OUTPUT_MOST.
 * Thread-safe.
 */
void log_output(const char *plugin, const char *stream, const char *bytes, size_t length, bool cut);

/*
 * A line already in the log's form (a plugin host's own, which log_capture checked), written as
 * it is with a newline, in one write, whatever the level. Thread-safe.
 */
void log_relay(const char *line, size_t length);

/* Writes "rpcd: LEVEL: [prefix: ]message\n" when level is enabled. Thread-safe. */
void log_message(int level, const char *format, ...) __attribute__((format(printf, 2, 3)));
void log_message_prefixed(int level, const char *prefix, const char *format, va_list args)
    __attribute__((format(printf, 3, 0)));
/*
 * Writes "rpcd: LEVEL: prefix: text\n" when level is enabled, text taken as it is, not as a
 * format, with its control bytes escaped (\n, \r, \t, \xHH) so that it stays one line.
 * Thread-safe.
 */
void log_text_prefixed(int level, const char *prefix, const char *text);
/* A named value of a structured line (log_fields). */
typedef struct log_field {
    const char *name;  /* borrowed: a JSON member name, plain ASCII */
    const char *value; /* borrowed: value_length bytes */
    size_t value_length;
    bool json; /* value is JSON text already (a number, a request id): as it is in JSON */
} log_field;

/*
 * One line of named values when level is enabled: text "rpcd: LEVEL: event name=value ..."
 * (values as given, control bytes escaped), or in JSON {"time":...,"level":...,"message":event,
 * name:value,...} (values that are not JSON become strings). A value is cut at 128 bytes (at a
 * character boundary; a JSON value cut becomes a string); fields past the eighth are left out.
 * Thread-safe.
 */
void log_fields(int level, const char *event, const log_field *fields, size_t count);

/*
 * Writes "rpcd: LEVEL: signal NUMBER: text\n" when level is enabled. Async-signal-safe (no
 * printf), for signal handlers.
 */
void log_signal(int level, int number, const char *text);
/*
 * A line built for a signal handler or a dying process: no printf, no allocation, one write() at
 * the end, async-signal-safe. log_line_start writes "rpcd: LEVEL: " and decides whether the line
 * is logged at all (LOG_ERROR always is); the adders cut what does not fit; log_line_end adds the
 * newline and writes the line.
 */
typedef struct log_line {
    char text[512];
    size_t used;
    bool enabled;
    bool json; /* the format when the line started */
} log_line;
void log_line_start(log_line *line, int level);
void log_line_add(log_line *line, const char *text);
void log_line_addn(log_line *line, const char *bytes, size_t length);
void log_line_add_int(log_line *line, long long number);
void log_line_end(log_line *line);

#endif
