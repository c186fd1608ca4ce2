/* SPDX-License-Identifier: MIT */
/*
 * Opening config and plugin files as sshd's StrictModes judges them, by descriptor: a walk down
 * from "/" holding each directory open while the next is opened beneath it, so that what was
 * checked is what gets read or loaded, and the dlopen of that very descriptor.
 */
#include "base/file_safety.h"

#include "base/file_group.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    MAX_LINKS = 40,  /* as the kernel's own limit: a loop of links ends with ELOOP */
    MAX_DEPTH = 512, /* directories below "/" */
};

/*
 * Only the current directory is held open (a daemon may start with few descriptors to spare):
 * it was opened beneath its parent, which had been checked, and so on up to "/". Nobody but root
 * or rpcd's user can move a checked directory, so its parent stays the one checked, and ".."
 * is opened and checked again like any other component.
 */
typedef struct walk {
    int dir;                /* the current directory, O_PATH */
    size_t ends[MAX_DEPTH]; /* the length of real at each level: ends[0] is "/" */
    size_t depth;           /* levels on the way, "/" included */
    char real[PATH_MAX];    /* the real path of the current directory ("" for "/") */
    bool check;
    char *reason;
    size_t reason_size;
    size_t last_start; /* where the path's last component starts, when no link led there */
    bool directory;    /* the path names a directory, held at the end (fsafe_open_directory) */
} walk;

/*
 * The directory the last walk ended in, held while a config and its plugins are opened: they
 * mostly share a directory, and a walk from "/" for each plugin made start-up grow steeply with
 * the number of plugins (bench/README.md, "Figures behind design choices"). Reusing it is as safe
 * as walking again: every directory on the way was checked, so only root or rpcd's user can
 * change what the same path text leads to; the directory itself is checked again on each use.
 */
static walk last_directory = {.dir = -1};
static char *last_prefix; /* the path text up to and including its last '/' */
static bool in_session;   /* between fsafe_session_begin and fsafe_session_end */

__attribute__((format(printf, 3, 4))) static int refuse(walk *w, int status, const char *format,
                                                        ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(w->reason, w->reason_size, format, args);
    va_end(args);
    return status;
}

/* The real path of name in the current directory, for messages. */
static const char *beneath(const walk *w, const char *name, char *out, size_t size)
{
    if (name[0] == '\0')
        snprintf(out, size, "%s", w->depth > 1 ? w->real : "/");
    else
        snprintf(out, size, "%s/%s", w->real, name);
    return out;
}

static bool owner_trusted(const struct stat *info)
{
    return info->st_uid == 0 || info->st_uid == geteuid();
}

/*
 * Whether someone besides its owner (and root) may write it: others, or its group unless that
 * group is its owner's alone (a user private group, as umask 002 leaves files: file_group.h).
 */
static bool writable_by_others(const struct stat *info)
{
    if (info->st_mode & S_IWOTH)
        return true;
    return (info->st_mode & S_IWGRP) && !fgroup_private_to(info->st_gid, info->st_uid);
}

static const char *writers(mode_t mode)
{
    return (mode & S_IWOTH) ? "others" : "its group, which is not its owner's alone";
}

/* What the owner check asks of the user: the same words for each kind of component. */
static int refuse_owner(walk *w, const char *what, const char *path, const struct stat *info)
{
    return refuse(w, FSAFE_ERR_UNSAFE,
                  "%s %s is owned by uid %u, neither root nor the user running rpcd (uid %u); "
                  "run chown %u %s, or run rpcd with --insecure",
                  what, path, (unsigned)info->st_uid, (unsigned)geteuid(), (unsigned)geteuid(),
                  path);
}

static int check_directory(walk *w, const char *path, const struct stat *info)
{
    if (!w->check)
        return 0;
    if (!owner_trusted(info))
        return refuse_owner(w, "the directory", path, info);
    /* A sticky directory lets nobody but root and an entry's owner rename or remove it. */
    bool sticky_root = (info->st_mode & S_ISVTX) && info->st_uid == 0;
    if (writable_by_others(info) && !sticky_root)
        return refuse(w, FSAFE_ERR_UNSAFE,
                      "the directory %s is writable by %s; run chmod go-w %s, or run rpcd "
                      "with --insecure",
                      path, writers(info->st_mode), path);
    return 0;
}

