/* SPDX-License-Identifier: MIT */
/*
 * The config file: INI, read with libinih. [rpcd] holds the daemon's settings, each
 * [plugin NAME] one plugin's path, whether it is required, its confinement, and its own keys.
 */
#ifndef RPCD_CONFIG_H
#define RPCD_CONFIG_H

#include "base/serving_limits.h"
#include "base/token_bucket.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct cfg_pair {
    char *key;   /* owned */
    char *value; /* owned */
    bool used;   /* the plugin asked for it */
} cfg_pair;

/* seccomp = default | strict | off in a plugin section; unset is default. */
typedef enum cfg_seccomp {
    CFG_SECCOMP_UNSET = 0,
    CFG_SECCOMP_DEFAULT,
    CFG_SECCOMP_STRICT,
    CFG_SECCOMP_OFF,
} cfg_seccomp;

/*
 * A plugin section's confinement keys, for a plugin in a process of its own (daemon/isolation/
 * sandbox.h turns them into what the process applies). 0 or NULL: not given.
 */
typedef struct cfg_confinement {
    size_t limit_memory;      /* bytes of address space */
    size_t limit_cpu_seconds; /* seconds of CPU time */
    size_t limit_open_files;  /* file descriptors */
    size_t limit_processes;   /* processes of the host's user */
    char *user;               /* owned */
    char *group;              /* owned */
    int seccomp;              /* cfg_seccomp */
    char *read_paths;         /* owned: absolute paths separated by spaces */
    char *write_paths;        /* owned: the same */
} cfg_confinement;

/* One method's own limits in a plugin section: rate_limit.METHOD, max_result_bytes.METHOD. */
typedef struct cfg_tool_rule {
    char *method;            /* owned */
    tb_rate rate;            /* rate_limit.METHOD; count 0: not given */
    size_t max_result_bytes; /* max_result_bytes.METHOD; 0: not given */
} cfg_tool_rule;

/*
 * The tool policy keys of [mcp] (for every method) or of a plugin section (for its methods):
 * which methods are served, how often, and how large a result may be (config_policy.h).
 */
typedef struct cfg_policy {
    char *allow;             /* owned: tools_allow, glob patterns separated by commas, or NULL */
    char *deny;              /* owned: tools_deny, the same */
    tb_rate rate;            /* rate_limit; count 0: not given */
    size_t max_result_bytes; /* 0: not given */
    cfg_tool_rule *tools;    /* owned: the .METHOD keys, one entry per method (plugin sections) */
    size_t tool_count;
    unsigned seen; /* which of the four keys above were given (once each) */
} cfg_policy;

/* Where a plugin runs: in rpcd's process, or in a host process of its own. */
enum { CFG_ISOLATION_NONE = 0, CFG_ISOLATION_PROCESS = 1, CFG_ISOLATION_INHERIT = -1 };

/* What JSON Schema's "format" does in params schemas: annotates, or fails values not of it. */
enum { CFG_SCHEMA_FORMAT_ANNOTATION = 0, CFG_SCHEMA_FORMAT_ASSERT = 1 };

typedef struct cfg_plugin {
    char *name;        /* owned: NAME of [plugin NAME] */
    const char *file;  /* borrowed from the config: the file its section is in */
    int line;          /* where its section header is */
    char *path;        /* owned: resolved against plugin_dir; NULL when the section had none */
    bool required;     /* refuse to start when it fails to load (default true) */
    int required_line; /* where required was given, 0 when it was not */
    cfg_confinement confinement; /* the confinement keys, which the plugin never sees */
    cfg_pair *pairs;             /* owned: every other key, for the plugin */
    size_t pair_count;
    int isolation;      /* CFG_ISOLATION_* (unset: [rpcd] isolation) */
    size_t timeout_ms;  /* a call's deadline, in process or isolated, 0: none */
    cfg_pair *timeouts; /* owned: timeout_ms.METHOD, key = the method, value = checked ms */
    size_t timeout_count;
    size_t max_restarts;       /* restarts of its host allowed per minute */
    size_t scheduler_slice_us; /* the time slice its host asks the kernel for; 0: the kernel's */
    bool validate_arguments;   /* params checked against params_schema before a call (true) */
    bool assert_format;        /* [rpcd] schema_format = assert, copied at load */
    unsigned seen;             /* which of cfg_isolation_key's keys were given (once each) */
    cfg_policy policy;         /* tools_allow, tools_deny, rate_limit, max_result_bytes(.METHOD) */
} cfg_plugin;

