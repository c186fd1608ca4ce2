/* SPDX-License-Identifier: MIT */
/*
 * The table of every config key, in the order the man page lists them, and the parsing of a
 * value by its type: one place for a key's name, range, default and meaning.
 */
#include "config/config_keys.h"

#include "config/config_mcp.h"

#include "base/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIB ((size_t)1 << 40)
#define DAEMON_KEY(name, type, minimum, maximum, default_value)                                    \
    {                                                                                              \
        "rpcd", #name, type, minimum, maximum, default_value, offsetof(rpcd_config, name)          \
    }

/* A key of the serving limits, kept in the config's one serving_limits value. */
#define LIMIT_KEY(name, type, minimum, maximum, default_value)                                     \
    {                                                                                              \
        "rpcd", #name, type, minimum, maximum, default_value, offsetof(rpcd_config, limits.name)   \
    }

#define PLUGIN_KEY(name, type, minimum, maximum)                                                   \
    {                                                                                              \
        "plugin NAME", #name, type, minimum, maximum, 0, offsetof(cfg_plugin, confinement.name)    \
    }

/*
 * Every key, in the order the man page lists them. [rpcd] keys, and the confinement keys of
 * plugin sections (PLUGIN_KEY: unset is 0 or NULL), are read from this table alone, and each may
 * be given once; a default of 0 for a size means it is derived at load.
 */
