/* SPDX-License-Identifier: MIT */
/*
 * MCP's Tasks extension (2026-07-28, ABI 1.7) through the real rpcd and the tasks fixture, with
 * the plugin in rpcd's process and in a host of its own: a call that ends within task_after_ms
 * answers directly, a longer one becomes a task the client polls, answers and cancels; tasks are
 * bounded in count, bytes and lifetime, and every request a client can get wrong is refused.
 * Calls wait on files the test creates, so that what is a task and what is not follows from
 * the order of events, never from how fast the machine is.
 */
#include "harness.h"

#include <jansson.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

typedef struct session {
    char *dir;
    harness_process *rpcd;
    int next_id;
} session;

/* Starts rpcd with the tasks fixture in mode ("none" or "process") and more [rpcd] keys. */
static void start(session *s, const char *mode, const char *keys)
{
    s->dir = harness_temp_dir();
    assert_non_null(s->dir);
    char *text;
    /* The fixture marks its start with a file in the session's directory, which an isolated
     * plugin may write only when it is named. */
    assert_true(asprintf(&text,
                         "[rpcd]\nisolation = %s\n%s\n[plugin tasks]\npath = %s\n"
                         "write_paths = %s\n",
                         mode, keys, harness_env("RPCD_FIXTURE_TASKS"), s->dir) > 0);
    char *config = harness_write_file(s->dir, "rpcd.conf", text);
    assert_non_null(config);
    free(text);
    harness_argv args = harness_rpcd_argv(config);
    s->rpcd = harness_start(args.argv);
    assert_non_null(s->rpcd);
    free(config);
    s->next_id = 1;
}

