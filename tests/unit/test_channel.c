/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for isolation/channel.c: frames written and read back, and every way a frame from
 * a broken or hostile host is refused (lengths, kinds, strings, reads past the end).
 */
#include "isolation/channel.h"

#include <rpcd/plugin.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

static void test_round_trip(void **state)
{
    (void)state;
    buffer out = BUFFER_INIT;
    size_t start;
    int failed = chan_begin(&out, CHAN_FAIL_CODE, &start);
    failed |= chan_put_u8(&out, 7);
    failed |= chan_put_u32(&out, 0xdeadbeef);
    failed |= chan_put_u64(&out, UINT64_C(0x0123456789abcdef));
    failed |= chan_put_i64(&out, -42);
    failed |= chan_put_f64(&out, 2.5);
    failed |= chan_put_str(&out, "text", 4);
    failed |= chan_put_opt(&out, NULL, 0);
    failed |= chan_put_opt(&out, "opt", SIZE_MAX);
    assert_int_equal(failed, 0);
    assert_int_equal(chan_end(&out, start, false), 0);
    /* A second frame behind it. */
    assert_int_equal(chan_begin(&out, CHAN_END, &start), 0);
    assert_int_equal(chan_end(&out, start, false), 0);

    size_t used;
    chan_frame frame;
    for (size_t partial = 0; partial < 10; partial++)
        assert_int_equal(chan_next(out.data, partial, &used, &frame), CHAN_NEED_MORE);
    assert_int_equal(chan_next(out.data, out.length, &used, &frame), CHAN_FRAME);
    assert_int_equal(frame.kind, CHAN_FAIL_CODE);
    assert_int_equal(chan_get_u8(&frame), 7);
    assert_int_equal(chan_get_u32(&frame), 0xdeadbeef);
    assert_true(chan_get_u64(&frame) == UINT64_C(0x0123456789abcdef));
    assert_int_equal(chan_get_i64(&frame), -42);
    assert_true(chan_get_f64(&frame) == 2.5);
    chan_str text = chan_get_str(&frame);
    assert_int_equal(text.length, 4);
    assert_memory_equal(text.bytes, "text", 4);
    assert_null(chan_get_opt(&frame).bytes);
    char copy[8];
    assert_string_equal(chan_get_cstr(&frame, true, copy, sizeof copy), "opt");
    assert_true(chan_finished(&frame));
    /* Reading on past the end marks the frame bad and gives zeros. */
    assert_int_equal(chan_get_u64(&frame), 0);
    assert_false(chan_finished(&frame));

    assert_int_equal(chan_next(out.data + used, out.length - used, &used, &frame), CHAN_FRAME);
    assert_int_equal(frame.kind, CHAN_END);
    assert_true(chan_finished(&frame));
    buf_free(&out);
}

/* A frame header: length (of kind and payload) and kind. */
static size_t header(char *out, uint32_t length, unsigned char kind)
{
    memcpy(out, &length, 4);
    out[4] = (char)kind;
    return 5;
}

static void test_malformed_headers(void **state)
{
    (void)state;
    char bytes[64] = {0};
    size_t used;
    chan_frame frame;
    header(bytes, (uint32_t)CHAN_MAX_FRAME + 1, CHAN_RESULT);
    assert_int_equal(chan_next(bytes, sizeof bytes, &used, &frame), CHAN_MALFORMED);
    header(bytes, UINT32_MAX, CHAN_RESULT);
    assert_int_equal(chan_next(bytes, 5, &used, &frame), CHAN_MALFORMED);
    header(bytes, 0, CHAN_RESULT);
    assert_int_equal(chan_next(bytes, sizeof bytes, &used, &frame), CHAN_MALFORMED);
    header(bytes, 1, 0);
    assert_int_equal(chan_next(bytes, sizeof bytes, &used, &frame), CHAN_MALFORMED);
    header(bytes, 1, CHAN_KIND_COUNT);
    assert_int_equal(chan_next(bytes, sizeof bytes, &used, &frame), CHAN_MALFORMED);
    /* A large length is not an allocation: with the bytes not there, more is needed. */
    header(bytes, 1000, CHAN_RESULT);
    assert_int_equal(chan_next(bytes, sizeof bytes, &used, &frame), CHAN_NEED_MORE);
}

static void test_malformed_fields(void **state)
{
    (void)state;
    char bytes[64] = {0};
    size_t used;
    chan_frame frame;
    /* A string longer than its frame. */
    size_t at = header(bytes, 1 + 4 + 2, CHAN_RESULT);
    uint32_t length = 100;
    memcpy(bytes + at, &length, 4);
    assert_int_equal(chan_next(bytes, 5 + 4 + 2 + 4, &used, &frame), CHAN_FRAME);
    chan_get_str(&frame);
    assert_true(frame.bad);
    /* An optional string whose flag is neither 0 nor 1. */
    at = header(bytes, 1 + 1, CHAN_RESULT);
    bytes[at] = 2;
    assert_int_equal(chan_next(bytes, 7, &used, &frame), CHAN_FRAME);
    assert_null(chan_get_opt(&frame).bytes);
    assert_true(frame.bad);
    /* A C string holding a NUL, and one that does not fit. */
    buffer out = BUFFER_INIT;
    size_t start;
    assert_int_equal(chan_begin(&out, CHAN_NOTIFY, &start) | chan_put_str(&out, "a\0b", 3) |
                         chan_put_str(&out, "long enough", 11),
                     0);
    assert_int_equal(chan_end(&out, start, false), 0);
    char copy[8];
    assert_int_equal(chan_next(out.data, out.length, &used, &frame), CHAN_FRAME);
    assert_null(chan_get_cstr(&frame, false, copy, sizeof copy));
    assert_true(frame.bad);
    assert_int_equal(chan_next(out.data, out.length, &used, &frame), CHAN_FRAME);
    chan_get_str(&frame);
    assert_null(chan_get_cstr(&frame, false, copy, sizeof copy));
    assert_true(frame.bad);
    /* Bytes left over are not a finished frame. */
    assert_int_equal(chan_next(out.data, out.length, &used, &frame), CHAN_FRAME);
    chan_get_str(&frame);
    assert_false(chan_finished(&frame));
    buf_free(&out);
}

