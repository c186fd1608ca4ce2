/* SPDX-License-Identifier: MIT */
/*
 * The tool policy: each method's verdict decided once per generation by pol_decide and kept
 * with the rule that decided it, its buckets (its own, its plugin's) and its result cap, so that
 * a call costs an index and, rate limited, a lock or two.
 */
#include "methods/tool_policy.h"

#include "config/config_policy.h"

#include "base/log.h"
#include "base/token_bucket.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pol_bucket {
    tb_bucket bucket;
    char rule[POL_RULE_SIZE];
} pol_bucket;

typedef struct pol_entry {
    bool served;
    char rule[POL_RULE_SIZE]; /* what decided whether it is served */
    pol_bucket *own;          /* its own bucket, or NULL */
    pol_bucket *plugin;       /* its plugin's, shared, or NULL */
    size_t cap;               /* max_result_bytes; 0: none */
    char cap_rule[POL_RULE_SIZE];
} pol_entry;

struct tool_policy {
    pol_entry *entries; /* per method index */
    size_t count;
    pol_bucket *own;     /* as many as entries; each entry's own, when it has one */
    pol_bucket *plugins; /* one per plugin section, the ones with rate_limit initialised */
    size_t plugin_count;
};

/* The first pattern of list that matches method, or NULL; its length in *length. */
static const char *matching(const char *list, const char *method, size_t *length)
{
    const char *cursor = list, *pattern;
    char copy[CFG_POLICY_MOST_PATTERN_BYTES + 1];
    while (list && cfg_next_pattern(&cursor, &pattern, length)) {
        if (*length == 0 || *length >= sizeof copy)
            continue; /* the parser refuses both: nothing to match */
        memcpy(copy, pattern, *length);
        copy[*length] = '\0';
        if (fnmatch(copy, method, 0) == 0)
            return pattern;
    }
    return NULL;
}

bool pol_decide(const cfg_policy *server, const cfg_policy *plugin, const char *plugin_name,
                const char *method, char *rule, size_t rule_size)
{
    const cfg_policy *levels[2] = {server, plugin};
    size_t length;
    const char *pattern;
    char section[96];
    for (int i = 0; i < 2; i++) {
        snprintf(section, sizeof section, i ? "[plugin %s]" : "[mcp]", plugin_name);
        if (levels[i] && (pattern = matching(levels[i]->deny, method, &length))) {
            snprintf(rule, rule_size, "tools_deny pattern '%.*s' of %s", (int)length, pattern,
                     section);
            return false;
        }
    }
    for (int i = 0; i < 2; i++) {
        snprintf(section, sizeof section, i ? "[plugin %s]" : "[mcp]", plugin_name);
        if (levels[i] && levels[i]->allow && !matching(levels[i]->allow, method, &length)) {
            snprintf(rule, rule_size, "tools_allow of %s (no pattern matches)", section);
            return false;
        }
    }
    snprintf(rule, rule_size, "served");
    return true;
}

/* A rate as the config writes it. */
static void rate_text(tb_rate rate, char *out, size_t size)
{
    const char *unit = rate.period_ms == 1000 ? "s" : rate.period_ms == 60000 ? "min" : "h";
    snprintf(out, size, "%u/%s burst %u", rate.count, unit, rate.burst);
}

/* The section of method's plugin among config's (its index in *at), or NULL. */
static const cfg_plugin *section_of(const rpcd_config *config, const void *const *owners,
                                    const reg_method *method, size_t *at)
{
    for (size_t i = 0; method->owner && i < config->plugin_count; i++)
        if (owners[i] == method->owner) {
            *at = i;
            return &config->plugins[i];
        }
    return NULL;
}

/* The result cap of method: its own key, its plugin's, [mcp]'s. */
static void set_cap(pol_entry *entry, const rpcd_config *config, const cfg_plugin *plugin,
                    const cfg_tool_rule *own, const char *name)
{
    if (own && own->max_result_bytes) {
        entry->cap = own->max_result_bytes;
        snprintf(entry->cap_rule, sizeof entry->cap_rule, "max_result_bytes.%s of [plugin %s]",
                 name, plugin->name);
    } else if (plugin && plugin->policy.max_result_bytes) {
        entry->cap = plugin->policy.max_result_bytes;
        snprintf(entry->cap_rule, sizeof entry->cap_rule, "max_result_bytes of [plugin %s]",
                 plugin->name);
    } else if (config->mcp_policy.max_result_bytes) {
        entry->cap = config->mcp_policy.max_result_bytes;
        snprintf(entry->cap_rule, sizeof entry->cap_rule, "max_result_bytes of [mcp]");
    }
}

/* Fills the entry of method: verdict, buckets, cap. Returns 0, or -1 (a lock not made). */
static int fill_entry(tool_policy *policy, const rpcd_config *config, const void *const *owners,
                      const reg_method *method, long long now_ms)
{
    pol_entry *entry = &policy->entries[method->index];
    size_t at = 0;
    const cfg_plugin *plugin = section_of(config, owners, method, &at);
    entry->served =
        pol_decide(&config->mcp_policy, plugin ? &plugin->policy : NULL, plugin ? plugin->name : "",
                   method->name, entry->rule, sizeof entry->rule);
    const cfg_tool_rule *own = plugin ? cfg_policy_tool(&plugin->policy, method->name) : NULL;
    set_cap(entry, config, plugin, own, method->name);
    if (plugin && plugin->policy.rate.count)
        entry->plugin = &policy->plugins[at];
    tb_rate rate = own && own->rate.count ? own->rate : config->mcp_policy.rate;
    if (rate.count == 0)
        return 0;
    pol_bucket *bucket = &policy->own[method->index];
    char text[64];
    rate_text(rate, text, sizeof text);
    if (own && own->rate.count)
        snprintf(bucket->rule, sizeof bucket->rule, "rate_limit.%s = %s of [plugin %s]",
                 method->name, text, plugin->name);
    else
        snprintf(bucket->rule, sizeof bucket->rule, "rate_limit = %s of [mcp] (each tool)", text);
    if (tb_init(&bucket->bucket, rate, now_ms) != 0)
        return -1;
    entry->own = bucket;
    return 0;
}

