/* SPDX-License-Identifier: MIT */
/*
 * The MCP session's own traffic: the client's answers to rpcd's requests (the handshake era's
 * asking), and tasks (2026-07-28): a tools/call that may become one, the extension's requests,
 * and a task's call run again once tasks/update brought the answers it asked for.
 */
#include "serve/dispatch_internal.h"

#include "base/log.h"
#include "mcp/mcp_requests.h"
#include "mcp/mcp_tasks.h"
#include "methods/mcp_methods.h"
#include "methods/tool_policy.h"
#include "wire/rpc_error.h"

#include <stdio.h>
#include <string.h>

/*
 * A response object from the client. One to a request of rpcd's (1.6, the handshake era) is an
 * answer: its round waits for the others, or, when whole, its call runs again with them, as
 * its request came, answered as any call. Any other response is ignored.
 */
int disp_take_response(const dispatcher *dispatch, js_span value, const env_message *message)
{
    js_span result = {NULL, 0}, error = {NULL, 0};
    size_t results = js_object_get(value, "result", 6, &result);
    size_t errors = js_object_get(value, "error", 5, &error);
    /* Both, or either twice, is no result: an error of sorts, which fails the round. */
    if (errors > 1 || results > 1 || (errors > 0 && results > 0))
        error = value, result = (js_span){NULL, 0};
    mcp_resumed resumed;
    int taken = dispatch->session ? mcp_requests_answer(dispatch->session->requests, message->id,
                                                        result, error, &resumed)
                                  : MCP_ANSWER_UNKNOWN;
    if (taken == MCP_ANSWER_UNKNOWN)
        log_message(LOG_DEBUG,
                    "ignored a response object for id %.*s: no request of rpcd's "
                    "waits for it",
                    (int)message->id.length, message->id.start);
    if (taken != MCP_ANSWER_RESUMED)
        return taken == MCP_ANSWER_NO_MEMORY ? -1 : 0;
    char quoted[32];
    int quoted_length = snprintf(quoted, sizeof quoted, "\"%s\"", resumed.method);
    const env_message again = {
        .kind = ENV_REQUEST,
        .has_id = true,
        .id = {resumed.id.data, resumed.id.length},
        .method = {quoted, (size_t)quoted_length},
        .has_params = true,
        .params = {resumed.params.data, resumed.params.length},
    };
    int status = 0;
    disp_handle_mcp(dispatch, &again, resumed.method, strlen(resumed.method), NULL,
                    out_ticket_take(dispatch->out), &resumed.input, &status);
    mcp_resumed_free(&resumed);
    return status;
}

int disp_start_task_call(const dispatcher *dispatch, const env_message *message,
                         const mcp_route *route, call_request *request)
{
    mcp_task *task;
    char call_id[MCP_TASK_CALL_ID_BYTES];
    bool started = false;
    /* An id in flight is refused as any other (the check sees a task's request only so). */
    if (mcp_tasks_waiting(dispatch->session->tasks, message->id))
        return disp_start_call(dispatch, message, request, &started);
    int opened = mcp_tasks_open(dispatch->session->tasks, message->id, request->ticket,
                                route->progress_params, &task, call_id);
    /* With no room for one more task, a tool that may run as one is called as any other. */
    if (opened == MCP_TASKS_FULL && !route->task_required)
        return disp_start_call(dispatch, message, request, &started);
    if (opened != 0) {
        static const char full[] =
            "{\"detail\":\"max_tasks or max_task_bytes leave no room for a task\"}";
        bool no_room = opened == MCP_TASKS_FULL;
        return disp_answer_error(dispatch, message, NULL, request->ticket, RPC_INTERNAL_ERROR,
                                 no_room ? full : NULL, no_room ? sizeof full - 1 : 0);
    }
    /* The call runs under the task's id: the request's is the client's again once answered. */
    const js_span id = {call_id, strlen(call_id)};
    request->id = &id;
    request->sink = mcp_tasks_sink();
    request->sink_context = task;
    request->asker = mcp_tasks_asker();
    request->asker_context = task;
    int status = disp_start_call(dispatch, message, request, &started);
    if (started)
        mcp_tasks_started(task);
    else
        mcp_tasks_abandon(task);
    return status;
}

