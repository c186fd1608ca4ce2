/* SPDX-License-Identifier: MIT */
/*
 * The tool policy keys as the config reads them: rates in every form and their bounds, pattern
 * lists and their bounds, the per-method keys of plugin sections, and every mistake refused with
 * its file and line.
 */
#include "config/config.h"
#include "config/config_policy.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_rates(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        uint32_t count, period_ms, burst;
    } good[] = {
        {"10/s", 10, 1000, 10},
        {"10/s burst 20", 10, 1000, 20},
        {" 3 / min  burst   1 ", 3, 60000, 1},
        {"1000000/h", 1000000, 3600000, 1000000},
        {"1/h burst 1000000", 1, 3600000, 1000000},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        tb_rate rate;
        if (cfg_parse_rate(good[i].text, &rate) != 0)
            fail_msg("refused '%s'", good[i].text);
        assert_int_equal(rate.count, good[i].count);
        assert_int_equal(rate.period_ms, good[i].period_ms);
        assert_int_equal(rate.burst, good[i].burst);
    }
    static const char *const bad[] = {
        "",
        "10",
        "10/",
        "10/sec",
        "0/s",
        "1000001/s",
        "-1/s",
        "10/s burst",
        "10/s burst 0",
        "10/s burst 1000001",
        "10/s 20",
        "10/s burst 2 x",
        "/s",
        "1e3/s",
        "10/S",
        "99999999999999999999/s",
        "10/sburst 2",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tb_rate rate;
        if (cfg_parse_rate(bad[i], &rate) == 0)
            fail_msg("accepted '%s'", bad[i]);
    }
}

static rpcd_config *load(const char *text)
{
    rpcd_config *config = NULL;
    char error[512];
    if (cfg_load_string(text, "/etc/rpcd/rpcd.conf", &config, error, sizeof error) != 0)
        fail_msg("%s", error);
    return config;
}

static void test_keys_read(void **state)
{
    (void)state;
    rpcd_config *config = load("[mcp]\ntools_allow = a*, b.c\ntools_deny = x\n"
                               "rate_limit = 5/s\nmax_result_bytes = 100\n"
                               "[plugin p]\npath = p.so\ntools_deny = y*\nrate_limit = 1/min\n"
                               "rate_limit.m = 2/s burst 4\nmax_result_bytes.m = 7\n"
                               "max_result_bytes.n = 1073741824\nother = kept\n");
    assert_string_equal(config->mcp_policy.allow, "a*, b.c");
    assert_string_equal(config->mcp_policy.deny, "x");
    assert_int_equal(config->mcp_policy.rate.count, 5);
    assert_int_equal(config->mcp_policy.max_result_bytes, 100);
    const cfg_plugin *plugin = &config->plugins[0];
    assert_string_equal(plugin->policy.deny, "y*");
    assert_null(plugin->policy.allow);
    assert_int_equal(plugin->policy.rate.period_ms, 60000);
    const cfg_tool_rule *m = cfg_policy_tool(&plugin->policy, "m");
    assert_non_null(m);
    assert_int_equal(m->rate.burst, 4);
    assert_int_equal(m->max_result_bytes, 7);
    const cfg_tool_rule *n = cfg_policy_tool(&plugin->policy, "n");
    assert_int_equal(n->rate.count, 0);
    assert_int_equal(n->max_result_bytes, 1073741824);
    assert_null(cfg_policy_tool(&plugin->policy, "o"));
    /* The plugin sees its own keys only. */
    assert_int_equal(plugin->pair_count, 1);
    assert_string_equal(plugin->pairs[0].key, "other");
    /* Patterns as the policy reads them: blanks around each left out. */
    const char *cursor = config->mcp_policy.allow, *pattern;
    size_t length;
    assert_true(cfg_next_pattern(&cursor, &pattern, &length));
    assert_int_equal(length, 2);
    assert_memory_equal(pattern, "a*", 2);
    assert_true(cfg_next_pattern(&cursor, &pattern, &length));
    assert_memory_equal(pattern, "b.c", 3);
    assert_false(cfg_next_pattern(&cursor, &pattern, &length));
    cfg_free(config);
}

static void expect_refused(const char *text, const char *message)
{
    rpcd_config *config = NULL;
    char error[512];
    if (cfg_load_string(text, "/etc/rpcd/rpcd.conf", &config, error, sizeof error) == 0)
        fail_msg("accepted:\n%s", text);
    if (strcmp(error, message) != 0)
        fail_msg("got '%s', expected '%s'", error, message);
}

