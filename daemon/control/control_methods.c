/* SPDX-License-Identifier: MIT */
/*
 * The control socket's five methods: status, calls, reload, metrics and cancel, each read from
 * the running server through the APIs the rest of rpcd uses (the current generation, the call
 * table's list under its slots' locks, the reloader, the counter store, call_cancel).
 */
#include "control/control.h"

#include "base/clock.h"
#include "base/metrics.h"
#include "calls/call.h"
#include "loader/loader.h"
#include "methods/generation.h"
#include "wire/response_line.h"

#include <stdio.h>
#include <string.h>

#ifndef RPCD_VERSION
#define RPCD_VERSION "unknown"
#endif

/* A text from a plugin or a config as a JSON string: printable, whatever its bytes. */
static int append_text(buffer *out, const char *text)
{
    char shown[256];
    reg_printable_name(text, strlen(text), shown, sizeof shown);
    return buf_append_json_string(out, shown, strlen(shown));
}

static int append_plugin(buffer *out, const loader *plugins, size_t index)
{
    ld_status status;
    ld_about about;
    ld_status_at(plugins, index, &status);
    ld_about_at(plugins, index, &about);
    int failed = buf_append_string(out, index ? ",{\"name\":" : "{\"name\":");
    failed |= append_text(out, ld_name_at(plugins, index));
    failed |= buf_append_string(out, ",\"version\":");
    failed |= about.version ? append_text(out, about.version) : buf_append_string(out, "null");
    failed |= buf_printf(
        out, ",\"isolation\":\"%s\",\"host_pid\":", status.isolated ? "process" : "none");
    failed |=
        status.host_pid ? buf_printf(out, "%d", status.host_pid) : buf_append_string(out, "null");
    failed |=
        buf_printf(out, ",\"restarts\":%lu,\"deadline_kills\":%lu,\"last_crash\":", status.restarts,
                   status.deadline_kills);
    failed |=
        status.last_crash[0] ? append_text(out, status.last_crash) : buf_append_string(out, "null");
    return failed | buf_append_char(out, '}');
}

typedef struct call_counts {
    size_t in_flight, queued;
} call_counts;

static void count_call(void *context, const call_view *view)
{
    call_counts *counts = context;
    counts->in_flight++;
    counts->queued += !view->running;
}

static int answer_status(const ctl_target *target, buffer *out)
{
    call_counts counts = {0, 0};
    call_list(srv_calls(target->srv), count_call, &counts);
    unsigned long number = target->reloads ? rl_generation(target->reloads) : 1;
    int failed = buf_printf(out,
                            "{\"version\":\"%s\",\"uptime_ms\":%lld,\"generation\":%lu,"
                            "\"calls_in_flight\":%zu,\"calls_queued\":%zu,\"metrics\":%s,"
                            "\"plugins\":[",
                            RPCD_VERSION, clock_now_ms() - target->started_ms, number,
                            counts.in_flight, counts.queued, mx_on() ? "true" : "false");
    generation *gen = gen_take_current(target->runtime->generations);
    const loader *plugins = gen_plugins(gen);
    for (size_t i = 0; plugins && i < ld_count(plugins); i++)
        failed |= append_plugin(out, plugins, i);
    gen_release(gen);
    return failed | buf_append_string(out, "]}");
}

typedef struct call_lines {
    buffer *out;
    size_t count;
    int failed;
} call_lines;

