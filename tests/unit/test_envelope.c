/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for envelope: how env_parse classifies validated messages (requests,
 * notifications, responses, invalid ones), which id it keeps, where it finds the progress
 * token, and the error lines env_append_error builds, checked by parsing them with jansson.
 */
#include "wire/envelope.h"

#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* Validates text (it must be JSON) and classifies it. */
static env_message parse(const char *text)
{
    js_span value;
    env_message message;
    if (js_validate(text, strlen(text), 512, &value, NULL) != 0)
        fail_msg("test input is not JSON: %s", text);
    memset(&message, 0xA5, sizeof message); /* env_parse must set everything */
    env_parse(value, &message);
    return message;
}

static void assert_span(js_span span, const char *expected)
{
    if (span.length != strlen(expected) || memcmp(span.start, expected, span.length) != 0)
        fail_msg("span '%.*s', expected '%s'", (int)span.length, span.start, expected);
}

static void test_request(void **state)
{
    (void)state;
    env_message m = parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sum\",\"params\":[1,2]}");
    assert_int_equal(m.kind, ENV_REQUEST);
    assert_true(m.has_id);
    assert_span(m.id, "1");
    assert_span(m.method, "\"sum\"");
    assert_true(m.has_params);
    assert_span(m.params, "[1,2]");
    js_span token;
    assert_false(env_find_progress_token(m.params, &token));

    /* Member order does not matter; whitespace is not part of the spans. */
    m = parse(" { \"params\" : { \"a\" : 1 } , \"method\" : \"x.y\" , \"id\" : \"abc\" ,"
              " \"jsonrpc\" : \"2.0\" } ");
    assert_int_equal(m.kind, ENV_REQUEST);
    assert_span(m.id, "\"abc\"");
    assert_span(m.method, "\"x.y\"");
    assert_span(m.params, "{ \"a\" : 1 }");

    /* Without params; ids of every allowed kind, echoed byte for byte. */
    static const char *const ids[] = {"0",    "-1",          "1.5e3", "18446744073709551617",
                                      "\"\"", "\"\\u00e9\"", "null"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":%s}", ids[i]);
        m = parse(text);
        assert_int_equal(m.kind, ENV_REQUEST);
        assert_true(m.has_id);
        assert_span(m.id, ids[i]);
        assert_false(m.has_params);
    }
}

static void test_notification(void **state)
{
    (void)state;
    env_message m = parse("{\"jsonrpc\":\"2.0\",\"method\":\"update\",\"params\":[1]}");
    assert_int_equal(m.kind, ENV_NOTIFICATION);
    assert_false(m.has_id);
    assert_span(m.method, "\"update\"");
    assert_true(m.has_params);
    m = parse("{\"method\":\"ping\",\"jsonrpc\":\"2.0\"}");
    assert_int_equal(m.kind, ENV_NOTIFICATION);
    assert_false(m.has_params);
}

static void test_id_null_is_request(void **state)
{
    (void)state;
    env_message m = parse("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":null}");
    assert_int_equal(m.kind, ENV_REQUEST);
    assert_true(m.has_id);
    assert_span(m.id, "null");
}

/*
 * A response (result or error, an id, no method) is classified apart, so that the dispatcher can
 * drop it unanswered (test_dispatch checks that nothing is written): with no problem to report and
 * no method to call.
 */
static void test_response_ignored(void **state)
{
    (void)state;
    static const struct {
        const char *text, *id;
    } responses[] = {
        {"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"x\":1}}", "1"},
        {"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":null}", "\"a\""},
        {"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse "
         "error\"}}",
         "null"},
        {"{\"error\":{\"code\":1,\"message\":\"m\"},\"id\":7,\"jsonrpc\":\"2.0\"}", "7"},
    };
    for (size_t i = 0; i < sizeof responses / sizeof responses[0]; i++) {
        env_message m = parse(responses[i].text);
        if (m.kind != ENV_RESPONSE)
            fail_msg("'%s' classified as %d, not a response", responses[i].text, m.kind);
        assert_true(m.has_id);
        assert_span(m.id, responses[i].id);
        assert_false(m.has_params);
    }
    /* With a method it is no response. */
    env_message m = parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"result\":1}");
    assert_int_equal(m.kind, ENV_REQUEST);
}