/*
 * A task's call run again with the answers tasks/update brought: the tool as the current
 * generation has it, the same arguments. Not held to the policy's rate again (the call goes on,
 * it is no new call), nor to its params' schema (the arguments were checked when it started).
 */
static void resume_task(const dispatcher *dispatch, mcp_task_resume *resume)
{
    static const char tools_call[] = "tools/call";
    buffer out = BUFFER_INIT;
    mcp_route route;
    const js_span params = {resume->params.data, resume->params.length};
    if (mcp_route_message(dispatch->generations->methods, dispatch->generations->tools, tools_call,
                          sizeof tools_call - 1, params, &out, &route) != 0 ||
        route.kind != MCP_CALL) {
        bool refused = route.kind == MCP_REFUSED;
        int64_t code = !refused     ? RPC_INTERNAL_ERROR
                       : route.code ? route.code
                                    : rpcerr_code_for_status(route.status, 0);
        mcp_tasks_resumed(resume, false, code,
                          refused && route.message[0] ? route.message : rpcerr_message(code));
        buf_free(&out);
        return;
    }
    const js_span id = {resume->call_id, strlen(resume->call_id)};
    call_request request = {
        .gen = dispatch->generations->held,
        .method = route.method,
        .id = &id,
        .params = &route.params,
        .shaper = route.shaper,
        .progress_params = route.progress_params.length > 0 ? &route.progress_params : NULL,
        .ask_capabilities = route.ask_capabilities,
        .asker = mcp_tasks_asker(),
        .asker_context = resume->task,
        .answers = {resume->input.answers.data, resume->input.answers.length},
        .state = {resume->input.state.data, resume->input.state.length},
        .has_state = resume->input.has_state,
        .sink = mcp_tasks_sink(),
        .sink_context = resume->task,
    };
    tool_policy *policy = mcp_tools_policy(dispatch->generations->tools);
    if (policy)
        request.max_result_bytes = pol_result_cap(policy, route.method, &request.result_cap_rule);
    bool interrupted = call_wait_for_room(dispatch->calls) != 0;
    int started = interrupted ? CALL_NO_MEMORY : call_start(dispatch->calls, &request);
    int64_t code = interrupted ? RPC_REQUEST_CANCELLED : RPC_INTERNAL_ERROR;
    mcp_tasks_resumed(resume, started == CALL_STARTED, code,
                      interrupted ? "rpcd stopped before the task ran again"
                                  : "the task's call could not start again");
    buf_free(&out);
}

int disp_task_request(const dispatcher *dispatch, const env_message *message,
                      const mcp_route *route, call_batch *batch, uint64_t ticket)
{
    if (message->kind != ENV_REQUEST)
        return 0;
    mcp_tasks *tasks = dispatch->session ? dispatch->session->tasks : NULL;
    const js_span params = message->has_params ? message->params : (js_span){NULL, 0};
    buffer out = BUFFER_INIT;
    mcp_task_resume resume;
    int answer = route->task_method == MCP_TASKS_GET ? mcp_tasks_get(tasks, params, &out)
                 : route->task_method == MCP_TASKS_CANCEL
                     ? mcp_tasks_cancel(tasks, params, &out)
                     : mcp_tasks_update(tasks, params, &out, &resume);
    int status;
    if (answer == MCP_TASK_DONE || answer == MCP_TASK_RESUME)
        status =
            call_respond_result(dispatch->calls, batch, ticket, &message->id, out.data, out.length);
    else if (answer == MCP_TASK_UNKNOWN || answer == MCP_TASK_INVALID)
        status = call_respond_error(dispatch->calls, batch, ticket, &message->id,
                                    RPC_INVALID_PARAMS, NULL, out.data, out.length);
    else
        status = call_respond_error(dispatch->calls, batch, ticket, &message->id,
                                    RPC_INTERNAL_ERROR, NULL, NULL, 0);
    buf_free(&out);
    if (answer == MCP_TASK_RESUME)
        resume_task(dispatch, &resume);
    return status;
}
