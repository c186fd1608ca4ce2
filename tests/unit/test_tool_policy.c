/* SPDX-License-Identifier: MIT */
/*
 * The tool policy: pol_decide's precedence (deny wins, an allow list given means only what it
 * matches, [mcp] and the plugin's section alike) and the rule it names; rates per method and per
 * plugin (both tokens or neither) on an injected clock; result caps and which key sets them;
 * and, over many seeded random policies and names, that what tools/list shows is exactly what
 * tools/call and a call by name serve.
 */
#include "config/config.h"
#include "mcp/mcp.h"
#include "methods/registry.h"
#include "methods/tool_policy.h"

#include <fnmatch.h>
#include <jansson.h>
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

static rpcd_config *load(const char *text)
{
    rpcd_config *config = NULL;
    char error[512];
    if (cfg_load_string(text, "/etc/rpcd/rpcd.conf", &config, error, sizeof error) != 0)
        fail_msg("%s", error);
    return config;
}

/* Two plugins' owners, as the loader's pointers would be. */
static const int owner_a, owner_b;
static const void *const owners[] = {&owner_a, &owner_b};

/* A registry of names (NULL-ended), each "a:" or "b:" for its plugin. */
static registry *methods_of(const char *const *names)
{
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    for (size_t i = 0; names[i]; i++) {
        rpcd_method method = rpcd_method_new(names[i] + 2, handler);
        bool a = names[i][0] == 'a';
        assert_int_equal(reg_add(methods, &method, a ? &owner_a : &owner_b, a ? "a" : "b", NULL),
                         0);
    }
    return methods;
}

static const reg_method *find(const registry *methods, const char *name)
{
    const reg_method *method = reg_find(methods, name, strlen(name));
    assert_non_null(method);
    return method;
}

static void expect_decision(const cfg_policy *server, const cfg_policy *plugin, const char *method,
                            bool served, const char *rule)
{
    char text[POL_RULE_SIZE];
    bool got = pol_decide(server, plugin, "files", method, text, sizeof text);
    if (got != served || strcmp(text, rule) != 0)
        fail_msg("%s: got %d '%s', expected %d '%s'", method, got, text, served, rule);
}

static void test_decide_precedence(void **state)
{
    (void)state;
    cfg_policy none = {0};
    expect_decision(&none, NULL, "fs.read", true, "served");
    expect_decision(NULL, NULL, "fs.read", true, "served");
    cfg_policy server = {.allow = "fs.*, echo", .deny = "fs.write*"};
    cfg_policy plugin = {.allow = "fs.read", .deny = "echo"};
    /* deny wins over an allow that matches too, at either level */
    expect_decision(&server, NULL, "fs.write_all", false,
                    "tools_deny pattern 'fs.write*' of [mcp]");
    expect_decision(&server, &plugin, "echo", false, "tools_deny pattern 'echo' of [plugin files]");
    /* an allow list given: only what it matches */
    expect_decision(&server, NULL, "sum", false, "tools_allow of [mcp] (no pattern matches)");
    expect_decision(&server, &plugin, "fs.stat", false,
                    "tools_allow of [plugin files] (no pattern matches)");
    expect_decision(&server, &plugin, "fs.read", true, "served");
    expect_decision(&server, NULL, "fs.stat", true, "served");
    /* * and ? match dots and slashes; a pattern is the whole name */
    cfg_policy globs = {.deny = "a?c, x/*"};
    expect_decision(&globs, NULL, "a.c", false, "tools_deny pattern 'a?c' of [mcp]");
    expect_decision(&globs, NULL, "x/y.z", false, "tools_deny pattern 'x/*' of [mcp]");
    expect_decision(&globs, NULL, "a.cd", true, "served");
    expect_decision(&globs, NULL, "xa.c", true, "served");
    /* the deny of the plugin is read before the allow of [mcp] */
    cfg_policy only = {.allow = "zzz"};
    cfg_policy denies = {.deny = "q"};
    expect_decision(&only, &denies, "q", false, "tools_deny pattern 'q' of [plugin files]");
}

