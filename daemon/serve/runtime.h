/* SPDX-License-Identifier: MIT */
/*
 * Start-up and tear-down shared by the daemon, the in-memory demo and the tests: config file
 * to loaded plugins and a method table, and back.
 */
#ifndef RPCD_RUNTIME_H
#define RPCD_RUNTIME_H

#include "config/config.h"
#include "methods/generation.h"
#include "loader/loader.h"
#include "mcp/mcp.h"
#include "methods/registry.h"
#include "serve/server.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct rpcd_runtime {
    rpcd_config *config; /* owned */
    /*
     * The first generation's parts: owned while rt_start builds them, then the generation's
     * (borrowed here, alive until rt_stop).
     */
    registry *methods;
    loader *plugins;
    mcp_tools *tools;         /* the methods exposed as MCP tools */
    gen_current *generations; /* owned: where the current generation is published */
} rpcd_runtime;

/* How to start: from the command line. */
typedef struct rt_flags {
    int log_level; /* replaces the config's log_level when >= 0 */
    bool insecure; /* skip the owner and permission checks of config and plugin files */
    bool one_shot; /* a one-shot command: serves nobody, so running as root is no warning */
    /* With log_format = json, fds 1 and 2 become captures (log_capture.h) before the plugins
     * load: for the serving daemon only, whose fds 1 and 2 nobody else reads. */
    bool capture_output;
} rt_flags;

/*
 * Reads the config at path, checks that nobody else could have changed it, and loads its
 * plugins. Returns 0 and fills runtime, or -1 with a one-line message in error.
 */
int rt_start(const char *config_path, const rt_flags *flags, rpcd_runtime *runtime, char *error,
             size_t error_size);

/*
 * rt_start from a config already read (stolen, freed on failure too): for the one-shot
 * commands, whose config may be made in memory. Same results.
 */
int rt_start_config(rpcd_config *config, const rt_flags *flags, rpcd_runtime *runtime, char *error,
                    size_t error_size);

/* The serve options the config asks for. */
srv_options rt_serve_options(const rpcd_runtime *runtime);

/* Unloads the plugins (reverse order) and frees everything. */
void rt_stop(rpcd_runtime *runtime);

/*
 * The gen_free_parts_fn of every generation rt_start and a reload make: frees the tools
 * (mcp_tools_free) and shuts the plugins down (ld_unload_all), either may be NULL.
 */
void rt_free_generation_parts(mcp_tools *tools, loader *plugins, registry *methods);

/*
 * Gives tools (borrowed) the tool policy of config over methods and the plugins that registered
 * them (all borrowed), when config has policy keys; with none, tools keep serving every method
 * at no cost per call. For rt_start and a reload. Returns 0, or -1 with the reason in error.
 */
int rt_set_policy(mcp_tools *tools, const registry *methods, const rpcd_config *config,
                  const loader *plugins, char *error, size_t error_size);

#endif
