/* SPDX-License-Identifier: MIT */
/*
 * Level-filtered logging to stderr, one write() per line, as text or as JSON objects (for hosts
 * that collect logs); the JSON lines are built without printf or allocation, so that a signal
 * handler can write them too.
 */
#include "base/log.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int current_level = LOG_INFO;
static atomic_int log_fd = STDERR_FILENO;
static atomic_int current_format = LOG_FORMAT_TEXT;

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

int log_get_fd(void)
{
    return atomic_load(&log_fd);
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

void log_set_format(int format)
{
    atomic_store(&current_format, format == LOG_FORMAT_JSON ? LOG_FORMAT_JSON : LOG_FORMAT_TEXT);
}

int log_get_format(void)
{
    return atomic_load(&current_format);
}

int log_format_parse(const char *name, int *format)
{
    if (strcmp(name, "text") == 0 || strcmp(name, "json") == 0) {
        *format = name[0] == 'j' ? LOG_FORMAT_JSON : LOG_FORMAT_TEXT;
        return 0;
    }
    return -1;
}

/* ---- JSON lines: async-signal-safe ------------------------------------------------------- */

/* A JSON line being built; its last JSON_CLOSE bytes are kept for the close. */
typedef struct json_line {
    char *text;
    size_t size;
    size_t used;
} json_line;

enum { JSON_CLOSE = 3 }; /* "}\n, after the message */

static void json_raw(json_line *line, const char *text, size_t length)
{
    if (line->used + length + JSON_CLOSE > line->size)
        return; /* whole or not at all: never half an escape */
    memcpy(line->text + line->used, text, length);
    line->used += length;
}

/* Length of the valid UTF-8 sequence at bytes, or 0 when its first byte starts none. */
static size_t utf8_sequence(const unsigned char *bytes, size_t length)
{
    unsigned char lead = bytes[0];
    size_t need = lead >= 0xC2 && lead <= 0xDF   ? 2
                  : lead >= 0xE0 && lead <= 0xEF ? 3
                  : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                 : 0;
    if (need == 0 || need > length)
        return 0;
    for (size_t i = 1; i < need; i++)
        if ((bytes[i] & 0xC0) != 0x80)
            return 0;
    /* No overlong forms, no surrogates, nothing past U+10FFFF. */
    if ((lead == 0xE0 && bytes[1] < 0xA0) || (lead == 0xED && bytes[1] > 0x9F) ||
        (lead == 0xF0 && bytes[1] < 0x90) || (lead == 0xF4 && bytes[1] > 0x8F))
        return 0;
    return need;
}

/* Appends bytes as the inside of a JSON string. */
static void json_escaped(json_line *line, const char *bytes, size_t length)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *at = (const unsigned char *)bytes;
    for (size_t i = 0; i < length;) {
        unsigned char c = at[i];
        if (c >= 0x80) {
            size_t sequence = utf8_sequence(at + i, length - i);
            if (sequence)
                json_raw(line, bytes + i, sequence);
            else
                json_raw(line, "\\ufffd", 6);
            i += sequence ? sequence : 1;
            continue;
        }
        char escape[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xf]};
        if (c == '"' || c == '\\')
            json_raw(line, (const char[]){'\\', (char)c}, 2);
        else if (c == '\n')
            json_raw(line, "\\n", 2);
        else if (c < 0x20)
            json_raw(line, escape, sizeof escape);
        else
            json_raw(line, (const char *)&c, 1);
        i++;
    }
}

/* The time now as 2026-01-02T03:04:05.678Z, from the clock alone (no gmtime: not safe in a
 * signal handler). */
