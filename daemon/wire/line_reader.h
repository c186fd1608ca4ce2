/* SPDX-License-Identifier: MIT */
/*
 * Newline framing: turns a byte source into lines. Lines are handed out as spans of the
 * reader's own buffer (no copy), over-long lines are skipped without being held whole, and
 * the caller hears about it just before the reader would block, to flush its output then.
 */
#ifndef RPCD_LINE_READER_H
#define RPCD_LINE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Reads at most capacity bytes: returns the count, 0 at end of input, -1 on error (errno). */
typedef ssize_t (*lr_read_fn)(void *source, char *buffer, size_t capacity);
/*
 * Called with idle true when no whole line is buffered and the next read may block, and with
 * idle false once that read has returned. held_bytes: how much of an unfinished line is
 * buffered already (0 with idle false).
 */
typedef void (*lr_idle_fn)(void *context, bool idle, size_t held_bytes);

typedef struct line_reader line_reader;

enum lr_result {
    LR_LINE = 1,      /* a line is ready */
    LR_EOF = 0,       /* no more input */
    LR_TOO_LONG = -1, /* a line longer than the limit was skipped up to its newline */
    LR_ERROR = -2,    /* reading failed (errno) */
    LR_NO_MEMORY = -3,
};

/*
 * Creates a reader over source (borrowed; must outlive the reader).
 * max_line_bytes: the longest line accepted, newline excluded.
 * Returns 0 and *out (new), or LR_NO_MEMORY.
 */
int lr_new(lr_read_fn read, void *source, size_t max_line_bytes, line_reader **out);
void lr_free(line_reader *reader);
void lr_set_idle_hook(line_reader *reader, lr_idle_fn idle, void *context);

/*
 * Gets the next line, without its "\n" or "\r\n". *line is borrowed from the reader and valid
 * until the next call. On LR_TOO_LONG, *length holds the bytes skipped. A last line without a
 * newline before the end of input is returned as a line. Not thread-safe: one reader thread.
 */
int lr_next(line_reader *reader, const char **line, size_t *length);

/* Whether bytes read after the line lr_next gave are buffered: the next line may be there. */
bool lr_has_more(const line_reader *reader);

#endif
