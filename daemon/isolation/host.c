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

#include "config.h"
#include "executor.h"
#include "isolation/channel.h"
#include "isolation/sandbox.h"
#include "json_scan.h"
#include "loader.h"
#include "log.h"
#include "mcp_tool.h"
#include "registry.h"
#include "reserved_names.h"

#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* A call in this process; its handle is (generation << 32) | (index + 1), never NULL. */
typedef struct host_call {
    exec_job job;
    uint32_t index;
    uint32_t generation;
    bool active;
    bool running; /* the handler has not returned yet */
    bool deferred;
    bool completed_early;
    int early_status;
    bool cancelled;
    uint32_t next_free;
    uint64_t id; /* rpcd's */
    const reg_method *method;
    buffer params;
    bool has_params;
    int meta_state; /* the request's _meta: 1 in meta, 0 none, -1 sent twice */
    buffer meta;
} host_call;

enum { CALLS_PER_CHUNK = 256, MOST_CHUNKS = 4096 };
#define NO_CALL UINT32_MAX

/* The process's one state: one plugin, one channel. Guarded by lock where it changes. */
static struct {
    pthread_mutex_t lock;
    host_call *chunks[MOST_CHUNKS]; /* never move: a handler keeps its call's address */
    uint32_t count;
    uint32_t free_head;
    buffer pending; /* frames to send */
    buffer sending;
    bool writing; /* a thread is writing: what is appended meanwhile, it sends too */
    bool corked;  /* the reader is applying a batch of frames and sends once at its end */
    size_t max_depth;
    executor *pool;
    registry *methods;
} host = {.lock = PTHREAD_MUTEX_INITIALIZER, .free_head = NO_CALL};

static host_call *call_at(uint32_t index)
{
    return &host.chunks[index / CALLS_PER_CHUNK][index % CALLS_PER_CHUNK];
}

/* ---- Sending (lock held) ---------------------------------------------------------------- */

/* Sends what is pending unless someone else is, or the reader will at the end of its batch. */
static void flush_locked(void)
{
    while (!host.writing && !host.corked && host.pending.length > 0) {
        buffer batch = host.pending;
        host.pending = host.sending;
        host.sending = batch;
        host.writing = true;
        pthread_mutex_unlock(&host.lock);
        /* rpcd gone: the reader sees the end of the channel and the process ends. */
        chan_write_all(CHAN_HOST_FD, batch.data, batch.length);
        pthread_mutex_lock(&host.lock);
        buf_clear(&host.sending);
        host.writing = false;
    }
}

/* ---- Calls (lock held) ------------------------------------------------------------------ */

static host_call *lock_live(rpcd_call *handle)
{
    uintptr_t value = (uintptr_t)handle;
    uint32_t index = (uint32_t)(value & 0xffffffffu) - 1;
    uint32_t generation = (uint32_t)((uint64_t)value >> 32);
    pthread_mutex_lock(&host.lock);
    if (index < host.count) {
        host_call *call = call_at(index);
        if (call->active && call->generation == generation)
            return call;
    }
    pthread_mutex_unlock(&host.lock);
    return NULL;
}

static rpcd_call *handle_of(const host_call *call)
{
    return (rpcd_call *)(uintptr_t)((uint64_t)call->generation << 32 | (call->index + 1));
}

/* Sends END and frees the call. Lock held. */
static void end_locked(host_call *call, int status)
{
    size_t start;
    int failed = chan_begin(&host.pending, CHAN_END, &start);
    failed |= chan_put_u64(&host.pending, call->id);
    failed |= chan_put_u32(&host.pending, (uint32_t)status);
    chan_end(&host.pending, start, failed != 0);
    call->active = false;
    call->generation++;
    buf_clear(&call->params);
    call->next_free = host.free_head;
    host.free_head = call->index;
    flush_locked();
}

/* Begins a frame of kind for call. Lock held. */
static int begin(chan_kind kind, const host_call *call, size_t *start)
{
    int failed = chan_begin(&host.pending, kind, start);
    return failed | chan_put_u64(&host.pending, call->id);
}

