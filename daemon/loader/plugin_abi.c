/* SPDX-License-Identifier: MIT */
/*
 * A plugin's entry point and the description it returns, checked against this rpcd's ABI before
 * anything of it runs: the one place a plugin built for another rpcd is refused.
 */
#include "loader/plugin_abi.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

/* The members a 1.0 plugin description must have. */
#define INFO_V1_0_SIZE (offsetof(rpcd_plugin_info, shutdown) + sizeof(void (*)(void *)))

int plugin_abi_description(void *handle, const char *path, const rpcd_plugin_info **out,
                           char *error, size_t error_size)
{
    rpcd_plugin_entry_fn entry;
    /* POSIX's way to turn dlsym's object pointer into a function pointer without a warning. */
    *(void **)&entry = dlsym(handle, RPCD_PLUGIN_ENTRY_SYMBOL);
    if (!entry) {
        snprintf(error, error_size, "plugin %s: no entry point %s(): not an rpcd plugin", path,
                 RPCD_PLUGIN_ENTRY_SYMBOL);
        return -1;
    }
    const rpcd_plugin_info *plugin_info = entry();
    if (!plugin_info || plugin_info->size < offsetof(rpcd_plugin_info, name)) {
        snprintf(error, error_size, "plugin %s: %s() returned no plugin description", path,
                 RPCD_PLUGIN_ENTRY_SYMBOL);
        return -1;
    }
    if (plugin_info->abi_major != RPCD_ABI_MAJOR || plugin_info->abi_minor > RPCD_ABI_MINOR) {
        snprintf(error, error_size,
                 "plugin %s: built for plugin ABI %u.%u, but this rpcd "
                 "has ABI %d.%d (%s)",
                 path, plugin_info->abi_major, plugin_info->abi_minor, RPCD_ABI_MAJOR,
                 RPCD_ABI_MINOR,
                 plugin_info->abi_major != RPCD_ABI_MAJOR ? "the major versions differ"
                                                          : "the plugin needs a newer rpcd");
        return -1;
    }
    if (plugin_info->size < INFO_V1_0_SIZE || !plugin_info->name || !plugin_info->init) {
        snprintf(error, error_size,
                 "plugin %s: incomplete plugin description (size %zu, "
                 "name and init required)",
                 path, plugin_info->size);
        return -1;
    }
    *out = plugin_info;
    return 0;
}
