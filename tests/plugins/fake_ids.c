/* SPDX-License-Identifier: MIT */
/*
 * Fixture, preloaded (LD_PRELOAD), not loaded as a plugin: makes the id calls lie, so that a
 * test can watch rpcd notice. RPCD_FAKE_SETRESUID_NOOP: setresuid does nothing and says it
 * worked. RPCD_FAKE_SETUID_WORKS: setuid and seteuid say they worked and do nothing.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

__attribute__((visibility("default"))) int setresuid(uid_t real, uid_t effective, uid_t saved)
{
    if (getenv("RPCD_FAKE_SETRESUID_NOOP"))
        return 0;
    int (*next)(uid_t, uid_t, uid_t);
    *(void **)&next = dlsym(RTLD_NEXT, "setresuid");
    return next ? next(real, effective, saved) : -1;
}

__attribute__((visibility("default"))) int setuid(uid_t uid)
{
    if (getenv("RPCD_FAKE_SETUID_WORKS"))
        return 0;
    int (*next)(uid_t);
    *(void **)&next = dlsym(RTLD_NEXT, "setuid");
    return next ? next(uid) : -1;
}

__attribute__((visibility("default"))) int seteuid(uid_t uid)
{
    if (getenv("RPCD_FAKE_SETUID_WORKS"))
        return 0;
    int (*next)(uid_t);
    *(void **)&next = dlsym(RTLD_NEXT, "seteuid");
    return next ? next(uid) : -1;
}
