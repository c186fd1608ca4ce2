/* SPDX-License-Identifier: MIT */
/*
 * The user-private-group exception of the file-safety rules: a file or directory writable by its
 * group is as safe as one writable by its owner alone when that group's only member is its owner
 * (umask 002 with a group per user, as Debian's OpenSSH accepts for StrictModes).
 */
#ifndef RPCD_FILE_GROUP_H
#define RPCD_FILE_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* One account, as the rule reads it: its id and its primary group. */
typedef struct fgroup_user {
    uid_t uid;
    gid_t gid;
} fgroup_user;

/*
 * Whether the members of group gid are its owner and no one else: every account of users (count
 * of them, all the accounts there are) whose primary group is gid is owner, every name of listed
 * (the group's own member list, NULL-terminated; NULL: none) is owner's (owner_name; NULL when
 * owner has no account, which then fails), and there is at least one. A group without members
 * (one a set-group-id program writes with) is not private to anyone.
 */
bool fgroup_only_member(gid_t gid, const char *const *listed, const fgroup_user *users,
                        size_t count, uid_t owner, const char *owner_name);

/*
 * fgroup_only_member over the system's accounts and groups (the name service: files, LDAP...).
 * False when gid or owner has no entry, or the accounts cannot be read. Not thread-safe (it
 * walks the accounts with getpwent): called only where fsafe_open is.
 */
bool fgroup_private_to(gid_t gid, uid_t owner);

#endif