static int finish(size_t start, int failed)
{
    int status = chan_end(&host.pending, start, failed != 0);
    flush_locked();
    pthread_mutex_unlock(&host.lock);
    return status;
}

/* ---- The host functions on a call ------------------------------------------------------- */

static bool valid_json(const char *text, size_t length)
{
    return text && js_validate(text, length, host.max_depth, NULL, NULL) == 0;
}

static int host_call_result(rpcd_call *handle, const char *json, size_t json_length)
{
    host_call *call = lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    size_t start;
    int failed = begin(CHAN_RESULT, call, &start);
    /* Sent even when it is not JSON: rpcd marks the result invalid, as in-process. */
    failed |= chan_put_str(&host.pending, json ? json : "", json ? json_length : 0);
    if (finish(start, failed) != 0)
        return RPCD_ERR_NO_MEMORY;
    return valid_json(json, json_length) ? RPCD_OK : RPCD_ERR_INVALID_ARGUMENT;
}

/*
 * Puts a message into the frame: rpcd refuses text that is not UTF-8 from a host (it would go
 * into the protocol), so the bytes of such a text that are not ASCII become '?'.
 */
static int put_message(const char *message, bool optional)
{
    if (!message)
        return optional ? chan_put_opt(&host.pending, NULL, 0) : -1;
    size_t length = strlen(message);
    int failed = optional ? chan_put_u8(&host.pending, 1) : 0;
    if (js_utf8_valid(message, length))
        return failed | chan_put_str(&host.pending, message, length);
    size_t start = host.pending.length + sizeof(uint32_t);
    failed |= chan_put_str(&host.pending, message, length);
    for (size_t i = 0; failed == 0 && i < length; i++)
        if ((unsigned char)host.pending.data[start + i] >= 0x80)
            host.pending.data[start + i] = '?';
    return failed;
}

static int host_call_fail(rpcd_call *handle, int status, const char *message, const char *data,
                          size_t data_length)
{
    if (status == RPCD_OK || status == RPCD_ERR_APPLICATION ||
        (data && !valid_json(data, data_length)))
        return RPCD_ERR_INVALID_ARGUMENT;
    host_call *call = lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    size_t start;
    int failed = begin(CHAN_FAIL, call, &start);
    failed |= chan_put_u32(&host.pending, (uint32_t)status);
    failed |= put_message(message, true);
    failed |= chan_put_opt(&host.pending, data, data_length);
    return finish(start, failed) == 0 ? status : RPCD_ERR_NO_MEMORY;
}

static int host_call_fail_code(rpcd_call *handle, int64_t code, const char *message,
                               const char *data, size_t data_length)
{
    if (!message || (data && !valid_json(data, data_length)))
        return RPCD_ERR_INVALID_ARGUMENT;
    host_call *call = lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    size_t start;
    int failed = begin(CHAN_FAIL_CODE, call, &start);
    failed |= chan_put_i64(&host.pending, code);
    failed |= put_message(message, false);
    failed |= chan_put_opt(&host.pending, data, data_length);
    return finish(start, failed) == 0 ? RPCD_ERR_APPLICATION : RPCD_ERR_NO_MEMORY;
}

static int host_call_notify(rpcd_call *handle, const char *method, const char *params,
                            size_t params_length)
{
    if (!method || !js_utf8_valid(method, strlen(method)))
        return RPCD_ERR_INVALID_ARGUMENT;
    host_call *call = lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    /* rpcd checks again, refuses, and logs the refusal naming the plugin. */
    bool refused = reserved_name_reason(method, strlen(method)) != NULL ||
                   (params && !valid_json(params, params_length));
    size_t start;
    int failed = begin(CHAN_NOTIFY, call, &start);
    failed |= chan_put_str(&host.pending, method, strlen(method));
    failed |= chan_put_opt(&host.pending, params, params_length);
    if (finish(start, failed) != 0)
        return RPCD_ERR_NO_MEMORY;
    return refused ? RPCD_ERR_INVALID_ARGUMENT : RPCD_OK;
}

