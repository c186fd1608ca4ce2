/* SPDX-License-Identifier: MIT */
/*
 * A POSIX timer (no thread: a server whose calls all run on the reading thread stays single-
 * threaded, which its locks rely on) and the handler of its signal, on the reading thread.
 */
#include "calls/grace.h"

#include "base/clock.h"
#include "base/log.h"
#include "base/signals.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    /* While rpcd's own code runs on the reading thread, it is on its way to the end: look again
     * this much later. */
    RETRY_MS = 10,
    /* The reading thread keeps the period itself once it waits for the calls; should its last
     * writes be held up (a client that reads nothing), the process ends this much later. */
    SLACK_MS = 1000,
    /* How long the output may stay busy before the calls that never ran go unanswered. */
    SEIZE_WAIT_MS = 200,
    /* Whatever holds up the forced end (a client that reads nothing), the process ends then. */
    BACKSTOP_S = 3,
};

static _Atomic(const grace_target *) watched;
static pthread_t reader;
static timer_t timer;
static atomic_bool started;
static atomic_bool forcing;
static _Atomic long long deadline_ms;
static atomic_int phase;

/* Fires the timer once, ms from now (at least 1 ms: a zero value would disarm it). */
static void fire_in(long long ms)
{
    if (ms < 1)
        ms = 1;
    struct itimerspec when;
    memset(&when, 0, sizeof when);
    when.it_value.tv_sec = (time_t)(ms / 1000);
    when.it_value.tv_nsec = (long)(ms % 1000) * 1000000L;
    timer_settime(timer, 0, &when, NULL);
}

/* One warning line on stderr, async-signal-safe. */
static void say(const char *text)
{
    log_line line;
    log_line_start(&line, LOG_WARNING);
    log_line_add(&line, text);
    log_line_end(&line);
}

/*
 * The period is over and a handler holds the reading thread, which this runs on, interrupting
 * plugin code: rpcd's own state is not half-changed by this thread, and the rest is only tried.
 */
static void force_end(const grace_target *target)
{
    if (atomic_exchange(&forcing, true))
        return;
    say("grace period over while a handler holds the reading thread: answering the calls that "
        "never ran, and exiting");
    sig_arm_backstop(BACKSTOP_S);
    bool seized = out_seize_dying(target->out, SEIZE_WAIT_MS) == 0;
    call_end_unstarted_from_signal(target->calls, target->out, seized);
    call_log_running_from_signal(target->calls,
                                 "still running at the end of the grace period; left unanswered");
    _exit(out_failed(target->out) ? target->exit_output_failed : target->exit_stopped);
}

static void on_grace_signal(int number)
{
    int saved_errno = errno;
    const grace_target *target = atomic_load(&watched);
    if (!target || !atomic_load(&started)) {
        errno = saved_errno;
        return;
    }
    if (!pthread_equal(pthread_self(), reader)) {
        pthread_kill(reader, number); /* sent by someone else than the timer */
        errno = saved_errno;
        return;
    }
    long long overdue = clock_now_ms() - atomic_load(&deadline_ms);
    if (overdue >= SLACK_MS) {
        say("grace period over and the last writes held up: exiting");
        _exit(target->exit_stopped);
    }
    if (atomic_load(&phase) != GRACE_SERVING)
        fire_in(SLACK_MS - overdue); /* the reading thread ends it; this only backs it up */
    else if (!call_in_handler())
        fire_in(RETRY_MS);
    else
        force_end(target);
    errno = saved_errno;
}

int grace_install(void)
{
    return sig_grace_install(on_grace_signal);
}

int grace_watch(const grace_target *target)
{
    struct sigevent event;
    memset(&event, 0, sizeof event);
    /* To the reading thread alone: never to a thread of a plugin's language runtime, whose
     * small stacks a handler without SA_ONSTACK could overrun. */
    event.sigev_notify = SIGEV_THREAD_ID;
    event._sigev_un._tid = gettid();
    if (grace_install() == 0)
        event.sigev_signo = sig_grace_number();
    if (event.sigev_signo == 0 || timer_create(CLOCK_MONOTONIC, &event, &timer) != 0) {
        log_message(LOG_WARNING, "cannot make the grace period's timer: %s", strerror(errno));
        return -1;
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, event.sigev_signo);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    reader = pthread_self();
    atomic_store(&started, false);
    atomic_store(&forcing, false);
    atomic_store(&phase, GRACE_SERVING);
    atomic_store(&watched, target);
    return 0;
}

void grace_start(void)
{
    const grace_target *target = atomic_load(&watched);
    if (!target || atomic_exchange(&started, true))
        return;
    atomic_store(&deadline_ms, clock_now_ms() + target->grace_ms);
    fire_in(target->grace_ms);
}

int grace_left_ms(void)
{
    const grace_target *target = atomic_load(&watched);
    if (!target)
        return 0;
    if (!atomic_load(&started))
        return target->grace_ms;
    long long left = atomic_load(&deadline_ms) - clock_now_ms();
    return left > 0 ? (int)left : 0;
}

void grace_set_phase(int now)
{
    atomic_store(&phase, now);
}

void grace_unwatch(void)
{
    if (!atomic_exchange(&watched, NULL))
        return;
    /* The handler stays: a signal still pending finds nothing watched and returns. */
    timer_delete(timer);
}
