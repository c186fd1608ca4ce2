/* SPDX-License-Identifier: MIT */
/*
 * The signal dispositions rpcd relies on besides the stop signals: its real-time signals (the
 * wake-up signal that interrupts the reader, the grace period's timer), the signals it ignores or
 * only logs, and the check after each plugin's init that none of them was taken over.
 */
#ifndef RPCD_SIGNALS_H
#define RPCD_SIGNALS_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

/*
 * The real-time signal that interrupts the reader's read() (see transport_stdio.c), or 0 before
 * sig_wake_install. Async-signal-safe.
 */
int sig_wake_number(void);

/*
 * Chooses the wake-up signal (the first free one from SIGRTMAX - 1 down to SIGRTMIN + 2) and
 * installs its handler, once; later calls do nothing. Returns 0, or -1 when no signal is free.
 */
int sig_wake_install(void);

/*
 * Unblocks the wake-up signal on this thread and marks it as one the signal interrupts (a
 * blocking read there then returns EINTR): the reading thread's. After sig_wake_install.
 */
void sig_wake_unblock_here(void);
/* How many wake-up signals have arrived so far (any thread's): one relaxed load, for a hook
 * before the reader's read() that only looks further when one came. */
unsigned sig_wake_count(void);

/* Whether sig_wake_unblock_here ran on this thread. */
bool sig_wake_reaches_here(void);

/*
 * The real-time signal of the grace period's timer (see grace.c), or 0 before sig_grace_install.
 * Async-signal-safe.
 */
int sig_grace_number(void);

/*
 * Installs handler (with SA_RESTART) for the grace period's signal, SIGRTMIN + 1, whatever it
 * had, and watches it; once, later calls do nothing. A plugin's init that takes it moves it to
 * another free one, as for the wake-up signal. Returns 0, or -1 with errno.
 */
int sig_grace_install(void (*handler)(int));

/*
 * Ignores SIGPIPE (a closed output is an EPIPE to handle, not a death), logs and ignores SIGHUP
 * (until serving starts, when reload.c takes it), ignores SIGUSR1 and SIGUSR2: none of them may
 * kill rpcd with calls in flight. Returns 0, or -1 with errno.
 */
int sig_take_others(void);

/*
 * Remembers the current disposition of number as one rpcd relies on: sig_check_after_init
 * compares against it. For the stop signals, after their handler is installed.
 */
void sig_watch(int number);

/*
 * After a plugin's init (plugin_name borrowed): logs a warning naming the plugin for every
 * watched disposition it changed. A real-time signal of rpcd's taken over (the wake-up signal, the
 * grace period's) is replaced by another free one, and a SIGPIPE put back to its default (which
 * would end rpcd on a closed output) is ignored again. Main thread only.
 */
void sig_check_after_init(const char *plugin_name);

/*
 * Fills set with every signal but the faults a thread raises itself (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL, SIGABRT): the mask of a thread of rpcd's that takes no signal sent to the process. A
 * fault while blocked would be a death without a report. Async-signal-safe.
 */
void sig_all_but_faults(sigset_t *set);

/*
 * pthread_create for a helper thread of rpcd's: it starts with sig_all_but_faults blocked, so
 * that a signal sent to the process reaches the threads that take it. Returns pthread_create's
 * status (0 or an error number). Any thread.
 */
int sig_start_quiet_thread(pthread_t *thread, void *(*main)(void *), void *argument);

/*
 * For a process on its way out that must not be kept alive by what it still does (writing to a
 * client that reads nothing, a lock that is never let go): SIGALRM, set to its default action and
 * unblocked on this thread, ends the process seconds from now. Async-signal-safe.
 */
void sig_arm_backstop(unsigned seconds);

#endif