static int host_call_progress(rpcd_call *handle, double done, double total, const char *message)
{
    if (!isfinite(done) || isnan(total) || (message && !js_utf8_valid(message, strlen(message))))
        return RPCD_ERR_INVALID_ARGUMENT;
    host_call *call = lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    size_t start;
    int failed = begin(CHAN_PROGRESS, call, &start);
    failed |= chan_put_f64(&host.pending, done);
    failed |= chan_put_f64(&host.pending, total);
    failed |= put_message(message, true);
    return finish(start, failed) == 0 ? RPCD_OK : RPCD_ERR_NO_MEMORY;
}

static int host_call_is_cancelled(rpcd_call *handle)
{
    host_call *call = lock_live(handle);
    if (!call)
        return 1;
    int cancelled = call->cancelled;
    pthread_mutex_unlock(&host.lock);
    return cancelled;
}

static const char *host_call_method(rpcd_call *handle)
{
    host_call *call = lock_live(handle);
    if (!call)
        return NULL;
    const char *name = call->method->name; /* lives as long as the process's registry */
    pthread_mutex_unlock(&host.lock);
    return name;
}

static int host_call_complete(rpcd_call *handle, int status)
{
    if (status == RPCD_DEFERRED)
        return RPCD_ERR_UNSUPPORTED;
    host_call *call = lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    int result = RPCD_OK;
    if (call->completed_early || (!call->running && !call->deferred)) {
        result = RPCD_ERR_UNSUPPORTED;
    } else if (call->running) {
        call->completed_early = true; /* the handler's RPCD_DEFERRED ends it */
        call->early_status = status;
    } else {
        end_locked(call, status);
    }
    pthread_mutex_unlock(&host.lock);
    return result;
}

static int host_call_tool_result(rpcd_call *handle, const char *json, size_t json_length)
{
    host_call *call = lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    /* Checked here as rpcd checks it (the plugin learns at once), and sent all the same: rpcd
     * checks it again and answers the call as in-process. */
    char reason[256];
    int status = valid_json(json, json_length) &&
                         mcp_tool_check_result(json, json_length, call->method->output_schema,
                                               reason, sizeof reason) == 0
                     ? RPCD_OK
                     : RPCD_ERR_INVALID_ARGUMENT;
    size_t start;
    int failed = begin(CHAN_TOOL_RESULT, call, &start);
    failed |= chan_put_str(&host.pending, json ? json : "", json ? json_length : 0);
    if (finish(start, failed) != 0)
        return RPCD_ERR_NO_MEMORY;
    return status;
}

/* call_meta from the copy of _meta rpcd sent with the call, as call_host.c answers it. */
static int host_call_meta(rpcd_call *handle, const char *name, char *out, size_t out_size,
                          size_t *length)
{
    if (length)
        *length = 0;
    if (out && out_size > 0)
        out[0] = '\0';
    if ((!out && out_size > 0) || (name && !js_utf8_valid(name, strlen(name))))
        return RPCD_ERR_INVALID_ARGUMENT;
    host_call *call = lock_live(handle);
    if (!call)
        return RPCD_ERR_STALE;
    js_span meta = {call->meta.data, call->meta.length}, value = meta;
    int found = call->meta_state;
    if (found == 1 && name) {
        size_t count = js_object_get_decoded(meta, name, strlen(name), &value);
        found = count > 1 ? -1 : (int)count;
    }
    int status = found < 0 ? RPCD_ERR_INVALID_PARAMS : RPCD_OK;
    if (found > 0) {
        if (length)
            *length = value.length; /* rpcd sent it on one line */
        if (value.length >= out_size) {
            status = RPCD_ERR_INVALID_ARGUMENT;
        } else {
            memcpy(out, value.start, value.length);
            out[value.length] = '\0';
        }
    }
    pthread_mutex_unlock(&host.lock);
    return status;
}

