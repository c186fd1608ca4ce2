/* SPDX-License-Identifier: MIT */
/*
 * The plugin ABI is a header of structures and function-pointer types, not a library: this shared
 * object exports one function per public type of <rpcd/plugin.h>, so that abidw finds them all in
 * its debug information (check_abi.py compares them with rpcd-plugin.abi). A new type gets a line.
 */
#include <rpcd/plugin.h>

#define ABI_PROBE(type)                                                                            \
    RPCD_EXPORT void abi_probe_##type(type *value);                                                \
    RPCD_EXPORT void abi_probe_##type(type *value)                                                 \
    {                                                                                              \
        (void)value;                                                                               \
    }

ABI_PROBE(rpcd_status)
ABI_PROBE(rpcd_log_level)
ABI_PROBE(rpcd_plugin)
ABI_PROBE(rpcd_call)
ABI_PROBE(rpcd_handler_fn)
ABI_PROBE(rpcd_method)
ABI_PROBE(rpcd_host_api)
ABI_PROBE(rpcd_plugin_info)
ABI_PROBE(rpcd_plugin_entry_fn)