static void append_call(void *context, const call_view *view)
{
    call_lines *lines = context;
    buffer *out = lines->out;
    int failed = buf_append_string(out, lines->count++ ? ",{\"id\":" : "{\"id\":");
    if (!view->id[0])
        failed |= buf_append_string(out, "null");
    else if (view->id_cut)
        failed |= append_text(out, view->id);
    else
        failed |= buf_append_string(out, view->id);
    failed |= buf_append_string(out, ",\"method\":");
    failed |= buf_append_json_string(out, view->method, strlen(view->method));
    failed |= buf_append_string(out, ",\"plugin\":");
    failed |= buf_append_json_string(out, view->plugin, strlen(view->plugin));
    failed |= view->age_ms >= 0 ? buf_printf(out, ",\"age_ms\":%lld", view->age_ms)
                                : buf_append_string(out, ",\"age_ms\":null");
    const char *state = view->answered ? "answered" : view->running ? "running" : "queued";
    failed |= buf_printf(out, ",\"state\":\"%s\",\"cancelled\":%s,\"id_cut\":%s", state,
                         view->cancelled ? "true" : "false", view->id_cut ? "true" : "false");
    if (view->has_progress && view->progress_total >= 0)
        failed |= buf_printf(out, ",\"progress\":{\"done\":%.17g,\"total\":%.17g}}",
                             view->progress_done, view->progress_total);
    else if (view->has_progress)
        failed |= buf_printf(out, ",\"progress\":{\"done\":%.17g}}", view->progress_done);
    else
        failed |= buf_append_string(out, ",\"progress\":null}");
    lines->failed |= failed;
}

static int answer_calls(const ctl_target *target, buffer *out)
{
    call_lines lines = {out, 0, buf_append_string(out, "{\"calls\":[")};
    call_list(srv_calls(target->srv), append_call, &lines);
    return lines.failed | buf_append_string(out, "]}");
}

static int answer_metrics(buffer *out)
{
    buffer text = BUFFER_INIT;
    int failed = mx_write_openmetrics(&text);
    failed |= buf_printf(out, "{\"enabled\":%s,\"content_type\":", mx_on() ? "true" : "false");
    failed |= buf_append_string(
        out, "\"application/openmetrics-text; version=1.0.0; charset=utf-8\",\"text\":");
    failed |= buf_append_json_string(out, text.data ? text.data : "", text.length);
    buf_free(&text);
    return failed | buf_append_char(out, '}');
}

static int answer_cancel(const ctl_target *target, const ctl_request *request, buffer *out)
{
    int found = call_cancel(srv_calls(target->srv), request->cancel, CALL_CANCEL_RESPOND);
    return buf_printf(out, "{\"cancelled\":%s}", found ? "true" : "false");
}

/* reload: a result naming what changed, or an error saying why the config was refused. */
static int answer_reload(const ctl_target *target, const ctl_request *request, buffer *out)
{
    char summary[1024] = "", error[1024] = "cannot reload: no reloader (see the log)";
    if (target->reloads &&
        rl_reload_now(target->reloads, summary, sizeof summary, error, sizeof error) == 0) {
        buffer result = BUFFER_INIT;
        int failed =
            buf_printf(&result, "{\"generation\":%lu,\"summary\":", rl_generation(target->reloads));
        failed |= buf_append_json_string(&result, summary, strlen(summary));
        failed |= buf_append_char(&result, '}');
        if (!failed)
            failed = ctl_append_result(out, request->id, result.data, result.length);
        buf_free(&result);
        return failed;
    }
    char message[1200], data[64];
    snprintf(message, sizeof message, "reload refused, still serving the running config: %s",
             error);
    snprintf(data, sizeof data, "{\"generation\":%lu}",
             target->reloads ? rl_generation(target->reloads) : 1UL);
    int failed = rl_append_error(out, &request->id, -32000, message, data, strlen(data));
    return failed | buf_append_char(out, '\n');
}

int ctl_answer(const ctl_target *target, const ctl_request *request, buffer *out)
{
    if (request->method == CTL_RELOAD)
        return answer_reload(target, request, out);
    buffer result = BUFFER_INIT;
    int failed = 0;
    switch (request->method) {
    case CTL_STATUS: failed = answer_status(target, &result); break;
    case CTL_CALLS: failed = answer_calls(target, &result); break;
    case CTL_METRICS: failed = answer_metrics(&result); break;
    case CTL_CANCEL: failed = answer_cancel(target, request, &result); break;
    default: failed = -1; break;
    }
    if (!failed)
        failed = ctl_append_result(out, request->id, result.data, result.length);
    buf_free(&result);
    return failed ? -1 : 0;
}
