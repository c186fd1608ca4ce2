/* SPDX-License-Identifier: MIT */
/*
 * Fixture: a plugin whose own functions are named as jansson's (symbols_names.c), built twice
 * with SYMBOLS_SIDE "a" and "b". Its method says whether its calls reached its own functions or
 * someone else's (rpcd's jansson, or the other build's).
 */
#include <rpcd/plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SYMBOLS_SIDE
#define SYMBOLS_SIDE "a"
#endif

void *json_loadb(const char *buffer, size_t length, size_t flags, void *error);
void *json_object(void);
char *json_dumps(const void *value, size_t flags);
extern char symbols_loaded_marker;
extern char symbols_object_marker;

static const rpcd_host_api *host;

/*
 * SIDE.own: {"dumps":"SIDE-own"} when every call reached this plugin's functions, else
 * {"bound":"elsewhere"}. "x" is no JSON, so a real json_loadb returns NULL; a marker of the
 * other build is another address. Only the markers ever reach json_dumps.
 */
static int own(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)params, (void)params_length, (void)user_data;
    void *loaded = json_loadb("x", 1, 0, NULL);
    void *object = json_object();
    if (loaded != &symbols_loaded_marker || object != &symbols_object_marker)
        return host->call_result(call, "{\"bound\":\"elsewhere\"}", 21);
    char *text = json_dumps(loaded, 0);
    char answer[64];
    int length = snprintf(answer, sizeof answer, "{\"dumps\":\"%s\"}", text ? text : "none");
    free(text);
    return host->call_result(call, answer, (size_t)length);
}

static int symbols_init(rpcd_plugin *plugin, const rpcd_host_api *host_api, void **state,
                        char *error, size_t error_size)
{
    (void)state, (void)error, (void)error_size;
    host = host_api;
    rpcd_method method = rpcd_method_new(SYMBOLS_SIDE ".own", own);
    return host->register_method(plugin, &method);
}

RPCD_PLUGIN_DEFINE("symbols_" SYMBOLS_SIDE, "1.0.0", symbols_init, NULL);
