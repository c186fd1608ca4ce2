/* SPDX-License-Identifier: MIT */
/*
 * Dropping root once plugins are loaded, as OpenSSH's privilege separation does: every id
 * changed (real, effective, saved), no supplementary group left, and the result verified; a
 * process kept out of reach of its own user's others (not dumpable), capabilities given up.
 */
#include "base/privileges.h"

#include <errno.h>
#include <linux/capability.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int priv_no_new_privs(char *error, size_t error_size)
{
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        snprintf(error, error_size, "cannot set no_new_privs: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/*
 * The message for a getpwnam or getgrnam of name (the value of key) that found nothing: errno
 * set when the lookup itself failed, 0 when there is no such entry. Returns -1.
 */
static int lookup_failed(const char *key, const char *name, char *error, size_t error_size)
{
    if (errno)
        snprintf(error, error_size, "%s = %s in [rpcd]: %s", key, name, strerror(errno));
    else
        snprintf(error, error_size, "%s = %s in [rpcd]: no such %s", key, name, key);
    return -1;
}

int priv_resolve(const char *user, const char *group, priv_target *out, char *error,
                 size_t error_size)
{
    out->change = false;
    if (!user && !group)
        return 0;
    if (!user) {
        snprintf(error, error_size,
                 "group = %s in [rpcd] needs user as well (rpcd changes both or neither)", group);
        return -1;
    }
    errno = 0;
    const struct passwd *account = getpwnam(user);
    if (!account)
        return lookup_failed("user", user, error, error_size);
    out->uid = account->pw_uid;
    out->gid = account->pw_gid;
    if (group) {
        errno = 0;
        const struct group *entry = getgrnam(group);
        if (!entry)
            return lookup_failed("group", group, error, error_size);
        out->gid = entry->gr_gid;
    }
    out->change = true;
    return 0;
}

/* Whether every one of the three ids is wanted. */
static bool all_are(unsigned real, unsigned effective, unsigned saved, unsigned wanted)
{
    return real == wanted && effective == wanted && saved == wanted;
}

int priv_drop(const priv_target *target, char *error, size_t error_size)
{
    if (!target->change)
        return 0;
    unsigned uid = (unsigned)target->uid, gid = (unsigned)target->gid;
    if (geteuid() != 0) {
        /* Without root there is nothing to give up, and no right to change ids. */
        if (target->uid == geteuid() && target->gid == getegid())
            return 0;
        snprintf(error, error_size,
                 "cannot switch to uid %u and gid %u: rpcd runs as uid %u, and only root may "
                 "change user",
                 uid, gid, (unsigned)geteuid());
        return -1;
    }
    /* Groups first: once the user ids are changed, there is no right left to change them. */
    if (setgroups(0, NULL) != 0) {
        snprintf(error, error_size,
                 "cannot switch to uid %u: clearing the supplementary groups failed: %s (rpcd "
                 "must start as root to change user)",
                 uid, strerror(errno));
        return -1;
    }
    if (setresgid(target->gid, target->gid, target->gid) != 0) {
        snprintf(error, error_size, "cannot switch to gid %u: %s", gid, strerror(errno));
        return -1;
    }
    if (setresuid(target->uid, target->uid, target->uid) != 0) {
        snprintf(error, error_size, "cannot switch to uid %u: %s", uid, strerror(errno));
        return -1;
    }
    uid_t ruid, euid, suid;
    gid_t rgid, egid, sgid;
    if (getresuid(&ruid, &euid, &suid) != 0 || getresgid(&rgid, &egid, &sgid) != 0 ||
        !all_are(ruid, euid, suid, uid) || !all_are(rgid, egid, sgid, gid) ||
        getgroups(0, NULL) != 0) {
        snprintf(error, error_size, "switching to uid %u and gid %u left other ids behind", uid,
                 gid);
        return -1;
    }
    /* The switch made the process dumpable again (as fs.suid_dumpable says). */
    if (priv_not_dumpable(error, error_size) != 0)
        return -1;
    /* The proof: a process that dropped root for good cannot take it back. */
    if (uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) {
        snprintf(error, error_size, "after switching to uid %u, root could be taken back", uid);
        return -1;
    }
    if (uid != 0 && gid != 0 && (setgid(0) == 0 || setegid(0) == 0)) {
        snprintf(error, error_size, "after switching to gid %u, group 0 could be taken back", gid);
        return -1;
    }
    return 0;
}

int priv_not_dumpable(char *error, size_t error_size)
{
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
        snprintf(error, error_size, "cannot make the process not dumpable: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int priv_drop_capabilities(char *error, size_t error_size)
{
    /* The bounding set first (it takes CAP_SETPCAP): an exec then gains nothing back, root's
     * programs included. A capability this kernel does not know is EINVAL, the end of them. */
    for (unsigned long cap = 0; cap < 64; cap++) {
        if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0)
            break;
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EPERM) {
            snprintf(error, error_size, "cannot drop capability %lu: %s", cap, strerror(errno));
            return -1;
        }
    }
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct none[_LINUX_CAPABILITY_U32S_3];
    memset(none, 0, sizeof none);
    if (syscall(SYS_capset, &header, none) != 0) {
        snprintf(error, error_size, "cannot drop the capabilities: %s", strerror(errno));
        return -1;
    }
    /* The proof: none is left in the effective or permitted set. */
    if (syscall(SYS_capget, &header, none) != 0 || none[0].effective || none[0].permitted ||
        none[1].effective || none[1].permitted) {
        snprintf(error, error_size, "capabilities were left after dropping them");
        return -1;
    }
    return 0;
}
