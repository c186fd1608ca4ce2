/* SPDX-License-Identifier: MIT */
/*
 * Least privilege at start-up: no new privileges before plugins load, and the switch to the
 * configured user and group once their init has run.
 */
#ifndef RPCD_PRIVILEGES_H
#define RPCD_PRIVILEGES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Who to become: uid and gid, resolved from the config's names. */
typedef struct priv_target {
    bool change; /* false: stay who rpcd is */
    uid_t uid;
    gid_t gid;
} priv_target;

/* Sets PR_SET_NO_NEW_PRIVS: no exec from here on gains privileges (set-user-ID, file caps). */
int priv_no_new_privs(char *error, size_t error_size);

/*
 * Resolves user (may be NULL) and group (may be NULL: the user's own group) into *out. Both
 * NULL: out->change is false. group without user is refused. Returns 0, or -1 with a one-line
 * message in error.
 */
int priv_resolve(const char *user, const char *group, priv_target *out, char *error,
                 size_t error_size);

/*
 * Becomes target for good: supplementary groups cleared, then real, effective and saved group
 * ids, then user ids, and checks that root cannot be taken back. Call while no other thread
 * changes ids. Returns 0, or -1 with a one-line message in error (rpcd must then not serve).
 */
int priv_drop(const priv_target *target, char *error, size_t error_size);

/*
 * Makes the process not dumpable: its /proc/PID entries (fd, mem, environ, maps) belong to
 * root and are closed to the other processes of its user, which cannot ptrace it either. exec
 * and a change of ids reset the flag: priv_drop sets it again after the change. Returns 0, or
 * -1 with a one-line message in error.
 */
int priv_not_dumpable(char *error, size_t error_size);

/*
 * Gives up every capability for good (bounding set, ambient, effective, permitted and
 * inheritable sets), for a process that stays root: it keeps root's files but may no longer
 * ptrace, signal, read or write what belongs to other users. Nothing to do when it has none.
 * Returns 0, or -1 with a one-line message in error.
 */
int priv_drop_capabilities(char *error, size_t error_size);

#endif