static void stop(session *s)
{
    harness_close_stdin(s->rpcd);
    harness_exit status;
    assert_int_equal(harness_wait(s->rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    assert_true(status.exited && status.code == 0);
    harness_free(s->rpcd);
    harness_remove_dir(s->dir);
    free(s->dir);
}

static void send_line(session *s, const char *line)
{
    assert_int_equal(harness_write_text(s->rpcd, line, HARNESS_TIMEOUT_MS), HARNESS_OK);
}

static json_t *read_response(session *s)
{
    char *text = NULL;
    int status = harness_read_line(s->rpcd, HARNESS_TIMEOUT_MS, &text, NULL, NULL);
    if (status != HARNESS_OK) {
        harness_collect_stderr(s->rpcd, HARNESS_TIMEOUT_MS);
        print_error("no response (%d); stderr:\n%s\n", status, harness_stderr(s->rpcd));
    }
    assert_int_equal(status, HARNESS_OK);
    json_t *response = json_loads(text, 0, NULL);
    if (!response)
        print_error("not JSON: %s\n", text);
    assert_non_null(response);
    free(text);
    return response;
}

#define DECLARED "{\"elicitation\":{},\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}"
#define UNDECLARED "{\"elicitation\":{}}"

/* Sends a 2026-07-28 request with id, params members (or "") and the client's capabilities. */
static void send_request(session *s, int id, const char *method, const char *members,
                         const char *capabilities)
{
    char *line;
    assert_true(asprintf(&line,
                         "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\",\"params\":{%s%s"
                         "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                         "\"io.modelcontextprotocol/clientCapabilities\":%s}}}\n",
                         id, method, members, members[0] ? "," : "", capabilities) > 0);
    send_line(s, line);
    free(line);
}

/* A request and its response (new), which must be the next line. */
static json_t *request_as(session *s, const char *method, const char *members,
                          const char *capabilities)
{
    int id = s->next_id++;
    send_request(s, id, method, members, capabilities);
    json_t *response = read_response(s);
    if (json_integer_value(json_object_get(response, "id")) != id)
        print_error("not the response to %d: %s\n", id, json_dumps(response, 0));
    assert_int_equal(json_integer_value(json_object_get(response, "id")), id);
    return response;
}

static json_t *request(session *s, const char *method, const char *members)
{
    return request_as(s, method, members, DECLARED);
}

/* tools/call of the tool with arguments (JSON text). */
static json_t *call_tool(session *s, const char *tool, const char *arguments)
{
    char *members;
    assert_true(asprintf(&members, "\"name\":\"%s\",\"arguments\":%s", tool, arguments) > 0);
    json_t *response = request(s, "tools/call", members);
    free(members);
    return response;
}

static const json_t *result_of(const json_t *response)
{
    const json_t *result = json_object_get(response, "result");
    if (!result)
        print_error("not a result: %s\n", json_dumps(response, 0));
    assert_non_null(result);
    return result;
}

static void assert_error(const json_t *response, json_int_t code)
{
    const json_t *error = json_object_get(response, "error");
    if (!error)
        print_error("not an error: %s\n", json_dumps(response, 0));
    assert_non_null(error);
    assert_int_equal(json_integer_value(json_object_get(error, "code")), code);
}

/* An empty acknowledgement: {"resultType":"complete"} and nothing else. Frees the response. */
static void assert_ack(json_t *response)
{
    const json_t *result = result_of(response);
    assert_int_equal(json_object_size(result), 1);
    assert_string_equal(json_string_value(json_object_get(result, "resultType")), "complete");
    json_decref(response);
}

/* The Task members every shape of one carries, checked. */
static void assert_task_fields(const json_t *task, const char *id)
{
    const char *task_id = json_string_value(json_object_get(task, "taskId"));
    assert_non_null(task_id);
    assert_int_equal(strlen(task_id), 32);
    if (id)
        assert_string_equal(task_id, id);
    const char *times[] = {"createdAt", "lastUpdatedAt"};
    for (int i = 0; i < 2; i++) {
        const char *time = json_string_value(json_object_get(task, times[i]));
        assert_non_null(time);
        assert_int_equal(strlen(time), 24); /* 2026-12-06T01:02:03.456Z */
        assert_int_equal(time[10], 'T');
        assert_int_equal(time[23], 'Z');
    }
    assert_true(json_integer_value(json_object_get(task, "ttlMs")) > 0);
    assert_true(json_integer_value(json_object_get(task, "pollIntervalMs")) > 0);
}

/* A CreateTaskResult (freed here): its taskId (new). */
static char *created(json_t *response)
{
    const json_t *result = result_of(response);
    assert_string_equal(json_string_value(json_object_get(result, "resultType")), "task");
    assert_string_equal(json_string_value(json_object_get(result, "status")), "working");
    assert_task_fields(result, NULL);
    assert_null(json_object_get(result, "task"));
    assert_null(json_object_get(result, "result"));
    assert_null(json_object_get(result, "error"));
    assert_null(json_object_get(result, "inputRequests"));
    assert_null(json_object_get(result, "requestState"));
    char *id = strdup(json_string_value(json_object_get(result, "taskId")));
    json_decref(response);
    return id;
}

static json_t *get_task(session *s, const char *id)
{
    char *members;
    assert_true(asprintf(&members, "\"taskId\":\"%s\"", id) > 0);
    json_t *response = request(s, "tasks/get", members);
    free(members);
    return response;
}

/* Polls tasks/get until the task's status is status: the result (new). */
static json_t *poll_until(session *s, const char *id, const char *status)
{
    for (int i = 0; i < 2000; i++) {
        json_t *response = get_task(s, id);
        const json_t *result = result_of(response);
        assert_string_equal(json_string_value(json_object_get(result, "resultType")), "complete");
        assert_task_fields(result, id);
        const char *now = json_string_value(json_object_get(result, "status"));
        if (strcmp(now, status) == 0)
            return response;
        json_decref(response);
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    fail_msg("task %s never became %s", id, status);
    return NULL;
}

/* Polls tasks/get until the task is gone (-32602). */
static void poll_until_gone(session *s, const char *id)
{
    for (int i = 0; i < 2000; i++) {
        json_t *response = get_task(s, id);
        bool gone = json_object_get(response, "error") != NULL;
        if (gone)
            assert_error(response, -32602);
        json_decref(response);
        if (gone)
            return;
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    fail_msg("task %s was never dropped", id);
}

/* A file the fixture waits for ({"until":PATH}), not there yet: its path (new). */
static char *gate(session *s, const char *name)
{
    char *path;
    assert_true(asprintf(&path, "%s/%s", s->dir, name) > 0);
    return path;
}

static void open_gate(const char *path)
{
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    fclose(file);
}

/* Waits until the fixture created the file ({"mark":PATH}): its handler runs. */
static void wait_for_file(const char *path)
{
    for (int i = 0; i < 10000 && access(path, F_OK) != 0; i++)
        nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    assert_int_equal(access(path, F_OK), 0);
}

static char *arguments_until(const char *path, const char *more)
{
    char *text;
    assert_true(asprintf(&text, "{\"until\":\"%s\"%s}", path, more) > 0);
    return text;
}

/* A call that ends within task_after_ms answers directly, whatever its tool's flags. */
static void test_quick_calls_answer_directly(void **state)
{
    session s;
    start(&s, *state, "task_after_ms = 600000");
    const char *tools[] = {"tasks_wait", "tasks_required", "tasks_plain"};
    for (int i = 0; i < 3; i++) {
        json_t *response = call_tool(&s, tools[i], "{}");
        const json_t *result = result_of(response);
        assert_string_equal(json_string_value(json_object_get(result, "resultType")), "complete");
        assert_null(json_object_get(result, "taskId"));
        assert_true(
            json_is_true(json_object_get(json_object_get(result, "structuredContent"), "waited")));
        json_decref(response);
    }
    stop(&s);
}

/* A call still running after task_after_ms becomes a task: working until its call ends, then
 * completed with the tool's result, or a tool error, or failed with a protocol error. */
static void test_long_call_becomes_task(void **state)
{
    session s;
    start(&s, *state, "task_after_ms = 0");
    char *path = gate(&s, "first"), *arguments = arguments_until(path, "");
    char *id = created(call_tool(&s, "tasks_wait", arguments));
    json_t *working = get_task(&s, id);
    assert_string_equal(json_string_value(json_object_get(result_of(working), "status")),
                        "working");
    assert_null(json_object_get(result_of(working), "result"));
    open_gate(path);
    json_t *done = poll_until(&s, id, "completed");
    const json_t *result = json_object_get(result_of(done), "result");
    assert_true(
        json_is_true(json_object_get(json_object_get(result, "structuredContent"), "waited")));
    assert_false(json_is_true(json_object_get(result, "isError")));
    assert_null(json_object_get(result_of(done), "error"));
    /* A task's outcome stays to be read again. */
    json_t *again = get_task(&s, id);
    assert_true(json_equal(json_object_get(result_of(again), "result"), result));
    json_decref(working), json_decref(done), json_decref(again);
    free(id), free(arguments), free(path);

    path = gate(&s, "second"), arguments = arguments_until(path, "");
    id = created(call_tool(&s, "tasks_tool_error", arguments));
    open_gate(path);
    done = poll_until(&s, id, "completed");
    result = json_object_get(result_of(done), "result");
    assert_true(json_is_true(json_object_get(result, "isError")));
    json_decref(done);
    free(id), free(arguments), free(path);

    path = gate(&s, "third"), arguments = arguments_until(path, "");
    id = created(call_tool(&s, "tasks_protocol_error", arguments));
    open_gate(path);
    done = poll_until(&s, id, "failed");
    const json_t *error = json_object_get(result_of(done), "error");
    assert_int_equal(json_integer_value(json_object_get(error, "code")), -32042);
    assert_string_equal(json_string_value(json_object_get(error, "message")),
                        "the job broke the protocol");
    assert_string_equal(json_string_value(json_object_get(result_of(done), "statusMessage")),
                        "the job broke the protocol");
    assert_null(json_object_get(result_of(done), "result"));
    json_decref(done);
    free(id), free(arguments), free(path);
    stop(&s);
}

/* tasks/cancel: an empty acknowledgement, the task cancelled, its handler told; again, the same
 * acknowledgement. */
static void test_cancel(void **state)
{
    session s;
    start(&s, *state, "task_after_ms = 0");
    char *path = gate(&s, "never"), *mark = gate(&s, "started"), *more;
    assert_true(asprintf(&more, ",\"mark\":\"%s\"", mark) > 0);
    char *arguments = arguments_until(path, more);
    char *id = created(call_tool(&s, "tasks_wait", arguments));
    wait_for_file(mark); /* its handler runs: it is told of the cancel */
    char *members;
    assert_true(asprintf(&members, "\"taskId\":\"%s\"", id) > 0);
    for (int i = 0; i < 2; i++) {
        assert_ack(request(&s, "tasks/cancel", members));
        if (i == 0)
            assert_int_equal(harness_wait_for_stderr(s.rpcd, "a call was cancelled while it waited",
                                                     HARNESS_TIMEOUT_MS),
                             HARNESS_OK);
        json_t *cancelled = get_task(&s, id);
        assert_string_equal(json_string_value(json_object_get(result_of(cancelled), "status")),
                            "cancelled");
        assert_null(json_object_get(result_of(cancelled), "error"));
        json_decref(cancelled);
    }
    free(members), free(id), free(arguments), free(path), free(mark), free(more);
    stop(&s);
}

/* The keys of a task's inputRequests, in order, into keys (at most 4); how many. */
static size_t question_keys(const json_t *response, const char *keys[4])
{
    const json_t *questions = json_object_get(result_of(response), "inputRequests");
    assert_true(json_is_object(questions));
    size_t count = 0;
    const char *key;
    const json_t *question;
    json_object_foreach((json_t *)questions, key, question)
    {
        assert_string_equal(json_string_value(json_object_get(question, "method")),
                            "elicitation/create");
        if (count < 4)
            keys[count] = key;
        count++;
    }
    return count;
}

/* tasks/update of the task with inputResponses (JSON text): its acknowledgement, checked. */
static void update(session *s, const char *id, const char *responses)
{
    char *members;
    assert_true(asprintf(&members, "\"taskId\":\"%s\",\"inputResponses\":%s", id, responses) > 0);
    assert_ack(request(s, "tasks/update", members));
    free(members);
}

/*
 * A task that asks waits in input_required, its questions under keys of its own; tasks/update
 * takes the answers to questions still open (others are ignored) and, once all are in, the
 * call runs again with them and the state its handler kept.
 */
static void test_task_asks(void **state)
{
    session s;
    start(&s, *state, "task_after_ms = 0");
    char *path = gate(&s, "ask"), *arguments = arguments_until(path, ",\"ask\":2");
    char *id = created(call_tool(&s, "tasks_ask", arguments));
    open_gate(path);
    json_t *asking = poll_until(&s, id, "input_required");
    const char *keys[4];
    assert_int_equal(question_keys(asking, keys), 2);
    assert_string_equal(keys[0], "1.a1");
    assert_string_equal(keys[1], "1.a2");
    assert_null(json_object_get(result_of(asking), "requestState"));
    json_decref(asking);
    /* One answer, one under a key never asked, one that is no object: the task waits for the
     * other. */
    update(&s, id,
           "{\"1.a1\":{\"action\":\"accept\",\"content\":{\"ok\":true}},"
           "\"a2\":{\"action\":\"accept\"},\"zz\":{\"ignored\":true}}");
    update(&s, id, "{\"1.a2\":\"not an object\"}");
    json_t *partial = get_task(&s, id);
    assert_string_equal(json_string_value(json_object_get(result_of(partial), "status")),
                        "input_required");
    assert_int_equal(question_keys(partial, keys), 1);
    assert_string_equal(keys[0], "1.a2");
    json_decref(partial);
    update(&s, id, "{\"1.a2\":{\"action\":\"decline\"}}");
    json_t *done = poll_until(&s, id, "completed");
    const json_t *content =
        json_object_get(json_object_get(result_of(done), "result"), "structuredContent");
    json_t *expected = json_loads("{\"state\":\"round-state\",\"answers\":[{\"action\":\"accept\","
                                  "\"content\":{\"ok\":true}},{\"action\":\"decline\"}]}",
                                  0, NULL);
    assert_true(json_equal(content, expected));
    json_decref(expected);
    json_decref(done);
    /* Answers to a task that asks nothing now are ignored. */
    update(&s, id, "{\"1.a1\":{\"action\":\"accept\"}}");
    free(id), free(arguments), free(path);

    /* Two rounds in one task: the second round's keys are new. */
    path = gate(&s, "twice"), arguments = arguments_until(path, "");
    id = created(call_tool(&s, "tasks_twice", arguments));
    open_gate(path);
    asking = poll_until(&s, id, "input_required");
    assert_int_equal(question_keys(asking, keys), 1);
    assert_string_equal(keys[0], "1.q");
    json_decref(asking);
    update(&s, id, "{\"1.q\":{\"action\":\"accept\",\"content\":{\"ok\":true}}}");
    asking = poll_until(&s, id, "input_required");
    assert_int_equal(question_keys(asking, keys), 1);
    assert_string_equal(keys[0], "2.q");
    json_decref(asking);
    update(&s, id, "{\"1.q\":{\"action\":\"decline\"}}"); /* the first round's key: ignored */
    update(&s, id, "{\"2.q\":{\"action\":\"cancel\"}}");
    done = poll_until(&s, id, "completed");
    content = json_object_get(json_object_get(result_of(done), "result"), "structuredContent");
    expected = json_loads("{\"first\":{\"action\":\"accept\",\"content\":{\"ok\":true}},"
                          "\"second\":{\"action\":\"cancel\"}}",
                          0, NULL);
    assert_true(json_equal(content, expected));
    json_decref(expected);
    json_decref(done);
    free(id), free(arguments), free(path);
    stop(&s);
}

/*
 * A call that asks before it is a task is answered with the questions directly, as any call of
 * 2026-07-28; its retry, when it runs past task_after_ms, becomes a task that does not carry the
 * round's requestState or questions.
 */
static void test_asks_before_it_is_a_task(void **state)
{
    session s;
    /* The first round asks at once: far within these 3 s on any machine. */
    start(&s, *state, "task_after_ms = 3000");
    char *path = gate(&s, "then"), *arguments;
    assert_true(asprintf(&arguments, "{\"then\":\"%s\"}", path) > 0);
    json_t *asking = call_tool(&s, "tasks_ask", arguments);
    const json_t *result = result_of(asking);
    assert_string_equal(json_string_value(json_object_get(result, "resultType")), "input_required");
    assert_null(json_object_get(result, "taskId"));
    const char *token = json_string_value(json_object_get(result, "requestState"));
    assert_non_null(token);
    char *members;
    assert_true(asprintf(&members,
                         "\"name\":\"tasks_ask\",\"arguments\":%s,\"requestState\":\"%s\","
                         "\"inputResponses\":{\"a1\":{\"action\":\"accept\",\"content\":"
                         "{\"name\":\"Alice\"}}}",
                         arguments, token) > 0);
    json_decref(asking);
    char *id = created(request(&s, "tools/call", members));
    open_gate(path);
    json_t *done = poll_until(&s, id, "completed");
    const json_t *content =
        json_object_get(json_object_get(result_of(done), "result"), "structuredContent");
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_array_get(json_object_get(content, "answers"), 0), "content"),
            "name")),
        "Alice");
    json_decref(done);
    free(id), free(members), free(arguments), free(path);
    stop(&s);
}

