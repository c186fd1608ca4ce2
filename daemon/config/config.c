/* SPDX-License-Identifier: MIT */
/*
 * Config parsing on top of libinih: inih splits lines, this file gives the keys their meaning
 * and turns every mistake into one message naming the file and line.
 */
#include "config/config.h"
#include "config/config_keys.h"
#include "config/config_mcp.h"
#include "config/config_policy.h"

#include "base/log.h"

#include <errno.h>
#include <ini.h>
#include <libgen.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct parse_state {
    rpcd_config *config;
    char *message;               /* the first problem, without file and line */
    int message_line;            /* where it is */
    int key_lines[CFG_KEY_MOST]; /* where each [rpcd] key was given, 0 if not yet */
    int rpcd_line;               /* where [rpcd] starts, 0 if not yet */
    int mcp_line;                /* where [mcp] starts, 0 if not yet */
    cfg_mcp_reading mcp;         /* what [mcp] keys remember */
    bool indented;               /* the line inih is working on starts with a blank */
    const char *next;            /* the text not yet handed to inih */
    int line;                    /* the line inih is working on */
    const char *file;            /* the file read (borrowed from the config) */
    bool dropin;                 /* a drop-in: [plugin NAME] and [mcp] tool.METHOD only */
} parse_state;

static const char plugin_prefix[] = "plugin ";

__attribute__((format(printf, 2, 3))) static int fail(parse_state *state, const char *format, ...)
{
    if (state->message)
        return 0; /* the first problem is the one worth reading */
    state->message_line = state->line;
    va_list args;
    va_start(args, format);
    if (vasprintf(&state->message, format, args) < 0)
        state->message = NULL;
    va_end(args);
    return 0;
}

/* Reads value into field, the place of key. Returns 1, or inih's 0 after fail. */
static int parse_value(parse_state *state, const cfg_key *key, void *field, const char *value)
{
    char *problem = NULL;
    if (cfg_parse_value(key, field, value, &problem) == 0)
        return 1;
    fail(state, "%s", problem ? problem : "out of memory");
    free(problem);
    return 0;
}

static int daemon_key(parse_state *state, const char *name, const char *value)
{
    size_t index;
    const cfg_key *key = cfg_key_find("rpcd", name, &index);
    if (!key)
        return fail(state, "unknown key '%s' in [rpcd]", name);
    if (state->key_lines[index])
        return fail(state, "%s is given twice in [rpcd] (first on line %d)", name,
                    state->key_lines[index]);
    state->key_lines[index] = state->line;
    return parse_value(state, key, (char *)state->config + key->offset, value);
}

static cfg_plugin *find_plugin(parse_state *state, const char *name)
{
    rpcd_config *config = state->config;
    for (size_t i = 0; i < config->plugin_count; i++)
        if (strcmp(config->plugins[i].name, name) == 0)
            return &config->plugins[i];
    return NULL;
}

static cfg_plugin *add_plugin(parse_state *state, const char *name)
{
    rpcd_config *config = state->config;
    cfg_plugin *plugins = realloc(config->plugins, (config->plugin_count + 1) * sizeof *plugins);
    if (!plugins)
        return NULL;
    config->plugins = plugins;
    cfg_plugin *plugin = &plugins[config->plugin_count];
    memset(plugin, 0, sizeof *plugin);
    plugin->name = strdup(name);
    if (!plugin->name)
        return NULL;
    plugin->required = true;
    plugin->isolation = CFG_ISOLATION_INHERIT;
    plugin->max_restarts = CFG_DEFAULT_MAX_RESTARTS;
    plugin->scheduler_slice_us = CFG_DEFAULT_SCHEDULER_SLICE_US;
    plugin->validate_arguments = true;
    plugin->file = state->file;
    plugin->line = state->line;
    config->plugin_count++;
    return plugin;
}

/* Whether a relative path has a ".." component. */
static bool leaves_directory(const char *path)
{
    for (const char *at = path; *at;) {
        size_t length = strcspn(at, "/");
        if (length == 2 && at[0] == '.' && at[1] == '.')
            return true;
        at += length;
        at += strspn(at, "/");
    }
    return false;
}

