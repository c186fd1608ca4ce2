/* SPDX-License-Identifier: MIT */
/*
 * loadgen: starts a JSON-RPC stdio server over pipes and measures one scenario: pipelined
 * throughput, ping-pong latency, start-up to first reply, batches, or a payload-size sweep.
 * One JSON object per scenario goes to stdout, readable lines to stderr (see bench/README.md).
 * This file: the command line, the first failure, and main; the other parts are in loadgen_*.c.
 */
#include "loadgen.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

loadgen_options opt = {
    .method = "echo",
    .stderr_path = "/dev/null",
    .timeout_ms = 60000,
    .window = 256,
    .batch = 50,
    .payload_bytes = -1,
    .repeat = 10,
    .sizes = "100,1000,10000,100000,1000000,16000000",
    .seconds = 1.0,
    .max_requests = 200000,
};

/* The first failure, from whichever thread saw it; later ones are consequences. */
static pthread_mutex_t failure_lock = PTHREAD_MUTEX_INITIALIZER;
static char failure[512];

void fail_note(const char *format, ...)
{
    va_list args;
    pthread_mutex_lock(&failure_lock);
    if (failure[0] == '\0') {
        va_start(args, format);
        vsnprintf(failure, sizeof failure, format, args);
        va_end(args);
    }
    pthread_mutex_unlock(&failure_lock);
}

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- command line ---- */

static void usage_text(FILE *to)
{
    fprintf(to,
            "usage: loadgen -s SCENARIO [options] -- COMMAND [ARG...]\n"
            "Runs COMMAND as a JSON-RPC stdio server offering \"echo\" (or -m) and measures it.\n"
            "\n"
            "  -s, --scenario NAME      throughput | latency | startup | batch | payload\n"
            "  -l, --label NAME         server name in the reports (default: COMMAND)\n"
            "  -n, --requests N         throughput, batch: requests (100000);\n"
            "                           latency: round trips (10000)\n"
            "  -w, --window W           requests in flight at most (256; payload: by size)\n"
            "  -b, --batch B            batch: requests per line (50)\n"
            "  -p, --payload-bytes S    params [\"<S bytes>\"] instead of %s\n"
            "  -m, --method NAME        the method called (echo); its result must not\n"
            "                           contain the text \"id\"\n"
            "      --params JSON        these params (an array or object) instead\n"
            "  -r, --repeat R           startup: server starts after a warm-up one (10)\n"
            "      --sizes LIST         payload: byte counts (%s)\n"
            "      --seconds T          payload: seconds per size, about (1)\n"
            "      --max-requests N     payload: requests per size at most (200000)\n"
            "      --client-work-ns N   latency: spin N ns after each round trip, untimed,\n"
            "                           as a client handling the reply would (0)\n"
            "  -t, --timeout S          fail after S seconds without progress (60)\n"
            "  -e, --server-stderr FILE where the server's stderr goes (/dev/null)\n"
            "\n"
            "One JSON object per scenario on stdout; exit status 1 on any failure.\n",
            SMALL_PARAMS, opt.sizes);
}

static int parse_long(const char *text, long min, long *out)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || *end != '\0' || end == text || value < min)
        return -1;
    *out = value;
    return 0;
}

/* The JSON given to --params: usable when it is an array or object without "id" or a newline. */
static bool params_usable(const char *text)
{
    json_error_t error;
    json_t *params = json_loads(text, JSON_REJECT_DUPLICATES, &error);
    bool usable = params && (json_is_array(params) || json_is_object(params)) &&
                  strstr(text, "\"id\"") == NULL && strchr(text, '\n') == NULL;
    json_decref(params);
    return usable;
}

/* Written into the request as it is, so a method name must need no escaping. */
static bool method_usable(const char *name)
{
    if (name[0] == '\0' || strlen(name) > METHOD_MAX || strpbrk(name, "\"\\") != NULL)
        return false;
    for (const char *p = name; *p; p++)
        if ((unsigned char)*p < 0x20)
            return false;
    return true;
}

/* An int option from min to max into *out; *out is left alone when the text is bad. */
static int parse_int(const char *text, long min, long max, int *out)
{
    long value;
    if (parse_long(text, min, &value) < 0 || value > max)
        return -1;
    *out = (int)value;
    return 0;
}

