/* SPDX-License-Identifier: MIT */
/*
 * The parent side of an isolated plugin: proxy handlers that queue each call as a frame and
 * return RPCD_DEFERRED, a writer thread that sends the queued frames in batches and kills a host
 * that keeps a call past its deadline and the grace period, and a reader thread that applies what
 * the host sends to the calls (one function per message kind, in one table) and, when the host
 * dies, fails its calls and starts it again.
 */
#include "isolation/proxy.h"

#include "calls/call.h"
#include "base/clock.h"
#include "config/config_keys.h"
#include "isolation/channel.h"
#include "isolation/proxy_calls.h"
#include "isolation/sandbox.h"
#include "isolation/spawn.h"
#include "isolation/supervisor.h"
#include "base/log.h"
#include "base/metrics.h"
#include "wire/mcp_events.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const char *host_program = "/proc/self/exe";

void iso_set_host_program(const char *path)
{
    host_program = path;
}

/*
 * Every proxy whose host is to hear the MCP client's log level: one watcher of mcp_events tells
 * them all. A proxy joins before its first host's INIT reads the level, so that no change falls
 * between the two, and leaves before it is freed.
 */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static iso_proxy *live_head;
static pthread_once_t watch_once = PTHREAD_ONCE_INIT;

static void level_changed(void *context, int level)
{
    (void)context;
    pthread_mutex_lock(&live_lock);
    for (iso_proxy *proxy = live_head; proxy; proxy = proxy->next_live)
        pxy_queue_level(proxy, level);
    pthread_mutex_unlock(&live_lock);
}

static void watch_level(void)
{
    mcp_events_watch_log_level(level_changed, NULL);
}

static void join_live(iso_proxy *proxy)
{
    pthread_once(&watch_once, watch_level);
    pthread_mutex_lock(&live_lock);
    proxy->next_live = live_head;
    live_head = proxy;
    pthread_mutex_unlock(&live_lock);
}

static void leave_live(iso_proxy *proxy)
{
    pthread_mutex_lock(&live_lock);
    for (iso_proxy **at = &live_head; *at; at = &(*at)->next_live)
        if (*at == proxy) {
            *at = proxy->next_live;
            break;
        }
    pthread_mutex_unlock(&live_lock);
}

/* A restarted host must finish its plugin's init within this, or it counts as crashed again. */
enum { RESTART_INIT_MS = 30000 };

/* The proxy handler of every method: queues the call for the host. */
static int proxy_call(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    pxy_method *method = user_data;
    iso_proxy *proxy = method->proxy;
    char reason[256];
    uint64_t id;
    /* The host answers call_meta from a copy: the request's _meta goes with the call. */
    char small[512];
    char *text = small;
    size_t length = 0;
    int found = proxy->api.call_meta(call, NULL, small, sizeof small, &length);
    if (found == RPCD_ERR_INVALID_ARGUMENT && length >= sizeof small && (text = malloc(length + 1)))
        found = proxy->api.call_meta(call, NULL, text, length + 1, &length);
    pxy_meta meta = {
        found == RPCD_ERR_INVALID_PARAMS ? -1 : found == RPCD_OK && length > 0, text, length, {0}};
    if (call_round_of(call, &meta.round) != 0)
        meta.round = (call_round_view){0};
    bool may_wait = method->quick && call_caller_may_wait(call), wait_here = false;
    int queued = text ? pxy_queue_call(proxy, method, call, params, params_length, &meta, may_wait,
                                       &wait_here, &id, reason, sizeof reason)
                      : -1;
    if (text != small)
        free(text);
    if (queued == PXY_DOWN_STATUS)
        return call_fail_exception(call, "plugin host down", reason, NULL, 0);
    if (queued != 0)
        return RPCD_ERR_NO_MEMORY;
    if (wait_here)
        pxy_wait_fast(proxy, id);
    /* A cancellation that came before the call was queued found nothing to pass on. */
    if (proxy->api.call_is_cancelled(call))
        pxy_cancel(proxy, call);
    /* workers = 1 promises one call at a time, its notifications before the next call's: the
     * handler holds the one worker until the host has answered (which ends it when it returns). */
    if (proxy->settings.limits.workers == 1)
        pxy_wait_ended(proxy, id);
    return RPCD_DEFERRED;
}

