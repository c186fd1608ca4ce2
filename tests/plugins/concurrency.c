/* SPDX-License-Identifier: MIT */
/*
 * Fixture for the concurrency tests: deferred completion from one plugin thread (no thread per
 * call), a serialized method that reports whether two of its calls ever overlapped, and a
 * meeting point that only returns once several calls run at the same time, a count of the most
 * calls that ran at once, and the id of the
 * plugin's own thread, for a signal sent to it alone.
 */
#include <rpcd/plugin-jansson.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

static const rpcd_host_api *host;

/* ---- Deferred calls: held in a list, completed by one thread ------------------------- */

typedef struct held_call {
    rpcd_call *call;
    struct timespec due; /* complete at this time; zero: when released */
    struct held_call *next;
} held_call;

static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t held_changed = PTHREAD_COND_INITIALIZER;
static held_call *held_head;
static size_t held_count;
static bool release_all;
static bool stopping;
static pthread_t completer;
/* The completer's kernel thread id, once it runs: a test sends a signal to that thread alone. */
static atomic_int completer_tid;

static bool is_due(const held_call *held, const struct timespec *now)
{
    if (held->due.tv_sec == 0 && held->due.tv_nsec == 0)
        return release_all;
    return now->tv_sec > held->due.tv_sec ||
           (now->tv_sec == held->due.tv_sec && now->tv_nsec >= held->due.tv_nsec);
}

static void *complete_calls(void *unused)
{
    (void)unused;
    atomic_store(&completer_tid, (int)syscall(SYS_gettid));
    pthread_mutex_lock(&held_lock);
    while (!stopping) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        held_call **link = &held_head;
        held_call *ready = NULL;
        while (*link) {
            held_call *held = *link;
            if (is_due(held, &now)) {
                *link = held->next;
                held->next = ready;
                ready = held;
                held_count--;
            } else {
                link = &held->next;
            }
        }
        if (!held_head)
            release_all = false;
        pthread_mutex_unlock(&held_lock);
        while (ready) {
            held_call *held = ready;
            ready = held->next;
            rpcd_call_result_json(host, held->call, json_pack("{s:b}", "completed", 1));
            host->call_complete(held->call, RPCD_OK);
            free(held);
        }
        pthread_mutex_lock(&held_lock);
        if (!stopping && !(held_head && release_all)) {
            struct timespec wake;
            clock_gettime(CLOCK_REALTIME, &wake);
            wake.tv_nsec += 10 * 1000000L;
            if (wake.tv_nsec >= 1000000000L) {
                wake.tv_sec++;
                wake.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&held_changed, &held_lock, &wake);
        }
    }
    pthread_mutex_unlock(&held_lock);
    return NULL;
}

/* deferred.hold {"after_ms"?: N}: completes after N ms, or when deferred.release is called. */
static int hold(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    json_t *root = NULL;
    rpcd_params_load(params, params_length, &root);
    json_int_t after_ms = json_integer_value(json_object_get(root, "after_ms"));
    json_decref(root);
    held_call *held = calloc(1, sizeof *held);
    if (!held)
        return RPCD_ERR_NO_MEMORY;
    held->call = call;
    if (after_ms > 0) {
        clock_gettime(CLOCK_REALTIME, &held->due);
        held->due.tv_sec += after_ms / 1000;
        held->due.tv_nsec += (long)(after_ms % 1000) * 1000000L;
        if (held->due.tv_nsec >= 1000000000L) {
            held->due.tv_sec++;
            held->due.tv_nsec -= 1000000000L;
        }
    }
    pthread_mutex_lock(&held_lock);
    held->next = held_head;
    held_head = held;
    held_count++;
    pthread_cond_signal(&held_changed);
    pthread_mutex_unlock(&held_lock);
    /* The completer may finish the call before this return: the daemon allows it. */
    return RPCD_DEFERRED;
}

/* deferred.release: lets every held call complete; returns how many were held. */
static int release(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    pthread_mutex_lock(&held_lock);
    size_t count = held_count;
    release_all = true;
    pthread_cond_signal(&held_changed);
    pthread_mutex_unlock(&held_lock);
    return rpcd_call_result_json(host, call, json_pack("{s:I}", "held", (json_int_t)count));
}

/* deferred.twice: completes itself twice; the second must be refused. */
static int twice(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    int first = host->call_complete(call, RPCD_OK);
    int second = host->call_complete(call, RPCD_OK);
    int deferred = host->call_complete(call, RPCD_DEFERRED);
    rpcd_call_result_json(
        host, call,
        json_pack("{s:i,s:i,s:i}", "first", first, "second", second, "deferred", deferred));
    return RPCD_DEFERRED;
}

/* ---- Serialized: never two at once ----------------------------------------------------- */

static int serial_running;
static int serial_overlaps;
static pthread_mutex_t serial_lock = PTHREAD_MUTEX_INITIALIZER;

static void sleep_ms(long ms)
{
    struct timespec delay = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&delay, &delay) != 0 && errno == EINTR)
        ;
}

