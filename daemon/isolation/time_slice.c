/* SPDX-License-Identifier: MIT */
/*
 * The plugin host's scheduler time slice: read with sched_getattr, asked for with sched_setattr,
 * changing nothing else of the thread's scheduling.
 */
#include "isolation/time_slice.h"

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * The kernel's struct sched_attr, in its first version (SCHED_ATTR_SIZE_VER0, 48 bytes): glibc
 * wraps sched_setattr only from 2.41, and <linux/sched/types.h> clashes with <sched.h> on the
 * glibc this builds with. The first version leaves utilization clamping out, so it stays as is.
 */
struct slice_attr {
    uint32_t size;
    uint32_t policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime; /* for SCHED_OTHER and SCHED_BATCH: the slice, in nanoseconds */
    uint64_t deadline;
    uint64_t period;
};
_Static_assert(sizeof(struct slice_attr) == 48, "the kernel's first sched_attr");

/* The kernel's SCHED_FLAG_RESET_ON_FORK, the one flag a thread's scheduling keeps. */
enum { SLICE_RESET_ON_FORK = 0x01 };

static int get_attr(pid_t thread, struct slice_attr *attr)
{
    memset(attr, 0, sizeof *attr);
    return syscall(SYS_sched_getattr, thread, attr, sizeof *attr, 0) == 0 ? 0 : -1;
}

static bool has_slice(uint32_t policy)
{
    return policy == SCHED_OTHER || policy == SCHED_BATCH;
}

int slice_request(size_t slice_us, char *error, size_t error_size)
{
    snprintf(error, error_size, "%s", "");
    if (slice_us == 0)
        return 0;
    if (slice_us < SLICE_MIN_US || slice_us > SLICE_MAX_US) {
        snprintf(error, error_size, "a time slice of %zu us is outside %d to %d us", slice_us,
                 SLICE_MIN_US, SLICE_MAX_US);
        return -1;
    }
    struct slice_attr attr;
    if (get_attr(0, &attr) != 0) {
        snprintf(error, error_size, "cannot read the scheduling policy: %s", strerror(errno));
        return -1;
    }
    if (!has_slice(attr.policy))
        return 0;
    /* The thread's own nice value and policy: asking for another would need privilege, or take
     * one rpcd was not given. */
    attr.size = sizeof attr;
    attr.flags &= SLICE_RESET_ON_FORK;
    attr.runtime = (uint64_t)slice_us * 1000;
    if (syscall(SYS_sched_setattr, 0, &attr, 0) != 0) {
        snprintf(error, error_size, "cannot ask for a time slice of %zu us: %s", slice_us,
                 strerror(errno));
        return -1;
    }
    return 0;
}

int slice_of(pid_t thread, uint64_t *slice_ns)
{
    struct slice_attr attr;
    if (get_attr(thread, &attr) != 0)
        return -1;
    *slice_ns = has_slice(attr.policy) ? attr.runtime : 0;
    return 0;
}

int slice_honoured(void)
{
    struct slice_attr attr;
    if (get_attr(0, &attr) != 0 || !has_slice(attr.policy))
        return -1;
    return attr.runtime != 0;
}
