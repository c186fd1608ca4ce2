/* SPDX-License-Identifier: MIT */
/*
 * The tool policy through the real binary, each test with the plugins in rpcd's process and
 * then each in a host process of its own: what tools/list shows is what tools/call and a call by
 * name serve, a denied tool answered exactly as one that does not exist; a rate limit's -32029
 * with when to retry, per method and per plugin; a result over max_result_bytes a tool error in
 * tools/call and -32603 by name, naming the cap; every refusal an access log line with its
 * rule; a denied method's resource or prompt neither listed nor served; and a reload (SIGHUP) that
 * changes the policy, or keeps it when the new one is wrong.
 */
#include "harness.h"

#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char *const modes[] = {"none", "process"};

typedef struct session {
    char *dir;
    char *config;
    harness_process *rpcd;
} session;

/* The config: [rpcd] with log_calls and isolation = mode, [mcp] with mcp_keys, then echo and
 * spec with echo_keys and spec_keys. */
static char *config_text(const char *mode, const char *mcp_keys, const char *echo_keys,
                         const char *spec_keys)
{
    char *text;
    assert_true(asprintf(&text,
                         "[rpcd]\nlog_calls = true\nisolation = %s\n[mcp]\n%s"
                         "[plugin echo]\npath = %s\n%s[plugin spec]\npath = %s\n%s",
                         mode, mcp_keys, harness_env("RPCD_PLUGIN_ECHO"), echo_keys,
                         harness_env("RPCD_PLUGIN_SPEC"), spec_keys) > 0);
    return text;
}

static void start(session *s, const char *mode, const char *mcp_keys, const char *echo_keys,
                  const char *spec_keys)
{
    s->dir = harness_temp_dir();
    assert_non_null(s->dir);
    char *text = config_text(mode, mcp_keys, echo_keys, spec_keys);
    s->config = harness_write_file(s->dir, "rpcd.conf", text);
    assert_non_null(s->config);
    free(text);
    harness_argv args = harness_rpcd_argv(s->config);
    s->rpcd = harness_start(args.argv);
    assert_non_null(s->rpcd);
}

