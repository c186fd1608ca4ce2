/* SPDX-License-Identifier: MIT */
/*
 * loadgen's pipelined runs (throughput, batches, payload sizes): a writer thread keeps a window
 * of requests in flight while a reader thread checks that every id gets exactly one reply.
 */
#include "loadgen.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct {
    server srv;
    line_buffer lb;
    const char *params;
    size_t params_length;
    int window;          /* requests in flight at most */
    int batch;           /* requests per line; 0: one request per line */
    long max_requests;   /* the count to send, or with duration > 0 the cap */
    long min_requests;   /* with duration > 0 */
    double duration;     /* > 0: send until this many seconds have passed */
    unsigned char *seen; /* seen[id] for ids 1..max_requests */

    pthread_mutex_t lock;
    pthread_cond_t cond;
    atomic_long received;
    long total; /* requests sent, known once the writer is done; -1 before */
    bool writer_waiting;
    atomic_bool failed;
    bool reader_done;

    double t_start;
    double t_last;    /* when the last reply arrived */
    long cpu_us_warm; /* the server's CPU time after the warm-up reply; -1: unknown */
} pipeline;

/*
 * Marks the run failed and kills the server: the other thread, blocked on a pipe, then sees
 * EOF or EPIPE at once instead of waiting for the timeout.
 */
static void pipeline_fail(pipeline *pl)
{
    if (pl->srv.pid > 0)
        kill(pl->srv.pid, SIGKILL);
    pthread_mutex_lock(&pl->lock);
    atomic_store(&pl->failed, true);
    pthread_cond_broadcast(&pl->cond);
    pthread_mutex_unlock(&pl->lock);
}

/* Waits until `more` requests fit in the window; the caller has flushed what it holds. */
static int wait_window(pipeline *pl, long sent, long more)
{
    struct timespec deadline;
    int status = 0;

    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += opt.timeout_ms / 1000;
    pthread_mutex_lock(&pl->lock);
    pl->writer_waiting = true;
    for (;;) {
        long in_flight = sent - atomic_load(&pl->received);
        if (in_flight == 0 || in_flight + more <= pl->window)
            break;
        if (atomic_load(&pl->failed)) {
            status = -1;
            break;
        }
        if (pl->reader_done) {
            fail_note("the server closed its stdout with %ld requests unanswered", in_flight);
            status = -1;
            break;
        }
        if (pthread_cond_timedwait(&pl->cond, &pl->lock, &deadline) == ETIMEDOUT) {
            fail_note("no reply for %d s with %ld requests in flight", opt.timeout_ms / 1000,
                      in_flight);
            status = -1;
            break;
        }
    }
    pl->writer_waiting = false;
    pthread_mutex_unlock(&pl->lock);
    return status;
}

static int flush_buffer(pipeline *pl, byte_buffer *out)
{
    if (out->length == 0)
        return 0;
    int status = write_bytes(pl->srv.to_server, out->data, out->length);
    out->length = 0;
    return status;
}

