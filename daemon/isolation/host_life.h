/* SPDX-License-Identifier: MIT */
/*
 * A plugin host's life among processes: named apart from rpcd, deaf to the signals meant for
 * rpcd, a subreaper of what its plugin starts, and ended, with all of that, when rpcd ends.
 */
#ifndef RPCD_HOST_LIFE_H
#define RPCD_HOST_LIFE_H

#include <stdbool.h>

/* The name a host gives itself (its comm, what pkill -x and ps show). */
#define ISO_HOST_NAME "rpcd-host"

/*
 * First thing in a host: records rpcd as its parent, makes the process not dumpable, names it
 * ISO_HOST_NAME, makes it a subreaper, and logs and ignores SIGHUP, SIGINT, SIGUSR1 and SIGUSR2
 * through a handler (which exec resets). Returns 0, or -1 when one of them failed.
 */
int host_life_begin(void);

/*
 * Starts a thread that, once fd (the channel from rpcd) has closed and rpcd is gone, ends the
 * host (host_life_exit), whatever its other threads do. After the confinement, which wants a
 * single thread. Returns 0, or -1 with errno.
 */
int host_life_watch(int fd);

/*
 * Says the host now runs as pid 2 of a PID namespace of its own (host_ns_enter): rpcd's end is
 * watched from outside, and host_life_end_descendants ends everything else in the namespace.
 */
void host_life_in_namespace(void);

/* Whether the host's parent is no longer the rpcd that started it (rpcd died); never true in a
 * namespace, where the host ends with rpcd from outside. */
bool host_life_rpcd_gone(void);

/*
 * Kills every descendant of the host (those that left its process group included: they were
 * adopted) and reaps them. Returns once the host has no child left. Not for a thread that
 * still expects to wait for a child of its own.
 */
void host_life_end_descendants(void);

/* host_life_end_descendants, then _exit(status). */
_Noreturn void host_life_exit(int status);

#endif
