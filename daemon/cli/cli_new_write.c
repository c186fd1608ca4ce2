/* SPDX-License-Identifier: MIT */
/*
 * rpcd new's files written, with the care a program that may run as root owes: into a directory
 * it made or found empty, every path below it opened one part at a time without following a
 * symbolic link, and every file created, never opened if it exists.
 */
#include "cli/cli_new.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NEW_PLACEHOLDER "@NAME@"

/* The longest path of a file below the project's directory, name filled in. */
enum { NEW_PATH_MAX = 256 };

/* Whether the directory open as fd holds nothing but . and ..: 1, 0, or -1 (errno). */
static int dir_is_empty(int fd)
{
    int copy = dup(fd);
    DIR *dir = copy >= 0 ? fdopendir(copy) : NULL;
    if (!dir) {
        if (copy >= 0)
            close(copy);
        return -1;
    }
    int empty = 1;
    const struct dirent *entry;
    while (empty && (entry = readdir(dir)))
        if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, ".."))
            empty = 0;
    closedir(dir);
    return empty;
}

/*
 * Opens dir to write the project into: made here (0755 less the umask), or found as an empty
 * directory. A symbolic link in its last part is refused (O_NOFOLLOW): whoever could place one
 * could point rpcd's writes elsewhere. Returns the descriptor, or -1 with error said.
 */
static int open_project_dir(const char *dir, char *error, size_t error_size)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(error, error_size, "cannot make the directory %s: %s", dir, strerror(errno));
        return -1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int saved = errno;
        /* A link fails with ENOTDIR or ELOOP; lstat only tells which to say. */
        struct stat status;
        bool is_link = (saved == ENOTDIR || saved == ELOOP) && lstat(dir, &status) == 0 &&
                       S_ISLNK(status.st_mode);
        if (is_link)
            snprintf(error, error_size, "%s is a symbolic link: give the directory itself", dir);
        else if (saved == ENOTDIR)
            snprintf(error, error_size, "%s exists and is not a directory", dir);
        else
            snprintf(error, error_size, "cannot open the directory %s: %s", dir, strerror(saved));
        return -1;
    }
    /* Even one made here: in a parent others may write (/tmp), it may have been replaced. */
    int empty = dir_is_empty(fd);
    if (empty != 1) {
        if (empty < 0)
            snprintf(error, error_size, "cannot read the directory %s: %s", dir, strerror(errno));
        else
            snprintf(error, error_size,
                     "%s exists and is not empty: rpcd new writes only into a new or empty "
                     "directory",
                     dir);
        close(fd);
        return -1;
    }
    return fd;
}

/* Writes length bytes of text to fd. Returns 0, or -1 (errno). */
static int write_all(int fd, const void *text, size_t length)
{
    const char *at = text;
    while (length > 0) {
        ssize_t done = write(fd, at, length);
        if (done < 0 && errno == EINTR)
            continue;
        if (done <= 0)
            return -1;
        at += done;
        length -= (size_t)done;
    }
    return 0;
}

/* Writes text to fd, each @NAME@ in it replaced by name when fill. Returns 0, or -1 (errno). */
static int write_filled(int fd, const unsigned char *text, size_t length, bool fill,
                        const char *name)
{
    size_t placeholder = strlen(NEW_PLACEHOLDER);
    size_t start = 0;
    for (size_t at = 0; fill && at + placeholder <= length; at++) {
        if (memcmp(text + at, NEW_PLACEHOLDER, placeholder) != 0)
            continue;
        if (write_all(fd, text + start, at - start) != 0 || write_all(fd, name, strlen(name)) != 0)
            return -1;
        start = at + placeholder;
        at = start - 1;
    }
    return write_all(fd, text + start, length - start);
}

/* path with each @NAME@ replaced by name, into out. Returns 0, or -1 when it does not fit. */
static int fill_path(const char *path, const char *name, char *out, size_t size)
{
    size_t used = 0;
    for (const char *at = path; *at;) {
        bool is_placeholder = strncmp(at, NEW_PLACEHOLDER, strlen(NEW_PLACEHOLDER)) == 0;
        const char *piece = is_placeholder ? name : at;
        size_t length = is_placeholder ? strlen(name) : 1;
        if (used + length >= size)
            return -1;
        memcpy(out + used, piece, length);
        used += length;
        at += is_placeholder ? strlen(NEW_PLACEHOLDER) : 1;
    }
    out[used] = '\0';
    return 0;
}

/*
 * Opens the directory that holds path (relative to the project, filled in, changed in place),
 * making each part below top that is missing; *base is then the file's own name. Returns the
 * descriptor (top itself when the file sits there, not to be closed), or -1 (errno).
 */
static int open_parent(int top, char *path, const char **base)
{
    int fd = top;
    char *part = path;
    char *slash;
    while ((slash = strchr(part, '/'))) {
        *slash = '\0';
        if (mkdirat(fd, part, 0755) != 0 && errno != EEXIST)
            slash = NULL;
        int next = slash ? openat(fd, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
        int saved = errno;
        if (fd != top)
            close(fd);
        if (next < 0) {
            errno = saved;
            return -1;
        }
        *slash = '/';
        fd = next;
        part = slash + 1;
    }
    *base = part;
    return fd;
}

/* Writes one file of the project below top. Returns 0, or -1 with error said. */
static int write_one(int top, const char *dir, const cli_new_file *file, const char *name,
                     char *error, size_t error_size)
{
    char path[NEW_PATH_MAX];
    if (fill_path(file->path, name, path, sizeof path) != 0) {
        snprintf(error, error_size, "%s/%s: the path is too long", dir, file->path);
        return -1;
    }
    const char *base = NULL;
    int parent = open_parent(top, path, &base);
    int fd = parent < 0
                 ? -1
                 : openat(parent, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    int status = fd < 0 ? -1 : write_filled(fd, file->text, file->length, file->fill, name);
    int saved = errno;
    if (fd >= 0 && close(fd) != 0 && status == 0) {
        saved = errno;
        status = -1;
    }
    if (parent >= 0 && parent != top)
        close(parent);
    if (status != 0)
        snprintf(error, error_size, "cannot write %s/%s: %s", dir, path, strerror(saved));
    return status;
}

int cli_new_write(const char *dir, const char *name, const char *language, char *error,
                  size_t error_size)
{
    int top = open_project_dir(dir, error, error_size);
    if (top < 0)
        return -1;
    int written = 0;
    for (size_t i = 0; i < cli_new_file_count; i++) {
        const cli_new_file *file = &cli_new_files[i];
        if (strcmp(file->language, language) != 0 && strcmp(file->language, "*") != 0)
            continue;
        if (write_one(top, dir, file, name, error, error_size) != 0) {
            size_t used = strlen(error);
            snprintf(error + used, error_size - used, " (the %d files written before stay in %s)",
                     written, dir);
            written = -1;
            break;
        }
        written++;
    }
    close(top);
    return written;
}
