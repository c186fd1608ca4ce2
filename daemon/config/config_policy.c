/* SPDX-License-Identifier: MIT */
/*
 * The tool policy keys: each value checked and bounded where it is read, so that a mistake is
 * one message at its file and line, and what the policy module (methods/tool_policy.c) gets is
 * known good.
 */
#include "config/config_policy.h"

#include "config/config_keys.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((format(printf, 2, 3))) static int refuse(char **problem, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    if (vasprintf(problem, format, args) < 0)
        *problem = NULL;
    va_end(args);
    return -1;
}

bool cfg_next_pattern(const char **cursor, const char **pattern, size_t *length)
{
    const char *start = *cursor + strspn(*cursor, " \t");
    if (*start == '\0')
        return false;
    size_t span = strcspn(start, ",");
    size_t trimmed = span;
    while (trimmed > 0 && (start[trimmed - 1] == ' ' || start[trimmed - 1] == '\t'))
        trimmed--;
    *pattern = start;
    *length = trimmed;
    *cursor = start + span + (start[span] == ',' ? 1 : 0);
    return true;
}

/* Checks a list of patterns: each one non-empty, bounded, without blanks or control bytes. */
static int check_patterns(const char *name, const char *value, char **problem)
{
    const char *cursor = value, *pattern;
    size_t length, count = 0;
    if (value[0] == '\0')
        return refuse(problem, "%s is empty (a pattern or patterns separated by commas)", name);
    while (cfg_next_pattern(&cursor, &pattern, &length)) {
        if (length == 0)
            return refuse(problem, "%s has an empty pattern in '%s'", name, value);
        if (length > CFG_POLICY_MOST_PATTERN_BYTES)
            return refuse(problem, "%s has a pattern longer than %d bytes", name,
                          CFG_POLICY_MOST_PATTERN_BYTES);
        for (size_t i = 0; i < length; i++)
            if ((unsigned char)pattern[i] <= ' ' || pattern[i] == 0x7f)
                return refuse(problem, "%s: pattern '%.*s' holds a blank or a control character",
                              name, (int)length, pattern);
        if (++count > CFG_POLICY_MOST_PATTERNS)
            return refuse(problem, "%s has more than %d patterns", name, CFG_POLICY_MOST_PATTERNS);
    }
    return 0;
}

/* A decimal number from 1 to CFG_POLICY_MOST_RATE at *at, blanks before it skipped. */
static int read_count(const char **at, uint32_t *out)
{
    *at += strspn(*at, " \t");
    size_t digits = strspn(*at, "0123456789");
    char number[16];
    size_t value;
    if (digits == 0 || digits >= sizeof number)
        return -1;
    memcpy(number, *at, digits);
    number[digits] = '\0';
    if (cfg_parse_size(number, 1, CFG_POLICY_MOST_RATE, &value) != 0)
        return -1;
    *out = (uint32_t)value;
    *at += digits;
    return 0;
}

int cfg_parse_rate(const char *value, tb_rate *out)
{
    static const struct {
        const char *unit;
        uint32_t period_ms;
    } units[] = {{"s", 1000}, {"min", 60000}, {"h", 3600000}};
    const char *at = value;
    tb_rate rate = {0, 0, 0};
    if (read_count(&at, &rate.count) != 0)
        return -1;
    at += strspn(at, " \t");
    if (*at++ != '/')
        return -1;
    at += strspn(at, " \t");
    size_t word = strspn(at, "abcdefghijklmnopqrstuvwxyz");
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (word == strlen(units[i].unit) && memcmp(at, units[i].unit, word) == 0)
            rate.period_ms = units[i].period_ms;
    if (rate.period_ms == 0)
        return -1;
    at += word;
    at += strspn(at, " \t");
    rate.burst = rate.count;
    if (strncmp(at, "burst", 5) == 0 && (at[5] == ' ' || at[5] == '\t')) {
        at += 5;
        if (read_count(&at, &rate.burst) != 0)
            return -1;
        at += strspn(at, " \t");
    }
    if (*at != '\0')
        return -1;
    *out = rate;
    return 0;
}

static int read_rate(const char *name, const char *value, tb_rate *out, char **problem)
{
    if (cfg_parse_rate(value, out) == 0)
        return 1;
    return refuse(problem,
                  "%s must be N/s, N/min or N/h, then optionally burst M (N and M from 1 to "
                  "%d), not '%s'",
                  name, CFG_POLICY_MOST_RATE, value);
}