typedef struct rpcd_config {
    char *path;     /* owned: the file read */
    int log_level;  /* LOG_* (default info) */
    int log_format; /* LOG_FORMAT_* (default text) */
    /* max_line_bytes (default 32 MiB), max_depth (512), max_batch (1000), workers (the cores
     * rpcd may run on, at least 2), max_in_flight (1024), max_in_flight_bytes (1 MiB per worker,
     * at least 2 MiB): copied whole into every settings struct that needs them */
    serving_limits limits;
    size_t shutdown_grace_ms; /* how long calls may finish after SIGTERM (default 1000) */
    char *plugin_dir;         /* owned: where relative plugin paths start (default: the
                                 config file's directory) */
    char *include;            /* owned: the drop-in files, a glob(7) pattern made absolute
                                 (default: CFG_DEFAULT_INCLUDE beside the config file) */
    char **dropins;           /* owned: the drop-in files include matched, in the order read */
    char **dropin_skipped;    /* owned, one per drop-in: NULL when it was read, else why it was
                                 skipped (one line, without its path) */
    size_t dropin_count;
    bool strict;       /* a broken drop-in stops the start and a reload (default false:
                          it is skipped and the rest serve) */
    bool insecure;     /* load files whatever their owner and permissions (--insecure) */
    bool no_new_privs; /* set PR_SET_NO_NEW_PRIVS before loading plugins (default true) */
    bool watch;        /* reload when a file the config reads changes (default false) */
    bool log_calls;    /* one access log line per call (default false) */
    char *user;        /* owned: the user to run as once plugins are loaded, or NULL */
    char *group;       /* owned: the group to run as (default: the user's), or NULL */
    int isolation;     /* CFG_ISOLATION_* of plugins that do not say (default none) */
    int schema_format; /* CFG_SCHEMA_FORMAT_*: what "format" does in params schemas */
    /* The control socket (daemon/control/), read at start only: its path (owned, NULL: none),
     * its mode as octal text (default 0600), the user that owns it and may connect, and the group
     * whose members may connect too (owned, or NULL); whether calls are counted for metrics. */
    char *control_socket;
    char *control_socket_mode;
    char *control_socket_owner;
    char *control_socket_group;
    bool control_metrics;
    /* MCP's tasks (2026-07-28): how long a call of a task tool runs before it becomes a task
     * (default 1000), how long a task is kept (3600000), and how many tasks, holding how many
     * bytes, are kept at once (256, 64 MiB). */
    size_t task_after_ms;
    size_t task_ttl_ms;
    size_t max_tasks;
    size_t max_task_bytes;
    char *mcp_tools;        /* owned: [mcp] tools, "all" (default, NULL), "none" or a list */
    int mcp_tool_names;     /* [mcp] tool_names: CFG_TOOL_NAMES_* (default portable) */
    char *mcp_instructions; /* owned: [mcp] instructions for the model, or NULL */
    cfg_pair *mcp_names;    /* owned: [mcp] tool.<method> = <tool name>, key = the method */
    size_t mcp_name_count;
    cfg_policy mcp_policy; /* [mcp] tools_allow, tools_deny, rate_limit, max_result_bytes */
    cfg_plugin *plugins;   /* owned, in file order: the load order */
    size_t plugin_count;
} rpcd_config;

enum {
    CFG_DEFAULT_MAX_LINE_BYTES = 32 * 1024 * 1024,
    CFG_DEFAULT_MAX_DEPTH = 512,
    CFG_DEFAULT_MAX_BATCH = 1000,
    CFG_DEFAULT_MAX_IN_FLIGHT = 1024,
    CFG_IN_FLIGHT_BYTES_PER_WORKER = 1024 * 1024, /* max_in_flight_bytes unset: per worker */
    CFG_DEFAULT_SHUTDOWN_GRACE_MS = 1000,
    CFG_DEFAULT_TASK_AFTER_MS = 1000,
    CFG_DEFAULT_TASK_TTL_MS = 3600000,
    CFG_DEFAULT_MAX_TASKS = 256,
    CFG_DEFAULT_MAX_TASK_BYTES = 64 * 1024 * 1024,
    CFG_MAX_FILE_BYTES = 1024 * 1024,     /* a config is a page of settings, never more than this */
    CFG_DEFAULT_MAX_RESTARTS = 10,        /* restarts of an isolated plugin's host per minute */
    CFG_DEFAULT_SCHEDULER_SLICE_US = 500, /* shorter than the kernel's own on any machine */
    CFG_MAX_TIMEOUT_MS = 24 * 3600 * 1000,
};

/* Which tool names [mcp] tool_names allows. */
enum cfg_tool_names {
    CFG_TOOL_NAMES_PORTABLE,      /* ^[a-zA-Z0-9_-]{1,64}$: what every host and model API takes */
    CFG_TOOL_NAMES_SPECIFICATION, /* ^[a-zA-Z0-9_.-]{1,128}$: what MCP allows */
};

