/* SPDX-License-Identifier: MIT */
/*
 * The data path after framing: bytes of a line -> validated JSON -> envelope -> method -> call.
 */
#include "serve/dispatch.h"
#include "serve/dispatch_internal.h"

#include "base/buffer.h"
#include "wire/envelope.h"
#include "json/json_scan.h"
#include "base/log.h"
#include "wire/mcp_events.h"
#include "mcp/mcp_listen.h"
#include "mcp/mcp_requests.h"
#include "mcp/mcp_rounds.h"
#include "mcp/mcp_tasks.h"
#include "wire/rpc_error.h"
#include "serve/policy_gate.h"
#include "calls/call_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_blank(const char *line, size_t length)
{
    for (size_t i = 0; i < length; i++)
        if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
            return false;
    return true;
}

/*
 * Reads the id named key ("id" or "requestId") of a cancellation's params. A key given twice
 * names no call: which one a client meant is not for rpcd to guess.
 */
static bool cancellation_target(const env_message *message, const char *key, js_span *id)
{
    if (!message->has_params || js_kind_of(message->params) != JS_OBJECT)
        return false;
    size_t count = js_object_get(message->params, key, strlen(key), id);
    if (count > 1)
        log_message(LOG_DEBUG, "ignored a cancellation that gives \"%s\" twice", key);
    return count == 1 && (js_kind_of(*id) == JS_STRING || js_kind_of(*id) == JS_NUMBER);
}

/*
 * The daemon's own notifications: the two cancellation conventions. Returns true when the
 * message was one of them (handled, never answered).
 */
static bool handle_builtin(const dispatcher *dispatch, const env_message *message, const char *name,
                           size_t name_length)
{
    static const char lsp[] = "$/cancelRequest";         /* answer -32800 */
    static const char mcp[] = "notifications/cancelled"; /* no answer at all */
    bool is_lsp = name_length == sizeof lsp - 1 && memcmp(name, lsp, name_length) == 0;
    bool is_mcp = name_length == sizeof mcp - 1 && memcmp(name, mcp, name_length) == 0;
    if (message->kind != ENV_NOTIFICATION || (!is_lsp && !is_mcp))
        return false;
    js_span id;
    if (cancellation_target(message, is_lsp ? "id" : "requestId", &id)) {
        int found =
            call_cancel(dispatch->calls, id, is_lsp ? CALL_CANCEL_RESPOND : CALL_CANCEL_SILENT);
        if (!found && dispatch->listeners)
            found = mcp_listen_cancel(dispatch->listeners, id, is_lsp);
        if (!found && dispatch->session)
            found = mcp_requests_cancel(dispatch->session->requests, id, is_lsp) ||
                    mcp_tasks_cancel_request(dispatch->session->tasks, id, is_lsp);
        log_message(LOG_DEBUG, "%s for id %.*s: %s", is_lsp ? lsp : mcp, (int)id.length, id.start,
                    found ? "cancelled" : "no such call in flight");
    }
    return true;
}

int disp_answer_error(const dispatcher *dispatch, const env_message *message, call_batch *batch,
                      uint64_t ticket, int64_t code, const char *data, size_t data_length)
{
    if (message->kind != ENV_REQUEST)
        return 0;
    return call_respond_error(dispatch->calls, batch, ticket, &message->id, code, NULL, data,
                              data_length);
}

/* What start_call gives answer_not_started when it was interrupted waiting for room. */
enum { WAIT_INTERRUPTED = 1 };

