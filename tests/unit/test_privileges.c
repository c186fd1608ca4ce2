/* SPDX-License-Identifier: MIT */
/*
 * Least privilege: no_new_privs set; user and group names resolved, unknown ones and a group
 * without a user refused; the switch to nobody/nogroup for good (every id, no supplementary
 * group, root not taken back) and its refusal without root. What changes ids runs in a forked
 * child, which reports through its exit status and a pipe. The switch needs root (as in CI).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/privileges.h"

#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* What a child found: its exit status (0: every check held) and the text it wrote. */
typedef struct child_report {
    int status;
    char text[512];
} child_report;

/* Runs body in a child; body returns the exit status and may write text to fd. */
static child_report run_in_child(int (*body)(int fd))
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        _exit(body(fds[1]));
    }
    close(fds[1]);
    child_report report = {0};
    size_t used = 0;
    ssize_t n;
    while ((n = read(fds[0], report.text + used, sizeof report.text - 1 - used)) > 0)
        used += (size_t)n;
    report.text[used] = '\0';
    close(fds[0]);
    int wait_status;
    assert_int_equal(waitpid(pid, &wait_status, 0), pid);
    assert_true(WIFEXITED(wait_status));
    report.status = WEXITSTATUS(wait_status);
    return report;
}

static void skip_unless_root(void)
{
    if (geteuid() != 0) {
        print_message("skipped: changing user needs root (CI runs this test as root)\n");
        skip();
    }
}

static int set_no_new_privs(int fd)
{
    (void)fd;
    char error[256];
    if (priv_no_new_privs(error, sizeof error) != 0)
        return 2;
    return prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? 0 : 3;
}

static void test_no_new_privs_set(void **state)
{
    (void)state;
    if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 0) {
        print_message("skipped: no_new_privs is already set for the tests, nothing to check\n");
        skip();
    }
    assert_int_equal(run_in_child(set_no_new_privs).status, 0);
}

static void test_resolve_nothing_changes_nothing(void **state)
{
    (void)state;
    priv_target target = {.change = true};
    char error[256] = "";
    assert_int_equal(priv_resolve(NULL, NULL, &target, error, sizeof error), 0);
    assert_false(target.change);
    assert_string_equal(error, "");
    /* And dropping to no target is no change. */
    assert_int_equal(priv_drop(&target, error, sizeof error), 0);
}

static void test_resolve_user_and_group(void **state)
{
    (void)state;
    const struct passwd *nobody = getpwnam("nobody");
    const struct group *nogroup = getgrnam("nogroup");
    assert_non_null(nobody);
    assert_non_null(nogroup);
    uid_t uid = nobody->pw_uid;
    gid_t own_gid = nobody->pw_gid, gid = nogroup->gr_gid;
    priv_target target;
    char error[256];
    assert_int_equal(priv_resolve("nobody", NULL, &target, error, sizeof error), 0);
    assert_true(target.change);
    assert_int_equal(target.uid, uid);
    assert_int_equal(target.gid, own_gid);
    assert_int_equal(priv_resolve("nobody", "nogroup", &target, error, sizeof error), 0);
    assert_true(target.change);
    assert_int_equal(target.uid, uid);
    assert_int_equal(target.gid, gid);
}

static void test_unknown_names_and_group_alone_refused(void **state)
{
    (void)state;
    priv_target target;
    char error[256];
    assert_int_equal(priv_resolve("rpcd-no-such-user", NULL, &target, error, sizeof error), -1);
    assert_string_equal(error, "user = rpcd-no-such-user in [rpcd]: no such user");
    assert_false(target.change);
    assert_int_equal(priv_resolve("root", "rpcd-no-such-group", &target, error, sizeof error), -1);
    assert_string_equal(error, "group = rpcd-no-such-group in [rpcd]: no such group");
    assert_false(target.change);
    assert_int_equal(priv_resolve(NULL, "nogroup", &target, error, sizeof error), -1);
    assert_string_equal(
        error, "group = nogroup in [rpcd] needs user as well (rpcd changes both or neither)");
    assert_false(target.change);
}

/* Exit statuses of drop_to_nobody: which check failed. */
enum {
    DROP_OK,
    DROP_RESOLVE,
    DROP_GROUPS_SET,
    DROP_FAILED,
    DROP_UIDS,
    DROP_GIDS,
    DROP_GROUPS_LEFT,
    DROP_ROOT_BACK
};

static int drop_to_nobody(int fd)
{
    char error[256];
    priv_target target;
    if (priv_resolve("nobody", "nogroup", &target, error, sizeof error) != 0)
        return DROP_RESOLVE;
    /* A supplementary group to be cleared. */
    gid_t extra[] = {0, 4};
    if (setgroups(2, extra) != 0)
        return DROP_GROUPS_SET;
    if (priv_drop(&target, error, sizeof error) != 0) {
        dprintf(fd, "%s", error);
        return DROP_FAILED;
    }
    uid_t ruid, euid, suid;
    gid_t rgid, egid, sgid;
    if (getresuid(&ruid, &euid, &suid) != 0 || ruid != target.uid || euid != target.uid ||
        suid != target.uid)
        return DROP_UIDS;
    if (getresgid(&rgid, &egid, &sgid) != 0 || rgid != target.gid || egid != target.gid ||
        sgid != target.gid)
        return DROP_GIDS;
    if (getgroups(0, NULL) != 0)
        return DROP_GROUPS_LEFT;
    if (setuid(0) == 0 || seteuid(0) == 0 || setgid(0) == 0)
        return DROP_ROOT_BACK;
    dprintf(fd, "%u %u", (unsigned)ruid, (unsigned)rgid);
    return DROP_OK;
}

static void test_drop_to_nobody_for_good(void **state)
{
    (void)state;
    skip_unless_root();
    child_report report = run_in_child(drop_to_nobody);
    if (report.status != DROP_OK)
        print_error("child failed with %d: %s\n", report.status, report.text);
    assert_int_equal(report.status, DROP_OK);
    char expected[64];
    snprintf(expected, sizeof expected, "%u %u", (unsigned)getpwnam("nobody")->pw_uid,
             (unsigned)getgrnam("nogroup")->gr_gid);
    assert_string_equal(report.text, expected);
}

/* Once nobody, a switch to another user is refused; to who it is already, it is no change. */
static int drop_without_root(int fd)
{
    char error[256];
    priv_target nobody;
    if (priv_resolve("nobody", "nogroup", &nobody, error, sizeof error) != 0 ||
        priv_drop(&nobody, error, sizeof error) != 0)
        return 1;
    if (priv_drop(&nobody, error, sizeof error) != 0)
        return 2;
    priv_target other = {.change = true, .uid = 1, .gid = 1};
    if (priv_drop(&other, error, sizeof error) == 0)
        return 3;
    dprintf(fd, "%s", error);
    return 0;
}

static void test_switch_refused_without_root(void **state)
{
    (void)state;
    skip_unless_root();
    child_report report = run_in_child(drop_without_root);
    assert_int_equal(report.status, 0);
    char expected[256];
    snprintf(expected, sizeof expected,
             "cannot switch to uid 1 and gid 1: rpcd runs as uid %u, and only root may change "
             "user",
             (unsigned)getpwnam("nobody")->pw_uid);
    assert_string_equal(report.text, expected);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_new_privs_set),
        cmocka_unit_test(test_resolve_nothing_changes_nothing),
        cmocka_unit_test(test_resolve_user_and_group),
        cmocka_unit_test(test_unknown_names_and_group_alone_refused),
        cmocka_unit_test(test_drop_to_nobody_for_good),
        cmocka_unit_test(test_switch_refused_without_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
