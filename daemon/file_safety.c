/* SPDX-License-Identifier: MIT */
/*
 * Ownership and permission checks on files before rpcd trusts them.
 */
#include "file_safety.h"

#include <errno.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int check_one(const char *path, const char *what, const char *file, char *error,
                     size_t error_size)
{
    struct stat info;
    if (stat(path, &info) != 0) {
        snprintf(error, error_size, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (info.st_uid != 0 && info.st_uid != geteuid()) {
        snprintf(error, error_size,
                 "%s: %s is owned by uid %u, neither root nor the user running rpcd (uid %u); "
                 "chown it, or run rpcd with --insecure",
                 file, what, (unsigned)info.st_uid, (unsigned)geteuid());
        return -1;
    }
    bool is_directory = S_ISDIR(info.st_mode);
    bool sticky = is_directory && (info.st_mode & S_ISVTX);
    if ((info.st_mode & (S_IWGRP | S_IWOTH)) && !sticky) {
        snprintf(error, error_size,
                 "%s: %s is writable by %s; run chmod go-w %s, or run rpcd with --insecure", file,
                 what, (info.st_mode & S_IWOTH) ? "others" : "its group", path);
        return -1;
    }
    return 0;
}

int fsafe_check(const char *path, char *error, size_t error_size)
{
    if (check_one(path, "the file", path, error, error_size) != 0)
        return -1;
    char *copy = strdup(path);
    if (!copy) {
        snprintf(error, error_size, "%s: out of memory", path);
        return -1;
    }
    int status = check_one(dirname(copy), "its directory", path, error, error_size);
    free(copy);
    return status;
}
