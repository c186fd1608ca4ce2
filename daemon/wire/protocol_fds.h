/* SPDX-License-Identifier: MIT */
/*
 * Keeps the protocol stream away from plugins: the client's stdin and stdout move to private
 * close-on-exec descriptors, and fds 0 and 1 become /dev/null and stderr, so a stray printf or
 * read(0) in a plugin (or a child it starts) can neither corrupt nor steal protocol bytes.
 */
#ifndef RPCD_PROTOCOL_FDS_H
#define RPCD_PROTOCOL_FDS_H

#include <stddef.h>

/*
 * Moves the protocol off fds 0 and 1. Call before any plugin is loaded.
 * Returns 0 with *input and *output set to the private descriptors, or -1 with a message.
 */
int pfd_take(int *input, int *output, char *error, size_t error_size);

/*
 * The output half of pfd_take, for the one-shot commands, whose stdin stays: moves stdout to a
 * private close-on-exec descriptor and points fd 1 at stderr. Call before any plugin is loaded.
 * Returns 0 with *output set, or -1 with errno (nothing changed).
 */
int pfd_take_output(int *output);

#endif
