/* SPDX-License-Identifier: MIT */
/*
 * rpcd ctl: a client of a serving rpcd's control socket (docs/control.md). One request, its
 * answer printed as a table or text, or with --json as the result itself.
 */
#include "cli/cli.h"

#include "config/config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef RPCD_DEFAULT_CONFIG
#define RPCD_DEFAULT_CONFIG "/etc/rpcd/rpcd.conf"
#endif

/* An answer is read up to this: metrics of many methods run to megabytes, never to this. */
enum { MOST_ANSWER_BYTES = 256 * 1024 * 1024 };

void cli_ctl_usage(FILE *stream)
{
    fprintf(stream,
            "\n"
            "A serving rpcd's control socket ([rpcd] control_socket):\n"
            "  rpcd ctl [--socket=PATH] [-c FILE] status|calls|reload|metrics|cancel ID [--json]\n"
            "      --socket=PATH      the control socket (default: control_socket of -c FILE)\n"
            "      --json             print the answer's result as JSON\n"
            "\n"
            "Exit status of ctl: 0 done, 1 refused (an error answer, or cancel found no call),\n"
            "64 bad usage, 69 no control socket to talk to, 78 config error.\n");
}

/* The socket path: --socket, or control_socket of the config. Returns 0 or an exit status. */
static int socket_path(const char *given, const char *config_path, char **out)
{
    if (given) {
        *out = strdup(given);
        return *out ? 0 : CLI_EXIT_SOFTWARE;
    }
    rpcd_config *config = NULL;
    char error[1024];
    if (cfg_load(config_path, true, &config, error, sizeof error) != 0) {
        fprintf(stderr, "rpcd ctl: %s (or give --socket)\n", error);
        return CLI_EXIT_START_UP;
    }
    int status = 0;
    if (!config->control_socket) {
        fprintf(stderr, "rpcd ctl: %s sets no control_socket (or give --socket)\n", config_path);
        status = CLI_EXIT_START_UP;
    } else if (!(*out = strdup(config->control_socket))) {
        status = CLI_EXIT_SOFTWARE;
    }
    cfg_free(config);
    return status;
}

/* Sends request (one line) on a new connection to path and reads the answer's line into *out
 * (new, NUL-terminated). Returns 0 or an exit status. */