/* Every request of the extension a client can get wrong, and the methods it removed. */
static void test_refusals(void **state)
{
    session s;
    start(&s, *state, "task_after_ms = 0");
    static const char *const methods[] = {"tasks/get", "tasks/update", "tasks/cancel"};
    for (int i = 0; i < 3; i++) {
        /* Without the extension declared: -32021 naming it, before the id is looked at. */
        json_t *response =
            request_as(&s, methods[i], "\"taskId\":\"gate\",\"inputResponses\":{}", UNDECLARED);
        assert_error(response, -32021);
        const json_t *data = json_object_get(json_object_get(response, "error"), "data");
        assert_true(json_is_object(json_object_get(
            json_object_get(json_object_get(data, "requiredCapabilities"), "extensions"),
            "io.modelcontextprotocol/tasks")));
        json_decref(response);
        /* An id no task has, and no id at all: -32602. */
        response = request(&s, methods[i], "\"taskId\":\"0123\",\"inputResponses\":{}");
        assert_error(response, -32602);
        json_decref(response);
        response = request(&s, methods[i], "\"taskId\":7,\"inputResponses\":{}");
        assert_error(response, -32602);
        json_decref(response);
    }
    json_t *response = request(&s, "tasks/update", "\"taskId\":\"0123\"");
    assert_error(response, -32602);
    json_decref(response);
    /* A tool that requires a task, for a client that did not declare the extension. */
    response =
        request_as(&s, "tools/call", "\"name\":\"tasks_required\",\"arguments\":{}", UNDECLARED);
    assert_error(response, -32021);
    json_decref(response);
    /* The earlier revision's methods, and the handshake era's own request of tasks/get. */
    response = request(&s, "tasks/list", "");
    assert_error(response, -32601);
    json_decref(response);
    response = request(&s, "tasks/result", "\"taskId\":\"0123\"");
    assert_error(response, -32601);
    json_decref(response);
    send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"old\",\"method\":\"tasks/get\","
                  "\"params\":{\"taskId\":\"0123\"}}\n");
    response = read_response(&s);
    assert_error(response, -32601);
    json_decref(response);
    /* A client that did not declare it gets no task, only the answer. */
    char *path = gate(&s, "undeclared"), *members;
    assert_true(
        asprintf(&members, "\"name\":\"tasks_wait\",\"arguments\":{\"until\":\"%s\"}", path) > 0);
    int id = s.next_id++;
    send_request(&s, id, "tools/call", members, UNDECLARED);
    open_gate(path);
    response = read_response(&s);
    assert_int_equal(json_integer_value(json_object_get(response, "id")), id);
    assert_string_equal(json_string_value(json_object_get(result_of(response), "resultType")),
                        "complete");
    json_decref(response);
    free(members), free(path);
    stop(&s);
}

