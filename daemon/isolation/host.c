/* SPDX-License-Identifier: MIT */
/*
 * The plugin host: INIT read, the plugin loaded and its methods reported, then CALL frames run
 * on a worker pool (quick methods on the reading thread) and CANCEL frames marked. Its host
 * functions keep a call's local state (cancelled, deferred, ended) to answer as rpcd would, and
 * send what rpcd must apply as frames, many per write.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "isolation/host.h"
#include "isolation/host_internal.h"
#include "isolation/host_life.h"
#include "isolation/host_namespace.h"

#include "config/config.h"
#include "base/executor.h"
#include "isolation/channel.h"
#include "isolation/sandbox.h"
#include "isolation/time_slice.h"
#include "loader/loader.h"
#include "base/log.h"
#include "wire/mcp_events.h"
#include "methods/registry.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct host_state host = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .free_head = NO_CALL,
    .lanes =
        {[CHAN_LANE_MAIN] = {.fd = CHAN_ANSWER_FD}, [CHAN_LANE_FAST] = {.fd = CHAN_FAST_ANSWER_FD}},
};

/* The call whose handler runs on this thread (and its generation then), or NULL. */
static _Thread_local host_call *running_here;
static _Thread_local uint32_t running_generation;

host_call *host_call_at(uint32_t index)
{
    return &host.chunks[index / CALLS_PER_CHUNK][index % CALLS_PER_CHUNK];
}

/* ---- Sending (lock held) ---------------------------------------------------------------- */

/* Sends one lane's pending frames, unless a thread is at it. Returns true when it wrote. */
static bool flush_lane(host_lane *lane)
{
    if (lane->writing || lane->pending.length == 0)
        return false;
    buffer batch = lane->pending;
    lane->pending = lane->sending;
    lane->sending = batch;
    lane->writing = true;
    pthread_mutex_unlock(&host.lock);
    /* rpcd gone, or the plugin closed the descriptor: answers lost would leave calls unanswered
     * (rpcd keeps the lanes open until the host has exited, even while stopping). */
    if (chan_write_pipe(lane->fd, batch.data, batch.length) != 0) {
        log_message(LOG_ERROR, "plugin host: its answers cannot reach rpcd (%s); exiting",
                    strerror(errno));
        host_life_exit(1);
    }
    pthread_mutex_lock(&host.lock);
    buf_clear(&lane->sending);
    lane->writing = false;
    return true;
}

void host_flush_locked(void)
{
    bool wrote = true;
    while (wrote && !host.corked) {
        wrote = flush_lane(&host.lanes[CHAN_LANE_FAST]);
        wrote |= flush_lane(&host.lanes[CHAN_LANE_MAIN]);
    }
}

buffer *host_out(const host_call *call)
{
    return &host.lanes[call->lane].pending;
}

buffer *host_event_out(void)
{
    host_call *call = running_here;
    if (call && call->active && call->generation == running_generation)
        return host_out(call);
    return &host.lanes[CHAN_LANE_MAIN].pending;
}

/* ---- Calls (lock held) ------------------------------------------------------------------ */

host_call *host_lock_live(rpcd_call *handle)
{
    uintptr_t value = (uintptr_t)handle;
    uint32_t index = (uint32_t)(value & 0xffffffffu) - 1;
    uint32_t generation = (uint32_t)((uint64_t)value >> 32);
    pthread_mutex_lock(&host.lock);
    if (index < host.count) {
        host_call *call = host_call_at(index);
        if (call->active && call->generation == generation)
            return call;
    }
    pthread_mutex_unlock(&host.lock);
    return NULL;
}

rpcd_call *host_handle_of(const host_call *call)
{
    return (rpcd_call *)(uintptr_t)((uint64_t)call->generation << 32 | (call->index + 1));
}

void host_end_locked(host_call *call, int status)
{
    buffer *out = host_out(call);
    size_t start;
    int failed = chan_begin(out, CHAN_END, &start);
    failed |= chan_put_u64(out, call->id);
    failed |= chan_put_u32(out, (uint32_t)status);
    chan_end(out, start, failed != 0);
    call->active = false;
    call->generation++;
    buf_clear(&call->params);
    call->next_free = host.free_head;
    host.free_head = call->index;
    host_flush_locked();
}

/* ---- Running calls ---------------------------------------------------------------------- */

