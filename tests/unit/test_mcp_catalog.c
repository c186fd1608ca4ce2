/* SPDX-License-Identifier: MIT */
/*
 * The catalog of resources, templates, prompts and completions (ABI 1.5): descriptors refused
 * at registration, two methods of one key refused naming both, template matching (literal
 * pieces, {name} within a path segment, {+name} across), pagination, the events module's level
 * filter and UTF-8 check.
 */
#include "methods/mcp_catalog.h"
#include "wire/mcp_events.h"
#include "methods/registry.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int handler(rpcd_call *call, const char *params, size_t length, void *data)
{
    (void)call, (void)params, (void)length, (void)data;
    return RPCD_OK;
}

static void add(registry *methods, const char *name, uint32_t role, const char *descriptor)
{
    rpcd_method method = rpcd_method_new(name, handler);
    method.mcp_role = role;
    method.mcp_descriptor = descriptor;
    assert_int_equal(reg_add(methods, &method, NULL, "p", NULL), 0);
}

static void test_refusals(void **state)
{
    (void)state;
    assert_null(mcp_catalog_refusal(RPCD_MCP_TOOL, NULL));
    assert_null(mcp_catalog_refusal(RPCD_MCP_HIDDEN, NULL));
    assert_null(mcp_catalog_refusal(RPCD_MCP_RESOURCE, "{\"uri\":\"a://b\",\"name\":\"b\"}"));
    assert_null(mcp_catalog_refusal(RPCD_MCP_RESOURCE,
                                    "{\"uriTemplate\":\"a://{x}/y/{+z}\",\"name\":\"b\"}"));
    assert_string_equal(mcp_catalog_refusal(5, NULL), "its mcp_role is none this daemon knows");
    assert_string_equal(mcp_catalog_refusal(RPCD_MCP_PROMPT, NULL),
                        "its mcp_role needs an mcp_descriptor");
    assert_string_equal(mcp_catalog_refusal(RPCD_MCP_PROMPT, "{\"name\":1}"),
                        "a prompt descriptor needs a string \"name\"");
    /* A descriptor with a member twice means two things: refused. */
    assert_string_equal(mcp_catalog_refusal(RPCD_MCP_PROMPT, "{\"name\":\"a\",\"name\":\"b\"}"),
                        "its mcp_descriptor is not a JSON object");
    assert_string_equal(
        mcp_catalog_refusal(RPCD_MCP_RESOURCE, "{\"uriTemplate\":\"a://}\",\"name\":\"b\"}"),
        "its uriTemplate has a '}' that closes nothing");
    char many[256] = "{\"name\":\"b\",\"uriTemplate\":\"a://";
    for (int i = 0; i < 17; i++)
        strcat(many, "{v}/");
    strcat(many, "\"}");
    assert_string_equal(mcp_catalog_refusal(RPCD_MCP_RESOURCE, many),
                        "its uriTemplate has more than 16 expressions");
}

/*
 * A prompt's descriptor, checked when its plugin loads (rpcd-plugin(3), MCP CATALOG): what MCP
 * clients read in prompts/list must have the types they expect, each refusal saying which part.
 */
static void test_prompt_descriptors(void **state)
{
    (void)state;
    static const char *const accepted[] = {
        "{\"name\":\"p\"}",
        "{\"name\":\"p\",\"title\":\"P\",\"description\":\"d\",\"arguments\":[]}",
        "{\"name\":\"p\",\"arguments\":[{\"name\":\"a\"},{\"name\":\"b\",\"required\":false,"
        "\"description\":\"x\"},{\"name\":\"c\",\"required\":true}]}",
    };
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++)
        if (mcp_catalog_refusal(RPCD_MCP_PROMPT, accepted[i]))
            fail_msg("%s refused: %s", accepted[i],
                     mcp_catalog_refusal(RPCD_MCP_PROMPT, accepted[i]));
    static const char argument[] = "an argument is not an object with a string \"name\" (and a "
                                   "boolean \"required\", a string \"description\")";
    static const struct {
        const char *descriptor, *problem;
    } refused[] = {
        {"{\"name\":\"\"}", "a prompt descriptor needs a string \"name\""},
        {"{\"title\":\"t\"}", "a prompt descriptor needs a string \"name\""},
        {"{\"name\":\"p\",\"title\":1}", "its title or description is not a string"},
        {"{\"name\":\"p\",\"description\":[]}", "its title or description is not a string"},
        {"{\"name\":\"p\",\"arguments\":{}}", "its \"arguments\" is not an array"},
        {"{\"name\":\"p\",\"arguments\":[\"a\"]}", argument},
        {"{\"name\":\"p\",\"arguments\":[{}]}", argument},
        {"{\"name\":\"p\",\"arguments\":[{\"name\":\"\"}]}", argument},
        {"{\"name\":\"p\",\"arguments\":[{\"name\":\"a\"},{\"name\":\"b\",\"required\":1}]}",
         argument},
        {"{\"name\":\"p\",\"arguments\":[{\"name\":\"a\",\"description\":2}]}", argument},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        const char *problem = mcp_catalog_refusal(RPCD_MCP_PROMPT, refused[i].descriptor);
        if (!problem || strcmp(problem, refused[i].problem) != 0)
            fail_msg("%s: %s, not %s", refused[i].descriptor, problem ? problem : "accepted",
                     refused[i].problem);
    }
}