/*
 * A tools/call that has not become a task keeps its request's id: a second request with it is
 * refused, $/cancelRequest answers it -32800 and notifications/cancelled silences it.
 */
static void test_request_not_yet_a_task(void **state)
{
    session s;
    start(&s, *state, "task_after_ms = 600000");
    char *path = gate(&s, "never"), *members;
    assert_true(
        asprintf(&members, "\"name\":\"tasks_wait\",\"arguments\":{\"until\":\"%s\"}", path) > 0);
    send_request(&s, 70, "tools/call", members, DECLARED);
    send_request(&s, 70, "tools/call", members, DECLARED);
    json_t *response = read_response(&s);
    assert_int_equal(json_integer_value(json_object_get(response, "id")), 70);
    assert_error(response, -32600);
    json_decref(response);
    send_line(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\",\"params\":{\"id\":70}}\n");
    response = read_response(&s);
    assert_int_equal(json_integer_value(json_object_get(response, "id")), 70);
    assert_error(response, -32800);
    json_decref(response);
    char *mark = gate(&s, "started"), *marked;
    assert_true(asprintf(&marked,
                         "\"name\":\"tasks_wait\",\"arguments\":{\"until\":\"%s\",\"mark\":\"%s\"}",
                         path, mark) > 0);
    send_request(&s, 71, "tools/call", marked, DECLARED);
    wait_for_file(mark);
    send_line(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                  "\"params\":{\"requestId\":71}}\n");
    assert_int_equal(
        harness_wait_for_stderr(s.rpcd, "a call was cancelled while it waited", HARNESS_TIMEOUT_MS),
        HARNESS_OK);
    /* The next line is the next request's answer: nothing came for 71, and its id is free. */
    response = request(&s, "tools/list", "");
    assert_non_null(json_object_get(result_of(response), "tools"));
    json_decref(response);
    /* Free once the silenced call has ended, which its handler's line only announces. */
    bool served = false;
    for (int i = 0; i < 2000 && !served; i++) {
        send_request(&s, 71, "tools/call", "\"name\":\"tasks_wait\",\"arguments\":{}", DECLARED);
        response = read_response(&s);
        assert_int_equal(json_integer_value(json_object_get(response, "id")), 71);
        served = json_object_get(response, "result") != NULL;
        if (!served)
            assert_error(response, -32600);
        else
            assert_non_null(json_object_get(result_of(response), "content"));
        json_decref(response);
        if (!served)
            nanosleep(&(struct timespec){0, 5 * 1000 * 1000}, NULL);
    }
    assert_true(served);
    free(members), free(path), free(mark), free(marked);
    stop(&s);
}