static void run_call(exec_job *job)
{
    host_call *call = (host_call *)job;
    pthread_mutex_lock(&host.lock);
    rpcd_call *handle = host_handle_of(call);
    const reg_method *method = call->method;
    const char *params = call->has_params ? call->params.data : NULL;
    size_t params_length = call->params.length;
    host_call *outer = running_here; /* a quick call runs inside no other; kept all the same */
    uint32_t outer_generation = running_generation;
    running_here = call;
    running_generation = call->generation;
    pthread_mutex_unlock(&host.lock);
    int status = method->handler(handle, params, params_length, method->user_data);
    pthread_mutex_lock(&host.lock);
    running_here = outer;
    running_generation = outer_generation;
    call->running = false;
    /* RPCD_DEFERRED came with ABI 1.1: from a plugin built before, 1 is an unknown status. */
    if (status == RPCD_DEFERRED && method->abi_minor >= 1 && !call->completed_early)
        call->deferred = true;
    else
        host_end_locked(call, call->completed_early ? call->early_status : status);
    pthread_mutex_unlock(&host.lock);
}

/* A free call, made when none is. Lock held. Returns NULL when the store is full (memory). */
static host_call *acquire(void)
{
    uint32_t index = host.free_head;
    if (index != NO_CALL) {
        host.free_head = host_call_at(index)->next_free;
        return host_call_at(index);
    }
    index = host.count;
    if (index / CALLS_PER_CHUNK >= MOST_CHUNKS)
        return NULL;
    if (index % CALLS_PER_CHUNK == 0 &&
        !(host.chunks[index / CALLS_PER_CHUNK] = calloc(CALLS_PER_CHUNK, sizeof(host_call))))
        return NULL;
    host.count++;
    host_call *call = host_call_at(index);
    call->index = index;
    call->generation = 1;
    return call;
}

/* CALL: u64 id, u32 method index, opt params. Returns 0, or -1 (malformed, memory). */
static int start_call(chan_frame *frame)
{
    uint64_t id = chan_get_u64(frame);
    uint32_t index = chan_get_u32(frame);
    chan_str params = chan_get_opt(frame);
    int meta_state = (int)chan_get_u8(frame) - 1;
    chan_str meta = chan_get_opt(frame);
    uint8_t lane = chan_get_u8(frame);
    uint32_t ask_capabilities = chan_get_u32(frame);
    chan_str answers = chan_get_opt(frame), state = chan_get_opt(frame); /* read in order */
    if (!chan_finished(frame) || index >= reg_count(host.methods) || meta_state < -1 ||
        meta_state > 1 || (meta_state == 1) != (meta.bytes != NULL) || lane >= CHAN_LANES)
        return -1;
    pthread_mutex_lock(&host.lock);
    host_call *call = acquire();
    if (call)
        buf_clear(&call->meta);
    if (!call || (params.bytes && buf_append(&call->params, params.bytes, params.length) != 0) ||
        (meta.bytes && buf_append(&call->meta, meta.bytes, meta.length) != 0) ||
        host_begin_round(call, ask_capabilities, answers, state) != 0) {
        pthread_mutex_unlock(&host.lock);
        return -1;
    }
    call->meta_state = meta_state;
    call->id = id;
    call->lane = lane;
    call->method = reg_at(host.methods, index);
    call->has_params = params.bytes != NULL;
    call->active = call->running = true;
    call->deferred = call->completed_early = call->cancelled = false;
    call->job.run = run_call;
    pthread_mutex_unlock(&host.lock);
    if (call->method->flags & RPCD_METHOD_QUICK)
        run_call(&call->job);
    else
        exec_submit(host.pool, &call->job);
    return 0;
}

/* CANCEL: u64 id. A call that has ended is no error: the two crossed. */
static int cancel_call(chan_frame *frame)
{
    uint64_t id = chan_get_u64(frame);
    if (!chan_finished(frame))
        return -1;
    pthread_mutex_lock(&host.lock);
    for (uint32_t i = 0; i < host.count; i++)
        if (host_call_at(i)->active && host_call_at(i)->id == id)
            host_call_at(i)->cancelled = true;
    pthread_mutex_unlock(&host.lock);
    return 0;
}

/* ---- Start-up: INIT, the seam for confinement, the load -------------------------------- */

/*
 * Confinement of the plugin's process, as rpcd resolved it from the config (sandbox.h): applied
 * after the channel is set up and the settings are read, before the plugin's file is loaded and
 * before any thread starts. Returns 0, or -1 with the reason in error to refuse the start.
 */
