/* SPDX-License-Identifier: MIT */
/*
 * What the parts of the bindings' behaviour test share: the rpcd a test talks to, and the
 * helpers that read its responses (behaviour.c) for the tests of asking.c.
 */
#ifndef RPCD_BINDINGS_BEHAVIOUR_H
#define RPCD_BINDINGS_BEHAVIOUR_H

#include "harness.h"

#include <jansson.h>

/* One rpcd serving the example plugin, started by the test's setup. */
typedef struct session {
    char *dir;
    harness_process *rpcd;
} session;

/* The example's prefix: its methods are PREFIX.hello, PREFIX.confirm, ... */
extern const char *prefix;

/* The next message that is the response to id, skipping notifications (new reference). */
json_t *response_to(session *s, json_int_t id);
/* Fails the test unless value (path names it in the report) is the JSON text expected. */
void assert_member(const json_t *value, const char *path, const char *expected);
/* Waits for rpcd to exit, and fails the test unless it exited 0. */
void expect_exit_zero(session *s);

/* asking.c: PREFIX.confirm asks, and completes on the retry; without the capability, -32021. */
void test_asking(void **state);
void test_asking_unsupported(void **state);

/* A session whose rpcd turns every call of a task tool into a task (task_after_ms = 0). */
int task_session_setup(void **state);
/* tasks.c: PREFIX.later, a tool that may run as a task (ABI 1.7), becomes one and completes. */
void test_task(void **state);

#endif
