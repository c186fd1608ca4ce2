/* SPDX-License-Identifier: MIT */
/*
 * Fixture: a plugin that opens the file its key file names in init and keeps it open until
 * shutdown, as a plugin's database or log would be. It must never receive rpcd's own output.
 */
#include <fcntl.h>
#include <unistd.h>

#include <rpcd/plugin.h>

static int kept = -1;

static int keeps_file_ping(rpcd_call *call, const char *params, size_t params_length,
                           void *user_data)
{
    (void)call, (void)params, (void)params_length, (void)user_data;
    return kept >= 0 ? RPCD_OK : RPCD_ERR_INTERNAL;
}

static int keeps_file_init(rpcd_plugin *plugin, const rpcd_host_api *host, void **state,
                           char *error, size_t error_size)
{
    (void)state, (void)error, (void)error_size;
    const char *path = host->config_get(plugin, "file");
    if (!path)
        return RPCD_ERR_INVALID_ARGUMENT;
    kept = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (kept < 0)
        return RPCD_ERR_INTERNAL;
    rpcd_method method = rpcd_method_new("keeps_file.ping", keeps_file_ping);
    return host->register_method(plugin, &method);
}

static void keeps_file_shutdown(void *state)
{
    (void)state;
    if (kept >= 0)
        close(kept);
    kept = -1;
}

RPCD_PLUGIN_DEFINE("keeps_file", "1.0.0", keeps_file_init, keeps_file_shutdown);
