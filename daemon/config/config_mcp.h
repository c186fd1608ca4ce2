/* SPDX-License-Identifier: MIT */
/*
 * The [mcp] section of the config, for config.c: which methods are tools (tools), the names they
 * may have (tool_names) and are given (tool.METHOD), and guidance for the model (instructions).
 */
#ifndef RPCD_CONFIG_MCP_H
#define RPCD_CONFIG_MCP_H

#include "config/config.h"

#include <stdbool.h>
#include <stddef.h>

/* What reading [mcp] remembers from one key to the next. */
typedef struct cfg_mcp_reading {
    int tool_names_line; /* where tool_names was given, 0 if not yet */
} cfg_mcp_reading;

/*
 * Reads name = value (borrowed) of [mcp] into config. line is where it is; indented says that
 * the line starts with a blank, which inih hands over as more of the key before it. Returns 0,
 * or -1 with *problem (new, one line without file and line; NULL when memory ran out).
 */
int cfg_mcp_key(rpcd_config *config, cfg_mcp_reading *reading, const char *name, const char *value,
                int line, bool indented, char **problem);

/* Appends a copy of key = value to a list of pairs. Returns 0 or -1 (memory, list unchanged). */
int cfg_append_pair(cfg_pair **pairs, size_t *count, const char *key, const char *value);

#endif
