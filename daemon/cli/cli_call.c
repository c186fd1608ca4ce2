/* SPDX-License-Identifier: MIT */
/*
 * rpcd call: one request through the real serve loop, in-process. The loop reads from memory
 * (the request, then a $/cancelRequest when asked, then the end of input) and writes to a sink
 * that keeps the response and shows notifications on stderr as they come.
 */
#include "cli/cli.h"

#include "base/clock.h"
#include "base/log.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define CALL_PROGRESS_TOKEN "rpcd-call"

/* What the command line asks for. */
typedef struct call_asked {
    cli_source source;
    const char *method;
    const char *params; /* JSON text, "-" for stdin, or NULL */
    int pretty;         /* -1: when stdout is a terminal */
    long timeout_ms;    /* -1: none */
    long cancel_after_ms;
    bool progress;
} call_asked;

/* The in-memory client: the source the loop reads and the sink it writes. */
typedef struct call_client {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    char *pending; /* owned: the line being read */
    size_t pending_length;
    size_t pending_sent;
    long long cancel_at; /* monotonic ms, -1: never */
    long long give_up_at;
    bool cancel_sent;
    bool timed_out;
    atomic_bool stopped;
    char *line; /* owned: output not yet a whole line */
    size_t line_length;
    json_t *response; /* owned, once it came */
    server *srv;
} call_client;

static long long now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Parses a non-negative count of milliseconds. Returns it, or -1 (said). */
static long parse_ms(const char *option, const char *text)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || end == text || *end || value < 0 || value > 86400000L) {
        fprintf(stderr, "rpcd: %s takes milliseconds (0 to 86400000), not '%s'\n", option, text);
        return -1;
    }
    return value;
}

/* Reads the options of rpcd call into *out. Returns 0, or an exit status (said). */
static int parse_call(int argc, char **argv, call_asked *out)
{
    enum { OPT_COMPACT = 2000, OPT_PRETTY, OPT_TIMEOUT, OPT_CANCEL_AFTER, OPT_PROGRESS };
    static const struct option options[] = {
        CLI_SOURCE_OPTIONS,
        {"compact", no_argument, NULL, OPT_COMPACT},
        {"pretty", no_argument, NULL, OPT_PRETTY},
        {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"cancel-after", required_argument, NULL, OPT_CANCEL_AFTER},
        {"progress", no_argument, NULL, OPT_PROGRESS},
        {NULL, 0, NULL, 0},
    };
    *out = (call_asked){.pretty = -1, .timeout_ms = -1, .cancel_after_ms = -1};
    out->source.log_level = -1;
    int option;
    optind = 1;
    while ((option = getopt_long(argc, argv, "c:vq", options, NULL)) != -1) {
        int taken = cli_source_option(&out->source, option, optarg);
        if (taken < 0)
            return CLI_EXIT_USAGE;
        if (taken)
            continue;
        switch (option) {
        case OPT_COMPACT: out->pretty = 0; break;
        case OPT_PRETTY: out->pretty = 1; break;
        case OPT_PROGRESS: out->progress = true; break;
        case OPT_TIMEOUT:
            if ((out->timeout_ms = parse_ms("--timeout", optarg)) < 0)
                return CLI_EXIT_USAGE;
            break;
        case OPT_CANCEL_AFTER:
            if ((out->cancel_after_ms = parse_ms("--cancel-after", optarg)) < 0)
                return CLI_EXIT_USAGE;
            break;
        default: fprintf(stderr, "rpcd call: try rpcd --help\n"); return CLI_EXIT_USAGE;
        }
    }
    if (optind >= argc || argc - optind > 2) {
        fprintf(stderr, "rpcd call: give METHOD and at most one PARAMS (try rpcd --help)\n");
        return CLI_EXIT_USAGE;
    }
    out->method = argv[optind];
    out->params = optind + 1 < argc ? argv[optind + 1] : NULL;
    return 0;
}

/* The params as asked, with the progress token when asked. Returns 0 and *out (new, may be
 * NULL: no params), or an exit status (said). */
static int load_params(const call_asked *request, json_t **out)
{
    json_error_t error;
    *out = NULL;
    if (request->params && strcmp(request->params, "-") == 0)
        *out = json_loadf(stdin, JSON_DECODE_ANY, &error);
    else if (request->params)
        *out = json_loads(request->params, JSON_DECODE_ANY, &error);
    if (request->params && !*out) {
        fprintf(stderr, "rpcd call: PARAMS is not JSON: %s (at %d:%d)\n", error.text, error.line,
                error.column);
        return CLI_EXIT_USAGE;
    }
    if (!request->progress)
        return 0;
    if (!*out)
        *out = json_object();
    if (!json_is_object(*out)) {
        fprintf(stderr, "rpcd call: --progress needs PARAMS to be an object\n");
        json_decref(*out);
        return CLI_EXIT_USAGE;
    }
    json_t *meta = json_object_get(*out, "_meta");
    if (!json_is_object(meta)) {
        meta = json_object();
        json_object_set_new(*out, "_meta", meta);
    }
    json_object_set_new(meta, "progressToken", json_string(CALL_PROGRESS_TOKEN));
    return 0;
}