static int exchange(const char *path, const char *request, char **out)
{
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof address.sun_path) {
        fprintf(stderr, "rpcd ctl: %s: the path is too long for a socket\n", path);
        return CLI_EXIT_USAGE;
    }
    memcpy(address.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        fprintf(stderr, "rpcd ctl: cannot connect to %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return CLI_EXIT_UNAVAILABLE;
    }
    size_t length = strlen(request), used = 0, size = 0;
    char *answer = NULL;
    int status = send(fd, request, length, MSG_NOSIGNAL) == (ssize_t)length ? 0 : -1;
    while (status == 0 && !(used && answer[used - 1] == '\n')) {
        if (used + 4096 + 1 > size) {
            char *bigger =
                size < MOST_ANSWER_BYTES ? realloc(answer, size ? size * 2 : 65536) : NULL;
            if (!bigger) {
                status = -1;
                break;
            }
            answer = bigger;
            size = size ? size * 2 : 65536;
        }
        ssize_t got = recv(fd, answer + used, size - used - 1, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            status = -1;
        else
            used += (size_t)got;
    }
    close(fd);
    if (status != 0) {
        fprintf(stderr, "rpcd ctl: %s: no answer (%s)\n", path, errno ? strerror(errno) : "closed");
        free(answer);
        return CLI_EXIT_UNAVAILABLE;
    }
    answer[used] = '\0';
    *out = answer;
    return 0;
}

/* ms as "1h02m", "3m07s" or "1.250s" into text. */
static void format_duration(long long ms, char *text, size_t size)
{
    long long seconds = ms / 1000;
    if (seconds >= 3600)
        snprintf(text, size, "%lldh%02lldm", seconds / 3600, seconds / 60 % 60);
    else if (seconds >= 60)
        snprintf(text, size, "%lldm%02llds", seconds / 60, seconds % 60);
    else
        snprintf(text, size, "%lld.%03llds", seconds, ms % 1000);
}

static void print_status(json_t *result)
{
    char uptime[32];
    format_duration(json_integer_value(json_object_get(result, "uptime_ms")), uptime,
                    sizeof uptime);
    printf("rpcd %s, up %s", json_string_value(json_object_get(result, "version")), uptime);
    printf(", generation %lld, %lld calls in flight (%lld queued), metrics %s\n",
           json_integer_value(json_object_get(result, "generation")),
           json_integer_value(json_object_get(result, "calls_in_flight")),
           json_integer_value(json_object_get(result, "calls_queued")),
           json_is_true(json_object_get(result, "metrics")) ? "on" : "off");
    printf("%-20s %-9s %-9s %-8s %-14s %s\n", "PLUGIN", "ISOLATION", "HOST PID", "RESTARTS",
           "DEADLINE KILLS", "LAST CRASH");
    size_t index;
    json_t *plugin;
    json_array_foreach(json_object_get(result, "plugins"), index, plugin)
    {
        json_t *pid = json_object_get(plugin, "host_pid");
        json_t *crash = json_object_get(plugin, "last_crash");
        char pid_text[24] = "-";
        if (json_is_integer(pid))
            snprintf(pid_text, sizeof pid_text, "%lld", json_integer_value(pid));
        printf("%-20s %-9s %-9s %-8lld %-14lld %s\n",
               json_string_value(json_object_get(plugin, "name")),
               json_string_value(json_object_get(plugin, "isolation")), pid_text,
               json_integer_value(json_object_get(plugin, "restarts")),
               json_integer_value(json_object_get(plugin, "deadline_kills")),
               json_is_string(crash) ? json_string_value(crash) : "-");
    }
}

static void print_calls(json_t *result)
{
    printf("%-16s %-24s %-16s %-9s %-8s %-9s %s\n", "ID", "METHOD", "PLUGIN", "AGE", "STATE",
           "CANCELLED", "PROGRESS");
    size_t index;
    json_t *call;
    json_array_foreach(json_object_get(result, "calls"), index, call)
    {
        json_t *id = json_object_get(call, "id"), *age = json_object_get(call, "age_ms");
        json_t *progress = json_object_get(call, "progress");
        char *id_text = json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT);
        printf("%-16s %-24s %-16s ", id_text ? id_text : "?",
               json_string_value(json_object_get(call, "method")),
               json_string_value(json_object_get(call, "plugin")));
        free(id_text);
        char age_text[32] = "-";
        if (json_is_integer(age))
            format_duration(json_integer_value(age), age_text, sizeof age_text);
        printf("%-9s %-8s %-9s ", age_text, json_string_value(json_object_get(call, "state")),
               json_is_true(json_object_get(call, "cancelled")) ? "yes" : "no");
        if (!json_is_object(progress))
            printf("-\n");
        else if (json_is_number(json_object_get(progress, "total")))
            printf("%g/%g\n", json_number_value(json_object_get(progress, "done")),
                   json_number_value(json_object_get(progress, "total")));
        else
            printf("%g\n", json_number_value(json_object_get(progress, "done")));
    }
}

/* Prints the answer's result as the command shows it. Returns the exit status. */
static int print_result(const char *command, json_t *result, bool as_json, const char *cancel_id)
{
    if (as_json) {
        json_dumpf(result, stdout, JSON_INDENT(2) | JSON_ENCODE_ANY);
        putchar('\n');
        if (strcmp(command, "cancel") == 0)
            return json_is_true(json_object_get(result, "cancelled")) ? CLI_EXIT_OK : 1;
        return CLI_EXIT_OK;
    }
    if (strcmp(command, "status") == 0)
        print_status(result);
    else if (strcmp(command, "calls") == 0)
        print_calls(result);
    else if (strcmp(command, "reload") == 0)
        printf("reloaded: %s\n", json_string_value(json_object_get(result, "summary")));
    else if (strcmp(command, "metrics") == 0)
        fputs(json_string_value(json_object_get(result, "text")), stdout);
    else if (json_is_true(json_object_get(result, "cancelled")))
        printf("cancelled the call %s\n", cancel_id);
    else {
        fprintf(stderr, "rpcd ctl: no call in flight has the id %s\n", cancel_id);
        return 1;
    }
    return CLI_EXIT_OK;
}

