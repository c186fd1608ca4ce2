/* SPDX-License-Identifier: MIT */
/*
 * fsafe_open and fsafe_dlopen on real files in a temporary directory: every directory from the
 * file's real location up to "/", symbolic links walked component by component, files that are
 * not regular refused without blocking, and a load of exactly the descriptor checked.
 */
#include "base/file_safety.h"

#include "base/file_group.h"

#include <rpcd/plugin.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

typedef struct temp {
    char dir[PATH_MAX]; /* real path: the messages name real paths */
} temp;

static int make_temp(void **state)
{
    temp *t = calloc(1, sizeof *t);
    const char *base = getenv("TMPDIR");
    char pattern[PATH_MAX];
    snprintf(pattern, sizeof pattern, "%s/rpcd-fsafe-XXXXXX", base ? base : "/tmp");
    if (!t || !mkdtemp(pattern) || !realpath(pattern, t->dir)) {
        free(t);
        return -1;
    }
    *state = t;
    return 0;
}

static int remove_temp(void **state)
{
    temp *t = *state;
    char command[PATH_MAX + 32];
    snprintf(command, sizeof command, "rm -rf '%s'", t->dir);
    int status = system(command);
    free(t);
    return status == 0 ? 0 : -1;
}

/* printf into a new string. */
__attribute__((format(printf, 1, 2))) static char *format(const char *pattern, ...)
{
    va_list args;
    va_start(args, pattern);
    char *text;
    int n = vasprintf(&text, pattern, args);
    va_end(args);
    assert_true(n >= 0);
    return text;
}

static char *make_dir(const temp *t, const char *name, mode_t mode)
{
    char *path = format("%s/%s", t->dir, name);
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(chmod(path, mode), 0); /* whatever the umask */
    return path;
}

static char *make_file(const temp *t, const char *name, const char *text, mode_t mode)
{
    char *path = format("%s/%s", t->dir, name);
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    assert_true(fputs(text, file) >= 0);
    assert_int_equal(fclose(file), 0);
    assert_int_equal(chmod(path, mode), 0);
    return path;
}

/* Opens path, expects success and that the descriptor reads text. */
static void expect_opens(const char *path, bool check, const char *text)
{
    int fd = -1;
    char reason[512] = "";
    int status = fsafe_open(path, check, &fd, reason, sizeof reason);
    if (status != 0)
        fail_msg("%s refused: %s", path, reason);
    char buffer[256];
    ssize_t n = read(fd, buffer, sizeof buffer - 1);
    assert_true(n >= 0);
    buffer[n] = '\0';
    assert_string_equal(buffer, text);
    assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
    /* Opened without blocking, handed over blocking: a reader of it never sees EAGAIN. */
    assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
    close(fd);
}

/* Opens path, expects status and a one-line reason holding every NULL-terminated needle. */
static void expect_refused(const char *path, bool check, int expected, const char *const needles[])
{
    int fd = -1;
    char reason[1024] = "";
    int status = fsafe_open(path, check, &fd, reason, sizeof reason);
    if (status == 0)
        close(fd);
    if (status != expected)
        fail_msg("%s: status %d, expected %d (%s)", path, status, expected, reason);
    for (size_t i = 0; needles[i]; i++)
        if (!strstr(reason, needles[i]))
            fail_msg("%s: '%s' does not say '%s'", path, reason, needles[i]);
    assert_null(strchr(reason, '\n'));
}

static void test_safe_file_opens(void **state)
{
    temp *t = *state;
    char *sub = make_dir(t, "sub", 0755);
    char *file = make_file(t, "sub/f", "content", 0644);
    expect_opens(file, true, "content");
    /* "." and "..", and repeated slashes, are walked like the kernel would. */
    char *twisted = format("%s/./sub//../sub/f", t->dir);
    expect_opens(twisted, true, "content");
    /* A relative path starts at the working directory, whose own ancestors are checked. */
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(sub), 0);
    expect_opens("f", true, "content");
    expect_opens("../sub/f", true, "content");
    assert_int_equal(chdir(cwd), 0);
    free(twisted);
    free(file);
    free(sub);
}

