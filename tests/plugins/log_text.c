/* SPDX-License-Identifier: MIT */
/*
 * Fixture: logs through host->log_text (1.3), as a plugin in a language without variadic calls
 * would: from init, and from a handler with a text the client chose, control bytes included.
 */
#include <rpcd/plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const rpcd_host_api *host;
static rpcd_plugin *self;

/* Logs its params (a JSON string's raw text, unescaped only for \n, \t and \u001b) at warning. */
static int say(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)user_data;
    char *text = malloc(params_length + 1);
    if (!text)
        return RPCD_ERR_NO_MEMORY;
    size_t used = 0;
    for (size_t i = 0; i < params_length; i++) {
        if (params[i] == '\\' && i + 1 < params_length && params[i + 1] == 'n') {
            text[used++] = '\n';
            i++;
        } else if (params[i] == '\\' && i + 1 < params_length && params[i + 1] == 't') {
            text[used++] = '\t';
            i++;
        } else if (params_length - i >= 6 && memcmp(params + i, "\\u001b", 6) == 0) {
            text[used++] = '\x1b';
            i += 5;
        } else {
            text[used++] = params[i];
        }
    }
    text[used] = '\0';
    host->log_text(self, RPCD_LOG_WARNING, text);
    free(text);
    return host->call_result(call, "true", 4);
}

static int log_text_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state,
                         char *error, size_t error_size)
{
    (void)state;
    host = host_api;
    self = plugin;
    if (!RPCD_HOST_HAS(host, log_text)) {
        snprintf(error, error_size, "the daemon has no log_text");
        return RPCD_ERR_UNSUPPORTED;
    }
    host->log_text(plugin, RPCD_LOG_INFO, "ready, 100% plain %s %n");
    host->log_text(plugin, RPCD_LOG_DEBUG, "a debug line, below the default level");
    rpcd_method method = rpcd_method_new("log.say", say);
    return host->register_method(plugin, &method);
}

RPCD_PLUGIN_DEFINE("logtext", "1.0.0", log_text_init, NULL);