/* How the parser reads a key's value. */
typedef enum cfg_key_type {
    CFG_KEY_SIZE,       /* a decimal integer from minimum to maximum */
    CFG_KEY_BOOL,       /* true, yes or 1; false, no or 0 */
    CFG_KEY_STRING,     /* any text but the empty one */
    CFG_KEY_LOG_LEVEL,  /* error, warning, info or debug */
    CFG_KEY_LOG_FORMAT, /* text or json (an int) */
    CFG_KEY_SECCOMP,    /* default, strict or off */
    CFG_KEY_PATHS,      /* absolute paths separated by spaces */

    CFG_KEY_ISOLATION,     /* none or process (an int) */
    CFG_KEY_SCHEMA_FORMAT, /* annotation or assert (an int, CFG_SCHEMA_FORMAT_*) */
    CFG_KEY_OWN,           /* read by its section's own code (plugin sections, [mcp]) */
} cfg_key_type;

/*
 * One key the parser accepts. Every [rpcd] key, and every confinement key of plugin sections, is
 * read from this description alone; path, required and the keys of [mcp] are listed so that the
 * set of accepted keys can be enumerated (a plugin section also takes any other key, for its
 * plugin).
 */
typedef struct cfg_key {
    const char *section; /* "rpcd", "plugin NAME" or "mcp" */
    const char *name;    /* "tool.METHOD" stands for tool. and any method name */
    cfg_key_type type;
    size_t minimum; /* CFG_KEY_SIZE: the range */
    size_t maximum;
    size_t default_value; /* [rpcd]: what an unset key holds (a bool's 0 or 1, a log level);
                             0 for a size derived from others at load (workers,
                             max_in_flight_bytes), unused for strings (unset is NULL) */
    size_t offset;        /* [rpcd]: where the value goes in rpcd_config; a plugin section's
                             key of another type than CFG_KEY_OWN: where in cfg_plugin */
} cfg_key;

/* The number of keys the parser knows, and each of them (borrowed, static), in file order. */
size_t cfg_key_count(void);
const cfg_key *cfg_key_at(size_t index);

/* What include is when the config does not set it, relative to the config file's directory. */
#define CFG_DEFAULT_INCLUDE "rpcd.conf.d/*.conf"

/*
 * Reads and checks a config file and its drop-ins: the files include matches whose names end in
 * ".conf", in lexical order (a pattern matching nothing, or a directory that does not exist, adds
 * none), each holding [plugin NAME] sections and [mcp] tool.METHOD keys, read as if they followed
 * the config file. Each file is opened once (fsafe_open: with check, it and every directory on its
 * way must be safe from other users) and read from that descriptor; it may hold at most
 * CFG_MAX_FILE_BYTES and no NUL byte. A drop-in that cannot be read or has a mistake is skipped
 * whole (config->dropin_skipped says why) unless [rpcd] strict = true, where it fails the load
 * like a mistake in the config file. Sets config->insecure to !check. Returns 0 and *out (new,
 * free with cfg_free), or -1 with a one-line message in error that names the file and, where there
 * is one, the line.
 */
int cfg_load(const char *path, bool check, rpcd_config **out, char *error, size_t error_size);

/* Same from text in memory; file_name is only used in messages and to resolve paths. */
int cfg_load_string(const char *text, const char *file_name, rpcd_config **out, char *error,
                    size_t error_size);

/*
 * Adds a drop-in's text (file_name: its path, copied into config->dropins) to a config made by
 * cfg_load_string: its [plugin NAME] sections (paths resolved against plugin_dir) and its [mcp]
 * tool.METHOD keys. [rpcd], [mcp] keys other than tool.METHOD, and a section or key given before
 * in any file are refused. Returns 0, or -1 with a one-line message naming the file and line in
 * error; config is then as it was before the call.
 */
int cfg_add_dropin(rpcd_config *config, const char *text, const char *file_name, char *error,
                   size_t error_size);

/*
 * Lists the drop-in file_name as skipped: in config->dropins, with why (error, the message that
 * refused it: a leading "FILE:" is dropped, "FILE:LINE:" becomes "line LINE:"). Returns 0, or -1
 * when memory runs out.
 */
int cfg_skip_dropin(rpcd_config *config, const char *file_name, const char *error);

/* Lists file_name (copied) at the end of config->dropins, not skipped: cfg_add_dropin's and
 * cfg_skip_dropin's first step. Returns 0, or -1 when memory runs out (config unchanged). */
int cfg_list_dropin(rpcd_config *config, const char *file_name);

/* Logs one error line for each drop-in config skipped: "drop-in FILE skipped: WHY". */
void cfg_log_skipped_dropins(const rpcd_config *config);

void cfg_free(rpcd_config *config);

/* A plugin's key, or NULL. Marks it used. */
const char *cfg_plugin_get(cfg_plugin *plugin, const char *key);

#endif