/*
 * max_tasks: a tool that may run as a task is called as any other when no room is left, and one
 * that requires a task is refused -32603; max_task_bytes: an outcome too large fails its task.
 */
static void test_limits(void **state)
{
    session s;
    start(&s, *state, "task_after_ms = 0\nmax_tasks = 1\nmax_task_bytes = 4096");
    char *first = gate(&s, "first"), *arguments = arguments_until(first, ",\"pad\":8000");
    char *id = created(call_tool(&s, "tasks_wait", arguments));
    char *second = gate(&s, "second"), *members;
    assert_true(
        asprintf(&members, "\"name\":\"tasks_wait\",\"arguments\":{\"until\":\"%s\"}", second) > 0);
    int call_id = s.next_id++;
    send_request(&s, call_id, "tools/call", members, DECLARED);
    json_t *response = call_tool(&s, "tasks_required", "{}");
    assert_error(response, -32603);
    assert_non_null(
        strstr(json_string_value(json_object_get(
                   json_object_get(json_object_get(response, "error"), "data"), "detail")),
               "max_tasks"));
    json_decref(response);
    open_gate(second);
    response = read_response(&s);
    assert_int_equal(json_integer_value(json_object_get(response, "id")), call_id);
    assert_string_equal(json_string_value(json_object_get(result_of(response), "resultType")),
                        "complete");
    json_decref(response);
    open_gate(first);
    json_t *failed = poll_until(&s, id, "failed");
    const json_t *error = json_object_get(result_of(failed), "error");
    assert_int_equal(json_integer_value(json_object_get(error, "code")), -32603);
    assert_non_null(strstr(json_string_value(json_object_get(error, "message")), "max_task_bytes"));
    json_decref(failed);
    free(members), free(second), free(id), free(arguments), free(first);
    stop(&s);
}

