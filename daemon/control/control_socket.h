/* SPDX-License-Identifier: MIT */
/*
 * The control socket as a file: its settings from the config ([rpcd] control_socket and its
 * mode, owner and group), the listening socket made in a directory that passed the file-safety
 * walk, a stale socket of ours replaced, and the peers it lets in (SO_PEERCRED, SO_PEERGROUPS).
 */
#ifndef RPCD_CONTROL_SOCKET_H
#define RPCD_CONTROL_SOCKET_H

#include "config/config.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct ctl_socket {
    char *directory; /* owned: the path up to its last '/' ("." when none) */
    char *name;      /* owned: the socket's name in it */
    bool check;      /* the file-safety checks (not with --insecure) */
    mode_t mode;     /* control_socket_mode (default 0600) */
    uid_t owner;     /* control_socket_owner, or rpcd's effective user */
    bool give_owner; /* control_socket_owner given: chown to it */
    gid_t group;     /* control_socket_group, when has_group */
    bool has_group;
    int directory_fd; /* O_PATH, held from ctl_socket_listen to ctl_socket_close; -1 */
    dev_t device;     /* the socket file made, for its removal */
    ino_t inode;
} ctl_socket;

/*
 * The settings of config's control socket into *out (free with ctl_socket_close). Returns 1 when
 * control_socket is set, 0 when it is not (nothing to free), -1 with a one-line reason in error
 * (a mode that is not octal up to 0777, an unknown user or group, a name that cannot be bound).
 */
int ctl_socket_settings(const rpcd_config *config, ctl_socket *out, char *error, size_t error_size);

/*
 * Makes the listening socket (non-blocking, close-on-exec): the directory opened by the
 * file-safety walk (refused when someone else could change it), a socket of rpcd's user left
 * there by a process that is gone removed (anything else refused, a live one too), bound through
 * /proc/self/fd under a umask that leaves mode, then given mode, owner and group. Returns 0 and
 * *fd (new), or -1 with a one-line reason in error.
 */
int ctl_socket_listen(ctl_socket *socket, int *fd, char *error, size_t error_size);

/*
 * Whether the peer connected on fd may use the socket: root, the owner, or (with a group) a
 * process whose group or supplementary groups hold it. Returns 1, or 0 with the peer described
 * in who ("uid 1000, gid 1000, pid 4242").
 */
int ctl_socket_peer_allowed(const ctl_socket *socket, int fd, char *who, size_t who_size);

/* Removes the socket file when it is still the one made, and frees the settings. */
void ctl_socket_close(ctl_socket *socket);

#endif
