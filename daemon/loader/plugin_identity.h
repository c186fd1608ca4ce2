/* SPDX-License-Identifier: MIT */
/*
 * What makes a loaded plugin the same as the one a config section names now: its section's keys,
 * and the file it was loaded from, by identity and by content. A reload keeps a plugin only
 * while all of it is unchanged.
 */
#ifndef RPCD_PLUGIN_IDENTITY_H
#define RPCD_PLUGIN_IDENTITY_H

#include "config/config.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

typedef struct plugin_identity {
    char *name;     /* owned: NAME of [plugin NAME] */
    char *path;     /* owned: the file, as the config resolved it */
    char *settings; /* owned: its section's other keys, and what runs an isolated one */
    dev_t device;   /* the file loaded: device, inode, size, modification time */
    ino_t inode;
    off_t size;
    struct timespec modified;
    uint64_t hash; /* of its content (plugin_copy.h) */
} plugin_identity;

/*
 * Fills identity from the section of config in daemon and the file (its fstat and content hash)
 * loaded. Returns 0, or -1 when memory ran out (identity then holds what it could: free it).
 */
int pident_fill(plugin_identity *identity, const rpcd_config *daemon, const cfg_plugin *config,
                const struct stat *file, uint64_t hash);

/* Whether was is what config (in daemon) names now; fd is its file, opened the checked way. */
bool pident_same(const plugin_identity *was, const rpcd_config *daemon, const cfg_plugin *config,
                 int fd);

void pident_free(plugin_identity *identity);

#endif
