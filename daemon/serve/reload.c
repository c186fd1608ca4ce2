/* SPDX-License-Identifier: MIT */
/*
 * The reload: config to a new generation beside the running one, what it changed in one log
 * line, and the thread that SIGHUP (or, with watch = true, a change of the files) wakes to do it.
 */
#include "serve/reload.h"

#include "base/buffer.h"
#include "base/clock.h"
#include "methods/generation.h"
#include "isolation/sandbox.h"
#include "loader/loader.h"
#include "base/log.h"
#include "mcp/mcp.h"
#include "base/signals.h"
#include "config/watch.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

/* A list (tools/list, prompts/list...) as a client reads it, every page: what list_changed is
 * about. */
static int render_list(const mcp_tools *tools, const char *method, buffer *out)
{
    char cursor[64] = "";
    for (;;) {
        js_span params = {cursor, strlen(cursor)};
        size_t before = out->length;
        if (mcp_answer(tools, method, strlen(method), params, out) != 0)
            return -1;
        static const char next[] = "\"nextCursor\":\"";
        const char *found = NULL;
        for (const char *at = out->data + before; at && at < out->data + out->length;) {
            at = memmem(at, out->length - (size_t)(at - out->data), next, sizeof next - 1);
            if (at)
                found = at++;
        }
        if (!found)
            return 0;
        const char *digits = found + sizeof next - 1;
        snprintf(cursor, sizeof cursor, "{\"cursor\":\"%.*s\"}", (int)strspn(digits, "0123456789"),
                 digits);
    }
}

static bool list_differs(const mcp_tools *before, const mcp_tools *after, const char *method)
{
    buffer old_list = BUFFER_INIT, new_list = BUFFER_INIT;
    bool differ = true; /* when in doubt, the client asks again: no harm */
    if (render_list(before, method, &old_list) == 0 && render_list(after, method, &new_list) == 0)
        differ = old_list.length != new_list.length ||
                 memcmp(old_list.data, new_list.data, old_list.length) != 0;
    buf_free(&old_list);
    buf_free(&new_list);
    return differ;
}

/* Appends "KIND [a, b]" for the plugins of list of that kind, after separator. */
static int append_names(buffer *out, const char *separator, const char *kind, const loader *list,
                        const loader *other, int want)
{
    int failed = buf_printf(out, "%s%s [", separator, kind);
    size_t shown = 0;
    for (size_t i = 0; list && i < ld_count(list); i++) {
        const char *name = ld_name_at(list, i);
        const void *there = ld_instance(other, name);
        /* 0: absent from other; 1: the same instance there; 2: another instance there */
        int kind_of = !there ? 0 : there == ld_instance(list, name) ? 1 : 2;
        if (kind_of != want)
            continue;
        failed |= buf_printf(out, "%s%s", shown++ ? ", " : "", name);
    }
    return failed | buf_append_char(out, ']');
}

/* The methods of after, by what they were in before; removed: those of before not in after. */
static void count_methods(const registry *before, const registry *after, size_t counts[4])
{
    memset(counts, 0, 4 * sizeof *counts);
    for (size_t i = 0; i < reg_count(after); i++) {
        const reg_method *method = reg_at(after, i);
        const reg_method *was = reg_find(before, method->name, method->name_length);
        counts[!was ? 0 : was->owner == method->owner ? 3 : 2]++;
    }
    for (size_t i = 0; i < reg_count(before); i++) {
        const reg_method *method = reg_at(before, i);
        counts[1] += reg_find(after, method->name, method->name_length) == NULL;
    }
}

static void log_reload(const generation *before, const generation *after, unsigned long number,
                       bool tools_changed, double took_ms, char *summary, size_t summary_size)
{
    const loader *old_plugins = gen_plugins(before), *new_plugins = gen_plugins(after);
    size_t methods[4];
    count_methods(gen_methods(before), gen_methods(after), methods);
    buffer line = BUFFER_INIT;
    int failed = buf_printf(&line, "reloaded: generation %lu: plugins", number);
    failed |= append_names(&line, " ", "added", new_plugins, old_plugins, 0);
    failed |= append_names(&line, ", ", "removed", old_plugins, new_plugins, 0);
    failed |= append_names(&line, ", ", "replaced", new_plugins, old_plugins, 2);
    failed |= append_names(&line, ", ", "unchanged", new_plugins, old_plugins, 1);
    failed |= buf_printf(&line,
                         "; methods added %zu, removed %zu, replaced %zu, unchanged %zu; "
                         "tools %s; %.1f ms",
                         methods[0], methods[1], methods[2], methods[3],
                         tools_changed ? "changed" : "unchanged", took_ms);
    failed |= buf_append_char(&line, '\0');
    if (!failed)
        log_message(LOG_INFO, "%s", line.data);
    if (!failed && summary && summary_size)
        snprintf(summary, summary_size, "%s", line.data + strlen("reloaded: "));
    buf_free(&line);
}

