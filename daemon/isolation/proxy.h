/* SPDX-License-Identifier: MIT */
/*
 * The parent side of an isolated plugin: a host process (rpcd itself, run with --plugin-host)
 * loads the plugin, and rpcd registers a proxy method for each of its methods that forwards the
 * call over the channel. When the host dies, every call in flight in it fails with -32603 and
 * data.exception naming the signal or exit status, and the host is started again (see
 * supervisor.h); a call past its plugin's timeout_ms is answered at once (call_deadline.c), and
 * a host that does not let go of it within the grace period is killed. What a plugin tells an
 * MCP client outside its calls (resource updates, log lines) reaches mcp_events from the host,
 * and every host hears the client's log level, when it starts and whenever it changes.
 */
#ifndef RPCD_PROXY_H
#define RPCD_PROXY_H

#include "base/serving_limits.h"
#include "config/config.h"
#include "methods/registry.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct iso_proxy iso_proxy;

/* What the host process is told, from the daemon's config. */
typedef struct iso_settings {
    /* The host's workers, and max_depth: the deepest nesting it accepts from the plugin. */
    serving_limits limits;
    int log_level;
    bool insecure;
    size_t grace_ms; /* how long a host may take to let go of a cancelled call, or to exit */
    /* Borrowed, outlives the proxy: the whole config, for the confinement a host applies
     * (sandbox.h: the plugin's keys, with user and group from [rpcd] by default). */
    const rpcd_config *daemon;
} iso_settings;

/*
 * Starts the host of the plugin of config (borrowed, outlives the proxy) on fd (stolen: the
 * sealed copy of the plugin's file, opened and checked, which every restart loads again), waits for
 * its init and registers a proxy for each method it registered in methods, owned by owner. Returns
 * 0 and *out (new), or -1 with a one-line reason in error (fd closed, nothing registered).
 */
int iso_proxy_start(cfg_plugin *config, int fd, const iso_settings *settings, registry *methods,
                    const void *owner, iso_proxy **out, char *error, size_t error_size);

/*
 * Ends the host (end of its channel, which runs the plugin's shutdown; killed when it has not
 * exited within the grace period), joins the proxy's threads and frees it. Once no call of its
 * methods is in flight. NULL is ignored.
 */
void iso_proxy_stop(iso_proxy *proxy);

/* What a proxy's host is doing, for the control socket's status. */
typedef struct iso_proxy_status {
    int pid;                      /* the host's, 0 while it is down */
    unsigned long restarts;       /* hosts started again since the first */
    unsigned long deadline_kills; /* hosts killed for a call kept past its deadline and grace */
    char last_crash[128];         /* how the last host died, "" when none did */
} iso_proxy_status;

/* Fills *out from proxy (its lock, briefly). Any thread. */
void iso_proxy_describe(iso_proxy *proxy, iso_proxy_status *out);

/*
 * The program a host runs: "/proc/self/exe" (rpcd itself) unless set, for tests whose own
 * program is not rpcd. path borrowed, kept.
 */
void iso_set_host_program(const char *path);

#endif
