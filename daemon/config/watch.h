/* SPDX-License-Identifier: MIT */
/*
 * Watching the files a reload reads (`watch = true`): the config file, its drop-ins and the
 * plugin files, through inotify on their directories.
 */
#ifndef RPCD_WATCH_H
#define RPCD_WATCH_H

#include "config/config.h"

#include <stdbool.h>

typedef struct watcher watcher;

/* Returns 0 and *out (new, watching nothing yet), or -1 with errno (descriptors, memory). */
int watch_new(watcher **out);

/* The descriptor to poll for input: readable when some event waits for watch_read. */
int watch_fd(const watcher *w);

/*
 * Watches what config (borrowed) names, instead of what was watched before: the directory of
 * the config file for that file, the drop-in directory for the names its pattern matches, the
 * config's directory for the drop-in directory itself, and the directory of each plugin file for
 * that file. A directory that does not exist is skipped (logged at debug). Returns 0, or -1
 * (memory), when what was watched stays.
 */
int watch_set(watcher *w, const rpcd_config *config);

/* Reads every waiting event; true when one concerns a watched name, a directory watched went,
 * or events were lost. Never blocks. */
bool watch_read(watcher *w);

/* Stops watching and frees w. NULL is ignored. */
void watch_free(watcher *w);

#endif
