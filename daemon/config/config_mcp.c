/* SPDX-License-Identifier: MIT */
/*
 * The [mcp] section's keys: each mistake is one message, which config.c places at its file and
 * line.
 */
#include "config/config_mcp.h"
#include "config/config_policy.h"

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

/*
 * instructions: an indented line after it goes on with the text (inih hands it over under the
 * same name), so that guidance longer than a config line can be given.
 */
static int read_instructions(rpcd_config *config, const char *value, bool indented, char **problem)
{
    char **text = &config->mcp_instructions;
    char *longer;
    if (value[0] == '\0')
        return refuse(problem, "instructions is empty");
    if (*text && !indented)
        return refuse(problem, "instructions is given twice in [mcp]");
    if (*text ? asprintf(&longer, "%s\n%s", *text, value) < 0 : !(longer = strdup(value)))
        return -1; /* *problem stays NULL: out of memory */
    free(*text);
    *text = longer;
    return 0;
}

static int read_tool_names(rpcd_config *config, cfg_mcp_reading *reading, const char *value,
                           int line, char **problem)
{
    if (reading->tool_names_line)
        return refuse(problem, "tool_names is given twice in [mcp] (first on line %d)",
                      reading->tool_names_line);
    reading->tool_names_line = line;
    if (strcmp(value, "portable") == 0)
        config->mcp_tool_names = CFG_TOOL_NAMES_PORTABLE;
    else if (strcmp(value, "specification") == 0)
        config->mcp_tool_names = CFG_TOOL_NAMES_SPECIFICATION;
    else
        return refuse(problem, "tool_names must be portable or specification, not '%s'", value);
    return 0;
}

int cfg_mcp_key(rpcd_config *config, cfg_mcp_reading *reading, const char *name, const char *value,
                int line, bool indented, char **problem)
{
    *problem = NULL;
    if (strcmp(name, "tools") == 0) {
        if (config->mcp_tools)
            return refuse(problem, "tools is given twice in [mcp]");
        config->mcp_tools = strdup(value);
        return config->mcp_tools ? 0 : -1;
    }
    if (strcmp(name, "tool_names") == 0)
        return read_tool_names(config, reading, value, line, problem);
    if (strcmp(name, "instructions") == 0)
        return read_instructions(config, value, indented, problem);
    int policy = cfg_policy_key(&config->mcp_policy, NULL, name, value, problem);
    if (policy != 0)
        return policy > 0 ? 0 : -1;
    if (strncmp(name, "tool.", 5) != 0 || name[5] == '\0')
        return refuse(problem,
                      "unknown key '%s' in [mcp] (expected tools, tool_names, tool.METHOD, "
                      "instructions, tools_allow, tools_deny, rate_limit or max_result_bytes)",
                      name);
    for (size_t i = 0; i < config->mcp_name_count; i++)
        if (strcmp(config->mcp_names[i].key, name + 5) == 0)
            return refuse(problem, "key '%s' is given twice in [mcp]", name);
    return cfg_append_pair(&config->mcp_names, &config->mcp_name_count, name + 5, value);
}

int cfg_append_pair(cfg_pair **pairs, size_t *count, const char *key, const char *value)
{
    cfg_pair *grown = realloc(*pairs, (*count + 1) * sizeof *grown);
    if (!grown)
        return -1;
    *pairs = grown;
    cfg_pair *pair = &grown[*count];
    pair->key = strdup(key);
    pair->value = strdup(value);
    pair->used = false;
    if (!pair->key || !pair->value) {
        free(pair->key);
        free(pair->value);
        return -1;
    }
    (*count)++;
    return 0;
}