/*
 * A group that has members besides the user running the test, for a file of the user's to be
 * put in: nogroup when root, else one of the user's own. -1 when there is none.
 */
static gid_t shared_group(void)
{
    if (geteuid() == 0)
        return getgrgid(65534) && !fgroup_private_to(65534, 0) ? 65534 : (gid_t)-1;
    gid_t groups[256];
    int count = getgroups(256, groups);
    for (int i = 0; i < count; i++)
        if (!fgroup_private_to(groups[i], geteuid()))
            return groups[i];
    return (gid_t)-1;
}

/* The user's own group, when it is private to the user (umask 002 is then safe). -1: none. */
static gid_t private_group(void)
{
    return fgroup_private_to(getegid(), geteuid()) ? getegid() : (gid_t)-1;
}

static void test_file_writable_or_foreign(void **state)
{
    temp *t = *state;
    char *file = make_file(t, "f", "x", 0666);
    expect_refused(file, true, FSAFE_ERR_UNSAFE,
                   (const char *const[]){"the file", file, "writable by others", "chmod go-w",
                                         "--insecure", NULL});
    assert_int_equal(chmod(file, 0664), 0);
    expect_opens(file, false, "x"); /* --insecure */
    /* Writable by a group that others are in: refused. */
    gid_t shared = shared_group();
    if (shared != (gid_t)-1) {
        assert_int_equal(chown(file, (uid_t)-1, shared), 0);
        expect_refused(
            file, true, FSAFE_ERR_UNSAFE,
            (const char *const[]){file, "writable by its group", "not its owner's alone", NULL});
    }
    /* By a group whose only member is the file's owner (umask 002 with user private groups):
     * nobody else can write it. */
    gid_t own = private_group();
    if (own != (gid_t)-1) {
        assert_int_equal(chown(file, (uid_t)-1, own), 0);
        expect_opens(file, true, "x");
    }
    if (geteuid() == 0) {
        assert_int_equal(chmod(file, 0644), 0);
        assert_int_equal(chown(file, 65534, 65534), 0);
        expect_refused(file, true, FSAFE_ERR_UNSAFE,
                       (const char *const[]){"owned by uid 65534", "run chown 0", NULL});
    }
    free(file);
}

/* Defect: only the file's own directory was looked at. Every ancestor is now. */
static void test_ancestor_writable(void **state)
{
    temp *t = *state;
    char *open_dir = make_dir(t, "open", 0777);
    char *inner = make_dir(t, "open/inner", 0755);
    char *deeper = make_dir(t, "open/inner/deeper", 0755);
    char *file = make_file(t, "open/inner/deeper/f", "x", 0644);
    char *fix = format("chmod go-w %s", open_dir);
    expect_refused(
        file, true, FSAFE_ERR_UNSAFE,
        (const char *const[]){"the directory", open_dir, "writable by others", fix, NULL});
    expect_opens(file, false, "x");
    assert_int_equal(chmod(open_dir, 0775), 0);
    gid_t shared = shared_group(), own = private_group();
    if (shared != (gid_t)-1) {
        assert_int_equal(chown(open_dir, (uid_t)-1, shared), 0);
        expect_refused(file, true, FSAFE_ERR_UNSAFE,
                       (const char *const[]){open_dir, "writable by its group", NULL});
    }
    if (own != (gid_t)-1) {
        assert_int_equal(chown(open_dir, (uid_t)-1, own), 0);
        expect_opens(file, true, "x");
    }
    /* Sticky, as /tmp: fine when root's, since others cannot rename what is not theirs. */
    assert_int_equal(chmod(open_dir, 01777), 0);
    if (geteuid() == 0)
        expect_opens(file, true, "x");
    else
        expect_refused(file, true, FSAFE_ERR_UNSAFE, (const char *const[]){open_dir, NULL});
    if (geteuid() == 0) {
        assert_int_equal(chmod(open_dir, 0755), 0);
        assert_int_equal(chown(inner, 65534, 65534), 0);
        char *chown_fix = format("run chown 0 %s", inner);
        expect_refused(
            file, true, FSAFE_ERR_UNSAFE,
            (const char *const[]){"the directory", inner, "owned by uid 65534", chown_fix, NULL});
        free(chown_fix);
    }
    free(fix);
    free(file);
    free(deeper);
    free(inner);
    free(open_dir);
}