static void json_time(json_line *line)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    long long days = now.tv_sec / 86400, seconds = now.tv_sec % 86400;
    /* Days since 1970-01-01 to the civil date (proleptic Gregorian calendar, era of 400 years). */
    days += 719468;
    long long era = days / 146097, day_of_era = days - era * 146097;
    long long year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    long long day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    long long month_index = (5 * day_of_year + 2) / 153;
    int day = (int)(day_of_year - (153 * month_index + 2) / 5 + 1);
    int month = (int)(month_index < 10 ? month_index + 3 : month_index - 9);
    long long year = year_of_era + era * 400 + (month <= 2);
    int fields[] = {(int)year,
                    month,
                    day,
                    (int)(seconds / 3600),
                    (int)(seconds / 60 % 60),
                    (int)(seconds % 60),
                    (int)(now.tv_nsec / 1000000)};
    static const char after[] = "--T::.Z";
    static const int widths[] = {4, 2, 2, 2, 2, 2, 3};
    char text[32];
    size_t used = 0;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        int value = fields[i] < 0 ? 0 : fields[i];
        for (int digit = widths[i] - 1; digit >= 0; digit--, value /= 10)
            text[used + (size_t)digit] = (char)('0' + value % 10);
        used += (size_t)widths[i];
        text[used++] = after[i];
    }
    json_raw(line, text, used);
}

/* Starts {"time":...,"level":...[,"plugin":...],"message":" */
static void json_start(json_line *line, int level, const char *prefix)
{
    json_raw(line, "{\"time\":\"", 9);
    json_time(line);
    json_raw(line, "\",\"level\":\"", 11);
    json_raw(line, level_names[level], strlen(level_names[level]));
    if (prefix) {
        json_raw(line, "\",\"plugin\":\"", 12);
        json_escaped(line, prefix, strlen(prefix));
    }
    json_raw(line, "\",\"message\":\"", 13);
}

static void json_end_and_write(json_line *line)
{
    memcpy(line->text + line->used, "\"}\n", JSON_CLOSE);
    line->used += JSON_CLOSE;
    ssize_t ignored = write(atomic_load(&log_fd), line->text, line->used);
    (void)ignored;
}

static void json_message(int level, const char *prefix, const char *message, size_t length)
{
    char text[4096];
    json_line line = {text, sizeof text, 0};
    json_start(&line, level, prefix);
    json_escaped(&line, message, length);
    json_end_and_write(&line);
}

void log_output(const char *plugin, const char *stream, const char *bytes, size_t length, bool cut)
{
    if (length > LOG_OUTPUT_MOST)
        length = LOG_OUTPUT_MOST;
    /* Room for every byte escaped at its longest (\u00XX, or \ufffd for a byte not UTF-8), and
     * no more than one atomic write to a pipe: json_raw drops what would not fit, whole. */
    char text[PIPE_BUF];
    _Static_assert(LOG_OUTPUT_MOST * 6 + 512 <= PIPE_BUF, "a plugin's line fits one pipe write");
    if (atomic_load(&current_format) != LOG_FORMAT_JSON) {
        memcpy(text, bytes, length);
        text[length] = '\n';
        ssize_t ignored = write(atomic_load(&log_fd), text, length + 1);
        (void)ignored;
        return;
    }
    json_line line = {text, sizeof text, 0};
    json_start(&line, LOG_INFO, plugin);
    json_escaped(&line, bytes, length);
    json_raw(&line, "\",\"stream\":\"", 12);
    json_raw(&line, stream, strlen(stream));
    json_raw(&line, cut ? "\",\"cut\":true" : "\"", cut ? 12 : 1);
    memcpy(line.text + line.used, "}\n", 2);
    line.used += 2;
    ssize_t ignored = write(atomic_load(&log_fd), line.text, line.used);
    (void)ignored;
}

void log_relay(const char *line, size_t length)
{
    char *text = malloc(length + 1);
    if (!text)
        return;
    memcpy(text, line, length);
    text[length] = '\n';
    ssize_t ignored = write(atomic_load(&log_fd), text, length + 1);
    (void)ignored;
    free(text);
}

/* ---- Lines of named values ---------------------------------------------------------------- */

enum { FIELD_MOST_BYTES = 128, FIELDS_MOST = 8 };

/* How much of a value goes in: at most FIELD_MOST_BYTES, not inside a UTF-8 sequence. */
static size_t field_length(const log_field *field, bool *cut)
{
    size_t length = field->value_length;
    *cut = length > FIELD_MOST_BYTES;
    if (*cut) {
        length = FIELD_MOST_BYTES;
        while (length > 0 && ((unsigned char)field->value[length] & 0xC0) == 0x80)
            length--;
    }
    return length;
}

