/* SPDX-License-Identifier: MIT */
/*
 * The task store byte for byte, its calls played by hand through its sink and asker: a call
 * that ends before task_after_ms answers its request under the request's id; one that runs past
 * it becomes a task, working, then completed or failed; a task that asks waits for answers under
 * keys of its round; and the store's bounds in count, bytes and lifetime.
 */
#include "base/buffer.h"
#include "base/output.h"
#include "mcp/mcp_rounds.h"
#include "mcp/mcp_tasks.h"
#include "methods/registry.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#define SPAN(text) ((js_span){(text), strlen(text)})
#define PARAMS "{\"name\":\"long_job\",\"arguments\":{}}"
#define QUESTION "{\"method\":\"elicitation/create\",\"params\":{\"message\":\"Sure?\"}}"

static int collect(void *sink, const struct iovec *parts, int part_count)
{
    buffer *text = sink;
    for (int i = 0; i < part_count; i++)
        if (buf_append(text, parts[i].iov_base, parts[i].iov_len) != 0)
            return -1;
    return 0;
}

typedef struct fixture {
    buffer text;
    output *out;
    mcp_rounds *rounds;
    mcp_tasks *tasks;
    reg_method method;
} fixture;

static fixture *fixture_new(mcp_tasks_limits limits)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    assert_int_equal(out_new(collect, &f->text, &f->out), 0);
    assert_int_equal(mcp_rounds_new(&f->rounds), 0);
    assert_int_equal(mcp_tasks_new(f->out, f->rounds, &f->tasks), 0);
    mcp_tasks_configure(f->tasks, NULL, NULL, limits);
    f->method.name = "long.job";
    return f;
}

static void fixture_free(fixture *f)
{
    mcp_tasks_free(f->tasks);
    mcp_rounds_free(f->rounds);
    out_free(f->out);
    buf_free(&f->text);
    free(f);
}

/* What was written since the last look (new), forgotten. */
static char *written(fixture *f)
{
    assert_int_equal(out_flush(f->out), 0);
    char *text = strndup(f->text.data ? f->text.data : "", f->text.length);
    buf_clear(&f->text);
    return text;
}

