/* SPDX-License-Identifier: MIT */
/*
 * progress plugin: long-running methods for progress reports and cooperative cancellation.
 * "progress" reports a number of steps, "sleep" waits a given time; both stop as soon as the
 * client cancels. Config: default_steps (0..1000), the step count when params do not give one.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <rpcd/plugin-jansson.h>

#define PROGRESS_MAX_STEPS 1000
#define PROGRESS_MAX_DELAY_MS 10000
#define PROGRESS_MAX_SLEEP_MS 3600000
/* How long a wait goes without looking at cancellation, and how often sleep reports. */
#define PROGRESS_SLICE_MS 10
#define PROGRESS_REPORT_EVERY_MS 100

/*
 * Both set once by init, on the main thread before any call, and only read afterwards, so
 * handlers running at the same time on several threads need no lock.
 */
static const rpcd_host_api *host;
static int default_steps = 3;

static long long progress_now_ms(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static void progress_nap(long long ms)
{
    struct timespec delay;

    delay.tv_sec = (time_t)(ms / 1000);
    delay.tv_nsec = (long)(ms % 1000) * 1000000L;
    /* A signal cuts a nap short; the caller measures the time itself, so this is harmless. */
    while (nanosleep(&delay, &delay) != 0 && errno == EINTR) {
    }
}

/*
 * Waits ms milliseconds in short slices, so that a cancellation is noticed within a slice.
 * Returns RPCD_OK, or RPCD_ERR_CANCELLED as soon as the call is cancelled.
 */
static int progress_wait(rpcd_call *call, long long ms)
{
    long long end = progress_now_ms() + ms;
    long long left;

    while ((left = end - progress_now_ms()) > 0) {
        if (host->call_is_cancelled(call)) {
            return RPCD_ERR_CANCELLED;
        }
        progress_nap(left < PROGRESS_SLICE_MS ? left : PROGRESS_SLICE_MS);
    }
    return host->call_is_cancelled(call) ? RPCD_ERR_CANCELLED : RPCD_OK;
}

/*
 * Reads the optional integer member key of params (an object, or NULL) into *value, checking
 * min..max. Returns RPCD_OK, or the status of call_fail() naming the problem.
 */
static int progress_get_int(rpcd_call *call, const json_t *params, const char *key, int min,
                            int max, int *value)
{
    const json_t *member = params != NULL ? json_object_get(params, key) : NULL;
    char detail[128];

    if (member == NULL) {
        return RPCD_OK;
    }
    if (!json_is_integer(member) || json_integer_value(member) < min ||
        json_integer_value(member) > max) {
        snprintf(detail, sizeof(detail), "\"%s\" must be an integer in %d..%d", key, min, max);
        return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, detail, NULL, 0);
    }
    *value = (int)json_integer_value(member);
    return RPCD_OK;
}

/* Loads params, which must be an object or absent. */
static int progress_load_object(rpcd_call *call, const char *params, size_t params_length,
                                json_t **out)
{
    if (rpcd_params_load(params, params_length, out) != RPCD_OK ||
        (*out != NULL && !json_is_object(*out))) {
        json_decref(*out);
        *out = NULL;
        return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "params must be an object", NULL, 0);
    }
    return RPCD_OK;
}

/*
 * progress: {"steps": N, "delay_ms": D}, both optional. Reports steps 1..N, waiting D ms
 * between two steps, and returns {"steps": N}. Members other than these two are ignored, so that
 * params._meta, which carries the progress token, does not get in the way.
 */
static int progress_steps(rpcd_call *call, const char *params, size_t params_length,
                          void *user_data)
{
    json_t *root = NULL;
    int steps = default_steps;
    int delay_ms = 0;
    int step;
    int status;
    char message[64];

    (void)user_data;
    status = progress_load_object(call, params, params_length, &root);
    if (status == RPCD_OK) {
        status = progress_get_int(call, root, "steps", 0, PROGRESS_MAX_STEPS, &steps);
    }
    if (status == RPCD_OK) {
        status = progress_get_int(call, root, "delay_ms", 0, PROGRESS_MAX_DELAY_MS, &delay_ms);
    }
    json_decref(root);
    if (status != RPCD_OK) {
        return status;
    }
    for (step = 1; step <= steps; step++) {
        if (step > 1) {
            status = progress_wait(call, delay_ms);
        } else if (host->call_is_cancelled(call)) {
            status = RPCD_ERR_CANCELLED;
        }
        if (status != RPCD_OK) {
            snprintf(message, sizeof(message), "cancelled after %d of %d steps", step - 1, steps);
            return host->call_fail(call, RPCD_ERR_CANCELLED, message, NULL, 0);
        }
        snprintf(message, sizeof(message), "step %d of %d", step, steps);
        /* A failed report (a stale call) is noticed through call_is_cancelled next time. */
        host->call_progress(call, step, steps, message);
    }
    return rpcd_call_result_json(host, call, json_pack("{si}", "steps", steps));
}

