/* SPDX-License-Identifier: MIT */
/*
 * Level-filtered logging to stderr, one write() per line.
 */
#include "log.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static atomic_int current_level = LOG_INFO;
static atomic_int log_fd = STDERR_FILENO;

static const char *const level_names[] = {"error", "warning", "info", "debug"};

void log_set_level(int level)
{
    atomic_store(&current_level, level);
}

int log_get_level(void)
{
    return atomic_load(&current_level);
}

void log_set_fd(int fd)
{
    atomic_store(&log_fd, fd);
}

int log_level_parse(const char *name, int *level)
{
    for (int i = 0; i < (int)(sizeof level_names / sizeof level_names[0]); i++) {
        if (strcmp(name, level_names[i]) == 0) {
            *level = i;
            return 0;
        }
    }
    return -1;
}

void log_message_prefixed(int level, const char *prefix, const char *format, va_list args)
{
    if (level > atomic_load(&current_level))
        return;
    if (level < LOG_ERROR)
        level = LOG_ERROR;
    if (level > LOG_DEBUG)
        level = LOG_DEBUG;
    char line[2048];
    int used = snprintf(line, sizeof line, "rpcd: %s: %s%s", level_names[level],
                        prefix ? prefix : "", prefix ? ": " : "");
    if (used < 0)
        return;
    if ((size_t)used < sizeof line) {
        int more = vsnprintf(line + used, sizeof line - (size_t)used, format, args);
        if (more > 0)
            used += more;
    }
    if ((size_t)used >= sizeof line - 1) {
        /* Too long: keep the start and say so, the line still ends where it should. */
        used = (int)sizeof line - 5;
        memcpy(line + used, "...", 3);
        used += 3;
    }
    /* A message that holds newlines would break the one-line promise. */
    for (int i = 0; i < used; i++)
        if (line[i] == '\n' || line[i] == '\r')
            line[i] = ' ';
    line[used++] = '\n';
    ssize_t ignored = write(atomic_load(&log_fd), line, (size_t)used);
    (void)ignored;
}

/* Writes message through log_message_prefixed, which takes a format. */
static void log_prefixed_plain(int level, const char *prefix, const char *message, ...)
    __attribute__((format(printf, 3, 4)));
static void log_prefixed_plain(int level, const char *prefix, const char *message, ...)
{
    va_list args;
    va_start(args, message);
    log_message_prefixed(level, prefix, message, args);
    va_end(args);
}

void log_text_prefixed(int level, const char *prefix, const char *text)
{
    if (!text || level > atomic_load(&current_level))
        return;
    /* As long as the line log_message_prefixed writes: what it would cut need not be escaped. */
    char escaped[2048];
    size_t used = 0;
    for (const unsigned char *at = (const unsigned char *)text; *at && used < sizeof escaped - 5;
         at++) {
        static const char hex[] = "0123456789abcdef";
        unsigned char c = *at;
        if (c >= 0x20 && c != 0x7f) {
            escaped[used++] = (char)c;
            continue;
        }
        escaped[used++] = '\\';
        switch (c) {
        case '\n': escaped[used++] = 'n'; break;
        case '\r': escaped[used++] = 'r'; break;
        case '\t': escaped[used++] = 't'; break;
        default:
            escaped[used++] = 'x';
            escaped[used++] = hex[c >> 4];
            escaped[used++] = hex[c & 0xf];
        }
    }
    escaped[used] = '\0';
    log_prefixed_plain(level, prefix, "%s", escaped);
}

void log_message(int level, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    log_message_prefixed(level, NULL, format, args);
    va_end(args);
}

void log_line_start(log_line *line, int level)
{
    line->used = 0;
    line->enabled =
        level >= LOG_ERROR && level <= LOG_DEBUG && level <= atomic_load(&current_level);
    if (!line->enabled)
        return;
    log_line_add(line, "rpcd: ");
    log_line_add(line, level_names[level]);
    log_line_add(line, ": ");
}

void log_line_addn(log_line *line, const char *bytes, size_t length)
{
    size_t room = sizeof line->text - 1 - line->used; /* one byte kept for the newline */
    if (length > room)
        length = room;
    memcpy(line->text + line->used, bytes, length);
    line->used += length;
}

void log_line_add(log_line *line, const char *text)
{
    log_line_addn(line, text, strlen(text));
}

void log_line_add_int(log_line *line, long long number)
{
    /* The digits come out last first, from the end of the buffer. */
    char digits[21];
    size_t count = 0;
    unsigned long long value =
        number < 0 ? 0ull - (unsigned long long)number : (unsigned long long)number;
    do {
        digits[sizeof digits - 1 - count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    if (number < 0)
        digits[sizeof digits - 1 - count++] = '-';
    log_line_addn(line, digits + sizeof digits - count, count);
}

void log_line_end(log_line *line)
{
    if (!line->enabled)
        return;
    line->text[line->used++] = '\n';
    ssize_t ignored = write(atomic_load(&log_fd), line->text, line->used);
    (void)ignored;
}

void log_signal(int level, int number, const char *text)
{
    log_line line;
    log_line_start(&line, level);
    log_line_add(&line, "signal ");
    log_line_add_int(&line, number < 0 ? 0 : number);
    log_line_add(&line, ": ");
    log_line_add(&line, text);
    log_line_end(&line);
}
