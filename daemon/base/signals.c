/* SPDX-License-Identifier: MIT */
/*
 * The real-time signals rpcd uses (the wake-up signal, the grace period's timer), the signals it
 * ignores, and the check that a plugin's init left the dispositions rpcd relies on as they were.
 */
#include "base/signals.h"

#include "base/log.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

/*
 * Why a real-time signal, chosen at start-up, rather than a fixed one such as SIGURG: language
 * runtimes loaded as plugins claim signals of their own. Go's runtime, even in a c-shared
 * library, preempts goroutines with SIGURG; taking SIGURG from it killed preemption and ran
 * rpcd's handler on goroutine stacks, and chaining to it cannot work either (Go does not forward
 * a SIGURG it did not send, and its handler restarts the read that must be interrupted). Go
 * leaves SIGRTMIN + 1 and up alone unless asked (signal.Notify); glibc keeps its own below
 * SIGRTMIN, the CLR takes SIGRTMIN, and valgrind takes SIGRTMAX. Starting from the top
 * avoids the libraries that count up from SIGRTMIN; a plugin that takes the one chosen anyway
 * is noticed after its init and rpcd moves to another.
 */
/* How many wake-up signals arrived: what the control socket's first peer is seen by. */
static atomic_uint wakes;

static void on_wake_signal(int number)
{
    (void)number;
    atomic_fetch_add_explicit(&wakes, 1, memory_order_relaxed);
}

unsigned sig_wake_count(void)
{
    return atomic_load_explicit(&wakes, memory_order_relaxed);
}

/*
 * A real-time signal rpcd uses for a job of its own, chosen at start-up, watched, and moved to
 * another free one when a plugin's init takes it.
 */
typedef struct realtime_use {
    const char *job;     /* what rpcd uses it for, in the warnings */
    const char *if_lost; /* what a plugin that takes it costs when no other is free */
    void (*handler)(int);
    int flags;
    atomic_int number; /* 0 before it is installed */
} realtime_use;

/* Without SA_RESTART, so that the read it lands in returns EINTR. */
static realtime_use wake_use = {"wake its reader", "a stop may now wait for the next line of input",
                                on_wake_signal, SA_ONSTACK, 0};
/* Its handler is grace.c's (sig_grace_install), and its timer signals the reading thread alone
 * (SIGEV_THREAD_ID), which runs rpcd's code or a quick handler: so no SA_ONSTACK, with which
 * valgrind reports invalid writes to the stack of the thread whose wait the handler interrupts. */
static realtime_use grace_use = {"end a stop's grace period",
                                 "a handler that holds the reading thread may now keep a stop "
                                 "from ending after its grace period",
                                 NULL, SA_RESTART, 0};

static int install_use(const realtime_use *use, int number)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = use->handler;
    action.sa_flags = use->flags;
    sigemptyset(&action.sa_mask);
    return sigaction(number, &action, NULL);
}

/* The first free real-time signal below before (from the top), installed; 0 when none is. */
static int choose_free(const realtime_use *use, int before)
{
    for (int number = before - 1; number >= SIGRTMIN + 2; number--) {
        struct sigaction current;
        if (sigaction(number, NULL, &current) != 0 || current.sa_handler != SIG_DFL)
            continue;
        if (install_use(use, number) == 0)
            return number;
    }
    return 0;
}

int sig_wake_number(void)
{
    return atomic_load(&wake_use.number);
}

int sig_wake_install(void)
{
    if (atomic_load(&wake_use.number) != 0)
        return 0;
    int number = choose_free(&wake_use, SIGRTMAX);
    if (number == 0)
        return -1;
    atomic_store(&wake_use.number, number);
    sig_watch(number);
    log_message(LOG_DEBUG, "signal %d wakes the reader", number);
    return 0;
}

/* Set on the threads whose blocking calls the wake-up signal interrupts. */
static _Thread_local bool wake_reaches_here;

void sig_wake_unblock_here(void)
{
    sigset_t wake;
    sigemptyset(&wake);
    sigaddset(&wake, sig_wake_number());
    pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
    wake_reaches_here = true;
}

bool sig_wake_reaches_here(void)
{
    return wake_reaches_here;
}

int sig_grace_number(void)
{
    return atomic_load(&grace_use.number);
}

int sig_grace_install(void (*handler)(int))
{
    if (atomic_load(&grace_use.number) != 0)
        return 0;
    /* SIGRTMIN + 1 is kept out of the wake-up signal's range for it; Go leaves it alone. */
    grace_use.handler = handler;
    int number = SIGRTMIN + 1;
    if (install_use(&grace_use, number) != 0)
        return -1;
    atomic_store(&grace_use.number, number);
    sig_watch(number);
    return 0;
}

/*
 * SIGHUP asks rpcd to reload, which it does only while serving (reload.c takes the signal
 * then); before, it says so instead of dying. A handler rather than SIG_IGN: an ignored signal
 * stays ignored in the programs a plugin starts.
 */
static void on_ignored_signal(int number)
{
    log_signal(number == SIGHUP ? LOG_WARNING : LOG_INFO, number,
               number == SIGHUP ? "ignored: rpcd reloads only while serving" : "ignored");
}