static void *writer_main(void *arg)
{
    pipeline *pl = arg;
    byte_buffer out = {0};
    long sent = 0;
    bool large = pl->batch == 0 && pl->params_length > LARGE_PARAMS;

    while (sent < pl->max_requests && !atomic_load(&pl->failed)) {
        if (pl->duration > 0 && sent >= pl->min_requests && now_s() - pl->t_start >= pl->duration)
            break;
        long more = pl->batch ? pl->batch : 1;
        if (more > pl->max_requests - sent)
            more = pl->max_requests - sent;
        long in_flight = sent - atomic_load(&pl->received);
        if (in_flight > 0 && in_flight + more > pl->window) {
            if (flush_buffer(pl, &out) < 0 || wait_window(pl, sent, more) < 0)
                goto fail;
        }
        if (large) {
            if (send_request(pl->srv.to_server, sent + 1, pl->params, pl->params_length) < 0)
                goto fail;
            sent++;
            continue;
        }
        if (pl->batch) {
            if (buffer_reserve(&out, 1) < 0)
                goto fail;
            out.data[out.length++] = '[';
        }
        for (long i = 0; i < more; i++) {
            if (i > 0) {
                if (buffer_reserve(&out, 1) < 0)
                    goto fail;
                out.data[out.length++] = ',';
            }
            if (append_request(&out, sent + 1 + i, pl->params, pl->params_length) < 0)
                goto fail;
        }
        if (buffer_reserve(&out, 2) < 0)
            goto fail;
        if (pl->batch)
            out.data[out.length++] = ']';
        out.data[out.length++] = '\n';
        sent += more;
        if (out.length >= FLUSH_BYTES && flush_buffer(pl, &out) < 0)
            goto fail;
    }
    if (flush_buffer(pl, &out) < 0)
        goto fail;
    pthread_mutex_lock(&pl->lock);
    pl->total = sent;
    pthread_mutex_unlock(&pl->lock);
    /* End of input: the server answers what it has and exits, which ends the reader. */
    close_fd(&pl->srv.to_server);
    free(out.data);
    return NULL;
fail:
    free(out.data);
    pipeline_fail(pl);
    return NULL;
}

/* Counts the ids of one reply line; every id must be new and in range. */
static int take_reply(pipeline *pl, const char *line, size_t length, long *count)
{
    size_t pos = 0;
    long id, found = 0;
    int status;

    while ((status = scan_id(line, length, &pos, &id)) == 1) {
        if (id == 0) {
            fail_note("id 0 (the warm-up request) got a second reply");
            return -1;
        }
        if (id < 0 || id > pl->max_requests) {
            note_bad_reply("reply with an id never sent", line, length);
            return -1;
        }
        if (pl->seen[id]) {
            fail_note("id %ld got a second reply", id);
            return -1;
        }
        pl->seen[id] = 1;
        found++;
        if (!pl->batch)
            break;
    }
    if (status < 0 || found == 0) {
        note_bad_reply("reply without a numeric id", line, length);
        return -1;
    }
    if (has_error(line, length, pl->batch ? length : ERROR_SCAN_BYTES)) {
        note_bad_reply("error reply", line, length);
        return -1;
    }
    *count += found;
    return 0;
}

static void *reader_main(void *arg)
{
    pipeline *pl = arg;
    const char *line;
    size_t length;

    for (;;) {
        long count = 0;
        while (next_line(&pl->lb, &line, &length))
            if (take_reply(pl, line, length, &count) < 0)
                goto fail;
        if (count > 0) {
            pl->t_last = now_s();
            atomic_fetch_add(&pl->received, count);
            pthread_mutex_lock(&pl->lock);
            if (pl->writer_waiting)
                pthread_cond_signal(&pl->cond);
            pthread_mutex_unlock(&pl->lock);
        }
        if (atomic_load(&pl->failed))
            goto fail;
        int got = read_more(pl->srv.from_server, &pl->lb);
        if (got < 0)
            goto fail;
        if (got == 0)
            break;
    }
    if (pl->lb.buf.length > pl->lb.start) {
        fail_note("the server's output ends with an incomplete line");
        goto fail;
    }
    pthread_mutex_lock(&pl->lock);
    pl->reader_done = true;
    pthread_cond_broadcast(&pl->cond);
    pthread_mutex_unlock(&pl->lock);
    return NULL;
fail:
    pipeline_fail(pl);
    return NULL;
}

/*
 * Starts the server, waits for one warm-up reply (id 0) so that start-up is not measured,
 * then writes and reads on two threads. Every id must get exactly one reply.
 */
