/* SPDX-License-Identifier: MIT */
/*
 * loadgen's scenarios: throughput, batches and payload sizes (as pipelined runs), ping-pong
 * latency and start-up to first reply; each prints one report.
 */
#include "loadgen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int scenario_throughput(void)
{
    json_t *report;
    long requests = opt.requests ? opt.requests : 100000;
    if (pipelined_report("throughput", opt.payload_bytes, opt.window, 0, requests, 0, &report) < 0)
        return -1;
    return report_print(report);
}

int scenario_batch(void)
{
    json_t *report;
    long requests = opt.requests ? opt.requests : 100000;
    if (pipelined_report("batch", opt.payload_bytes, opt.window, opt.batch, requests, 0, &report) <
        0)
        return -1;
    return report_print(report);
}

/* Small payloads keep many requests in flight; huge ones few, so memory stays bounded. */
static int window_for(long size)
{
    if (size <= 16 * 1000)
        return 256;
    if (size <= 128 * 1000)
        return 64;
    if (size <= 1000 * 1000)
        return 16;
    return 4;
}

int scenario_payload(void)
{
    json_t *points = json_array();
    char *sizes = strdup(opt.sizes), *save = NULL;

    if (!sizes) {
        fail_note("out of memory");
        goto fail;
    }
    for (char *item = strtok_r(sizes, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *end;
        long size = strtol(item, &end, 10);
        if (*end != '\0' || size < 0) {
            fail_note("bad size in --sizes: %s", item);
            goto fail;
        }
        int window = opt.window != 256 ? opt.window : window_for(size);
        /* Enough for about opt.seconds, but never more than some 4 GB each way. */
        long cap = size > 0 ? (long)(4e9 / (double)size) : opt.max_requests;
        if (cap > opt.max_requests)
            cap = opt.max_requests;
        if (cap < window)
            cap = window;
        json_t *point;
        if (pipelined_report("payload", size, window, 0, cap, opt.seconds, &point) < 0)
            goto fail;
        json_object_del(point, "scenario");
        json_object_del(point, "server");
        json_object_del(point, "command");
        json_array_append_new(points, point);
    }
    free(sizes);
    json_t *report = report_new("payload");
    json_object_set_new(report, "points", points);
    return report_print(report);
fail:
    free(sizes);
    json_decref(points);
    return -1;
}

int scenario_latency(void)
{
    long count = opt.requests ? opt.requests : 10000;
    long warmup = count / 10 < 100 ? count / 10 : 100;
    double *samples = malloc((size_t)count * sizeof *samples);
    server srv;
    line_buffer lb = {0};
    server_usage usage;
    size_t params_length;
    char *params = make_params(opt.payload_bytes, &params_length);

    if (!samples || !params) {
        fail_note("out of memory");
        goto fail;
    }
    if (server_start(&srv) < 0)
        goto fail;
    for (long i = 0; i < warmup; i++)
        if (round_trip(&srv, &lb, i + 1, params, params_length) < 0)
            goto kill;
    for (long i = 0; i < count; i++) {
        double t0 = now_s();
        if (round_trip(&srv, &lb, warmup + i + 1, params, params_length) < 0)
            goto kill;
        samples[i] = (now_s() - t0) * 1e6;
        /* A real client does something with each reply before it sends the next request. On a
         * shared core, the server's wake-up was measured to preempt the client only while the
         * server used clearly less CPU than the client: an idle client is the worst case. */
        double until = now_s() + (double)opt.client_work_ns / 1e9;
        while (opt.client_work_ns > 0 && now_s() < until)
            ;
    }
    if (end_session(&srv, &lb, &usage) < 0)
        goto fail;
    qsort(samples, (size_t)count, sizeof *samples, compare_double);
    double sum = 0;
    for (long i = 0; i < count; i++)
        sum += samples[i];
    json_t *report = report_new("latency");
    json_object_set_new(report, "round_trips", json_integer(count));
    json_object_set_new(report, "client_work_ns", json_integer(opt.client_work_ns));
    json_object_set_new(report, "p50_us", json_real(percentile(samples, (size_t)count, 0.50)));
    json_object_set_new(report, "p90_us", json_real(percentile(samples, (size_t)count, 0.90)));
    json_object_set_new(report, "p99_us", json_real(percentile(samples, (size_t)count, 0.99)));
    json_object_set_new(report, "max_us", json_real(samples[count - 1]));
    json_object_set_new(report, "mean_us", json_real(sum / (double)count));
    report_usage(report, &usage, count + warmup);
    fprintf(stderr,
            "%s latency: %ld round trips: p50 %.1f us, p90 %.1f us, p99 %.1f us, max %.1f us\n",
            opt.label, count, percentile(samples, (size_t)count, 0.50),
            percentile(samples, (size_t)count, 0.90), percentile(samples, (size_t)count, 0.99),
            samples[count - 1]);
    free(samples);
    free(params);
    free(lb.buf.data);
    return report_print(report);
kill:
    server_kill(&srv);
fail:
    free(samples);
    free(params);
    free(lb.buf.data);
    return -1;
}

/*
 * The medians of the runs' peak RSS and CPU time, each taken on its own, not at the median
 * start-up run.
 */
static int median_usage(const long *rss, const long *cpu, int runs, server_usage *usage)
{
    double *sorted = malloc((size_t)runs * sizeof *sorted);
    if (!sorted) {
        fail_note("out of memory");
        return -1;
    }
    for (int i = 0; i < runs; i++)
        sorted[i] = (double)rss[i];
    qsort(sorted, (size_t)runs, sizeof *sorted, compare_double);
    usage->max_rss_kib = (long)sorted[runs / 2];
    for (int i = 0; i < runs; i++)
        sorted[i] = (double)cpu[i];
    qsort(sorted, (size_t)runs, sizeof *sorted, compare_double);
    usage->cpu_us = (long)sorted[runs / 2];
    free(sorted);
    return 0;
}

int scenario_startup(void)
{
    int runs = opt.repeat > 0 ? opt.repeat : 1;
    double *samples = calloc((size_t)runs, sizeof *samples);
    long *rss = calloc((size_t)runs, sizeof *rss), *cpu = calloc((size_t)runs, sizeof *cpu);
    size_t params_length;
    char *params = make_params(opt.payload_bytes, &params_length);
    line_buffer lb = {0};

    if (!samples || !rss || !cpu || !params) {
        fail_note("out of memory");
        goto fail;
    }
    json_t *each = json_array();
    /* Run -1 is a warm-up, not counted: the first start of a series also pays for a cold page
     * cache and idle cores waking up, whichever server it is. */
    for (int i = -1; i < runs; i++) {
        server srv;
        server_usage usage;
        lb.start = lb.scanned = lb.buf.length = 0;
        double t0 = now_s();
        if (server_start(&srv) < 0) {
            json_decref(each);
            goto fail;
        }
        if (round_trip(&srv, &lb, 1, params, params_length) < 0) {
            server_kill(&srv);
            json_decref(each);
            goto fail;
        }
        double elapsed_us = (now_s() - t0) * 1e6;
        if (end_session(&srv, &lb, &usage) < 0) {
            json_decref(each);
            goto fail;
        }
        if (i < 0)
            continue;
        samples[i] = elapsed_us;
        rss[i] = usage.max_rss_kib;
        cpu[i] = usage.cpu_us;
        json_array_append_new(each, json_real(samples[i]));
    }
    server_usage usage;
    if (median_usage(rss, cpu, runs, &usage) < 0) {
        json_decref(each);
        goto fail;
    }
    qsort(samples, (size_t)runs, sizeof *samples, compare_double);
    double median = runs % 2 ? samples[runs / 2] : (samples[runs / 2 - 1] + samples[runs / 2]) / 2;
    json_t *report = report_new("startup");
    json_object_set_new(report, "runs", json_integer(runs));
    json_object_set_new(report, "median_us", json_real(median));
    json_object_set_new(report, "min_us", json_real(samples[0]));
    json_object_set_new(report, "max_us", json_real(samples[runs - 1]));
    json_object_set_new(report, "samples_us", each);
    report_usage(report, &usage, 1);
    fprintf(stderr, "%s startup: %d runs: median %.0f us to the first reply (min %.0f, max %.0f)\n",
            opt.label, runs, median, samples[0], samples[runs - 1]);
    free(samples);
    free(rss);
    free(cpu);
    free(params);
    free(lb.buf.data);
    return report_print(report);
fail:
    free(samples);
    free(rss);
    free(cpu);
    free(params);
    free(lb.buf.data);
    return -1;
}