/* The confinement key of a plugin section called name, or NULL: a key for the plugin. */
static const cfg_key *plugin_section_key(const char *name)
{
    size_t index;
    const cfg_key *key = cfg_key_find("plugin NAME", name, &index);
    return key && key->type != CFG_KEY_OWN ? key : NULL;
}

static int plugin_key(parse_state *state, cfg_plugin *plugin, const char *name, const char *value)
{
    if (strcmp(name, "path") == 0) {
        if (plugin->path)
            return fail(state, "path is given twice in [plugin %s]", plugin->name);
        if (value[0] == '\0')
            return fail(state, "path is empty in [plugin %s]", plugin->name);
        if (value[0] != '/' && leaves_directory(value))
            return fail(state,
                        "path '%s' of [plugin %s] leaves plugin_dir ('..'); write it as an "
                        "absolute path",
                        value, plugin->name);
        plugin->path = strdup(value);
        return plugin->path ? 1 : fail(state, "out of memory");
    }
    if (strcmp(name, "required") == 0) {
        if (plugin->required_line)
            return fail(state, "required is given twice in [plugin %s] (first on line %d)",
                        plugin->name, plugin->required_line);
        plugin->required_line = state->line;
        if (cfg_parse_bool(value, &plugin->required) != 0)
            return fail(state, "required must be true or false, not '%s'", value);
        return 1;
    }
    const cfg_key *key = plugin_section_key(name);
    if (key) {
        void *field = (char *)plugin + key->offset;
        bool given = key->type == CFG_KEY_SIZE      ? *(size_t *)field != 0
                     : key->type == CFG_KEY_SECCOMP ? *(int *)field != CFG_SECCOMP_UNSET
                                                    : *(char **)field != NULL;
        if (given)
            return fail(state, "%s is given twice in [plugin %s]", name, plugin->name);
        return parse_value(state, key, field, value);
    }
    char *problem = NULL;
    int isolation_key = cfg_isolation_key(plugin, name, value, &problem);
    if (isolation_key == 0) /* a tool policy key, which the plugin never sees either */
        isolation_key = cfg_policy_key(&plugin->policy, plugin->name, name, value, &problem);
    if (isolation_key < 0) {
        fail(state, "%s", problem ? problem : "out of memory");
        free(problem);
        return 0;
    }
    if (isolation_key > 0)
        return 1;
    for (size_t i = 0; i < plugin->pair_count; i++)
        if (strcmp(plugin->pairs[i].key, name) == 0)
            return fail(state, "key '%s' is given twice in [plugin %s]", name, plugin->name);
    if (cfg_append_pair(&plugin->pairs, &plugin->pair_count, name, value) != 0)
        return fail(state, "out of memory");
    return 1;
}

/*
 * Checks a section header when inih is about to read it, so that a section without keys is
 * judged too (inih only reports sections through their keys).
 */
static void check_section_header(parse_state *state, const char *line, size_t length)
{
    while (length > 0 && (*line == ' ' || *line == '\t')) {
        line++;
        length--;
    }
    if (length == 0 || *line != '[')
        return;
    const char *close = memchr(line, ']', length);
    if (!close)
        return; /* inih reports the syntax error */
    char name[256];
    size_t name_length = (size_t)(close - line - 1);
    if (name_length >= sizeof name) {
        fail(state, "section name too long");
        return;
    }
    memcpy(name, line + 1, name_length);
    while (name_length > 0 && (name[name_length - 1] == ' ' || name[name_length - 1] == '\t'))
        name_length--;
    name[name_length] = '\0';
    const char *plugin_name = name + sizeof plugin_prefix - 1;
    /* A section given twice is a mistake: whoever reads the second misses the first's keys. */
    int *seen = strcmp(name, "rpcd") == 0  ? &state->rpcd_line
                : strcmp(name, "mcp") == 0 ? &state->mcp_line
                                           : NULL;
    if (state->dropin && strcmp(name, "rpcd") == 0) {
        fail(state, "[rpcd] belongs in the main config file (a drop-in holds [plugin NAME] and "
                    "[mcp] tool.METHOD keys)");
        return;
    }
    if (seen) {
        if (*seen)
            fail(state, "section [%s] is given twice (first on line %d)", name, *seen);
        *seen = state->line;
        return;
    }
    if (strncmp(name, plugin_prefix, sizeof plugin_prefix - 1) == 0 && *plugin_name) {
        const cfg_plugin *first = find_plugin(state, plugin_name);
        if (first && first->file != state->file)
            fail(state, "section [%s] is given twice (first in %s, line %d)", name, first->file,
                 first->line);
        else if (first)
            fail(state, "section [%s] is given twice (first on line %d)", name, first->line);
        else if (!add_plugin(state, plugin_name))
            fail(state, "out of memory");
        return;
    }
    fail(state, "unknown section [%s] (expected [rpcd], [mcp] or [plugin NAME])", name);
}

