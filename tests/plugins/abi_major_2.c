/* SPDX-License-Identifier: MIT */
/*
 * Fixture: a plugin of ABI major 2. The daemon must refuse it from the first three members of the
 * info alone (the only ones a future major keeps in place), naming both versions.
 */
#include <rpcd/plugin.h>

static int major_2_init(rpcd_plugin *plugin, const rpcd_host_api *host, void **state, char *error,
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
        sizeof(rpcd_plugin_info), 2, 0, "abi_major_2", "2.0.0", major_2_init, NULL,
    };
    return &info;
}