static void proxy_cancel_hook(rpcd_call *call, void *user_data)
{
    pxy_method *method = user_data;
    pxy_cancel(method->proxy, call);
}

/* Registers a proxy for each method the host reported. Returns 0, or -1 with error. */
static int register_proxies(iso_proxy *proxy, const iso_host_info *info, char *error,
                            size_t error_size)
{
    for (size_t i = 0; i < info->count; i++) {
        const iso_method_info *reported = &info->methods[i];
        /* Registered as from the plugin's own minor, so that a name it may have (one MCP came to
         * use later) is its as in process; at least 1.2, whose RPCD_DEFERRED and
         * RPCD_METHOD_QUICK the proxy itself relies on (the host applied the older meanings). */
        const reg_owner owner = {proxy->owner, proxy->name,
                                 reported->abi_minor < 2 ? 2 : reported->abi_minor,
                                 proxy->config->validate_arguments, proxy->config->assert_format};
        rpcd_method descriptor = rpcd_method_new(reported->name, proxy_call);
        descriptor.user_data = &proxy->methods[i];
        /* The proxy only queues a frame and never blocks: it may run on the reading thread. */
        descriptor.flags = reported->flags | RPCD_METHOD_QUICK;
        descriptor.description = reported->description;
        descriptor.params_schema = reported->params_schema;
        descriptor.title = reported->title;
        descriptor.annotations = reported->annotations;
        descriptor.output_schema = reported->output_schema;
        descriptor.icons = reported->icons;
        descriptor.mcp_role = reported->mcp_role;
        descriptor.mcp_descriptor = reported->mcp_descriptor;
        const reg_method *existing = NULL;
        char reason[256] = "unknown";
        int status =
            reg_add_owned(proxy->registry, &descriptor, &owner, &existing, reason, sizeof reason);
        if (status == REG_ERR_EXISTS)
            snprintf(error, error_size,
                     "method '%s' is registered by both [plugin %s] and [plugin %s]",
                     reported->name, existing->owner_name, proxy->name);
        else if (status != 0)
            snprintf(error, error_size, "method '%s' refused: %s", reported->name, reason);
        if (status != 0)
            return -1;
        reg_set_cancel_hook(proxy->registry, reported->name, proxy_cancel_hook);
        /* Its deadline is kept by the call layer, which tells the hook at the deadline. */
        reg_set_timeout(proxy->registry, reported->name,
                        cfg_method_timeout(proxy->config, reported->name));
    }
    return 0;
}

/* Keeps what the first host reported: names for restarts to compare. */
static int take_methods(iso_proxy *proxy, const iso_host_info *info)
{
    proxy->methods = calloc(info->count + 1, sizeof *proxy->methods);
    /* Its section's name, as every line about it gives: one file may serve several. */
    proxy->name = strdup(proxy->config->name);
    if (!proxy->methods || !proxy->name)
        return -1;
    proxy->method_count = info->count;
    for (size_t i = 0; i < info->count; i++) {
        pxy_method *method = &proxy->methods[i];
        method->proxy = proxy;
        method->index = (uint32_t)i;
        method->name = strdup(info->methods[i].name);
        method->quick = (info->methods[i].flags & RPCD_METHOD_QUICK) != 0;
        if (!method->name)
            return -1;
    }
    return 0;
}