/* Waits until something was written: the watcher made a task. Returns it (new). */
static char *wait_written(fixture *f)
{
    for (int i = 0; i < 20000; i++) {
        assert_int_equal(out_flush(f->out), 0);
        if (f->text.length > 0)
            return written(f);
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    fail_msg("nothing was written");
    return NULL;
}

/* A call's response line, as the call layer hands it to the sink. */
static void deliver(mcp_task *task, const char *line)
{
    struct iovec part = {(void *)line, line ? strlen(line) : 0};
    mcp_tasks_sink()->deliver(task, &part, line ? 1 : 0);
}

/* A task's id from its CreateTaskResult line (32 hex digits, into id). */
static void task_id_of(const char *line, char id[33])
{
    const char *at = strstr(line, "\"taskId\":\"");
    assert_non_null(at);
    memcpy(id, at + 10, 32);
    id[32] = '\0';
    assert_int_equal(strspn(id, "0123456789abcdef"), 32);
}

static mcp_task *open_call(fixture *f, const char *request_id, char *call_id)
{
    mcp_task *task;
    assert_int_equal(mcp_tasks_open(f->tasks, SPAN(request_id), 0, SPAN(PARAMS), &task, call_id),
                     0);
    return task;
}

/* tasks/get of id: its answer (an mcp_task_answer) and result in out. */
static int get(fixture *f, const char *id, buffer *out)
{
    char params[96];
    snprintf(params, sizeof params, "{\"taskId\":\"%s\"}", id);
    buf_clear(out);
    return mcp_tasks_get(f->tasks, SPAN(params), out);
}

static void assert_contains(const buffer *text, const char *part)
{
    if (!text->data || !memmem(text->data, text->length, part, strlen(part)))
        fail_msg("'%.*s' does not hold '%s'", (int)text->length, text->data, part);
}

/* A buffer (not NUL-terminated) holds exactly expected. */
static void assert_text(const buffer *text, const char *expected)
{
    if (text->length != strlen(expected) || memcmp(text->data, expected, text->length) != 0)
        fail_msg("'%.*s' is not '%s'", (int)text->length, text->data, expected);
}

static int ask(fixture *f, mcp_task *task, const char *questions, size_t count, buffer *out);

/* A call that ends before it is a task answers its request, under the request's id. */
static void test_quick_call_answers_its_request(void **state)
{
    (void)state;
    fixture *f = fixture_new(MCP_TASKS_LIMITS);
    char call_id[MCP_TASK_CALL_ID_BYTES];
    mcp_task *task = open_call(f, "\"r1\"", call_id);
    assert_int_equal(strncmp(call_id, "\"task-", 6), 0);
    assert_int_equal(strlen(call_id), 6 + 32 + 1);
    assert_true(mcp_tasks_waiting(f->tasks, SPAN("\"r1\"")));
    assert_false(mcp_tasks_waiting(f->tasks, SPAN("\"r2\"")));
    mcp_tasks_started(task);
    char line[128];
    snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"ok\":1}}", call_id);
    deliver(task, line);
    char *text = written(f);
    assert_string_equal(text, "{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"result\":{\"ok\":1}}\n");
    free(text);
    assert_false(mcp_tasks_waiting(f->tasks, SPAN("\"r1\"")));
    assert_int_equal(mcp_tasks_count(f->tasks), 0);
    /* An error the same way; a call that ends with no answer (a silent cancel) writes none. */
    task = open_call(f, "7", call_id);
    mcp_tasks_started(task);
    deliver(task,
            "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"error\":{\"code\":-32800,\"message\":\"c\"}}");
    text = written(f);
    assert_string_equal(
        text, "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32800,\"message\":\"c\"}}\n");
    free(text);
    task = open_call(f, "8", call_id);
    mcp_tasks_started(task);
    deliver(task, NULL);
    text = written(f);
    assert_string_equal(text, "");
    free(text);
    /* A call that asks before it is a task is answered with the questions, as any call. */
    task = open_call(f, "10", call_id);
    mcp_tasks_started(task);
    buffer asked = BUFFER_INIT;
    assert_int_equal(ask(f, task, "\"a\":" QUESTION, 1, &asked), 0);
    assert_contains(&asked, "{\"resultType\":\"input_required\",\"inputRequests\":{\"a\":");
    buf_free(&asked);
    deliver(task, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"input_required\"}}");
    text = written(f);
    assert_string_equal(text, "{\"jsonrpc\":\"2.0\",\"id\":10,\"result\":{\"resultType\":"
                              "\"input_required\"}}\n");
    free(text);
    /* A call that never started leaves nothing behind. */
    task = open_call(f, "9", call_id);
    mcp_tasks_abandon(task);
    assert_int_equal(mcp_tasks_count(f->tasks), 0);
    fixture_free(f);
}

/* Past task_after_ms: a task, working, then what its call ended with. */
static void test_long_call_becomes_task(void **state)
{
    (void)state;
    mcp_tasks_limits limits = MCP_TASKS_LIMITS;
    limits.after_ms = 0;
    fixture *f = fixture_new(limits);
    char call_id[MCP_TASK_CALL_ID_BYTES], id[33];
    buffer out = BUFFER_INIT;
    static const char *const outcomes[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32042,\"message\":\"broke\"}}",
    };
    for (int i = 0; i < 2; i++) {
        mcp_task *task = open_call(f, "\"r1\"", call_id);
        mcp_tasks_started(task);
        char *created = wait_written(f);
        assert_int_equal(strncmp(created,
                                 "{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"result\":"
                                 "{\"resultType\":\"task\",\"taskId\":\"",
                                 strlen("{\"jsonrpc\":\"2.0\",\"id\":\"r1\",\"result\":"
                                        "{\"resultType\":\"task\",\"taskId\":\"")),
                         0);
        assert_non_null(strstr(created, "\"status\":\"working\""));
        assert_non_null(strstr(created, "\"ttlMs\":3600000,\"pollIntervalMs\":500}}"));
        task_id_of(created, id);
        free(created);
        /* The request's id is free: it was answered. */
        assert_false(mcp_tasks_waiting(f->tasks, SPAN("\"r1\"")));
        assert_int_equal(get(f, id, &out), MCP_TASK_DONE);
        assert_contains(&out, "{\"resultType\":\"complete\",\"taskId\":\"");
        assert_contains(&out, "\"status\":\"working\"");
        deliver(task, outcomes[i]);
        assert_int_equal(get(f, id, &out), MCP_TASK_DONE);
        if (i == 0) {
            assert_contains(&out, "\"status\":\"completed\"");
            assert_contains(&out, ",\"result\":{\"content\":[]}}");
        } else {
            assert_contains(&out, "\"status\":\"failed\"");
            assert_contains(&out, ",\"statusMessage\":\"broke\",\"error\":{\"code\":-32042,"
                                  "\"message\":\"broke\"}}");
        }
        /* Cancelling an ended task is acknowledged and changes nothing. */
        char params[96];
        snprintf(params, sizeof params, "{\"taskId\":\"%s\"}", id);
        buf_clear(&out);
        assert_int_equal(mcp_tasks_cancel(f->tasks, SPAN(params), &out), MCP_TASK_DONE);
        assert_text(&out, "{\"resultType\":\"complete\"}");
        assert_int_equal(get(f, id, &out), MCP_TASK_DONE);
        assert_contains(&out, i == 0 ? "\"status\":\"completed\"" : "\"status\":\"failed\"");
        /* A task's answer is written only once: nothing more went to the request. */
        char *more = written(f);
        assert_string_equal(more, "");
        free(more);
    }
    /* A task's call that ends with no answer (a silent cancel of its "task-ID") cancels it. */
    mcp_task *task = open_call(f, "\"r2\"", call_id);
    mcp_tasks_started(task);
    char *created = wait_written(f);
    task_id_of(created, id);
    free(created);
    deliver(task, NULL);
    assert_int_equal(get(f, id, &out), MCP_TASK_DONE);
    assert_contains(&out, "\"status\":\"cancelled\"");
    assert_int_equal(mcp_tasks_count(f->tasks), 3);
    buf_free(&out);
    fixture_free(f);
}