int rl_reload(const rpcd_runtime *runtime, unsigned long number, rl_result *result, char *error,
              size_t error_size)
{
    struct timespec started, ended;
    clock_gettime(CLOCK_MONOTONIC, &started);
    rpcd_config *config = NULL;
    registry *methods = NULL;
    loader *plugins = NULL;
    mcp_tools *tools = NULL;
    generation *next = NULL;
    const rpcd_config *running = runtime->config;
    if (cfg_load(running->path, !running->insecure, &config, error, error_size) != 0)
        return -1;
    /* As at start-up: a broken drop-in is left out, and the rest is the new configuration. */
    cfg_log_skipped_dropins(config);
    generation *before = gen_take_current(runtime->generations);
    ld_previous previous = {gen_plugins(before), gen_methods(before), running};
    int status = -1;
    if (reg_new(&methods) != 0) {
        snprintf(error, error_size, "out of memory");
        goto done;
    }
    if (ld_load(config, &previous, methods, &plugins, error, error_size) != 0)
        goto done;
    sandbox_warn_unenforced(config);
    if (mcp_tools_new(methods, config, &tools, error, error_size) != 0 ||
        rt_set_policy(tools, methods, config, plugins, error, error_size) != 0)
        goto done;
    /* Stolen, freed on failure too. */
    status = gen_new(methods, tools, plugins, rt_free_generation_parts, &next);
    methods = NULL, tools = NULL, plugins = NULL;
    if (status != 0) {
        snprintf(error, error_size, "out of memory");
        goto done;
    }
    result->tools_changed = list_differs(gen_tools(before), gen_tools(next), "tools/list");
    result->prompts_changed = list_differs(gen_tools(before), gen_tools(next), "prompts/list");
    result->resources_changed =
        list_differs(gen_tools(before), gen_tools(next), "resources/list") ||
        list_differs(gen_tools(before), gen_tools(next), "resources/templates/list");
    result->methods = reg_count(gen_methods(next));
    /* From here on new calls look their methods up in next; the old ones finish on before. */
    gen_publish(runtime->generations, next);
    /* After: whoever reads the line may count on the new methods. next stays alive, as only
     * this thread publishes. */
    clock_gettime(CLOCK_MONOTONIC, &ended);
    log_reload(before, next, number, result->tools_changed,
               (double)(ended.tv_sec - started.tv_sec) * 1e3 +
                   (double)(ended.tv_nsec - started.tv_nsec) / 1e6,
               result->summary, result->summary_size);
done:
    mcp_tools_free(tools);
    ld_unload_all(plugins, methods);
    reg_free(methods);
    /* The last reference to the old generation shuts down the plugins only it held. */
    gen_release(before);
    cfg_free(config);
    return status;
}

/* ---- The reloading thread ----------------------------------------------------------------- */

/*
 * The thread is started by the first SIGHUP, not at start-up: a process with a second thread
 * pays for it on every call, in the C library's locks (about 580 instructions of a 3,520-
 * instruction echo round trip, under callgrind), and most sessions never reload. A handler
 * cannot start a thread, so it sets a flag and interrupts the reading thread's read(), which
 * starts it (rl_before_read). The interruption comes from a timer, every 50 ms until the reader
 * has seen the flag: a signal that lands on the reader just before it enters read() (where a
 * race detector or valgrind deliver the signals they hold back) would otherwise be lost.
 */
/* After a change of a watched file, how long nothing more must change before the reload: a copy
 * in progress (a write, then another) is read once it is whole. */
enum { WATCH_QUIET_MS = 250 };

struct reloader {
    const rpcd_runtime *runtime;
    watcher *watch; /* with watch = true; NULL otherwise */
    rl_lists_changed_fn *lists_changed;
    void *context;
    int wake;            /* eventfd: SIGHUP and rl_stop write to it */
    atomic_bool started; /* the thread runs: a handler writes to wake itself */
    atomic_bool stopping;
    pthread_t thread;
    pthread_t reader; /* the thread that starts it */
    timer_t nudge;    /* sends the reader the wake-up signal until it has looked */
    /* A reload published a generation the reader may still hold (rl_before_read clears it). */
    atomic_bool let_go_pending;
    /* One reload at a time: the reloading thread's and rl_reload_now's. */
    pthread_mutex_t reloading;
    atomic_ulong generation; /* the number of the current one */
};