/* clang-format off */
static const cfg_key keys[] = {
    DAEMON_KEY(log_level,           CFG_KEY_LOG_LEVEL, 0,  0,        LOG_INFO),
    DAEMON_KEY(log_format,          CFG_KEY_LOG_FORMAT, 0, 0,        LOG_FORMAT_TEXT),
    DAEMON_KEY(log_calls,           CFG_KEY_BOOL,      0,  0,        false),
    LIMIT_KEY(max_line_bytes,       CFG_KEY_SIZE,      64, TIB,      CFG_DEFAULT_MAX_LINE_BYTES),
    LIMIT_KEY(max_depth,            CFG_KEY_SIZE,      2,  1000000,  CFG_DEFAULT_MAX_DEPTH),
    LIMIT_KEY(max_batch,            CFG_KEY_SIZE,      1,  10000000, CFG_DEFAULT_MAX_BATCH),
    LIMIT_KEY(workers,              CFG_KEY_SIZE,      1,  1024,     0),
    LIMIT_KEY(max_in_flight,        CFG_KEY_SIZE,      1,  10000000, CFG_DEFAULT_MAX_IN_FLIGHT),
    LIMIT_KEY(max_in_flight_bytes,  CFG_KEY_SIZE,      1,  TIB,      0),
    DAEMON_KEY(shutdown_grace_ms,   CFG_KEY_SIZE,      0,  3600000,  CFG_DEFAULT_SHUTDOWN_GRACE_MS),
    DAEMON_KEY(plugin_dir,          CFG_KEY_STRING,    0,  0,        0),
    DAEMON_KEY(include,             CFG_KEY_STRING,    0,  0,        0),
    DAEMON_KEY(strict,              CFG_KEY_BOOL,      0,  0,        false),
    DAEMON_KEY(watch,               CFG_KEY_BOOL,      0,  0,        false),
    DAEMON_KEY(user,                CFG_KEY_STRING,    0,  0,        0),
    DAEMON_KEY(group,               CFG_KEY_STRING,    0,  0,        0),
    DAEMON_KEY(no_new_privs,        CFG_KEY_BOOL,      0,  0,        true),
    DAEMON_KEY(isolation,           CFG_KEY_ISOLATION, 0,  0,        CFG_ISOLATION_NONE),
    DAEMON_KEY(schema_format,       CFG_KEY_SCHEMA_FORMAT, 0, 0,     CFG_SCHEMA_FORMAT_ANNOTATION),
    DAEMON_KEY(control_socket,      CFG_KEY_STRING,    0,  0,        0),
    DAEMON_KEY(control_socket_mode, CFG_KEY_STRING,    0,  0,        0),
    DAEMON_KEY(control_socket_owner, CFG_KEY_STRING,   0,  0,        0),
    DAEMON_KEY(control_socket_group, CFG_KEY_STRING,   0,  0,        0),
    DAEMON_KEY(control_metrics,     CFG_KEY_BOOL,      0,  0,        true),
    DAEMON_KEY(task_after_ms,       CFG_KEY_SIZE,      0,  86400000, CFG_DEFAULT_TASK_AFTER_MS),
    DAEMON_KEY(task_ttl_ms,         CFG_KEY_SIZE,      1000, 604800000, CFG_DEFAULT_TASK_TTL_MS),
    DAEMON_KEY(max_tasks,           CFG_KEY_SIZE,      1,  1000000,  CFG_DEFAULT_MAX_TASKS),
    DAEMON_KEY(max_task_bytes,      CFG_KEY_SIZE,      4096, TIB,    CFG_DEFAULT_MAX_TASK_BYTES),
    {"plugin NAME", "path",        CFG_KEY_OWN, 0, 0, 0, 0},
    {"plugin NAME", "required",    CFG_KEY_OWN, 0, 0, 0, 0},
    PLUGIN_KEY(limit_memory,       CFG_KEY_SIZE,    16777216, TIB),
    PLUGIN_KEY(limit_cpu_seconds,  CFG_KEY_SIZE,    1,        1000000000),
    PLUGIN_KEY(limit_open_files,   CFG_KEY_SIZE,    16,       1048576),
    PLUGIN_KEY(limit_processes,    CFG_KEY_SIZE,    1,        4194304),
    PLUGIN_KEY(user,               CFG_KEY_STRING,  0,        0),
    PLUGIN_KEY(group,              CFG_KEY_STRING,  0,        0),
    PLUGIN_KEY(seccomp,            CFG_KEY_SECCOMP, 0,        0),
    PLUGIN_KEY(read_paths,         CFG_KEY_PATHS,   0,        0),
    PLUGIN_KEY(write_paths,        CFG_KEY_PATHS,   0,        0),
    {"plugin NAME", "isolation",   CFG_KEY_OWN, 0, 0, 0, 0},
    {"plugin NAME", "timeout_ms",  CFG_KEY_OWN, 0, 0, 0, 0},
    {"plugin NAME", "timeout_ms.METHOD", CFG_KEY_OWN, 0, 0, 0, 0},
    {"plugin NAME", "max_restarts", CFG_KEY_OWN, 0, 0, 0, 0},
    {"plugin NAME", "scheduler_slice_us", CFG_KEY_OWN, 0, 0, 0, 0},
    {"plugin NAME", "tools_allow", CFG_KEY_OWN, 0, 0, 0, 0},
    {"plugin NAME", "tools_deny",  CFG_KEY_OWN, 0, 0, 0, 0},
    {"plugin NAME", "rate_limit",  CFG_KEY_OWN, 0, 0, 0, 0},
    {"plugin NAME", "rate_limit.METHOD", CFG_KEY_OWN, 0, 0, 0, 0},
    {"plugin NAME", "max_result_bytes", CFG_KEY_OWN, 0, 0, 0, 0},
    {"plugin NAME", "max_result_bytes.METHOD", CFG_KEY_OWN, 0, 0, 0, 0},
    {"plugin NAME", "validate_arguments", CFG_KEY_OWN, 0, 0, 0, 0},
    {"mcp",         "tools",       CFG_KEY_OWN, 0, 0, 0, 0},
    {"mcp",         "tool_names",  CFG_KEY_OWN, 0, 0, 0, 0},
    {"mcp",         "tool.METHOD", CFG_KEY_OWN, 0, 0, 0, 0},
    {"mcp",         "instructions", CFG_KEY_OWN, 0, 0, 0, 0},
    {"mcp",         "tools_allow", CFG_KEY_OWN, 0, 0, 0, 0},
    {"mcp",         "tools_deny",  CFG_KEY_OWN, 0, 0, 0, 0},
    {"mcp",         "rate_limit",  CFG_KEY_OWN, 0, 0, 0, 0},
    {"mcp",         "max_result_bytes", CFG_KEY_OWN, 0, 0, 0, 0},
};
/* clang-format on */
enum { KEY_COUNT = sizeof keys / sizeof keys[0] };

size_t cfg_key_count(void)
{
    return KEY_COUNT;
}

const cfg_key *cfg_key_at(size_t index)
{
    return index < KEY_COUNT ? &keys[index] : NULL;
}
_Static_assert((int)KEY_COUNT <= (int)CFG_KEY_MOST, "CFG_KEY_MOST counts every key");