int sig_take_others(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    sigemptyset(&action.sa_mask);
    /* A client that closes its end must not kill rpcd mid-write: EPIPE is handled instead. */
    action.sa_handler = SIG_IGN;
    if (sigaction(SIGPIPE, &action, NULL) != 0)
        return -1;
    sig_watch(SIGPIPE);
    /* Without SA_RESTART, as for the stop signals (see main.c): a runtime that defers signals to
     * the end of a system call (ThreadSanitizer's) would otherwise run it only with the next
     * line of input. */
    action.sa_handler = on_ignored_signal;
    action.sa_flags = SA_ONSTACK;
    if (sigaction(SIGHUP, &action, NULL) != 0 || sigaction(SIGUSR1, &action, NULL) != 0 ||
        sigaction(SIGUSR2, &action, NULL) != 0)
        return -1;
    return 0;
}

/* What rpcd set for a signal it relies on. */
typedef struct watched {
    int number;
    void (*handler)(int);
} watched;

enum { WATCHED_MOST = 8 };
static watched watch_list[WATCHED_MOST];
static int watch_count;

void sig_watch(int number)
{
    struct sigaction current;
    if (sigaction(number, NULL, &current) != 0)
        return;
    for (int i = 0; i < watch_count; i++) {
        if (watch_list[i].number == number) {
            watch_list[i].handler = current.sa_handler;
            return;
        }
    }
    if (watch_count < WATCHED_MOST)
        watch_list[watch_count++] = (watched){number, current.sa_handler};
}

static const char *signal_name(int number)
{
    switch (number) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGPIPE: return "SIGPIPE";
    default: return "a real-time signal";
    }
}

/* A signal rpcd uses for a job of its own was taken: moves to another free one. */
static void move_use(realtime_use *use, const char *plugin_name, watched *entry)
{
    int old = entry->number;
    int number = choose_free(use, old);
    if (number == 0)
        number = choose_free(use, SIGRTMAX);
    if (number == 0) {
        log_message(LOG_WARNING,
                    "plugin %s took signal %d, which rpcd uses to %s, and no other real-time "
                    "signal is free: %s",
                    plugin_name, old, use->job, use->if_lost);
        entry->handler = NULL; /* warned once */
        return;
    }
    log_message(LOG_WARNING,
                "plugin %s took signal %d, which rpcd used to %s; rpcd uses signal %d instead",
                plugin_name, old, use->job, number);
    entry->number = number;
    struct sigaction current;
    entry->handler = sigaction(number, NULL, &current) == 0 ? current.sa_handler : NULL;
    atomic_store(&use->number, number);
}

void sig_check_after_init(const char *plugin_name)
{
    for (int i = 0; i < watch_count; i++) {
        watched *entry = &watch_list[i];
        struct sigaction current;
        if (!entry->handler || sigaction(entry->number, NULL, &current) != 0 ||
            current.sa_handler == entry->handler)
            continue;
        int number = entry->number;
        if (number == atomic_load(&wake_use.number)) {
            move_use(&wake_use, plugin_name, entry);
        } else if (number == atomic_load(&grace_use.number)) {
            move_use(&grace_use, plugin_name, entry);
        } else if (number == SIGPIPE && current.sa_handler == SIG_DFL) {
            log_message(LOG_WARNING,
                        "plugin %s put SIGPIPE back to its default, which ends rpcd when the "
                        "client closes its output: rpcd ignores it again",
                        plugin_name);
            struct sigaction ignore;
            memset(&ignore, 0, sizeof ignore);
            ignore.sa_handler = SIG_IGN;
            sigemptyset(&ignore.sa_mask);
            sigaction(SIGPIPE, &ignore, NULL);
        } else if (number == SIGPIPE) {
            log_message(LOG_WARNING,
                        "plugin %s handles SIGPIPE, which rpcd ignores: a write of its own to a "
                        "closed stdout or stderr may end rpcd (a Go plugin calls "
                        "signal.Ignore(syscall.SIGPIPE) in its init)",
                        plugin_name);
            entry->handler = current.sa_handler; /* warned once */
        } else {
            log_message(LOG_WARNING,
                        "plugin %s took over signal %d (%s): rpcd no longer stops gracefully on "
                        "it",
                        plugin_name, number, signal_name(number));
            entry->handler = current.sa_handler; /* warned once */
        }
    }
}

void sig_arm_backstop(unsigned seconds)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_DFL;
    sigaction(SIGALRM, &action, NULL);
    sigset_t alarm_only;
    sigemptyset(&alarm_only);
    sigaddset(&alarm_only, SIGALRM);
    pthread_sigmask(SIG_UNBLOCK, &alarm_only, NULL);
    alarm(seconds);
}

void sig_all_but_faults(sigset_t *set)
{
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    sigfillset(set);
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        sigdelset(set, faults[i]);
}

int sig_start_quiet_thread(pthread_t *thread, void *(*main)(void *), void *argument)
{
    sigset_t all, old;
    sig_all_but_faults(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int error = pthread_create(thread, NULL, main, argument);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return error;
}
