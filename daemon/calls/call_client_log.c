/* SPDX-License-Identifier: MIT */
/*
 * A plugin's log line as part of the request its handler serves: in the 2026-07-28 revision a
 * request asks for log lines with _meta "io.modelcontextprotocol/logLevel", and the lines logged
 * on the thread running its handler reach the client before its response.
 */
#include "calls/call_internal.h"
#include "base/running_call.h"
#include "base/lock.h"

#include "wire/mcp_events.h"
#include "wire/mcp_meta.h"
#include "base/output.h"

/* The call whose handler runs on this thread (scheduler.c sets it), or NULL. */
static rpcd_call *running_handle(void)
{
    const running_call *call = running_call_current();
    return call ? call->handle : NULL;
}

/* The level the slot's request asked for, or -1. Called with the slot locked. */
static int asked_level(const call_slot *slot)
{
    js_span version, level;
    if (call_find_meta(slot, MCP_META_PROTOCOL_VERSION, &version) != 1 ||
        js_kind_of(version) != JS_STRING ||
        !js_string_equals(version, MCP_STATELESS_VERSION, sizeof MCP_STATELESS_VERSION - 1) ||
        call_find_meta(slot, MCP_META_LOG_LEVEL, &level) != 1)
        return -1;
    return mcp_events_level_of(level);
}

int call_running_log_level(void)
{
    rpcd_call *running = running_handle();
    if (!running)
        return -1;
    call_slot *slot = slot_lock_live(running);
    if (!slot)
        return -1;
    int level = asked_level(slot);
    lock_release(&slot->lock);
    return level;
}

int call_running_log(const char *logger, int level, const char *text, size_t length)
{
    rpcd_call *running = running_handle();
    if (!running)
        return 0;
    call_slot *slot = slot_lock_live(running);
    if (!slot)
        return 0;
    int sent = 0;
    if (level <= asked_level(slot)) {
        /* Under the slot's lock, as every notification of a call: before its response. */
        buf_clear(&slot->scratch);
        if (mcp_events_append_message(&slot->scratch, logger, level, text, length) == 0) {
            struct iovec part = {slot->scratch.data, slot->scratch.length};
            out_write_line(slot->table->out, &part, 1);
            sent = 1;
        }
    }
    lock_release(&slot->lock);
    return sent;
}
