/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the parent side of the isolation channel. Whatever bytes a host sends, the
 * proxy applies the frames it can to the calls it forwarded, stops at the first that breaks
 * the channel, and after the host's death no call of its is left: never a crash, a leak, or a
 * touch of a call it was not given. What it hands the MCP client (resource updates, log lines:
 * frames about no call) is checked at the sink: UTF-8, bounded, named after the plugin.
 * Each input is sent twice: on the main lane, then on the fast lane of a call whose caller
 * reads it and hands what is left to the reader thread.
 */
#include "calls/call.h"
#include "isolation/channel.h"
#include "isolation/proxy_calls.h"
#include "json/json_scan.h"
#include "base/log.h"
#include "wire/mcp_events.h"
#include "base/signals.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Calls forwarded before the bytes arrive: ids (1 << 32) | 0 to CALLS - 1. */
enum { CALLS = 4 };

/* What reaches the client must be fit for the protocol whatever the host sent. */
static void check_updated(void *context, const char *uri, size_t length)
{
    (void)context;
    if (length > CHAN_MAX_URI || strlen(uri) != length || !js_utf8_valid(uri, length))
        abort();
}

static void check_line(void *context, const char *logger, int level, const char *text,
                       size_t length)
{
    (void)context, (void)level;
    if (strcmp(logger, "fuzz") != 0 || length > CHAN_MAX_LOG_TEXT || memchr(text, '\0', length) ||
        !js_utf8_valid(text, length))
        abort();
}

/* A memfd holding data, read as a lane; aborts when there is none. */
static int lane_of(const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz", MFD_CLOEXEC);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET) != 0)
        abort();
    return fd;
}

/*
 * Forwards CALLS calls, then applies data as the host's answers on one lane (fast: the fast
 * lane, the first call's, with the main lane empty) until the host's end.
 */
static void run(const uint8_t *data, size_t size, bool fast)
{
    iso_proxy *proxy = calloc(1, sizeof *proxy);
    static cfg_plugin config = {.name = (char *)"fuzz", .path = (char *)"/fuzz.so"};
    proxy->config = &config;
    proxy->name = (char *)"fuzz";
    pxy_method methods[2] = {{proxy, 0, (char *)"fuzz.a", true},
                             {proxy, 1, (char *)"fuzz.b", false}};
    proxy->methods = methods;
    proxy->method_count = 2;
    call_fill_host_api(&proxy->api);
    pxy_calls_init(proxy);
    /* Set before the calls, as the host's start does (pxy_host_up): the first call then goes on
     * the fast lane while the reader thread watches it. */
    proxy->lanes[CHAN_LANE_MAIN].fd = lane_of(fast ? NULL : data, fast ? 0 : size);
    if (fast)
        proxy->lanes[CHAN_LANE_FAST].fd = lane_of(data, size);
    proxy->watching = fast;
    uint64_t fast_id = 0;
    /* Handles no call has: every host function given one answers RPCD_ERR_STALE. */
    for (uintptr_t i = 0; i < CALLS; i++) {
        uint64_t id;
        char reason[64];
        const pxy_meta meta = {i % 3 == 0, "{\"k\":1}", 7, {0}};
        bool wait_here;
        if (pxy_queue_call(proxy, &methods[i % 2], (rpcd_call *)(0x7e570000 + i), "[]", 2, &meta,
                           fast && i == 0, &wait_here, &id, reason, sizeof reason) != 0 ||
            wait_here != (fast && i == 0))
            abort();
        if (wait_here)
            fast_id = id;
    }
    if (fast) {
        /* No host to kill here: a broken fast lane only leaves its reason for the report. */
        proxy->state = PXY_RESTARTING;
        pxy_wait_fast(proxy, fast_id);
        /* The caller left the lane, to nobody or to the reader thread, which from now on reads
         * it whenever no caller can. */
        if (proxy->fast_state == PXY_FAST_CALLER)
            abort();
        proxy->watching = false;
    }
    char why[128] = "";
    if (pxy_read_frames(proxy, why, sizeof why) != -1)
        abort(); /* the end of the bytes is the host's death: no stop was asked for */
    bool served;
    pxy_host_died(proxy, 0, 0, why, &served);
    if (proxy->running != 0 || proxy->fast_state != PXY_FAST_IDLE)
        abort(); /* every call of a dead host has failed, and its lanes are nobody's */
    pxy_calls_fini(proxy);
    free(proxy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool quiet;
    if (!quiet) {
        log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
        static const mcp_event_sink sink = {NULL, check_updated, check_line};
        mcp_events_attach(&sink);
        mcp_events_set_client_log_level(RPCD_LOG_DEBUG);
        /* A call goes on the fast lane only from a thread the wake-up signal interrupts. */
        if (sig_wake_install() != 0)
            abort();
        sig_wake_unblock_here();
        quiet = true;
    }
    run(data, size, false);
    run(data, size, true);
    return 0;
}
