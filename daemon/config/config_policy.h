/* SPDX-License-Identifier: MIT */
/*
 * The tool policy keys, in [mcp] and in plugin sections: tools_allow and tools_deny (glob
 * patterns of method names), rate_limit (N/s, N/min or N/h, with an optional burst) and
 * max_result_bytes, and in plugin sections the same two limits per method (KEY.METHOD).
 */
#ifndef RPCD_CONFIG_POLICY_H
#define RPCD_CONFIG_POLICY_H

#include "config/config.h"

#include <stdbool.h>
#include <stddef.h>

/* The bounds of the policy keys: a config is read by root, and each is checked per call. */
enum {
    CFG_POLICY_MOST_PATTERNS = 64, /* in one tools_allow or tools_deny */
    CFG_POLICY_MOST_PATTERN_BYTES = 128,
    CFG_POLICY_MOST_TOOL_RULES = 256, /* methods with a .METHOD key, per plugin section */
    CFG_POLICY_MOST_RATE = 1000000,   /* calls per period, and burst */
    CFG_POLICY_MOST_RESULT_BYTES = 1073741824,
};

/*
 * Reads name = value (borrowed) if it is a policy key into policy. plugin is the section's
 * plugin name, or NULL for [mcp], which takes no KEY.METHOD. Returns 1 when read, 0 when name is
 * no policy key, -1 with *problem (new, one line; NULL when memory ran out) when the value is
 * wrong, over a bound, or given twice.
 */
int cfg_policy_key(cfg_policy *policy, const char *plugin, const char *name, const char *value,
                   char **problem);

/* "N/s", "N/min" or "N/h", then optionally "burst M" (default: N). Returns 0 and *out, or -1. */
int cfg_parse_rate(const char *value, tb_rate *out);

/*
 * The next pattern of a checked list (tools_allow, tools_deny): true with its start and length
 * (spaces around it left out), *cursor moved past it; false at the end.
 */
bool cfg_next_pattern(const char **cursor, const char **pattern, size_t *length);

/* The .METHOD entry of method, or NULL. */
const cfg_tool_rule *cfg_policy_tool(const cfg_policy *policy, const char *method);

/* Frees what policy owns (not policy itself). */
void cfg_policy_free(cfg_policy *policy);

#endif
