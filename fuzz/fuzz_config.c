/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: config parsing. Any text gives either a config or one error line that names
 * the file, never a crash or a leak.
 */
#include "config/config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    rpcd_config *config = NULL;
    char error[512];
    int status = cfg_load_string(text, "/fuzz/rpcd.conf", &config, error, sizeof error);
    if (status == 0) {
        for (size_t i = 0; i < config->plugin_count; i++)
            if (!config->plugins[i].path || config->plugins[i].path[0] != '/')
                abort(); /* every plugin has a path, resolved to an absolute one */
        cfg_free(config);
    } else if (strncmp(error, "/fuzz/rpcd.conf", 15) != 0 || strchr(error, '\n')) {
        abort(); /* one line, naming the file */
    }
    free(text);
    return 0;
}
