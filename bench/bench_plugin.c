/* SPDX-License-Identifier: MIT */
/*
 * bench plugin, for bench/run only (never installed): "<prefix>.spin" {"us": N} burns N µs of the
 * calling thread's CPU time, and "<prefix>.m0" .. "<prefix>.m<M-1>" are M trivial methods, so
 * that the cost of CPU-bound handlers, of many methods and of many plugins can be measured;
 * with fields = true, "<prefix>.fields" (a typical five-property params_schema, which rpcd
 * checks on every call) and "<prefix>.fields_plain" (the same, without a schema), so that
 * bench/schema can measure what the check costs.
 * Config: prefix (default "bench"), methods (default 0), fields (default false).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rpcd/plugin.h>

#define BENCH_MAX_SPIN_US 1000000L
#define BENCH_MAX_METHODS 1000000L
#define BENCH_MAX_PREFIX 64

/*
 * One per config section. The daemon loads the same shared object once for every section that
 * names it (dlopen returns the same handle), so anything kept in a global would be shared by
 * all of them: each section's data lives here instead, as the user data of its methods.
 */
typedef struct {
    const rpcd_host_api *host;
} bench_instance;

/* Reads the non-negative integer member "us" of a params object; -1 when there is none. */
static long bench_read_us(const char *params, size_t length)
{
    const char *end = params + length;
    const char *p = params ? memmem(params, length, "\"us\"", 4) : NULL;
    long value = 0;

    if (p == NULL) {
        return -1;
    }
    p += 4;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
        p++;
    }
    if (p == end || *p != ':') {
        return -1;
    }
    p++;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
        p++;
    }
    if (p == end || *p < '0' || *p > '9') {
        return -1;
    }
    while (p < end && *p >= '0' && *p <= '9') {
        value = value * 10 + (*p++ - '0');
        if (value > BENCH_MAX_SPIN_US) {
            return -1;
        }
    }
    return value;
}

static long long bench_thread_cpu_ns(void)
{
    struct timespec now;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

/*
 * Spins until this thread has used the requested CPU time. CPU time rather than wall time, so
 * that a call costs the same work however often the thread is preempted on a busy machine.
 */
static int bench_spin(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    const bench_instance *instance = user_data;
    long us = bench_read_us(params, params_length);
    char result[64];

    if (us < 0) {
        return instance->host->call_fail(call, RPCD_ERR_INVALID_PARAMS,
                                         "params must be {\"us\": 0..1000000}", NULL, 0);
    }
    long long end = bench_thread_cpu_ns() + (long long)us * 1000;
    while (bench_thread_cpu_ns() < end) {
    }
    int length = snprintf(result, sizeof result, "{\"us\":%ld}", us);
    return instance->host->call_result(call, result, (size_t)length);
}

static int bench_trivial(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)call, (void)params, (void)params_length, (void)user_data;
    return RPCD_OK;
}

/* A tool's typical params: a few typed members, bounds, an enum, an array, nothing else. */
#define BENCH_FIELDS_SCHEMA                                                                        \
    "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"city\",\"days\"],"        \
    "\"properties\":{\"city\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":100},"            \
    "\"days\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":14},"                                \
    "\"units\":{\"enum\":[\"metric\",\"imperial\"]},\"hourly\":{\"type\":\"boolean\"},"            \
    "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"maxItems\":8}}}"

/* fields and fields_plain: the same trivial handler, with and without a params_schema. */
static int bench_register_fields(rpcd_plugin *plugin, const rpcd_host_api *host, const char *prefix,
                                 char *error, size_t error_size)
{
    static const char *const suffixes[] = {"fields", "fields_plain"};
    char name[BENCH_MAX_PREFIX + 32];
    for (int i = 0; i < 2; i++) {
        snprintf(name, sizeof name, "%s.%s", prefix, suffixes[i]);
        rpcd_method method = rpcd_method_new(name, bench_trivial);
        method.flags = RPCD_METHOD_QUICK;
        method.params_schema = i == 0 ? BENCH_FIELDS_SCHEMA : NULL;
        int status = host->register_method(plugin, &method);
        if (status != RPCD_OK) {
            snprintf(error, error_size, "cannot register method %s (status %d)", name, status);
            return status;
        }
    }
    return RPCD_OK;
}

static int bench_init(rpcd_plugin *plugin, const rpcd_host_api *host, void **state, char *error,
                      size_t error_size)
{
    /* Every key is read whatever happens, so that none is reported as unknown. */
    const char *prefix = host->config_get(plugin, "prefix");
    const char *methods_text = host->config_get(plugin, "methods");
    const char *fields = host->config_get(plugin, "fields");
    long methods = 0;
    char name[BENCH_MAX_PREFIX + 32];
    int status;

    (void)state;
    if (prefix == NULL) {
        prefix = "bench";
    }
    if (prefix[0] == '\0' || strlen(prefix) > BENCH_MAX_PREFIX) {
        snprintf(error, error_size, "prefix must be 1 to %d bytes", BENCH_MAX_PREFIX);
        return RPCD_ERR_INVALID_ARGUMENT;
    }
    if (methods_text != NULL) {
        char *end;
        errno = 0;
        methods = strtol(methods_text, &end, 10);
        if (errno != 0 || end == methods_text || *end != '\0' || methods < 0 ||
            methods > BENCH_MAX_METHODS) {
            snprintf(error, error_size, "methods must be 0..%ld, not %s", BENCH_MAX_METHODS,
                     methods_text);
            return RPCD_ERR_INVALID_ARGUMENT;
        }
    }

    bench_instance *instance = malloc(sizeof *instance);
    if (instance == NULL) {
        snprintf(error, error_size, "out of memory");
        return RPCD_ERR_NO_MEMORY;
    }
    instance->host = host;

    /* The spin method owns the instance: the daemon frees it after the last call has ended. */
    snprintf(name, sizeof name, "%s.spin", prefix);
    rpcd_method method = rpcd_method_new(name, bench_spin);
    method.user_data = instance;
    method.free_user_data = free;
    method.description = "Burns params.us microseconds of CPU time, then returns {\"us\": N}.";
    status = host->register_method(plugin, &method);
    if (status != RPCD_OK) {
        free(instance);
        snprintf(error, error_size, "cannot register method %s (status %d)", name, status);
        return status;
    }
    if (fields != NULL && strcmp(fields, "true") == 0) {
        status = bench_register_fields(plugin, host, prefix, error, error_size);
        if (status != RPCD_OK) {
            return status;
        }
    }
    for (long i = 0; i < methods; i++) {
        snprintf(name, sizeof name, "%s.m%ld", prefix, i);
        method = rpcd_method_new(name, bench_trivial);
        status = host->register_method(plugin, &method);
        if (status != RPCD_OK) {
            snprintf(error, error_size, "cannot register method %s (status %d)", name, status);
            return status;
        }
    }
    return RPCD_OK;
}

RPCD_PLUGIN_DEFINE("bench", "1.0.0", bench_init, NULL);