/* Answers a request whose call did not start (started: WAIT_INTERRUPTED or call_start's). */
static int answer_not_started(const dispatcher *dispatch, const env_message *message,
                              const call_request *request, int started)
{
    call_batch *batch = request->batch;
    uint64_t ticket = request->ticket;
    switch (started) {
    case WAIT_INTERRUPTED:
        /* Shutting down: the request was read, so it still gets its one answer. */
        return disp_answer_error(dispatch, message, batch, ticket, RPC_REQUEST_CANCELLED, NULL, 0);
    case CALL_DUPLICATE_ID: {
        static const char data[] = "{\"detail\":\"a call with this id is still in flight\"}";
        return disp_answer_error(dispatch, message, batch, ticket, RPC_INVALID_REQUEST, data,
                                 sizeof data - 1);
    }
    case CALL_BAD_DEADLINE: {
        static const char data[] = "{\"detail\":\"_meta.timeout_ms must be a whole number of "
                                   "milliseconds from 1 to 86400000\"}";
        return disp_answer_error(dispatch, message, batch, ticket, RPC_INVALID_PARAMS, data,
                                 sizeof data - 1);
    }
    default:
        log_message(LOG_ERROR, "out of memory for a call of %s", request->method->name);
        return disp_answer_error(dispatch, message, batch, ticket, RPC_INTERNAL_ERROR, NULL, 0);
    }
}

/*
 * Params that do not fit the method's params_schema, answered: for tools/call a tool error the
 * model can read (the shaper's failure), elsewhere -32602 with the pointer, keyword and
 * expectation in data. Returns what answering returns.
 */
static int refuse_arguments(const dispatcher *dispatch, const env_message *message,
                            const call_request *request, const schema_failure *failure)
{
    log_message(LOG_DEBUG, "params of %s refused at \"%s\": \"%s\" expects %s",
                request->method->name, failure->pointer, failure->keyword, failure->expected);
    buffer out = BUFFER_INIT;
    int status = 0;
    if (request->shaper && request->shaper->failure) {
        char text[640];
        rpcerr_arguments_text(failure, text, sizeof text);
        if (request->shaper->failure(&out, text, strlen(text)) != 0)
            status = disp_answer_error(dispatch, message, request->batch, request->ticket,
                                       RPC_INTERNAL_ERROR, NULL, 0);
        else if (message->kind == ENV_REQUEST)
            status = call_respond_result(dispatch->calls, request->batch, request->ticket,
                                         &message->id, out.data, out.length);
    } else {
        int failed = rpcerr_arguments_data(&out, request->method->owner_name, request->method->name,
                                           failure);
        status = disp_answer_error(dispatch, message, request->batch, request->ticket,
                                   RPC_INVALID_PARAMS, failed ? NULL : out.data,
                                   failed ? 0 : out.length);
    }
    buf_free(&out);
    return status;
}

/*
 * Starts a call once there is room for it; a request that cannot start gets its one answer. The
 * same for every call, whether its method was named by the message or found another way. Inline:
 * it runs once per call, and its answers are out of the way in answer_not_started.
 * Its params are checked against the method's params_schema first, here, the one place every
 * call passes before its handler runs in process or its frame goes to a plugin host: params that
 * do not fit never reach a plugin. A call without params is checked as {}.
 */
static inline int start_call_noting(const dispatcher *dispatch, const env_message *message,
                                    call_request *request, bool *started_out)
{
    int refused;
    *started_out = false;
    /* A call that waits for the client's answers to rpcd's requests, or answers through the
     * task store, is still in flight. */
    if (message->kind == ENV_REQUEST && dispatch->session &&
        (mcp_requests_waiting(dispatch->session->requests, message->id) ||
         (!request->sink && mcp_tasks_waiting(dispatch->session->tasks, message->id))))
        return answer_not_started(dispatch, message, request, CALL_DUPLICATE_ID);
    if (gate_refuses(dispatch, message, request, &refused))
        return refused;
    if (request->method->arguments) {
        static const js_span none = {"{}", 2};
        schema_failure failure;
        int checked = schema_check_span(request->method->arguments,
                                        request->params ? *request->params : none, &failure);
        if (checked == SCHEMA_INVALID)
            return refuse_arguments(dispatch, message, request, &failure);
        if (checked != SCHEMA_VALID)
            return disp_answer_error(dispatch, message, request->batch, request->ticket,
                                     RPC_INTERNAL_ERROR, NULL, 0);
    }
    int started = call_wait_for_room(dispatch->calls) != 0 ? WAIT_INTERRUPTED
                                                           : call_start(dispatch->calls, request);
    *started_out = started == CALL_STARTED;
    if (started == CALL_STARTED)
        return 0;
    return answer_not_started(dispatch, message, request, started);
}