/* The reloader SIGHUP wakes, NULL while none runs. A handler counts itself in hangups_inside
 * before it reads it, and rl_stop waits until none is inside before freeing it. */
static _Atomic(reloader *) hangup_target;
static atomic_int hangups_inside;
static atomic_bool hangup_pending; /* a SIGHUP came before the thread ran */

static void wake(int fd)
{
    uint64_t one = 1;
    /* A full counter already asks for a reload: nothing is lost when this fails. */
    ssize_t written = write(fd, &one, sizeof one);
    (void)written;
}

static void on_hangup(int number)
{
    int saved_errno = errno;
    atomic_fetch_add(&hangups_inside, 1);
    reloader *r = atomic_load(&hangup_target);
    if (!r) {
        log_signal(LOG_WARNING, number, "ignored: rpcd reloads only while serving");
    } else if (atomic_load(&r->started)) {
        wake(r->wake);
    } else {
        atomic_store(&hangup_pending, true);
        struct itimerspec soon = {{0, 50 * 1000000L}, {0, 1000000L}};
        timer_settime(r->nudge, 0, &soon, NULL);
    }
    atomic_fetch_sub(&hangups_inside, 1);
    errno = saved_errno;
}

/* What is watched follows the files the running configuration names (they may have changed
 * with the reload just made). A configuration that does not read keeps the last set. */
static void rewatch(reloader *r)
{
    const rpcd_config *running = r->runtime->config;
    rpcd_config *config = NULL;
    char error[512];
    if (cfg_load(running->path, !running->insecure, &config, error, sizeof error) == 0)
        watch_set(r->watch, config);
    cfg_free(config);
}

/* One reload, its outcome logged; the reloading lock held. Returns 0, or -1 with error. */
static int reload_locked(reloader *r, char *summary, size_t summary_size, char *error,
                         size_t error_size)
{
    rl_result result = {.summary = summary, .summary_size = summary_size};
    unsigned long running = atomic_load(&r->generation);
    int status = rl_reload(r->runtime, running + 1, &result, error, error_size);
    if (r->watch)
        rewatch(r);
    if (status != 0) {
        log_message(LOG_ERROR, "reload failed, still serving generation %lu: %s", running, error);
        return -1;
    }
    atomic_store(&r->generation, running + 1);
    if ((result.tools_changed || result.prompts_changed || result.resources_changed) &&
        r->lists_changed)
        r->lists_changed(r->context, &result);
    /* A reader waiting for input lets go of the old generation now (the before-read hook
     * refreshes): its plugins are shut down once their calls end, not with the next line. The
     * signal is sent again every 50 ms until the reader has looked (rl_before_read): one that
     * lands just before its read(), where valgrind or a race detector deliver it, is lost. */
    atomic_store(&r->let_go_pending, true);
    struct itimerspec until_seen = {{0, 50 * 1000000L}, {0, 50 * 1000000L}};
    timer_settime(r->nudge, 0, &until_seen, NULL);
    pthread_kill(r->reader, sig_wake_number());
    return 0;
}

static void reload_once(reloader *r)
{
    char error[1024];
    pthread_mutex_lock(&r->reloading);
    reload_locked(r, NULL, 0, error, sizeof error);
    pthread_mutex_unlock(&r->reloading);
}

int rl_reload_now(reloader *r, char *summary, size_t summary_size, char *error, size_t error_size)
{
    pthread_mutex_lock(&r->reloading);
    int status = reload_locked(r, summary, summary_size, error, error_size);
    pthread_mutex_unlock(&r->reloading);
    return status;
}

unsigned long rl_generation(reloader *r)
{
    return atomic_load(&r->generation);
}

/*
 * Waits for a SIGHUP (the eventfd) or, when watching, for a change followed by WATCH_QUIET_MS of
 * quiet. Returns 1 when a reload is due, 0 when rl_stop asks the thread to end.
 */
static int wait_for_reload(reloader *r)
{
    long long due = -1; /* once a change was seen: when to reload */
    for (;;) {
        struct pollfd fds[2] = {{r->wake, POLLIN, 0},
                                {r->watch ? watch_fd(r->watch) : -1, POLLIN, 0}};
        long long now = clock_now_ms();
        int timeout = due < 0 ? -1 : due <= now ? 0 : (int)(due - now);
        int ready = poll(fds, 2, timeout);
        if (ready < 0 && errno != EINTR)
            return 0;
        if (ready > 0 && (fds[0].revents & POLLIN)) {
            uint64_t count;
            ssize_t n = read(r->wake, &count, sizeof count);
            return n == sizeof count && !atomic_load(&r->stopping);
        }
        if (ready > 0 && (fds[1].revents & POLLIN)) {
            /* Under the reloading lock: a reload asked for elsewhere (rl_reload_now) sets what
             * is watched anew. */
            pthread_mutex_lock(&r->reloading);
            bool changed = watch_read(r->watch);
            pthread_mutex_unlock(&r->reloading);
            if (changed)
                due = clock_now_ms() + WATCH_QUIET_MS;
            continue;
        }
        if (ready == 0 && due >= 0)
            return 1;
    }
}