/* Makes fd, opened as name beneath the current directory (or "/" when name is ""), current. */
static int push(walk *w, int fd, const char *name)
{
    if (w->depth == MAX_DEPTH) {
        close(fd);
        return refuse(w, FSAFE_ERR_OPEN, "more than %d directories deep", MAX_DEPTH);
    }
    size_t length = strlen(w->real);
    if (name[0] != '\0') {
        int n = snprintf(w->real + length, sizeof w->real - length, "/%s", name);
        if (n < 0 || (size_t)n >= sizeof w->real - length) {
            w->real[length] = '\0';
            close(fd);
            return refuse(w, FSAFE_ERR_OPEN, "%s", strerror(ENAMETOOLONG));
        }
        length += (size_t)n;
    }
    if (w->dir >= 0)
        close(w->dir);
    w->dir = fd;
    w->ends[w->depth] = length;
    w->depth++;
    return 0;
}

/* Opens "/" and makes it current. */
static int enter_root(walk *w)
{
    w->depth = 0;
    w->real[0] = '\0';
    int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    struct stat info;
    if (root < 0 || fstat(root, &info) != 0) {
        int saved = errno;
        if (root >= 0)
            close(root);
        return refuse(w, FSAFE_ERR_OPEN, "cannot open /: %s", strerror(saved));
    }
    int status = check_directory(w, "/", &info);
    if (status != 0) {
        close(root);
        return status;
    }
    return push(w, root, "");
}

