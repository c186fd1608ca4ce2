/* SPDX-License-Identifier: MIT */
/*
 * The StrictModes rule for what rpcd loads: a config or plugin file that someone else could
 * change is refused, since whoever can write it can run code as the daemon's user.
 */
#ifndef RPCD_FILE_SAFETY_H
#define RPCD_FILE_SAFETY_H

#include <stddef.h>

/*
 * Checks path and its directory: neither may be writable by group or others (a directory with
 * the sticky bit, like /tmp, may be), and both must belong to root or to the user running
 * rpcd. Returns 0, or -1 with a one-line message in error that says what to fix.
 */
int fsafe_check(const char *path, char *error, size_t error_size);

#endif
