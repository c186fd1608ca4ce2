/* SPDX-License-Identifier: MIT */
/*
 * Buffered newline framing with a bounded line length.
 */
#include "wire/line_reader.h"

#include "base/buffer.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { READ_CHUNK = 64 * 1024 };

struct line_reader {
    lr_read_fn read;
    void *source;
    lr_idle_fn idle;
    void *idle_context;
    size_t max_line_bytes;
    buffer storage; /* its length is unused: start and end say what it holds */
    size_t start;   /* first byte not yet handed out */
    size_t end;     /* one past the last byte read */
    size_t scanned; /* bytes from start known to hold no newline */
    bool at_eof;
    bool skipping;  /* inside an over-long line, discarding up to its newline */
    size_t skipped; /* bytes of the over-long line discarded so far */
};

int lr_new(lr_read_fn read, void *source, size_t max_line_bytes, line_reader **out)
{
    line_reader *reader = calloc(1, sizeof *reader);
    if (!reader)
        return LR_NO_MEMORY;
    if (buf_reserve(&reader->storage, READ_CHUNK) != 0) {
        free(reader);
        return LR_NO_MEMORY;
    }
    reader->read = read;
    reader->source = source;
    reader->max_line_bytes = max_line_bytes;
    *out = reader;
    return 0;
}

void lr_free(line_reader *reader)
{
    if (!reader)
        return;
    buf_free(&reader->storage);
    free(reader);
}

void lr_set_idle_hook(line_reader *reader, lr_idle_fn idle, void *context)
{
    reader->idle = idle;
    reader->idle_context = context;
}

/* Makes room for at least one more chunk after end, keeping [start, end). */
static int make_room(line_reader *reader)
{
    char *data = reader->storage.data;
    if (reader->start > 0) {
        memmove(data, data + reader->start, reader->end - reader->start);
        reader->end -= reader->start;
        reader->start = 0;
    }
    reader->storage.length = reader->end;
    return buf_reserve(&reader->storage, READ_CHUNK / 2) == 0 ? 0 : LR_NO_MEMORY;
}

/*
 * Gives back a buffer that grew for one large line, once nothing is held in it, so that a
 * single big message does not pin its memory for the rest of the session.
 */
static void shrink(line_reader *reader)
{
    if (reader->start != reader->end || reader->storage.capacity <= 16 * READ_CHUNK)
        return;
    buffer smaller = BUFFER_INIT;
    if (buf_reserve(&smaller, READ_CHUNK) != 0)
        return; /* keeping the larger buffer is fine */
    buf_free(&reader->storage);
    reader->storage = smaller;
    reader->start = reader->end = reader->scanned = 0;
}

static void hand_out(line_reader *reader, size_t line_end, const char **line, size_t *length)
{
    size_t line_length = line_end - reader->start;
    if (line_length > 0 && reader->storage.data[line_end - 1] == '\r')
        line_length--;
    *line = reader->storage.data + reader->start;
    *length = line_length;
}

int lr_next(line_reader *reader, const char **line, size_t *length)
{
    for (;;) {
        char *from = reader->storage.data + reader->start + reader->scanned;
        char *newline = memchr(from, '\n', reader->end - reader->start - reader->scanned);
        if (newline) {
            size_t line_end = (size_t)(newline - reader->storage.data);
            if (reader->skipping) {
                *length = reader->skipped + (line_end - reader->start);
                reader->start = line_end + 1;
                reader->scanned = 0;
                reader->skipping = false;
                reader->skipped = 0;
                return LR_TOO_LONG;
            }
            size_t raw_length = line_end - reader->start;
            hand_out(reader, line_end, line, length);
            reader->start = line_end + 1;
            reader->scanned = 0;
            /* A "\r" before the newline does not count against the limit. */
            if (*length > reader->max_line_bytes) {
                *length = raw_length;
                return LR_TOO_LONG;
            }
            return LR_LINE;
        }
        reader->scanned = reader->end - reader->start;

        if (reader->scanned > reader->max_line_bytes + 1 || reader->skipping) {
            /* Over the limit and still no newline: drop what we hold, remember only how much. */
            reader->skipped += reader->scanned;
            reader->start = reader->end = reader->scanned = 0;
            reader->skipping = true;
            shrink(reader);
        }

        if (reader->at_eof) {
            if (reader->skipping) {
                *length = reader->skipped;
                reader->skipping = false;
                reader->skipped = 0;
                return LR_TOO_LONG;
            }
            if (reader->end == reader->start)
                return LR_EOF;
            hand_out(reader, reader->end, line, length);
            reader->start = reader->end;
            reader->scanned = 0;
            return *length > reader->max_line_bytes ? LR_TOO_LONG : LR_LINE;
        }

        shrink(reader);
        if (make_room(reader) != 0)
            return LR_NO_MEMORY;
        if (reader->idle)
            reader->idle(reader->idle_context, true, reader->end - reader->start);
        ssize_t n = reader->read(reader->source, reader->storage.data + reader->end,
                                 reader->storage.capacity - reader->end);
        if (reader->idle)
            reader->idle(reader->idle_context, false, 0);
        if (n < 0)
            return LR_ERROR;
        if (n == 0)
            reader->at_eof = true;
        reader->end += (size_t)n;
    }
}

bool lr_has_more(const line_reader *reader)
{
    return reader->end > reader->start;
}