static void assert_invalid(const char *text, bool has_id)
{
    env_message m = parse(text);
    if (m.kind != ENV_INVALID)
        fail_msg("'%s' classified as %d, not invalid", text, m.kind);
    if (m.has_id != has_id)
        fail_msg("'%s': has_id %d, expected %d", text, m.has_id, has_id);
    assert_non_null(m.problem);
    assert_true(strlen(m.problem) > 0);
}

/* Without an id it is no response a client could have meant: an invalid request, with no id. */
static void test_response_without_id_is_invalid(void **state)
{
    (void)state;
    assert_invalid("{\"jsonrpc\":\"2.0\",\"result\":1}", false);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"error\":{\"code\":1,\"message\":\"m\"}}", false);
    assert_invalid("{\"result\":1}", false);
    /* Nor does an id that is no valid id, or one given twice. */
    assert_invalid("{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":[1]}", false);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":true}", false);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":1,\"id\":2}", false);
}

static void test_invalid_messages(void **state)
{
    (void)state;
    /* Not objects. */
    assert_invalid("[]", false);
    assert_invalid("[{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":1}]", false);
    assert_invalid("1", false);
    assert_invalid("\"request\"", false);
    assert_invalid("null", false);
    assert_invalid("true", false);
    assert_invalid("{}", false);
    /* jsonrpc missing or wrong. */
    assert_invalid("{\"method\":\"m\",\"id\":1}", true);
    assert_invalid("{\"jsonrpc\":\"2.00\",\"method\":\"m\",\"id\":1}", true);
    assert_invalid("{\"jsonrpc\":\"2\",\"method\":\"m\",\"id\":1}", true);
    assert_invalid("{\"jsonrpc\":\"1.0\",\"method\":\"m\",\"id\":1}", true);
    assert_invalid("{\"jsonrpc\":\"2.0 \",\"method\":\"m\",\"id\":1}", true);
    assert_invalid("{\"jsonrpc\":2.0,\"method\":\"m\",\"id\":1}", true);
    assert_invalid("{\"jsonrpc\":null,\"method\":\"m\",\"id\":1}", true);
    assert_invalid("{\"jsonrpc\":[\"2.0\"],\"method\":\"m\",\"id\":1}", true);
    /* method missing or not a string. */
    assert_invalid("{\"jsonrpc\":\"2.0\",\"id\":1}", true);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":1,\"id\":1}", true);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":null,\"id\":1}", true);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":[\"m\"],\"id\":1}", true);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":{},\"id\":\"x\"}", true);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":true}", false);
    /* params neither array nor object. */
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":\"a\",\"id\":1}", true);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":3,\"id\":1}", true);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":null,\"id\":1}", true);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":true,\"id\":1}", true);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":null}", false);
    /* ids of a kind that cannot be echoed. */
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":true}", false);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":false}", false);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":{}}", false);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":[]}", false);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":[1]}", false);
    /* Duplicates. */
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":1,\"id\":2}", false);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":1,\"id\":1}", false);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"method\":\"n\",\"id\":1}", true);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"method\":\"m\"}", false);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":1}", true);
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":[],\"params\":[],\"id\":1}",
                   true);
    /* An escaped duplicate is still a duplicate. */
    assert_invalid("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"id\":1,\"\\u0069d\":2}", false);
}

static void test_valid_id_kept_on_invalid_message(void **state)
{
    (void)state;
    env_message m = parse("{\"jsonrpc\":\"2.0\",\"id\":\"keep\",\"method\":42}");
    assert_int_equal(m.kind, ENV_INVALID);
    assert_true(m.has_id);
    assert_span(m.id, "\"keep\"");
    m = parse("{\"id\":7,\"jsonrpc\":\"1.0\"}");
    assert_int_equal(m.kind, ENV_INVALID);
    assert_true(m.has_id);
    assert_span(m.id, "7");
    m = parse("{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":\"no\",\"id\":null}");
    assert_int_equal(m.kind, ENV_INVALID);
    assert_true(m.has_id);
    assert_span(m.id, "null");
}

