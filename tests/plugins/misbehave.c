/* SPDX-License-Identifier: MIT */
/*
 * Fixture: a plugin that breaks the contract in the ways the daemon promises to survive: writing
 * to stdout, sending invalid JSON, keeping a call past its end, returning text that is not UTF-8.
 * It also echoes its config key "greeting", to show the daemon hands plugin sections over.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rpcd/plugin-jansson.h>

/* Set once by init, before any call, and only read afterwards. */
static const rpcd_host_api *host;

/*
 * The call of the last misbehave.stale, kept on purpose past its end. Atomic because
 * misbehave.use_stale may run on another thread than the call that stored it.
 */
static _Atomic(rpcd_call *) stale_call;

/* Writes to the process's stdout every way a careless plugin might; the daemon must cope. */
static int misbehave_printf(rpcd_call *call, const char *params, size_t params_length,
                            void *user_data)
{
    static const char raw[] = "misbehave: write(1)\n";
    static const char ok[] = "\"ok\"";
    ssize_t written;

    (void)params;
    (void)params_length;
    (void)user_data;
    printf("misbehave: printf\n");
    puts("misbehave: puts");
    fwrite("misbehave: fwrite\n", 1, strlen("misbehave: fwrite\n"), stdout);
    /* Flushed now, so the text is not left in the buffer to surface at some later time. */
    fflush(stdout);
    written = write(1, raw, sizeof(raw) - 1);
    (void)written;
    return host->call_result(call, ok, sizeof(ok) - 1);
}

/* Sends a notification whose params are not JSON; returns the status it got (-7 expected). */
static int misbehave_bad_notify(rpcd_call *call, const char *params, size_t params_length,
                                void *user_data)
{
    static const char bad[] = "{bad";
    int status;

    (void)params;
    (void)params_length;
    (void)user_data;
    status = host->call_notify(call, "misbehave/bad", bad, sizeof(bad) - 1);
    return rpcd_call_result_json(host, call, json_integer(status));
}

static int misbehave_stale(rpcd_call *call, const char *params, size_t params_length,
                           void *user_data)
{
    (void)params;
    (void)params_length;
    (void)user_data;
    atomic_store(&stale_call, call);
    return RPCD_OK;
}

/*
 * Uses the call kept by misbehave.stale, which has ended by now, and returns the statuses:
 * {"progress": -8, "notify": -8, "result": -8, "cancelled": 1} from a daemon that keeps its word.
 */
static int misbehave_use_stale(rpcd_call *call, const char *params, size_t params_length,
                               void *user_data)
{
    static const char text[] = "\"stale\"";
    rpcd_call *stale = atomic_load(&stale_call);
    int progress;
    int notify;
    int result;
    int cancelled;

    (void)params;
    (void)params_length;
    (void)user_data;
    if (stale == NULL) {
        return host->call_fail(call, RPCD_ERR_INTERNAL, "call misbehave.stale first", NULL, 0);
    }
    progress = host->call_progress(stale, 1, 2, "stale");
    notify = host->call_notify(stale, "misbehave/stale", NULL, 0);
    result = host->call_result(stale, text, sizeof(text) - 1);
    cancelled = host->call_is_cancelled(stale);
    return rpcd_call_result_json(host, call,
                                 json_pack("{sisisisi}", "progress", progress, "notify", notify,
                                           "result", result, "cancelled", cancelled));
}

/* A JSON string holding bytes that are not UTF-8; returns call_result's status (-7 expected). */
static int misbehave_non_utf8_result(rpcd_call *call, const char *params, size_t params_length,
                                     void *user_data)
{
    static const char text[] = "\"\xff\xfe\"";

    (void)params;
    (void)params_length;
    (void)user_data;
    return host->call_result(call, text, sizeof(text) - 1);
}

/* Returns the config's greeting, kept in user_data (the daemon frees it at unload). */
static int misbehave_greeting(rpcd_call *call, const char *params, size_t params_length,
                              void *user_data)
{
    json_t *value;

    (void)params;
    (void)params_length;
    if (user_data == NULL) {
        return rpcd_call_result_json(host, call, json_null());
    }
    value = json_string((const char *)user_data);
    if (value == NULL) {
        return host->call_fail(call, RPCD_ERR_INTERNAL, "greeting is not UTF-8", NULL, 0);
    }
    return rpcd_call_result_json(host, call, value);
}

/* misbehave.read_stdin: reads fd 0 as a careless plugin might; the daemon gave it /dev/null. */
static int misbehave_read_stdin(rpcd_call *call, const char *params, size_t params_length,
                                void *user_data)
{
    char buffer[256];
    ssize_t n = read(STDIN_FILENO, buffer, sizeof buffer);
    (void)params;
    (void)params_length;
    (void)user_data;
    return rpcd_call_result_json(host, call, json_integer(n));
}

static const struct {
    const char *name;
    rpcd_handler_fn handler;
} misbehave_methods[] = {
    {"misbehave.printf", misbehave_printf},
    {"misbehave.bad_notify", misbehave_bad_notify},
    {"misbehave.stale", misbehave_stale},
    {"misbehave.use_stale", misbehave_use_stale},
    {"misbehave.non_utf8_result", misbehave_non_utf8_result},
    {"misbehave.read_stdin", misbehave_read_stdin},
};

static int misbehave_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state,
                          char *error, size_t error_size)
{
    rpcd_method method = rpcd_method_new("misbehave.greeting", misbehave_greeting);
    const char *greeting;
    size_t i;
    int status;

    (void)state;
    host = host_api;
    for (i = 0; i < sizeof(misbehave_methods) / sizeof(misbehave_methods[0]); i++) {
        rpcd_method plain =
            rpcd_method_new(misbehave_methods[i].name, misbehave_methods[i].handler);

        status = host->register_method(plugin, &plain);
        if (status != RPCD_OK) {
            snprintf(error, error_size, "cannot register %s (status %d)", misbehave_methods[i].name,
                     status);
            return status;
        }
    }
    /* The value is only valid during init: keep a copy, freed by the daemon at unload. */
    greeting = host->config_get(plugin, "greeting");
    if (greeting != NULL) {
        method.user_data = strdup(greeting);
        if (method.user_data == NULL) {
            snprintf(error, error_size, "out of memory");
            return RPCD_ERR_NO_MEMORY;
        }
        method.free_user_data = free;
    }
    status = host->register_method(plugin, &method);
    if (status != RPCD_OK) {
        free(method.user_data);
        snprintf(error, error_size, "cannot register misbehave.greeting (status %d)", status);
    }
    return status;
}

RPCD_PLUGIN_DEFINE("misbehave", "1.0.0", misbehave_init, NULL);
