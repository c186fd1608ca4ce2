/* SPDX-License-Identifier: MIT */
/*
 * What the tests that check log lines share: the log sent to a temporary file at a given level,
 * then read back as one text. Include once, in a test program, after cmocka.h.
 */
#ifndef RPCD_TEST_LOG_CAPTURE_H
#define RPCD_TEST_LOG_CAPTURE_H

#include "base/log.h"

#include <stdio.h>
#include <unistd.h>

typedef struct log_capture {
    FILE *file;
    int level; /* the level before */
    char text[16 * 1024];
} log_capture;

/* From now on log lines up to level go to the capture. */
static inline void log_capture_start(log_capture *capture, int level)
{
    capture->file = tmpfile();
    assert_non_null(capture->file);
    capture->level = log_get_level();
    capture->text[0] = '\0';
    log_set_level(level);
    log_set_fd(fileno(capture->file));
}

/* Back to stderr; returns what was logged meanwhile (in capture->text). */
static inline const char *log_capture_end(log_capture *capture)
{
    log_set_fd(STDERR_FILENO);
    log_set_level(capture->level);
    rewind(capture->file);
    size_t n = fread(capture->text, 1, sizeof capture->text - 1, capture->file);
    capture->text[n] = '\0';
    fclose(capture->file);
    return capture->text;
}

/* Asserts that needle is in text, printing the text when it is not. */
#define assert_logged(text, needle)                                                                \
    do {                                                                                           \
        if (!strstr((text), (needle)))                                                             \
            print_error("not in the log: %s\n--- log:\n%s\n", (needle), (text));                   \
        assert_non_null(strstr((text), (needle)));                                                 \
    } while (0)

#endif
