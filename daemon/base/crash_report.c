/* SPDX-License-Identifier: MIT */
/*
 * The fatal-signal handlers and the exit() hook: one line naming what ran on the thread, the
 * finished responses written out, then the same death the process was heading for.
 */
#include "base/crash_report.h"
#include "base/running_call.h"

#include "base/log.h"
#include "base/signals.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Atomic(output *) watched_output;
static atomic_bool reporting;
static _Thread_local bool reporting_here;

/* What each fatal signal had before: the default, or a sanitizer's handler. */
static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
enum { FATAL_COUNT = sizeof fatal_signals / sizeof fatal_signals[0] };
static struct sigaction previous_actions[FATAL_COUNT];

/* Room for the handler and the write of the output; a fault deep in a recursion gets it whole. */
enum { ALT_STACK_BYTES = 64 * 1024 };
/* How long the report waits for another thread to let go of the output. */
/* The flush waits at most FLUSH_WAIT_MS for the output's locks; whatever else holds the report
 * up (a client that reads nothing), the process ends BACKSTOP_S seconds after it began. */
enum { FLUSH_WAIT_MS = 2000, BACKSTOP_S = 5 };
/* The most bytes of a request id quoted in the line. */
enum { ID_QUOTED_MOST = 128 };

void crash_report_watch(output *out)
{
    atomic_store(&watched_output, out);
}

/* The id as the client wrote it, cut at a character boundary when long. */
static void add_id(log_line *line, const char *id, size_t length)
{
    if (length > ID_QUOTED_MOST) {
        length = ID_QUOTED_MOST;
        while (length > 0 && ((unsigned char)id[length] & 0xC0) == 0x80)
            length--;
        log_line_addn(line, id, length);
        log_line_add(line, "...");
        return;
    }
    log_line_addn(line, id, length);
}

/* "plugin P, method M, request id I" or what stands for it. */
static void add_call(log_line *line, const running_call *call)
{
    if (!call) {
        log_line_add(line, "on a thread running no call");
        return;
    }
    log_line_add(line, "in plugin ");
    log_line_add(line, call->plugin ? call->plugin : "?");
    log_line_add(line, ", method ");
    log_line_add(line, call->method ? call->method : "?");
    if (call->id && call->id_length > 0) {
        log_line_add(line, ", request id ");
        add_id(line, call->id, call->id_length);
    } else {
        log_line_add(line, " (a notification)");
    }
}

/* What follows the number in the report: the signal's name. */
static const char *after_signal_number(int number)
{
    switch (number) {
    case SIGSEGV: return " (SIGSEGV) ";
    case SIGBUS: return " (SIGBUS) ";
    case SIGFPE: return " (SIGFPE) ";
    case SIGILL: return " (SIGILL) ";
    case SIGABRT: return " (SIGABRT) ";
    case SIGTRAP: return " (SIGTRAP) ";
    case SIGSYS: return " (SIGSYS) ";
    default: return " (?) ";
    }
}

/* The finished responses out, or a line saying why not. */
static void flush_output(void)
{
    output *out = atomic_load(&watched_output);
    if (!out || out_seize_dying(out, FLUSH_WAIT_MS) == 0)
        return;
    log_line line;
    log_line_start(&line, LOG_ERROR);
    log_line_add(&line, "finished responses could not be written: the output stayed busy or "
                        "failed");
    log_line_end(&line);
}

/*
 * The report of a death on its way, "<before><number><after>" and the call this thread runs,
 * then the finished responses written out. From here on, a fault on this thread is the default
 * death, and the process ends BACKSTOP_S seconds from now whatever holds the report up.
 */
static void report_and_flush(const char *before, int number, const char *after)
{
    reporting_here = true;
    sig_arm_backstop(BACKSTOP_S);
    log_line line;
    log_line_start(&line, LOG_ERROR);
    log_line_add(&line, before);
    log_line_add_int(&line, number);
    log_line_add(&line, after);
    add_call(&line, running_call_current());
    log_line_add(&line, ": writing out the finished responses and ending");
    log_line_end(&line);
    flush_output();
}

/*
 * The kernel's own default action, through the system calls themselves: a runtime that
 * intercepts sigaction and raise (ThreadSanitizer's) would otherwise emulate it with
 * exit(128 + number), and the parent would not see a death by signal.
 */