/*
 * Hands inih one line at a time (an fgets look-alike), counting lines so that every message
 * names its own line, and refusing lines longer than inih's buffer instead of letting inih
 * split them silently.
 */
static char *read_line(char *out, int capacity, void *stream)
{
    parse_state *state = stream;
    if (*state->next == '\0')
        return NULL;
    const char *start = state->next;
    const char *newline = strchr(start, '\n');
    size_t length = newline ? (size_t)(newline - start) + 1 : strlen(start);
    state->next = start + length;
    state->line++;
    state->indented = start[0] == ' ' || start[0] == '\t';
    size_t content = length - (newline ? 1 : 0);
    if (content > 0 && start[content - 1] == '\r')
        content--;
    if (content + 2 > (size_t)capacity) {
        fail(state, "line longer than %d bytes", capacity - 2);
        strcpy(out, "\n");
        return out;
    }
    /* The content and "\n", never the "\r": a line at the limit with "\r\n" fits exactly. */
    memcpy(out, start, content);
    out[content] = '\n';
    out[content + 1] = '\0';
    check_section_header(state, start, content);
    return out;
}

/*
 * [mcp]: its own file reads it (config_mcp.c); a drop-in only names tools, the main file says
 * which methods are tools and how. Returns 1, or inih's 0 after fail.
 */
static int mcp_key(parse_state *state, const char *name, const char *value)
{
    if (state->dropin && strncmp(name, "tool.", 5) != 0)
        return fail(state,
                    "%s belongs in [mcp] of the main config file (a drop-in names its tools "
                    "with tool.METHOD)",
                    name);
    char *problem;
    if (cfg_mcp_key(state->config, &state->mcp, name, value, state->line, state->indented,
                    &problem) == 0)
        return 1;
    fail(state, "%s", problem ? problem : "out of memory");
    free(problem);
    return 0;
}

static int handle_key(void *user, const char *section, const char *name, const char *value)
{
    parse_state *state = user;
    if (state->message)
        return 0;
    if (strcmp(section, "rpcd") == 0)
        return daemon_key(state, name, value);
    if (strcmp(section, "mcp") == 0)
        return mcp_key(state, name, value);
    if (strncmp(section, plugin_prefix, sizeof plugin_prefix - 1) == 0 &&
        section[sizeof plugin_prefix - 1] != '\0') {
        const char *plugin_name = section + sizeof plugin_prefix - 1;
        cfg_plugin *plugin = find_plugin(state, plugin_name);
        if (!plugin)
            plugin = add_plugin(state, plugin_name);
        if (!plugin)
            return fail(state, "out of memory");
        return plugin_key(state, plugin, name, value);
    }
    if (section[0] == '\0')
        return fail(state, "key '%s' outside any section", name);
    return fail(state, "unknown section [%s] (expected [rpcd], [mcp] or [plugin NAME])", section);
}

/* dir/relative, or relative itself when it is absolute. New string or NULL. */
static char *join_path(const char *dir, const char *relative)
{
    char *joined;
    if (relative[0] == '/')
        return strdup(relative);
    if (asprintf(&joined, "%s/%s", dir, relative) < 0)
        return NULL;
    return joined;
}

