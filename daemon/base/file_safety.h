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
 * root's or rpcd's user's and writable by neither group nor others. Writable by its group is
 * allowed, for a directory or the file, when the group's only member is its owner (a user
 * private group: file_group.h). Without check (--insecure) only the last rule stays: the path
 * must name a regular file. Never blocks on a FIFO.
 *
 * Returns 0 and *fd (new, O_RDONLY | O_CLOEXEC, a regular file), or one of FSAFE_ERR_* with a
 * one-line reason in reason (without the path; the unsafe cases name the component and the
 * command that fixes it).
 */
int fsafe_open(const char *path, bool check, int *fd, char *reason, size_t reason_size);

/*
 * fsafe_open for a directory: the same walk and checks, every directory on the way and the last
 * one included. Returns 0 and *fd (new, O_PATH | O_CLOEXEC, a directory: for the *at() calls and
 * /proc/self/fd/N/NAME), or FSAFE_ERR_* with a one-line reason. Not for a session's directory.
 */
int fsafe_open_directory(const char *path, bool check, int *fd, char *reason, size_t reason_size);

/*
 * Between these two calls, fsafe_open keeps the directory its last walk ended in (one
 * descriptor) and, when the next path is the same text up to its last '/', checks that
 * directory again and starts there instead of at "/": the directories above it are not looked
 * at again. That is as safe as a new walk, since only root or rpcd's user can change a
 * directory that passed, and it keeps start-up with many plugins in one directory cheap. For
 * the files of one start-up or reload; not thread-safe, as fsafe_open is not.
 */
void fsafe_session_begin(void);
void fsafe_session_end(void);

/*
 * dlopen of exactly the file open on fd, through /proc/self/fd, under a name no other object
 * loaded by this function uses (the dynamic loader reuses an object whose name matches).
 * Returns the handle, or NULL with the reason in reason (dlerror's, or that /proc is not
 * mounted). fd may be closed once this returns. Not thread-safe: one loading thread at a time
 * (start-up, then the reloading thread).
 */
void *fsafe_dlopen(int fd, int mode, char *reason, size_t reason_size);

#endif