const cfg_key *cfg_key_find(const char *section, const char *name, size_t *index)
{
    for (size_t i = 0; i < KEY_COUNT; i++) {
        if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].name, name) == 0) {
            *index = i;
            return &keys[i];
        }
    }
    return NULL;
}

/* Sets *problem to the formatted text (NULL when memory runs out). Returns -1. */
__attribute__((format(printf, 2, 3))) static int complain(char **problem, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    if (vasprintf(problem, format, args) < 0)
        *problem = NULL;
    va_end(args);
    return -1;
}

int cfg_parse_size(const char *value, size_t minimum, size_t maximum, size_t *out)
{
    char *end;
    errno = 0;
    if (value[0] < '0' || value[0] > '9')
        return -1;
    unsigned long long number = strtoull(value, &end, 10);
    if (errno != 0 || *end != '\0' || number < minimum || number > maximum)
        return -1;
    *out = (size_t)number;
    return 0;
}

int cfg_parse_bool(const char *value, bool *out)
{
    if (strcmp(value, "true") == 0 || strcmp(value, "yes") == 0 || strcmp(value, "1") == 0) {
        *out = true;
        return 0;
    }
    if (strcmp(value, "false") == 0 || strcmp(value, "no") == 0 || strcmp(value, "0") == 0) {
        *out = false;
        return 0;
    }
    return -1;
}

/* Copies a non-empty value into *out (owned). Returns 0, or -1 with *problem. */
static int set_string(const char *name, const char *value, char **out, char **problem)
{
    if (value[0] == '\0')
        return complain(problem, "%s is empty", name);
    free(*out);
    *out = strdup(value);
    return *out ? 0 : complain(problem, "out of memory");
}

int cfg_parse_isolation(const char *value, int *out)
{
    if (strcmp(value, "none") == 0)
        *out = CFG_ISOLATION_NONE;
    else if (strcmp(value, "process") == 0)
        *out = CFG_ISOLATION_PROCESS;
    else
        return -1;
    return 0;
}

/* Whether each of a list of paths separated by spaces is absolute. */
static bool absolute_paths(const char *list)
{
    bool any = false;
    for (const char *at = list + strspn(list, " \t"); *at; at += strspn(at, " \t")) {
        if (*at != '/')
            return false;
        any = true;
        at += strcspn(at, " \t");
    }
    return any;
}

int cfg_parse_value(const cfg_key *key, void *field, const char *value, char **problem)
{
    const char *name = key->name;
    switch (key->type) {
    case CFG_KEY_SIZE:
        if (cfg_parse_size(value, key->minimum, key->maximum, field) != 0)
            return complain(problem, "%s must be an integer from %zu to %zu, not '%s'", name,
                            key->minimum, key->maximum, value);
        return 0;
    case CFG_KEY_BOOL:
        if (cfg_parse_bool(value, field) != 0)
            return complain(problem, "%s must be true or false, not '%s'", name, value);
        return 0;
    case CFG_KEY_STRING: return set_string(name, value, field, problem);
    case CFG_KEY_LOG_LEVEL:
        if (log_level_parse(value, field) != 0)
            return complain(problem, "%s must be error, warning, info or debug, not '%s'", name,
                            value);
        return 0;
    case CFG_KEY_LOG_FORMAT:
        if (log_format_parse(value, field) != 0)
            return complain(problem, "%s must be text or json, not '%s'", name, value);
        return 0;
    case CFG_KEY_SECCOMP: {
        static const char *const profiles[] = {"default", "strict", "off"};
        for (int i = 0; i < 3; i++)
            if (strcmp(value, profiles[i]) == 0) {
                *(int *)field = CFG_SECCOMP_DEFAULT + i;
                return 0;
            }
        return complain(problem, "%s must be default, strict or off, not '%s'", name, value);
    }
    case CFG_KEY_PATHS:
        if (!absolute_paths(value))
            return complain(problem, "%s must be absolute paths separated by spaces, not '%s'",
                            name, value);
        return set_string(name, value, field, problem);
    case CFG_KEY_ISOLATION:
        if (cfg_parse_isolation(value, field) != 0)
            return complain(problem, "%s must be none or process, not '%s'", name, value);
        return 0;
    case CFG_KEY_SCHEMA_FORMAT:
        if (strcmp(value, "annotation") == 0 || strcmp(value, "assert") == 0) {
            *(int *)field =
                value[1] == 's' ? CFG_SCHEMA_FORMAT_ASSERT : CFG_SCHEMA_FORMAT_ANNOTATION;
            return 0;
        }
        return complain(problem, "%s must be annotation or assert, not '%s'", name, value);
    case CFG_KEY_OWN: break;
    }
    return complain(problem, "unknown key '%s'", name);
}