static int read_cap(const char *name, const char *value, size_t *out, char **problem)
{
    if (cfg_parse_size(value, 1, CFG_POLICY_MOST_RESULT_BYTES, out) == 0)
        return 1;
    return refuse(problem, "%s must be an integer from 1 to %d, not '%s'", name,
                  CFG_POLICY_MOST_RESULT_BYTES, value);
}

/* The entry of method in policy->tools, added when it is not there. NULL: out of memory. */
static cfg_tool_rule *tool_rule(cfg_policy *policy, const char *method)
{
    for (size_t i = 0; i < policy->tool_count; i++)
        if (strcmp(policy->tools[i].method, method) == 0)
            return &policy->tools[i];
    cfg_tool_rule *grown = realloc(policy->tools, (policy->tool_count + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    policy->tools = grown;
    cfg_tool_rule *rule = &grown[policy->tool_count];
    *rule = (cfg_tool_rule){.method = strdup(method)};
    if (!rule->method)
        return NULL;
    policy->tool_count++;
    return rule;
}

/* rate_limit.METHOD or max_result_bytes.METHOD (which: 0 or 1) of [plugin plugin]. */
static int method_key(cfg_policy *policy, const char *plugin, int which, const char *name,
                      const char *method, const char *value, char **problem)
{
    if (method[0] == '\0')
        return refuse(problem, "%.*s needs a method name (%.*sMETHOD)", (int)(method - name), name,
                      (int)(method - name), name);
    if (!cfg_policy_tool(policy, method) && policy->tool_count >= CFG_POLICY_MOST_TOOL_RULES)
        return refuse(problem,
                      "[plugin %s] has more than %d methods with a rate_limit. or "
                      "max_result_bytes. key",
                      plugin, CFG_POLICY_MOST_TOOL_RULES);
    tb_rate rate;
    size_t cap = 0;
    int read =
        which == 0 ? read_rate(name, value, &rate, problem) : read_cap(name, value, &cap, problem);
    if (read < 0)
        return -1;
    cfg_tool_rule *rule = tool_rule(policy, method);
    if (!rule)
        return -1;
    if (which == 0 ? rule->rate.count != 0 : rule->max_result_bytes != 0)
        return refuse(problem, "%s is given twice in [plugin %s]", name, plugin);
    if (which == 0)
        rule->rate = rate;
    else
        rule->max_result_bytes = cap;
    return 1;
}

int cfg_policy_key(cfg_policy *policy, const char *plugin, const char *name, const char *value,
                   char **problem)
{
    static const char *const keys[] = {"tools_allow", "tools_deny", "rate_limit",
                                       "max_result_bytes"};
    *problem = NULL;
    for (int i = 0; i < 4; i++) {
        size_t length = strlen(keys[i]);
        if (strncmp(name, keys[i], length) != 0)
            continue;
        if (name[length] == '.' && plugin && i >= 2)
            return method_key(policy, plugin, i - 2, name, name + length + 1, value, problem);
        if (name[length] != '\0')
            continue;
        if (policy->seen & 1u << i)
            return plugin ? refuse(problem, "%s is given twice in [plugin %s]", name, plugin)
                          : refuse(problem, "%s is given twice in [mcp]", name);
        policy->seen |= 1u << i;
        if (i == 2)
            return read_rate(name, value, &policy->rate, problem);
        if (i == 3)
            return read_cap(name, value, &policy->max_result_bytes, problem);
        if (check_patterns(name, value, problem) != 0)
            return -1;
        char **list = i == 0 ? &policy->allow : &policy->deny;
        *list = strdup(value);
        return *list ? 1 : -1;
    }
    return 0;
}

const cfg_tool_rule *cfg_policy_tool(const cfg_policy *policy, const char *method)
{
    for (size_t i = 0; i < policy->tool_count; i++)
        if (strcmp(policy->tools[i].method, method) == 0)
            return &policy->tools[i];
    return NULL;
}

void cfg_policy_free(cfg_policy *policy)
{
    for (size_t i = 0; i < policy->tool_count; i++)
        free(policy->tools[i].method);
    free(policy->tools);
    free(policy->allow);
    free(policy->deny);
    *policy = (cfg_policy){0};
}