static void test_escaped_keys(void **state)
{
    (void)state;
    env_message m = parse("{\"js\\u006Fnrpc\":\"2\\u002e0\",\"m\\u0065thod\":\"s\\u0075m\","
                          "\"\\u0069\\u0064\":5,\"p\\u0061rams\":{}}");
    assert_int_equal(m.kind, ENV_REQUEST);
    assert_true(m.has_id);
    assert_span(m.id, "5");
    assert_span(m.method, "\"s\\u0075m\""); /* the span is the raw text */
    assert_true(m.has_params);
    /* A key that only looks alike after a NUL is another key. */
    m = parse("{\"jsonrpc\":\"2.0\",\"method\\u0000\":\"m\"}");
    assert_int_equal(m.kind, ENV_INVALID);
}

static void test_unknown_members_ignored(void **state)
{
    (void)state;
    env_message m = parse("{\"jsonrpc\":\"2.0\",\"x\":[1,{\"method\":2}],\"method\":\"m\","
                          "\"id\":3,\"extra\":{\"id\":true},\"Method\":1,\"ID\":{}}");
    assert_int_equal(m.kind, ENV_REQUEST);
    assert_span(m.id, "3");
    assert_span(m.method, "\"m\"");
}

/* The progress token of a parsed message, found as the daemon finds it when progress is sent. */
static bool find_token(const env_message *m, js_span *token)
{
    js_span none = {NULL, 0};
    return env_find_progress_token(m->has_params ? m->params : none, token);
}

static void test_progress_token(void **state)
{
    (void)state;
    js_span token;
    env_message m = parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":"
                          "{\"a\":1,\"_meta\":{\"other\":2,\"progressToken\":\"tok\"}}}");
    assert_int_equal(m.kind, ENV_REQUEST);
    assert_true(find_token(&m, &token));
    assert_span(token, "\"tok\"");

    m = parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":"
              "{\"_meta\":{\"progressToken\":-12.5}}}");
    assert_true(find_token(&m, &token));
    assert_span(token, "-12.5");

    m = parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":"
              "{\"_m\\u0065ta\":{\"progress\\u0054oken\":7}}}");
    assert_true(find_token(&m, &token));
    assert_span(token, "7");

    static const char *const ignored[] = {
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":"
        "{\"_meta\":{\"progressToken\":null}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":"
        "{\"_meta\":{\"progressToken\":true}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":"
        "{\"_meta\":{\"progressToken\":{\"a\":1}}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":"
        "{\"_meta\":{\"progressToken\":[1]}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":"
        "[{\"_meta\":{\"progressToken\":\"tok\"}}]}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":"
        "{\"_meta\":[{\"progressToken\":\"tok\"}]}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":"
        "{\"x\":{\"_meta\":{\"progressToken\":\"tok\"}}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":"
        "{\"progressToken\":\"tok\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"_meta\":{\"progressToken\":\"tok\"}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{}}",
        /* Given twice, a token is ambiguous, so there is none. */
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":"
        "{\"_meta\":{\"progressToken\":\"a\",\"progressToken\":\"b\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":"
        "{\"_meta\":{\"progressToken\":\"a\",\"progress\\u0054oken\":\"a\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":"
        "{\"_meta\":{\"progressToken\":\"a\"},\"_meta\":{\"progressToken\":\"b\"}}}",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":"
        "{\"_meta\":{\"progressToken\":\"a\"},\"_meta\":{}}}",
    };
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++) {
        m = parse(ignored[i]);
        assert_int_equal(m.kind, ENV_REQUEST);
        if (find_token(&m, &token))
            fail_msg("progress token found in '%s'", ignored[i]);
    }
}

static void test_meta_has_duplicate(void **state)
{
    (void)state;
    static const char *const duplicated[] = {
        "{\"progressToken\":1,\"progressToken\":1}",
        "{\"progressToken\":1,\"x\":{},\"progress\\u0054oken\":\"b\"}",
    };
    static const char *const single[] = {
        "{}",
        "[1,1]",
        "\"progressToken\"",
        "{\"progressToken\":1,\"x\":1,\"x\":1}",
        "{\"a\":{\"progressToken\":1,\"progressToken\":1}}",
    };
    for (size_t i = 0; i < sizeof duplicated / sizeof duplicated[0]; i++)
        assert_true(env_meta_has_duplicate((js_span){duplicated[i], strlen(duplicated[i])}));
    for (size_t i = 0; i < sizeof single / sizeof single[0]; i++)
        assert_false(env_meta_has_duplicate((js_span){single[i], strlen(single[i])}));
}

