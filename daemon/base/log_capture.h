/* SPDX-License-Identifier: MIT */
/*
 * With log_format = json, what plugins write on stdout and stderr becomes lines of rpcd's log:
 * each stream goes into a pipe whose reader thread wraps every line (log_output), so that every
 * line on rpcd's stderr stays one JSON object.
 */
#ifndef RPCD_LOG_CAPTURE_H
#define RPCD_LOG_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct log_capture log_capture;

/*
 * Starts a capture: a pipe whose write end goes to *write_fd (new, close-on-exec, the caller's to
 * hand out and close) and a thread that logs each line read from it, for plugin (copied; NULL:
 * no plugin named) and stream ("stdout" or "stderr", static). A detached capture ends by itself
 * at end of file, and *out may be NULL; otherwise *out is new, for lcap_stop. Returns 0, or -1
 * with errno (nothing left open).
 */
int lcap_start(const char *plugin, const char *stream, bool detached, log_capture **out,
               int *write_fd);

/*
 * A detached capture for a plugin host's own log (its log descriptor) with log_format = json: a
 * line that is one JSON object, as the host's log writes, goes to the log as it is; any other
 * line a plugin wrote there is wrapped as its output (stream "log"), so that a plugin cannot put
 * a raw line into the log through the host's descriptor. *write_fd as for lcap_start. Returns 0,
 * or -1 with errno.
 */
int lcap_start_relay(const char *plugin, int *write_fd);

/*
 * Logs what the pipe of capture (stolen; not detached) holds now, then ends it: whatever is
 * written into it later is lost. Returns when its thread has ended.
 */
void lcap_stop(log_capture *capture);

/*
 * For the serving daemon with log_format = json, before any plugin loads: the log goes on to a
 * private copy of stderr, and fds 1 and 2 become captures naming no plugin. Not thread-safe.
 * Returns 0, or -1 with a message in error (nothing changed).
 */
int lcap_take_std(char *error, size_t error_size);

/* Undoes lcap_take_std, when it was done: fds 1 and 2 are the log's again, the captures logged and
 * ended. For the end of the process, after the plugins are gone. */
void lcap_release_std(void);

/* What a plugin in rpcd's process writes while it loads (its constructors, its entry point, its
 * init) names it: lcap_plugin_begin points fds 1 and 2 at captures for name (borrowed) until
 * lcap_plugin_end, when lcap_take_std was done (else both do nothing). Another thread's output
 * meanwhile is named after the plugin too. */
typedef struct lcap_redirect {
    log_capture *out, *err;
} lcap_redirect;
void lcap_plugin_begin(const char *name, lcap_redirect *redirect);
void lcap_plugin_end(lcap_redirect *redirect);

#endif