static void test_admit_denied_and_caps(void **state)
{
    (void)state;
    rpcd_config *config = load("[mcp]\ntools_deny = *.secret\nmax_result_bytes = 1000\n"
                               "[plugin a]\npath = a.so\nmax_result_bytes = 500\n"
                               "max_result_bytes.small = 10\nmax_result_bytes.gone = 10\n"
                               "[plugin b]\npath = b.so\ntools_allow = open*\n");
    const char *const names[] = {"a:small", "a:big", "a:x.secret", "b:open", "b:other", NULL};
    registry *methods = methods_of(names);
    tool_policy *policy;
    char error[256];
    assert_int_equal(pol_new(methods, config, owners, 0, &policy, error, sizeof error), 0);
    pol_refusal refusal;
    const char *rule;
    assert_int_equal(pol_admit(policy, find(methods, "x.secret"), 0, &refusal), POL_DENIED);
    assert_string_equal(refusal.rule, "tools_deny pattern '*.secret' of [mcp]");
    assert_false(pol_served(policy, find(methods, "x.secret"), &rule));
    assert_string_equal(rule, "tools_deny pattern '*.secret' of [mcp]");
    assert_int_equal(pol_admit(policy, find(methods, "other"), 0, &refusal), POL_DENIED);
    assert_string_equal(refusal.rule, "tools_allow of [plugin b] (no pattern matches)");
    assert_int_equal(pol_admit(policy, find(methods, "open"), 0, &refusal), POL_ADMITTED);
    assert_true(pol_served(policy, find(methods, "open"), NULL));
    /* caps: the method's key, its plugin's, [mcp]'s */
    assert_int_equal(pol_result_cap(policy, find(methods, "small"), &rule), 10);
    assert_string_equal(rule, "max_result_bytes.small of [plugin a]");
    assert_int_equal(pol_result_cap(policy, find(methods, "big"), &rule), 500);
    assert_string_equal(rule, "max_result_bytes of [plugin a]");
    assert_int_equal(pol_result_cap(policy, find(methods, "open"), &rule), 1000);
    assert_string_equal(rule, "max_result_bytes of [mcp]");
    pol_free(policy);
    /* No policy: everything served, admitted, uncapped. */
    assert_true(pol_served(NULL, find(methods, "x.secret"), &rule));
    assert_int_equal(pol_admit(NULL, find(methods, "x.secret"), 0, &refusal), POL_ADMITTED);
    assert_int_equal(pol_result_cap(NULL, find(methods, "small"), &rule), 0);
    assert_null(rule);
    reg_free(methods);
    cfg_free(config);
}

static void test_rates_per_method_and_plugin(void **state)
{
    (void)state;
    rpcd_config *config = load("[mcp]\nrate_limit = 100/s burst 1\n"
                               "[plugin a]\npath = a.so\nrate_limit = 3/s\n"
                               "rate_limit.one = 1/min burst 2\n"
                               "[plugin b]\npath = b.so\n");
    const char *const names[] = {"a:one", "a:two", "b:free", NULL};
    registry *methods = methods_of(names);
    tool_policy *policy;
    char error[256];
    assert_int_equal(pol_new(methods, config, owners, 1000, &policy, error, sizeof error), 0);
    pol_refusal refusal;
    const reg_method *one = find(methods, "one"), *two = find(methods, "two");
    const reg_method *free_method = find(methods, "free");
    assert_int_equal(pol_admit(policy, one, 1000, &refusal), POL_ADMITTED);
    assert_int_equal(pol_admit(policy, one, 1000, &refusal), POL_ADMITTED);
    assert_int_equal(pol_admit(policy, one, 1000, &refusal), POL_RATE_LIMITED);
    assert_string_equal(refusal.rule, "rate_limit.one = 1/min burst 2 of [plugin a]");
    assert_int_equal(refusal.retry_ms, 60000);
    /* two has [mcp]'s rate (its own bucket) and shares the plugin's 3 with one */
    assert_int_equal(pol_admit(policy, two, 1000, &refusal), POL_ADMITTED);
    assert_int_equal(pol_admit(policy, two, 1000, &refusal), POL_RATE_LIMITED);
    assert_string_equal(refusal.rule, "rate_limit = 100/s burst 1 of [mcp] (each tool)");
    assert_int_equal(refusal.retry_ms, 10);
    /* 10 ms on: two's own bucket has a token, the plugin's three are spent */
    assert_int_equal(pol_admit(policy, two, 1010, &refusal), POL_RATE_LIMITED);
    assert_string_equal(refusal.rule, "rate_limit = 3/s burst 3 of [plugin a]");
    assert_int_equal(refusal.retry_ms, 324);
    /* the token two's own bucket gave was given back: both or neither */
    assert_int_equal(pol_admit(policy, two, 1334, &refusal), POL_ADMITTED);
    /* another plugin's method has [mcp]'s rate alone */
    assert_int_equal(pol_admit(policy, free_method, 1000, &refusal), POL_ADMITTED);
    assert_int_equal(pol_admit(policy, free_method, 1000, &refusal), POL_RATE_LIMITED);
    pol_free(policy);
    reg_free(methods);
    cfg_free(config);
}