/* Builds an error line and parses it back. New jansson object. */
static json_t *error_line(const js_span *id, int64_t code, const char *message, const char *data)
{
    buffer out = BUFFER_INIT;
    assert_int_equal(buf_append_string(&out, "garbage before"), 0);
    size_t start = out.length;
    assert_int_equal(env_append_error(&out, id, code, message, data, data ? strlen(data) : 0), 0);
    assert_null(memchr(out.data + start, '\n', out.length - start)); /* one line */
    json_error_t error;
    json_t *root = json_loadb(out.data + start, out.length - start, 0, &error);
    if (!root)
        fail_msg("'%.*s' is not JSON: %s", (int)(out.length - start), out.data + start, error.text);
    buf_free(&out);
    assert_string_equal(json_string_value(json_object_get(root, "jsonrpc")), "2.0");
    assert_null(json_object_get(root, "result"));
    json_t *err = json_object_get(root, "error");
    assert_true(json_is_object(err));
    assert_true(json_is_integer(json_object_get(err, "code")));
    assert_int_equal(json_integer_value(json_object_get(err, "code")), code);
    assert_string_equal(json_string_value(json_object_get(err, "message")), message);
    return root;
}

static void test_append_error(void **state)
{
    (void)state;
    json_t *root = error_line(NULL, -32700, "Parse error", NULL);
    assert_true(json_is_null(json_object_get(root, "id")));
    assert_int_equal(json_object_size(root), 3);
    assert_int_equal(json_object_size(json_object_get(root, "error")), 2);
    json_decref(root);

    js_span id = {"\"abc\"", 5};
    root = error_line(&id, -32601, "Method not found", "{\"method\":\"x\",\"n\":[1,2]}");
    assert_string_equal(json_string_value(json_object_get(root, "id")), "abc");
    json_t *data = json_object_get(json_object_get(root, "error"), "data");
    assert_true(json_is_object(data));
    assert_string_equal(json_string_value(json_object_get(data, "method")), "x");
    assert_int_equal(json_array_size(json_object_get(data, "n")), 2);
    json_decref(root);

    js_span number = {"42", 2};
    root = error_line(&number, 12345, "quote \" backslash \\ newline \n tab \t caf\xC3\xA9",
                      "\"just a string\"");
    assert_int_equal(json_integer_value(json_object_get(root, "id")), 42);
    assert_string_equal(json_string_value(json_object_get(json_object_get(root, "error"), "data")),
                        "just a string");
    json_decref(root);

    js_span null_id = {"null", 4};
    root = error_line(&null_id, INT64_MIN, "", "null");
    assert_true(json_is_null(json_object_get(root, "id")));
    assert_true(json_is_null(json_object_get(json_object_get(root, "error"), "data")));
    json_decref(root);

    root = error_line(&number, INT64_MAX, "max", NULL);
    json_decref(root);

    /* An id straight from a parsed message is echoed as the client wrote it. */
    env_message m = parse("{\"jsonrpc\":\"2.0\",\"id\":\"\\u00e9\",\"method\":1}");
    assert_true(m.has_id);
    root = error_line(&m.id, -32600, "Invalid Request", NULL);
    assert_string_equal(json_string_value(json_object_get(root, "id")), "\xC3\xA9");
    json_decref(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request),
        cmocka_unit_test(test_notification),
        cmocka_unit_test(test_id_null_is_request),
        cmocka_unit_test(test_response_ignored),
        cmocka_unit_test(test_response_without_id_is_invalid),
        cmocka_unit_test(test_invalid_messages),
        cmocka_unit_test(test_valid_id_kept_on_invalid_message),
        cmocka_unit_test(test_escaped_keys),
        cmocka_unit_test(test_unknown_members_ignored),
        cmocka_unit_test(test_progress_token),
        cmocka_unit_test(test_meta_has_duplicate),
        cmocka_unit_test(test_append_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