static inline int start_call(const dispatcher *dispatch, const env_message *message,
                             call_request *request)
{
    bool started;
    return start_call_noting(dispatch, message, request, &started);
}

int disp_start_call(const dispatcher *dispatch, const env_message *message, call_request *request,
                    bool *started)
{
    return start_call_noting(dispatch, message, request, started);
}

/*
 * subscriptions/listen: its response comes when the stream ends, long after the lines after it,
 * so it is no part of a batch and gives its place in ordered output up at once.
 */
static int open_listen(const dispatcher *dispatch, const env_message *message,
                       const mcp_listen_filter *filter, call_batch *batch, uint64_t ticket)
{
    static const char in_batch[] =
        "{\"detail\":\"subscriptions/listen is answered when its stream ends: not in a batch\"}";
    static const char duplicate[] = "{\"detail\":\"a call with this id is still in flight\"}";
    if (message->kind != ENV_REQUEST)
        return 0;
    if (!dispatch->listeners)
        return disp_answer_error(dispatch, message, batch, ticket, RPC_METHOD_NOT_FOUND, NULL, 0);
    if (batch)
        return disp_answer_error(dispatch, message, batch, ticket, RPC_INVALID_REQUEST, in_batch,
                                 sizeof in_batch - 1);
    int opened = mcp_listen_open(dispatch->listeners, message->id, filter);
    if (opened == MCP_LISTEN_DUPLICATE_ID)
        return disp_answer_error(dispatch, message, batch, ticket, RPC_INVALID_REQUEST, duplicate,
                                 sizeof duplicate - 1);
    if (opened != MCP_LISTEN_OPENED)
        return disp_answer_error(dispatch, message, batch, ticket, RPC_INTERNAL_ERROR, NULL, 0);
    if (ticket)
        out_ticket_drop(dispatch->out, ticket);
    return 0;
}

/* resources/subscribe and unsubscribe: the session's set of URIs, answered with {}. */
static int subscribe(const dispatcher *dispatch, const env_message *message, const mcp_route *route,
                     call_batch *batch, uint64_t ticket)
{
    static const char full[] = "{\"detail\":\"4096 URIs are subscribed already\"}";
    if (!dispatch->listeners)
        return message->kind == ENV_REQUEST ? disp_answer_error(dispatch, message, batch, ticket,
                                                                RPC_METHOD_NOT_FOUND, NULL, 0)
                                            : 0;
    int status = mcp_listen_subscribe(dispatch->listeners, route->uri, route->subscribe);
    if (message->kind != ENV_REQUEST)
        return 0;
    if (status == -2)
        return disp_answer_error(dispatch, message, batch, ticket, RPC_INVALID_PARAMS, full,
                                 sizeof full - 1);
    if (status != 0)
        return disp_answer_error(dispatch, message, batch, ticket, RPC_INTERNAL_ERROR, NULL, 0);
    return call_respond_result(dispatch->calls, batch, ticket, &message->id, "{}", 2);
}

/*
 * The plugin's call an MCP request became. A retry of a call that asked the client for input
 * (1.6) brings the round's answers and state along, or is refused (-32602) when its
 * requestState names no round rpcd keeps for this tool and these arguments; a call that rpcd
 * runs again once the client answered its requests (resumed, else NULL) brings them itself.
 */
