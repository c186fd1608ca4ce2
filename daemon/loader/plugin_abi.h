/* SPDX-License-Identifier: MIT */
/*
 * Checking a loaded plugin's description: its entry point, the ABI it was built for, and the
 * members every version must have.
 */
#ifndef RPCD_PLUGIN_ABI_H
#define RPCD_PLUGIN_ABI_H

#include <rpcd/plugin.h>

#include <stddef.h>

/*
 * Finds the entry point in handle (from dlopen of path, which names it in messages) and takes
 * the description it returns, once it fits this rpcd's ABI and holds what every version must.
 * Returns 0 and *out (static storage in the plugin), or -1 with the reason in error.
 */
int plugin_abi_description(void *handle, const char *path, const rpcd_plugin_info **out,
                           char *error, size_t error_size);

#endif
