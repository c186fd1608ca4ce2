/* SPDX-License-Identifier: MIT */
/*
 * The table of every config key (name, type, range, default, place) and the parsing of a value by
 * its type: what config.c and config_mcp.c read keys with, and what cfg_key_at lists.
 */
#ifndef RPCD_CONFIG_KEYS_H
#define RPCD_CONFIG_KEYS_H

#include "config/config.h"

#include <stdbool.h>
#include <stddef.h>

/* At least as many as the table has keys (checked where the table is). */
enum { CFG_KEY_MOST = 64 };

/*
 * The bounds of scheduler_slice_us, in microseconds: the ones the kernel clamps a requested
 * slice to. Here, with the key that takes them, so that the config layer needs nothing of the
 * plugin host that applies the slice (isolation/time_slice.c).
 */
enum { SLICE_MIN_US = 100, SLICE_MAX_US = 100000 };

/* The key name of section ("rpcd" or "plugin NAME"), and *index its place; NULL when none. */
const cfg_key *cfg_key_find(const char *section, const char *name, size_t *index);

/*
 * Reads value into field, the place of key, by key's type and range. Returns 0, or -1 with
 * *problem (new, one line without file and line; NULL when memory ran out).
 */
int cfg_parse_value(const cfg_key *key, void *field, const char *value, char **problem);

/* An integer in minimum..maximum, digits only. Returns 0 and *out, or -1. */
int cfg_parse_size(const char *value, size_t minimum, size_t maximum, size_t *out);
/* true/yes/1 or false/no/0. Returns 0 and *out, or -1. */
int cfg_parse_bool(const char *value, bool *out);
/* none or process (CFG_ISOLATION_*). Returns 0 and *out, or -1. */
int cfg_parse_isolation(const char *value, int *out);

/*
 * The keys of a plugin section that say how rpcd runs the plugin in a host process: isolation,
 * timeout_ms, timeout_ms.METHOD, max_restarts and scheduler_slice_us, and validate_arguments
 * (whether rpcd checks its calls' params), each given once. Returns 1
 * when name is one of them and was read into plugin, 0 when it is none of them, -1 with *problem
 * (new; NULL when memory ran out) when its value is wrong or it is given twice.
 */
int cfg_isolation_key(cfg_plugin *plugin, const char *name, const char *value, char **problem);

/* The deadline of plugin's method name: its timeout_ms.METHOD, or the plugin's timeout_ms; 0: none.
 */
size_t cfg_method_timeout(const cfg_plugin *plugin, const char *name);

/* Sets every [rpcd] key of config to its default. */
void cfg_set_defaults(rpcd_config *config);

#endif