/* The round end a task's asker sees: questions (members' text) and a state. */
static int ask(fixture *f, mcp_task *task, const char *questions, size_t count, buffer *out)
{
    call_round_end round = {
        .method = &f->method,
        .id = SPAN("\"task-x\""),
        .arguments = SPAN("{}"),
        .call_params = SPAN(PARAMS),
        .questions = questions,
        .questions_length = strlen(questions),
        .question_count = count,
        .state = "kept",
        .state_length = 4,
        .has_state = true,
    };
    return mcp_tasks_asker()->ask(task, out, &round);
}

static void update(fixture *f, const char *id, const char *responses, int expected,
                   mcp_task_resume *resume)
{
    char params[512];
    snprintf(params, sizeof params, "{\"taskId\":\"%s\",\"inputResponses\":%s}", id, responses);
    buffer out = BUFFER_INIT;
    assert_int_equal(mcp_tasks_update(f->tasks, SPAN(params), &out, resume), expected);
    assert_text(&out, "{\"resultType\":\"complete\"}");
    buf_free(&out);
}

/*
 * A call that asks before it is a task is answered with the questions (as any call of
 * 2026-07-28) and never becomes one; a task that asks waits in input_required under keys of its
 * round, and runs again once every question is answered.
 */
static void test_asking(void **state)
{
    (void)state;
    mcp_tasks_limits limits = MCP_TASKS_LIMITS;
    limits.after_ms = 0;
    fixture *f = fixture_new(limits);
    char call_id[MCP_TASK_CALL_ID_BYTES], id[33];
    buffer out = BUFFER_INIT;
    mcp_task *settled = open_call(f, "\"early\"", call_id);
    assert_int_equal(ask(f, settled, "\"a\":" QUESTION, 1, &out), 0);
    assert_contains(&out, "{\"resultType\":\"input_required\",\"inputRequests\":{\"a\":");
    assert_contains(&out, "\"requestState\":\"");
    mcp_tasks_started(settled);

    /* The watcher goes oldest first: had it made a task of the settled call, that would be
     * written before r1's. */
    mcp_task *task = open_call(f, "\"r1\"", call_id);
    mcp_tasks_started(task);
    char *created = wait_written(f);
    assert_non_null(strstr(created, "\"id\":\"r1\""));
    task_id_of(created, id);
    free(created);
    assert_true(mcp_tasks_waiting(f->tasks, SPAN("\"early\"")));
    buf_clear(&out);
    assert_int_equal(ask(f, task, "\"a\":" QUESTION ",\"b\":" QUESTION, 2, &out),
                     CALL_ASK_DEFERRED);
    assert_int_equal(out.length, 0);
    deliver(task, NULL); /* the asking round's end: the task waits */
    assert_int_equal(get(f, id, &out), MCP_TASK_DONE);
    assert_contains(&out, "\"status\":\"input_required\"");
    assert_contains(&out, ",\"inputRequests\":{\"1.a\":" QUESTION ",\"1.b\":" QUESTION "}}");
    /* Answers under keys never shown, or not objects, change nothing; one answer is taken. */
    mcp_task_resume resume;
    update(f, id, "{\"a\":{},\"2.a\":{},\"1.b\":7,\"1.a\":{\"action\":\"accept\"}}", MCP_TASK_DONE,
           &resume);
    assert_int_equal(get(f, id, &out), MCP_TASK_DONE);
    assert_contains(&out, ",\"inputRequests\":{\"1.b\":" QUESTION "}}");
    update(f, id, "{\"1.a\":{\"action\":\"decline\"}}", MCP_TASK_DONE, &resume);
    update(f, id, "{\"1.b\":{\"action\":\"cancel\"}}", MCP_TASK_RESUME, &resume);
    assert_string_equal(resume.call_id, call_id);
    assert_text(&resume.params, PARAMS);
    assert_text(&resume.input.answers,
                "{\"a\":{\"action\":\"accept\"},\"b\":{\"action\":\"cancel\"}}");
    assert_true(resume.input.has_state);
    assert_memory_equal(resume.input.state.data, "kept", 4);
    mcp_tasks_resumed(&resume, true, 0, NULL);
    assert_int_equal(get(f, id, &out), MCP_TASK_DONE);
    assert_contains(&out, "\"status\":\"working\"");
    /* The next round's keys are its own. */
    buf_clear(&out);
    assert_int_equal(ask(f, task, "\"a\":" QUESTION, 1, &out), CALL_ASK_DEFERRED);
    deliver(task, NULL);
    assert_int_equal(get(f, id, &out), MCP_TASK_DONE);
    assert_contains(&out, ",\"inputRequests\":{\"2.a\":" QUESTION "}}");
    update(f, id, "{\"1.a\":{\"action\":\"accept\"}}", MCP_TASK_DONE, &resume);
    update(f, id, "{\"2.a\":{\"action\":\"accept\"}}", MCP_TASK_RESUME, &resume);
    /* A call that could not run again fails the task. */
    mcp_tasks_resumed(&resume, false, -32603, "no room");
    assert_int_equal(get(f, id, &out), MCP_TASK_DONE);
    assert_contains(&out, "\"status\":\"failed\"");
    assert_contains(&out, "\"error\":{\"code\":-32603,\"message\":\"no room\"}");
    /* Answers to a task that asks nothing are acknowledged and ignored. */
    update(f, id, "{\"2.a\":{}}", MCP_TASK_DONE, &resume);
    char *more = written(f);
    assert_string_equal(more, ""); /* the settled call never became a task */
    free(more);
    buf_free(&out);
    fixture_free(f);
}

