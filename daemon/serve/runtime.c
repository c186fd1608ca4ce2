/* SPDX-License-Identifier: MIT */
/*
 * Config, registry and loader put together in the one order that works, and undone in reverse.
 */
#include "serve/runtime.h"

#include "base/block_store.h"
#include "calls/call.h"
#include "calls/call_log.h"
#include "base/file_safety.h"
#include "isolation/isolated_plugin.h"
#include "base/log.h"
#include "base/log_capture.h"
#include "base/privileges.h"
#include "base/clock.h"
#include "methods/tool_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void rt_free_generation_parts(mcp_tools *tools, loader *plugins, registry *methods)
{
    mcp_tools_free(tools);
    if (plugins)
        ld_unload_all(plugins, methods);
}

int rt_set_policy(mcp_tools *tools, const registry *methods, const rpcd_config *config,
                  const loader *plugins, char *error, size_t error_size)
{
    if (!pol_configured(config))
        return 0;
    /* A method's plugin section is found through its owner, the plugin the section loaded. */
    const void **owners = calloc(config->plugin_count + 1, sizeof *owners);
    if (!owners) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < config->plugin_count; i++)
        owners[i] = ld_instance(plugins, config->plugins[i].name);
    tool_policy *policy;
    int status = pol_new(methods, config, owners, clock_now_ms(), &policy, error, error_size);
    free(owners);
    if (status == 0)
        mcp_tools_take_policy(tools, policy);
    return status;
}

/* The loaded plugins, their methods and tools become the first generation, and current. */
static int publish_first(rpcd_runtime *runtime)
{
    generation *first;
    /* Stolen even on failure: the fields then name nothing to free. */
    int status = gen_new(runtime->methods, runtime->tools, runtime->plugins,
                         rt_free_generation_parts, &first);
    if (status == 0)
        status = gen_current_new(first, &runtime->generations);
    if (status != 0)
        runtime->methods = NULL, runtime->tools = NULL, runtime->plugins = NULL;
    return status;
}

int rt_start(const char *config_path, const rt_flags *flags, rpcd_runtime *runtime, char *error,
             size_t error_size)
{
    memset(runtime, 0, sizeof *runtime);
    rpcd_config *config;
    if (cfg_load(config_path, !flags->insecure, &config, error, error_size) != 0)
        return -1;
    return rt_start_config(config, flags, runtime, error, error_size);
}

int rt_start_config(rpcd_config *config, const rt_flags *flags, rpcd_runtime *runtime, char *error,
                    size_t error_size)
{
    memset(runtime, 0, sizeof *runtime);
    runtime->config = config;
    const char *config_path = config->path;
    log_set_level(flags->log_level >= 0 ? flags->log_level : runtime->config->log_level);
    log_set_format(runtime->config->log_format);
    cfg_log_skipped_dropins(runtime->config);
    if (flags->capture_output && runtime->config->log_format == LOG_FORMAT_JSON &&
        lcap_take_std(error, error_size) != 0)
        goto fail;
    call_log_enable(runtime->config->log_calls);
    if (flags->insecure)
        log_message(LOG_WARNING,
                    "--insecure: loading %s and its plugins whatever their owner "
                    "and permissions, and those of their directories",
                    config_path);
    priv_target target;
    if (priv_resolve(runtime->config->user, runtime->config->group, &target, error, error_size) !=
        0)
        goto fail_config;
    if (runtime->config->no_new_privs && priv_no_new_privs(error, error_size) != 0)
        goto fail;
    if (reg_new(&runtime->methods) != 0) {
        snprintf(error, error_size, "out of memory");
        goto fail;
    }
    /* Isolated plugins run through the isolation layer, above the loader (and reloads too). */
    ld_set_isolated_kind(isolated_plugin_kind());
    if (ld_load_all(runtime->config, runtime->methods, &runtime->plugins, error, error_size) != 0)
        goto fail;
    if (mcp_tools_new(runtime->methods, runtime->config, &runtime->tools, error, error_size) != 0 ||
        rt_set_policy(runtime->tools, runtime->methods, runtime->config, runtime->plugins, error,
                      error_size) != 0)
        goto fail;
    if (publish_first(runtime) != 0) {
        snprintf(error, error_size, "out of memory");
        goto fail;
    }
    /* After every plugin's init, which may need root to open what it keeps open. */
    if (priv_drop(&target, error, error_size) != 0)
        goto fail;
    if (!target.change && geteuid() == 0 && !flags->one_shot)
        log_message(LOG_WARNING,
                    "running as root: set user = NAME in [rpcd] of %s to switch "
                    "to that user once the plugins are loaded",
                    config_path);
    log_message(LOG_INFO, "%zu plugins loaded, %zu methods (%zu MCP tools), from %s",
                ld_count(runtime->plugins), reg_count(runtime->methods),
                mcp_tools_count(runtime->tools), runtime->config->path);
    return 0;
fail_config : {
    /* A message about the config's content names the file, as the parser's do. */
    char reason[512];
    snprintf(reason, sizeof reason, "%s", error);
    snprintf(error, error_size, "%s: %s", config_path, reason);
}
fail:
    rt_stop(runtime);
    return -1;
}

srv_options rt_serve_options(const rpcd_runtime *runtime)
{
    const rpcd_config *config = runtime->config;
    srv_options options = {
        .limits = config->limits,
        .shutdown_grace_ms = (int)config->shutdown_grace_ms,
        .tasks = {config->max_tasks, config->max_task_bytes, (long long)config->task_ttl_ms,
                  (long long)config->task_after_ms, MCP_TASKS_LIMITS.poll_ms},
        /* One worker runs calls in order; the responses then keep that order too. */
        .ordered = config->limits.workers == 1,
        .tools = runtime->tools,
        .generations = runtime->generations,
    };
    return options;
}

void rt_stop(rpcd_runtime *runtime)
{
    if (runtime->generations) {
        /* The last reference, once the calls have ended: the plugins go with it. */
        gen_current_free(runtime->generations);
        gen_retire_finish(); /* the generations a reload replaced, when a call ended last */
    } else {
        mcp_tools_free(runtime->tools);
        ld_unload_all(runtime->plugins, runtime->methods);
        reg_free(runtime->methods);
    }
    cfg_free(runtime->config);
    call_store_release();
    block_store_release();
    lcap_release_std(); /* the plugins are gone: nothing of theirs is left to capture */
    memset(runtime, 0, sizeof *runtime);
}
