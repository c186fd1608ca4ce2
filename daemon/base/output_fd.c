/* SPDX-License-Identifier: MIT */
/*
 * The file-descriptor sink of an output: writev to the end, through EINTR, short writes and a
 * non-blocking descriptor's EAGAIN. Async-signal-safe, as out_seize_dying needs its sink to be.
 */
#include "base/output.h"

#include <errno.h>
#include <poll.h>
#include <sys/uio.h>

int out_write_fd(void *sink, const struct iovec *parts, int part_count)
{
    int fd = *(const int *)sink;
    struct iovec left[OUT_PARTS_MOST];
    int count = 0;
    for (int i = 0; i < part_count && count < OUT_PARTS_MOST; i++) {
        if (parts[i].iov_len > 0)
            left[count++] = parts[i];
    }
    struct iovec *next = left;
    while (count > 0) {
        ssize_t n = writev(fd, next, count);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                /* A non-blocking stdout (shared with a parent, so its flag stays): a full pipe
                 * is back-pressure, as it is for a blocking one. Wait for room. */
                struct pollfd wanted = {fd, POLLOUT, 0};
                if (poll(&wanted, 1, -1) < 0 && errno != EINTR)
                    return -1;
                continue;
            }
            if (errno == EINTR)
                continue;
            return -1;
        }
        /* A pipe may take part of it: skip what went out, and resume inside a part. */
        size_t written = (size_t)n;
        while (count > 0 && written >= next->iov_len) {
            written -= next->iov_len;
            next++;
            count--;
        }
        if (count > 0) {
            next->iov_base = (char *)next->iov_base + written;
            next->iov_len -= written;
        }
    }
    return 0;
}
