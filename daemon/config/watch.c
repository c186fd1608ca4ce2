/* SPDX-License-Identifier: MIT */
/*
 * What `watch = true` looks at: inotify on the directories of the config file, of its drop-ins
 * and of each plugin file, filtered to the names a reload would read. Directories, not files:
 * an installer renames a new file into place, and a watch on the old file would see nothing.
 */
#include "config/watch.h"

#include "base/log.h"

#include <errno.h>
#include <fnmatch.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

/* What changes a file in a directory: written and closed, moved in or out, made, removed, its
 * mode or owner changed (file safety reads those); the directory itself gone or moved. */
#define WATCH_MASK                                                                                 \
    (IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB |            \
     IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

/* One name (or glob(7) pattern) that matters in one watched directory. */
typedef struct interest {
    int descriptor; /* the inotify watch of the directory */
    char *pattern;  /* owned: a file name, or the drop-in pattern's last part */
} interest;

struct watcher {
    int fd;
    interest *interests; /* owned */
    size_t count;
};

int watch_new(watcher **out)
{
    watcher *w = calloc(1, sizeof *w);
    if (!w)
        return -1;
    w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (w->fd < 0) {
        free(w);
        return -1;
    }
    *out = w;
    return 0;
}

int watch_fd(const watcher *w)
{
    return w->fd;
}

static void free_interests(interest *list, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(list[i].pattern);
    free(list);
}

/* Adds the directory of path and its last part as an interest. Returns 0, or -1 (memory). */
static int add_interest(watcher *w, interest **list, size_t *count, const char *path)
{
    char *for_dir = strdup(path), *for_base = strdup(path);
    interest *grown = realloc(*list, (*count + 1) * sizeof **list);
    if (grown)
        *list = grown;
    int status = -1;
    if (!for_dir || !for_base || !grown)
        goto done;
    status = 0;
    const char *directory = dirname(for_dir);
    int descriptor = inotify_add_watch(w->fd, directory, WATCH_MASK);
    if (descriptor < 0) {
        /* A drop-in directory not made yet: its parent, the config's, sees it appear. */
        log_message(LOG_DEBUG, "watch: cannot watch %s: %s", directory, strerror(errno));
        goto done;
    }
    char *pattern = strdup(basename(for_base));
    if (!pattern) {
        status = -1;
        goto done;
    }
    (*list)[(*count)++] = (interest){descriptor, pattern};
done:
    free(for_dir);
    free(for_base);
    return status;
}

static bool descriptor_in(const interest *list, size_t count, int descriptor)
{
    for (size_t i = 0; i < count; i++)
        if (list[i].descriptor == descriptor)
            return true;
    return false;
}

int watch_set(watcher *w, const rpcd_config *config)
{
    interest *list = NULL;
    size_t count = 0;
    int status = add_interest(w, &list, &count, config->path);
    if (status == 0 && config->include) {
        status = add_interest(w, &list, &count, config->include);
        /* The drop-in directory itself, made, removed or renamed in the config's directory. */
        char *directory = strdup(config->include);
        status |= directory ? add_interest(w, &list, &count, dirname(directory)) : -1;
        free(directory);
    }
    for (size_t i = 0; status == 0 && i < config->plugin_count; i++)
        if (config->plugins[i].path)
            status = add_interest(w, &list, &count, config->plugins[i].path);
    if (status != 0) {
        free_interests(list, count); /* the old set stays */
        return -1;
    }
    /* Added first: a directory in both sets keeps its watch (inotify gives it the same one). */
    for (size_t i = 0; i < w->count; i++) {
        int descriptor = w->interests[i].descriptor;
        if (!descriptor_in(list, count, descriptor) && !descriptor_in(w->interests, i, descriptor))
            inotify_rm_watch(w->fd, descriptor);
    }
    free_interests(w->interests, w->count);
    w->interests = list;
    w->count = count;
    return 0;
}

/* Whether the event concerns a file a reload reads. */
static bool matters(const watcher *w, const struct inotify_event *event)
{
    if (event->mask & (IN_Q_OVERFLOW | IN_DELETE_SELF | IN_MOVE_SELF))
        return true; /* events were lost, or a directory went: look again */
    if (event->len == 0)
        return false;
    for (size_t i = 0; i < w->count; i++)
        if (w->interests[i].descriptor == event->wd &&
            fnmatch(w->interests[i].pattern, event->name, FNM_PERIOD) == 0)
            return true;
    return false;
}

bool watch_read(watcher *w)
{
    bool changed = false;
    /* Aligned for the events, room for several with the longest name. */
    char events[16 * (sizeof(struct inotify_event) + 256)]
        __attribute__((aligned(__alignof__(struct inotify_event))));
    for (;;) {
        ssize_t got = read(w->fd, events, sizeof events);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return changed; /* EAGAIN: all read */
        for (char *at = events; at < events + got;) {
            const struct inotify_event *event = (const struct inotify_event *)(void *)at;
            changed |= matters(w, event);
            at += sizeof *event + event->len;
        }
    }
}

void watch_free(watcher *w)
{
    if (!w)
        return;
    close(w->fd);
    free_interests(w->interests, w->count);
    free(w);
}
