/* SPDX-License-Identifier: MIT */
/*
 * The plugin host process: rpcd run with --plugin-host by an isolated plugin's proxy. It loads
 * the one plugin through the loader, from the descriptor rpcd checked, runs its init, reports
 * its methods and serves their calls over the channel, with host functions that forward what
 * the plugin does with a call as one message each.
 */
#ifndef RPCD_HOST_H
#define RPCD_HOST_H

/* The argument that makes rpcd a plugin host (argv[1]). */
#define ISO_HOST_ARGUMENT "--plugin-host"

/*
 * Serves the channel on CHAN_HOST_FD with the plugin open on CHAN_PLUGIN_FD until the channel
 * ends. Returns the process's exit status.
 */
int iso_host_main(void);

#endif