/* Defect: a link's own directory was checked, not its target's. */
static void test_symlinks_walked(void **state)
{
    temp *t = *state;
    char *safe = make_dir(t, "safe", 0755);
    char *open_dir = make_dir(t, "open", 0777);
    char *good = make_file(t, "safe/good", "good", 0644);
    char *bad = make_file(t, "open/bad", "bad", 0644);

    /* safe/to-open -> ../open/bad: the target's directory is world-writable. */
    char *link = format("%s/safe/to-open", t->dir);
    assert_int_equal(symlink("../open/bad", link), 0);
    expect_refused(link, true, FSAFE_ERR_UNSAFE,
                   (const char *const[]){open_dir, "writable by others", NULL});

    /* A link to a directory, absolute, then a relative one inside it: both followed. */
    char *dir_link = format("%s/safe/dir", t->dir);
    assert_int_equal(symlink(safe, dir_link), 0);
    char *relative = format("%s/safe/rel", t->dir);
    assert_int_equal(symlink("good", relative), 0);
    char *through = format("%s/safe/dir/dir/rel", t->dir);
    expect_opens(through, true, "good");

    /* A link in a world-writable directory: the directory refuses it. */
    char *planted = format("%s/open/link", t->dir);
    assert_int_equal(symlink(good, planted), 0);
    expect_refused(planted, true, FSAFE_ERR_UNSAFE, (const char *const[]){open_dir, NULL});

    /* A loop ends. */
    char *loop = format("%s/safe/loop", t->dir);
    assert_int_equal(symlink("loop", loop), 0);
    expect_refused(loop, true, FSAFE_ERR_OPEN,
                   (const char *const[]){"Too many levels of symbolic links", NULL});

    /* A link someone else owns, in a sticky directory, as protected_symlinks refuses it. */
    if (geteuid() == 0) {
        char *sticky = make_dir(t, "sticky", 01777);
        char *theirs = format("%s/sticky/theirs", t->dir);
        assert_int_equal(symlink(good, theirs), 0);
        assert_int_equal(lchown(theirs, 65534, 65534), 0);
        expect_refused(
            theirs, true, FSAFE_ERR_UNSAFE,
            (const char *const[]){"the symbolic link", theirs, "owned by uid 65534", NULL});
        free(theirs);
        free(sticky);
    }
    free(loop);
    free(planted);
    free(through);
    free(relative);
    free(dir_link);
    free(link);
    free(bad);
    free(good);
    free(open_dir);
    free(safe);
}

/* Forty links in a row are followed, as the kernel follows them; the forty-first is ELOOP. */
static void test_link_chain_limit(void **state)
{
    temp *t = *state;
    char *good = make_file(t, "good", "good", 0644);
    char *previous = strdup("good");
    for (int i = 1; i <= 41; i++) {
        char *name = format("l%d", i);
        char *link = format("%s/%s", t->dir, name);
        assert_int_equal(symlink(previous, link), 0);
        if (i == 40)
            expect_opens(link, true, "good");
        if (i == 41)
            expect_refused(link, true, FSAFE_ERR_OPEN,
                           (const char *const[]){"Too many levels of symbolic links", NULL});
        free(previous);
        previous = name;
        free(link);
    }
    free(previous);
    free(good);
}

/* A name longer than NAME_MAX is refused before it is copied anywhere, in so many words. */
static void test_name_too_long(void **state)
{
    temp *t = *state;
    char long_name[NAME_MAX + 2];
    memset(long_name, 'n', NAME_MAX + 1);
    long_name[NAME_MAX + 1] = '\0';
    char *path = format("%s/%s", t->dir, long_name);
    int fd = -1;
    char reason[512] = "";
    assert_int_equal(fsafe_open(path, true, &fd, reason, sizeof reason), FSAFE_ERR_OPEN);
    assert_string_equal(reason, strerror(ENAMETOOLONG));
    free(path);
}

