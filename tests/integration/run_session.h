/* SPDX-License-Identifier: MIT */
/*
 * One run of the real rpcd on a config and its whole input, its output checked line by line
 * (every stdout line one JSON value, no raw carriage return). Failures fail the cmocka test.
 */
#ifndef RPCD_TEST_RUN_SESSION_H
#define RPCD_TEST_RUN_SESSION_H

#include "harness.h"

#include <jansson.h>

#include <stddef.h>

/* A test's scratch directory (cmocka state). */
typedef struct run_fixture {
    char *dir;
} run_fixture;
int run_fixture_setup(void **state);
int run_fixture_teardown(void **state);

/* printf into a new string (the caller frees it). */
__attribute__((format(printf, 1, 2))) char *run_format(const char *pattern, ...);
/* An environment variable the test cannot do without. */
const char *run_env(const char *name);

/* What one run of rpcd gave: its stdout as parsed lines, its stderr and how it ended. */
typedef struct run_session {
    harness_run_result run;
    json_t **messages; /* one per stdout line, each checked to be one JSON value */
    size_t count;
} run_session;

/* Runs rpcd with config text and input; rpcd must exit 0 and every line must be framed right. */
void run_rpcd(const run_fixture *f, const char *config, const char *input, run_session *s);
/*
 * run_rpcd, but stdin stays open until a response to each of ids (id_count integers) has come:
 * for an MCP session, whose end of input cancels the calls in flight.
 */
void run_rpcd_until(const run_fixture *f, const char *config, const char *input,
                    const json_int_t *ids, size_t id_count, run_session *s);
void run_session_free(run_session *s);
/* The response with this integer id; fails the test when there is not exactly one. */
json_t *run_response(const run_session *s, json_int_t id);
/* Fails unless actual is expected (JSON text), members in any order. */
void run_assert_json(const json_t *actual, const char *expected);

#endif