/* task_ttl_ms: a task is dropped once it is past it; one still running has its call cancelled. */
static void test_lifetime(void **state)
{
    session s;
    start(&s, *state, "task_after_ms = 0\ntask_ttl_ms = 1000");
    char *path = gate(&s, "done"), *arguments = arguments_until(path, "");
    char *id = created(call_tool(&s, "tasks_wait", arguments));
    open_gate(path);
    json_decref(poll_until(&s, id, "completed"));
    poll_until_gone(&s, id);
    free(id), free(arguments), free(path);
    path = gate(&s, "never");
    char *mark = gate(&s, "started"), *more;
    assert_true(asprintf(&more, ",\"mark\":\"%s\"", mark) > 0);
    arguments = arguments_until(path, more);
    id = created(call_tool(&s, "tasks_wait", arguments));
    wait_for_file(mark);
    poll_until_gone(&s, id);
    assert_int_equal(
        harness_wait_for_stderr(s.rpcd, "a call was cancelled while it waited", HARNESS_TIMEOUT_MS),
        HARNESS_OK);
    free(id), free(arguments), free(path), free(mark), free(more);
    stop(&s);
}

/* The end of input with a task working and one waiting for answers: rpcd ends cleanly. */
static void test_end_of_input(void **state)
{
    session s;
    start(&s, *state, "task_after_ms = 0");
    char *never = gate(&s, "never"), *arguments = arguments_until(never, "");
    char *working = created(call_tool(&s, "tasks_wait", arguments));
    char *path = gate(&s, "ask"), *asks = arguments_until(path, "");
    char *asking = created(call_tool(&s, "tasks_ask", asks));
    open_gate(path);
    json_decref(poll_until(&s, asking, "input_required"));
    stop(&s);
    free(asking), free(asks), free(path), free(working), free(arguments), free(never);
}