static int start_mcp_call(const dispatcher *dispatch, const env_message *message,
                          const mcp_route *route, call_batch *batch, uint64_t ticket,
                          const mcp_round_input *resumed)
{
    mcp_session *session = dispatch->session;
    mcp_rounds *rounds = session ? session->rounds : NULL;
    mcp_round_input input = {BUFFER_INIT, BUFFER_INIT, false};
    const char *problem = NULL;
    /* A round is claimed by what its retry must repeat (mcp_rounds_identity). */
    buffer scratch = BUFFER_INIT;
    js_span identity;
    int claimed = 0;
    if (!resumed)
        claimed =
            mcp_rounds_identity(route->method, route->params, &scratch, &identity) != 0
                ? -1
                : mcp_rounds_claim(rounds, route->method->name, identity, route->request_state,
                                   route->input_responses, &input, &problem);
    buf_free(&scratch);
    if (claimed != 0) {
        buffer data = BUFFER_INIT;
        int failed = claimed == -1 || buf_append_string(&data, "{\"detail\":") != 0 ||
                     buf_append_json_string(&data, problem, strlen(problem)) != 0 ||
                     buf_append_char(&data, '}') != 0;
        int status = disp_answer_error(dispatch, message, batch, ticket,
                                       failed ? RPC_INTERNAL_ERROR : RPC_INVALID_PARAMS,
                                       failed ? NULL : data.data, failed ? 0 : data.length);
        buf_free(&data);
        return status;
    }
    const mcp_round_input *given = resumed ? resumed : &input;
    /* The handshake era: rpcd asks with requests of its own, what initialize declared; not
     * from a batch, whose array cannot wait for the client's answers. */
    bool by_request = route->asks_by_request && session && !batch && message->kind == ENV_REQUEST &&
                      session->ask_capabilities != 0;
    unsigned capabilities = by_request ? session->ask_capabilities
                            : rounds   ? route->ask_capabilities
                                       : 0;
    call_request request = {
        .gen = dispatch->generations->held,
        .method = route->method,
        .id = message->kind == ENV_REQUEST ? &message->id : NULL,
        .params = &route->params,
        .batch = batch,
        .ticket = ticket,
        .shaper = route->shaper,
        .progress_params = route->progress_params.length > 0 ? &route->progress_params : NULL,
        .ask_capabilities = capabilities,
        .asker = !capabilities ? NULL
                 : by_request  ? mcp_requests_asker()
                               : mcp_rounds_asker(),
        .asker_context = by_request ? (void *)session->requests : (void *)rounds,
        .answers = {given->answers.data, given->answers.length},
        .state = {given->state.data, given->state.length},
        .has_state = given->has_state,
    };
    int status = route->may_be_task && session && !batch && message->kind == ENV_REQUEST
                     ? disp_start_task_call(dispatch, message, route, &request)
                     : start_call(dispatch, message, &request);
    mcp_round_input_free(&input);
    return status;
}

int disp_handle_mcp(const dispatcher *dispatch, const env_message *message, const char *name,
                    size_t name_length, call_batch *batch, uint64_t ticket,
                    const mcp_round_input *resumed, int *status)
{
    js_span params = {NULL, 0};
    if (message->has_params)
        params = message->params;
    buffer out = BUFFER_INIT;
    mcp_route route;
    if (mcp_route_message(dispatch->generations->methods, dispatch->generations->tools, name,
                          name_length, params, &out, &route) != 0)
        return 0; /* out untouched: nothing to free */
    *status = 0;
    if (route.kind == MCP_ANSWERED && message->kind == ENV_REQUEST) {
        *status =
            call_respond_result(dispatch->calls, batch, ticket, &message->id, out.data, out.length);
    } else if (route.kind == MCP_REFUSED) {
        int64_t code = route.code ? route.code : rpcerr_code_for_status(route.status, 0);
        bool request = message->kind == ENV_REQUEST;
        if (route.refused_by) /* a tool the policy denies: in the access log with its rule */
            call_log_refused(route.method, request ? &message->id : NULL, request ? code : 0,
                             route.refused_by);
        *status = !request ? 0
                           : call_respond_error(dispatch->calls, batch, ticket, &message->id, code,
                                                route.message[0] ? route.message : NULL,
                                                route.has_data ? out.data : NULL,
                                                route.has_data ? out.length : 0);
    } else if (route.kind == MCP_LISTEN) {
        *status = open_listen(dispatch, message, &route.listen, batch, ticket);
    } else if (route.kind == MCP_SUBSCRIBE) {
        *status = subscribe(dispatch, message, &route, batch, ticket);
    } else if (route.kind == MCP_LOG_LEVEL) {
        mcp_events_set_client_log_level(route.log_level);
        if (message->kind == ENV_REQUEST)
            *status = call_respond_result(dispatch->calls, batch, ticket, &message->id, out.data,
                                          out.length);
    } else if (route.kind == MCP_CALL) {
        *status = start_mcp_call(dispatch, message, &route, batch, ticket, resumed);
    } else if (route.kind == MCP_TASK) {
        *status = disp_task_request(dispatch, message, &route, batch, ticket);
    }
    /* After the answer: an initialize's client hears of changed lists only once it has it. */
    if (dispatch->session)
        mcp_session_note(dispatch->session, &route, message->kind == ENV_REQUEST);
    buf_free(&out);
    return 1;
}

