/* SPDX-License-Identifier: MIT */
/*
 * Logging to stderr: one line per message, written with a single write() so that lines from
 * different threads never mix. stdout is never touched: it carries the protocol.
 */
#ifndef RPCD_LOG_H
#define RPCD_LOG_H

#include <stdarg.h>
#include <stddef.h>

enum log_level { LOG_ERROR = 0, LOG_WARNING = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

/* Sets the most verbose level written. Thread-safe. */
void log_set_level(int level);
int log_get_level(void);
/* Parses "error", "warning", "info" or "debug". Returns 0 and *level, or -1. */
int log_level_parse(const char *name, int *level);
/* Sets the file descriptor written to (stderr by default). */
void log_set_fd(int fd);

/* Writes "rpcd: LEVEL: [prefix: ]message\n" when level is enabled. Thread-safe. */
void log_message(int level, const char *format, ...) __attribute__((format(printf, 2, 3)));
void log_message_prefixed(int level, const char *prefix, const char *format, va_list args)
    __attribute__((format(printf, 3, 0)));
/*
 * Writes "rpcd: LEVEL: signal NUMBER: text\n" when level is enabled. Async-signal-safe (no
 * printf), for signal handlers.
 */
void log_signal(int level, int number, const char *text);
/*
 * Writes length bytes of text to the log as they are (the caller ends them with a newline),
 * whatever the level: the last words of a dying process. Async-signal-safe.
 */
void log_write_raw(const char *text, size_t length);

#endif