static void die_by_default(int number)
{
    struct kernel_action {
        void (*handler)(int);
        unsigned long flags;
        void (*restorer)(void);
        uint64_t mask;
    } action = {SIG_DFL, 0, NULL, 0};
    syscall(SYS_rt_sigaction, number, &action, NULL, sizeof action.mask);
    uint64_t unblock = 1ull << (number - 1);
    syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &unblock, NULL, sizeof unblock);
    syscall(SYS_tgkill, (pid_t)syscall(SYS_getpid), (pid_t)syscall(SYS_gettid), number);
    _exit(128 + number);
}

static void on_fatal_signal(int number, siginfo_t *info, void *context)
{
    (void)info;
    (void)context;
    int saved_errno = errno;
    if (reporting_here) /* the report itself failed: no second try */
        die_by_default(number);
    if (atomic_exchange(&reporting, true)) {
        /* Another thread is reporting and ends the process when done, or its backstop does. */
        for (;;)
            pause();
    }
    report_and_flush("signal ", number, after_signal_number(number));

    /* What came before us gets the signal next: a sanitizer's report, or the default death.
     * Raised again rather than left to come back as the faulting instruction runs again: a trap
     * does not repeat, nor does a fault under valgrind, which resumes after it. */
    for (int i = 0; i < FATAL_COUNT; i++) {
        if (fatal_signals[i] == number && previous_actions[i].sa_handler != SIG_DFL) {
            sigaction(number, &previous_actions[i], NULL);
            errno = saved_errno;
            raise(number);
        }
    }
    die_by_default(number);
}

/*
 * exit() while serving comes from a plugin (rpcd's own ways out of serving return from main after
 * the output is no longer watched, or use _exit): as a crash, but the exit status stays the
 * plugin's.
 */
static void on_process_exit(int status, void *unused)
{
    (void)unused;
    if (!atomic_load(&watched_output) || atomic_exchange(&reporting, true))
        return;
    /* A fault in what exit() runs next (a destructor) ends the process at once. */
    report_and_flush("exit(", status, ") called ");
}

static pthread_key_t stack_key;
static pthread_once_t stack_key_once = PTHREAD_ONCE_INIT;

static void free_thread_stack(void *memory)
{
    stack_t off = {.ss_flags = SS_DISABLE};
    sigaltstack(&off, NULL);
    munmap(memory, ALT_STACK_BYTES);
}

static void make_stack_key(void)
{
    if (pthread_key_create(&stack_key, free_thread_stack) != 0)
        stack_key = (pthread_key_t)-1;
}

/* An alternate stack for this thread, unless it has one. Returns the new one, or NULL. */
static void *set_alt_stack(void)
{
    stack_t current;
    if (sigaltstack(NULL, &current) != 0 || !(current.ss_flags & SS_DISABLE))
        return NULL;
    void *memory = mmap(NULL, ALT_STACK_BYTES, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (memory == MAP_FAILED)
        return NULL;
    stack_t stack = {.ss_sp = memory, .ss_size = ALT_STACK_BYTES, .ss_flags = 0};
    if (sigaltstack(&stack, NULL) != 0) {
        munmap(memory, ALT_STACK_BYTES);
        return NULL;
    }
    return memory;
}

void crash_report_thread_start(void)
{
    pthread_once(&stack_key_once, make_stack_key);
    if (stack_key == (pthread_key_t)-1)
        return;
    void *memory = set_alt_stack();
    if (memory && pthread_setspecific(stack_key, memory) != 0)
        free_thread_stack(memory);
}

int crash_report_install(void)
{
    /* The main thread's stack lives as long as the process: no need to free it. */
    set_alt_stack();
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_fatal_signal;
    /* Once only, and not held back while it runs: a fault inside the report is the default
     * death, never a loop. Everything else waits. */
    action.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND | SA_NODEFER;
    sigfillset(&action.sa_mask);
    for (int i = 0; i < FATAL_COUNT; i++) {
        sigdelset(&action.sa_mask, fatal_signals[i]);
        if (sigaction(fatal_signals[i], NULL, &previous_actions[i]) != 0)
            return -1;
    }
    for (int i = 0; i < FATAL_COUNT; i++)
        if (sigaction(fatal_signals[i], &action, NULL) != 0)
            return -1;
    return on_exit(on_process_exit, NULL) == 0 ? 0 : -1;
}