static int confine(const cfg_plugin *plugin, sandbox_settings *sandbox, pid_t rpcd_pid, char *error,
                   size_t error_size)
{
    /* In a namespace of its own, rpcd's pid names nothing, or one of the plugin's processes. */
    sandbox->rpcd_pid = sandbox->own_pid_namespace ? 0 : rpcd_pid;
    sandbox->name = strdup(plugin->name);
    sandbox->plugin_path = strdup(plugin->path);
    int status = sandbox->name && sandbox->plugin_path
                     ? sandbox_apply(sandbox, error, error_size)
                     : (snprintf(error, error_size, "out of memory"), -1);
    sandbox_settings_free(sandbox);
    return status;
}

/* The confinement part of INIT (spawn.c's put_confinement). Returns 0, or -1. */
static int read_confinement(chan_frame *frame, sandbox_settings *sandbox)
{
    memset(sandbox, 0, sizeof *sandbox);
    sandbox->limit_memory = (size_t)chan_get_u64(frame);
    sandbox->limit_cpu_seconds = (size_t)chan_get_u64(frame);
    sandbox->limit_open_files = (size_t)chan_get_u64(frame);
    sandbox->limit_processes = (size_t)chan_get_u64(frame);
    sandbox->target.change = chan_get_u8(frame) != 0;
    sandbox->target.uid = (uid_t)chan_get_u32(frame);
    sandbox->target.gid = (gid_t)chan_get_u32(frame);
    uint8_t seccomp = chan_get_u8(frame);
    sandbox->seccomp = seccomp == SANDBOX_SECCOMP_STRICT ? SANDBOX_SECCOMP_STRICT
                       : seccomp == SANDBOX_SECCOMP_OFF  ? SANDBOX_SECCOMP_OFF
                                                         : SANDBOX_SECCOMP_DEFAULT;
    chan_str read_paths = chan_get_opt(frame), write_paths = chan_get_opt(frame);
    if (read_paths.bytes && !(sandbox->read_paths = strndup(read_paths.bytes, read_paths.length)))
        return -1;
    if (write_paths.bytes &&
        !(sandbox->write_paths = strndup(write_paths.bytes, write_paths.length)))
        return -1;
    return frame->bad ? -1 : 0;
}

/* Reads the INIT frame into config. Returns 0, or -1. */
static int read_init(buffer *in, cfg_plugin *config, bool *insecure, size_t *workers,
                     int *client_level, sandbox_settings *sandbox)
{
    size_t used;
    chan_frame frame;
    int next;
    while ((next = chan_next(in->data, in->length, &used, &frame)) == CHAN_NEED_MORE)
        if (chan_read_some(CHAN_HOST_FD, in) <= 0)
            return -1;
    if (next != CHAN_FRAME || frame.kind != CHAN_INIT)
        return -1;
    uint32_t logging = chan_get_u32(&frame);
    log_set_level((int)(logging & 0xff));
    log_set_format((int)(logging >> 8));
    *client_level = (int32_t)chan_get_u32(&frame);
    *workers = (size_t)chan_get_u64(&frame);
    host.max_depth = (size_t)chan_get_u64(&frame);
    *insecure = chan_get_u8(&frame) != 0;
    config->scheduler_slice_us = (size_t)chan_get_u64(&frame);
    char text[4096];
    config->name = strdup(chan_get_cstr(&frame, false, text, sizeof text) ? text : "");
    config->path = strdup(chan_get_cstr(&frame, false, text, sizeof text) ? text : "");
    uint32_t count = chan_get_u32(&frame);
    if (frame.bad || count > 100000 || !(config->pairs = calloc(count + 1, sizeof(cfg_pair))))
        return -1;
    for (uint32_t i = 0; i < count && !frame.bad; i++) {
        chan_str key = chan_get_str(&frame), value = chan_get_str(&frame);
        cfg_pair *pair = &config->pairs[config->pair_count++];
        pair->key = strndup(key.bytes, key.length);
        pair->value = strndup(value.bytes, value.length);
    }
    int confinement = read_confinement(&frame, sandbox);
    chan_consume(in, used);
    return confinement == 0 && chan_finished(&frame) && config->name && config->path ? 0 : -1;
}

