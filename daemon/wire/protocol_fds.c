/* SPDX-License-Identifier: MIT */
/*
 * dup/dup2 dance that moves the protocol onto private descriptors.
 */
#include "wire/protocol_fds.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int pfd_take_output(int *output)
{
    fflush(stdout);
    /* Above 2, so that it is never mistaken for a standard descriptor. */
    int out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
    if (out < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
        int saved = errno;
        if (out >= 0)
            close(out);
        errno = saved;
        return -1;
    }
    /* stdout now reaches stderr: line-buffer it so plugin output is not held back. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    *output = out;
    return 0;
}

int pfd_take(int *input, int *output, char *error, size_t error_size)
{
    int in = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out = -1;
    if (in < 0 || null < 0 || dup2(null, STDIN_FILENO) < 0 || pfd_take_output(&out) != 0) {
        snprintf(error, error_size, "cannot set up the protocol descriptors: %s", strerror(errno));
        if (in >= 0)
            close(in);
        if (null >= 0)
            close(null);
        return -1;
    }
    close(null);
    *input = in;
    *output = out;
    return 0;
}
