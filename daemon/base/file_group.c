/* SPDX-License-Identifier: MIT */
/*
 * Whether a group is private to one user: its members read from the name service (the accounts
 * whose primary group it is, and its own member list), then judged by fgroup_only_member.
 */
#include "base/file_group.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool fgroup_only_member(gid_t gid, const char *const *listed, const fgroup_user *users,
                        size_t count, uid_t owner, const char *owner_name)
{
    size_t members = 0;
    for (size_t i = 0; i < count; i++) {
        if (users[i].gid != gid)
            continue;
        if (users[i].uid != owner)
            return false;
        members++;
    }
    for (size_t i = 0; listed && listed[i]; i++) {
        if (!owner_name || strcmp(listed[i], owner_name) != 0)
            return false;
        members++;
    }
    return members > 0;
}

/* A buffer for the _r look-ups, grown while they say ERANGE. NULL: memory. */
static char *grow(char *buffer, size_t *size)
{
    *size = *size ? *size * 2 : 1024;
    char *bigger = *size <= 1024 * 1024 ? realloc(buffer, *size) : NULL;
    if (!bigger)
        free(buffer);
    return bigger;
}

/*
 * The accounts whose primary group is gid, into *users (new) and *count. Returns 0, or -1 when
 * they cannot all be read (memory, or the name service failed midway).
 */
static int primary_members(gid_t gid, fgroup_user **users, size_t *count)
{
    fgroup_user *found = NULL;
    size_t used = 0;
    int status = 0;
    setpwent();
    for (;;) {
        errno = 0;
        struct passwd *entry = getpwent();
        if (!entry) {
            /* The end, or an error: an enumeration cut short leaves the answer unknown. */
            status = errno == 0 || errno == ENOENT ? 0 : -1;
            break;
        }
        if (entry->pw_gid != gid)
            continue;
        fgroup_user *more = realloc(found, (used + 1) * sizeof *more);
        if (!more) {
            status = -1;
            break;
        }
        found = more;
        found[used++] = (fgroup_user){entry->pw_uid, entry->pw_gid};
    }
    endpwent();
    if (status != 0) {
        free(found);
        return -1;
    }
    *users = found;
    *count = used;
    return 0;
}

bool fgroup_private_to(gid_t gid, uid_t owner)
{
    struct group group, *found_group = NULL;
    struct passwd account, *found_account = NULL;
    char *group_text = NULL, *account_text = NULL;
    size_t group_size = 0, account_size = 0;
    int status;
    do
        status = (group_text = grow(group_text, &group_size))
                     ? getgrgid_r(gid, &group, group_text, group_size, &found_group)
                     : ENOMEM;
    while (status == ERANGE);
    do
        status = (account_text = grow(account_text, &account_size))
                     ? getpwuid_r(owner, &account, account_text, account_size, &found_account)
                     : ENOMEM;
    while (status == ERANGE);
    fgroup_user *users = NULL;
    size_t count = 0;
    bool only = found_group && found_account && primary_members(gid, &users, &count) == 0 &&
                fgroup_only_member(gid, (const char *const *)group.gr_mem, users, count, owner,
                                   account.pw_name);
    free(users);
    free(group_text);
    free(account_text);
    return only;
}