/* Two prompts of one name, from two methods: refused, naming both. */
static void test_duplicate_keys(void **state)
{
    (void)state;
    static const struct {
        uint32_t role;
        const char *descriptor, *noun;
    } cases[] = {
        {RPCD_MCP_PROMPT, "{\"name\":\"p\"}", "the prompt name 'p'"},
        {RPCD_MCP_RESOURCE, "{\"uri\":\"a://b\",\"name\":\"b\"}", "the resource URI 'a://b'"},
        {RPCD_MCP_RESOURCE, "{\"uriTemplate\":\"a://{b}\",\"name\":\"b\"}",
         "the resource template 'a://{b}'"},
        {RPCD_MCP_COMPLETION, "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"p\"}}",
         "the completion of 'p'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        registry *methods;
        assert_int_equal(reg_new(&methods), 0);
        add(methods, "first", cases[i].role, cases[i].descriptor);
        add(methods, "second", cases[i].role, cases[i].descriptor);
        mcp_catalog *catalog = NULL;
        char error[256];
        assert_int_equal(mcp_catalog_new(methods, &catalog, error, sizeof error), -1);
        assert_non_null(strstr(error, "methods 'first' (plugin 'p') and 'second' (plugin 'p')"));
        assert_non_null(strstr(error, cases[i].noun));
        reg_free(methods);
    }
}

/* The method a URI reads, and the variables it gives (NULL: none serves it). */
static void assert_read(const mcp_catalog *catalog, const char *uri, const char *method,
                        const char *variables)
{
    buffer found = BUFFER_INIT;
    bool templated;
    const reg_method *serving = mcp_catalog_resource(catalog, uri, strlen(uri), &found, &templated);
    if (!method) {
        assert_null(serving);
    } else {
        assert_non_null(serving);
        assert_string_equal(serving->name, method);
        assert_int_equal(found.length, strlen(variables));
        assert_memory_equal(found.data, variables, found.length);
        assert_int_equal(templated, variables[0] != '\0');
    }
    buf_free(&found);
}

static void test_template_matching(void **state)
{
    (void)state;
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    add(methods, "exact", RPCD_MCP_RESOURCE, "{\"uri\":\"f://a/b.txt\",\"name\":\"x\"}");
    add(methods, "segment", RPCD_MCP_RESOURCE,
        "{\"uriTemplate\":\"f://{dir}/{name}.txt\",\"name\":\"x\"}");
    add(methods, "rest", RPCD_MCP_RESOURCE, "{\"uriTemplate\":\"f://{+path}\",\"name\":\"x\"}");
    mcp_catalog *catalog;
    char error[256];
    assert_int_equal(mcp_catalog_new(methods, &catalog, error, sizeof error), 0);
    assert_int_equal(mcp_catalog_count(catalog, RPCD_MCP_RESOURCE), 3);
    /* An exact resource before any template, templates in load order. */
    assert_read(catalog, "f://a/b.txt", "exact", "");
    assert_read(catalog, "f://a/c.txt", "segment", "\"dir\":\"a\",\"name\":\"c\"");
    assert_read(catalog, "f://a/c.d.txt", "segment", "\"dir\":\"a\",\"name\":\"c.d\"");
    /* {name} stops at '/': the second template takes it. */
    assert_read(catalog, "f://a/b/c.txt", "rest", "\"path\":\"a/b/c.txt\"");
    assert_read(catalog, "f://a\"q", "rest", "\"path\":\"a\\\"q\"");
    assert_read(catalog, "g://a", NULL, NULL);
    assert_read(catalog, "f://", NULL, NULL);
    /* A long URI of many near-matches ends quickly (no pair is tried twice), unmatched. */
    char hard[1001];
    memset(hard, 'a', sizeof hard - 1);
    hard[sizeof hard - 1] = '\0';
    assert_read(catalog, hard, NULL, NULL);
    mcp_catalog_free(catalog);
    reg_free(methods);
}

static void test_pages(void **state)
{
    (void)state;
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    char name[32], descriptor[64];
    for (int i = 0; i < 150; i++) {
        snprintf(name, sizeof name, "p%d", i);
        snprintf(descriptor, sizeof descriptor, "{\"name\":\"p%d\"}", i);
        add(methods, name, RPCD_MCP_PROMPT, descriptor);
    }
    mcp_catalog *catalog;
    char error[256];
    assert_int_equal(mcp_catalog_new(methods, &catalog, error, sizeof error), 0);
    buffer out = BUFFER_INIT;
    assert_int_equal(mcp_catalog_answer_list(catalog, MCP_LIST_PROMPTS, (js_span){NULL, 0}, &out),
                     0);
    assert_int_equal(buf_append_char(&out, '\0'), 0);
    assert_non_null(strstr(out.data, "\"nextCursor\":\"100\""));
    buf_clear(&out);
    static const char second[] = "{\"cursor\":\"100\"}";
    assert_int_equal(mcp_catalog_answer_list(catalog, MCP_LIST_PROMPTS,
                                             (js_span){second, sizeof second - 1}, &out),
                     0);
    assert_int_equal(buf_append_char(&out, '\0'), 0);
    assert_null(strstr(out.data, "nextCursor"));
    assert_non_null(strstr(out.data, "{\"name\":\"p149\"}]"));
    static const char *const bad[] = {"{\"cursor\":\"151\"}", "{\"cursor\":1}",
                                      "{\"cursor\":\"-1\"}", "{\"cursor\":\"1\",\"cursor\":\"2\"}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        buf_clear(&out);
        assert_int_equal(mcp_catalog_answer_list(catalog, MCP_LIST_PROMPTS,
                                                 (js_span){bad[i], strlen(bad[i])}, &out),
                         -2);
    }
    buf_free(&out);
    mcp_catalog_free(catalog);
    reg_free(methods);
}

static int lines_heard, updates_heard;
static void heard_update(void *context, const char *uri, size_t length)
{
    (void)context, (void)uri, (void)length;
    updates_heard++;
}
static void heard_line(void *context, const char *logger, int level, const char *text,
                       size_t length)
{
    (void)context, (void)logger, (void)level, (void)text, (void)length;
    lines_heard++;
}

static void test_events(void **state)
{
    (void)state;
    const mcp_event_sink sink = {NULL, heard_update, heard_line};
    mcp_events_attach(&sink);
    assert_int_equal(mcp_events_client_log_level(), -1);
    mcp_events_log("p", RPCD_LOG_ERROR, "not asked", 9);
    assert_int_equal(lines_heard, 0);
    mcp_events_set_client_log_level(RPCD_LOG_WARNING);
    mcp_events_log("p", RPCD_LOG_ERROR, "error", 5);
    mcp_events_log("p", RPCD_LOG_WARNING, "warning", 7);
    mcp_events_log("p", RPCD_LOG_INFO, "info", 4);
    assert_int_equal(lines_heard, 2);
    assert_int_equal(mcp_events_resource_updated("a://b"), 0);
    assert_int_equal(mcp_events_resource_updated("a://\xff"), -1);
    assert_int_equal(mcp_events_resource_updated(NULL), -1);
    assert_int_equal(updates_heard, 1);
    mcp_events_attach(NULL);
    assert_int_equal(mcp_events_resource_updated("a://b"), 0);
    assert_int_equal(updates_heard, 1);
    mcp_events_set_client_log_level(-1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refusals),       cmocka_unit_test(test_prompt_descriptors),
        cmocka_unit_test(test_duplicate_keys), cmocka_unit_test(test_template_matching),
        cmocka_unit_test(test_pages),          cmocka_unit_test(test_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
