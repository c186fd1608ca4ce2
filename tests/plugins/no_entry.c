/* SPDX-License-Identifier: MIT */
/*
 * Fixture: a valid shared object that exports a function, but not rpcd_plugin_entry. The daemon
 * must refuse it with dlerror()'s reason and dlclose() it.
 */
#include <rpcd/plugin.h>

RPCD_EXPORT int rpcd_plugin_entry_missing(void);

RPCD_EXPORT int rpcd_plugin_entry_missing(void)
{
    return 0;
}