/*
 * A message's method name, decoded only when it holds escapes: into small (small_size bytes),
 * or into *heap (new, for the caller to free). NULL when memory ran out.
 */
static const char *method_name(js_span method, char *small, size_t small_size, char **heap,
                               size_t *length)
{
    const char *name = method.start + 1;
    *length = method.length - 2;
    *heap = NULL;
    if (!memchr(name, '\\', *length))
        return name;
    size_t needed = js_string_decoded_length(method);
    char *room = needed <= small_size ? small : (*heap = malloc(needed));
    if (room && js_string_decode(method, room, needed, length) == 0)
        return room;
    return NULL;
}

/* Answers an invalid message: -32600, with its id when it had a valid one. */
static int answer_invalid(const dispatcher *dispatch, const env_message *message, call_batch *batch)
{
    log_message(LOG_DEBUG, "invalid request: %s", message->problem);
    uint64_t ticket = batch ? 0 : out_ticket_take(dispatch->out);
    return call_respond_error(dispatch->calls, batch, ticket, message->has_id ? &message->id : NULL,
                              RPC_INVALID_REQUEST, NULL, NULL, 0);
}

/*
 * Handles one message (a whole line or one batch element). members, when not NULL, lists the
 * value's members as the validator found them, which spares a second scan.
 */
static int handle_message(const dispatcher *dispatch, js_span value, const js_index *members,
                          call_batch *batch)
{
    env_message message;
    if (members && members->count <= members->capacity)
        env_parse_members(members->children, members->count, &message);
    else
        env_parse(value, &message);

    if (message.kind == ENV_RESPONSE)
        return disp_take_response(dispatch, value, &message);
    if (message.kind == ENV_INVALID)
        return answer_invalid(dispatch, &message, batch);

    /* A request's place in ordered output; notifications have none, batch items their batch's. */
    uint64_t ticket = message.kind == ENV_REQUEST && !batch ? out_ticket_take(dispatch->out) : 0;
    char small[256];
    char *heap;
    size_t name_length;
    const char *name = method_name(message.method, small, sizeof small, &heap, &name_length);
    int mcp_status = 0;
    if (name &&
        disp_handle_mcp(dispatch, &message, name, name_length, batch, ticket, NULL, &mcp_status)) {
        free(heap);
        return mcp_status;
    }
    bool builtin = name && handle_builtin(dispatch, &message, name, name_length);
    const reg_method *method =
        name && !builtin ? reg_find(dispatch->generations->methods, name, name_length) : NULL;
    free(heap);
    if (builtin)
        return 0;
    if (!method)
        return disp_answer_error(dispatch, &message, batch, ticket,
                                 name ? RPC_METHOD_NOT_FOUND : RPC_INTERNAL_ERROR, NULL, 0);
    call_request request = {
        .gen = dispatch->generations->held,
        .method = method,
        .id = message.kind == ENV_REQUEST ? &message.id : NULL,
        .params = message.has_params ? &message.params : NULL,
        .batch = batch,
        .ticket = ticket,
    };
    return start_call(dispatch, &message, &request);
}

