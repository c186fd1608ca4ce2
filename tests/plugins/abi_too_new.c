/* SPDX-License-Identifier: MIT */
/*
 * Fixture: a plugin built against a newer minor ABI than the daemon's. The daemon must refuse it
 * before calling init, naming both versions. The info is written out by hand for that reason.
 */
#include <rpcd/plugin.h>

static int too_new_init(rpcd_plugin *plugin, const rpcd_host_api *host, void **state, char *error,
                        size_t error_size)
{
    (void)plugin;
    (void)host;
    (void)state;
    (void)error;
    (void)error_size;
    return RPCD_OK;
}

RPCD_EXPORT const rpcd_plugin_info *rpcd_plugin_entry(void);

RPCD_EXPORT const rpcd_plugin_info *rpcd_plugin_entry(void)
{
    static const rpcd_plugin_info info = {
        sizeof(rpcd_plugin_info),
        RPCD_ABI_MAJOR,
        RPCD_ABI_MINOR + 1,
        "abi_too_new",
        "1.0.0",
        too_new_init,
        NULL,
    };
    return &info;
}
