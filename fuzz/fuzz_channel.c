/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the parent side of the isolation channel. Whatever bytes a host sends, the
 * proxy applies the frames it can to the calls it forwarded, stops at the first that breaks
 * the channel, and after the host's death no call of its is left: never a crash, a leak, or a
 * touch of a call it was not given. What it hands the MCP client (resource updates, log lines:
 * frames about no call) is checked at the sink: UTF-8, bounded, named after the plugin.
 */
#include "call.h"
#include "isolation/channel.h"
#include "isolation/proxy_calls.h"
#include "json_scan.h"
#include "log.h"
#include "mcp_events.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool quiet;
    if (!quiet) {
        log_set_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
        static const mcp_event_sink sink = {NULL, check_updated, check_line};
        mcp_events_attach(&sink);
        mcp_events_set_client_log_level(RPCD_LOG_DEBUG);
        quiet = true;
    }
    iso_proxy *proxy = calloc(1, sizeof *proxy);
    static cfg_plugin config = {.name = (char *)"fuzz", .path = (char *)"/fuzz.so"};
    proxy->config = &config;
    proxy->name = (char *)"fuzz";
    pxy_method methods[2] = {{proxy, 0, (char *)"fuzz.a", false},
                             {proxy, 1, (char *)"fuzz.b", false}};
    proxy->methods = methods;
    proxy->method_count = 2;
    call_fill_host_api(&proxy->api);
    pxy_calls_init(proxy);
    /* Handles no call has: every host function given one answers RPCD_ERR_STALE. */
    for (uintptr_t i = 0; i < CALLS; i++) {
        uint64_t id;
        char reason[64];
        const pxy_meta meta = {i % 3 == 0, "{\"k\":1}", 7};
        bool wait_here;
        if (pxy_queue_call(proxy, &methods[i % 2], (rpcd_call *)(0x7e570000 + i), "[]", 2, &meta,
                           false, &wait_here, &id, reason, sizeof reason) != 0)
            abort();
    }
    int fd = memfd_create("fuzz", MFD_CLOEXEC);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET) != 0)
        abort();
    proxy->lanes[CHAN_LANE_MAIN].fd = fd; /* closed with the dead host's channel */
    char why[128] = "";
    if (pxy_read_frames(proxy, why, sizeof why) != -1)
        abort(); /* the end of the bytes is the host's death: no stop was asked for */
    bool served;
    pxy_host_died(proxy, 0, 0, why, &served);
    if (proxy->running != 0)
        abort(); /* every call of a dead host has failed */
    pxy_calls_fini(proxy);
    free(proxy);
    return 0;
}