/* A call the plugin's bucket refuses leaves the method's own bucket as it was. */
static void test_both_tokens_or_neither(void **state)
{
    (void)state;
    rpcd_config *config = load("[plugin a]\npath = a.so\nrate_limit = 1/h burst 1\n"
                               "rate_limit.one = 1/h burst 2\n[plugin b]\npath = b.so\n");
    const char *const names[] = {"a:one", NULL};
    registry *methods = methods_of(names);
    tool_policy *policy;
    char error[256];
    assert_int_equal(pol_new(methods, config, owners, 0, &policy, error, sizeof error), 0);
    const reg_method *one = find(methods, "one");
    pol_refusal refusal;
    assert_int_equal(pol_admit(policy, one, 0, &refusal), POL_ADMITTED);
    for (int i = 0; i < 3; i++) {
        /* Its own bucket still has its second token: the plugin's is the one that refuses. */
        assert_int_equal(pol_admit(policy, one, 0, &refusal), POL_RATE_LIMITED);
        assert_string_equal(refusal.rule, "rate_limit = 1/h burst 1 of [plugin a]");
        assert_int_equal(refusal.retry_ms, 3600000);
    }
    pol_free(policy);
    reg_free(methods);
    cfg_free(config);
}

/* ---- list and call agree, over random policies ------------------------------------------ */

static uint64_t seed;

static unsigned next_random(unsigned bound)
{
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return (unsigned)(seed % bound);
}

static void random_word(const char *alphabet, size_t most, char *out)
{
    size_t length = 1 + next_random((unsigned)most);
    for (size_t i = 0; i < length; i++)
        out[i] = alphabet[next_random((unsigned)strlen(alphabet))];
    out[length] = '\0';
}

/* " KEY = p1, p2" into text, or nothing (half the time). */
static void random_list(char *text, size_t size, const char *key)
{
    if (next_random(2))
        return;
    size_t used = strlen(text);
    used += (size_t)snprintf(text + used, size - used, "%s = ", key);
    unsigned count = 1 + next_random(3);
    for (unsigned i = 0; i < count; i++) {
        char pattern[8];
        random_word("ab.*?", 4, pattern);
        used += (size_t)snprintf(text + used, size - used, "%s%s", i ? ", " : "", pattern);
    }
    snprintf(text + used, size - used, "\n");
}

/* What tools/list shows, as a set of names (jansson). */
static json_t *listed_names(const mcp_tools *tools)
{
    buffer out = BUFFER_INIT;
    assert_int_equal(mcp_answer(tools, "tools/list", 10, (js_span){NULL, 0}, &out), 0);
    json_t *result = json_loadb(out.data, out.length, 0, NULL);
    assert_non_null(result);
    assert_null(json_object_get(result, "nextCursor"));
    json_t *names = json_object();
    size_t index;
    json_t *tool;
    json_array_foreach(json_object_get(result, "tools"), index, tool)
        json_object_set(names, json_string_value(json_object_get(tool, "name")), json_true());
    json_decref(result);
    buf_free(&out);
    return names;
}