/* Takes one option c with its argument: 0, -1 for a bad value, -2 for an unknown option. */
static int take_option(int c, const char *arg)
{
    switch (c) {
    case 's': opt.scenario = arg; return 0;
    case 'l': opt.label = arg; return 0;
    case 'n': return parse_long(arg, 1, &opt.requests);
    case 'w': return parse_int(arg, 1, INT_MAX, &opt.window);
    case 'b': return parse_int(arg, 1, INT_MAX, &opt.batch);
    case 'p': return parse_long(arg, 0, &opt.payload_bytes);
    case 'r': return parse_int(arg, 1, INT_MAX, &opt.repeat);
    case 'S': opt.sizes = arg; return 0;
    case 'T': {
        char *end;
        opt.seconds = strtod(arg, &end);
        return *end != '\0' || !(opt.seconds > 0) ? -1 : 0;
    }
    case 'M': return parse_long(arg, 1, &opt.max_requests);
    case 'W': return parse_long(arg, 0, &opt.client_work_ns);
    case 't':
        if (parse_int(arg, 1, INT_MAX / 1000, &opt.timeout_ms) < 0)
            return -1;
        opt.timeout_ms *= 1000;
        return 0;
    case 'e': opt.stderr_path = arg; return 0;
    case 'm':
        if (!method_usable(arg))
            return -1;
        opt.method = arg;
        return 0;
    case 'P':
        if (!params_usable(arg))
            return -1;
        opt.params = arg;
        return 0;
    case 'h': usage_text(stdout); exit(0);
    default: return -2;
    }
}

static int parse_args(int argc, char **argv)
{
    static const struct option options[] = {
        {"scenario", required_argument, NULL, 's'},
        {"label", required_argument, NULL, 'l'},
        {"requests", required_argument, NULL, 'n'},
        {"window", required_argument, NULL, 'w'},
        {"batch", required_argument, NULL, 'b'},
        {"payload-bytes", required_argument, NULL, 'p'},
        {"repeat", required_argument, NULL, 'r'},
        {"sizes", required_argument, NULL, 'S'},
        {"seconds", required_argument, NULL, 'T'},
        {"max-requests", required_argument, NULL, 'M'},
        {"timeout", required_argument, NULL, 't'},
        {"server-stderr", required_argument, NULL, 'e'},
        {"method", required_argument, NULL, 'm'},
        {"params", required_argument, NULL, 'P'},
        {"client-work-ns", required_argument, NULL, 'W'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    while ((c = getopt_long(argc, argv, "+s:l:n:w:b:p:r:t:e:m:h", options, NULL)) != -1) {
        int status = take_option(c, optarg);
        if (status == -2) {
            usage_text(stderr);
            return -1;
        }
        if (status < 0 && c == 'P') {
            fprintf(stderr,
                    "loadgen: bad value for --params (an array or object without \"id\"): %s\n",
                    optarg);
            return -1;
        }
        if (status < 0) {
            fprintf(stderr, "loadgen: bad value for -%c: %s\n", c, optarg);
            return -1;
        }
    }
    if (opt.params && opt.payload_bytes >= 0) {
        fprintf(stderr, "loadgen: --params and -p exclude each other\n");
        return -1;
    }
    if (!opt.scenario || optind >= argc) {
        usage_text(stderr);
        return -1;
    }
    opt.command = argv + optind;
    if (!opt.label)
        opt.label = opt.command[0];
    return 0;
}

int main(int argc, char **argv)
{
    int status;

    if (parse_args(argc, argv) < 0)
        return 2;
    /* A server that dies must show up as EPIPE on our write, not kill us silently. */
    signal(SIGPIPE, SIG_IGN);
    if (strcmp(opt.scenario, "throughput") == 0)
        status = scenario_throughput();
    else if (strcmp(opt.scenario, "latency") == 0)
        status = scenario_latency();
    else if (strcmp(opt.scenario, "startup") == 0)
        status = scenario_startup();
    else if (strcmp(opt.scenario, "batch") == 0)
        status = scenario_batch();
    else if (strcmp(opt.scenario, "payload") == 0)
        status = scenario_payload();
    else {
        fprintf(stderr, "loadgen: unknown scenario %s\n", opt.scenario);
        return 2;
    }
    if (status < 0) {
        fprintf(stderr, "loadgen: %s: %s: FAILED: %s\n", opt.label, opt.scenario,
                failure[0] ? failure : "unknown error");
        return 1;
    }
    return 0;
}
