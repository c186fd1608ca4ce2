/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for line_reader, fed by an in-memory source whose reads return chosen chunks, so
 * that every way of splitting the bytes across reads can be tried, down to one byte per read.
 */
#include "wire/line_reader.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/*
 * The source: a list of chunks, each returned by one or more reads (never two chunks in one
 * read), at most max_per_read bytes per read when that is not 0. After the last chunk, reads
 * return 0, or -1 when fail_at_end is set. Optionally a generated tail: generated_bytes of 'x'
 * in generated_chunk pieces, then generated_suffix.
 */
typedef struct script {
    const char *const *chunks;
    size_t chunk_count;
    size_t index;
    size_t offset;
    size_t max_per_read;
    bool fail_at_end;
    /* What the test observes. */
    size_t reads;
    size_t largest_capacity;
    size_t newlines_delivered;
    /* The idle hook's bookkeeping. */
    bool hooked;
    bool idle;
    size_t idle_true_calls;
    size_t idle_false_calls;
    size_t lines_returned;
    size_t last_held_bytes;
    size_t held_bytes_seen[8]; /* held_bytes of the first idle(true) calls */
} script;

static ssize_t script_read(void *source, char *buffer, size_t capacity)
{
    script *s = source;
    s->reads++;
    if (capacity > s->largest_capacity)
        s->largest_capacity = capacity;
    if (s->hooked && !s->idle)
        fail_msg("read %zu without the idle hook called first", s->reads);
    assert_true(capacity > 0);
    if (s->index == s->chunk_count)
        return s->fail_at_end ? -1 : 0;
    const char *chunk = s->chunks[s->index];
    size_t n = strlen(chunk) - s->offset;
    if (n > capacity)
        n = capacity;
    if (s->max_per_read && n > s->max_per_read)
        n = s->max_per_read;
    memcpy(buffer, chunk + s->offset, n);
    for (size_t i = 0; i < n; i++)
        if (buffer[i] == '\n')
            s->newlines_delivered++;
    s->offset += n;
    if (s->offset == strlen(chunk)) {
        s->index++;
        s->offset = 0;
    }
    return (ssize_t)n;
}

static void script_idle(void *context, bool idle, size_t held_bytes)
{
    script *s = context;
    s->last_held_bytes = held_bytes;
    if (idle && s->idle_true_calls < 8)
        s->held_bytes_seen[s->idle_true_calls] = held_bytes;
    if (!idle)
        assert_int_equal(held_bytes, 0);
    if (idle) {
        assert_false(s->idle);
        s->idle_true_calls++;
        /* Every delivered newline ends a line the caller must have been given already. */
        if (s->newlines_delivered > s->lines_returned)
            fail_msg("idle while %zu whole lines are buffered",
                     s->newlines_delivered - s->lines_returned);
    } else {
        assert_true(s->idle);
        s->idle_false_calls++;
    }
    s->idle = idle;
}

typedef struct result {
    int status;
    char text[256];
    size_t length;
} result;

static result next(line_reader *reader, script *s)
{
    result r;
    const char *line = NULL;
    memset(&r, 0, sizeof r);
    r.length = 99999;
    r.status = lr_next(reader, &line, &r.length);
    if (r.status == LR_LINE || r.status == LR_TOO_LONG)
        s->lines_returned++;
    if (r.status == LR_LINE) {
        assert_non_null(line);
        assert_true(r.length < sizeof r.text);
        memcpy(r.text, line, r.length);
        assert_null(memchr(line, '\n', r.length));
    }
    if (s->hooked)
        assert_false(s->idle); /* never left idle when a call returns */
    return r;
}

#define EXPECT_LINE(reader, s, literal)                                                            \
    do {                                                                                           \
        result r_ = next((reader), (s));                                                           \
        assert_int_equal(r_.status, LR_LINE);                                                      \
        assert_int_equal(r_.length, sizeof(literal) - 1);                                          \
        assert_memory_equal(r_.text, (literal), sizeof(literal) - 1);                              \
    } while (0)