static bool tools_call_routes(const registry *methods, const mcp_tools *tools, const char *name)
{
    char params[64];
    snprintf(params, sizeof params, "{\"name\":\"%s\"}", name);
    buffer out = BUFFER_INIT;
    mcp_route route;
    assert_int_equal(mcp_route_message(methods, tools, "tools/call", 10,
                                       (js_span){params, strlen(params)}, &out, &route),
                     0);
    buf_free(&out);
    if (route.kind != MCP_CALL) {
        assert_int_equal(route.kind, MCP_REFUSED);
        char expected[64];
        snprintf(expected, sizeof expected, "unknown tool %s", name);
        assert_string_equal(route.message, expected);
    }
    return route.kind == MCP_CALL;
}

/* The oracle: the rules as rpcd.conf(5) says them, written again the plain way. */
static bool any_matches(const char *list, const char *name)
{
    char copy[256];
    snprintf(copy, sizeof copy, "%s", list);
    for (char *item = strtok(copy, ", "); item; item = strtok(NULL, ", "))
        if (fnmatch(item, name, 0) == 0)
            return true;
    return false;
}

static bool oracle(const cfg_policy *server, const cfg_policy *plugin, const char *name)
{
    if ((server->deny && any_matches(server->deny, name)) ||
        (plugin->deny && any_matches(plugin->deny, name)))
        return false;
    return (!server->allow || any_matches(server->allow, name)) &&
           (!plugin->allow || any_matches(plugin->allow, name));
}

static void one_random_policy(void)
{
    char text[1024] = "[mcp]\ntool_names = specification\n";
    random_list(text, sizeof text, "tools_allow");
    random_list(text, sizeof text, "tools_deny");
    strcat(text, "[plugin a]\npath = a.so\n");
    random_list(text, sizeof text, "tools_allow");
    random_list(text, sizeof text, "tools_deny");
    strcat(text, "[plugin b]\npath = b.so\n");
    random_list(text, sizeof text, "tools_allow");
    random_list(text, sizeof text, "tools_deny");
    rpcd_config *config = load(text);
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    unsigned count = 1 + next_random(12);
    for (unsigned i = 0; i < count; i++) {
        char name[8];
        random_word("ab._", 5, name);
        rpcd_method method = rpcd_method_new(name, handler);
        bool a = next_random(2);
        reg_add(methods, &method, a ? &owner_a : &owner_b, a ? "a" : "b", NULL); /* taken: skip */
    }
    char error[512];
    mcp_tools *tools;
    tool_policy *policy;
    if (mcp_tools_new(methods, config, &tools, error, sizeof error) != 0)
        fail_msg("%s", error);
    assert_int_equal(pol_new(methods, config, owners, 0, &policy, error, sizeof error), 0);
    mcp_tools_take_policy(tools, policy);
    json_t *listed = listed_names(tools);
    for (size_t i = 0; i < reg_count(methods); i++) {
        const reg_method *method = reg_at(methods, i);
        const cfg_policy *own = &config->plugins[method->owner == &owner_a ? 0 : 1].policy;
        bool expected = oracle(&config->mcp_policy, own, method->name);
        bool in_list = json_object_get(listed, method->name) != NULL;
        bool by_tool = tools_call_routes(methods, tools, method->name);
        pol_refusal refusal;
        bool by_name = pol_admit(policy, method, 0, &refusal) == POL_ADMITTED;
        if (in_list != expected || by_tool != expected || by_name != expected)
            fail_msg("%s under\n%s: listed %d, tools/call %d, by name %d, expected %d",
                     method->name, text, in_list, by_tool, by_name, expected);
    }
    json_decref(listed);
    mcp_tools_free(tools);
    reg_free(methods);
    cfg_free(config);
}

static void test_listed_is_callable_random(void **state)
{
    (void)state;
    seed = 0x9e3779b97f4a7c15u;
    for (int i = 0; i < 300; i++)
        one_random_policy();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decide_precedence),
        cmocka_unit_test(test_admit_denied_and_caps),
        cmocka_unit_test(test_rates_per_method_and_plugin),
        cmocka_unit_test(test_both_tokens_or_neither),
        cmocka_unit_test(test_listed_is_callable_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