/* Defect: a FIFO hung start-up. It, and every other file that is not regular, is refused. */
static void test_not_regular_files(void **state)
{
    temp *t = *state;
    char *fifo = format("%s/fifo", t->dir);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    for (int check = 0; check < 2; check++) {
        expect_refused(fifo, check, FSAFE_ERR_TYPE,
                       (const char *const[]){"not a regular file", fifo, "a FIFO", NULL});
        expect_refused("/dev/null", check, FSAFE_ERR_TYPE,
                       (const char *const[]){"/dev/null is a character device", NULL});
        expect_refused(t->dir, check, FSAFE_ERR_TYPE,
                       (const char *const[]){t->dir, "is a directory", NULL});
    }
    char *slash = format("%s/", t->dir);
    expect_refused(slash, true, FSAFE_ERR_TYPE, (const char *const[]){"is a directory", NULL});
    char *missing = format("%s/none/f", t->dir);
    expect_refused(missing, true, FSAFE_ERR_OPEN,
                   (const char *const[]){"No such file or directory", NULL});
    char *file = make_file(t, "f", "x", 0644);
    char *under_file = format("%s/f/g", t->dir);
    expect_refused(under_file, true, FSAFE_ERR_OPEN,
                   (const char *const[]){"Not a directory", NULL});
    expect_refused("", true, FSAFE_ERR_OPEN, (const char *const[]){"No such file", NULL});
    free(under_file);
    free(file);
    free(missing);
    free(slash);
    free(fifo);
}

/* A bound on the walk: more than 512 directories below "/" is refused, not walked. */
static void test_too_deep(void **state)
{
    temp *t = *state;
    char path[PATH_MAX];
    int length = snprintf(path, sizeof path, "%s", t->dir);
    for (int level = 0; level < 520; level++) {
        length += snprintf(path + length, sizeof path - (size_t)length, "/d");
        assert_int_equal(mkdir(path, 0755), 0);
    }
    snprintf(path + length, sizeof path - (size_t)length, "/f");
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    assert_int_equal(fclose(file), 0);
    expect_refused(path, false, FSAFE_ERR_OPEN,
                   (const char *const[]){"more than 512 directories deep", NULL});
}

static const rpcd_plugin_info *entry_of(void *handle)
{
    rpcd_plugin_entry_fn entry;
    *(void **)&entry = dlsym(handle, RPCD_PLUGIN_ENTRY_SYMBOL);
    assert_non_null(entry);
    return entry();
}

/*
 * Two plugins opened one after the other get the same descriptor number: the second must not be
 * taken for the first, which the dynamic loader would do by name.
 */
static void test_dlopen_loads_each_descriptor(void **state)
{
    (void)state;
    static const char *const names[] = {"RPCD_PLUGIN_ECHO", "RPCD_PLUGIN_SPEC", "RPCD_PLUGIN_ECHO"};
    static const char *const expected[] = {"echo", "spec", "echo"};
    void *handles[3];
    for (size_t i = 0; i < 3; i++) {
        const char *path = getenv(names[i]);
        assert_non_null(path);
        int fd;
        char reason[512];
        if (fsafe_open(path, false, &fd, reason, sizeof reason) != 0)
            fail_msg("%s: %s", path, reason);
        handles[i] = fsafe_dlopen(fd, RTLD_NOW | RTLD_LOCAL, reason, sizeof reason);
        close(fd);
        if (!handles[i])
            fail_msg("%s: %s", path, reason);
        assert_string_equal(entry_of(handles[i])->name, expected[i]);
    }
    assert_ptr_not_equal(handles[0], handles[1]);
    for (size_t i = 0; i < 3; i++)
        dlclose(handles[i]);

    /* Not a shared object: dlerror's reason. */
    char text[] = "/tmp/rpcd-fsafe-text-XXXXXX";
    int fd = mkstemp(text);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "text\n", 5), 5);
    char reason[512];
    assert_null(fsafe_dlopen(fd, RTLD_NOW, reason, sizeof reason));
    assert_non_null(strstr(reason, "not a loadable shared object"));
    close(fd);
    unlink(text);
}

