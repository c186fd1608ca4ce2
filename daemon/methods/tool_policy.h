/* SPDX-License-Identifier: MIT */
/*
 * The tool policy of a generation: which methods are served (tools_allow, tools_deny), how often
 * (rate_limit, token buckets per method and per plugin) and how large a result may be
 * (max_result_bytes), from [mcp] and the plugin sections. pol_decide is the one decision of what
 * is served: tools/list, tools/call and a call by the method's name all ask it (through
 * pol_served and pol_admit), so that what is listed is what can be called.
 */
#ifndef RPCD_TOOL_POLICY_H
#define RPCD_TOOL_POLICY_H

#include "config/config.h"
#include "methods/registry.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct tool_policy tool_policy;

/* Room for a rule's text: its key, value (cut) and section. */
enum { POL_RULE_SIZE = 224 };

/*
 * Whether method (NUL-terminated, borrowed) is served under the lists of server ([mcp]) and
 * plugin (its section's, NULL when it has none; plugin_name its NAME): a tools_deny pattern that
 * matches denies it, whichever section; else a tools_allow list that is given and that no pattern
 * of matches denies it; else it is served. Patterns are fnmatch(3) globs without flags: * and ?
 * match any character, dots and slashes included. Writes the rule that decided into rule
 * (rule_size bytes, NUL-terminated): "tools_deny pattern 'fs.*' of [mcp]", "tools_allow of
 * [plugin files] (no pattern matches)", or "served" with no rule. Pure; thread-safe.
 */
bool pol_decide(const cfg_policy *server, const cfg_policy *plugin, const char *plugin_name,
                const char *method, char *rule, size_t rule_size);

/*
 * The policy of methods under config: owners[i] (borrowed) is the owner of the methods of
 * config->plugins[i] (reg_method.owner; NULL for a section with no plugin loaded). Each bucket
 * starts full at now_ms. A .METHOD key that names none of its plugin's methods is warned about.
 * Returns 0 and *out (new), or -1 with the reason in error (memory).
 */
int pol_new(const registry *methods, const rpcd_config *config, const void *const *owners,
            long long now_ms, tool_policy **out, char *error, size_t error_size);
void pol_free(tool_policy *policy);

/* Whether config gives any tool policy key, in [mcp] or a plugin section. */
bool pol_configured(const rpcd_config *config);

/*
 * Whether method (one of the policy's registry) is served, and the rule that decided (*rule:
 * borrowed, alive with the policy; may be NULL when not wanted). A NULL policy serves all.
 */
bool pol_served(const tool_policy *policy, const reg_method *method, const char **rule);

typedef enum pol_verdict {
    POL_ADMITTED = 0,
    POL_DENIED,       /* answered as a method or tool that does not exist */
    POL_RATE_LIMITED, /* retry_ms says when a token is there again */
} pol_verdict;

/* Why a call was refused: the rule (borrowed from the policy) and, rate limited, the wait. */
typedef struct pol_refusal {
    const char *rule;
    long long retry_ms;
} pol_refusal;

/*
 * Admits a call of method at now_ms (monotonic milliseconds): denied as pol_served says, else a
 * token from the method's bucket and from its plugin's, both or neither. Returns the verdict;
 * *refusal set when it is not POL_ADMITTED. Thread-safe; a NULL policy admits all.
 */
pol_verdict pol_admit(tool_policy *policy, const reg_method *method, long long now_ms,
                      pol_refusal *refusal);

/*
 * The most bytes a result of method may have (0: no cap), and the rule that sets it (*rule,
 * borrowed; may be NULL when not wanted). Thread-safe.
 */
size_t pol_result_cap(const tool_policy *policy, const reg_method *method, const char **rule);

#endif