static void fill_call_api(rpcd_host_api *api)
{
    api->call_result = host_call_result;
    api->call_fail = host_call_fail;
    api->call_fail_code = host_call_fail_code;
    api->call_notify = host_call_notify;
    api->call_progress = host_call_progress;
    api->call_is_cancelled = host_call_is_cancelled;
    api->call_method = host_call_method;
    api->call_complete = host_call_complete;
    api->call_tool_result = host_call_tool_result;
    api->call_meta = host_call_meta;
}

/* ---- Running calls ---------------------------------------------------------------------- */

static void run_call(exec_job *job)
{
    host_call *call = (host_call *)job;
    pthread_mutex_lock(&host.lock);
    rpcd_call *handle = handle_of(call);
    const reg_method *method = call->method;
    const char *params = call->has_params ? call->params.data : NULL;
    size_t params_length = call->params.length;
    pthread_mutex_unlock(&host.lock);
    int status = method->handler(handle, params, params_length, method->user_data);
    pthread_mutex_lock(&host.lock);
    call->running = false;
    /* RPCD_DEFERRED came with ABI 1.1: from a plugin built before, 1 is an unknown status. */
    if (status == RPCD_DEFERRED && method->abi_minor >= 1 && !call->completed_early)
        call->deferred = true;
    else
        end_locked(call, call->completed_early ? call->early_status : status);
    pthread_mutex_unlock(&host.lock);
}

/* A free call, made when none is. Lock held. Returns NULL when the store is full (memory). */
static host_call *acquire(void)
{
    uint32_t index = host.free_head;
    if (index != NO_CALL) {
        host.free_head = call_at(index)->next_free;
        return call_at(index);
    }
    index = host.count;
    if (index / CALLS_PER_CHUNK >= MOST_CHUNKS)
        return NULL;
    if (index % CALLS_PER_CHUNK == 0 &&
        !(host.chunks[index / CALLS_PER_CHUNK] = calloc(CALLS_PER_CHUNK, sizeof(host_call))))
        return NULL;
    host.count++;
    host_call *call = call_at(index);
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
    if (!chan_finished(frame) || index >= reg_count(host.methods) || meta_state < -1 ||
        meta_state > 1 || (meta_state == 1) != (meta.bytes != NULL))
        return -1;
    pthread_mutex_lock(&host.lock);
    host_call *call = acquire();
    if (call)
        buf_clear(&call->meta);
    if (!call || (params.bytes && buf_append(&call->params, params.bytes, params.length) != 0) ||
        (meta.bytes && buf_append(&call->meta, meta.bytes, meta.length) != 0)) {
        pthread_mutex_unlock(&host.lock);
        return -1;
    }
    call->meta_state = meta_state;
    call->id = id;
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
        if (call_at(i)->active && call_at(i)->id == id)
            call_at(i)->cancelled = true;
    pthread_mutex_unlock(&host.lock);
    return 0;
}

/* ---- Start-up: INIT, the seam for confinement, the load -------------------------------- */

/*
 * Confinement of the plugin's process, as rpcd resolved it from the config (sandbox.h): applied
 * after the channel is set up and the settings are read, before the plugin's file is loaded and
 * before any thread starts. Returns 0, or -1 with the reason in error to refuse the start.
 */
