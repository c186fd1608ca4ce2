/* SPDX-License-Identifier: MIT */
/*
 * One rpcd per test for the concurrency tests (test_cancellation.c, test_scheduling.c,
 * test_ending.c, test_stuck_handlers.c): its config and temp dir, the lines it writes read and
 * checked, its end, and spinning threads that keep the cores busy.
 */
#ifndef RPCD_TEST_CONCURRENCY_SESSION_H
#define RPCD_TEST_CONCURRENCY_SESSION_H

#include "harness.h"

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define LINE_TIMEOUT_MS test_time_ms(10000)

enum { SPINNERS = 4 };

/*
 * One rpcd with a config of its own, in a temp dir removed at the end. Each test gets one as
 * its state; the teardown cleans up after a test that failed half-way.
 */
typedef struct session {
    char *dir;
    char *config;
    harness_process *rpcd;
    atomic_bool stop_spinning;
    pthread_t spinners[SPINNERS];
    int spinner_count;
} session;

long long now_ms(void);

/*
 * A sanitizer report in rpcd's stderr is a daemon bug even when the exit status looks fine
 * (a report in a process that leaves through _exit changes nothing else), so it fails the test
 * and is shown whole.
 */
void check_sanitizers(const session *s);

/* Starts rpcd on the bundled plugins and the concurrency fixture, with [rpcd] settings. */
void session_start(session *s, const char *settings);

/* Kills rpcd if it still runs and frees everything but the session itself. */
void session_release(session *s);

/* Checks stderr for sanitizer reports, then releases the session. */
void session_end(session *s);

int session_setup(void **state);

int session_teardown(void **state);

void send_text(session *s, const char *text);

__attribute__((format(printf, 2, 3))) void send_format(session *s, const char *format, ...);

/* Reads one line and loads it as JSON (new reference), failing the test when none comes. */
json_t *next_line(session *s);

bool is_progress(const json_t *message);

/* The next line that is not a progress notification (new reference). */
json_t *next_response(session *s);

/* Reads count responses, skipping progress notifications, into a new array. */
json_t *collect_responses(session *s, size_t count);

void print_json(const char *label, const json_t *value);

/*
 * Asserts that actual is JSON-equal to the text expected; a top-level array (a batch response)
 * may hold its elements in any order.
 */
void assert_json(const json_t *actual, const char *expected);

/* Reads the next response (progress skipped) and checks it is JSON-equal to expected. */
void expect_response(session *s, const char *expected);

/* The one response in responses whose id is the string id; fails when there is not exactly one. */
json_t *response_for(const json_t *responses, const char *id);

/* The one response in responses whose id is the number id. */
json_t *response_for_number(const json_t *responses, json_int_t id);

/* Asserts an error response with code and the specification's message for it. */
void assert_error(const json_t *response, json_int_t code, const char *message);

const char *detail_of(const json_t *response);

/* Reads the next response: the request id (a string) cancelled, -32800 and no result. */
void expect_cancelled(session *s, const char *id);

/* Waits for the exit, within timeout_ms, and asserts the exit status. */
void expect_exit(session *s, int timeout_ms, int code);

/* Asserts that nothing is left on stdout (call after rpcd ended or stdin is closed). */
void expect_no_more_output(session *s);

/* End of input: nothing more on stdout, exit 0, no sanitizer report. Frees the session. */
void session_finish(session *s);

/*
 * Makes sure every call sent before has had its handler run: `workers` calls of parallel.meet
 * only meet when every worker is inside one at the same time, and the pool takes jobs in order,
 * so each worker has returned from whatever it took earlier. The fixture counts arrivals over the
 * life of the process: total is the number of meet calls made so far, these included.
 */
void barrier(session *s, int workers, int total);

/* Sends sleep {"ms": ms} with progress token id, and waits for its first report. */
void start_sleep_and_wait_for_progress(session *s, const char *id, int ms);

void start_spinners(session *s);

void stop_spinners(session *s);

/* Expects rpcd to exit with status within a bound on a wait of since (now_ms()): no waiting out
 * a call. */
void expect_exit_soon(session *s, long long since, int status);

#endif
