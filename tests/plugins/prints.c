/* SPDX-License-Identifier: MIT */
/*
 * Fixture: a plugin that prints from its init, as a careless library would, on stdout and
 * stderr: plain lines, bytes that are not UTF-8, a line of 1 MiB, one of control bytes (each
 * escaped at its longest in a JSON log), and a last line without its newline; in a plugin host,
 * a raw line on the host's log descriptor too; "prints done" on stderr comes last of all. Its
 * constructor prints a line on each stream before any of that (when rpcd loads it), and
 * prints.ping one on stderr (during a call).
 */
#include <rpcd/plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { LONG_LINE = 1024 * 1024 };

static const rpcd_host_api *host;

/* A plugin host's log descriptor (CHAN_LOG_FD in rpcd's source): what a plugin could find by
 * looking through /proc/self/fd. */
enum { HOST_LOG_FD = 7 };

/* Whether this process is a plugin host (isolation = process), by the name hosts give
 * themselves; in rpcd's own process the descriptor would be one of rpcd's. */
static int in_host(void)
{
    char comm[32] = "";
    FILE *file = fopen("/proc/self/comm", "re");
    if (!file)
        return 0;
    int found = fgets(comm, sizeof comm, file) && strcmp(comm, "rpcd-host\n") == 0;
    fclose(file);
    return found;
}

/* What a library linked into a plugin may do when it is loaded, before any of rpcd's calls. */
__attribute__((constructor)) static void prints_loaded(void)
{
    printf("loaded on stdout\n");
    fflush(stdout);
    fprintf(stderr, "loaded on stderr\n");
}

/* prints.ping: true. */
static int ping(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    fprintf(stderr, "called on stderr\n");
    return host->call_result(call, "true", 4);
}

static int prints_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state,
                       char *error, size_t error_size)
{
    (void)state;
    host = host_api;
    char *line = malloc(LONG_LINE);
    if (!line) {
        snprintf(error, error_size, "out of memory");
        return RPCD_ERR_NO_MEMORY;
    }
    memset(line, 'x', LONG_LINE);
    printf("hello on stdout\n");
    printf("bad \xff\xfe bytes\n");
    fwrite(line, 1, LONG_LINE, stdout);
    printf("\nafter the long line\n");
    fflush(stdout);
    fprintf(stderr, "hello on stderr\n");
    memset(line, '\x01', LONG_LINE);
    fwrite(line, 1, LONG_LINE, stderr);
    fputc('\n', stderr);
    ssize_t ignored = write(STDOUT_FILENO, "no newline at the end", 21);
    (void)ignored;
    /* In a plugin host, its log descriptor too, found as a hostile plugin would: the one open
     * past stderr that is a pipe (the channel's are close-on-exec too, but the log's is the
     * last of them). Raw text there must not reach rpcd's log as it is. */
    if (in_host()) {
        static const char raw[] = "raw on the log descriptor\n";
        ignored = write(HOST_LOG_FD, raw, sizeof raw - 1);
    }
    free(line);
    fprintf(stderr, "prints done\n");
    rpcd_method method = rpcd_method_new("prints.ping", ping);
    return host->register_method(plugin, &method);
}

RPCD_PLUGIN_DEFINE("prints", "1.0.0", prints_init, NULL);