static int confine(const cfg_plugin *plugin, sandbox_settings *sandbox, char *error,
                   size_t error_size)
{
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
                     sandbox_settings *sandbox)
{
    size_t used;
    chan_frame frame;
    int next;
    while ((next = chan_next(in->data, in->length, &used, &frame)) == CHAN_NEED_MORE)
        if (chan_read_some(CHAN_HOST_FD, in) <= 0)
            return -1;
    if (next != CHAN_FRAME || frame.kind != CHAN_INIT)
        return -1;
    log_set_level((int)chan_get_u32(&frame));
    *workers = (size_t)chan_get_u64(&frame);
    host.max_depth = (size_t)chan_get_u64(&frame);
    *insecure = chan_get_u8(&frame) != 0;
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
    size_t start;
    int failed = 0;
    for (size_t i = 0; !error && i < reg_count(host.methods); i++) {
        const reg_method *method = reg_at(host.methods, i);
        failed |= chan_begin(&host.pending, CHAN_METHOD, &start);
        failed |= chan_put_u32(&host.pending, method->flags);
        failed |= chan_put_str(&host.pending, method->name, method->name_length);
        failed |= chan_put_opt(&host.pending, method->description, SIZE_MAX);
        failed |= chan_put_opt(&host.pending, method->params_schema, SIZE_MAX);
        failed |= chan_put_opt(&host.pending, method->title, SIZE_MAX);
        failed |= chan_put_opt(&host.pending, method->annotations, SIZE_MAX);
        failed |= chan_put_opt(&host.pending, method->output_schema, SIZE_MAX);
        failed |= chan_put_opt(&host.pending, method->icons, SIZE_MAX);
        failed |= chan_end(&host.pending, start, failed != 0);
    }
    failed |= chan_begin(&host.pending, CHAN_READY, &start);
    failed |= chan_put_u32(&host.pending, error ? (uint32_t)-1 : 0);
    const char *text = error ? error : name;
    failed |= chan_put_str(&host.pending, text, strlen(text));
    chan_end(&host.pending, start, failed != 0);
    pthread_mutex_lock(&host.lock);
    flush_locked();
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
                flush_locked();
                host.corked = true;
                pthread_mutex_unlock(&host.lock);
            }
        }
        pthread_mutex_lock(&host.lock);
        host.corked = false;
        flush_locked();
        pthread_mutex_unlock(&host.lock);
        if (next == CHAN_MALFORMED) {
            log_message(LOG_ERROR, "plugin host: a malformed message from rpcd; exiting");
            return;
        }
        chan_consume(in, offset);
        if (chan_read_some(CHAN_HOST_FD, in) <= 0)
            return;
    }
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

int iso_host_main(void)
{
    /* Ends with rpcd: no host outlives the daemon whose calls it serves. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1)
        return 1;
    signal(SIGPIPE, SIG_IGN);
    /* A terminal's Ctrl-C reaches the whole group: rpcd decides when its hosts end. */
    signal(SIGINT, SIG_IGN);
    /* Nothing of rpcd's but the channel and the plugin's file; neither goes to a program the
     * plugin runs. */
    close_range(CHAN_PLUGIN_FD + 1, ~0u, 0);
    fcntl(CHAN_HOST_FD, F_SETFD, FD_CLOEXEC);
    fcntl(CHAN_PLUGIN_FD, F_SETFD, FD_CLOEXEC);

    buffer in = BUFFER_INIT;
    cfg_plugin config = {0};
    bool insecure = false;
    size_t workers = 1;
    char error[1024] = "";
    loader *plugins = NULL;
    const char *name = NULL;
    int status = 1;
    sandbox_settings sandbox;
    if (read_init(&in, &config, &insecure, &workers, &sandbox) != 0) {
        sandbox_settings_free(&sandbox);
        log_message(LOG_ERROR, "plugin host: no valid INIT from rpcd");
        goto done;
    }
    config.required = true;
    if (confine(&config, &sandbox, error, sizeof error) != 0 || reg_new(&host.methods) != 0 ||
        exec_new(workers ? workers : 1, &host.pool) != 0) {
        report(NULL, error[0] ? error : "out of memory");
        goto done;
    }
    ld_set_call_api(fill_call_api);
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
    if (host.methods)
        reg_free(host.methods);
    for (uint32_t i = 0; i < MOST_CHUNKS && host.chunks[i]; i++) {
        for (uint32_t j = 0; j < CALLS_PER_CHUNK; j++) {
            buf_free(&host.chunks[i][j].params);
            buf_free(&host.chunks[i][j].meta);
        }
        free(host.chunks[i]);
    }
    buf_free(&host.pending);
    buf_free(&host.sending);
    buf_free(&in);
    free_config(&config);
    return status;
}
