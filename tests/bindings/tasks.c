/* SPDX-License-Identifier: MIT */
/*
 * The bindings' part of MCP's Tasks extension (ABI 1.7), through the real rpcd over 2026-07-28
 * with task_after_ms = 0: PREFIX.later, flagged as a tool that may run as a task in each
 * binding's own terms, makes server/discover name the extension, and a call of it that declares
 * the extension is answered with a task, which the client polls until it is completed with the
 * tool's result.
 */
#include "behaviour.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#define TASKS "io.modelcontextprotocol/tasks"

/* Request id of method in the stateless revision, the client declaring the extension, with
 * members of params before its _meta (or ""). */
static void send_declared(session *s, int id, const char *method, const char *members)
{
    char *line;
    assert_true(asprintf(&line,
                         "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":{%s%s"
                         "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                         "\"io.modelcontextprotocol/clientCapabilities\":{\"extensions\":{"
                         "\"" TASKS "\":{}}}}}}\n",
                         id, method, members, members[0] ? "," : "") > 0);
    assert_int_equal(harness_write_text(s->rpcd, line, HARNESS_TIMEOUT_MS), HARNESS_OK);
    free(line);
}

static json_t *result_of(json_t *response)
{
    json_t *result = json_object_get(response, "result");
    if (!result)
        print_error("not a result: %s\n", json_dumps(response, 0));
    assert_non_null(result);
    return result;
}

void test_task(void **state)
{
    session *s = *state;
    int id = 1;
    send_declared(s, id, "server/discover", "");
    json_t *response = response_to(s, id++);
    assert_member(
        json_object_get(json_object_get(result_of(response), "capabilities"), "extensions"),
        "capabilities.extensions", "{\"" TASKS "\":{}}");
    json_decref(response);

    /* A call that outlives task_after_ms (0) becomes a task, working until the plugin's thread
     * completes it. */
    char *members;
    assert_true(
        asprintf(&members, "\"name\":\"%s_later\",\"arguments\":{\"delay_ms\":300}", prefix) > 0);
    send_declared(s, id, "tools/call", members);
    free(members);
    response = response_to(s, id++);
    json_t *result = result_of(response);
    assert_member(json_object_get(result, "resultType"), "resultType", "\"task\"");
    assert_member(json_object_get(result, "status"), "status", "\"working\"");
    char *task = strdup(json_string_value(json_object_get(result, "taskId")));
    assert_int_equal(strlen(task), 32);
    json_decref(response);

    char *get;
    assert_true(asprintf(&get, "\"taskId\":\"%s\"", task) > 0);
    json_t *done = NULL;
    for (int polls = 0; !done; polls++) {
        assert_true(polls < 3000);
        send_declared(s, id, "tasks/get", get);
        response = response_to(s, id++);
        const char *status = json_string_value(json_object_get(result_of(response), "status"));
        assert_non_null(status);
        if (strcmp(status, "completed") == 0) {
            done = response;
        } else {
            assert_string_equal(status, "working");
            json_decref(response);
            nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        }
    }
    result = json_object_get(result_of(done), "result");
    assert_member(json_object_get(result, "isError"), "isError", "false");
    assert_member(json_object_get(result, "structuredContent"), "structuredContent",
                  "{\"deferred\":true}");
    json_decref(done);
    free(get);
    free(task);
    harness_close_stdin(s->rpcd);
    expect_exit_zero(s);
}
