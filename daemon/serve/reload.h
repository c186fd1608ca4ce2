/* SPDX-License-Identifier: MIT */
/*
 * Reloading while serving: SIGHUP wakes a thread that reads the configuration anew, loads what
 * is new or changed beside the running plugins, keeps what did not change, and publishes the new
 * generation in one step; the calls running finish on the generation they started on.
 */
#ifndef RPCD_RELOAD_H
#define RPCD_RELOAD_H

#include "serve/runtime.h"

#include <stdbool.h>
#include <stddef.h>

/* What one reload changed, for its log line and for the client. */
typedef struct rl_result {
    bool tools_changed;     /* tools/list answers differently now */
    bool prompts_changed;   /* prompts/list */
    bool resources_changed; /* resources/list or resources/templates/list */
    size_t methods;         /* in the new generation */
    /* Where the text of the reload's log line is copied ("generation N: plugins added [...]
     * ..."), cut to summary_size; NULL: nowhere. Set by the caller. */
    char *summary;
    size_t summary_size;
} rl_result;

/*
 * One reload of runtime (its config file, drop-ins included, read anew with the same checks as
 * at start-up), published as generation number. Any error (a config mistake, a required plugin
 * that fails to load or to init, a method name two plugins register) leaves the running
 * generation as it is and returns -1 with a one-line message naming the file and line (or the
 * plugin) in error; the new plugins loaded so far are shut down again. On success logs one line
 * (the plugins and methods added, removed, replaced and unchanged, and number) and returns 0 with
 * *result. One reload at a time (loading is not thread-safe); calls go on meanwhile.
 */
int rl_reload(const rpcd_runtime *runtime, unsigned long number, rl_result *result, char *error,
              size_t error_size);

/* Called on the reloading thread after a reload that changed a list MCP clients read (tools,
 * prompts, resources: result says which), with rl_start's context. */
typedef void rl_lists_changed_fn(void *context, const rl_result *result);

typedef struct reloader reloader;

/*
 * Reloads runtime (borrowed, alive until rl_stop) on each SIGHUP, on a thread of its own, and
 * takes SIGHUP: its handler only wakes that thread (async-signal-safe), and signals that arrive
 * during a reload make one more reload after it. The thread starts with the first SIGHUP, from
 * rl_before_read on the calling thread, which must be the one that reads the input (its read()
 * is interrupted for it). lists_changed (may be NULL) is called after a reload whose tools,
 * prompts or resources differ. Returns 0 and *out (new), or -1 (descriptors, memory).
 */
int rl_start(const rpcd_runtime *runtime, rl_lists_changed_fn *lists_changed, void *context,
             reloader **out);

/*
 * For stdio_set_before_read (context: the reloader), on the reading thread: starts the
 * reloading thread for a SIGHUP that came before it ran. One relaxed load when none did. After
 * each reload the reader's read() is interrupted (the wake-up signal), so that this hook and
 * the server's refresh (srv_refresh) run then.
 */
void rl_before_read(void *context);

/*
 * A reload asked for by an operator (the control socket's `reload`), run on the calling thread,
 * one at a time with the reloading thread's: the same reload, log line and list_changed as a
 * SIGHUP's. Returns 0 with the log line's text in summary (summary_size bytes), or -1 with why
 * the new config was refused in error (the running generation stays). Any thread but the reader.
 */
int rl_reload_now(reloader *r, char *summary, size_t summary_size, char *error, size_t error_size);

/* The number of the generation being served (1 at start, one more per reload). Any thread. */
unsigned long rl_generation(reloader *r);

/* Waits for a reload under way, stops the thread and frees r; SIGHUP is logged and ignored
 * again. NULL is ignored. */
void rl_stop(reloader *r);

#endif