static void test_mistakes_named_by_line(void **state)
{
    (void)state;
    expect_refused("[mcp]\nrate_limit = fast\n",
                   "/etc/rpcd/rpcd.conf:2: rate_limit must be N/s, N/min or N/h, then optionally "
                   "burst M (N and M from 1 to 1000000), not 'fast'");
    expect_refused("[mcp]\ntools_deny = a\ntools_deny = b\n",
                   "/etc/rpcd/rpcd.conf:3: tools_deny is given twice in [mcp]");
    expect_refused("[mcp]\ntools_allow = a,,b\n",
                   "/etc/rpcd/rpcd.conf:2: tools_allow has an empty pattern in 'a,,b'");
    expect_refused("[mcp]\ntools_allow = a b\n",
                   "/etc/rpcd/rpcd.conf:2: tools_allow: pattern 'a b' holds a blank or a control "
                   "character");
    expect_refused("[mcp]\nmax_result_bytes = 0\n",
                   "/etc/rpcd/rpcd.conf:2: max_result_bytes must be an integer from 1 to "
                   "1073741824, not '0'");
    expect_refused("[mcp]\nrate_limit.echo = 1/s\n",
                   "/etc/rpcd/rpcd.conf:2: unknown key 'rate_limit.echo' in [mcp] (expected "
                   "tools, tool_names, tool.METHOD, instructions, tools_allow, tools_deny, "
                   "rate_limit or max_result_bytes)");
    expect_refused("[plugin p]\npath = p.so\nrate_limit.m = 1/s\nrate_limit.m = 2/s\n",
                   "/etc/rpcd/rpcd.conf:4: rate_limit.m is given twice in [plugin p]");
    expect_refused("[plugin p]\npath = p.so\nmax_result_bytes. = 5\n",
                   "/etc/rpcd/rpcd.conf:3: max_result_bytes. needs a method name "
                   "(max_result_bytes.METHOD)");
    expect_refused("[plugin p]\npath = p.so\nrate_limit = 1/s\nrate_limit = 1/s\n",
                   "/etc/rpcd/rpcd.conf:4: rate_limit is given twice in [plugin p]");
    expect_refused("[plugin p]\npath = p.so\nmax_result_bytes.m = 1073741825\n",
                   "/etc/rpcd/rpcd.conf:3: max_result_bytes.m must be an integer from 1 to "
                   "1073741824, not '1073741825'");
}

static void test_bounds(void **state)
{
    (void)state;
    char text[16384];
    /* 64 patterns (a config line holds at most 198 bytes), and a pattern of 128 bytes. */
    size_t used = (size_t)snprintf(text, sizeof text, "[mcp]\ntools_deny = ");
    for (int i = 0; i < 64; i++)
        used += (size_t)snprintf(text + used, sizeof text - used, "%sa", i ? "," : "");
    snprintf(text + used, sizeof text - used, "\n");
    cfg_free(load(text));
    snprintf(text, sizeof text, "[mcp]\ntools_deny = %0128d\n", 1);
    cfg_free(load(text));
    /* One more pattern, or one byte more. */
    snprintf(text, sizeof text, "[mcp]\ntools_deny = %s", "a");
    for (int i = 1; i < 65; i++)
        strcat(text, ",a");
    strcat(text, "\n");
    expect_refused(text, "/etc/rpcd/rpcd.conf:2: tools_deny has more than 64 patterns");
    snprintf(text, sizeof text, "[mcp]\ntools_deny = %0129d\n", 1);
    expect_refused(text, "/etc/rpcd/rpcd.conf:2: tools_deny has a pattern longer than 128 bytes");
    /* 256 methods with their own keys per plugin section, not 257. */
    used = (size_t)snprintf(text, sizeof text, "[plugin p]\npath = p.so\n");
    for (int i = 0; i < 256; i++)
        used += (size_t)snprintf(text + used, sizeof text - used, "rate_limit.m%d = 1/s\n", i);
    cfg_free(load(text));
    snprintf(text + used, sizeof text - used, "max_result_bytes.m0 = 1\nrate_limit.x = 1/s\n");
    expect_refused(text, "/etc/rpcd/rpcd.conf:260: [plugin p] has more than 256 methods with a "
                         "rate_limit. or max_result_bytes. key");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rates),
        cmocka_unit_test(test_keys_read),
        cmocka_unit_test(test_mistakes_named_by_line),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
