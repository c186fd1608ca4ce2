/* SPDX-License-Identifier: MIT */
/*
 * The thread's running call: one thread-local pointer, the innermost record of a chain that
 * nests as handlers do.
 */
#include "base/running_call.h"

static _Thread_local const running_call *current;

void running_call_enter(running_call *call)
{
    call->outer = current;
    current = call;
}

void running_call_leave(const running_call *call)
{
    current = call->outer;
}

const running_call *running_call_current(void)
{
    return current;
}