#define EXPECT_TOO_LONG(reader, s, skipped)                                                        \
    do {                                                                                           \
        result r_ = next((reader), (s));                                                           \
        assert_int_equal(r_.status, LR_TOO_LONG);                                                  \
        assert_int_equal(r_.length, (skipped));                                                    \
    } while (0)

#define EXPECT_STATUS(reader, s, expected) assert_int_equal(next((reader), (s)).status, (expected))

static line_reader *open_reader(script *s, size_t max_line_bytes, bool hook)
{
    line_reader *reader = NULL;
    assert_int_equal(lr_new(script_read, s, max_line_bytes, &reader), 0);
    assert_non_null(reader);
    if (hook) {
        s->hooked = true;
        lr_set_idle_hook(reader, script_idle, s);
    }
    return reader;
}

/* Before each read the hook learns how much of an unfinished line is held: rpcd's server waits
 * there, inside a long line, while calls hold too many bytes. */
static void test_idle_hook_reports_held_bytes(void **state)
{
    (void)state;
    static const char *const chunks[] = {"abc", "def", "\nxy"};
    script s = {.chunks = chunks, .chunk_count = 3};
    line_reader *reader = open_reader(&s, 1024, true);
    EXPECT_LINE(reader, &s, "abcdef");
    EXPECT_LINE(reader, &s, "xy");
    EXPECT_STATUS(reader, &s, LR_EOF);
    /* Before each of the four reads: the last one finds the end of input. */
    assert_int_equal(s.idle_true_calls, 4);
    const size_t expected[] = {0, 3, 6, 2};
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(s.held_bytes_seen[i], expected[i]);
    lr_free(reader);
}

static void test_simple_lines(void **state)
{
    (void)state;
    static const char *const chunks[] = {"hello\nworld\n"};
    script s = {.chunks = chunks, .chunk_count = 1};
    line_reader *reader = open_reader(&s, 1024, true);
    EXPECT_LINE(reader, &s, "hello");
    EXPECT_LINE(reader, &s, "world");
    EXPECT_STATUS(reader, &s, LR_EOF);
    EXPECT_STATUS(reader, &s, LR_EOF); /* and stays there */
    lr_free(reader);
    lr_free(NULL);
}

static void test_lines_split_across_reads(void **state)
{
    (void)state;
    static const char *const chunks[] = {"hel", "lo\nwo", "r", "ld\n", "\n", "la", "st"};
    script s = {.chunks = chunks, .chunk_count = 7};
    line_reader *reader = open_reader(&s, 1024, true);
    EXPECT_LINE(reader, &s, "hello");
    EXPECT_LINE(reader, &s, "world");
    EXPECT_LINE(reader, &s, "");
    EXPECT_LINE(reader, &s, "last");
    EXPECT_STATUS(reader, &s, LR_EOF);
    lr_free(reader);
}

/* The same text read with every split must give the same lines. */
static void test_any_split_gives_same_lines(void **state)
{
    (void)state;
    static const char *const text[] = {"first\r\nsecond\n\n\r\nmid\rdle\n\r\r\nx\r\n0123456789"
                                       "\nlast"};
    static const char *const expected[] = {"first", "second", "",           "",    "mid\rdle",
                                           "\r",    "x",      "0123456789", "last"};
    static const size_t splits[] = {0, 1, 2, 3, 5, 7, 13};
    for (size_t i = 0; i < sizeof splits / sizeof splits[0]; i++) {
        script s = {.chunks = text, .chunk_count = 1, .max_per_read = splits[i]};
        line_reader *reader = open_reader(&s, 10, true);
        for (size_t j = 0; j < sizeof expected / sizeof expected[0]; j++) {
            result r = next(reader, &s);
            if (r.status != LR_LINE || r.length != strlen(expected[j]) ||
                memcmp(r.text, expected[j], r.length) != 0)
                fail_msg("split %zu, line %zu: status %d, '%.*s'", splits[i], j, r.status,
                         (int)r.length, r.text);
        }
        EXPECT_STATUS(reader, &s, LR_EOF);
        lr_free(reader);
    }
}