/* Makes the parent of the current directory current; "/" is its own parent. */
static int enter_parent(walk *w)
{
    if (w->depth <= 1)
        return 0;
    size_t keep = w->ends[w->depth - 2];
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%.*s", (int)keep, w->real);
    if (keep == 0)
        snprintf(path, sizeof path, "/");
    int parent = openat(w->dir, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    struct stat info;
    if (parent < 0 || fstat(parent, &info) != 0) {
        int saved = errno;
        if (parent >= 0)
            close(parent);
        return refuse(w, FSAFE_ERR_OPEN, "cannot open %s: %s", path, strerror(saved));
    }
    int status = check_directory(w, path, &info);
    if (status != 0) {
        close(parent);
        return status;
    }
    close(w->dir);
    w->dir = parent;
    w->depth--;
    w->real[keep] = '\0';
    return 0;
}

static const char *kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

/*
 * Opens the file name in the current directory, which the walk has found to be a regular file
 * (seen, through an O_PATH descriptor). Opening for reading cannot block even if the entry was
 * replaced by a FIFO meanwhile (O_NONBLOCK), and what was opened must be what was seen.
 */
static int open_file(walk *w, const char *name, const struct stat *seen, int *out)
{
    char path[PATH_MAX + NAME_MAX + 2];
    beneath(w, name, path, sizeof path);
    int fd = openat(w->dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return refuse(w, FSAFE_ERR_OPEN, "cannot open %s: %s", path, strerror(errno));
    struct stat info;
    int status = 0;
    if (fstat(fd, &info) != 0) {
        status = refuse(w, FSAFE_ERR_OPEN, "cannot open %s: %s", path, strerror(errno));
    } else if (!S_ISREG(info.st_mode) || info.st_dev != seen->st_dev ||
               info.st_ino != seen->st_ino) {
        status =
            refuse(w, FSAFE_ERR_TYPE, "not a regular file (%s changed while it was opened)", path);
    } else if (w->check && !owner_trusted(&info)) {
        status = refuse_owner(w, "the file", path, &info);
    } else if (w->check && writable_by_others(&info)) {
        status = refuse(w, FSAFE_ERR_UNSAFE,
                        "the file %s is writable by %s; run chmod go-w %s, or run rpcd with "
                        "--insecure",
                        path, writers(info.st_mode), path);
    } else {
        int flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
            status = refuse(w, FSAFE_ERR_OPEN, "cannot open %s: %s", path, strerror(errno));
    }
    if (status != 0) {
        close(fd);
        return status;
    }
    *out = fd;
    return 0;
}

/*
 * Replaces the path left to walk with link's target followed by what came after the link
 * (*cursor, "" or starting with "/"). An absolute target starts again from "/".
 */
static int follow(walk *w, int link, const char *name, const struct stat *info, char **rest,
                  const char **cursor)
{
    char path[PATH_MAX + NAME_MAX + 2];
    beneath(w, name, path, sizeof path);
    /* A link is as safe as its directory, and as its owner, who may point it elsewhere (what
     * the kernel's protected_symlinks looks at in sticky directories). */
    if (w->check && !owner_trusted(info))
        return refuse_owner(w, "the symbolic link", path, info);
    char target[PATH_MAX];
    ssize_t length = readlinkat(link, "", target, sizeof target);
    if (length < 0)
        return refuse(w, FSAFE_ERR_OPEN, "cannot read the link %s: %s", path, strerror(errno));
    if ((size_t)length == sizeof target)
        return refuse(w, FSAFE_ERR_OPEN, "the link %s: %s", path, strerror(ENAMETOOLONG));
    target[length] = '\0';
    char *joined;
    if (asprintf(&joined, "%s%s", target, *cursor) < 0)
        return refuse(w, FSAFE_ERR_OPEN, "%s", strerror(ENOMEM));
    free(*rest);
    *rest = joined;
    *cursor = joined;
    return target[0] == '/' ? enter_root(w) : 0;
}

/* The walk proper: from the current directory through every component of *rest. */
static int walk_path(walk *w, char **rest, int *out)
{
    const char *cursor = *rest;
    unsigned links = 0;
    for (;;) {
        while (*cursor == '/')
            cursor++;
        if (*cursor == '\0' && w->directory) {
            *out = fcntl(w->dir, F_DUPFD_CLOEXEC, 0);
            return *out >= 0 ? 0 : refuse(w, FSAFE_ERR_OPEN, "%s", strerror(errno));
        }
        if (*cursor == '\0') {
            char path[PATH_MAX + 2];
            return refuse(w, FSAFE_ERR_TYPE, "not a regular file (%s is a directory)",
                          beneath(w, "", path, sizeof path));
        }
        const char *end = strchrnul(cursor, '/');
        size_t length = (size_t)(end - cursor);
        if (length > NAME_MAX)
            return refuse(w, FSAFE_ERR_OPEN, "%s", strerror(ENAMETOOLONG));
        char name[NAME_MAX + 1];
        memcpy(name, cursor, length);
        name[length] = '\0';
        bool last = *end == '\0';
        cursor = end;
        if (strcmp(name, ".") == 0)
            continue;
        if (last && links == 0 && strcmp(name, "..") != 0)
            w->last_start = (size_t)(end - length - *rest);
        int status;
        if (strcmp(name, "..") == 0) {
            if ((status = enter_parent(w)) != 0)
                return status;
            continue;
        }
        char path[PATH_MAX + NAME_MAX + 2];
        beneath(w, name, path, sizeof path);
        int next = openat(w->dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0) {
            if (errno == ENOENT)
                return refuse(w, FSAFE_ERR_OPEN, "%s", strerror(errno));
            return refuse(w, FSAFE_ERR_OPEN, "cannot open %s: %s", path, strerror(errno));
        }
        struct stat info;
        if (fstat(next, &info) != 0) {
            int saved = errno;
            close(next);
            return refuse(w, FSAFE_ERR_OPEN, "cannot open %s: %s", path, strerror(saved));
        }
        if (S_ISLNK(info.st_mode)) {
            w->last_start = 0; /* where the walk ends is the link's business now */
            status = ++links > MAX_LINKS
                         ? refuse(w, FSAFE_ERR_OPEN, "cannot open %s: %s", path, strerror(ELOOP))
                         : follow(w, next, name, &info, rest, &cursor);
            close(next);
            if (status != 0)
                return status;
            continue;
        }
        if (!last || (w->directory && S_ISDIR(info.st_mode))) {
            if (!S_ISDIR(info.st_mode)) {
                close(next);
                return refuse(w, FSAFE_ERR_OPEN, "cannot open %s: %s", path, strerror(ENOTDIR));
            }
            if ((status = check_directory(w, path, &info)) != 0) {
                close(next);
                return status;
            }
            if ((status = push(w, next, name)) != 0)
                return status;
            continue;
        }
        close(next);
        if (!S_ISREG(info.st_mode))
            return refuse(w, FSAFE_ERR_TYPE, "not a regular file (%s is %s)", path,
                          kind(info.st_mode));
        return open_file(w, name, &info, out);
    }
}

static void forget_directory(void)
{
    if (last_directory.dir >= 0)
        close(last_directory.dir);
    last_directory.dir = -1;
    free(last_prefix);
    last_prefix = NULL;
}

/* Keeps the directory a successful walk of path ended in, when no link led to its end. */
static void remember_directory(const walk *w, const char *path)
{
    if (!in_session || w->last_start == 0)
        return;
    int held = fcntl(w->dir, F_DUPFD_CLOEXEC, 0);
    char *prefix = held >= 0 ? strndup(path, w->last_start) : NULL;
    if (!prefix) {
        if (held >= 0)
            close(held);
        return;
    }
    forget_directory();
    last_directory = *w;
    last_directory.dir = held;
    last_prefix = prefix;
}

/*
 * Makes the directory held current when path is in it (the same text up to its last '/', not
 * ending in "." or "..") and it still passes its check. Returns the offset of the last
 * component to walk from there, 0 when the walk must start from "/", or a negative status.
 */
static int resume_walk(walk *w, const char *path)
{
    if (!last_prefix || last_directory.check != w->check)
        return 0;
    size_t length = strlen(last_prefix);
    const char *name = path + length;
    if (strncmp(path, last_prefix, length) != 0 || strchr(name, '/') || name[0] == '\0' ||
        strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return 0;
    struct stat info;
    int held = fcntl(last_directory.dir, F_DUPFD_CLOEXEC, 0);
    if (held < 0 || fstat(held, &info) != 0) {
        if (held >= 0)
            close(held);
        return 0;
    }
    char *reason = w->reason;
    size_t reason_size = w->reason_size;
    *w = last_directory;
    w->dir = held;
    w->reason = reason;
    w->reason_size = reason_size;
    int status = check_directory(w, w->depth > 1 ? w->real : "/", &info);
    return status != 0 ? status : (int)length;
}

void fsafe_session_begin(void)
{
    in_session = true;
}

void fsafe_session_end(void)
{
    forget_directory();
    in_session = false;
}

static int open_path(const char *path, bool check, bool directory, int *fd, char *reason,
                     size_t reason_size)
{
    walk *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(reason, reason_size, "%s", strerror(ENOMEM));
        return FSAFE_ERR_OPEN;
    }
    w->dir = -1;
    w->check = check;
    w->directory = directory;
    w->reason = reason;
    w->reason_size = reason_size;
    int status;
    char *rest = NULL;
    if (path[0] == '\0') {
        status = refuse(w, FSAFE_ERR_OPEN, "%s", strerror(ENOENT));
        goto done;
    }
    if (path[0] == '/') {
        rest = strdup(path);
    } else {
        /* getcwd gives the real path: its directories are walked and checked like any other. */
        char *cwd = getcwd(NULL, 0);
        if (!cwd || asprintf(&rest, "%s/%s", cwd, path) < 0)
            rest = NULL;
        free(cwd);
    }
    if (!rest) {
        status = refuse(w, FSAFE_ERR_OPEN, "%s", strerror(ENOMEM));
        goto done;
    }
    status = directory ? 0 : resume_walk(w, rest);
    if (status > 0) {
        /* Only the last component is left: the walk goes on from the directory held. */
        char *name = strdup(rest + status);
        free(rest);
        rest = name;
        status = rest ? walk_path(w, &rest, fd) : refuse(w, FSAFE_ERR_OPEN, "%s", strerror(ENOMEM));
        goto done;
    }
    if (status == 0 && (status = enter_root(w)) == 0 && (status = walk_path(w, &rest, fd)) == 0)
        remember_directory(w, rest);
done:
    if (w->dir >= 0)
        close(w->dir);
    free(rest);
    free(w);
    return status;
}

int fsafe_open(const char *path, bool check, int *fd, char *reason, size_t reason_size)
{
    return open_path(path, check, false, fd, reason, reason_size);
}

int fsafe_open_directory(const char *path, bool check, int *fd, char *reason, size_t reason_size)
{
    return open_path(path, check, true, fd, reason, reason_size);
}

/*
 * How many objects fsafe_dlopen has loaded. The dynamic loader hands back an object already
 * loaded under the same name without opening anything, and descriptor numbers come back: a
 * second plugin opened as fd 5 must not be taken for the first. So the n-th name has n extra
 * slashes, which change the name and not what the kernel resolves it to: unique by
 * construction, for the life of the process (an object may stay loaded after dlclose), with
 * nothing to search.
 */
static size_t loaded_count;

void *fsafe_dlopen(int fd, int mode, char *reason, size_t reason_size)
{
    char name[PATH_MAX];
    int prefix = snprintf(name, sizeof name, "/proc/self/fd/");
    if (loaded_count + (size_t)prefix + 24 > sizeof name) {
        snprintf(reason, reason_size, "too many plugins loaded");
        return NULL;
    }
    memset(name + prefix, '/', loaded_count);
    snprintf(name + (size_t)prefix + loaded_count, sizeof name - (size_t)prefix - loaded_count,
             "%d", fd);
    struct stat by_fd, by_name;
    if (fstat(fd, &by_fd) != 0) {
        snprintf(reason, reason_size, "%s", strerror(errno));
        return NULL;
    }
    if (stat(name, &by_name) != 0 || by_name.st_dev != by_fd.st_dev ||
        by_name.st_ino != by_fd.st_ino) {
        snprintf(reason, reason_size,
                 "%s does not name the file opened (is /proc mounted?); rpcd loads a plugin only "
                 "through the descriptor it checked",
                 name);
        return NULL;
    }
    dlerror();
    void *handle = dlopen(name, mode);
    if (!handle) {
        const char *error = dlerror();
        snprintf(reason, reason_size, "not a loadable shared object: %s",
                 error ? error : "unknown error");
        return NULL;
    }
    loaded_count++;
    return handle;
}
