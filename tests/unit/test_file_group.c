/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for file_group.c: a group is private to a user when the user is its one member,
 * by primary group or by its member list, and not when anyone else is, or no one; and the same
 * answer from the system's accounts for a group with no entry and for the user's own group.
 */
#include "base/file_group.h"

#include <grp.h>
#include <pwd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* Accounts: alice (1000, her group 1000), bob (1001, in 100 "users"), root (0, in 0). */
static const fgroup_user accounts[] = {{1000, 1000}, {1001, 100}, {0, 0}};
static const size_t account_count = sizeof accounts / sizeof accounts[0];

static void test_owner_alone_is_private(void **state)
{
    (void)state;
    /* A user private group: alice's primary group, with or without her in its list. */
    assert_true(fgroup_only_member(1000, NULL, accounts, account_count, 1000, "alice"));
    const char *const herself[] = {"alice", NULL};
    assert_true(fgroup_only_member(1000, herself, accounts, account_count, 1000, "alice"));
    /* A group she is listed in alone, whose primary group it is for nobody. */
    assert_true(fgroup_only_member(2000, herself, accounts, account_count, 1000, "alice"));
}

static void test_anyone_else_is_not(void **state)
{
    (void)state;
    /* bob's primary group is users: not alice's alone, whoever else is listed. */
    assert_false(fgroup_only_member(100, NULL, accounts, account_count, 1000, "alice"));
    const char *const both[] = {"alice", "bob", NULL};
    assert_false(fgroup_only_member(1000, both, accounts, account_count, 1000, "alice"));
    const char *const bob[] = {"bob", NULL};
    assert_false(fgroup_only_member(2000, bob, accounts, account_count, 1000, "alice"));
    /* Another account with alice's group as its primary one. */
    const fgroup_user shared[] = {{1000, 1000}, {1002, 1000}};
    assert_false(fgroup_only_member(1000, NULL, shared, 2, 1000, "alice"));
    /* No member at all (a set-group-id program's group), and an owner without an account. */
    assert_false(fgroup_only_member(3000, NULL, accounts, account_count, 1000, "alice"));
    const char *const herself[] = {"alice", NULL};
    assert_false(fgroup_only_member(2000, herself, accounts, account_count, 1000, NULL));
}

/* A gid no group has, or 0 when none was found below 60000. */
static gid_t unknown_gid(void)
{
    for (gid_t gid = 54321; gid < 60000; gid++)
        if (!getgrgid(gid))
            return gid;
    return 0;
}

static void test_from_the_system(void **state)
{
    (void)state;
    gid_t unknown = unknown_gid();
    if (unknown != 0)
        assert_false(fgroup_private_to(unknown, geteuid()));
    /* The user's own primary group, when the system says it has no other member. */
    struct passwd *self = getpwuid(geteuid());
    if (!self)
        skip();
    gid_t own = self->pw_gid;
    struct group *group = getgrgid(own);
    if (!group)
        skip();
    bool listed_alone = true;
    for (char **member = group->gr_mem; *member; member++)
        listed_alone &= strcmp(*member, self->pw_name) == 0;
    bool primary_alone = true;
    setpwent();
    for (struct passwd *entry; (entry = getpwent());)
        primary_alone &= entry->pw_gid != own || entry->pw_uid == geteuid();
    endpwent();
    assert_int_equal(fgroup_private_to(own, geteuid()), listed_alone && primary_alone);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_owner_alone_is_private),
        cmocka_unit_test(test_anyone_else_is_not),
        cmocka_unit_test(test_from_the_system),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