/* The request line (new, ending in "\n"), or NULL (said). */
static char *request_line(const char *method, json_t *params)
{
    json_t *request = json_pack("{s:s,s:i,s:s}", "jsonrpc", "2.0", "id", 1, "method", method);
    if (request && params)
        json_object_set(request, "params", params);
    char *text = request ? json_dumps(request, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(request);
    char *line = text ? malloc(strlen(text) + 2) : NULL;
    if (line)
        sprintf(line, "%s\n", text);
    free(text);
    if (!line)
        fprintf(stderr, "rpcd call: out of memory\n");
    return line;
}

/* ---- The source the serve loop reads -------------------------------------------------------- */

/* Copies what is left of the pending line. Under the lock. */
static ssize_t give_pending(call_client *client, char *into, size_t capacity)
{
    size_t left = client->pending_length - client->pending_sent;
    size_t n = left < capacity ? left : capacity;
    memcpy(into, client->pending + client->pending_sent, n);
    client->pending_sent += n;
    return (ssize_t)n;
}

/* Waits until the response came, or the time to cancel or to give up. Under the lock. */
static void wait_for_news(call_client *client)
{
    long long until = client->give_up_at;
    if (client->cancel_at >= 0 && !client->cancel_sent && (until < 0 || client->cancel_at < until))
        until = client->cancel_at;
    if (until < 0) {
        pthread_cond_wait(&client->changed, &client->lock);
        return;
    }
    struct timespec deadline = clock_timespec_of_ms(until);
    pthread_cond_timedwait(&client->changed, &client->lock, &deadline);
}

/* lr_read_fn: the request, then the cancellation if its time comes, then the end of input
 * once the response came; gives up (a stop) when --timeout passes. */
static ssize_t client_read(void *source, char *into, size_t capacity)
{
    static const char cancel[] = "{\"jsonrpc\":\"2.0\",\"method\":\"$/cancelRequest\","
                                 "\"params\":{\"id\":1}}\n";
    call_client *client = source;
    ssize_t result = 0;
    pthread_mutex_lock(&client->lock);
    for (;;) {
        if (client->pending_sent < client->pending_length) {
            result = give_pending(client, into, capacity);
            break;
        }
        long long now = now_ms();
        if (client->response || atomic_load(&client->stopped)) {
            result = client->response ? 0 : (errno = ECANCELED, -1);
            break;
        }
        if (client->give_up_at >= 0 && now >= client->give_up_at) {
            client->timed_out = true;
            pthread_mutex_unlock(&client->lock);
            srv_stop(client->srv);
            errno = ECANCELED;
            return -1;
        }
        if (client->cancel_at >= 0 && !client->cancel_sent && now >= client->cancel_at) {
            client->cancel_sent = true;
            free(client->pending);
            client->pending = strdup(cancel);
            client->pending_length = client->pending ? strlen(cancel) : 0;
            client->pending_sent = 0;
            continue;
        }
        wait_for_news(client);
    }
    pthread_mutex_unlock(&client->lock);
    return result;
}

/* srv_options.stop_reading: the read in progress returns. */
static void client_stop_reading(void *context)
{
    call_client *client = context;
    atomic_store(&client->stopped, true);
    pthread_cond_broadcast(&client->changed);
}

/* ---- The sink it writes --------------------------------------------------------------------- */

/* Shows a notification on stderr: progress in words, anything else as its JSON line. */
static void show_notification(json_t *message, const char *line)
{
    json_t *params = json_object_get(message, "params");
    const char *method = json_string_value(json_object_get(message, "method"));
    if (method && strcmp(method, "notifications/progress") == 0 && json_is_object(params)) {
        json_t *total = json_object_get(params, "total");
        const char *text = json_string_value(json_object_get(params, "message"));
        fprintf(stderr, "progress %g", json_number_value(json_object_get(params, "progress")));
        if (json_is_number(total))
            fprintf(stderr, "/%g", json_number_value(total));
        fprintf(stderr, "%s%s\n", text ? ": " : "", text ? text : "");
    } else {
        fprintf(stderr, "%s\n", line);
    }
}

/* One whole output line. Under the lock. */
static void take_line(call_client *client, const char *line)
{
    json_t *message = json_loads(line, JSON_DECODE_ANY, NULL);
    if (json_is_object(message) && json_object_get(message, "id") &&
        !json_object_get(message, "method") && !client->response) {
        client->response = message;
        pthread_cond_broadcast(&client->changed);
        return;
    }
    show_notification(message, line);
    json_decref(message);
}

/* out_write_fn: gathers the parts, and takes each whole line. */
static int client_write(void *sink, const struct iovec *parts, int part_count)
{
    call_client *client = sink;
    pthread_mutex_lock(&client->lock);
    int status = 0;
    for (int i = 0; i < part_count && status == 0; i++) {
        char *grown = realloc(client->line, client->line_length + parts[i].iov_len + 1);
        if (!grown) {
            status = -1;
            break;
        }
        memcpy(grown + client->line_length, parts[i].iov_base, parts[i].iov_len);
        client->line = grown;
        client->line_length += parts[i].iov_len;
        client->line[client->line_length] = '\0';
    }
    char *end;
    while (status == 0 && client->line && (end = strchr(client->line, '\n'))) {
        *end = '\0';
        take_line(client, client->line);
        size_t used = (size_t)(end - client->line) + 1;
        memmove(client->line, end + 1, client->line_length - used + 1);
        client->line_length -= used;
    }
    pthread_mutex_unlock(&client->lock);
    return status;
}

/* ---- The call ------------------------------------------------------------------------------- */

/* The exit status for the response, the result printed or the error said. */
static int report(const call_asked *request, json_t *response)
{
    json_t *error = json_object_get(response, "error");
    if (!error) {
        size_t flags = JSON_ENCODE_ANY | JSON_PRESERVE_ORDER;
        FILE *out = cli_output();
        bool pretty = request->pretty < 0 ? isatty(fileno(out)) : request->pretty;
        flags |= pretty ? JSON_INDENT(2) : JSON_COMPACT;
        json_dumpf(json_object_get(response, "result"), out, flags);
        fputc('\n', out);
        return fflush(out) == 0 ? CLI_EXIT_OK : CLI_EXIT_SOFTWARE;
    }
    json_int_t code = json_integer_value(json_object_get(error, "code"));
    const char *message = json_string_value(json_object_get(error, "message"));
    fprintf(stderr, "rpcd call: %s: error %lld: %s", request->method, (long long)code,
            message ? message : "");
    json_t *data = json_object_get(error, "data");
    if (data) {
        fputs(": ", stderr);
        json_dumpf(data, stderr, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
    }
    fputc('\n', stderr);
    switch (code) {
    case -32601: return CLI_EXIT_NOT_FOUND;
    case -32602: return CLI_EXIT_BAD_PARAMS;
    case -32800: return CLI_EXIT_CANCELLED;
    default: return CLI_EXIT_METHOD_FAILED;
    }
}

/* Serves the one request of client over runtime's methods. Returns the exit status. */
static int run_call(const call_asked *request, const rpcd_runtime *runtime, call_client *client)
{
    srv_options options = rt_serve_options(runtime);
    options.stop_reading = client_stop_reading;
    options.stop_reading_context = client;
    if (srv_new(runtime->methods, &options, client_write, client, &client->srv) != 0) {
        fprintf(stderr, "rpcd call: cannot start: out of memory\n");
        return CLI_EXIT_SOFTWARE;
    }
    int served = srv_run(client->srv, client_read, client);
    int status;
    if (client->timed_out) {
        fprintf(stderr, "rpcd call: %s: timed out after %ld ms (cancelled)\n", request->method,
                request->timeout_ms);
        status = CLI_EXIT_TIMED_OUT;
    } else if (client->response) {
        status = report(request, client->response);
    } else {
        fprintf(stderr, "rpcd call: %s: no response (serving ended with %d)\n", request->method,
                served);
        status = CLI_EXIT_SOFTWARE;
    }
    if (!srv_finished(client->srv)) {
        /* The call still runs inside plugin code: unloading it would pull the code from
         * under it. */
        fflush(NULL);
        _exit(status);
    }
    srv_free(client->srv);
    return status;
}

/* Sets up the client for request. Returns 0, or an exit status (said). */
static int client_init(call_client *client, const call_asked *request)
{
    memset(client, 0, sizeof *client);
    json_t *params;
    int status = load_params(request, &params);
    if (status != 0)
        return status;
    client->pending = request_line(request->method, params);
    json_decref(params);
    if (!client->pending)
        return CLI_EXIT_SOFTWARE;
    client->pending_length = strlen(client->pending);
    long long start = now_ms();
    client->cancel_at = request->cancel_after_ms >= 0 ? start + request->cancel_after_ms : -1;
    client->give_up_at = request->timeout_ms >= 0 ? start + request->timeout_ms : -1;
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(&client->changed, &attributes);
    pthread_condattr_destroy(&attributes);
    pthread_mutex_init(&client->lock, NULL);
    return 0;
}

static void client_fini(call_client *client)
{
    pthread_mutex_destroy(&client->lock);
    pthread_cond_destroy(&client->changed);
    free(client->pending);
    free(client->line);
    json_decref(client->response);
}

int cli_call_main(int argc, char **argv)
{
    call_asked request;
    int status = parse_call(argc, argv, &request);
    if (status != 0)
        return status;
    call_client client;
    if ((status = client_init(&client, &request)) != 0) {
        free(client.pending);
        return status;
    }
    rpcd_runtime runtime;
    if ((status = cli_start(&request.source, &runtime)) == 0) {
        status = run_call(&request, &runtime, &client);
        rt_stop(&runtime);
    }
    client_fini(&client);
    return status;
}
