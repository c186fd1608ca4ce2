/* SPDX-License-Identifier: MIT */
/*
 * Fixture for plugins run with isolation = process: the host functions used every way a plugin
 * can (deferred completion from a thread of its own, failures with data, notifications, config,
 * logging, the method's name), and what a plugin does to its host: printing to stdout, writing
 * garbage or a forged message into the channel, looping for ever; and the time slice its threads
 * run with. Built twice, with the method prefix ISOLATED_PREFIX ("a" and "b"), for two plugins at
 * once.
 */
#include <rpcd/plugin.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef ISOLATED_PREFIX
#define ISOLATED_PREFIX "a"
#endif

static const rpcd_host_api *host;
static rpcd_plugin *self;
static char greeting[128] = "none";

/* PREFIX.echo (quick): the params back. */
static int echo(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    return params ? host->call_result(call, params, params_length) : RPCD_OK;
}

static void *complete_later(void *context)
{
    rpcd_call *call = context;
    struct timespec nap = {0, 20 * 1000 * 1000};
    nanosleep(&nap, NULL);
    host->call_result(call, "{\"from\":\"thread\"}", 17);
    host->call_complete(call, RPCD_OK);
    return NULL;
}

/* PREFIX.deferred: returns RPCD_DEFERRED; a thread of the plugin's completes the call. */
static int deferred(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    pthread_t thread;
    if (pthread_create(&thread, NULL, complete_later, call) != 0)
        return RPCD_ERR_INTERNAL;
    pthread_detach(thread);
    return RPCD_DEFERRED;
}

/* PREFIX.fail_code: error 42 with data, as the plugin's own. */
static int fail_code(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    return host->call_fail_code(call, 42, "the answer", "{\"why\":\"asked\"}", 15);
}

/* PREFIX.fail: invalid params with a message. */
static int fail(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "need two numbers", NULL, 0);
}

/* PREFIX.bad_utf8: a failure whose message is not UTF-8. */
static int bad_utf8(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    return host->call_fail(call, RPCD_ERR_INTERNAL, "bad \xff\xfe text", NULL, 0);
}

/* PREFIX.notify: a notification "isolated/hello" before the result; and a refused one. */
static int notify(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    int refused = host->call_notify(call, "notifications/progress", "{}", 2);
    host->call_notify(call, "isolated/hello", "{\"n\":1}", 7);
    char result[64];
    int length = snprintf(result, sizeof result, "{\"refused\":%d}", refused);
    return host->call_result(call, result, (size_t)length);
}

/* PREFIX.info: the method's name, the config key greeting, and a line of each log function. */
static void log_v(const char *format, ...)
{
    va_list args;
    va_start(args, format);
    host->log_v(self, RPCD_LOG_WARNING, format, args);
    va_end(args);
}

static int info(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    host->log(self, RPCD_LOG_WARNING, "isolated log %d", 1);
    log_v("isolated log_v %d", 2);
    host->log_text(self, RPCD_LOG_WARNING, "isolated log_text\nline");
    char result[256];
    int length = snprintf(result, sizeof result, "{\"method\":\"%s\",\"greeting\":\"%s\"}",
                          host->call_method(call), greeting);
    return host->call_result(call, result, (size_t)length);
}

/* PREFIX.stdout: prints to stdout, which must never reach the protocol, then answers. */
static int print(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    printf("{\"jsonrpc\":\"2.0\",\"id\":\"forged\",\"result\":1}\n");
    fflush(stdout);
    (void)!write(1, "raw stdout\n", 11);
    return host->call_result(call, "true", 4);
}

/*
 * PREFIX.garbage: bytes that are no frame into the channel: fd 5, the main lane of answers, or,
 * with params [6], the fast lane, where no call of this method (not quick) is ever read.
 */
static int garbage(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)call, (void)user_data;
    static const char bytes[] = "\xff\xff\xff\x7fnot a frame";
    int lane = params && params_length >= 3 && params[1] == '6' ? 6 : 5;
    (void)!write(lane, bytes, sizeof bytes);
    pause();
    return RPCD_OK;
}

/*
 * PREFIX.garbage_fast: quick, so that rpcd's caller reads its answer itself (the fast lane, fd 6):
 * bytes that are no frame there.
 */