static void test_crlf(void **state)
{
    (void)state;
    static const char *const chunks[] = {"a\r\n", "b\r", "\nc\rd\n", "\r\n", "\r\r\n", "e\r"};
    script s = {.chunks = chunks, .chunk_count = 6};
    line_reader *reader = open_reader(&s, 1024, true);
    EXPECT_LINE(reader, &s, "a");
    EXPECT_LINE(reader, &s, "b");    /* CR and LF in different reads */
    EXPECT_LINE(reader, &s, "c\rd"); /* a lone CR in the middle is data */
    EXPECT_LINE(reader, &s, "");
    EXPECT_LINE(reader, &s, "\r"); /* only the one CR before the LF goes */
    result r = next(reader, &s);   /* last line without LF: returned, CR or not */
    assert_int_equal(r.status, LR_LINE);
    assert_true(r.length >= 1 && r.text[0] == 'e');
    EXPECT_STATUS(reader, &s, LR_EOF);
    lr_free(reader);
}

static void test_empty_lines(void **state)
{
    (void)state;
    static const char *const chunks[] = {"\n\n", "\n", "x\n", "\n"};
    script s = {.chunks = chunks, .chunk_count = 4};
    line_reader *reader = open_reader(&s, 1024, true);
    EXPECT_LINE(reader, &s, "");
    EXPECT_LINE(reader, &s, "");
    EXPECT_LINE(reader, &s, "");
    EXPECT_LINE(reader, &s, "x");
    EXPECT_LINE(reader, &s, "");
    EXPECT_STATUS(reader, &s, LR_EOF);
    lr_free(reader);

    static const char *const nothing[] = {""};
    script empty = {.chunks = nothing, .chunk_count = 0};
    reader = open_reader(&empty, 1024, true);
    EXPECT_STATUS(reader, &empty, LR_EOF);
    lr_free(reader);
}

static void test_too_long(void **state)
{
    (void)state;
    static const size_t splits[] = {0, 1, 4};
    for (size_t i = 0; i < sizeof splits / sizeof splits[0]; i++) {
        static const char *const chunks[] = {
            "0123456789\n",  /* exactly the limit: fine */
            "0123456789A\n", /* one over */
            "ok\n",
            "0123456789\r\n",   /* the CR does not count */
            "0123456789AB\r\n", /* over: raw bytes before the LF skipped */
            "0123456789012345678901234567890123456789\n",
            "after\n",
        };
        script s = {.chunks = chunks, .chunk_count = 7, .max_per_read = splits[i]};
        line_reader *reader = open_reader(&s, 10, true);
        EXPECT_LINE(reader, &s, "0123456789");
        EXPECT_TOO_LONG(reader, &s, 11);
        EXPECT_LINE(reader, &s, "ok");
        EXPECT_LINE(reader, &s, "0123456789");
        EXPECT_TOO_LONG(reader, &s, 13);
        EXPECT_TOO_LONG(reader, &s, 40);
        EXPECT_LINE(reader, &s, "after");
        EXPECT_STATUS(reader, &s, LR_EOF);
        lr_free(reader);
    }
}

static void test_too_long_last_line(void **state)
{
    (void)state;
    static const size_t splits[] = {0, 1, 3};
    for (size_t i = 0; i < sizeof splits / sizeof splits[0]; i++) {
        static const char *const over[] = {"short\n", "0123456789ABC"};
        script s = {.chunks = over, .chunk_count = 2, .max_per_read = splits[i]};
        line_reader *reader = open_reader(&s, 10, true);
        EXPECT_LINE(reader, &s, "short");
        EXPECT_TOO_LONG(reader, &s, 13);
        EXPECT_STATUS(reader, &s, LR_EOF);
        lr_free(reader);

        static const char *const one_over[] = {"0123456789A"};
        script t = {.chunks = one_over, .chunk_count = 1, .max_per_read = splits[i]};
        reader = open_reader(&t, 10, true);
        EXPECT_TOO_LONG(reader, &t, 11);
        EXPECT_STATUS(reader, &t, LR_EOF);
        lr_free(reader);

        static const char *const at_limit[] = {"0123456789"};
        script u = {.chunks = at_limit, .chunk_count = 1, .max_per_read = splits[i]};
        reader = open_reader(&u, 10, true);
        EXPECT_LINE(reader, &u, "0123456789");
        EXPECT_STATUS(reader, &u, LR_EOF);
        lr_free(reader);
    }
}