static void stop(session *s)
{
    harness_close_stdin(s->rpcd);
    harness_exit status;
    assert_int_equal(harness_wait(s->rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    if (!status.exited || status.code != 0)
        print_error("rpcd: %s\n%s\n", harness_exit_describe(&status), harness_stderr(s->rpcd));
    assert_true(status.exited && status.code == 0);
    harness_free(s->rpcd);
    harness_remove_dir(s->dir);
    free(s->dir);
    free(s->config);
}

/* Sends one request line and returns its response's text (new). */
static char *ask(session *s, const char *request)
{
    char *line = NULL;
    char *sent;
    assert_true(asprintf(&sent, "%s\n", request) > 0);
    assert_int_equal(harness_write_text(s->rpcd, sent, HARNESS_TIMEOUT_MS), HARNESS_OK);
    free(sent);
    int status = harness_read_line(s->rpcd, HARNESS_TIMEOUT_MS, &line, NULL, NULL);
    if (status != HARNESS_OK)
        print_error("no answer to %s; stderr:\n%s\n", request, harness_stderr(s->rpcd));
    assert_int_equal(status, HARNESS_OK);
    return line;
}

static void expect_answer(session *s, const char *request, const char *expected)
{
    char *got = ask(s, request);
    if (!harness_json_equal(expected, got))
        fail_msg("%s\n  got      %s\n  expected %s", request, got, expected);
    free(got);
}

static void expect_stderr(session *s, const char *text)
{
    if (harness_wait_for_stderr(s->rpcd, text, HARNESS_TIMEOUT_MS) != HARNESS_OK)
        fail_msg("stderr lacks \"%s\":\n%s", text, harness_stderr(s->rpcd));
}

/* The names tools/list shows (a JSON object used as a set; new). */
static json_t *listed(session *s)
{
    char *text = ask(s, "{\"jsonrpc\":\"2.0\",\"id\":\"list\",\"method\":\"tools/list\"}");
    json_t *response = json_loads(text, 0, NULL);
    assert_non_null(response);
    free(text);
    json_t *names = json_object(), *tool;
    size_t index;
    json_array_foreach(json_object_get(json_object_get(response, "result"), "tools"), index, tool)
        json_object_set_new(names, json_string_value(json_object_get(tool, "name")), json_true());
    json_decref(response);
    return names;
}

/* Whether method is served by name: anything but -32601. */
static bool served_by_name(session *s, const char *method)
{
    char request[256];
    snprintf(request, sizeof request,
             "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"%s\",\"params\":[1,2]}", method);
    char *text = ask(s, request);
    bool served = !strstr(text, "\"code\":-32601");
    free(text);
    return served;
}

/* Whether tool is served by tools/call: anything but "unknown tool". */
static bool served_as_tool(session *s, const char *tool)
{
    char request[256];
    snprintf(request, sizeof request,
             "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
             "\"arguments\":{}}}",
             tool);
    char *text = ask(s, request);
    bool served = !strstr(text, "unknown tool");
    free(text);
    return served;
}

/* The methods of echo and spec, each a tool under its own name. */
static const char *const every_method[] = {"echo",   "subtract",     "sum",        "get_data",
                                           "update", "notify_hello", "notify_sum", NULL};

static void test_denied_alike_listed_and_called(void **state)
{
    (void)state;
    for (int m = 0; m < 2; m++) {
        session s;
        start(&s, modes[m], "tools_deny = sub*\n", "",
              "tools_allow = sum, subtract, get_data, notify_*\ntools_deny = notify_sum\n");
        /* What is listed is what is called, whichever way. */
        json_t *names = listed(&s);
        size_t served = 0;
        for (size_t i = 0; every_method[i]; i++) {
            bool in_list = json_object_get(names, every_method[i]) != NULL;
            bool by_name = served_by_name(&s, every_method[i]);
            bool as_tool = served_as_tool(&s, every_method[i]);
            if (in_list != by_name || in_list != as_tool)
                fail_msg("%s (%s): listed %d, by name %d, tools/call %d", every_method[i], modes[m],
                         in_list, by_name, as_tool);
            served += in_list;
        }
        assert_int_equal(served, 4); /* echo, sum, get_data, notify_hello */
        assert_non_null(json_object_get(names, "notify_hello"));
        json_decref(names);
        /* A denied method by name: the bytes a method that does not exist gets. */
        expect_answer(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subtract\",\"params\":[3,1]}",
                      "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,"
                      "\"message\":\"Method not found\"}}");
        expect_answer(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"no_such\",\"params\":[3,1]}",
                      "{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32601,"
                      "\"message\":\"Method not found\"}}");
        /* And as a tool: an unknown tool's answer, the name in the message. */
        expect_answer(&s,
                      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                      "{\"name\":\"update\"}}",
                      "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32602,\"message\":"
                      "\"unknown tool update\",\"data\":{\"detail\":\"unknown tool\",\"tool\":"
                      "\"update\"}}}");
        expect_answer(&s,
                      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                      "{\"name\":\"nothing\"}}",
                      "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32602,\"message\":"
                      "\"unknown tool nothing\",\"data\":{\"detail\":\"unknown tool\",\"tool\":"
                      "\"nothing\"}}}");
        /* A denied notification: nothing, and the next request is answered. */
        assert_int_equal(harness_write_text(s.rpcd,
                                            "{\"jsonrpc\":\"2.0\",\"method\":\"notify_sum\"}\n",
                                            HARNESS_TIMEOUT_MS),
                         HARNESS_OK);
        expect_answer(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"sum\",\"params\":[1,2]}",
                      "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":3}");
        /* Every refusal in the access log, with the rule that decided it. */
        expect_stderr(&s, "call method=subtract id=1 plugin=spec outcome=refused code=-32601 "
                          "rule=tools_deny pattern 'sub*' of [mcp]");
        expect_stderr(&s, "call method=update id=2 plugin=spec outcome=refused code=-32602 "
                          "rule=tools_allow of [plugin spec] (no pattern matches)");
        expect_stderr(&s, "call method=notify_sum plugin=spec outcome=refused "
                          "rule=tools_deny pattern 'notify_sum' of [plugin spec]");
        stop(&s);
    }
}

/* The member key of the error of response text (borrowed from *response, which is new). */
static json_t *error_of(const char *text, json_t **response)
{
    *response = json_loads(text, 0, NULL);
    assert_non_null(*response);
    json_t *error = json_object_get(*response, "error");
    if (!error)
        fail_msg("not an error: %s", text);
    return error;
}

/* request must be refused with -32029, a wait of at most most_ms that its message repeats. */
static void expect_rate_limited(session *s, const char *request, long long most_ms)
{
    char *text = ask(s, request);
    json_t *response;
    json_t *error = error_of(text, &response);
    assert_int_equal(json_integer_value(json_object_get(error, "code")), -32029);
    json_t *data = json_object_get(error, "data");
    long long retry = json_integer_value(json_object_get(data, "retryAfterMs"));
    if (retry < 1 || retry > most_ms)
        fail_msg("retryAfterMs %lld, not in 1..%lld: %s", retry, most_ms, text);
    char message[96];
    snprintf(message, sizeof message, "Rate limited: retry after %lld ms", retry);
    assert_string_equal(json_string_value(json_object_get(error, "message")), message);
    json_decref(response);
    free(text);
}

static void test_rate_limited_with_retry(void **state)
{
    (void)state;
    for (int m = 0; m < 2; m++) {
        session s;
        /* An hour per token: no clock of the test's can refill them. */
        start(&s, modes[m], "", "rate_limit.echo = 1/h burst 2\n", "rate_limit = 1/h burst 2\n");
        const char *echo = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}";
        const char *echo_tool = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                                "\"params\":{\"name\":\"echo\",\"arguments\":{\"a\":1}}}";
        /* The burst, by name and as a tool alike: one bucket for the method. */
        expect_answer(&s, echo, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[1]}");
        char *text = ask(&s, echo_tool);
        assert_non_null(strstr(text, "\"isError\":false"));
        free(text);
        expect_rate_limited(&s, echo, 3600000);
        expect_rate_limited(&s, echo_tool, 3600000);
        /* The plugin's bucket is shared by its methods. */
        expect_answer(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"sum\",\"params\":[1,2]}",
                      "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":3}");
        expect_answer(&s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"get_data\"}",
                      "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":[\"hello\",5]}");
        expect_rate_limited(&s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"sum\",\"params\":[1]}",
                            3600000);
        expect_stderr(&s, "call method=echo id=2 plugin=echo outcome=refused code=-32029 "
                          "rule=rate_limit.echo = 1/h burst 2 of [plugin echo]");
        expect_stderr(&s, "call method=sum id=5 plugin=spec outcome=refused code=-32029 "
                          "rule=rate_limit = 1/h burst 2 of [plugin spec]");
        stop(&s);
    }
}

static void test_result_cap(void **state)
{
    (void)state;
    for (int m = 0; m < 2; m++) {
        session s;
        start(&s, modes[m], "max_result_bytes = 1000\n", "max_result_bytes.echo = 16\n",
              "max_result_bytes.nothing = 5\n");
        /* 16 bytes pass; 17 do not. */
        expect_answer(
            &s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[12345678901234]}",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[12345678901234]}");
        expect_answer(
            &s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"echo\",\"params\":[123456789012345]}",
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32603,\"message\":"
            "\"Internal error\",\"data\":{\"exception\":\"result too large\",\"plugin\":\"echo\","
            "\"method\":\"echo\",\"detail\":\"the result of 17 bytes is over max_result_bytes "
            "(16)\",\"data\":{\"max_result_bytes\":16}}}}");
        /* In tools/call, a tool error the model can read. */
        expect_answer(&s,
                      "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
                      "{\"name\":\"echo\",\"arguments\":{\"text\":\"far too long\"}}}",
                      "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[{\"type\":\"text\","
                      "\"text\":\"Internal error: the result of 23 bytes is over "
                      "max_result_bytes (16)\"}],\"isError\":true}}");
        /* [mcp]'s cap for the rest. */
        expect_answer(&s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"sum\",\"params\":[1,2]}",
                      "{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":3}");
        expect_stderr(&s, "warning: [plugin spec]: max_result_bytes.nothing names none of its "
                          "methods");
        expect_stderr(&s, "outcome=tool_error rule=max_result_bytes.echo of [plugin echo]");
        expect_stderr(&s, "outcome=error code=-32603 rule=max_result_bytes.echo of [plugin echo]");
        stop(&s);
    }
}

static void reload(session *s, const char *mode, const char *mcp_keys, const char *echo_keys,
                   const char *expected)
{
    char *text = config_text(mode, mcp_keys, echo_keys, "");
    char *path = harness_write_file(s->dir, "rpcd.conf", text);
    assert_non_null(path);
    free(path);
    free(text);
    assert_int_equal(harness_signal(s->rpcd, SIGHUP), 0);
    expect_stderr(s, expected);
}

static void test_reload_changes_policy(void **state)
{
    (void)state;
    for (int m = 0; m < 2; m++) {
        session s;
        start(&s, modes[m], "tools_deny = echo\n", "", "");
        assert_false(served_by_name(&s, "echo"));
        assert_true(served_by_name(&s, "sum"));
        /* The client that initialized hears that the list changed. */
        free(ask(&s, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{}}"));
        reload(&s, modes[m], "tools_deny = sum\n", "", "reloaded: generation 2");
        char *line = NULL;
        assert_int_equal(harness_read_line(s.rpcd, HARNESS_TIMEOUT_MS, &line, NULL, NULL),
                         HARNESS_OK);
        assert_string_equal(
            line, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}");
        free(line);
        assert_true(served_by_name(&s, "echo"));
        assert_false(served_by_name(&s, "sum"));
        json_t *names = listed(&s);
        assert_non_null(json_object_get(names, "echo"));
        assert_null(json_object_get(names, "sum"));
        json_decref(names);
        /* A plugin section's limit: the plugin is kept, its calls counted from now on. */
        reload(&s, modes[m], "tools_deny = sum\n", "rate_limit.echo = 1/h burst 1\n",
               "reloaded: generation 3: plugins added [], removed [], replaced [], unchanged "
               "[echo, spec]");
        assert_true(served_by_name(&s, "echo"));
        expect_rate_limited(&s, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"echo\"}", 3600000);
        /* A wrong policy is refused whole: the one before stays. */
        reload(&s, modes[m], "tools_deny = sum\nrate_limit = fast\n", "",
               "reload failed, still serving generation 3");
        expect_rate_limited(&s, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"echo\"}", 3600000);
        assert_false(served_by_name(&s, "sum"));
        stop(&s);
    }
}

/* rpcd serving the notes plugin, with policy keys in [mcp] and in its section. */
static void start_notes(session *s, const char *mode, const char *mcp_keys, const char *notes_keys)
{
    s->dir = harness_temp_dir();
    assert_non_null(s->dir);
    char *text;
    assert_true(asprintf(&text,
                         "[rpcd]\nlog_calls = true\nisolation = %s\n[mcp]\n%s"
                         "[plugin notes]\npath = %s\n%s",
                         mode, mcp_keys, harness_env("RPCD_PLUGIN_NOTES"), notes_keys) > 0);
    s->config = harness_write_file(s->dir, "rpcd.conf", text);
    assert_non_null(s->config);
    free(text);
    harness_argv args = harness_rpcd_argv(s->config);
    s->rpcd = harness_start(args.argv);
    assert_non_null(s->rpcd);
}

/* The result of a request with params (new text), its id 5. */
static char *result_of(session *s, const char *method, const char *params)
{
    char *request;
    assert_true(asprintf(&request, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"%s\",\"params\":%s}",
                         method, params) > 0);
    char *text = ask(s, request);
    free(request);
    return text;
}

static const char read_index[] = "{\"uri\":\"notes://index\"}";
static const char read_note[] = "{\"uri\":\"notes://note/welcome\"}";
static const char get_summary[] = "{\"name\":\"summarize\",\"arguments\":{\"title\":\"welcome\"}}";
static const char complete_prompt[] = "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"summarize\"},"
                                      "\"argument\":{\"name\":\"title\",\"value\":\"w\"}}";
static const char complete_note[] = "{\"ref\":{\"type\":\"ref/resource\","
                                    "\"uri\":\"notes://note/{title}\"},"
                                    "\"argument\":{\"name\":\"title\",\"value\":\"w\"}}";

/* What a client sees of the notes plugin's resources, prompts and completions. */
static void expect_notes_served(session *s, bool index, bool prompt)
{
    char *resources = result_of(s, "resources/list", "{}");
    char *prompts = result_of(s, "prompts/list", "{}");
    char *read = result_of(s, "resources/read", read_index);
    char *got = result_of(s, "prompts/get", get_summary);
    char *completed = result_of(s, "completion/complete", complete_prompt);
    /* Listed exactly when served, and a hidden one answered as one that is not there. */
    assert_int_equal(strstr(resources, "notes://index") != NULL, index);
    assert_int_equal(strstr(prompts, "\"summarize\"") != NULL, prompt);
    if (!index)
        assert_true(harness_json_equal(
            "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32602,\"message\":"
            "\"Invalid params\",\"data\":{\"uri\":\"notes://index\"}}}",
            read));
    else
        assert_non_null(strstr(read, "\"contents\""));
    if (!prompt) {
        assert_true(harness_json_equal(
            "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32602,\"message\":"
            "\"Invalid params\",\"data\":{\"detail\":\"unknown "
            "prompt\",\"prompt\":\"summarize\"}}}",
            got));
        assert_true(harness_json_equal("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"completion\":"
                                       "{\"values\":[],\"total\":0,\"hasMore\":false}}}",
                                       completed));
    } else {
        assert_non_null(strstr(got, "\"messages\""));
        assert_non_null(strstr(completed, "\"welcome\""));
    }
    free(resources);
    free(prompts);
    free(read);
    free(got);
    free(completed);
}

/*
 * Methods that serve a resource and a prompt, denied by [mcp] and by their section: left out
 * of their lists, and answered as a URI or prompt nothing serves, with the rule in the access
 * log; the completion of the hidden prompt has no values, the rest is served as before.
 */
static void test_denied_resource_and_prompt(void **state)
{
    (void)state;
    for (int m = 0; m < 2; m++) {
        session s;
        start_notes(&s, modes[m], "", "");
        expect_notes_served(&s, true, true);
        stop(&s);
        start_notes(&s, modes[m], "tools_deny = notes_index\n", "tools_deny = *summarize\n");
        expect_notes_served(&s, false, false);
        expect_stderr(&s, "call method=notes_index id=5 plugin=notes outcome=refused "
                          "code=-32602 rule=tools_deny pattern 'notes_index' of [mcp]");
        expect_stderr(&s, "call method=notes_summarize id=5 plugin=notes outcome=refused "
                          "code=-32602 rule=tools_deny pattern '*summarize' of [plugin notes]");
        /* The template, its completion and a call by name stay as the policy says. */
        char *templates = result_of(&s, "resources/templates/list", "{}");
        assert_non_null(strstr(templates, "notes://note/{title}"));
        free(templates);
        char *read = result_of(&s, "resources/read", read_note);
        assert_non_null(strstr(read, "\"contents\""));
        free(read);
        char *completed = result_of(&s, "completion/complete", complete_note);
        assert_non_null(strstr(completed, "\"welcome\""));
        free(completed);
        assert_false(served_by_name(&s, "notes_index"));
        stop(&s);
        /* tools_allow hides what it does not name, the same way. */
        start_notes(&s, modes[m], "", "tools_allow = notes_index, notes_complete_*\n");
        expect_notes_served(&s, true, false);
        stop(&s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_denied_alike_listed_and_called),
        cmocka_unit_test(test_rate_limited_with_retry),
        cmocka_unit_test(test_result_cap),
        cmocka_unit_test(test_reload_changes_policy),
        cmocka_unit_test(test_denied_resource_and_prompt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
