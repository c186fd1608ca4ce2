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

void log_message(int level, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    log_message_prefixed(level, NULL, format, args);
    va_end(args);
}

/* Appends text to line (which has room for capacity bytes in all) from *used on. */
static void append_text(char *line, size_t capacity, size_t *used, const char *text)
{
    size_t length = strlen(text);
    if (length > capacity - *used)
        length = capacity - *used;
    memcpy(line + *used, text, length);
    *used += length;
}

void log_signal(int level, int number, const char *text)
{
    if (level > atomic_load(&current_level) || level < LOG_ERROR || level > LOG_DEBUG)
        return;
    /* A signal number has at most 10 digits; they come out last first. */
    char reversed[10], number_text[11];
    size_t digit_count = 0;
    unsigned value = number < 0 ? 0u : (unsigned)number;
    do {
        reversed[digit_count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    for (size_t i = 0; i < digit_count; i++)
        number_text[i] = reversed[digit_count - 1 - i];
    number_text[digit_count] = '\0';

    char line[256];
    size_t capacity = sizeof line - 1; /* room for the newline */
    size_t used = 0;
    append_text(line, capacity, &used, "rpcd: ");
    append_text(line, capacity, &used, level_names[level]);
    append_text(line, capacity, &used, ": signal ");
    append_text(line, capacity, &used, number_text);
    append_text(line, capacity, &used, ": ");
    append_text(line, capacity, &used, text);
    line[used++] = '\n';
    ssize_t ignored = write(atomic_load(&log_fd), line, used);
    (void)ignored;
}

void log_write_raw(const char *text, size_t length)
{
    ssize_t ignored = write(atomic_load(&log_fd), text, length);
    (void)ignored;
}
