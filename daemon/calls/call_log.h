/* SPDX-License-Identifier: MIT */
/*
 * The access log of calls (log_calls = true in rpcd.conf): one info line per call a handler
 * ran. Off by default: a line per call costs a write(2) each.
 */
#ifndef RPCD_CALL_LOG_H
#define RPCD_CALL_LOG_H

#include "json/json_scan.h"
#include "methods/registry.h"

#include <stdbool.h>

/* Logs every call that starts from now on (on) or none. Thread-safe. */
void call_log_enable(bool on);

/*
 * Counts a call the tool policy refused before it started (its method's rejections_by_policy,
 * for the control socket's metrics) and logs it (log_calls = true): its method and plugin
 * (method borrowed), its id (NULL for a notification), the code answered (0: none), and rule,
 * what decided. Thread-safe.
 */
void call_log_refused(const reg_method *method, const js_span *id, long long code,
                      const char *rule);

#endif
