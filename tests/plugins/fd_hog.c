/* SPDX-License-Identifier: MIT */
/*
 * Fixture: a plugin whose init takes every file descriptor the process may still open, and gives
 * them back at shutdown, so that a test can watch rpcd fail to start serving for want of one.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <rpcd/plugin.h>

enum { MOST = 4096 }; /* a bound, whatever RLIMIT_NOFILE says */

typedef struct hog {
    int fds[MOST];
    int count;
} hog;

static int fd_hog_init(rpcd_plugin *plugin, const rpcd_host_api *host, void **state, char *error,
                       size_t error_size)
{
    (void)plugin, (void)host, (void)error, (void)error_size;
    hog *taken = (hog *)calloc(1, sizeof *taken);
    if (!taken)
        return RPCD_ERR_NO_MEMORY;
    int fd;
    while (taken->count < MOST && (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0)
        taken->fds[taken->count++] = fd;
    *state = taken;
    return RPCD_OK;
}

static void fd_hog_shutdown(void *state)
{
    hog *taken = (hog *)state;
    for (int i = 0; i < taken->count; i++)
        close(taken->fds[i]);
    free(taken);
}

RPCD_PLUGIN_DEFINE("fd_hog", "1.0.0", fd_hog_init, fd_hog_shutdown);
