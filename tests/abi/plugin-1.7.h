/* SPDX-License-Identifier: MIT */
/*
 * rpcd plugin ABI, version 1: the only header a plugin needs.
 * A plugin is a shared object exporting one function, rpcd_plugin_entry(); everything else
 * reaches it through the function table the daemon hands to its init function.
 */
#ifndef RPCD_PLUGIN_H
#define RPCD_PLUGIN_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Versioning.
 * RPCD_ABI_MAJOR changes only when an existing layout or meaning changes; the daemon refuses a
 * plugin whose major differs from its own. RPCD_ABI_MINOR grows when something is appended; a
 * plugin reports the minor it was built against and the daemon refuses it when that minor is
 * newer than its own. Both refusals name both versions.
 * A meaning appended in a minor applies only to plugins that declare that minor or a later one
 * (rpcd_plugin_info.abi_minor): what an older plugin hands over keeps the meaning it had when
 * the plugin was built, forever.
 *   1.0  first release.
 *   1.1  deferred completion: RPCD_DEFERRED and host->call_complete. From a plugin built
 *        against 1.0, a handler's 1 stays an unknown status (-32603, error.data.status 1).
 *   1.2  RPCD_METHOD_QUICK. From a plugin built against 1.0 or 1.1, the bit 0x2 in
 *        rpcd_method.flags is ignored, as every bit a minor does not define is.
 *   1.3  host->log_text, a log function without a format, for languages that cannot call a
 *        variadic function. Nothing an older plugin hands over changes meaning.
 *   1.4  what MCP lets a tool say: rpcd_method.title, annotations, output_schema and icons;
 *        host->call_tool_result (a complete MCP tool result) and host->call_meta (the
 *        request's params._meta). Descriptors of older plugins end before title, so nothing
 *        they hand over changes meaning.
 *   1.5  the rest of an MCP server: rpcd_method.mcp_role and mcp_descriptor make a method a
 *        resource, a prompt or a completion instead of a tool (or keep it from MCP clients);
 *        host->resource_updated. Descriptors of older plugins end before mcp_role: their
 *        methods stay tools.
 *   1.6  asking the client mid-call: RPCD_INPUT_REQUIRED, host->call_ask, call_input,
 *        call_set_state and call_state; RPCD_METHOD_VALIDATES_ITSELF. call_fail_code with a
 *        code in -32099..-32000 (where MCP defines its protocol's errors, such as -32021, a
 *        client capability missing) is that JSON-RPC error in tools/call too, rather than a tool
 *        error. From a plugin built against 1.5 or earlier, a handler's 2 stays an unknown
 *        status, such a failure the tool error it was, and the bit 0x4 is ignored: the daemon
 *        checks params against every params_schema.
 *   1.7  long tools: RPCD_METHOD_TASK and RPCD_METHOD_TASK_REQUIRED let an MCP client of the
 *        2026-07-28 revision poll a call as a task. From a plugin built against 1.6 or
 *        earlier, the bits 0x8 and 0x10 are ignored: its tools answer each call directly.
 */
#define RPCD_ABI_MAJOR 1
#define RPCD_ABI_MINOR 7

/* The one symbol the daemon looks up in a plugin, and its type. */
#define RPCD_PLUGIN_ENTRY_SYMBOL "rpcd_plugin_entry"

#if defined(__GNUC__) || defined(__clang__)
#define RPCD_EXPORT __attribute__((visibility("default")))
#define RPCD_PRINTF(format_index, first_arg)                                                       \
    __attribute__((format(printf, format_index, first_arg)))
#else
#define RPCD_EXPORT
#define RPCD_PRINTF(format_index, first_arg)
#endif

/* clang-format off */
/*
 * Status codes, returned by handlers and by the host functions below. The set is closed and
 * append-only: a value, once given, keeps its meaning forever. 0 is success, errors are
 * negative, RPCD_DEFERRED (a handler's "not finished yet") is the only positive one. The daemon
 * turns a handler's status into a JSON-RPC error:
 *   RPCD_ERR_INVALID_PARAMS     -32602 Invalid params
 *   RPCD_ERR_METHOD_NOT_FOUND   -32601 Method not found
 *   RPCD_ERR_CANCELLED          -32800 Request cancelled
 *   RPCD_ERR_APPLICATION        the code given to call_fail_code()
 *   anything else, including a value outside this enum: -32603 Internal error, with the status
 *   name in error.data.exception (and the raw value in error.data.status when it is unknown).
 */
/* clang-format on */
typedef enum rpcd_status {
    RPCD_OK = 0,
    RPCD_DEFERRED = 1,              /* (1.1) the handler finishes later with call_complete;
                                       from a 1.0 plugin, an unknown status */
    RPCD_INPUT_REQUIRED = 2,        /* (1.6) the handler asked the client (call_ask) and runs
                                       again with the answers; see call_ask */
    RPCD_ERR_INVALID_PARAMS = -1,   /* params have the wrong shape or values */
    RPCD_ERR_METHOD_NOT_FOUND = -2, /* for plugins that dispatch further by themselves */
    RPCD_ERR_INTERNAL = -3,         /* the handler failed for its own reasons */
    RPCD_ERR_NO_MEMORY = -4,        /* an allocation failed */
    RPCD_ERR_CANCELLED = -5,        /* the handler stopped because its call was cancelled */
    RPCD_ERR_APPLICATION = -6,      /* an error with the plugin's own code, see call_fail_code */
    RPCD_ERR_INVALID_ARGUMENT = -7, /* a host function got a bad argument (NULL, invalid JSON) */
    RPCD_ERR_STALE = -8,            /* the call this context belonged to has ended */
    RPCD_ERR_EXISTS = -9,           /* register_method: the name is already taken */
    RPCD_ERR_UNSUPPORTED = -10      /* the function cannot be used here or now */
} rpcd_status;

/* Log levels for host->log(), most severe first. */
typedef enum rpcd_log_level {
    RPCD_LOG_ERROR = 0,
    RPCD_LOG_WARNING = 1,
    RPCD_LOG_INFO = 2,
    RPCD_LOG_DEBUG = 3
} rpcd_log_level;

/* One loaded plugin, as the daemon knows it. Valid from init until shutdown returns. */
typedef struct rpcd_plugin rpcd_plugin;

/*
 * One call in progress. Handed to the handler and usable from any thread; once the call has
 * ended, every function taking it returns RPCD_ERR_STALE (or reports "cancelled") and does
 * nothing else, so a pointer kept too long is harmless, never a crash.
 */
typedef struct rpcd_call rpcd_call;

/*
 * A method handler.
 *   call        the call's context (borrowed; see rpcd_call).
 *   params      the request's "params" member as UTF-8 JSON text, always an array or an object,
 *               exactly as the client sent it (an MCP "_meta" member included, so ignore
 *               members you do not know), NOT NUL-terminated; NULL with params_length 0 when
 *               the request had no params. Borrowed: valid only until the handler returns.
 *   user_data   the pointer given in the method's descriptor.
 * Returns RPCD_OK after setting a result with call_result() (no result gives a JSON null), or an
 * error status, usually through call_fail()/call_fail_code(). The return value decides: a result
 * set before an error status is discarded.
 * (1.1) Or returns RPCD_DEFERRED to finish later, from any thread, with call_result() or
 * call_fail() and then call_complete(): the worker thread is free meanwhile, and the call's
 * context stays valid until call_complete. A deferred call still counts against the daemon's
 * max_in_flight.
 * Threads: handlers of one plugin may run at the same time on different threads, unless the
 * method was registered with RPCD_METHOD_SERIALIZED.
 * C++: declare handlers (and init, shutdown, free_user_data) noexcept and catch everything in
 * them: an exception that leaves one unwinds into the daemon's C code and terminates it.
 * Signals: the daemon handles SIGTERM, SIGINT, SIGPIPE and one real-time signal (with which it
 * interrupts its reading thread); a plugin leaves their dispositions alone (the daemon warns,
 * naming it, when its init changed one). Handlers on the daemon's worker
 * threads run with every signal but the faults blocked. Elsewhere (init, quick handlers, a
 * plugin's own threads) a system call may return EINTR when the daemon takes a signal (a stop,
 * SIGHUP, SIGUSR1, SIGUSR2), as in any program with signal handlers, and is then retried.
 */
typedef int (*rpcd_handler_fn)(rpcd_call *call, const char *params, size_t params_length,
                               void *user_data);

/* Method flags. Bits the plugin's minor does not define are ignored. */
#define RPCD_METHOD_SERIALIZED 0x1u /* never run two calls of this method at the same time */
/*
 * (1.2) The handler returns within microseconds and never blocks (no I/O, no locks held for
 * long, no sleeping): the daemon may run it on the thread that reads requests, which spares the
 * hand-off to a worker thread, most of the cost of a small call. A quick handler that blocks
 * stops all reading meanwhile, cancellations included. The daemon runs it on a worker when
 * workers = 1 (one call at a time) and when its params are large. Ignored from plugins built
 * against 1.0 or 1.1, for which the bit had no meaning.
 */
#define RPCD_METHOD_QUICK 0x2u
/*
 * (1.6) The handler checks its params itself: the daemon does not check them against
 * params_schema (which it still shows in tools/list). Ignored from plugins built against 1.5 or
 * older, whose params the daemon checks.
 */
#define RPCD_METHOD_VALIDATES_ITSELF 0x4u
/*
 * (1.7) The tool may run as a task (MCP's Tasks extension, 2026-07-28): for a tools/call whose
 * _meta declares the extension, a call still running after the config's task_after_ms is
 * answered with a task id, and the client polls tasks/get for the outcome, answers what the
 * handler asks with tasks/update and may end it with tasks/cancel. The handler is called as for
 * any other call and cannot tell the difference. Ignored from plugins built against 1.6 or
 * older, and for every other caller (plain JSON-RPC, older MCP revisions).
 */
#define RPCD_METHOD_TASK 0x8u
/*
 * (1.7) RPCD_METHOD_TASK, and a 2026-07-28 client that does not declare the extension is refused
 * with -32021 (a client capability missing) instead of waiting on the call: for a tool that
 * runs for longer than a request may wait. Older MCP revisions and plain JSON-RPC call it as
 * any method. Ignored from plugins built against 1.6 or older.
 */
#define RPCD_METHOD_TASK_REQUIRED 0x10u

/*
 * (1.5) What a method is to an MCP client (rpcd_method.mcp_role). Every method stays callable
 * by its name over plain JSON-RPC whatever its role; the role says where MCP shows it. Values
 * are never reused; a role a daemon does not know refuses the method at register_method.
 */
#define RPCD_MCP_TOOL 0u       /* a tool: tools/list and tools/call (every older method) */
#define RPCD_MCP_RESOURCE 1u   /* a resource or a resource template: resources/read */
#define RPCD_MCP_PROMPT 2u     /* a prompt: prompts/list and prompts/get */
#define RPCD_MCP_COMPLETION 3u /* completion/complete for a prompt's or a template's arguments */
#define RPCD_MCP_HIDDEN 4u     /* nothing: a plain JSON-RPC method MCP clients do not see */

/*
 * A method descriptor, read by register_method(). Set size to sizeof(rpcd_method) (use
 * rpcd_method_new()): the daemon reads only the members that fit in size, so a plugin built
 * against an older, shorter descriptor keeps working. The daemon copies the strings.
 */
typedef struct rpcd_method {
    size_t size;
    const char *name;                   /* required, UTF-8, unique across all plugins,
                                           see register_method */
    rpcd_handler_fn handler;            /* required */
    void *user_data;                    /* passed to every call of handler */
    void (*free_user_data)(void *data); /* optional; called once when the daemon unloads */
    uint32_t flags;                     /* RPCD_METHOD_* */
    const char *description;            /* optional, one or two sentences for people */
    const char *params_schema;          /* optional JSON Schema text for params */

    /* ---- 1.4: what an MCP client shows of the tool (tools/list); plain JSON-RPC ignores it */

    /* Optional, UTF-8: a name for people ("Get weather"); MCP's Tool.title. */
    const char *title;
    /*
     * Optional JSON text of MCP's ToolAnnotations object, sent as the tool's "annotations":
     *   {"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}
     * Hosts decide by these hints whether a call needs the user's approval. JSON text rather
     * than a struct of tri-state fields: a hint left out means "not said" (as in MCP), hints a
     * later MCP revision adds reach clients without a new descriptor layout, and every
     * language can hand over a string. register_method refuses it unless it is an object whose
     * readOnlyHint, destructiveHint, idempotentHint and openWorldHint, when present, are
     * booleans and whose title, when present, is a string; other members pass through as given.
     */
    const char *annotations;
    /*
     * Optional JSON Schema text of the tool's result, sent as "outputSchema"; MCP requires an
     * object with "type": "object", and register_method refuses anything else, or a schema the
     * daemon cannot apply (as params_schema). With it the method's result must be an object,
     * which tools/call sends as "structuredContent" (a complete result from call_tool_result
     * must hold one, unless its isError is true), and the daemon checks that object against the
     * whole schema (JSON Schema draft 2020-12, "format" an annotation), in every build. These
     * checks apply to plain JSON-RPC calls of the method too. A result that fails them is
     * refused as call_tool_result describes: the host function returns
     * RPCD_ERR_INVALID_ARGUMENT, the reason (where and which keyword) is logged, and the call
     * fails with -32603.
     */
    const char *output_schema;
    /*
     * Optional JSON text of MCP's icons array, sent as "icons":
     *   [{"src":"https://example.org/sun.png","mimeType":"image/png","sizes":["48x48"]}]
     * register_method refuses it unless it is an array of objects, each with a string "src",
     * and "mimeType" a string, "sizes" an array of strings and "theme" "light" or "dark" when
     * present.
     */
    const char *icons;

    /* ---- 1.5: methods that are not tools. An MCP client reaches them through the method the
     * role names; the handler gets params in the shape given below and may answer with the
     * short form (a string) or with the MCP result object whole. */

    /* RPCD_MCP_TOOL (0) unless set: one of the RPCD_MCP_* roles above. */
    uint32_t mcp_role;
    /*
     * JSON text describing the method in its role; required for RESOURCE, PROMPT and COMPLETION,
     * refused for TOOL and HIDDEN (a tool says what it is with the 1.4 members).
     *   RESOURCE    MCP's Resource, {"uri":"notes://today","name":"today","title":"...",
     *               "description":"...","mimeType":"text/plain"}, or ResourceTemplate with
     *               "uriTemplate" instead of "uri" ("notes://{day}"; RFC 6570 level 1: {var}
     *               matches one or more characters other than '/', {+var} any characters).
     *               Listed in resources/list or resources/templates/list. resources/read of a
     *               URI it names (a resource's own URI first, then templates in load order)
     *               calls the handler with {"uri":"..."} and, for a template,
     *               "variables":{"day":"..."} (the matched text, not decoded). A string result
     *               is the resource's text (with its mimeType); an object with a "contents"
     *               array is MCP's ReadResourceResult whole, each entry with a "uri" and a
     *               string "text" or "blob" (base64); any other value is sent as its JSON text
     *               with mimeType application/json.
     *   PROMPT      MCP's Prompt, {"name":"greet","title":"...","description":"...",
     *               "arguments":[{"name":"who","description":"...","required":true}]}.
     *               prompts/get calls the handler with {"name":"greet","arguments":{...}}
     *               (every required argument present and every value a string, else the client
     *               gets -32602 and the handler is not called). A string result is one "user"
     *               message of text; an object with a "messages" array is MCP's GetPromptResult
     *               whole, each message with "role" "user" or "assistant" and a "content"
     *               object with a "type".
     *   COMPLETION  {"ref":{"type":"ref/prompt","name":"greet"}} or
     *               {"ref":{"type":"ref/resource","uri":"notes://{day}"}}: the prompt or the
     *               template (by its uriTemplate) whose arguments it completes.
     *               completion/complete calls the handler with the request's params as sent
     *               ({"ref":...,"argument":{"name":"who","value":"Jo"},"context":...}). An
     *               array of strings is the values (the first 100 are sent, with "total" and
     *               "hasMore"); an object is MCP's "completion" object whole ("values" an array
     *               of at most 100 strings).
     * register_method refuses a descriptor that is not such an object; two methods of one
     * role with the same prompt name, resource URI, uriTemplate or completion ref stop the
     * start (or a reload), naming both. A result not of these shapes fails the call with
     * -32603, as an invalid call_tool_result does; a handler's failure is the call's JSON-RPC
     * error, as in a plain call. Names and URIs of prompts and resources are checked for UTF-8 and
     * passed through as given (no portable renaming as for tools).
     */
    const char *mcp_descriptor;
} rpcd_method;

/*
 * The daemon's functions, handed to the plugin's init. The table only ever grows at the end;
 * test for a member added after 1.0 with RPCD_HOST_HAS(host, member) before calling it.
 * The table stays valid until the plugin's shutdown returns; keep the pointer.
 * JSON text handed to the daemon (results, failure data, notification params, a method's
 * params_schema) may be pretty-printed: the daemon drops its raw CR and LF bytes, which in valid
 * JSON can only be whitespace between tokens, so that every message it writes is one line and
 * the value is unchanged.
 */
typedef struct rpcd_host_api {
    size_t size;        /* sizeof(rpcd_host_api) as the daemon was built */
    uint32_t abi_major; /* the daemon's RPCD_ABI_MAJOR */
    uint32_t abi_minor; /* the daemon's RPCD_ABI_MINOR */

    /*
     * Registers a method. Only during init, on the thread that called init.
     * Returns RPCD_OK; RPCD_ERR_INVALID_ARGUMENT, logged with the reason, for a missing name or
     * handler, a name that is empty or not UTF-8, a reserved name
     * ("rpc." is JSON-RPC's; "notifications/...", "$/..." and the MCP methods rpcd answers
     * itself, initialize, ping, server/discover, tools/list and tools/call, subscriptions/listen,
     * and from 1.5 resources/..., prompts/list, prompts/get, completion/complete and
     * logging/setLevel, which a plugin built against an older minor may still register and
     * then serves itself), a params_schema
     * that is not JSON, or (1.4) a title that is not UTF-8 or annotations, output_schema or
     * icons that are not what their descriptions below the members say; RPCD_ERR_EXISTS when a
     * method (of any plugin, this one included) has the name, which also makes the daemon refuse to
     * start; RPCD_ERR_UNSUPPORTED after init. On failure the descriptor's free_user_data is NOT
     * called: the plugin still owns user_data.
     */
    int (*register_method)(rpcd_plugin *plugin, const rpcd_method *method);

    /*
     * Looks up a key of the plugin's own section of the config file.
     * Returns the value (borrowed, valid until init returns) or NULL when the key is absent.
     * Only during init. Keys the plugin never asks for are reported in the daemon's log.
     */
    const char *(*config_get)(rpcd_plugin *plugin, const char *key);

    /*
     * Writes one line to the daemon's log (stderr), prefixed with the plugin's name. Any thread,
     * any time until shutdown returns. Never write to stdout: it carries the protocol (the
     * daemon redirects it, but the line would be lost among the logs).
     * The line also reaches an MCP client as notifications/message ({"level":"error" for
     * RPCD_LOG_ERROR, "warning", "info" or "debug", "logger": the plugin's name, "data": the
     * text}) once the client asked with logging/setLevel for that level or a finer one; in the
     * 2026-07-28 revision, when logged on the thread running a handler of a request whose
     * _meta named a level with "io.modelcontextprotocol/logLevel". The same holds for log_v and
     * log_text.
     */
    void (*log)(rpcd_plugin *plugin, int level, const char *format, ...) RPCD_PRINTF(3, 4);

    /*
     * Sets the call's result to a copy of the given UTF-8 JSON text (any JSON value).
     * Returns RPCD_OK; RPCD_ERR_INVALID_ARGUMENT when the text is not valid JSON, in which case
     * the call fails with -32603 whatever the handler returns, and the text is never written, or
     * (1.4) when the method has an output_schema and the value fails its checks (see there);
     * RPCD_ERR_NO_MEMORY; RPCD_ERR_STALE once the call has ended. A second call replaces the first.
     */
    int (*call_result)(rpcd_call *call, const char *json, size_t json_length);

    /*
     * Records why the call failed and returns status, so that a handler can write
     * `return host->call_fail(call, RPCD_ERR_INVALID_PARAMS, "need two numbers", NULL, 0);`.
     *   status   an error status (not RPCD_OK, not RPCD_ERR_APPLICATION).
     *   message  optional human text (copied); sent as error.data.detail.
     *   data     optional UTF-8 JSON text (copied); sent as error.data.data.
     * Returns status; RPCD_ERR_INVALID_ARGUMENT for status RPCD_OK or RPCD_ERR_APPLICATION or
     * data that is not JSON (nothing recorded); RPCD_ERR_STALE once the call has ended.
     */
    int (*call_fail)(rpcd_call *call, int status, const char *message, const char *data,
                     size_t data_length);

    /*
     * Records an error with the plugin's own JSON-RPC code and returns RPCD_ERR_APPLICATION.
     *   code     outside -32768..-32000, or a server error in -32099..-32000. Any other code of
     *            the reserved range is not the plugin's to send: the client gets -32603.
     *   message  required (copied): error.message.
     *   data     optional UTF-8 JSON text (copied): error.data, unchanged.
     * In tools/call the failure is a tool error (isError, the message as its text), which the
     * model reads. (1.6) A code in -32099..-32000 is sent as that JSON-RPC error there too: the
     * errors MCP's protocol defines there (-32021, a client capability the tool needs is
     * missing, data {"requiredCapabilities":{"sampling":{}}}) are the client's to read.
     */
    int (*call_fail_code)(rpcd_call *call, int64_t code, const char *message, const char *data,
                          size_t data_length);

    /*
     * Sends a JSON-RPC notification to the client now, before the call's response.
     *   method   required, UTF-8, not empty, not a name rpcd owns: "rpc." (JSON-RPC's),
     *            "notifications/..." (MCP's: progress, cancelled, message, tools/list_changed,
     *            ...; reserved for rpcd, call_progress is the way to report progress), "$/..."
     *            (LSP's, such as $/cancelRequest), or an MCP method rpcd answers itself
     *            (initialize, ping, server/discover, tools/list, tools/call). An empty name and
     *            those are refused with RPCD_ERR_INVALID_ARGUMENT and a line in the daemon's
     *            log.
     *   params   optional UTF-8 JSON text of an array or object (NULL for none).
     * Returns RPCD_OK, RPCD_ERR_INVALID_ARGUMENT (nothing is sent), RPCD_ERR_STALE once the call
     * has ended (nothing is sent: nothing follows a response). Any thread.
     */
    int (*call_notify)(rpcd_call *call, const char *method, const char *params,
                       size_t params_length);

    /*
     * Reports progress in the MCP shape, notifications/progress {progressToken, progress,
     * total, message}, when the request carried params._meta.progressToken; without a token the
     * client did not ask for progress and nothing is sent (RPCD_OK all the same).
     *   done     work done so far; should grow from one report to the next.
     *   total    total work, or a negative value when unknown (then omitted).
     *   message  optional human text (NULL for none).
     * Returns as call_notify. Any thread.
     */
    int (*call_progress)(rpcd_call *call, double done, double total, const char *message);

    /*
     * Returns 1 when the client cancelled the call ($/cancelRequest or notifications/cancelled)
     * or the daemon is shutting down, else 0. A call that has ended counts as cancelled, so a
     * loop that outlives its call stops. Cancellation is cooperative: nothing is ever
     * interrupted, and what the handler returns after it still ends the call (though a client's
     * $/cancelRequest turns the response into -32800, and notifications/cancelled drops it).
     * Any thread.
     */
    int (*call_is_cancelled)(rpcd_call *call);

    /*
     * Returns the name of the method being called (borrowed, valid while the call runs), or
     * NULL once the call has ended. Handy for one handler serving several methods.
     */
    const char *(*call_method)(rpcd_call *call);

    /* As log, for plugins that wrap it in a variadic function of their own. */
    void (*log_v)(rpcd_plugin *plugin, int level, const char *format, va_list args)
        RPCD_PRINTF(3, 0);

    /* ---- 1.1 ---- */

    /*
     * Ends a call whose handler returned RPCD_DEFERRED, with status as a handler would return it
     * (RPCD_OK after call_result, or an error status after call_fail). Any thread; may even run
     * before the handler has returned RPCD_DEFERRED, in which case the call ends when it does.
     * Returns RPCD_OK; RPCD_ERR_STALE once the call has ended; RPCD_ERR_UNSUPPORTED when the
     * call was already completed, or status is RPCD_DEFERRED. Of several call_complete of one
     * call, from however many threads at once, exactly one returns RPCD_OK and ends the call;
     * every other returns RPCD_ERR_UNSUPPORTED (it came while the winner's end was pending) or
     * RPCD_ERR_STALE (after the call had ended), and does nothing.
     */
    int (*call_complete)(rpcd_call *call, int status);

    /* ---- 1.3 ---- */

    /*
     * Writes text to the daemon's log (stderr) as one line, prefixed with the level and the
     * plugin's name, as log does, but with no format: for languages that cannot call a variadic
     * function (Go, Rust, and most other foreign function interfaces).
     *   level  an rpcd_log_level; a line above the daemon's log level is not written.
     *   text   UTF-8, NUL-terminated, borrowed (not kept after the call returns). Written as
     *          given, except that its control bytes are escaped (a line feed as \n, a carriage
     *          return as \r, a tab as \t, any other as \xHH), so that one call is one line
     *          whatever the text holds; a text longer than about 2 KiB is cut and ends in "...".
     *          NULL writes nothing.
     * Any thread, any time until shutdown returns. As for every member after 1.0, test for it
     * with RPCD_HOST_HAS(host, log_text) before the first call.
     */
    void (*log_text)(rpcd_plugin *plugin, int level, const char *text);

    /* ---- 1.4 ---- */

    /*
     * Sets the call's result to a complete MCP tool result (CallToolResult), copied from UTF-8
     * JSON text, for a handler that says more than one value can: content blocks of every kind,
     * isError, structuredContent, _meta. The object:
     *   content            required, an array of content blocks, each an object with "type":
     *                      "text"           {"type":"text","text":"..."}
     *                      "image"/"audio"
     * {"type":"image","data":"<base64>","mimeType":"image/png"} "resource_link"
     * {"type":"resource_link","uri":"...","name":"..."} "resource"
     * {"type":"resource","resource":{"uri":"...", "text":"..."}} (or "blob" in base64 for "text")
     *                      Optional members of each block ("annotations", "_meta", "title",
     *                      "mimeType", ...) must have the types MCP gives them where rpcd checks
     *                      them (annotations and _meta objects); others pass through.
     *   isError            optional boolean: true tells the model the tool failed.
     *   structuredContent  optional object; required when the method has an output_schema and
     *                      isError is not true (see rpcd_method.output_schema).
     *   _meta              optional object, sent as the result's _meta.
     *   resultType         optional: "complete", or "input_required" for MCP 2026-07-28's
     *                      InputRequiredResult ("inputRequests", an object of requests each
     *                      with a string "method" and object "params"; "requestState" a
     *                      string; no content needed), which a client of an older revision
     *                      cannot read (the call then fails with -32603). Any other value is
     *                      refused.
     *   Other members pass through unchanged.
     * In tools/call the object is the call's result as it stands, except that for a client of
     * the 2026-07-28 revision rpcd adds "resultType":"complete" when the object names no
     * resultType (never a second one); in a plain JSON-RPC call of
     * the method it is the result too, whole (a client calling the method directly gets what an
     * MCP client would). The handler still returns RPCD_OK (or call_complete(call, RPCD_OK) for
     * a deferred call); a later call_result or call_tool_result replaces it.
     * Returns RPCD_OK; RPCD_ERR_INVALID_ARGUMENT when the text is not JSON, not such an object,
     * or its structuredContent fails the method's output_schema: the reason is
     * logged, and the call then fails with -32603 Internal error whatever the handler returns
     * (a JSON-RPC error in tools/call too: the server, not the tool, is at fault), so nothing
     * malformed is ever written; RPCD_ERR_NO_MEMORY; RPCD_ERR_STALE once the call has ended.
     * Any thread. Test for it with RPCD_HOST_HAS(host, call_tool_result).
     */
    int (*call_tool_result)(rpcd_call *call, const char *json, size_t json_length);

    /*
     * Copies what the client sent in the request's params._meta into out (out_size bytes),
     * NUL-terminated, as UTF-8 JSON text on one line: the whole _meta object when name is NULL,
     * else the value of its member name (a string comes with its quotes and escapes, as any
     * JSON value does). For a tools/call request it is the _meta of the tools/call params
     * (beside "name" and "arguments"); for a plain JSON-RPC call, the _meta member of params
     * when params is an object. Members such as "traceparent", "tracestate" and "baggage" (W3C
     * trace context) and "progressToken" come through exactly as the client sent them.
     *   name      NULL, or a member name (UTF-8, NUL-terminated).
     *   out       where the text goes; may be NULL when out_size is 0, to learn the length.
     *   length    set (when not NULL) to the text's length without the NUL, or 0 when there is
     *             no _meta or no such member (a JSON value is never empty).
     * Returns RPCD_OK (also when absent: *length 0, out ""); RPCD_ERR_INVALID_ARGUMENT when out
     * is too small (nothing is copied, *length says how much is needed) or name is not UTF-8;
     * RPCD_ERR_INVALID_PARAMS when the client sent _meta or the member twice (which one would
     * it be?); RPCD_ERR_STALE once the call has ended. Any thread, for as long as the call
     * lives (deferred calls included). A copy, not a pointer, so that the answer is the same
     * wherever the plugin runs. Test for it with RPCD_HOST_HAS(host, call_meta).
     */
    int (*call_meta)(rpcd_call *call, const char *name, char *out, size_t out_size, size_t *length);

    /* ---- 1.5 ---- */

    /*
     * Tells the client that the resource at uri (UTF-8, NUL-terminated, copied) changed and may
     * be read again: rpcd sends notifications/resources/updated {"uri":...} when the client
     * subscribed to that URI (resources/subscribe, or subscriptions/listen with
     * resourceSubscriptions in the 2026-07-28 revision), and nothing otherwise. Any URI the
     * plugin serves may be named, a template's expansions included.
     * Returns RPCD_OK (also when nobody is subscribed); RPCD_ERR_INVALID_ARGUMENT for NULL, a
     * URI longer than 64 KiB or one that is not UTF-8. Any thread, any time after init returns and
     * until shutdown returns (during init: RPCD_ERR_UNSUPPORTED). Test for it with
     * RPCD_HOST_HAS(host, resource_updated).
     */
    int (*resource_updated)(rpcd_plugin *plugin, const char *uri);

    /* ---- 1.6: asking the client mid-call ----
     * A handler that needs the user's answer, a model's completion or the client's roots asks
     * for them and runs again with the answers, from the top: each run is a round.
     *   round 1: call_input(call, "confirm", ...) finds nothing, so the handler calls
     *            call_ask(call, "confirm", "elicitation/create", ...), may keep what it needs
     *            with call_set_state, and returns RPCD_INPUT_REQUIRED;
     *   round 2: call_input finds the answer (and call_state the state); the handler finishes
     *            as any handler does, or asks again.
     * The handler does not know how the client is asked. A client of MCP 2026-07-28 gets the
     * questions as the result of its tools/call (resultType "input_required", with a
     * requestState rpcd makes: a random reference to the round, which rpcd keeps with the
     * state, used once, so a client can neither read, forge nor replay a plugin's state) and
     * retries the call with the answers. A client of an earlier revision (a session begun with
     * initialize) gets one request per question from rpcd, and the handler runs again once
     * every one is answered; an error for an answer, or none within 10 minutes, ends the call
     * with a tool error instead. No worker waits for the client either way. A deferred call may
     * return RPCD_INPUT_REQUIRED through call_complete. The state and answers are copies, the
     * same in process and in a plugin host.
     */

    /*
     * Asks the client a question that the next round reads with call_input(call, key).
     *   key      UTF-8, NUL-terminated, 1 to 64 bytes: names the question and its answer.
     *            Asking a key again in the same round replaces the question.
     *   method   the request the client answers: "elicitation/create" (params: MCP's
     *            ElicitRequest params, a form's "message" and "requestedSchema", or
     *            "mode":"url"), "sampling/createMessage" (CreateMessageRequest params) or
     *            "roots/list" (no params).
     *   params   UTF-8 JSON text of an object (NULL for none), at most 64 KiB, copied.
     * At most 16 questions a round. Returns RPCD_OK; RPCD_ERR_INVALID_ARGUMENT for a bad key,
     * another method, params that are not an object or too long, or a 17th question;
     * RPCD_ERR_UNSUPPORTED when the client cannot be asked this: it did not declare the
     * capability the method needs ("elicitation", with "url" for mode url; "sampling";
     * "roots"; in its _meta under 2026-07-28, in initialize's capabilities before), or the call
     * did not come from an MCP client that can be asked (a plain JSON-RPC call, or a call in a
     * batch).
     * A tool that cannot go on without it may fail with call_fail_code(call, -32021,
     * "Missing required client capability", "{\"requiredCapabilities\":{\"sampling\":{}}}", ...);
     * RPCD_ERR_STALE once the call has ended. Any thread, while the call runs.
     */
    int (*call_ask)(rpcd_call *call, const char *key, const char *method, const char *params,
                    size_t params_length);

    /*
     * Copies the client's answer to the question key of the previous round into out, as
     * call_meta copies (UTF-8 JSON text on one line, NUL-terminated): the result of the
     * request the client answered, as MCP gives it (an ElicitResult such as
     * {"action":"accept","content":{"ok":true}}, a CreateMessageResult, a ListRootsResult).
     * *length 0 and RPCD_OK when there is none: the first round, or a client that did not
     * answer that question (ask it again). Returns as call_meta, RPCD_ERR_INVALID_ARGUMENT for
     * a key that is not UTF-8 or an out that is too small. Any thread, while the call runs.
     */
    int (*call_input)(rpcd_call *call, const char *key, char *out, size_t out_size, size_t *length);

    /*
     * Keeps bytes (any, at most 16 KiB, copied) for the next round, which reads them with
     * call_state; a second call replaces them, NULL (length 0) drops them. Kept by rpcd, never
     * sent to the client. Returns RPCD_OK; RPCD_ERR_INVALID_ARGUMENT beyond 16 KiB;
     * RPCD_ERR_STALE once the call has ended. Any thread, while the call runs.
     */
    int (*call_set_state)(rpcd_call *call, const char *state, size_t length);

    /*
     * Copies the state the previous round kept into out (out_size bytes; the bytes and a NUL
     * after them), with *length their number. *length 0 and RPCD_OK when there is none.
     * RPCD_ERR_INVALID_ARGUMENT when out is too small (nothing copied, *length says how much
     * is needed, without the NUL); RPCD_ERR_STALE once the call has ended.
     */
    int (*call_state)(rpcd_call *call, char *out, size_t out_size, size_t *length);
} rpcd_host_api;

/* True when the daemon's table has the member and it is set. */
#define RPCD_HOST_HAS(host, member)                                                                \
    ((host)->size >= offsetof(rpcd_host_api, member) + sizeof((host)->member) &&                   \
     (host)->member != NULL)

/*
 * What a plugin tells the daemon about itself. The first three members keep their place in every
 * future major version, so that any daemon can read the version of any plugin before anything else.
 */
typedef struct rpcd_plugin_info {
    size_t size;         /* sizeof(rpcd_plugin_info) */
    uint32_t abi_major;  /* RPCD_ABI_MAJOR the plugin was built with */
    uint32_t abi_minor;  /* RPCD_ABI_MINOR the plugin was built with; a daemon with an older
                            minor refuses it, as it cannot know which additions it uses */
    const char *name;    /* short name, for logs and error.data.plugin */
    const char *version; /* the plugin's own version, free form */

    /*
     * Called once, on the daemon's main thread, before any call. Registers the methods and reads
     * the config with host. May store one pointer in *state, handed back to shutdown.
     * On failure returns a non-zero status and writes a one-line reason into error (size bytes,
     * NUL-terminated); the daemon then refuses to start (or skips the plugin if not required),
     * does not call shutdown, and frees the user data of methods already registered.
     */
    int (*init)(rpcd_plugin *plugin, const rpcd_host_api *host, void **state, char *error,
                size_t error_size);

    /*
     * Optional. Called once at exit on the main thread, after the last call of every plugin has
     * ended, in reverse load order, before the method user data is freed.
     */
    void (*shutdown)(void *state);
} rpcd_plugin_info;

/*
 * The entry point. Returns the plugin's description (static storage, never freed). Called once,
 * right after dlopen; must not do anything else.
 */
typedef const rpcd_plugin_info *(*rpcd_plugin_entry_fn)(void);

/* A method descriptor with size set and everything else empty. */
static inline rpcd_method rpcd_method_new(const char *name, rpcd_handler_fn handler)
{
    rpcd_method method;
    method.size = sizeof(rpcd_method);
    method.name = name;
    method.handler = handler;
    method.user_data = NULL;
    method.free_user_data = NULL;
    method.flags = 0;
    method.description = NULL;
    method.params_schema = NULL;
    method.title = NULL;
    method.annotations = NULL;
    method.output_schema = NULL;
    method.icons = NULL;
    method.mcp_role = RPCD_MCP_TOOL;
    method.mcp_descriptor = NULL;
    return method;
}

/*
 * Writes the entry point for the common case, ended with a semicolon like a declaration:
 *     RPCD_PLUGIN_DEFINE("hello", "1.0.0", hello_init, NULL);
 * init and shutdown have the types of the rpcd_plugin_info members. The entry point is declared
 * once before its definition (for -Wmissing-prototypes) and the semicolon ends a struct tag
 * declaration, so that the macro is clean under -Wredundant-decls as well.
 */
#ifdef __cplusplus
#define RPCD_PLUGIN_LINKAGE extern "C"
#else
#define RPCD_PLUGIN_LINKAGE
#endif
#define RPCD_PLUGIN_DEFINE(name_, version_, init_, shutdown_)                                      \
    RPCD_PLUGIN_LINKAGE RPCD_EXPORT const rpcd_plugin_info *rpcd_plugin_entry(void);               \
    RPCD_PLUGIN_LINKAGE RPCD_EXPORT const rpcd_plugin_info *rpcd_plugin_entry(void)                \
    {                                                                                              \
        static const rpcd_plugin_info info = {sizeof(rpcd_plugin_info),                            \
                                              RPCD_ABI_MAJOR,                                      \
                                              RPCD_ABI_MINOR,                                      \
                                              name_,                                               \
                                              version_,                                            \
                                              init_,                                               \
                                              shutdown_};                                          \
        return &info;                                                                              \
    }                                                                                              \
    struct rpcd_plugin_define_end

/*
 * Lifetimes, for plugins in any language.
 *   host (rpcd_host_api) and plugin (rpcd_plugin)  valid from init until shutdown returns.
 *   call (rpcd_call)      a handle any thread may keep: once its call has ended each function
 *                         returns RPCD_ERR_STALE (call_is_cancelled 1) and does nothing else.
 *   params                borrowed by the handler: valid only until the handler returns.
 *   config_get's value    valid until init returns.
 *   what a plugin hands over (names, descriptions, JSON text, messages): copied before the
 *                         function returns; the plugin keeps ownership.
 *   user_data             the plugin's; free_user_data runs once after shutdown.
 * Threads: a plugin's own threads (goroutines, tasks, std::thread) still run plugin code after
 * call_complete returns, and after the call has ended. At exit rpcd waits for the last call of
 * every plugin to end, calls each shutdown (reverse load order), frees the user data, then
 * unloads the code (dlclose); a plugin a reload replaced or removed goes the same way once its
 * last call has ended. shutdown runs on a thread of rpcd's, never on one of the plugin's own,
 * even when one of those completed the last call. So shutdown must stop and join every thread
 * the plugin started:
 * code of the plugin running after shutdown returns runs in unmapped memory, and a host
 * function called then uses a table that is gone. An exception or a panic must never leave a
 * function the daemon calls (handler, init, shutdown, free_user_data): catch it there and return
 * a status.
 *
 * The macros, for bindings that cannot use them. Every structure is plain C on the platform's
 * ABI: size_t and pointers are one machine word, uint32_t four bytes, int a C int; offsets
 * below are for LP64 (x86-64, arm64 Linux), in bytes.
 *   rpcd_host_api     size 0, abi_major 8, abi_minor 12, then one function pointer per member,
 *                     8 bytes each, in declaration order: register_method 16, config_get 24,
 *                     log 32, call_result 40, call_fail 48, call_fail_code 56, call_notify 64,
 *                     call_progress 72, call_is_cancelled 80, call_method 88, log_v 96,
 *                     call_complete 104, log_text 112 (120 bytes in 1.3), call_tool_result 120,
 *                     call_meta 128 (136 bytes in 1.4), resource_updated 136 (144 bytes in
 *                     1.5), call_ask 144, call_input 152, call_set_state 160, call_state 168;
 *                     176 bytes in 1.6.
 *   rpcd_method       size 0, name 8, handler 16, user_data 24, free_user_data 32, flags 40
 *                     (uint32_t, then 4 bytes of padding), description 48, params_schema 56
 *                     (64 bytes in 1.0 to 1.3), title 64, annotations 72, output_schema 80,
 *                     icons 88 (96 bytes in 1.4), mcp_role 96 (uint32_t, then 4 bytes of
 *                     padding), mcp_descriptor 104; 112 bytes in 1.5.
 *   rpcd_plugin_info  size 0, abi_major 8, abi_minor 12, name 16, version 24, init 32,
 *                     shutdown 40; 48 bytes.
 * RPCD_HOST_HAS(host, member): host->size >= the member's offset + its size (one pointer), and
 * the pointer there is not NULL. A member beyond host->size is not in the daemon's table: never
 * read it.
 * rpcd_method_new(name, handler): a descriptor with size = sizeof(rpcd_method), name and
 * handler set, every other member zero or NULL. A binding may set size to the end of the last
 * member it declares: the daemon reads only the members that fit in size.
 * RPCD_PLUGIN_DEFINE(name, version, init, shutdown): a function named rpcd_plugin_entry, with
 * the C calling convention, no parameters, exported from the shared object, returning a pointer
 * to an rpcd_plugin_info that stays valid while the plugin is loaded, with size =
 * sizeof(rpcd_plugin_info), abi_major = RPCD_ABI_MAJOR, abi_minor = the minor whose layout the
 * binding follows (never one it does not know), name and version NUL-terminated strings that
 * stay valid as long, and the two functions. Export nothing else: link with the version script
 * `pkg-config --variable=versionscript rpcd-plugin` names, where the toolchain does not write
 * one of its own. docs/plugins-cpp.md, docs/plugins-rust.md and docs/plugins-go.md show each.
 */

#ifdef __cplusplus
}
#endif

#endif /* RPCD_PLUGIN_H */