/*
 * Opens path in the sticky, world-writable directory dir owned by the caller (not root): a
 * sticky bit protects entries only when root owns the directory (its owner may still replace
 * them), so it is refused. Returns 0 when refused as expected.
 */
static int sticky_refused(const char *path, const char *dir)
{
    int fd = -1;
    char reason[1024] = "";
    int status = fsafe_open(path, true, &fd, reason, sizeof reason);
    if (status == 0) {
        close(fd);
        fprintf(stderr, "%s opened in a sticky directory not owned by root\n", path);
        return 1;
    }
    if (!strstr(reason, dir) || !strstr(reason, "writable by others")) {
        fprintf(stderr, "%s refused for another reason: %s\n", path, reason);
        return 1;
    }
    return 0;
}

/*
 * A sticky, world-writable directory is trusted only when root owns it (/tmp): one owned by a
 * user rpcd trusts (its own) is refused. As root the check runs as user nobody in a child, in a
 * directory of /tmp that nobody owns.
 */
static void test_sticky_directory_needs_root(void **state)
{
    (void)state;
    char base[] = "/tmp/rpcd-sticky-XXXXXX";
    assert_non_null(mkdtemp(base));
    assert_int_equal(chmod(base, 0755), 0);
    char *dir = format("%s/shared", base);
    char *path = format("%s/f", dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    assert_int_equal(fclose(file), 0);
    assert_int_equal(chmod(path, 0644), 0);
    assert_int_equal(chmod(dir, 01777), 0);
    int refused;
    if (geteuid() != 0) {
        refused = sticky_refused(path, dir);
    } else {
        const uid_t nobody = 65534;
        assert_int_equal(chown(dir, nobody, nobody), 0);
        assert_int_equal(chown(path, nobody, nobody), 0);
        pid_t child = fork();
        assert_true(child >= 0);
        if (child == 0) {
            int outcome = 2;
            if (setresgid(nobody, nobody, nobody) == 0 && setresuid(nobody, nobody, nobody) == 0)
                outcome = sticky_refused(path, dir);
            free(path); /* valgrind follows the child */
            free(dir);
            _exit(outcome);
        }
        int status;
        assert_int_equal(waitpid(child, &status, 0), child);
        refused = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
    }
    unlink(path);
    rmdir(dir);
    rmdir(base);
    free(path);
    free(dir);
    assert_int_equal(refused, 0);
}

/* A component on the way that is a file, not a directory, is named as such. */
static void test_file_on_the_way_named(void **state)
{
    temp *t = *state;
    char *file = make_file(t, "plain", "x", 0644);
    char *path = format("%s/beyond", file);
    char *needle = format("cannot open %s: %s", file, strerror(ENOTDIR));
    const char *const needles[] = {needle, NULL};
    expect_refused(path, true, FSAFE_ERR_OPEN, needles);
    free(needle);
    free(path);
    free(file);
}

int main(void)
{
#define TEST(name) cmocka_unit_test_setup_teardown(name, make_temp, remove_temp)
    const struct CMUnitTest tests[] = {
        TEST(test_safe_file_opens),
        TEST(test_file_writable_or_foreign),
        TEST(test_ancestor_writable),
        TEST(test_symlinks_walked),
        TEST(test_link_chain_limit),
        TEST(test_name_too_long),
        TEST(test_not_regular_files),
        TEST(test_too_deep),
        TEST(test_file_on_the_way_named),
        cmocka_unit_test(test_dlopen_loads_each_descriptor),
        cmocka_unit_test(test_sticky_directory_needs_root),
    };
#undef TEST
    return cmocka_run_group_tests(tests, NULL, NULL);
}