/* chunk_count chunks of size bytes of 'x'; the caller frees chunks[0] and the array. */
static const char **make_x_chunks(size_t chunk_count, size_t size, const char *tail)
{
    const char **chunks = calloc(chunk_count + 1, sizeof *chunks);
    assert_non_null(chunks);
    char *chunk = malloc(size + 1);
    assert_non_null(chunk);
    memset(chunk, 'x', size);
    chunk[size] = '\0';
    for (size_t i = 0; i < chunk_count; i++)
        chunks[i] = chunk; /* the same bytes each time: reads copy them */
    chunks[chunk_count] = tail;
    return chunks;
}

static void test_huge_line_is_never_held(void **state)
{
    (void)state;
    enum { CHUNK = 64 * 1024, COUNT = 160 }; /* 10 MiB */
    const size_t total = (size_t)CHUNK * COUNT;
    const char **chunks = make_x_chunks(COUNT, CHUNK, "\nnext\n");
    script s = {.chunks = chunks, .chunk_count = COUNT + 1};
    line_reader *reader = open_reader(&s, 1024, true);
    EXPECT_TOO_LONG(reader, &s, total);
    EXPECT_LINE(reader, &s, "next");
    EXPECT_STATUS(reader, &s, LR_EOF);
    /* Had the reader kept the line, its buffer (and so the space it reads into) would grow. */
    if (s.largest_capacity > 1024 * 1024)
        fail_msg("read into %zu bytes: the over-long line was held", s.largest_capacity);
    lr_free(reader);

    /* The same without the final newline: skipped at EOF, counted whole. */
    chunks[COUNT] = "";
    script t = {.chunks = chunks, .chunk_count = COUNT};
    reader = open_reader(&t, 1024, true);
    EXPECT_TOO_LONG(reader, &t, total);
    EXPECT_STATUS(reader, &t, LR_EOF);
    assert_true(t.largest_capacity <= 1024 * 1024);
    lr_free(reader);

    free((void *)chunks[0]);
    free(chunks);
}

static void test_long_lines_within_limit(void **state)
{
    (void)state;
    /* Lines longer than the reader's first buffer, in odd-sized reads: kept whole and intact. */
    enum { LINE = 200 * 1000, LINES = 3 };
    char *text = malloc((LINE + 1) * LINES + 1);
    assert_non_null(text);
    size_t used = 0;
    for (int line = 0; line < LINES; line++) {
        for (size_t i = 0; i < LINE; i++)
            text[used++] = (char)('a' + (i * 7 + (size_t)line) % 26);
        text[used++] = '\n';
    }
    text[used] = '\0';
    const char *chunks[] = {text};
    script s = {.chunks = chunks, .chunk_count = 1, .max_per_read = 10007};
    line_reader *reader = open_reader(&s, LINE, true);
    for (int line = 0; line < LINES; line++) {
        const char *bytes;
        size_t length;
        assert_int_equal(lr_next(reader, &bytes, &length), LR_LINE);
        s.lines_returned++;
        assert_int_equal(length, LINE);
        for (size_t i = 0; i < LINE; i++)
            if (bytes[i] != (char)('a' + (i * 7 + (size_t)line) % 26))
                fail_msg("line %d, byte %zu wrong", line, i);
    }
    EXPECT_STATUS(reader, &s, LR_EOF);
    lr_free(reader);
    free(text);
}

static void test_many_short_lines(void **state)
{
    (void)state;
    /* Enough lines to move the unread rest to the front of the buffer many times. */
    enum { LINES = 50000 };
    char *text = malloc((size_t)LINES * 16 + 1);
    assert_non_null(text);
    size_t used = 0;
    for (int i = 0; i < LINES; i++)
        used += (size_t)sprintf(text + used, "line %d\n", i);
    const char *chunks[] = {text};
    script s = {.chunks = chunks, .chunk_count = 1, .max_per_read = 4099};
    line_reader *reader = open_reader(&s, 64, true);
    for (int i = 0; i < LINES; i++) {
        result r = next(reader, &s);
        char expected[32];
        int n = sprintf(expected, "line %d", i);
        assert_int_equal(r.status, LR_LINE);
        assert_int_equal(r.length, n);
        assert_memory_equal(r.text, expected, (size_t)n);
    }
    EXPECT_STATUS(reader, &s, LR_EOF);
    lr_free(reader);
    free(text);
}