/* Answers a line over a limit: id null, and data naming the limit (what: plain ASCII). */
static int respond_over_limit(const dispatcher *dispatch, int64_t code, const char *what,
                              size_t limit)
{
    buffer data = BUFFER_INIT;
    int failed = buf_printf(&data, "{\"detail\":\"%s (%zu)\"}", what, limit);
    int status =
        call_respond_error(dispatch->calls, NULL, out_ticket_take(dispatch->out), NULL, code, NULL,
                           failed ? NULL : data.data, failed ? 0 : data.length);
    buf_free(&data);
    return status;
}

int disp_line(const dispatcher *dispatch, const char *line, size_t length)
{
    if (is_blank(line, length))
        return 0;
    /* The methods of this line's calls: a generation published meanwhile serves the next. */
    gen_reader_refresh(dispatch->generations);

    js_span value;
    size_t offset = 0;
    js_child children[64]; /* the members of a request, or the items of a batch */
    js_index index = {children, sizeof children / sizeof children[0], 0};
    int status =
        js_validate_indexed(line, length, dispatch->limits.max_depth, &value, &offset, &index);
    if (status == JS_ERR_DEPTH) {
        return respond_over_limit(dispatch, RPC_PARSE_ERROR, "nested deeper than max_depth",
                                  dispatch->limits.max_depth);
    }
    if (status != 0) {
        log_message(LOG_DEBUG, "parse error at byte %zu of a %zu-byte line", offset, length);
        return call_respond_error(dispatch->calls, NULL, out_ticket_take(dispatch->out), NULL,
                                  RPC_PARSE_ERROR, NULL, NULL, 0);
    }

    if (js_kind_of(value) == JS_OBJECT)
        return handle_message(dispatch, value, &index, NULL);
    if (js_kind_of(value) != JS_ARRAY)
        return handle_message(dispatch, value, NULL, NULL);

    size_t count = index.count;
    if (count == 0) /* "[]" is one invalid request, no array */
        return call_respond_error(dispatch->calls, NULL, out_ticket_take(dispatch->out), NULL,
                                  RPC_INVALID_REQUEST, NULL, NULL, 0);
    if (count > dispatch->limits.max_batch) {
        return respond_over_limit(dispatch, RPC_INVALID_REQUEST, "batch longer than max_batch",
                                  dispatch->limits.max_batch);
    }
    call_batch *batch;
    uint64_t ticket = out_ticket_take(dispatch->out);
    if (call_batch_new(dispatch->calls, ticket, &batch) != 0)
        return call_respond_error(dispatch->calls, NULL, ticket, NULL, RPC_INTERNAL_ERROR, NULL,
                                  NULL, 0);
    /* The items go to the pool in groups: one lock and one wake-up round per group. Held items
     * count in flight, so a reader that must wait for room hands its group over first. */
    js_iter elements;
    js_span element;
    js_iter_init(&elements, value);
    call_begin_group(dispatch->calls);
    for (size_t i = 0; i < count; i++) {
        if (count <= index.capacity)
            element = children[i].value;
        else
            js_iter_next(&elements, NULL, &element);
        handle_message(dispatch, element, NULL, batch);
    }
    call_end_group(dispatch->calls);
    call_batch_release(batch);
    return out_failed(dispatch->out) ? -1 : 0;
}

int disp_line_too_long(const dispatcher *dispatch, size_t length, size_t limit)
{
    log_message(LOG_WARNING, "skipped a %zu-byte line: longer than max_line_bytes (%zu)", length,
                limit);
    return respond_over_limit(dispatch, RPC_INVALID_REQUEST, "line longer than max_line_bytes",
                              limit);
}
