/* SPDX-License-Identifier: MIT */
/*
 * The StrictModes rule for what rpcd loads: a config or plugin file that someone else could
 * change is refused, since whoever can write it can run code as the daemon's user. Files are
 * opened once and judged by the descriptor, which is then what gets read or loaded.
 */
#ifndef RPCD_FILE_SAFETY_H
#define RPCD_FILE_SAFETY_H

#include <stdbool.h>
#include <stddef.h>

/* What fsafe_open returns when it fails. */
enum {
    FSAFE_ERR_OPEN = -1,   /* a component is missing or cannot be opened (the reason is errno's) */
    FSAFE_ERR_TYPE = -2,   /* the path names a directory, a FIFO, a device or a socket */
    FSAFE_ERR_UNSAFE = -3, /* someone other than root or rpcd's user could change it */
};

/*
 * Opens path for reading, resolving it one component at a time from "/" (a relative path starts
 * at the working directory), each directory held open while the next is opened beneath it, and
 * each symbolic link's target walked the same way. With check, every directory on the way and
 * every link followed must belong to root or to rpcd's effective user, no directory may be
 * writable by group or others unless it is sticky and root's (like /tmp), and the file must be
 * root's or rpcd's user's and writable by neither group nor others. Without check (--insecure)
 * only the last rule stays: the path must name a regular file. Never blocks on a FIFO.
 *
 * Returns 0 and *fd (new, O_RDONLY | O_CLOEXEC, a regular file), or one of FSAFE_ERR_* with a
 * one-line reason in reason (without the path; the unsafe cases name the component and the
 * command that fixes it).
 */
int fsafe_open(const char *path, bool check, int *fd, char *reason, size_t reason_size);

/*
 * dlopen of exactly the file open on fd, through /proc/self/fd, under a name no other object
 * loaded by this function uses (the dynamic loader reuses an object whose name matches).
 * Returns the handle, or NULL with the reason in reason (dlerror's, or that /proc is not
 * mounted). fd may be closed once this returns. Start-up only: not thread-safe.
 */
void *fsafe_dlopen(int fd, int mode, char *reason, size_t reason_size);

#endif
