/* SPDX-License-Identifier: MIT */
/*
 * The C side of the Go fixture plugin: cgo cannot call the host's function pointers, nor can a
 * Go file that exports functions define C ones in its preamble.
 */
#ifndef GOFIXTURE_GLUE_H
#define GOFIXTURE_GLUE_H

#include <rpcd/plugin.h>

/* Sets the call's result (host->call_result). */
int glue_result(rpcd_call *call, const char *json, size_t json_length);

#endif