static void free_proxy(iso_proxy *proxy)
{
    leave_live(proxy);
    for (size_t i = 0; proxy->methods && i < proxy->method_count; i++)
        free(proxy->methods[i].name);
    free(proxy->methods);
    free(proxy->name);
    pxy_calls_fini(proxy);
    sup_fini(&proxy->restarts);
    if (proxy->plugin_fd >= 0)
        close(proxy->plugin_fd);
    free(proxy);
}

/* Whether a restarted host registered the same methods as the first, in the same order. */
static bool same_methods(const iso_proxy *proxy, const iso_host_info *info)
{
    if (info->count != proxy->method_count)
        return false;
    for (size_t i = 0; i < info->count; i++)
        if (strcmp(info->methods[i].name, proxy->methods[i].name) != 0)
            return false;
    return true;
}

/*
 * The plugin stays down: one error line says so, naming why (the limit and the last failure) and
 * what brings it back, and every call from now on fails with "plugin host down". Reader thread.
 */
static void give_up(iso_proxy *proxy, const char *last)
{
    static const char recover[] = "its calls fail until rpcd is restarted, or reloaded (SIGHUP) "
                                  "with the plugin's file or section changed";
    size_t limit = proxy->config->max_restarts;
    log_message(LOG_ERROR,
                "plugin %s: rpcd stopped restarting its host, which failed more than %zu times "
                "within a minute (max_restarts = %zu), the last time: %s; %s",
                proxy->name, limit, limit, last, recover);
    char detail[256];
    snprintf(detail, sizeof detail,
             "plugin %s: its host failed more than %zu times within a minute; %s", proxy->name,
             limit, recover);
    pxy_host_down(proxy, detail);
}

/*
 * Starts a host again after delay_ms, until one runs or the supervisor gives up. Reader thread.
 * Returns 0 with the host up, or -1 when the plugin stays down (or rpcd stops).
 */
static int restart(iso_proxy *proxy, long long delay_ms)
{
    for (;;) {
        if (pxy_sleep_unless_stopping(proxy, delay_ms) != 0)
            return -1;
        char error[512];
        iso_channel channel;
        pid_t pid;
        iso_host_info info;
        if (iso_spawn(host_program, proxy->plugin_fd, proxy->config, &proxy->settings,
                      RESTART_INIT_MS, &channel, &pid, &info, error, sizeof error) == 0) {
            bool same = same_methods(proxy, &info);
            iso_host_info_free(&info);
            if (same) {
                pxy_host_up(proxy, &channel, pid);
                pthread_mutex_lock(&proxy->lock);
                proxy->restart_count++;
                pthread_mutex_unlock(&proxy->lock);
                mx_count_plugin_event(proxy->config->name, MX_RESTART);
                log_message(LOG_INFO, "plugin %s: host restarted (pid %d)", proxy->name, (int)pid);
                return 0;
            }
            snprintf(error, sizeof error, "its restarted host registered other methods");
            iso_channel_close(&channel);
            iso_reap(pid, 0);
        }
        delay_ms = sup_on_crash(&proxy->restarts, clock_now_ms(), false);
        if (delay_ms < 0) {
            give_up(proxy, error);
            return -1;
        }
        log_message(LOG_WARNING, "plugin %s: %s; trying again in %lld ms", proxy->name, error,
                    delay_ms);
    }
}

/* How the host died, for iso_proxy_describe and the crash counter. */
static void note_crash(iso_proxy *proxy, int status, const char *why)
{
    char text[sizeof proxy->last_crash];
    if (why[0])
        snprintf(text, sizeof text, "%s", why);
    else
        iso_describe_status(status, text, sizeof text);
    pthread_mutex_lock(&proxy->lock);
    memcpy(proxy->last_crash, text, sizeof text);
    pthread_mutex_unlock(&proxy->lock);
    mx_count_plugin_event(proxy->config->name, MX_CRASH);
}

