/* SPDX-License-Identifier: MIT */
/*
 * The plugin host's time slice: asked for and read back, inherited by a thread started after,
 * taken under SCHED_BATCH too with the thread's policy, flag and nice value kept, nothing asked
 * with 0 or under a policy without a slice, a request out of bounds refused, and
 * each failure of the kernel reported; on a kernel before 6.12, the request taken and ignored,
 * and said to be. Each case that changes scheduling runs in a thread of its own, which ends with
 * it; the kernel's refusals, and an older kernel's answers, come through a wrapped syscall().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "isolation/time_slice.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * syscall() fails with fail_errno when its number is fail_number (-1: never). Only the two calls
 * time_slice.c makes pass through: each takes its own count of arguments, since reading one
 * more than was passed is undefined.
 */
static long fail_number = -1;
static int fail_errno;
/* sched_getattr answers as a kernel before 6.12 does: no task has a slice (runtime 0). */
static int before_6_12;

long __real_syscall(long number, ...);
long __wrap_syscall(long number, ...);
long __wrap_syscall(long number, ...)
{
    if (number == fail_number) {
        errno = fail_errno;
        return -1;
    }
    /* Checked before any argument is read: another call's count is not known here. */
    assert_true(number == SYS_sched_getattr || number == SYS_sched_setattr);
    va_list args;
    va_start(args, number);
    long thread = va_arg(args, long), attr = va_arg(args, long), third = va_arg(args, long);
    long result = number == SYS_sched_getattr
                      ? __real_syscall(number, thread, attr, third, va_arg(args, long))
                      : __real_syscall(number, thread, attr, third);
    va_end(args);
    /* The runtime of the kernel's struct sched_attr, 24 bytes in. */
    if (number == SYS_sched_getattr && result == 0 && before_6_12)
        memset((char *)attr + 24, 0, sizeof(uint64_t));
    return result;
}

/* The kernel's default slice for this thread, which the test process runs with. */
static uint64_t kernel_slice(void)
{
    uint64_t slice = 0;
    assert_int_equal(slice_of(0, &slice), 0);
    return slice;
}

/* What a slice of 700 us reads back as: itself, or 0 where the kernel has no per-task slice
 * (before 6.12), which takes the request and ignores it. */
static uint64_t read_back_700;

typedef struct thread_body {
    void (*run)(void);
} thread_body;

static void *in_thread(void *body)
{
    ((thread_body *)body)->run();
    return NULL;
}

/* Runs body in a thread of its own, so that what it changes ends with that thread. */
static void run_in_thread(void (*body)(void))
{
    thread_body wrapped = {body};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, in_thread, &wrapped), 0);
    assert_int_equal(pthread_join(thread, NULL), 0);
}

static uint64_t inherited;
static void *read_slice(void *unused)
{
    (void)unused;
    assert_int_equal(slice_of(0, &inherited), 0);
    return NULL;
}

static void ask_and_read(void)
{
    char error[128];
    assert_int_equal(slice_request(700, error, sizeof error), 0);
    assert_string_equal(error, "");
    uint64_t slice = 1;
    assert_int_equal(slice_of(0, &slice), 0);
    assert_int_equal(slice, read_back_700);
    assert_int_equal(slice_of(gettid(), &slice), 0);
    assert_int_equal(slice, read_back_700);
    /* A thread started after inherits it: the plugin's threads run with the host's slice. */
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, read_slice, NULL), 0);
    assert_int_equal(pthread_join(thread, NULL), 0);
    assert_int_equal(inherited, read_back_700);
    /* Nothing else of the thread's scheduling changed. */
    assert_int_equal(sched_getscheduler(0), SCHED_OTHER);
}

static void test_asked_for_and_inherited(void **state)
{
    (void)state;
    uint64_t before = kernel_slice();
    read_back_700 = before ? 700000 : 0;
    if (!before)
        print_message("this kernel has no per-task time slice (before Linux 6.12): the request "
                      "is taken and reads back as 0\n");
    run_in_thread(ask_and_read);
    assert_int_equal(kernel_slice(), before); /* the test's own thread is untouched */
}

static void ask_for_nothing(void)
{
    uint64_t before = kernel_slice();
    char error[128];
    assert_int_equal(slice_request(0, error, sizeof error), 0);
    assert_int_equal(kernel_slice(), before);
}

/*
 * SCHED_BATCH has a slice as SCHED_OTHER does: asked for, it is taken, and the policy, the
 * reset-on-fork flag and the nice value stay as rpcd was started with them (chrt -b -R, nice).
 */
