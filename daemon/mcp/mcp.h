/* SPDX-License-Identifier: MIT */
/*
 * The MCP front end: the handshake (initialize, ping, server/discover), the tool list built from
 * the plugins' methods and the config, tools/call, and subscriptions/listen, in the handshake era
 * and the stateless revision (mcp_revision.h). It sits beside plain JSON-RPC: the same
 * methods stay callable by their own names. mcp_route_message is its one entry for the dispatcher:
 * every MCP method, answered here or turned into a plugin's call, goes through it.
 */
#ifndef RPCD_MCP_H
#define RPCD_MCP_H

#include "base/buffer.h"
#include "base/output.h"
#include "calls/call.h"
#include "config/config.h"
#include "json/json_scan.h"
#include "methods/registry.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* The methods exposed as tools, and under which names. */
typedef struct mcp_tools mcp_tools;

/*
 * Builds the tool list from the registered methods and the config's [mcp] section: every method
 * unless `tools` limits them, under its tool.<method> name, else (tool_names = portable) its
 * portable name or (specification) its own name when that is a valid tool name. Keeps the
 * config's instructions for initialize and server/discover. Returns 0 and *out (new), or -1
 * with a one-line message in error (unknown method listed, invalid tool name, two methods under
 * one name).
 */
int mcp_tools_new(const registry *methods, const rpcd_config *config, mcp_tools **out, char *error,
                  size_t error_size);
void mcp_tools_free(mcp_tools *tools);
size_t mcp_tools_count(const mcp_tools *tools);

/*
 * The tool policy (tool_policy.h, stolen) the tools are listed and called under, and the
 * resources, prompts and completions (mcp_catalog_hide); a table without one serves every tool.
 * Once, not thread-safe: while the table is made, before it is published.
 */
struct tool_policy;
void mcp_tools_take_policy(mcp_tools *tools, struct tool_policy *policy);
/* The table's policy (borrowed; NULL: none, or tools is NULL). Thread-safe. */
struct tool_policy *mcp_tools_policy(const mcp_tools *tools);

/* The resources, prompts and completions beside the tools (borrowed), or NULL. Thread-safe. */
const struct mcp_catalog *mcp_tools_catalog(const mcp_tools *tools);

/* The method behind a tool name (bytes, length), or NULL. Thread-safe. */
const reg_method *mcp_tool_method(const mcp_tools *tools, const char *name, size_t length);

/* True for a tool name as MCP allows it: ^[a-zA-Z0-9_.-]{1,128}$. */
bool mcp_valid_tool_name(const char *name, size_t length);

/* True for a portable tool name, which every host and model API takes: ^[a-zA-Z0-9_-]{1,64}$. */
bool mcp_portable_tool_name(const char *name, size_t length);

enum { MCP_PORTABLE_NAME_MAX = 64 };

/*
 * The portable tool name of a method (name, NUL-terminated, borrowed, not empty): each character
 * outside a-z A-Z 0-9 _ - becomes _ (a UTF-8 sequence is one character), cut to 64. Writes it
 * to out (MCP_PORTABLE_NAME_MAX + 1 bytes, NUL-terminated) and returns its length.
 */
size_t mcp_portable_name_of(const char *name, char *out);

/*
 * Builds the result of a daemon-answered MCP request into out (raw JSON text of the result):
 * initialize, ping, server/discover, tools/list, in the shape of the revision params._meta names
 * (mcp_revision.h). params may be an empty span. Returns 0; -1 when the method is none of them;
 * -2 when params are invalid (the caller answers -32602; out may hold error.data); -3 when
 * memory ran out; -4 when params name a protocol version rpcd does not speak (out holds
 * error.data for -32022).
 */
int mcp_answer(const mcp_tools *tools, const char *method, size_t method_length, js_span params,
               buffer *out);

/* mcp_answer for a method id (mcp_methods.h) and an era (mcp_revision_read) known already. */
int mcp_answer_in(const mcp_tools *tools, int id, int era, js_span params, buffer *out);

/* What mcp_route_message made of a message. */
typedef enum mcp_route_kind {
    MCP_ANSWERED,  /* out holds the result */
    MCP_REFUSED,   /* answered with the error for status; out holds error.data when has_data */
    MCP_CALL,      /* a call of method: params, and the shaper of its result */
    MCP_LISTEN,    /* subscriptions/listen: open a stream for the listed notifications */
    MCP_SUBSCRIBE, /* resources/subscribe or unsubscribe: uri, subscribe */
    MCP_LOG_LEVEL, /* logging/setLevel: log_level; answered with out once it is set */
    MCP_TASK,      /* tasks/get, tasks/update or tasks/cancel (task_method), for the task store */
} mcp_route_kind;

/* What a subscriptions/listen asked for, of what rpcd can tell. */
typedef struct mcp_listen_filter {
    bool tools_list_changed, prompts_list_changed, resources_list_changed;
    js_span resource_uris; /* the resourceSubscriptions array, or an empty span */
    js_span task_ids;      /* the taskIds array (the Tasks extension), or an empty span */
} mcp_listen_filter;

