/* SPDX-License-Identifier: MIT */
/*
 * The one flag that lock.h's functions share across files: a lock taken in one file may be
 * released in another (slot_lock_live and the host functions).
 */
#include "base/lock.h"

atomic_bool lock_threads_seen;