/* The request line for command (cancel: id, its JSON text, or a string for anything else). */
static char *request_for(const char *command, const char *id)
{
    json_t *request = json_pack("{s:s, s:i, s:s}", "jsonrpc", "2.0", "id", 1, "method", command);
    if (id) {
        json_error_t error;
        json_t *value = json_loads(id, JSON_DECODE_ANY, &error);
        if (!json_is_string(value) && !json_is_integer(value)) {
            json_decref(value);
            value = json_string(id);
        }
        json_object_set_new(request, "params", json_pack("{s:o}", "id", value));
    }
    char *line = json_dumps(request, JSON_COMPACT);
    json_decref(request);
    if (line) {
        char *with_end = NULL;
        if (asprintf(&with_end, "%s\n", line) < 0)
            with_end = NULL;
        free(line);
        line = with_end;
    }
    return line;
}

/* The answer: its result printed, or its error told. Returns the exit status. */
static int show_answer(const char *command, const char *answer, bool as_json, const char *id)
{
    json_error_t error;
    json_t *parsed = json_loads(answer, 0, &error);
    json_t *result = json_object_get(parsed, "result");
    json_t *failure = json_object_get(parsed, "error");
    int status = CLI_EXIT_SOFTWARE;
    if (result) {
        status = print_result(command, result, as_json, id);
    } else if (failure) {
        fprintf(stderr, "rpcd ctl: %s: %s\n", command,
                json_string_value(json_object_get(failure, "message")));
        status = 1;
    } else {
        fprintf(stderr, "rpcd ctl: the answer is no JSON-RPC response: %s\n", error.text);
    }
    json_decref(parsed);
    return status;
}

int cli_ctl_main(int argc, char **argv)
{
    static const struct option options[] = {
        {"socket", required_argument, NULL, 's'},
        {"config", required_argument, NULL, 'c'},
        {"json", no_argument, NULL, 'j'},
        {NULL, 0, NULL, 0},
    };
    const char *given = NULL, *config_path = RPCD_DEFAULT_CONFIG;
    bool as_json = false;
    int option;
    optind = 1;
    while ((option = getopt_long(argc, argv, "+c:", options, NULL)) != -1) {
        if (option == 's')
            given = optarg;
        else if (option == 'c')
            config_path = optarg;
        else if (option == 'j')
            as_json = true;
        else
            return CLI_EXIT_USAGE;
    }
    static const char *const commands[] = {"status", "calls", "reload", "metrics", "cancel"};
    const char *command = optind < argc ? argv[optind] : "";
    bool known = false;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        known |= strcmp(command, commands[i]) == 0;
    const char *id = strcmp(command, "cancel") == 0 && optind + 1 < argc ? argv[optind + 1] : NULL;
    int extra = argc - optind - 1 - (id != NULL);
    /* --json may follow the command, as the synopsis shows. */
    if (extra == 1 && strcmp(argv[argc - 1], "--json") == 0) {
        as_json = true;
        extra = 0;
    }
    if (!known || extra != 0 || (strcmp(command, "cancel") == 0) != (id != NULL)) {
        fprintf(stderr, "rpcd ctl: usage: rpcd ctl [--socket=PATH] [-c FILE] "
                        "status|calls|reload|metrics|cancel ID [--json]\n");
        return CLI_EXIT_USAGE;
    }
    char *path = NULL, *request = NULL, *answer = NULL;
    int status = socket_path(given, config_path, &path);
    if (status == 0 && !(request = request_for(command, id)))
        status = CLI_EXIT_SOFTWARE;
    if (status == 0)
        status = exchange(path, request, &answer);
    if (status == 0)
        status = show_answer(command, answer, as_json, id);
    free(path);
    free(request);
    free(answer);
    return status;
}
