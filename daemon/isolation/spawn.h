/* SPDX-License-Identifier: MIT */
/*
 * Starting a plugin host process: its channel, an exec of rpcd with --plugin-host (never a
 * fork without exec: rpcd has threads), the INIT message and the methods the host's plugin
 * registered; and the end of a host, reaped and described.
 */
#ifndef RPCD_SPAWN_H
#define RPCD_SPAWN_H

#include "config/config.h"
#include "isolation/proxy.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One method a host's plugin registered. Strings owned. */
typedef struct iso_method_info {
    char *name;
    uint32_t flags;
    char *description;   /* NULL when none */
    char *params_schema; /* NULL when none */
    char *title;         /* 1.4: what MCP clients show; each NULL when none */
    char *annotations;
    char *output_schema;
    char *icons;
    uint32_t mcp_role;    /* 1.5: RPCD_MCP_* */
    char *mcp_descriptor; /* NULL when none */
    uint32_t abi_minor;   /* the minor its plugin was built against, at most rpcd's */
} iso_method_info;

/* What a host said once its plugin's init had run. */
typedef struct iso_host_info {
    char *name; /* owned: the plugin's own name */
    iso_method_info *methods;
    size_t count;
} iso_host_info;

/* rpcd's ends of a host's channel (channel.h); -1 where closed. */
typedef struct iso_channel {
    int requests;     /* the socket rpcd sends on */
    int answers;      /* the main lane's pipe */
    int fast_answers; /* the fast lane's pipe */
} iso_channel;

/* Closes the ends still open, and marks them all closed. */
void iso_channel_close(iso_channel *channel);

/*
 * Starts program as the host of the plugin of config, whose file is open on plugin_fd
 * (borrowed), and waits at most timeout_ms (negative: no limit) for its plugin's init. Returns 0,
 * *channel (new descriptors), *pid and *info (fill, free with iso_host_info_free), or -1 with a
 * one-line reason in error (the host, if any, killed and reaped).
 */
int iso_spawn(const char *program, int plugin_fd, const cfg_plugin *config,
              const iso_settings *settings, int timeout_ms, iso_channel *channel, pid_t *pid,
              iso_host_info *info, char *error, size_t error_size);

void iso_host_info_free(iso_host_info *info);

/*
 * How long a host whose channel has ended is given to end by itself, so that rpcd reports how
 * it ended (a crash, an exit) rather than its own SIGKILL. The process rpcd started ends a few
 * context switches after the plugin's: with a PID namespace (host_namespace.h), once its pid 1
 * has reported the host's end and the kernel has emptied the namespace.
 */
#define ISO_END_WAIT_MS 1000

/*
 * Reaps pid: waits at most wait_ms for it to end by itself, then kills it (SIGKILL). Returns its
 * wait status.
 */
int iso_reap(pid_t pid, int wait_ms);

/* "killed by signal 11 (SIGSEGV)" or "exited with status 3", into out. */
void iso_describe_status(int status, char *out, size_t size);

#endif
