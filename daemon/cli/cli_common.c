/* SPDX-License-Identifier: MIT */
/*
 * What the one-shot commands share: where the methods come from (a config file, or one plugin
 * and its keys given on the command line, made into a config in memory) and the start of the
 * core from it, through the loader that serving uses.
 */
#include "cli/cli.h"

#include "base/log.h"
#include "wire/protocol_fds.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What a config made in memory is called in messages; paths in it are absolute. */
#define CLI_CONFIG_NAME "(command line)"

int cli_source_option(cli_source *source, int option, const char *argument)
{
    switch (option) {
    case 'c': source->config_path = argument; return 1;
    case CLI_OPT_PLUGIN: source->plugin_path = argument; return 1;
    case CLI_OPT_INSECURE: source->insecure = true; return 1;
    case 'v': source->log_level = LOG_DEBUG; return 1;
    case 'q': source->log_level = LOG_ERROR; return 1;
    case CLI_OPT_SET:
        /* A line of the config made in memory: a key, never a section or a comment. */
        if (!strchr(argument, '=') || strchr("=[;#", argument[0]) || strpbrk(argument, "\r\n")) {
            fprintf(stderr, "rpcd: --set takes key=value on one line, not '%s'\n", argument);
            return -1;
        }
        if (source->set_count == CLI_MAX_SETS) {
            fprintf(stderr, "rpcd: more than %d --set\n", CLI_MAX_SETS);
            return -1;
        }
        source->sets[source->set_count++] = argument;
        return 1;
    default: return 0;
    }
}

/* The section name for a plugin file: its base name without .so, in letters, digits, - and _. */
static void section_name(const char *path, char *out, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t length = strcspn(base, ".");
    if (length == 0 || length >= size)
        length = 0;
    for (size_t i = 0; i < length; i++) {
        char c = base[i];
        bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        out[i] = plain || c == '-' ? c : '_';
    }
    out[length] = '\0';
    if (length == 0)
        snprintf(out, size, "plugin");
}

/* The config text for --plugin and --set: one plugin section. Returns new text, or NULL. */
static char *plugin_config_text(const cli_source *source)
{
    char cwd[PATH_MAX], name[64];
    const char *path = source->plugin_path;
    while (path[0] == '.' && path[1] == '/')
        path += 2 + strspn(path + 2, "/"); /* messages name dir/x.so, not dir/./x.so */
    if (path[0] != '/' && !getcwd(cwd, sizeof cwd))
        return NULL;
    section_name(path, name, sizeof name);
    char *text = NULL;
    size_t size = 0;
    FILE *stream = open_memstream(&text, &size);
    if (!stream)
        return NULL;
    fprintf(stream, "[plugin %s]\npath = %s%s%s\n", name, path[0] == '/' ? "" : cwd,
            path[0] == '/' ? "" : "/", path);
    for (size_t i = 0; i < source->set_count; i++) {
        const char *set = source->sets[i];
        fprintf(stream, "%.*s = %s\n", (int)(strchr(set, '=') - set), set, strchr(set, '=') + 1);
    }
    if (fclose(stream) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* Reads or makes the config of source. Returns 0 and *out, or an exit status (said). */
static int read_config(const cli_source *source, rpcd_config **out)
{
    char error[1024];
    if (source->config_path) {
        if (cfg_load(source->config_path, !source->insecure, out, error, sizeof error) == 0)
            return 0;
        log_message(LOG_ERROR, "%s", error);
        return CLI_EXIT_START_UP;
    }
    char *text = plugin_config_text(source);
    if (!text) {
        log_message(LOG_ERROR,
                    "cannot make a config for %s: out of memory or no working "
                    "directory",
                    source->plugin_path);
        return CLI_EXIT_SOFTWARE;
    }
    int status = cfg_load_string(text, CLI_CONFIG_NAME, out, error, sizeof error);
    free(text);
    if (status != 0) {
        log_message(LOG_ERROR, "%s", error);
        return CLI_EXIT_START_UP;
    }
    (*out)->insecure = source->insecure;
    return 0;
}

/* The command's output once cli_start has taken it from plugins; NULL before. */
static FILE *command_output;

FILE *cli_output(void)
{
    return command_output ? command_output : stdout;
}

int cli_start(const cli_source *source, rpcd_runtime *runtime)
{
    if (!source->config_path == !source->plugin_path) {
        fprintf(stderr, "rpcd: give either -c FILE or --plugin X.so (try rpcd --help)\n");
        return CLI_EXIT_USAGE;
    }
    if (source->config_path && source->set_count > 0) {
        fprintf(stderr, "rpcd: --set goes with --plugin; with -c, keys are in the file\n");
        return CLI_EXIT_USAGE;
    }
    rpcd_config *config;
    int status = read_config(source, &config);
    if (status != 0)
        return status;
    if (!command_output) {
        int fd;
        if (pfd_take_output(&fd) != 0 || !(command_output = fdopen(fd, "w"))) {
            fprintf(stderr, "rpcd: cannot keep plugins off the output: %s\n", strerror(errno));
            cfg_free(config);
            return CLI_EXIT_SOFTWARE;
        }
    }
    /* Quieter than serving: the output is the command's, and info lines would crowd it. */
    rt_flags flags = {source->log_level >= 0 ? source->log_level : LOG_WARNING, source->insecure,
                      true, false};
    char error[1024];
    if (rt_start_config(config, &flags, runtime, error, sizeof error) != 0) {
        log_message(LOG_ERROR, "%s", error);
        return CLI_EXIT_START_UP;
    }
    return 0;
}

void cli_usage(FILE *stream)
{
    fprintf(stream,
            "\n"
            "One-shot commands (the core started in-process; SOURCE is -c FILE, or\n"
            "--plugin X.so with any number of --set KEY=VALUE for its config keys;\n"
            "--insecure, -v and -q as above):\n"
            "  rpcd call SOURCE [OPTION]... METHOD [PARAMS | -]\n"
            "      --plugin=X.so      the methods of X.so alone, no config file\n"
            "      --set=KEY=VALUE    a config key for --plugin's plugin\n"
            "      --compact          print the result on one line (default when not a terminal)\n"
            "      --pretty           print the result indented (default on a terminal)\n"
            "      --timeout=MS       give up after MS milliseconds: cancel, exit 5\n"
            "      --cancel-after=MS  send $/cancelRequest after MS milliseconds\n"
            "      --progress         ask for progress, shown on stderr\n"
            "  rpcd list SOURCE [--json]\n"
            "      --json             print the methods as a JSON array\n"
            "  rpcd inspect X.so [--json]\n"
            "\n"
            "Exit status of call: 0 result, 1 the method failed (error response), 2 method\n"
            "not found, 3 bad params, 4 cancelled, 5 timed out, 64 bad usage, 78 config or\n"
            "plugin error, 70 internal failure.\n");
    cli_ctl_usage(stream);
}