static int run_pipeline(pipeline *pl, server_usage *usage, double *seconds)
{
    pthread_t writer, reader;
    int status = -1;

    pthread_mutex_init(&pl->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&pl->cond, &attr);
    pthread_condattr_destroy(&attr);
    atomic_init(&pl->received, 0);
    atomic_init(&pl->failed, false);
    pl->total = -1;
    pl->seen = calloc((size_t)pl->max_requests + 1, 1);
    if (!pl->seen) {
        fail_note("out of memory");
        goto done;
    }
    if (server_start(&pl->srv) < 0)
        goto done;
    if (round_trip(&pl->srv, &pl->lb, 0, pl->params, pl->params_length) < 0)
        goto kill;
    pl->cpu_us_warm = server_cpu_now_us(pl->srv.pid);
    pl->t_start = now_s();
    pl->t_last = pl->t_start;
    if (pthread_create(&reader, NULL, reader_main, pl) != 0) {
        fail_note("pthread_create failed");
        goto kill;
    }
    if (pthread_create(&writer, NULL, writer_main, pl) != 0) {
        fail_note("pthread_create failed");
        pipeline_fail(pl);
    } else {
        pthread_join(writer, NULL);
    }
    pthread_join(reader, NULL);
    if (atomic_load(&pl->failed))
        goto kill;
    long received = atomic_load(&pl->received);
    if (received != pl->total) {
        fail_note("%ld requests sent, %ld replies", pl->total, received);
        goto kill;
    }
    for (long id = 1; id <= pl->total; id++) {
        if (!pl->seen[id]) {
            fail_note("id %ld got no reply", id);
            goto kill;
        }
    }
    *seconds = pl->t_last - pl->t_start;
    status = server_finish(&pl->srv, usage);
    goto done;
kill:
    server_kill(&pl->srv);
done:
    free(pl->seen);
    free(pl->lb.buf.data);
    pthread_cond_destroy(&pl->cond);
    pthread_mutex_destroy(&pl->lock);
    return status;
}

int pipelined_report(const char *scenario, long payload_bytes, int window, int batch, long requests,
                     double duration, json_t **out)
{
    /* A timed run sends at least one full window, so that the window is what is measured. */
    pipeline pl = {.window = window,
                   .batch = batch,
                   .max_requests = requests,
                   .duration = duration,
                   .min_requests = window};
    server_usage usage;
    double seconds = 0;
    char *params = make_params(payload_bytes, &pl.params_length);

    if (!params) {
        fail_note("out of memory");
        return -1;
    }
    pl.params = params;
    int status = run_pipeline(&pl, &usage, &seconds);
    free(params);
    if (status < 0)
        return -1;
    long total = pl.total;
    double rps = seconds > 0 ? (double)total / seconds : 0;
    json_t *report = report_new(scenario);
    json_object_set_new(report, "requests", json_integer(total));
    json_object_set_new(report, "window", json_integer(window));
    if (batch)
        json_object_set_new(report, "batch", json_integer(batch));
    json_object_set_new(report, "payload_bytes",
                        json_integer(payload_bytes < 0 ? (long)pl.params_length : payload_bytes));
    json_object_set_new(report, "seconds", json_real(seconds));
    json_object_set_new(report, "requests_per_s", json_real(rps));
    if (payload_bytes >= 0)
        json_object_set_new(report, "mb_per_s", json_real(rps * (double)payload_bytes / 1e6));
    report_usage(report, &usage, total);
    /* Without start-up and warm-up: what the requests themselves cost. */
    double steady = -1;
    if (pl.cpu_us_warm >= 0 && usage.cpu_us >= pl.cpu_us_warm && total > 0) {
        steady = (double)(usage.cpu_us - pl.cpu_us_warm) / (double)total;
        json_object_set_new(report, "server_cpu_us_at_warmup", json_integer(pl.cpu_us_warm));
        json_object_set_new(report, "server_cpu_us_per_request_steady", json_real(steady));
    }
    fprintf(stderr,
            "%s %s: %ld requests%s, window %d, params %zu B: %.0f req/s, %.1f MB/s; "
            "server peak RSS %ld KiB, CPU %.2f us/request (%.2f after warm-up)\n",
            opt.label, scenario, total, batch ? " in batches" : "", window, pl.params_length, rps,
            rps * (double)pl.params_length / 1e6, usage.max_rss_kib,
            total ? (double)usage.cpu_us / (double)total : 0.0, steady);
    *out = report;
    return 0;
}
