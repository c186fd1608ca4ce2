/* SPDX-License-Identifier: MIT */
/*
 * Fixture: a plugin whose init never returns, to show that a stop signal still ends the daemon
 * while it starts. It says so in the log first, so that a test knows when init is under way.
 */
#include <rpcd/plugin.h>

#include <unistd.h>

static int init_hang_init(rpcd_plugin *plugin, const rpcd_host_api *host, void **state, char *error,
                          size_t error_size)
{
    (void)state;
    (void)error;
    (void)error_size;
    host->log(plugin, RPCD_LOG_INFO, "init waits for ever");
    for (;;)
        pause();
    return RPCD_OK;
}

RPCD_PLUGIN_DEFINE("init_hang", "1.0.0", init_hang_init, NULL);
