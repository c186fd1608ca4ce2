/* SPDX-License-Identifier: MIT */
/*
 * A plugin host in a PID namespace of its own: it cannot name rpcd, another host or anything
 * else outside by a process id, on any kernel, and whatever its plugin starts ends with it.
 */
#ifndef RPCD_HOST_NAMESPACE_H
#define RPCD_HOST_NAMESPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Called by the host first thing after it has read its INIT, while it has one thread. Unshares
 * a PID namespace (as root; otherwise, unless user_namespace_allowed is false, together with a
 * user namespace that maps the host's own user and group onto themselves) and forks twice:
 *
 *   the process rpcd started     waits for the namespace's end and ends as the host did (same
 *                                exit status, or killed by the same signal); kills it when
 *                                rpcd (rpcd_pid, its parent) is gone
 *   pid 1 of the namespace       reaps orphans; when the host ends, reports how and exits, which
 *                                makes the kernel kill what is left in the namespace
 *   pid 2                        the host proper: the only one that returns
 *
 * The first two close every descriptor but their link, so the channel's ends close when the host
 * ends. On return *entered says whether the caller is now pid 2 of a namespace of its own; when
 * it is false the host runs as before and error says why (the kernel refused: not root and no
 * user namespaces, or a container's seccomp profile). Returns 0, or -1 when the host must not go
 * on (a namespace was made but the host could not be started in it), with the reason in error.
 */
int host_ns_enter(pid_t rpcd_pid, bool user_namespace_allowed, bool *entered, char *error,
                  size_t error_size);

/*
 * Whether a host started now could have a namespace of its own (user_namespace_allowed as for
 * host_ns_enter), found by a child that tries, once per process and answer; the reason it could
 * not in why. Thread-safe. Returns 0 and *available, or -1 when no child could be started.
 */
int host_ns_probe(bool user_namespace_allowed, bool *available, char *why, size_t why_size);

#endif
