/* SPDX-License-Identifier: MIT */
/*
 * The sealed memfd copy of a plugin file, and the content hash that tells a changed plugin from
 * an unchanged one on a reload.
 */
#include "loader/plugin_copy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { CHUNK_BYTES = 64 * 1024 };

/* FNV-1a continued over more bytes (reg_hash's, from its running value). */
static uint64_t hash_more(uint64_t hash, const unsigned char *bytes, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        hash ^= bytes[i];
        hash *= UINT64_C(1099511628211);
    }
    return hash;
}

static const uint64_t hash_start = UINT64_C(14695981039346656037);

/* Reads from fd at offset, retrying after a signal. */
static ssize_t read_at(int fd, void *buffer, size_t size, off_t offset)
{
    ssize_t n;
    do
        n = pread(fd, buffer, size, offset);
    while (n < 0 && errno == EINTR);
    return n;
}

static int write_all(int fd, const unsigned char *bytes, size_t length)
{
    while (length > 0) {
        ssize_t n = write(fd, bytes, length);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        bytes += n;
        length -= (size_t)n;
    }
    return 0;
}

/* A memfd that may be mapped executable where the system makes them noexec by default. */
static int make_memfd(const char *label)
{
#ifdef MFD_EXEC
    int fd = memfd_create(label, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
    if (fd >= 0 || errno != EINVAL)
        return fd;
#endif
    return memfd_create(label, MFD_CLOEXEC | MFD_ALLOW_SEALING);
}

static bool same_version(const struct stat *a, const struct stat *b)
{
    return a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
           a->st_mtim.tv_nsec == b->st_mtim.tv_nsec && a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
           a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

int pcopy_sealed(int fd, const char *label, int *copy, uint64_t *hash, struct stat *info,
                 char *reason, size_t reason_size)
{
    if (fstat(fd, info) != 0) {
        snprintf(reason, reason_size, "%s", strerror(errno));
        return -1;
    }
    int out = make_memfd(label);
    if (out < 0) {
        snprintf(reason, reason_size, "cannot make a private copy (memfd_create): %s",
                 strerror(errno));
        return -1;
    }
    unsigned char buffer[CHUNK_BYTES];
    uint64_t sum = hash_start;
    off_t offset = 0;
    for (;;) {
        ssize_t n = read_at(fd, buffer, sizeof buffer, offset);
        if (n < 0 || (n > 0 && write_all(out, buffer, (size_t)n) != 0)) {
            snprintf(reason, reason_size, "cannot make a private copy: %s", strerror(errno));
            close(out);
            return -1;
        }
        if (n == 0)
            break;
        sum = hash_more(sum, buffer, (size_t)n);
        offset += n;
    }
    struct stat after;
    if (fstat(fd, &after) != 0 || !same_version(info, &after) || offset != info->st_size) {
        snprintf(reason, reason_size,
                 "the file changed while it was read (written in place?); install a plugin by "
                 "renaming a complete file into place");
        close(out);
        return -1;
    }
    if (fcntl(out, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
        snprintf(reason, reason_size, "cannot seal the private copy: %s", strerror(errno));
        close(out);
        return -1;
    }
    *copy = out;
    *hash = sum;
    return 0;
}

int pcopy_hash(int fd, uint64_t *hash)
{
    unsigned char buffer[CHUNK_BYTES];
    uint64_t sum = hash_start;
    off_t offset = 0;
    for (;;) {
        ssize_t n = read_at(fd, buffer, sizeof buffer, offset);
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        sum = hash_more(sum, buffer, (size_t)n);
        offset += n;
    }
    *hash = sum;
    return 0;
}