/* What every request of the extension refuses. */
static void test_refusals(void **state)
{
    (void)state;
    fixture *f = fixture_new(MCP_TASKS_LIMITS);
    buffer out = BUFFER_INIT;
    mcp_task_resume resume;
    static const char *const invalid[] = {"", "[]", "{}", "{\"taskId\":7}",
                                          "{\"taskId\":\"a\",\"taskId\":\"a\"}"};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        js_span params = {invalid[i], strlen(invalid[i])};
        assert_int_equal(mcp_tasks_get(f->tasks, params, &out), MCP_TASK_INVALID);
        assert_contains(&out, "\"taskId\\\" must be a string");
        assert_int_equal(mcp_tasks_cancel(f->tasks, params, &out), MCP_TASK_INVALID);
        assert_int_equal(mcp_tasks_update(f->tasks, params, &out, &resume), MCP_TASK_INVALID);
    }
    assert_int_equal(mcp_tasks_update(f->tasks, SPAN("{\"taskId\":\"a\"}"), &out, &resume),
                     MCP_TASK_INVALID);
    assert_contains(&out, "inputResponses");
    assert_int_equal(
        mcp_tasks_update(f->tasks, SPAN("{\"taskId\":\"a\",\"inputResponses\":[]}"), &out, &resume),
        MCP_TASK_INVALID);
    assert_int_equal(get(f, "0123", &out), MCP_TASK_UNKNOWN);
    assert_text(&out, "{\"detail\":\"no task has this id (never made, or expired)\","
                      "\"taskId\":\"0123\"}");
    assert_int_equal(mcp_tasks_cancel(f->tasks, SPAN("{\"taskId\":\"0123\"}"), &out),
                     MCP_TASK_UNKNOWN);
    /* A request not yet a task is no task: its call id is not a task id. */
    char call_id[MCP_TASK_CALL_ID_BYTES], pending[40];
    mcp_task *task = open_call(f, "1", call_id);
    mcp_tasks_started(task);
    snprintf(pending, sizeof pending, "%.32s", call_id + 6);
    assert_int_equal(get(f, pending, &out), MCP_TASK_UNKNOWN);
    deliver(task, NULL);
    /* A session that keeps none knows no task. */
    assert_int_equal(mcp_tasks_get(NULL, SPAN("{\"taskId\":\"0123\"}"), &out), MCP_TASK_UNKNOWN);
    assert_int_equal(mcp_tasks_open(NULL, SPAN("1"), 0, SPAN("{}"), &task, call_id),
                     MCP_TASKS_FULL);
    buf_free(&out);
    fixture_free(f);
}

