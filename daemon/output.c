/* SPDX-License-Identifier: MIT */
/*
 * Mutex-guarded pending buffer in front of a write function.
 */
#include "output.h"

#include "buffer.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

/* Past this much pending output, write even while input keeps coming: memory stays bounded. */
enum { FLUSH_THRESHOLD = 64 * 1024 };

struct output {
    pthread_mutex_t lock;
    out_write_fn write;
    void *sink;
    buffer pending;
    bool reader_idle;
    atomic_bool failed;
};

int out_write_fd(void *sink, const char *data, size_t length)
{
    int fd = *(const int *)sink;
    while (length > 0) {
        ssize_t n = write(fd, data, length);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        data += n;
        length -= (size_t)n;
    }
    return 0;
}

int out_new(out_write_fn write, void *sink, output **out)
{
    output *o = calloc(1, sizeof *o);
    if (!o)
        return -1;
    if (pthread_mutex_init(&o->lock, NULL) != 0) {
        free(o);
        return -1;
    }
    o->write = write;
    o->sink = sink;
    *out = o;
    return 0;
}

/* Called with the lock held. */
static int flush_locked(output *out)
{
    if (atomic_load(&out->failed)) {
        buf_clear(&out->pending);
        return -1;
    }
    if (out->pending.length == 0)
        return 0;
    int status = out->write(out->sink, out->pending.data, out->pending.length);
    buf_clear(&out->pending);
    if (status != 0) {
        atomic_store(&out->failed, true);
        return -1;
    }
    /* A burst of large lines must not pin its peak memory for the rest of the run. */
    if (out->pending.capacity > 4 * FLUSH_THRESHOLD)
        buf_free(&out->pending);
    return 0;
}

void out_free(output *out)
{
    if (!out)
        return;
    pthread_mutex_lock(&out->lock);
    flush_locked(out);
    pthread_mutex_unlock(&out->lock);
    buf_free(&out->pending);
    pthread_mutex_destroy(&out->lock);
    free(out);
}

int out_write_line(output *out, const struct iovec *parts, int part_count)
{
    if (atomic_load(&out->failed))
        return -1;
    size_t total = 1;
    for (int i = 0; i < part_count; i++)
        total += parts[i].iov_len;

    int status = 0;
    pthread_mutex_lock(&out->lock);
    if (buf_reserve(&out->pending, total) != 0) {
        status = -1;
        goto done;
    }
    for (int i = 0; i < part_count; i++)
        buf_append(&out->pending, parts[i].iov_base, parts[i].iov_len);
    buf_append_char(&out->pending, '\n');
    if (out->reader_idle || out->pending.length >= FLUSH_THRESHOLD)
        status = flush_locked(out);
done:
    pthread_mutex_unlock(&out->lock);
    return status;
}

int out_flush(output *out)
{
    pthread_mutex_lock(&out->lock);
    int status = flush_locked(out);
    pthread_mutex_unlock(&out->lock);
    return status;
}

void out_set_reader_idle(output *out, bool idle)
{
    pthread_mutex_lock(&out->lock);
    out->reader_idle = idle;
    if (idle)
        flush_locked(out);
    pthread_mutex_unlock(&out->lock);
}

bool out_failed(const output *out)
{
    return atomic_load(&((output *)out)->failed);
}
