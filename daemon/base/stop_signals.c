/* SPDX-License-Identifier: MIT */
/*
 * The stop signals' set, and holding them back on the reading thread while it waits for calls.
 */
#include "base/stop_signals.h"

#include <pthread.h>

void stop_signals_fill(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
}

void stop_signals_hold(void)
{
    sigset_t set;
    stop_signals_fill(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
}

void stop_signals_deliver_pending(void)
{
    sigset_t pending;
    if (sigpending(&pending) != 0 ||
        (sigismember(&pending, SIGTERM) != 1 && sigismember(&pending, SIGINT) != 1))
        return;
    /* The kernel delivers a pending signal as the mask opens: the handler runs here. */
    stop_signals_release();
    stop_signals_hold();
}

void stop_signals_release(void)
{
    sigset_t set;
    stop_signals_fill(&set);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}