static void json_fields(int level, const char *event, const log_field *fields, size_t count)
{
    char text[8192];
    json_line line = {text, sizeof text, 0};
    json_start(&line, level, NULL);
    json_escaped(&line, event, strlen(event));
    json_raw(&line, "\"", 1);
    for (size_t i = 0; i < count; i++) {
        bool cut;
        size_t length = field_length(&fields[i], &cut);
        json_raw(&line, ",\"", 2);
        json_raw(&line, fields[i].name, strlen(fields[i].name));
        json_raw(&line, "\":", 2);
        if (fields[i].json && !cut) {
            json_raw(&line, fields[i].value, length);
            continue;
        }
        json_raw(&line, "\"", 1);
        json_escaped(&line, fields[i].value, length);
        json_raw(&line, cut ? "...\"" : "\"", cut ? 4 : 1);
    }
    memcpy(line.text + line.used, "}\n", 2);
    line.used += 2;
    ssize_t ignored = write(atomic_load(&log_fd), line.text, line.used);
    (void)ignored;
}

void log_fields(int level, const char *event, const log_field *fields, size_t count)
{
    if (level > atomic_load(&current_level) || level < LOG_ERROR)
        return;
    if (count > FIELDS_MOST)
        count = FIELDS_MOST;
    if (atomic_load(&current_format) == LOG_FORMAT_JSON) {
        json_fields(level, event, fields, count);
        return;
    }
    log_line line;
    log_line_start(&line, level);
    log_line_add(&line, event);
    for (size_t i = 0; i < count; i++) {
        bool cut;
        size_t length = field_length(&fields[i], &cut);
        log_line_add(&line, " ");
        log_line_add(&line, fields[i].name);
        log_line_add(&line, "=");
        static const char hex[] = "0123456789abcdef";
        for (size_t at = 0; at < length; at++) {
            unsigned char c = (unsigned char)fields[i].value[at];
            char escape[4] = {'\\', 'x', hex[c >> 4], hex[c & 0xf]};
            if (c < 0x20 || c == 0x7f)
                log_line_addn(&line, escape, sizeof escape);
            else
                log_line_addn(&line, (const char *)&c, 1);
        }
        if (cut)
            log_line_add(&line, "...");
    }
    log_line_end(&line);
}

/* ---- Lines ------------------------------------------------------------------------------- */

void log_message_prefixed(int level, const char *prefix, const char *format, va_list args)
{
    if (level > atomic_load(&current_level))
        return;
    if (level < LOG_ERROR)
        level = LOG_ERROR;
    if (level > LOG_DEBUG)
        level = LOG_DEBUG;
    if (atomic_load(&current_format) == LOG_FORMAT_JSON) {
        char message[2048];
        int length = vsnprintf(message, sizeof message, format, args);
        if (length >= 0)
            json_message(level, prefix, message,
                         (size_t)length < sizeof message ? (size_t)length : sizeof message - 1);
        return;
    }
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
    if (atomic_load(&current_format) == LOG_FORMAT_JSON) {
        json_message(level < LOG_ERROR   ? LOG_ERROR
                     : level > LOG_DEBUG ? LOG_DEBUG
                                         : level,
                     prefix, text, strnlen(text, 2048));
        return;
    }
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
    line->json = atomic_load(&current_format) == LOG_FORMAT_JSON;
    if (!line->enabled)
        return;
    if (line->json) {
        json_line json = {line->text, sizeof line->text, 0};
        json_start(&json, level, NULL);
        line->used = json.used;
        return;
    }
    log_line_add(line, "rpcd: ");
    log_line_add(line, level_names[level]);
    log_line_add(line, ": ");
}

void log_line_addn(log_line *line, const char *bytes, size_t length)
{
    if (line->json) {
        json_line json = {line->text, sizeof line->text, line->used};
        json_escaped(&json, bytes, length);
        line->used = json.used;
        return;
    }
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
    if (line->json) {
        json_line json = {line->text, sizeof line->text, line->used};
        json_end_and_write(&json);
        return;
    }
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