/* The extension is the 2026-07-28 revision's: server/discover names it, initialize does not,
 * and a handshake-era client calls every tool as before. */
static void test_other_revisions(void **state)
{
    session s;
    start(&s, *state, "task_after_ms = 0");
    json_t *response = request(&s, "server/discover", "");
    assert_true(json_is_object(json_object_get(
        json_object_get(json_object_get(result_of(response), "capabilities"), "extensions"),
        "io.modelcontextprotocol/tasks")));
    json_decref(response);
    send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"i\",\"method\":\"initialize\",\"params\":"
                  "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":"
                  "{\"name\":\"t\",\"version\":\"1\"}}}\n");
    response = read_response(&s);
    assert_null(
        json_object_get(json_object_get(result_of(response), "capabilities"), "extensions"));
    json_decref(response);
    send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"method\":\"tools/call\",\"params\":"
                  "{\"name\":\"tasks_required\",\"arguments\":{\"ms\":50}}}\n");
    response = read_response(&s);
    assert_true(json_is_true(
        json_object_get(json_object_get(result_of(response), "structuredContent"), "waited")));
    json_decref(response);
    send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"tasks.required\","
                  "\"params\":{\"ms\":50}}\n");
    response = read_response(&s);
    assert_true(json_is_true(json_object_get(result_of(response), "waited")));
    json_decref(response);
    stop(&s);
}