/* Resolves the plugins' paths (from index first on) against plugin_dir; those that do not say
 * take [rpcd] isolation; each takes [rpcd] schema_format. */
static int resolve_plugins(rpcd_config *config, size_t first, char *error, size_t error_size)
{
    for (size_t i = first; i < config->plugin_count; i++) {
        cfg_plugin *plugin = &config->plugins[i];
        if (!plugin->path) {
            snprintf(error, error_size, "%s: [plugin %s] has no path", plugin->file, plugin->name);
            return -1;
        }
        char *resolved = join_path(config->plugin_dir, plugin->path);
        if (!resolved)
            return -1;
        free(plugin->path);
        plugin->path = resolved;
        if (plugin->isolation == CFG_ISOLATION_INHERIT)
            plugin->isolation = config->isolation;
        plugin->assert_format = config->schema_format == CFG_SCHEMA_FORMAT_ASSERT;
    }
    return 0;
}

static int finish(parse_state *state, const char *file_name, char *error, size_t error_size)
{
    rpcd_config *config = state->config;
    char *copy = strdup(file_name);
    if (!copy)
        return -1;
    char *config_dir = strdup(dirname(copy));
    free(copy);
    if (!config_dir)
        return -1;
    char *base =
        config->plugin_dir ? join_path(config_dir, config->plugin_dir) : strdup(config_dir);
    char *include = join_path(config_dir, config->include ? config->include : CFG_DEFAULT_INCLUDE);
    free(config_dir);
    if (!base || !include) {
        free(base);
        free(include);
        return -1;
    }
    free(config->plugin_dir);
    config->plugin_dir = base;
    free(config->include);
    config->include = include;
    return resolve_plugins(config, 0, error, error_size);
}

/*
 * The cores this process may run on: those of its CPU affinity (taskset, cpusets), which is
 * what bounds the workers that can run at once, and one system call where sysconf reads /sys.
 */
static size_t usable_cores(void)
{
    cpu_set_t cores;
    if (sched_getaffinity(0, sizeof cores, &cores) == 0 && CPU_COUNT(&cores) > 0)
        return (size_t)CPU_COUNT(&cores);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (size_t)online : 1;
}

/* Hands the text to inih. Returns 0, or -1 with the first problem, file and line, in error. */
static int parse(parse_state *state, const char *file_name, char *error, size_t error_size)
{
    int line = ini_parse_stream(read_line, state, handle_key, state);
    if (line == -2)
        snprintf(error, error_size, "%s: out of memory", file_name);
    else if (line > 0 && (!state->message || line < state->message_line))
        snprintf(error, error_size, "%s:%d: syntax error (expected [section] or key = value)",
                 file_name, line);
    else if (state->message)
        snprintf(error, error_size, "%s:%d: %s", file_name, state->message_line, state->message);
    else
        return 0;
    return -1;
}

static int load(const char *text, const char *file_name, rpcd_config **out, char *error,
                size_t error_size)
{
    rpcd_config *config = calloc(1, sizeof *config);
    if (!config) {
        snprintf(error, error_size, "%s: out of memory", file_name);
        return -1;
    }
    cfg_set_defaults(config);
    /* As many workers as cores, and at least two, so that one slow call never blocks all. */
    size_t cores = usable_cores();
    config->limits.workers = cores > 2 ? cores : 2;
    config->path = strdup(file_name);
    parse_state state = {.config = config, .next = text, .file = config->path};

    int status = -1;
    if (!config->path) {
        snprintf(error, error_size, "%s: out of memory", file_name);
    } else if (parse(&state, file_name, error, error_size) != 0) {
        /* error says why */
    } else if (finish(&state, file_name, error, error_size) != 0) {
        if (!error[0])
            snprintf(error, error_size, "%s: out of memory", file_name);
    } else {
        status = 0;
    }
    /* Unset: room for every worker to hold a 1 MiB message, and at least 2 MiB. */
    if (config->limits.max_in_flight_bytes == 0)
        config->limits.max_in_flight_bytes =
            config->limits.workers > 2 ? config->limits.workers * CFG_IN_FLIGHT_BYTES_PER_WORKER
                                       : 2 * CFG_IN_FLIGHT_BYTES_PER_WORKER;
    free(state.message);
    if (status != 0) {
        cfg_free(config);
        return -1;
    }
    *out = config;
    return 0;
}

