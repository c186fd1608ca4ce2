/* SPDX-License-Identifier: MIT */
/*
 * The access log of calls (log_calls = true in rpcd.conf): one info line per call a handler
 * ran. Off by default: a line per call costs a write(2) each.
 */
#ifndef RPCD_CALL_LOG_H
#define RPCD_CALL_LOG_H

#include <stdbool.h>

/* Logs every call that starts from now on (on) or none. Thread-safe. */
void call_log_enable(bool on);

#endif