/* serial.probe: runs 20 ms; result: how many times two calls overlapped so far. */
static int serial_probe(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    pthread_mutex_lock(&serial_lock);
    if (++serial_running > 1)
        serial_overlaps++;
    pthread_mutex_unlock(&serial_lock);
    sleep_ms(20);
    pthread_mutex_lock(&serial_lock);
    serial_running--;
    int overlaps = serial_overlaps;
    pthread_mutex_unlock(&serial_lock);
    return rpcd_call_result_json(host, call, json_pack("{s:i}", "overlaps", overlaps));
}

/* ---- Meeting point: proves calls run at the same time ---------------------------------- */

static pthread_mutex_t meet_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t meet_changed = PTHREAD_COND_INITIALIZER;
static int meet_arrived;

/*
 * parallel.meet {"count": N}: waits (at most 10 s) until N calls are waiting here together.
 * Result {"met": true} when they did. Calls that run one after the other never meet.
 */
static int meet(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    json_t *root = NULL;
    rpcd_params_load(params, params_length, &root);
    json_int_t count = json_integer_value(json_object_get(root, "count"));
    json_decref(root);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 10;
    pthread_mutex_lock(&meet_lock);
    meet_arrived++;
    pthread_cond_broadcast(&meet_changed);
    int status = 0;
    while (meet_arrived < count && status == 0)
        status = pthread_cond_timedwait(&meet_changed, &meet_lock, &deadline);
    bool met = meet_arrived >= count;
    pthread_mutex_unlock(&meet_lock);
    return rpcd_call_result_json(host, call, json_pack("{s:b}", "met", met));
}

/* ---- Peak: how many calls ran at once --------------------------------------------------- */

static int peak_running;
static int peak_most;

/*
 * parallel.peak {"ms": N}: runs N ms; result {"peak": P}, the most calls of it that were inside
 * at once so far in this process.
 */
static int peak(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    json_t *root = NULL;
    rpcd_params_load(params, params_length, &root);
    json_int_t ms = json_integer_value(json_object_get(root, "ms"));
    json_decref(root);
    pthread_mutex_lock(&serial_lock);
    if (++peak_running > peak_most)
        peak_most = peak_running;
    pthread_mutex_unlock(&serial_lock);
    sleep_ms((long)ms);
    pthread_mutex_lock(&serial_lock);
    peak_running--;
    int most = peak_most;
    pthread_mutex_unlock(&serial_lock);
    return rpcd_call_result_json(host, call, json_pack("{s:i}", "peak", most));
}

/* thread.quick, thread.worker: whether the call runs on rpcd's main thread, the one that reads. */
static int which_thread(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    bool on_main = (pid_t)syscall(SYS_gettid) == getpid();
    return rpcd_call_result_json(host, call, json_pack("{s:b}", "on_main_thread", on_main));
}

/* thread.completer: {"tid": N}, the kernel id of the plugin's own thread (0: not started). */
static int completer_thread(rpcd_call *call, const char *params, size_t params_length,
                            void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    for (int tries = 0; tries < 1000 && atomic_load(&completer_tid) == 0; tries++) {
        struct timespec pause = {0, 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    return rpcd_call_result_json(host, call,
                                 json_pack("{s:i}", "tid", (int)atomic_load(&completer_tid)));
}

static int concurrency_init(rpcd_plugin *plugin, const rpcd_host_api *api, void **state,
                            char *error, size_t error_size)
{
    (void)state, (void)error, (void)error_size;
    host = api;
    if (!RPCD_HOST_HAS(host, call_complete))
        return RPCD_ERR_UNSUPPORTED;
    struct {
        const char *name;
        rpcd_handler_fn handler;
        uint32_t flags;
    } methods[] = {
        {"deferred.hold", hold, 0},
        {"deferred.release", release, 0},
        {"deferred.twice", twice, 0},
        {"serial.probe", serial_probe, RPCD_METHOD_SERIALIZED},
        {"parallel.meet", meet, 0},
        {"parallel.peak", peak, 0},
        {"thread.quick", which_thread, RPCD_METHOD_QUICK},
        {"thread.worker", which_thread, 0},
        {"thread.completer", completer_thread, 0},
    };
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        rpcd_method method = rpcd_method_new(methods[i].name, methods[i].handler);
        method.flags = methods[i].flags;
        int status = host->register_method(plugin, &method);
        if (status != RPCD_OK)
            return status;
    }
    if (pthread_create(&completer, NULL, complete_calls, NULL) != 0)
        return RPCD_ERR_INTERNAL;
    return RPCD_OK;
}

static void concurrency_shutdown(void *state)
{
    (void)state;
    pthread_mutex_lock(&held_lock);
    stopping = true;
    pthread_cond_signal(&held_changed);
    pthread_mutex_unlock(&held_lock);
    pthread_join(completer, NULL);
    /* Calls still held at exit were never answered; their records are the plugin's to free. */
    while (held_head) {
        held_call *next = held_head->next;
        free(held_head);
        held_head = next;
    }
}

RPCD_PLUGIN_DEFINE("concurrency", "1.0.0", concurrency_init, concurrency_shutdown);