void cfg_set_defaults(rpcd_config *config)
{
    for (size_t i = 0; i < KEY_COUNT; i++) {
        void *field = (char *)config + keys[i].offset;
        if (strcmp(keys[i].section, "rpcd") != 0)
            continue;
        if (keys[i].type == CFG_KEY_SIZE)
            *(size_t *)field = keys[i].default_value;
        else if (keys[i].type == CFG_KEY_BOOL)
            *(bool *)field = keys[i].default_value != 0;
        else if (keys[i].type == CFG_KEY_LOG_LEVEL || keys[i].type == CFG_KEY_LOG_FORMAT ||
                 keys[i].type == CFG_KEY_ISOLATION || keys[i].type == CFG_KEY_SCHEMA_FORMAT)
            *(int *)field = (int)keys[i].default_value;
    }
}

int cfg_isolation_key(cfg_plugin *plugin, const char *name, const char *value, char **problem)
{
    size_t number;
    static const char *const once[] = {"isolation", "timeout_ms", "max_restarts",
                                       "scheduler_slice_us", "validate_arguments"};
    for (unsigned i = 0; i < sizeof once / sizeof once[0]; i++) {
        if (strcmp(name, once[i]) != 0)
            continue;
        if (plugin->seen & 1u << i)
            return complain(problem, "%s is given twice in [plugin %s]", name, plugin->name);
        plugin->seen |= 1u << i;
    }
    for (size_t i = 0; strncmp(name, "timeout_ms.", 11) == 0 && i < plugin->timeout_count; i++)
        if (strcmp(plugin->timeouts[i].key, name + 11) == 0)
            return complain(problem, "%s is given twice in [plugin %s]", name, plugin->name);
    if (strcmp(name, "isolation") == 0) {
        if (cfg_parse_isolation(value, &plugin->isolation) != 0)
            return complain(problem, "isolation must be none or process, not '%s'", value);
        return 1;
    }
    if (strcmp(name, "max_restarts") == 0) {
        if (cfg_parse_size(value, 0, 1000000, &plugin->max_restarts) != 0)
            return complain(problem, "max_restarts must be an integer from 0 to 1000000, not '%s'",
                            value);
        return 1;
    }
    if (strcmp(name, "validate_arguments") == 0) {
        if (cfg_parse_bool(value, &plugin->validate_arguments) != 0)
            return complain(problem, "validate_arguments must be true or false, not '%s'", value);
        return 1;
    }
    if (strcmp(name, "scheduler_slice_us") == 0) {
        /* The kernel clamps a request outside its bounds: refusing it says so where it is. */
        size_t slice;
        if (cfg_parse_size(value, 0, SLICE_MAX_US, &slice) != 0 ||
            (slice != 0 && slice < SLICE_MIN_US))
            return complain(problem,
                            "scheduler_slice_us must be 0 (the kernel's own) or an integer from "
                            "%d to %d, not '%s'",
                            SLICE_MIN_US, SLICE_MAX_US, value);
        plugin->scheduler_slice_us = slice;
        return 1;
    }
    if (strncmp(name, "timeout_ms", 10) != 0 || (name[10] != '\0' && name[10] != '.'))
        return 0;
    if (cfg_parse_size(value, 1, CFG_MAX_TIMEOUT_MS, &number) != 0)
        return complain(problem, "%s must be an integer from 1 to %d, not '%s'", name,
                        CFG_MAX_TIMEOUT_MS, value);
    if (name[10] == '\0') {
        plugin->timeout_ms = number;
        return 1;
    }
    if (name[11] == '\0')
        return complain(problem, "timeout_ms. needs a method name (timeout_ms.METHOD)");
    if (cfg_append_pair(&plugin->timeouts, &plugin->timeout_count, name + 11, value) != 0)
        return complain(problem, "out of memory");
    return 1;
}

size_t cfg_method_timeout(const cfg_plugin *plugin, const char *name)
{
    for (size_t i = 0; i < plugin->timeout_count; i++)
        if (strcmp(plugin->timeouts[i].key, name) == 0)
            return (size_t)strtoull(plugin->timeouts[i].value, NULL, 10);
    return plugin->timeout_ms;
}