static void test_read_error(void **state)
{
    (void)state;
    static const char *const chunks[] = {"a\n", "partial"};
    script s = {.chunks = chunks, .chunk_count = 2, .fail_at_end = true};
    line_reader *reader = open_reader(&s, 1024, true);
    EXPECT_LINE(reader, &s, "a");
    EXPECT_STATUS(reader, &s, LR_ERROR);
    lr_free(reader);

    script t = {.chunks = chunks, .chunk_count = 0, .fail_at_end = true};
    reader = open_reader(&t, 1024, false);
    EXPECT_STATUS(reader, &t, LR_ERROR);
    lr_free(reader);
}

static void test_idle_hook(void **state)
{
    (void)state;
    static const char *const chunks[] = {"a\nb\nc\n", "d", "\n"};
    script s = {.chunks = chunks, .chunk_count = 3};
    line_reader *reader = open_reader(&s, 1024, true);
    EXPECT_LINE(reader, &s, "a");
    assert_int_equal(s.idle_true_calls, 1);
    assert_int_equal(s.idle_false_calls, 1);
    /* b and c are already buffered: no read, so no idle. */
    EXPECT_LINE(reader, &s, "b");
    EXPECT_LINE(reader, &s, "c");
    assert_int_equal(s.idle_true_calls, 1);
    assert_int_equal(s.reads, 1);
    EXPECT_LINE(reader, &s, "d");
    assert_int_equal(s.idle_true_calls, 3);
    assert_int_equal(s.idle_false_calls, 3);
    EXPECT_STATUS(reader, &s, LR_EOF);
    assert_int_equal(s.idle_true_calls, 4);
    assert_int_equal(s.idle_false_calls, 4);
    assert_int_equal(s.reads, 4);
    lr_free(reader);

    /* One byte per read: one true/false pair around every read, never more. */
    static const char *const bytes[] = {"xy\n\nz\n0123456789ABCDEF\nw"};
    script t = {.chunks = bytes, .chunk_count = 1, .max_per_read = 1};
    reader = open_reader(&t, 8, true);
    EXPECT_LINE(reader, &t, "xy");
    EXPECT_LINE(reader, &t, "");
    EXPECT_LINE(reader, &t, "z");
    EXPECT_TOO_LONG(reader, &t, 16);
    EXPECT_LINE(reader, &t, "w");
    EXPECT_STATUS(reader, &t, LR_EOF);
    assert_int_equal(t.idle_true_calls, t.reads);
    assert_int_equal(t.idle_false_calls, t.reads);
    lr_free(reader);
}

static void test_idle_hook_with_error(void **state)
{
    (void)state;
    static const char *const chunks[] = {"a"};
    script s = {.chunks = chunks, .chunk_count = 1, .fail_at_end = true};
    line_reader *reader = open_reader(&s, 1024, true);
    EXPECT_STATUS(reader, &s, LR_ERROR);
    /* Even a failed read is followed by idle false: the caller must not stay "idle". */
    assert_int_equal(s.idle_true_calls, s.idle_false_calls);
    lr_free(reader);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simple_lines),
        cmocka_unit_test(test_idle_hook_reports_held_bytes),
        cmocka_unit_test(test_lines_split_across_reads),
        cmocka_unit_test(test_any_split_gives_same_lines),
        cmocka_unit_test(test_crlf),
        cmocka_unit_test(test_empty_lines),
        cmocka_unit_test(test_too_long),
        cmocka_unit_test(test_too_long_last_line),
        cmocka_unit_test(test_huge_line_is_never_held),
        cmocka_unit_test(test_long_lines_within_limit),
        cmocka_unit_test(test_many_short_lines),
        cmocka_unit_test(test_read_error),
        cmocka_unit_test(test_idle_hook),
        cmocka_unit_test(test_idle_hook_with_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