/* A notifications/tasks of the task on stream 500, with status: its params. */
static const json_t *check_note(const json_t *note, const char *id, const char *status)
{
    assert_string_equal(json_string_value(json_object_get(note, "method")), "notifications/tasks");
    const json_t *params = json_object_get(note, "params");
    assert_task_fields(params, id);
    assert_string_equal(json_string_value(json_object_get(params, "status")), status);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(params, "_meta"),
                                                        "io.modelcontextprotocol/subscriptionId")),
                     500);
    return params;
}

/*
 * subscriptions/listen with taskIds: acknowledged, then each status change of a listed task comes
 * as notifications/tasks with the whole DetailedTask and the stream's id; a client that did not
 * declare the extension is refused -32021.
 */
static void test_status_notifications(void **state)
{
    session s;
    start(&s, *state, "task_after_ms = 0");
    char *path = gate(&s, "ask"), *arguments = arguments_until(path, "");
    char *id = created(call_tool(&s, "tasks_ask", arguments));
    char *members;
    assert_true(asprintf(&members, "\"notifications\":{\"taskIds\":[\"%s\"]}", id) > 0);
    json_t *refused = request_as(&s, "subscriptions/listen", members, UNDECLARED);
    assert_error(refused, -32021);
    json_decref(refused);
    send_request(&s, 500, "subscriptions/listen", members, DECLARED);
    json_t *ack = read_response(&s);
    assert_string_equal(json_string_value(json_object_get(ack, "method")),
                        "notifications/subscriptions/acknowledged");
    const json_t *listed = json_object_get(
        json_object_get(json_object_get(ack, "params"), "notifications"), "taskIds");
    assert_int_equal(json_array_size(listed), 1);
    assert_string_equal(json_string_value(json_array_get(listed, 0)), id);
    json_decref(ack);
    open_gate(path);
    /* input_required, then (answered) working, then completed: each told as it happens. The
     * task's making may be told too, when the stream opened before it was (the watcher tells
     * it just after the task's id went to the request). */
    json_t *note = read_response(&s);
    const char *status =
        json_string_value(json_object_get(json_object_get(note, "params"), "status"));
    if (status && strcmp(status, "working") == 0) {
        check_note(note, id, "working");
        json_decref(note);
        note = read_response(&s);
    }
    assert_non_null(json_object_get(
        json_object_get(check_note(note, id, "input_required"), "inputRequests"), "1.a1"));
    json_decref(note);
    char *answer;
    assert_true(asprintf(&answer,
                         "\"taskId\":\"%s\",\"inputResponses\":{\"1.a1\":{\"action\":\"accept\"}}",
                         id) > 0);
    send_request(&s, 600, "tasks/update", answer, DECLARED);
    free(answer);
    /* Its acknowledgement, and the task working again: in either order. */
    json_t *first = read_response(&s), *second = read_response(&s);
    bool note_first = json_object_get(first, "method") != NULL;
    assert_int_equal(json_integer_value(json_object_get(note_first ? second : first, "id")), 600);
    check_note(note_first ? first : second, id, "working");
    json_decref(first), json_decref(second);
    note = read_response(&s);
    assert_non_null(
        json_object_get(json_object_get(check_note(note, id, "completed"), "result"), "content"));
    json_decref(note);
    free(members), free(id), free(arguments), free(path);
    stop(&s);
}

static const char in_process[] = "none";
static const char isolated[] = "process";

#define BOTH(test)                                                                                 \
    cmocka_unit_test_prestate(test, (void *)in_process),                                           \
        cmocka_unit_test_prestate(test, (void *)isolated)

int main(void)
{
    const struct CMUnitTest tests[] = {
        BOTH(test_quick_calls_answer_directly),
        BOTH(test_long_call_becomes_task),
        BOTH(test_cancel),
        BOTH(test_task_asks),
        BOTH(test_asks_before_it_is_a_task),
        BOTH(test_refusals),
        BOTH(test_request_not_yet_a_task),
        BOTH(test_limits),
        BOTH(test_lifetime),
        BOTH(test_end_of_input),
        BOTH(test_other_revisions),
        BOTH(test_status_notifications),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