/* max_tasks, max_task_bytes and task_ttl_ms. */
static void test_bounds(void **state)
{
    (void)state;
    mcp_tasks_limits limits = {1, 4096, 1000, 0, 500};
    fixture *f = fixture_new(limits);
    char call_id[MCP_TASK_CALL_ID_BYTES], id[33];
    mcp_task *task = open_call(f, "1", call_id), *second;
    assert_int_equal(mcp_tasks_open(f->tasks, SPAN("2"), 0, SPAN("{}"), &second, call_id),
                     MCP_TASKS_FULL);
    mcp_tasks_started(task);
    char *created = wait_written(f);
    task_id_of(created, id);
    free(created);
    /* An outcome over max_task_bytes fails the task. */
    char *big = malloc(5000);
    assert_non_null(big);
    int used = snprintf(big, 5000, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"");
    memset(big + used, 'x', 4096);
    strcpy(big + used + 4096, "\"}");
    deliver(task, big);
    free(big);
    buffer out = BUFFER_INIT;
    assert_int_equal(get(f, id, &out), MCP_TASK_DONE);
    assert_contains(&out, "\"status\":\"failed\"");
    assert_contains(&out, "the task's outcome is over max_task_bytes");
    /* Params over max_task_bytes leave no room. */
    char *params = malloc(5000);
    assert_non_null(params);
    memset(params, ' ', 4999);
    params[0] = '{', params[4998] = '}', params[4999] = '\0';
    assert_int_equal(mcp_tasks_open(f->tasks, SPAN("3"), 0, SPAN(params), &second, call_id),
                     MCP_TASKS_FULL);
    free(params);
    /* Past its ttlMs the task is gone, and its room with it. */
    for (int i = 0; i < 20000 && get(f, id, &out) == MCP_TASK_DONE; i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    assert_int_equal(get(f, id, &out), MCP_TASK_UNKNOWN);
    for (int i = 0; i < 20000 && mcp_tasks_count(f->tasks) > 0; i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    assert_int_equal(mcp_tasks_count(f->tasks), 0);
    second = open_call(f, "4", call_id);
    mcp_tasks_abandon(second);
    buf_free(&out);
    fixture_free(f);
}

/* The end of serving: a task waiting for answers fails; no call becomes a task any more. */
static void test_close(void **state)
{
    (void)state;
    mcp_tasks_limits limits = MCP_TASKS_LIMITS;
    limits.after_ms = 0;
    fixture *f = fixture_new(limits);
    char call_id[MCP_TASK_CALL_ID_BYTES], id[33];
    mcp_task *task = open_call(f, "1", call_id);
    mcp_tasks_started(task);
    char *created = wait_written(f);
    task_id_of(created, id);
    free(created);
    buffer out = BUFFER_INIT;
    assert_int_equal(ask(f, task, "\"a\":" QUESTION, 1, &out), CALL_ASK_DEFERRED);
    deliver(task, NULL);
    mcp_tasks_close(f->tasks);
    assert_int_equal(get(f, id, &out), MCP_TASK_DONE);
    assert_contains(&out, "\"status\":\"failed\"");
    assert_contains(&out, "\"code\":-32800");
    mcp_task *late;
    assert_int_equal(mcp_tasks_open(f->tasks, SPAN("2"), 0, SPAN("{}"), &late, call_id),
                     MCP_TASKS_FULL);
    buf_free(&out);
    fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quick_call_answers_its_request),
        cmocka_unit_test(test_long_call_becomes_task),
        cmocka_unit_test(test_asking),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_close),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