int cfg_load_string(const char *text, const char *file_name, rpcd_config **out, char *error,
                    size_t error_size)
{
    error[0] = '\0';
    return load(text, file_name, out, error, error_size);
}

static void free_pairs(cfg_pair *pairs, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(pairs[i].key);
        free(pairs[i].value);
    }
    free(pairs);
}

/* Frees what a plugin section holds (not the section itself, which is in an array). */
static void free_plugin(cfg_plugin *plugin)
{
    free_pairs(plugin->pairs, plugin->pair_count);
    free(plugin->confinement.user);
    free(plugin->confinement.group);
    free(plugin->confinement.read_paths);
    free(plugin->confinement.write_paths);
    free_pairs(plugin->timeouts, plugin->timeout_count);
    cfg_policy_free(&plugin->policy);
    free(plugin->name);
    free(plugin->path);
}

/* Undoes what the drop-in at the end of config->dropins added: the plugins from index plugins
 * on, the [mcp] names from index names on, and its place in the list. */
static void drop_last_dropin(rpcd_config *config, size_t plugins, size_t names)
{
    while (config->plugin_count > plugins)
        free_plugin(&config->plugins[--config->plugin_count]);
    while (config->mcp_name_count > names) {
        cfg_pair *pair = &config->mcp_names[--config->mcp_name_count];
        free(pair->key);
        free(pair->value);
    }
    config->dropin_count--;
    free(config->dropins[config->dropin_count]);
    free(config->dropin_skipped[config->dropin_count]);
}

int cfg_add_dropin(rpcd_config *config, const char *text, const char *file_name, char *error,
                   size_t error_size)
{
    error[0] = '\0';
    if (cfg_list_dropin(config, file_name) != 0) {
        snprintf(error, error_size, "%s: out of memory", file_name);
        return -1;
    }
    size_t first = config->plugin_count, names = config->mcp_name_count;
    const char *file = config->dropins[config->dropin_count - 1];
    parse_state state = {.config = config, .next = text, .file = file, .dropin = true};
    int status = parse(&state, file_name, error, error_size);
    free(state.message);
    if (status == 0 && resolve_plugins(config, first, error, error_size) != 0) {
        if (!error[0])
            snprintf(error, error_size, "%s: out of memory", file_name);
        status = -1;
    }
    if (status != 0)
        drop_last_dropin(config, first, names);
    return status;
}

void cfg_free(rpcd_config *config)
{
    if (!config)
        return;
    for (size_t i = 0; i < config->plugin_count; i++)
        free_plugin(&config->plugins[i]);
    free_pairs(config->mcp_names, config->mcp_name_count);
    cfg_policy_free(&config->mcp_policy);
    free(config->mcp_tools);
    free(config->mcp_instructions);
    free(config->plugins);
    free(config->plugin_dir);
    free(config->include);
    for (size_t i = 0; i < config->dropin_count; i++) {
        free(config->dropins[i]);
        free(config->dropin_skipped[i]);
    }
    free(config->dropins);
    free(config->dropin_skipped);
    free(config->user);
    free(config->control_socket);
    free(config->control_socket_mode);
    free(config->control_socket_owner);
    free(config->control_socket_group);
    free(config->group);
    free(config->path);
    free(config);
}

const char *cfg_plugin_get(cfg_plugin *plugin, const char *key)
{
    for (size_t i = 0; i < plugin->pair_count; i++) {
        if (strcmp(plugin->pairs[i].key, key) == 0) {
            plugin->pairs[i].used = true;
            return plugin->pairs[i].value;
        }
    }
    return NULL;
}