/* METHOD per method, then READY. Lock free: no call runs yet. */
static void report(const char *name, const char *error)
{
    buffer *out = &host.lanes[CHAN_LANE_MAIN].pending;
    size_t start;
    int failed = 0;
    for (size_t i = 0; !error && i < reg_count(host.methods); i++) {
        const reg_method *method = reg_at(host.methods, i);
        failed |= chan_begin(out, CHAN_METHOD, &start);
        failed |= chan_put_u32(out, method->flags);
        failed |= chan_put_str(out, method->name, method->name_length);
        failed |= chan_put_opt(out, method->description, SIZE_MAX);
        failed |= chan_put_opt(out, method->params_schema, SIZE_MAX);
        failed |= chan_put_opt(out, method->title, SIZE_MAX);
        failed |= chan_put_opt(out, method->annotations, SIZE_MAX);
        failed |= chan_put_opt(out, method->output_schema, SIZE_MAX);
        failed |= chan_put_opt(out, method->icons, SIZE_MAX);
        failed |= chan_put_u32(out, method->mcp_role);
        failed |= chan_put_opt(out, method->mcp_descriptor, SIZE_MAX);
        failed |= chan_put_u32(out, method->abi_minor);
        failed |= chan_end(out, start, failed != 0);
    }
    failed |= chan_begin(out, CHAN_READY, &start);
    failed |= chan_put_u32(out, error ? (uint32_t)-1 : 0);
    const char *text = error ? error : name;
    failed |= chan_put_str(out, text, strlen(text));
    chan_end(out, start, failed != 0);
    pthread_mutex_lock(&host.lock);
    host_flush_locked();
    pthread_mutex_unlock(&host.lock);
}

/* Reads and applies frames until the channel ends. */
static void serve(buffer *in)
{
    enum { FLUSH_EVERY = 32 };
    unsigned applied = 0;
    for (;;) {
        size_t offset = 0, used;
        chan_frame frame;
        int next;
        pthread_mutex_lock(&host.lock);
        host.corked = true;
        pthread_mutex_unlock(&host.lock);
        while ((next = chan_next(in->data + offset, in->length - offset, &used, &frame)) ==
               CHAN_FRAME) {
            int status = frame.kind == CHAN_CALL     ? start_call(&frame)
                         : frame.kind == CHAN_CANCEL ? cancel_call(&frame)
                         : frame.kind == CHAN_LEVEL  ? host_apply_level(&frame)
                                                     : -1;
            if (status != 0) {
                next = CHAN_MALFORMED;
                break;
            }
            offset += used;
            /* Answers go out every few calls of a long batch: should a later call of it crash
             * the process, rpcd has had those answers. */
            if (++applied % FLUSH_EVERY == 0) {
                pthread_mutex_lock(&host.lock);
                host.corked = false;
                host_flush_locked();
                host.corked = true;
                pthread_mutex_unlock(&host.lock);
            }
        }
        pthread_mutex_lock(&host.lock);
        host.corked = false;
        host_flush_locked();
        pthread_mutex_unlock(&host.lock);
        if (next == CHAN_MALFORMED) {
            log_message(LOG_ERROR, "plugin host: a malformed message from rpcd; exiting");
            return;
        }
        chan_consume(in, offset);
        /* A plain read(): nothing wakes it but rpcd's frames, since the host answers on other
         * descriptors (channel.h). */
        if (chan_read_some(CHAN_HOST_FD, in) <= 0)
            break;
    }
    /* rpcd died (its end of the channel closed with it): no one waits for the calls still
     * running, nor will anyone kill a host that hangs on one. */
    if (host_life_rpcd_gone())
        host_life_exit(0);
}

static void free_config(cfg_plugin *config)
{
    for (size_t i = 0; i < config->pair_count; i++) {
        free(config->pairs[i].key);
        free(config->pairs[i].value);
    }
    free(config->pairs);
    free(config->name);
    free(config->path);
}

/*
 * Enters a PID namespace of its own (host_namespace.h) where the kernel allows, as sandbox's
 * user may: with a user namespace only when the host keeps its user, which such a namespace
 * cannot change. Returns 0, or -1 with the reason in error when the host must not go on.
 */
static int enter_namespace(const cfg_plugin *config, sandbox_settings *sandbox, pid_t rpcd_pid,
                           char *error, size_t error_size)
{
    bool keeps_user = !sandbox->target.change ||
                      (sandbox->target.uid == geteuid() && sandbox->target.gid == getegid());
    char why[256] = "";
    bool entered = false;
    if (host_ns_enter(rpcd_pid, keeps_user, &entered, why, sizeof why) != 0) {
        snprintf(error, error_size, "[plugin %s]: %s", config->name, why);
        return -1;
    }
    sandbox->own_pid_namespace = entered;
    if (entered)
        host_life_in_namespace();
    else
        log_message(LOG_WARNING,
                    "plugin %s: its host has no PID namespace of its own: %s; it can name other "
                    "processes by their ids (rpcd.conf(5), CONTAINMENT)",
                    config->name, why);
    return 0;
}

