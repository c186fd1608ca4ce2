/* SPDX-License-Identifier: MIT */
/*
 * loadgen's parts: the options, the first failure, the server process, requests and replies on
 * its pipes, the pipelined runs, the scenarios and their reports. One program, see loadgen.c.
 */
#ifndef LOADGEN_H
#define LOADGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

/* The params of a "small" request: a typical tool call argument object. */
#define SMALL_PARAMS "{\"text\":\"hello, world\"}"
#define READ_CHUNK (256 * 1024)
/* Requests are gathered into writes of about this size, as a real pipelining client would. */
#define FLUSH_BYTES (64 * 1024)
/* Above this, the params are written straight from their own buffer instead of copied. */
#define LARGE_PARAMS (32 * 1024)
/* How far into a single reply the "error" member is looked for (it follows the id). */
#define ERROR_SCAN_BYTES 512
/* The longest method name -m takes; the request head holds it and the rest of the envelope. */
#define METHOD_MAX 200
#define HEAD_BYTES (METHOD_MAX + 96)

/* The command line, set once by loadgen.c before any scenario runs. */
typedef struct {
    char **command;
    const char *label;
    const char *scenario;
    const char *method;
    const char *params; /* NULL: by payload_bytes */
    const char *stderr_path;
    int timeout_ms;
    long requests; /* 0: the scenario's default */
    int window;
    int batch;
    long payload_bytes; /* -1: SMALL_PARAMS */
    int repeat;
    const char *sizes;
    double seconds;
    long max_requests;
    long client_work_ns; /* latency: busy work after each round trip, outside the timing */
} loadgen_options;

extern loadgen_options opt;

/* Keeps the first failure, from whichever thread saw it; later ones are consequences. */
void fail_note(const char *format, ...) __attribute__((format(printf, 1, 2)));
double now_s(void);

/* ---- the server process (loadgen_process.c) ---- */

typedef struct {
    pid_t pid;
    int to_server;   /* its stdin, non-blocking */
    int from_server; /* its stdout, non-blocking */
} server;

typedef struct {
    long max_rss_kib;
    long cpu_us;
} server_usage;

void close_fd(int *fd);
int server_start(server *srv);
void server_kill(server *srv);
long server_cpu_now_us(pid_t pid);
int server_finish(server *srv, server_usage *usage);

/* ---- requests and replies on the pipes (loadgen_wire.c) ---- */

typedef struct {
    char *data;
    size_t length;
    size_t capacity;
} byte_buffer;

/* Replies as lines: complete lines are handed out in place, the partial rest is kept. */
typedef struct {
    byte_buffer buf;
    size_t start;   /* first byte of the next line */
    size_t scanned; /* bytes before this hold no newline after start */
} line_buffer;

int write_bytes(int fd, const char *data, size_t length);
int buffer_reserve(byte_buffer *buf, size_t more);
int next_line(line_buffer *lb, const char **line, size_t *length);
int read_more(int fd, line_buffer *lb);
int scan_id(const char *line, size_t length, size_t *pos, long *id);
bool has_error(const char *line, size_t length, size_t limit);
void note_bad_reply(const char *what, const char *line, size_t length);
int append_request(byte_buffer *buf, long id, const char *params, size_t params_length);
int send_request(int fd, long id, const char *params, size_t params_length);
char *make_params(long size, size_t *length);
int round_trip(server *srv, line_buffer *lb, long id, const char *params, size_t length);
int end_session(server *srv, line_buffer *lb, server_usage *usage);

/* ---- pipelined runs (loadgen_pipeline.c) ---- */

int pipelined_report(const char *scenario, long payload_bytes, int window, int batch, long requests,
                     double duration, json_t **out);

/* ---- statistics and reports (loadgen_report.c) ---- */

json_t *report_new(const char *scenario);
void report_usage(json_t *report, const server_usage *usage, long requests);
int report_print(json_t *report);
int compare_double(const void *a, const void *b);
double percentile(const double *sorted, size_t count, double fraction);

/* ---- the scenarios (loadgen_scenarios.c) ---- */

int scenario_throughput(void);
int scenario_batch(void);
int scenario_payload(void);
int scenario_latency(void);
int scenario_startup(void);

#endif
