/* SPDX-License-Identifier: MIT */
/*
 * A loaded plugin's identity, for a reload to tell an unchanged plugin from one to load again:
 * its section as one text, and its file by device, inode, size, time and content.
 */
#include "loader/plugin_identity.h"

#include "base/buffer.h"
#include "loader/plugin_copy.h"

#include <stdlib.h>
#include <string.h>

static int append_pair(buffer *text, const char *key, const char *value)
{
    int failed = buf_append_string(text, key);
    failed |= buf_append_string(text, "=");
    failed |= buf_append_string(text, value ? value : "");
    return failed | buf_append_string(text, "\n");
}

/*
 * What runs an isolated plugin's host: its isolation keys, its confinement, and the daemon's
 * settings the host is started with. A change to any of them starts a new host.
 */
static int append_isolation(buffer *text, const rpcd_config *daemon, const cfg_plugin *config)
{
    const cfg_confinement *keys = &config->confinement;
    int failed = buf_printf(text, "isolation=%d\n", config->isolation);
    if (config->isolation != CFG_ISOLATION_PROCESS)
        return failed;
    failed |= buf_printf(text, "timeout_ms=%zu\nmax_restarts=%zu\nscheduler_slice_us=%zu\n",
                         config->timeout_ms, config->max_restarts, config->scheduler_slice_us);
    for (size_t i = 0; i < config->timeout_count; i++)
        failed |= append_pair(text, config->timeouts[i].key, config->timeouts[i].value);
    failed |= buf_printf(text, "limits=%zu %zu %zu %zu\nseccomp=%d\n", keys->limit_memory,
                         keys->limit_cpu_seconds, keys->limit_open_files, keys->limit_processes,
                         keys->seccomp);
    failed |= append_pair(text, "user", keys->user);
    failed |= append_pair(text, "group", keys->group);
    failed |= append_pair(text, "read_paths", keys->read_paths);
    failed |= append_pair(text, "write_paths", keys->write_paths);
    failed |=
        buf_printf(text, "daemon=%zu %zu %zu %d\n", daemon->limits.workers,
                   daemon->limits.max_depth, daemon->shutdown_grace_ms, (int)daemon->insecure);
    failed |= append_pair(text, "daemon user", daemon->user);
    return failed | append_pair(text, "daemon group", daemon->group);
}

/* The section's keys but path and required, as one text to compare. NULL: out of memory. */
static char *settings_of(const rpcd_config *daemon, const cfg_plugin *config)
{
    buffer text = BUFFER_INIT;
    int failed = buf_append_string(&text, "");
    for (size_t i = 0; i < config->pair_count; i++)
        failed |= append_pair(&text, config->pairs[i].key, config->pairs[i].value);
    failed |= append_isolation(&text, daemon, config);
    if (failed || buf_append(&text, "", 1) != 0) {
        buf_free(&text);
        return NULL;
    }
    return text.data;
}

int pident_fill(plugin_identity *identity, const rpcd_config *daemon, const cfg_plugin *config,
                const struct stat *file, uint64_t hash)
{
    identity->name = strdup(config->name);
    identity->path = strdup(config->path);
    identity->settings = settings_of(daemon, config);
    identity->device = file->st_dev;
    identity->inode = file->st_ino;
    identity->size = file->st_size;
    identity->modified = file->st_mtim;
    identity->hash = hash;
    return identity->name && identity->path && identity->settings ? 0 : -1;
}

bool pident_same(const plugin_identity *was, const rpcd_config *daemon, const cfg_plugin *config,
                 int fd)
{
    struct stat file;
    uint64_t hash;
    if (!was->name || !was->settings || strcmp(was->name, config->name) != 0 ||
        strcmp(was->path, config->path) != 0)
        return false;
    char *settings = settings_of(daemon, config);
    bool same = settings && strcmp(settings, was->settings) == 0;
    free(settings);
    if (!same || fstat(fd, &file) != 0 || file.st_dev != was->device || file.st_ino != was->inode ||
        file.st_size != was->size || file.st_mtim.tv_sec != was->modified.tv_sec ||
        file.st_mtim.tv_nsec != was->modified.tv_nsec)
        return false;
    return pcopy_hash(fd, &hash) == 0 && hash == was->hash;
}

void pident_free(plugin_identity *identity)
{
    free(identity->settings);
    free(identity->path);
    free(identity->name);
}
