/* SPDX-License-Identifier: MIT */
/*
 * A plugin host's MCP events: the sink its loader hands resource updates and the log lines the
 * client asked for to (each a frame to rpcd, whose proxy hands them to rpcd's own sink), and the
 * client's log level as rpcd tells it, in INIT and then in LEVEL whenever it changes.
 */
#include "isolation/host_internal.h"

#include "json/json_scan.h"
#include "base/log.h"
#include "wire/mcp_events.h"

#include <stdint.h>

/* Lock held: sends what is pending unless the reader is in a batch (it sends at its end). */
static void send_frame(buffer *out, int failed, size_t start)
{
    chan_end(out, start, failed != 0); /* without memory the event is lost */
    host_flush_locked();
    pthread_mutex_unlock(&host.lock);
}

static void send_resource_updated(void *context, const char *uri, size_t length)
{
    (void)context;
    /* mcp_events_resource_updated refused a longer one already (the plugin got
     * RPCD_ERR_INVALID_ARGUMENT); rpcd would take one for a broken host. */
    if (length > CHAN_MAX_URI) {
        log_message(LOG_WARNING,
                    "plugin host: resource_updated of a URI of %zu bytes (more than %zu) not "
                    "sent",
                    length, CHAN_MAX_URI);
        return;
    }
    pthread_mutex_lock(&host.lock);
    buffer *out = host_event_out();
    size_t start;
    int failed = chan_begin(out, CHAN_RESOURCE_UPDATED, &start);
    failed |= chan_put_str(out, uri, length);
    send_frame(out, failed, start);
}

/*
 * rpcd refuses text that is not UTF-8 from a host, while a plugin may log any bytes (and the
 * log functions cut a long line anywhere): such a text has each byte outside ASCII made '?', as
 * rpcd's own sink does with it in process, so that the client reads the same line either way.
 */
static void send_log_line(void *context, const char *logger, int level, const char *text,
                          size_t length)
{
    (void)context, (void)logger; /* rpcd's proxy knows the plugin's name */
    if (length > CHAN_MAX_LOG_TEXT)
        length = CHAN_MAX_LOG_TEXT;
    pthread_mutex_lock(&host.lock);
    buffer *out = host_event_out();
    size_t start;
    int failed = chan_begin(out, CHAN_LOG, &start);
    failed |= chan_put_u32(out, (uint32_t)(int32_t)level);
    size_t at = out->length + sizeof(uint32_t);
    failed |= chan_put_str(out, text, length);
    if (failed == 0 && !js_utf8_valid(text, length))
        for (size_t i = 0; i < length; i++)
            if ((unsigned char)out->data[at + i] >= 0x80)
                out->data[at + i] = '?';
    send_frame(out, failed, start);
}

void host_events_attach(int client_level)
{
    mcp_events_set_client_log_level(client_level);
    static const mcp_event_sink sink = {NULL, send_resource_updated, send_log_line};
    mcp_events_attach(&sink);
}

int host_apply_level(chan_frame *frame)
{
    int32_t level = (int32_t)chan_get_u32(frame);
    if (!chan_finished(frame))
        return -1;
    mcp_events_set_client_log_level(level);
    return 0;
}
