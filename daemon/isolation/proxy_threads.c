/* SPDX-License-Identifier: MIT */
/*
 * An isolated plugin's proxy threads: the writer, which sends the frames queued for the host in
 * batches and kills a host that kept a call answered at its deadline past the grace period; and
 * the start and stop of both it and the reader (proxy_frames.c).
 */
#include "isolation/proxy_calls.h"

#include "base/clock.h"
#include "base/metrics.h"
#include "base/signals.h"
#include "isolation/channel.h"

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/*
 * Decides on a kill of a host that kept a call answered at its deadline past the grace period.
 * Lock held.
 */
static void check_kills(iso_proxy *proxy, long long now)
{
    long long next = LLONG_MAX;
    for (uint32_t i = 0; i < proxy->entry_count; i++) {
        pxy_entry *entry = &proxy->entries[i];
        if (!entry->active || !entry->kill_at)
            continue;
        if (entry->kill_at <= now && !proxy->kill_pending) {
            proxy->kill_pending = true;
            snprintf(proxy->kill_reason, sizeof proxy->kill_reason,
                     "killed: a call of %s went on past its timeout_ms and shutdown_grace_ms",
                     entry->method->name);
        } else if (entry->kill_at < next) {
            next = entry->kill_at;
        }
    }
    proxy->next_check = next;
}

static void *writer_main(void *context)
{
    iso_proxy *proxy = context;
    pthread_mutex_lock(&proxy->lock);
    while (!proxy->stopping) {
        long long now = clock_now_ms();
        if (now >= proxy->next_check)
            check_kills(proxy, now);
        if (proxy->kill_pending && proxy->state == PXY_UP) {
            kill(proxy->pid, SIGKILL); /* the reader sees the end of the channel */
            proxy->kill_pending = false;
            proxy->deadline_kills++;
            mx_count_plugin_event(proxy->config->name, MX_DEADLINE_KILL);
        }
        if (proxy->state == PXY_UP && proxy->pending.length > 0) {
            buffer batch = proxy->pending;
            proxy->pending = proxy->sending;
            proxy->sending = batch;
            proxy->writing = true;
            int fd = proxy->fd;
            pthread_mutex_unlock(&proxy->lock);
            /* A host that died is the reader's to notice: what failed here is lost with it. */
            chan_write_all(fd, batch.data, batch.length);
            pthread_mutex_lock(&proxy->lock);
            buf_clear(&proxy->sending);
            proxy->writing = false;
            pthread_cond_broadcast(&proxy->changed);
            continue;
        }
        proxy->writer_waiting = true;
        if (proxy->next_check == LLONG_MAX) {
            pthread_cond_wait(&proxy->wake, &proxy->lock);
        } else {
            struct timespec until = clock_timespec_of_ms(proxy->next_check);
            pthread_cond_timedwait(&proxy->wake, &proxy->lock, &until);
        }
        proxy->writer_waiting = false;
    }
    pthread_mutex_unlock(&proxy->lock);
    return NULL;
}

int pxy_start_threads(iso_proxy *proxy, void *(*reader_main)(void *))
{
    /* rpcd's signals go to its own threads: these two block them all but their own faults,
     * which a blocked mask would turn into a death without a report. */
    sigset_t all, old;
    sig_all_but_faults(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int status = pthread_create(&proxy->writer, NULL, writer_main, proxy);
    if (status == 0 && pthread_create(&proxy->reader, NULL, reader_main, proxy) != 0) {
        pthread_mutex_lock(&proxy->lock);
        proxy->stopping = true;
        pthread_cond_broadcast(&proxy->wake);
        pthread_mutex_unlock(&proxy->lock);
        pthread_join(proxy->writer, NULL);
        status = -1;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return status == 0 ? 0 : -1;
}

void pxy_stop_threads(iso_proxy *proxy)
{
    pthread_mutex_lock(&proxy->lock);
    proxy->stopping = true;
    proxy->state = PXY_STOPPING;
    pthread_cond_broadcast(&proxy->wake);
    pthread_cond_broadcast(&proxy->changed);
    /* The end of the channel tells the host to shut its plugin down and exit. */
    if (proxy->fd >= 0)
        shutdown(proxy->fd, SHUT_WR);
    pthread_mutex_unlock(&proxy->lock);
    pthread_join(proxy->writer, NULL);
    pthread_join(proxy->reader, NULL);
    pxy_close_channel(proxy);
    if (proxy->pidfd >= 0)
        close(proxy->pidfd);
    proxy->pidfd = -1;
}