/*
 * sleep: {"ms": N}, required. Waits N ms, reporting the elapsed time about every 100 ms, and
 * returns {"slept_ms": N}; when cancelled, fails with the time slept so far in the error data.
 */
static int progress_sleep(rpcd_call *call, const char *params, size_t params_length,
                          void *user_data)
{
    json_t *root = NULL;
    int ms = -1;
    long long start;
    long long elapsed;
    long long next_report = PROGRESS_REPORT_EVERY_MS;
    int status;
    char message[64];

    (void)user_data;
    status = progress_load_object(call, params, params_length, &root);
    if (status == RPCD_OK) {
        status = progress_get_int(call, root, "ms", 0, PROGRESS_MAX_SLEEP_MS, &ms);
    }
    json_decref(root);
    if (status != RPCD_OK) {
        return status;
    }
    if (ms < 0) {
        return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "\"ms\" is required", NULL, 0);
    }
    start = progress_now_ms();
    for (;;) {
        elapsed = progress_now_ms() - start;
        if (elapsed >= ms) {
            break;
        }
        if (host->call_is_cancelled(call)) {
            snprintf(message, sizeof(message), "cancelled after %lld of %d ms", elapsed, ms);
            return rpcd_call_fail_json(host, call, RPCD_ERR_CANCELLED, message,
                                       json_pack("{sI}", "slept_ms", (json_int_t)elapsed));
        }
        if (elapsed >= next_report) {
            host->call_progress(call, (double)elapsed, ms, NULL);
            next_report = elapsed - elapsed % PROGRESS_REPORT_EVERY_MS + PROGRESS_REPORT_EVERY_MS;
        }
        progress_nap(ms - elapsed < PROGRESS_SLICE_MS ? ms - elapsed : PROGRESS_SLICE_MS);
    }
    /* Time slept beyond what was asked is the scheduler's, not the caller's: report ms. */
    return rpcd_call_result_json(host, call, json_pack("{si}", "slept_ms", ms));
}

/* Reads default_steps from the config; returns 0, or -1 with the reason in error. */
static int progress_configure(rpcd_plugin *plugin, char *error, size_t error_size)
{
    const char *text = host->config_get(plugin, "default_steps");
    char *end;
    long value;

    if (text == NULL) {
        return 0;
    }
    errno = 0;
    value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < 0 || value > PROGRESS_MAX_STEPS) {
        snprintf(error, error_size, "default_steps: \"%s\" is not an integer in 0..%d", text,
                 PROGRESS_MAX_STEPS);
        return -1;
    }
    default_steps = (int)value;
    return 0;
}

static int progress_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state,
                         char *error, size_t error_size)
{
    rpcd_method steps_method = rpcd_method_new("progress", progress_steps);
    rpcd_method sleep_method = rpcd_method_new("sleep", progress_sleep);
    int status;

    (void)state;
    host = host_api;
    if (progress_configure(plugin, error, error_size) != 0) {
        return RPCD_ERR_INVALID_ARGUMENT;
    }
    steps_method.description = "Reports progress for N steps, then returns {\"steps\": N}.";
    steps_method.params_schema =
        "{\"type\":\"object\",\"properties\":{"
        "\"steps\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":1000},"
        "\"delay_ms\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":10000}}}";
    sleep_method.description = "Waits N milliseconds, then returns {\"slept_ms\": N}.";
    sleep_method.params_schema =
        "{\"type\":\"object\",\"required\":[\"ms\"],\"properties\":{"
        "\"ms\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":3600000}}}";
    status = host->register_method(plugin, &steps_method);
    if (status == RPCD_OK) {
        status = host->register_method(plugin, &sleep_method);
    }
    if (status != RPCD_OK) {
        snprintf(error, error_size, "cannot register methods (status %d)", status);
    }
    return status;
}

RPCD_PLUGIN_DEFINE("progress", "1.0.0", progress_init, NULL);