/* A frame that cannot be written (a failed put, or too large) is taken back out whole. */
static void test_refused_frame_taken_back(void **state)
{
    (void)state;
    buffer out = BUFFER_INIT;
    size_t start;
    assert_int_equal(chan_begin(&out, CHAN_END, &start), 0);
    assert_int_equal(chan_end(&out, start, false), 0);
    size_t kept = out.length;
    assert_int_equal(chan_begin(&out, CHAN_RESULT, &start), 0);
    /* Larger than any frame: refused before a byte of it is read. */
    assert_int_equal(chan_put_str(&out, "", CHAN_MAX_FRAME + 1), -1);
    assert_int_equal(chan_end(&out, start, true), -1);
    assert_int_equal(out.length, kept);
    buf_free(&out);
}

static void test_socket(void **state)
{
    (void)state;
    int ends[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, ends), 0);
    assert_int_equal(chan_write_all(ends[0], "hello", 5), 0);
    buffer in = BUFFER_INIT;
    assert_int_equal(chan_read_some(ends[1], &in), 5);
    assert_memory_equal(in.data, "hello", 5);
    chan_consume(&in, 2);
    assert_int_equal(in.length, 3);
    assert_memory_equal(in.data, "llo", 3);
    chan_consume(&in, 3);
    assert_int_equal(in.length, 0);
    close(ends[0]);
    assert_int_equal(chan_read_some(ends[1], &in), 0);
    /* Writing to a closed peer fails with EPIPE, never a SIGPIPE. */
    assert_int_equal(chan_write_all(ends[1], "x", 1), -1);
    close(ends[1]);
    buf_free(&in);
}

/* A frame about no call: kind, a level when with_level, and text of length bytes. */
static int read_event(chan_kind kind, bool with_level, const char *text, size_t length,
                      bool trailing)
{
    buffer out = BUFFER_INIT;
    size_t start;
    int failed = chan_begin(&out, kind, &start);
    if (with_level)
        failed |= chan_put_u32(&out, (uint32_t)RPCD_LOG_INFO);
    failed |= chan_put_str(&out, text, length);
    if (trailing)
        failed |= chan_put_u8(&out, 0);
    assert_int_equal(chan_end(&out, start, failed != 0), 0);
    size_t used;
    chan_frame frame;
    assert_int_equal(chan_next(out.data, out.length, &used, &frame), CHAN_FRAME);
    chan_str got;
    int level = -1;
    int status = kind == CHAN_LOG ? chan_read_log(&frame, &level, &got)
                                  : chan_read_resource_updated(&frame, &got);
    if (status == 0) {
        assert_int_equal(got.length, length);
        assert_memory_equal(got.bytes, text, length);
        if (kind == CHAN_LOG)
            assert_int_equal(level, RPCD_LOG_INFO);
    }
    buf_free(&out);
    return status;
}

/* What a host says about no call must be fit for the protocol: UTF-8, no NUL, bounded. */
static void test_events_checked(void **state)
{
    (void)state;
    assert_int_equal(read_event(CHAN_RESOURCE_UPDATED, false, "notes://a", 9, false), 0);
    assert_int_equal(read_event(CHAN_RESOURCE_UPDATED, false, "", 0, false), 0);
    assert_int_equal(read_event(CHAN_RESOURCE_UPDATED, false, "notes://\xc3", 9, false), -1);
    assert_int_equal(read_event(CHAN_RESOURCE_UPDATED, false, "a\0b", 3, false), -1);
    assert_int_equal(read_event(CHAN_RESOURCE_UPDATED, false, "notes://a", 9, true), -1);
    assert_int_equal(read_event(CHAN_LOG, true, "caf\xc3\xa9", 5, false), 0);
    assert_int_equal(read_event(CHAN_LOG, true, "bad \xe2\x82", 6, false), -1);
    assert_int_equal(read_event(CHAN_LOG, true, "a\0b", 3, false), -1);
    assert_int_equal(read_event(CHAN_LOG, true, "line", 4, true), -1);
    assert_int_equal(read_event(CHAN_LOG, false, "line", 4, false), -1); /* no level */
    /* Up to the bounds and not a byte more. */
    char *long_text = malloc(CHAN_MAX_URI + 1);
    assert_non_null(long_text);
    memset(long_text, 'u', CHAN_MAX_URI + 1);
    assert_int_equal(read_event(CHAN_RESOURCE_UPDATED, false, long_text, CHAN_MAX_URI, false), 0);
    assert_int_equal(read_event(CHAN_RESOURCE_UPDATED, false, long_text, CHAN_MAX_URI + 1, false),
                     -1);
    assert_int_equal(read_event(CHAN_LOG, true, long_text, CHAN_MAX_LOG_TEXT, false), 0);
    assert_int_equal(read_event(CHAN_LOG, true, long_text, CHAN_MAX_LOG_TEXT + 1, false), -1);
    free(long_text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),       cmocka_unit_test(test_malformed_headers),
        cmocka_unit_test(test_malformed_fields), cmocka_unit_test(test_refused_frame_taken_back),
        cmocka_unit_test(test_socket),           cmocka_unit_test(test_events_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