static int garbage_fast(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)call, (void)params, (void)params_length, (void)user_data;
    static const char bytes[] = "\xff\xff\xff\x7fnot a frame";
    (void)!write(6, bytes, sizeof bytes);
    pause();
    return RPCD_OK;
}

/*
 * PREFIX.slow_quick: flagged quick, and answers after params[0] ms all the same: longer than
 * rpcd's caller waits for it.
 */
static int slow_quick(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    long ms = params && params_length > 1 ? strtol(params + 1, NULL, 10) : 0;
    nanosleep(&(struct timespec){ms / 1000, ms % 1000 * 1000000L}, NULL);
    return host->call_result(call, "\"late\"", 6);
}

/*
 * PREFIX.forge: a well-formed END for a call rpcd never sent: beyond the calls it has ever
 * numbered (params absent), or (params [0]) in the slot of the first call, a generation ahead;
 * or (params [1]) an END too short to name a call (4 bytes where an id takes 8).
 */
static int forge(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)call, (void)user_data;
    unsigned char frame[4 + 1 + 8 + 4] = {0};
    uint32_t length = 1 + 8 + 4;
    bool slot_in_use = params && params_length >= 3 && params[1] == '0';
    bool truncated = params && params_length >= 3 && params[1] == '1';
    uint64_t id = (uint64_t)7777 << 32 | (slot_in_use ? 0 : 4242);
    if (truncated)
        length = 1 + 4;
    memcpy(frame, &length, 4);
    frame[4] = 11; /* END */
    memcpy(frame + 5, &id, 8);
    (void)!write(5, frame, 4 + length);
    pause();
    return RPCD_OK;
}

/*
 * PREFIX.forge_text: a FAIL frame for the first call the host was ever given (entry 0, generation
 * 1: call it first) whose message is not UTF-8, which the real call_fail would refuse; or (params
 * [1]) UTF-8 with a NUL inside, which no C string the real call_fail takes can hold.
 */
static int forge_text(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)call, (void)user_data;
    bool with_nul = params && params_length >= 3 && params[1] == '1';
    static const char not_utf8[] = "\xff\xfe not UTF-8", nul[] = "a \0 inside";
    const char *message = with_nul ? nul : not_utf8;
    uint32_t text_length = (uint32_t)((with_nul ? sizeof nul : sizeof not_utf8) - 1);
    unsigned char frame[4 + 1 + 8 + 4 + 1 + 4 + 64 + 1] = {0};
    uint32_t length = 1 + 8 + 4 + 1 + 4 + text_length + 1;
    uint64_t id = (uint64_t)1 << 32;
    int32_t status = RPCD_ERR_INTERNAL;
    memcpy(frame, &length, 4);
    frame[4] = 7; /* FAIL */
    memcpy(frame + 5, &id, 8);
    memcpy(frame + 13, &status, 4);
    frame[17] = 1; /* a message */
    memcpy(frame + 18, &text_length, 4);
    memcpy(frame + 22, message, text_length);
    /* the last byte stays 0: no data */
    (void)!write(5, frame, 4 + length);
    pause();
    return RPCD_OK;
}

/* PREFIX.loop: never returns, whatever happens (a cancellation included). */
static int loop(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)call, (void)params, (void)params_length, (void)user_data;
    for (;;)
        pause();
    return RPCD_OK;
}

/* PREFIX.wait: returns RPCD_ERR_CANCELLED once its call is cancelled (or a timeout's cancel). */
static int wait_cancel(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    struct timespec nap = {0, 2 * 1000 * 1000};
    while (!host->call_is_cancelled(call))
        nanosleep(&nap, NULL);
    return RPCD_ERR_CANCELLED;
}

/* PREFIX.null: a NULL dereference, which the sanitizers must not turn into an exit. */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize)
#define NO_SANITIZE __attribute__((no_sanitize("address", "undefined")))
#endif
#endif
#ifndef NO_SANITIZE
#define NO_SANITIZE
#endif
static int *volatile nowhere;
NO_SANITIZE static int null(rpcd_call *call, const char *params, size_t params_length,
                            void *user_data)
{
    (void)call, (void)params, (void)params_length, (void)user_data;
    return *nowhere;
}

/*
 * PREFIX.inherited: which of the host's channel descriptors (3 to 7) a program the plugin runs
 * finds open, as a string of their numbers ("" when none): it must find none.
 */
