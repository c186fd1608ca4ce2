/* SPDX-License-Identifier: MIT */
/*
 * How much longer than on a plain build the tests allow for anything they wait for: one factor,
 * taken from the build (sanitizers) and from the stage that runs the tests (valgrind), so that a
 * bound on a wait fails a test that hangs, never one that runs on a slow or busy machine.
 */
#ifndef RPCD_TEST_TIME_H
#define RPCD_TEST_TIME_H

#include <stdlib.h>

/* The build's own factor: 3 under AddressSanitizer, 5 under ThreadSanitizer (GCC defines
 * __SANITIZE_*, clang answers __has_feature), 1 otherwise. */
#if defined(__SANITIZE_THREAD__)
#define RPCD_TEST_BUILD_SCALE 5
#elif defined(__SANITIZE_ADDRESS__)
#define RPCD_TEST_BUILD_SCALE 3
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RPCD_TEST_BUILD_SCALE 5
#elif __has_feature(address_sanitizer)
#define RPCD_TEST_BUILD_SCALE 3
#endif
#endif
#ifndef RPCD_TEST_BUILD_SCALE
#define RPCD_TEST_BUILD_SCALE 1
#endif

/*
 * The factor: the build's, times RPCD_TEST_TIME_SCALE when the
 * environment sets it to a whole number from 1 to 1000, as the valgrind stages do (10: rpcd or the
 * unit test runs under memcheck). The tests run in the build that rpcd and the plugins are built
 * in, so the build's factor is theirs too.
 */
static inline int test_time_scale(void)
{
    int scale = RPCD_TEST_BUILD_SCALE;
    const char *text = getenv("RPCD_TEST_TIME_SCALE");
    if (text) {
        char *end;
        long factor = strtol(text, &end, 10);
        if (end != text && *end == '\0' && factor >= 1 && factor <= 1000)
            scale *= (int)factor;
    }
    return scale;
}

/* A bound of ms milliseconds as it is on a plain build, scaled for this one. */
static inline int test_time_ms(int ms)
{
    return ms * test_time_scale();
}

#endif
