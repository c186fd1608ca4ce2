/* SPDX-License-Identifier: MIT */
/*
 * The one-shot commands (rpcd call, list, inspect): the daemon's own core started in-process
 * from a config file or from one plugin given on the command line, without serving stdin.
 */
#ifndef RPCD_CLI_H
#define RPCD_CLI_H

#include "serve/runtime.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* Exit statuses of the one-shot commands (rpcd(8), "ONE-SHOT COMMANDS"). */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_METHOD_FAILED = 1, /* an error response other than those below */
    CLI_EXIT_NOT_FOUND = 2,     /* -32601 */
    CLI_EXIT_BAD_PARAMS = 3,    /* -32602 */
    CLI_EXIT_CANCELLED = 4,     /* -32800, after --cancel-after */
    CLI_EXIT_TIMED_OUT = 5,     /* --timeout passed first */
    CLI_EXIT_USAGE = 64,
    CLI_EXIT_UNAVAILABLE = 69, /* ctl: no control socket answers */
    CLI_EXIT_SOFTWARE = 70,
    CLI_EXIT_START_UP = 78, /* config or plugin error, as when serving */
};

enum { CLI_MAX_SETS = 64 };

/* Where the methods come from: -c FILE, or --plugin X.so with --set key=value. */
typedef struct cli_source {
    const char *config_path; /* NULL: plugin_path */
    const char *plugin_path;
    const char *sets[CLI_MAX_SETS];
    size_t set_count;
    bool insecure;
    int log_level; /* -1: warning */
} cli_source;

/*
 * Takes one option of a source from getopt_long's result (option, optarg): -c, --plugin,
 * --set, --insecure, -v, -q. Returns 1 when it was one, 0 when not, -1 on bad usage (said).
 */
int cli_source_option(cli_source *source, int option, const char *argument);

/* The getopt_long entries of the source options, their values as cli_source_option knows. */
enum { CLI_OPT_PLUGIN = 1000, CLI_OPT_SET, CLI_OPT_INSECURE };
#define CLI_SOURCE_OPTIONS                                                                         \
    {"config", required_argument, NULL, 'c'}, {"plugin", required_argument, NULL, CLI_OPT_PLUGIN}, \
        {"set", required_argument, NULL, CLI_OPT_SET},                                             \
        {"insecure", no_argument, NULL, CLI_OPT_INSECURE}, {"verbose", no_argument, NULL, 'v'},    \
    {                                                                                              \
        "quiet", no_argument, NULL, 'q'                                                            \
    }

/*
 * Starts the core from source through rt_start_config, the plugins loaded (and checked) as when
 * serving. First, stdout moves to a stream of the command's own (cli_output) and fd 1 then
 * reaches stderr: what a plugin prints (in its init, its handlers or a host of its own) goes to
 * the log, never into the output a script reads. Returns 0 and runtime, or CLI_EXIT_START_UP /
 * CLI_EXIT_USAGE / CLI_EXIT_SOFTWARE with the error said.
 */
int cli_start(const cli_source *source, rpcd_runtime *runtime);

/* Where a command prints its output: stdout as it was before cli_start. Not thread-safe. */
FILE *cli_output(void);

/* The methods of runtime as a JSON array (new), in registration order: name, plugin, flags,
 * description, params schema, MCP tool name (null when not a tool). NULL when out of memory. */
json_t *cli_methods_json(const rpcd_runtime *runtime);
/* The same, in words on stream. */
void cli_print_methods(const rpcd_runtime *runtime, FILE *stream);
/* Prints value on cli_output, indented, with a newline. Returns 0, or an exit status. */
int cli_print_json(json_t *value);

/* The subcommands: argv[0] is the subcommand's name. Return the exit status. */
int cli_call_main(int argc, char **argv);
int cli_list_main(int argc, char **argv);
int cli_inspect_main(int argc, char **argv);
/* rpcd ctl: a client of the control socket (cli_ctl.c), and its lines of --help. */
int cli_ctl_main(int argc, char **argv);
void cli_ctl_usage(FILE *stream);

/* The help of the subcommands, for rpcd --help. */
void cli_usage(FILE *stream);

#endif