static void *reload_loop(void *argument)
{
    reloader *r = argument;
    while (wait_for_reload(r))
        reload_once(r);
    return NULL;
}

/* Starts the thread, without any of the signals rpcd is sent (a fault still reaches it). */
static int start_thread(reloader *r)
{
    sigset_t sent, before;
    sigemptyset(&sent);
    int numbers[] = {SIGHUP, SIGTERM, SIGINT, SIGUSR1, SIGUSR2, SIGPIPE};
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++)
        sigaddset(&sent, numbers[i]);
    for (int number = SIGRTMIN; number <= SIGRTMAX; number++)
        sigaddset(&sent, number);
    pthread_sigmask(SIG_BLOCK, &sent, &before);
    int started = pthread_create(&r->thread, NULL, reload_loop, r);
    pthread_sigmask(SIG_SETMASK, &before, NULL);
    return started == 0 ? 0 : -1;
}

void rl_before_read(void *context)
{
    reloader *r = context;
    if (!atomic_load_explicit(&hangup_pending, memory_order_relaxed) &&
        !atomic_load_explicit(&r->let_go_pending, memory_order_relaxed))
        return;
    struct itimerspec never = {{0, 0}, {0, 0}};
    timer_settime(r->nudge, 0, &never, NULL);
    /* The reader takes the new generation right after this hook (main.c's before_read). */
    atomic_store(&r->let_go_pending, false);
    /* Read after the timer is stopped: a SIGHUP from now on sets it going again. */
    if (!atomic_load(&hangup_pending))
        return;
    atomic_store(&hangup_pending, false);
    if (!atomic_load(&r->started)) {
        if (start_thread(r) != 0) {
            log_message(LOG_ERROR, "cannot reload: no thread to reload on");
            return;
        }
        atomic_store(&r->started, true);
    }
    wake(r->wake);
}

int rl_start(const rpcd_runtime *runtime, rl_lists_changed_fn *lists_changed, void *context,
             reloader **out)
{
    reloader *r = calloc(1, sizeof *r);
    if (!r)
        return -1;
    r->runtime = runtime;
    r->lists_changed = lists_changed;
    r->context = context;
    atomic_init(&r->generation, 1);
    atomic_init(&r->let_go_pending, false);
    pthread_mutex_init(&r->reloading, NULL);
    r->reader = pthread_self();
    r->wake = eventfd(0, EFD_CLOEXEC);
    struct sigevent event;
    memset(&event, 0, sizeof event);
    event.sigev_notify = SIGEV_THREAD_ID;
    event._sigev_un._tid = gettid();
    event.sigev_signo = sig_wake_number();
    if (r->wake < 0 || event.sigev_signo == 0 ||
        timer_create(CLOCK_MONOTONIC, &event, &r->nudge) != 0) {
        if (r->wake >= 0)
            close(r->wake);
        free(r);
        return -1;
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_hangup;
    action.sa_flags = SA_ONSTACK; /* no SA_RESTART: the reader's read() returns EINTR */
    sigemptyset(&action.sa_mask);
    atomic_store(&hangup_target, r);
    sigaction(SIGHUP, &action, NULL);
    sig_watch(SIGHUP);
    /* Watching needs the thread from the start: a change comes without a SIGHUP to start it.
     * Last: the thread reads what the lines above set (the watched dispositions). */
    if (runtime->config->watch) {
        if (watch_new(&r->watch) != 0 || watch_set(r->watch, runtime->config) != 0 ||
            start_thread(r) != 0) {
            log_message(LOG_ERROR,
                        "cannot watch the configuration (watch = true): %s; reload "
                        "with SIGHUP",
                        strerror(errno));
            watch_free(r->watch);
            r->watch = NULL;
        } else {
            atomic_store(&r->started, true);
        }
    }
    *out = r;
    return 0;
}

void rl_stop(reloader *r)
{
    if (!r)
        return;
    atomic_store(&hangup_target, NULL);
    while (atomic_load(&hangups_inside) > 0)
        sched_yield();
    if (atomic_load(&r->started)) {
        atomic_store(&r->stopping, true);
        wake(r->wake);
        pthread_join(r->thread, NULL);
    }
    timer_delete(r->nudge);
    pthread_mutex_destroy(&r->reloading);
    close(r->wake);
    watch_free(r->watch);
    free(r);
}