static int inherited(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    FILE *shell = popen("for fd in 3 4 5 6 7; do [ -e /proc/$$/fd/$fd ] && printf '%s ' $fd; "
                        "done",
                        "r");
    if (!shell)
        return RPCD_ERR_INTERNAL;
    char found[64] = "";
    size_t length = fread(found, 1, sizeof found - 1, shell);
    found[length] = '\0';
    if (pclose(shell) == -1)
        return RPCD_ERR_INTERNAL;
    char result[80];
    int result_length = snprintf(result, sizeof result, "\"%s\"", found);
    return host->call_result(call, result, (size_t)result_length);
}

/*
 * PREFIX.slice (quick: the host's thread that reads calls) and PREFIX.slice_worker (a worker
 * thread): the time slice of the thread that runs it, in nanoseconds, as sched_getattr gives it
 * (the kernel's struct sched_attr in its first version, declared here as a plugin would).
 */
static int slice(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    struct {
        uint32_t size, policy;
        uint64_t flags;
        int32_t nice;
        uint32_t priority;
        uint64_t runtime, deadline, period;
    } attr;
    memset(&attr, 0, sizeof attr);
    if (syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) != 0)
        return RPCD_ERR_INTERNAL;
    char result[32];
    int length = snprintf(result, sizeof result, "%llu", (unsigned long long)attr.runtime);
    return host->call_result(call, result, (size_t)length);
}

/* PREFIX.fork_null: a child that keeps the channel open for 60 s (and lets go of the standard
 * descriptors, which lead to the test), then the host's NULL dereference: the host is dead while
 * its channel is still open. */
static int fork_null(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    if (fork() == 0) {
        close(0);
        close(1);
        close(2);
        sleep(60);
        _exit(0);
    }
    return null(call, params, params_length, user_data);
}

static int isolated_init(rpcd_plugin *plugin, const rpcd_host_api *api, void **state, char *error,
                         size_t error_size)
{
    (void)state, (void)error, (void)error_size;
    host = api;
    self = plugin;
    const char *value = host->config_get(plugin, "greeting");
    if (value)
        snprintf(greeting, sizeof greeting, "%s", value);
    static const struct {
        const char *name;
        rpcd_handler_fn handler;
        uint32_t flags;
    } methods[] = {
        {ISOLATED_PREFIX ".echo", echo, RPCD_METHOD_QUICK},
        {ISOLATED_PREFIX ".deferred", deferred, 0},
        {ISOLATED_PREFIX ".fail_code", fail_code, 0},
        {ISOLATED_PREFIX ".fail", fail, 0},
        {ISOLATED_PREFIX ".bad_utf8", bad_utf8, 0},
        {ISOLATED_PREFIX ".notify", notify, 0},
        {ISOLATED_PREFIX ".info", info, 0},
        {ISOLATED_PREFIX ".stdout", print, 0},
        {ISOLATED_PREFIX ".garbage", garbage, 0},
        {ISOLATED_PREFIX ".garbage_fast", garbage_fast, RPCD_METHOD_QUICK},
        {ISOLATED_PREFIX ".slow_quick", slow_quick, RPCD_METHOD_QUICK},
        {ISOLATED_PREFIX ".forge", forge, 0},
        {ISOLATED_PREFIX ".forge_text", forge_text, 0},
        {ISOLATED_PREFIX ".loop", loop, 0},
        {ISOLATED_PREFIX ".wait", wait_cancel, 0},
        {ISOLATED_PREFIX ".null", null, 0},
        {ISOLATED_PREFIX ".fork_null", fork_null, 0},
        {ISOLATED_PREFIX ".inherited", inherited, 0},
        {ISOLATED_PREFIX ".slice", slice, RPCD_METHOD_QUICK},
        {ISOLATED_PREFIX ".slice_worker", slice, 0},
    };
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        rpcd_method method = rpcd_method_new(methods[i].name, methods[i].handler);
        method.flags = methods[i].flags;
        method.description = "an isolated fixture method";
        int status = host->register_method(plugin, &method);
        if (status != RPCD_OK)
            return status;
    }
    return RPCD_OK;
}

RPCD_PLUGIN_DEFINE("isolated_" ISOLATED_PREFIX, "1.0.0", isolated_init, NULL);