/* The process rpcd started becomes a host: its name, its signals, its descriptors, its log. */
static void take_over_process(void)
{
    /*
     * A host ends with rpcd through its channel, whose end closes when rpcd dies however it dies
     * (serve). Not PR_SET_PDEATHSIG: it fires when the thread that started the host ends, and
     * hosts are started by whichever thread loads, reloads or restarts a plugin.
     */
    if (host_life_begin() != 0)
        log_message(LOG_WARNING, "plugin host: cannot set up its process: %s", strerror(errno));
    signal(SIGPIPE, SIG_IGN);
    /* Nothing of rpcd's but the channel and the plugin's file; neither goes to a program the
     * plugin runs. */
    close_range(CHAN_LAST_FD + 1, ~0u, 0);
    for (int fd = CHAN_HOST_FD; fd <= CHAN_LAST_FD; fd++)
        fcntl(fd, F_SETFD, FD_CLOEXEC);
    /* Its stdout and stderr are the plugin's: its own lines go to rpcd's log as they are. */
    log_set_fd(CHAN_LOG_FD);
}

/* The calls' chunks and the lanes' buffers, once the workers are joined. */
static void free_calls_and_lanes(void)
{
    for (uint32_t i = 0; i < MOST_CHUNKS && host.chunks[i]; i++) {
        for (uint32_t j = 0; j < CALLS_PER_CHUNK; j++) {
            buf_free(&host.chunks[i][j].params);
            buf_free(&host.chunks[i][j].meta);
            host_free_round(&host.chunks[i][j]);
        }
        free(host.chunks[i]);
    }
    for (int i = 0; i < CHAN_LANES; i++) {
        buf_free(&host.lanes[i].pending);
        buf_free(&host.lanes[i].sending);
    }
}

int iso_host_main(void)
{
    /* Its parent now: rpcd, unless rpcd has died already (host_ns_enter checks). */
    pid_t rpcd_pid = getppid();
    take_over_process();

    buffer in = BUFFER_INIT;
    cfg_plugin config = {0};
    bool insecure = false;
    size_t workers = 1;
    char error[1024] = "";
    loader *plugins = NULL;
    const char *name = NULL;
    int status = 1;
    sandbox_settings sandbox;
    bool in_namespace = false;
    int client_level = -1;
    if (read_init(&in, &config, &insecure, &workers, &client_level, &sandbox) != 0) {
        sandbox_settings_free(&sandbox);
        log_message(LOG_ERROR, "plugin host: no valid INIT from rpcd");
        goto done;
    }
    config.required = true;
    /* Before the plugin and its threads, which inherit it. A slice refused costs only speed. */
    if (slice_request(config.scheduler_slice_us, error, sizeof error) != 0)
        log_message(LOG_WARNING, "plugin %s: %s; its host keeps the kernel's", config.name, error);
    error[0] = '\0';
    if (enter_namespace(&config, &sandbox, rpcd_pid, error, sizeof error) != 0) {
        sandbox_settings_free(&sandbox);
        report(NULL, error);
        goto done;
    }
    in_namespace = sandbox.own_pid_namespace; /* confine frees sandbox */
    if (confine(&config, &sandbox, rpcd_pid, error, sizeof error) != 0 ||
        reg_new(&host.methods) != 0 || exec_new(workers ? workers : 1, &host.pool) != 0) {
        report(NULL, error[0] ? error : "out of memory");
        goto done;
    }
    /* The plugin's init may never return: rpcd's death must end the host all the same (in a
     * namespace, the process outside ends it). */
    if (!in_namespace && host_life_watch(CHAN_HOST_FD) != 0)
        log_message(LOG_WARNING, "plugin %s: its host cannot watch for rpcd's end: %s", config.name,
                    strerror(errno));
    ld_set_call_api(host_fill_call_api);
    host_events_attach(client_level);
    if (ld_load_fd(&config, CHAN_PLUGIN_FD, host.methods, &plugins, &name, error, sizeof error) !=
        0) {
        report(NULL, error);
        goto done;
    }
    close(CHAN_PLUGIN_FD);
    report(name, NULL);
    serve(&in);
    status = 0;
done:
    if (host.pool)
        exec_free(host.pool); /* runs what was queued, joins the workers */
    if (plugins)
        ld_unload_all(plugins, host.methods); /* the plugin's shutdown joins its own threads */
    mcp_events_attach(NULL);
    if (host.methods)
        reg_free(host.methods);
    free_calls_and_lanes();
    buf_free(&in);
    free_config(&config);
    /* What the plugin started ends with it. */
    host_life_end_descendants();
    return status;
}