void iso_proxy_describe(iso_proxy *proxy, iso_proxy_status *out)
{
    pthread_mutex_lock(&proxy->lock);
    out->pid = proxy->state == PXY_UP ? (int)proxy->pid : 0;
    out->restarts = proxy->restart_count;
    out->deadline_kills = proxy->deadline_kills;
    memcpy(out->last_crash, proxy->last_crash, sizeof out->last_crash);
    pthread_mutex_unlock(&proxy->lock);
}

/* The reader thread: frames from the host, and what follows its death. */
static void *reader_main(void *context)
{
    iso_proxy *proxy = context;
    for (;;) {
        char why[128] = "";
        if (pxy_read_frames(proxy, why, sizeof why) == 0)
            break; /* the end of the channel rpcd asked for */
        bool served;
        pid_t pid = proxy->pid;
        int status = iso_reap(pid, why[0] ? 0 : ISO_END_WAIT_MS);
        pxy_host_died(proxy, pid, status, why, &served);
        note_crash(proxy, status, why);
        long long delay = sup_on_crash(&proxy->restarts, clock_now_ms(), served);
        if (delay < 0) {
            char last[128];
            iso_describe_status(status, last, sizeof last);
            give_up(proxy, why[0] ? why : last);
            pxy_wait_for_stop(proxy);
            return NULL;
        }
        if (restart(proxy, delay) != 0) {
            pxy_wait_for_stop(proxy);
            return NULL;
        }
    }
    iso_reap(proxy->pid, (int)proxy->settings.grace_ms);
    return NULL;
}

int iso_proxy_start(cfg_plugin *config, int fd, const iso_settings *settings, registry *methods,
                    const void *owner, iso_proxy **out, char *error, size_t error_size)
{
    iso_proxy *proxy = calloc(1, sizeof *proxy);
    if (!proxy || sup_init(&proxy->restarts, config->max_restarts) != 0) {
        free(proxy);
        close(fd);
        snprintf(error, error_size, "plugin %s: out of memory", config->path);
        return -1;
    }
    proxy->config = config;
    proxy->plugin_fd = fd;
    proxy->settings = *settings;
    proxy->registry = methods;
    proxy->owner = owner;
    call_fill_host_api(&proxy->api);
    pxy_calls_init(proxy);
    join_live(proxy);

    char reason[512] = "";
    iso_channel channel;
    pid_t pid;
    iso_host_info info;
    if (iso_spawn(host_program, fd, config, settings, -1, &channel, &pid, &info, reason,
                  sizeof reason) != 0) {
        snprintf(error, error_size, "plugin %s: %s", config->path, reason);
        free_proxy(proxy);
        return -1;
    }
    proxy->fd = channel.requests;
    proxy->lanes[CHAN_LANE_MAIN].fd = channel.answers;
    proxy->lanes[CHAN_LANE_FAST].fd = channel.fast_answers;
    proxy->pid = pid;
    proxy->pidfd = pxy_open_pidfd(pid);
    if (take_methods(proxy, &info) != 0 ||
        register_proxies(proxy, &info, reason, sizeof reason) != 0 ||
        pxy_start_threads(proxy, reader_main) != 0) {
        if (!reason[0])
            snprintf(reason, sizeof reason, "out of memory or threads");
        snprintf(error, error_size, "plugin %s: %s", config->path, reason);
        iso_host_info_free(&info);
        iso_channel_close(&channel);
        if (proxy->pidfd >= 0)
            close(proxy->pidfd);
        iso_reap(pid, (int)settings->grace_ms);
        reg_remove_owner(methods, owner);
        free_proxy(proxy);
        return -1;
    }
    log_message(LOG_DEBUG, "loaded plugin %s from %s (%s) in host process %d", proxy->name,
                config->path, info.name ? info.name : "", (int)pid);
    iso_host_info_free(&info);
    *out = proxy;
    return 0;
}

void iso_proxy_stop(iso_proxy *proxy)
{
    if (!proxy)
        return;
    pxy_stop_threads(proxy);
    free_proxy(proxy);
}