static void ask_under_batch(void)
{
    struct sched_param none = {0};
    assert_int_equal(sched_setscheduler(0, SCHED_BATCH | SCHED_RESET_ON_FORK, &none), 0);
    assert_int_equal(setpriority(PRIO_PROCESS, (id_t)gettid(), 5), 0);
    char error[128];
    assert_int_equal(slice_request(700, error, sizeof error), 0);
    assert_string_equal(error, "");
    uint64_t slice = 1;
    assert_int_equal(slice_of(0, &slice), 0);
    assert_int_equal(slice, read_back_700);
    assert_int_equal(sched_getscheduler(0), SCHED_BATCH | SCHED_RESET_ON_FORK);
    errno = 0;
    assert_int_equal(getpriority(PRIO_PROCESS, (id_t)gettid()), 5);
    assert_int_equal(errno, 0);
}

static void test_asked_for_under_batch(void **state)
{
    (void)state;
    read_back_700 = kernel_slice() ? 700000 : 0;
    run_in_thread(ask_under_batch);
}

static void ask_under_idle(void)
{
    struct sched_param none = {0};
    assert_int_equal(sched_setscheduler(0, SCHED_IDLE, &none), 0);
    char error[128];
    /* SCHED_IDLE has no slice: the request changes nothing, and the policy stays. */
    assert_int_equal(slice_request(700, error, sizeof error), 0);
    assert_int_equal(sched_getscheduler(0), SCHED_IDLE);
    uint64_t slice = 1;
    assert_int_equal(slice_of(0, &slice), 0);
    assert_int_equal(slice, 0);
}

/* 0 asks nothing; a policy without a slice is left as it is. */
static void test_nothing_to_ask(void **state)
{
    (void)state;
    run_in_thread(ask_for_nothing);
    run_in_thread(ask_under_idle);
}

static void honoured_under_idle(void)
{
    struct sched_param none = {0};
    assert_int_equal(sched_setscheduler(0, SCHED_IDLE, &none), 0);
    assert_int_equal(slice_honoured(), -1);
}

/*
 * Whether the kernel honours a slice, as rpcd's start-up warning reads it: from the thread's
 * own slice, 0 before Linux 6.12 (simulated here on a newer kernel); -1 when it cannot tell.
 */
static void test_honoured(void **state)
{
    (void)state;
    assert_int_equal(slice_honoured(), kernel_slice() != 0);
    before_6_12 = 1;
    assert_int_equal(slice_honoured(), 0);
    before_6_12 = 0;
    fail_number = SYS_sched_getattr;
    fail_errno = ENOSYS;
    assert_int_equal(slice_honoured(), -1);
    fail_number = -1;
    run_in_thread(honoured_under_idle);
}

/* The kernel's bounds, 100 us to 100 ms, hold before it is asked. */
static void test_out_of_bounds(void **state)
{
    (void)state;
    char error[128];
    assert_int_equal(slice_request(99, error, sizeof error), -1);
    assert_string_equal(error, "a time slice of 99 us is outside 100 to 100000 us");
    assert_int_equal(slice_request(100001, error, sizeof error), -1);
    assert_string_equal(error, "a time slice of 100001 us is outside 100 to 100000 us");
}

/* The kernel refusing to tell the policy, or to change the slice: said, nothing changed. */
static void test_kernel_refuses(void **state)
{
    (void)state;
    char error[128];
    uint64_t before = kernel_slice();
    fail_number = SYS_sched_setattr;
    fail_errno = EPERM;
    assert_int_equal(slice_request(700, error, sizeof error), -1);
    assert_string_equal(error, "cannot ask for a time slice of 700 us: Operation not permitted");
    fail_number = SYS_sched_getattr;
    fail_errno = ENOSYS;
    assert_int_equal(slice_request(700, error, sizeof error), -1);
    assert_string_equal(error, "cannot read the scheduling policy: Function not implemented");
    uint64_t slice;
    errno = 0;
    assert_int_equal(slice_of(0, &slice), -1);
    assert_int_equal(errno, ENOSYS);
    fail_number = -1;
    assert_int_equal(kernel_slice(), before);
    /* A cut message is still a string. */
    char tiny[8];
    assert_int_equal(slice_request(5, tiny, sizeof tiny), -1);
    assert_string_equal(tiny, "a time ");
}

/* A thread id that cannot be one: EINVAL; one that names no thread: ESRCH, as the kernel says. */
static void test_no_such_thread(void **state)
{
    (void)state;
    uint64_t slice;
    errno = 0;
    assert_int_equal(slice_of(-1, &slice), -1);
    assert_int_equal(errno, EINVAL);
    /* A thread id past pid_max: no such thread. */
    assert_int_equal(slice_of(0x3fffffff, &slice), -1);
    assert_int_equal(errno, ESRCH);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_asked_for_and_inherited), cmocka_unit_test(test_nothing_to_ask),
        cmocka_unit_test(test_out_of_bounds),           cmocka_unit_test(test_kernel_refuses),
        cmocka_unit_test(test_no_such_thread),          cmocka_unit_test(test_honoured),
        cmocka_unit_test(test_asked_for_under_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