typedef struct mcp_route {
    mcp_route_kind kind;
    int status;    /* MCP_REFUSED: the rpcd_status it is answered as (rpcerr_code_for_status) */
    int code;      /* MCP_REFUSED: when not 0, the JSON-RPC code instead (MCP's own errors) */
    bool has_data; /* MCP_REFUSED */
    const reg_method *method;  /* MCP_CALL: borrowed from the tools' registry */
    js_span params;            /* MCP_CALL: borrowed from the message's params, or static */
    const call_shaper *shaper; /* MCP_CALL: static; NULL when the result goes out as it is */
    /* MCP_CALL: where _meta.progressToken is, when not in params (call_request's
     * progress_params); empty span: in params. */
    js_span progress_params;
    /* MCP_CALL of a tool: what the client can be asked (contract_ask_capability bits; 0 in
     * the handshake era, where the session's apply and asks_by_request is set), and a retry's
     * requestState and inputResponses (empty: none), which the session's rounds turn into the
     * call's answers and state (mcp_rounds_claim). */
    unsigned ask_capabilities;
    bool asks_by_request;
    js_span request_state;
    js_span input_responses;
    mcp_listen_filter listen; /* MCP_LISTEN */
    js_span uri;              /* MCP_SUBSCRIBE: the URI, a JSON string of params */
    bool subscribe;           /* MCP_SUBSCRIBE: true for resources/subscribe */
    int log_level;            /* MCP_LOG_LEVEL: the finest RPCD_LOG_* the client asked for */
    /* MCP_CALL of a tool: it may run as a task (mcp_tasks.h): RPCD_METHOD_TASK, a request of
     * 2026-07-28 declaring the extension; task_required: RPCD_METHOD_TASK_REQUIRED. */
    bool may_be_task, task_required;
    int task_method; /* MCP_TASK: MCP_TASKS_GET, MCP_TASKS_UPDATE or MCP_TASKS_CANCEL */
    /* Whatever the kind: the message shows an MCP client (initialize, server/discover, or any
     * message of the stateless revision: its version in _meta), and it is initialize. */
    bool starts_session;
    bool initializes;
    /* initialize: its params' "capabilities" (an empty span when it has none). */
    js_span client_capabilities;
    /* MCP_REFUSED: when not empty, the error's message in place of the code's ("unknown tool
     * NAME": clients show the message, not the data). */
    char message[544]; /* a tool name of 128 bytes, each shown as \xNN at worst */
    /* MCP_REFUSED by the tool policy: the rule that decided (borrowed from the generation's
     * policy) and the method it refused, for the access log; NULL otherwise. */
    const char *refused_by;
} mcp_route;

/*
 * Routes a message (request or notification) for method (method_length bytes, decoded) with
 * params (the message's, or an empty span when it had none), the method looked up once: the MCP
 * methods are answered here, or refused, or become the call of a plugin's method (tools/call:
 * the tool's method, with the arguments as params and the result shaped as a tool result). out
 * (empty) takes the result or the error data. Returns 0 and *route, or -1 (out untouched) when
 * method is no MCP method, or one that MCP came to name after the ABI minor of a plugin that
 * registers it in methods (borrowed, the generation's: resources/read of a plugin built before
 * 1.5 stays its own method). Thread-safe (mcp_call.c).
 */
int mcp_route_message(const registry *methods, const mcp_tools *tools, const char *method,
                      size_t method_length, js_span params, buffer *out, mcp_route *route);

/*
 * One client's MCP session, owned by the server that reads the client and written only through
 * mcp_session_note, on its reading thread: whether a message showed an MCP client (whose host
 * ends the session by closing rpcd's input: the calls in flight are then cancelled), and whether
 * its initialize was answered (it hears of changed lists from then on). Zeroed: no session.
 */
typedef struct mcp_session {
    bool started;            /* read on the reading thread */
    atomic_bool initialized; /* read from any thread */
    /* The rounds of its calls that asked it for input (1.6); NULL until mcp_session_open. */
    struct mcp_rounds *rounds;
    /* The handshake era: what its initialize declared it can be asked (contract_ask_capability
     * bits), and the rounds that wait for its answers to rpcd's requests (1.6). */
    unsigned ask_capabilities;
    struct mcp_requests *requests;
    /* The 2026-07-28 revision: its tools/call requests that may become tasks, and its tasks. */
    struct mcp_tasks *tasks;
} mcp_session;

/* Makes the session's stores of rounds, writing rpcd's requests to out (borrowed, outlives
 * the session). Returns 0, or -1 (memory). */
int mcp_session_open(mcp_session *session, output *out);
/* Frees what mcp_session_open made. A zeroed session is fine. */
void mcp_session_close(mcp_session *session);

/* What a routed message (route, mcp_route_message's) tells of session; answered: its request
 * got a result (an initialize notification initializes nothing). Reading thread only. */
void mcp_session_note(mcp_session *session, const mcp_route *route, bool answered);

/*
 * A tools/call result (no newline) for a handler's result: its JSON as text content, and as
 * structuredContent too when it is an object. result is valid JSON. Returns 0 or -1 (memory).
 */
int mcp_append_tool_result(buffer *out, const char *result, size_t length);

/*
 * A tools/call result for a handler's failure: isError, and text saying why. Returns 0 or -1.
 * These two are the tool shaper's (mcp_call.c).
 */
int mcp_append_tool_error(buffer *out, const char *text, size_t length);

#endif