/* The plugins' shared buckets; a .METHOD key naming none of a plugin's methods is warned of. */
static int fill_plugins(tool_policy *policy, const registry *methods, const rpcd_config *config,
                        const void *const *owners, long long now_ms)
{
    for (size_t i = 0; i < config->plugin_count; i++) {
        const cfg_plugin *plugin = &config->plugins[i];
        for (size_t k = 0; k < plugin->policy.tool_count; k++) {
            const cfg_tool_rule *rule = &plugin->policy.tools[k];
            const reg_method *method = reg_find(methods, rule->method, strlen(rule->method));
            if (!method || !owners[i] || method->owner != owners[i])
                log_message(LOG_WARNING, "[plugin %s]: %s.%s names none of its methods",
                            plugin->name, rule->rate.count ? "rate_limit" : "max_result_bytes",
                            rule->method);
        }
        if (plugin->policy.rate.count == 0)
            continue;
        char text[64];
        rate_text(plugin->policy.rate, text, sizeof text);
        pol_bucket *bucket = &policy->plugins[i];
        if (tb_init(&bucket->bucket, plugin->policy.rate, now_ms) != 0)
            return -1;
        /* Set once the lock is made: pol_free destroys the buckets that have a rule. */
        snprintf(bucket->rule, sizeof bucket->rule, "rate_limit = %s of [plugin %s]", text,
                 plugin->name);
    }
    return 0;
}

int pol_new(const registry *methods, const rpcd_config *config, const void *const *owners,
            long long now_ms, tool_policy **out, char *error, size_t error_size)
{
    tool_policy *policy = calloc(1, sizeof *policy);
    size_t count = reg_count(methods);
    if (!policy || !(policy->entries = calloc(count + 1, sizeof *policy->entries)) ||
        !(policy->own = calloc(count + 1, sizeof *policy->own)) ||
        !(policy->plugins = calloc(config->plugin_count + 1, sizeof *policy->plugins))) {
        pol_free(policy);
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    policy->count = count;
    policy->plugin_count = config->plugin_count;
    int failed = fill_plugins(policy, methods, config, owners, now_ms);
    for (size_t i = 0; i < count && !failed; i++)
        failed = fill_entry(policy, config, owners, reg_at(methods, i), now_ms);
    if (failed) {
        pol_free(policy);
        snprintf(error, error_size, "cannot make the lock of a rate limit");
        return -1;
    }
    *out = policy;
    return 0;
}

bool pol_configured(const rpcd_config *config)
{
    bool any = config->mcp_policy.seen != 0;
    for (size_t i = 0; i < config->plugin_count; i++)
        any |= config->plugins[i].policy.seen != 0 || config->plugins[i].policy.tool_count > 0;
    return any;
}

void pol_free(tool_policy *policy)
{
    if (!policy)
        return;
    for (size_t i = 0; policy->entries && i < policy->count; i++)
        if (policy->entries[i].own)
            tb_destroy(&policy->entries[i].own->bucket);
    for (size_t i = 0; i < policy->plugin_count; i++)
        if (policy->plugins[i].rule[0])
            tb_destroy(&policy->plugins[i].bucket);
    free(policy->entries);
    free(policy->own);
    free(policy->plugins);
    free(policy);
}

/* The entry of method, or NULL when the policy has none (no policy, a method it does not know). */
static pol_entry *entry_of(const tool_policy *policy, const reg_method *method)
{
    if (!policy || method->index >= policy->count)
        return NULL;
    return &policy->entries[method->index];
}

bool pol_served(const tool_policy *policy, const reg_method *method, const char **rule)
{
    const pol_entry *entry = entry_of(policy, method);
    if (rule)
        *rule = entry ? entry->rule : "served";
    return !entry || entry->served;
}

pol_verdict pol_admit(tool_policy *policy, const reg_method *method, long long now_ms,
                      pol_refusal *refusal)
{
    pol_entry *entry = entry_of(policy, method);
    if (!entry)
        return POL_ADMITTED;
    if (!entry->served) {
        *refusal = (pol_refusal){entry->rule, 0};
        return POL_DENIED;
    }
    long long retry_ms = 0;
    if (entry->own && !tb_take(&entry->own->bucket, now_ms, &retry_ms)) {
        *refusal = (pol_refusal){entry->own->rule, retry_ms};
        return POL_RATE_LIMITED;
    }
    if (entry->plugin && !tb_take(&entry->plugin->bucket, now_ms, &retry_ms)) {
        if (entry->own)
            tb_give_back(&entry->own->bucket); /* both tokens or neither */
        *refusal = (pol_refusal){entry->plugin->rule, retry_ms};
        return POL_RATE_LIMITED;
    }
    return POL_ADMITTED;
}

size_t pol_result_cap(const tool_policy *policy, const reg_method *method, const char **rule)
{
    const pol_entry *entry = entry_of(policy, method);
    if (rule)
        *rule = entry && entry->cap ? entry->cap_rule : NULL;
    return entry ? entry->cap : 0;
}
