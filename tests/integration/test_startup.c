/* SPDX-License-Identifier: MIT */
/*
 * Start-up through the real binary: every config or plugin failure exits 78 with one stderr line
 * that says where, the command line options, and plugin sections reaching their plugins. Each
 * test writes its config into a fresh temp dir, with absolute plugin paths from the environment.
 */
#include "harness.h"

#include <rpcd/plugin.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

enum { EXIT_USAGE = 64, EXIT_CONFIG = 78 };
#define RUN_TIMEOUT_MS test_time_ms(15000)

typedef struct fixture {
    char *dir; /* owned: this test's temp dir */
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    f->dir = harness_temp_dir();
    if (!f->dir) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    harness_remove_dir(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static const char *env(const char *name)
{
    const char *value = harness_env(name);
    assert_non_null(value);
    return value;
}

/* Writes text as dir/rpcd.conf. Returns the path (new). */
static char *write_config(const fixture *f, const char *text)
{
    char *path = harness_write_file(f->dir, "rpcd.conf", text);
    assert_non_null(path);
    return path;
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

/* Runs rpcd with args and input (may be NULL); the caller frees the result. */
static void run(const harness_argv *args, const char *input, harness_run_result *result)
{
    assert_non_null(args->argv[0]);
    harness_run(args->argv, input, input ? strlen(input) : 0, RUN_TIMEOUT_MS, result);
    assert_int_equal(result->io_status, HARNESS_OK);
    assert_false(result->status.timed_out);
}

static size_t count_lines(const char *text)
{
    size_t lines = 0;
    for (const char *at = text; (at = strchr(at, '\n')) != NULL; at++)
        lines++;
    return lines;
}

/*
 * Runs rpcd on config_path and checks the failure: exit 78, nothing on stdout, and exactly one
 * line on stderr that contains every one of the NULL-terminated needles.
 */
static void expect_start_failure(const char *config_path, const char *const needles[])
{
    harness_argv args = harness_rpcd_argv(config_path);
    harness_run_result result;
    run(&args, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\"}\n", &result);
    bool ok = result.status.exited && result.status.code == EXIT_CONFIG && result.out_length == 0 &&
              count_lines(result.err) == 1 && result.err[strlen(result.err) - 1] == '\n';
    for (size_t i = 0; needles[i]; i++) {
        if (!strstr(result.err, needles[i])) {
            print_error("stderr does not contain \"%s\"\n", needles[i]);
            ok = false;
        }
    }
    if (!ok)
        print_error("expected exit 78 and one stderr line; got %s\nstdout:\n%s\nstderr:\n%s\n",
                    harness_exit_describe(&result.status), result.out ? result.out : "",
                    result.err);
    harness_run_result_free(&result);
    assert_true(ok);
}

/* expect_start_failure of a config written from text. */
static void expect_config_failure(const fixture *f, const char *text, const char *const needles[])
{
    char *path = write_config(f, text);
    expect_start_failure(path, needles);
    free(path);
}

/* ---- Files others could change (the StrictModes rule) and --insecure ---------------------- */

static void test_config_writable_by_others(void **state)
{
    fixture *f = *state;
    char *text = format("[plugin echo]\npath = %s\n", env("RPCD_PLUGIN_ECHO"));
    char *path = write_config(f, text);
    assert_int_equal(chmod(path, 0666), 0);
    expect_start_failure(
        path, (const char *const[]){path, "writable by others", "chmod go-w", "--insecure", NULL});

    /* --insecure loads it anyway, and says so. */
    harness_argv args = harness_rpcd_argv(path);
    harness_argv_push(&args, "--insecure");
    harness_run_result result;
    run(&args, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}\n", &result);
    assert_true(result.status.exited);
    assert_int_equal(result.status.code, 0);
    assert_true(harness_json_equal("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[1]}", result.out));
    assert_non_null(strstr(result.err, "rpcd: warning: --insecure"));
    harness_run_result_free(&result);
    free(path);
    free(text);
}

/* Whether group gid has a member other than user uid (by primary group, or in its list). */
static bool has_other_member(gid_t gid, uid_t uid)
{
    const struct passwd *self = getpwuid(uid);
    const struct group *group = getgrgid(gid);
    bool other = !self || !group;
    for (char **member = group ? group->gr_mem : NULL; !other && member && *member; member++)
        other = strcmp(*member, self->pw_name) != 0;
    setpwent();
    for (const struct passwd *entry; !other && (entry = getpwent());)
        other = entry->pw_gid == gid && entry->pw_uid != uid;
    endpwent();
    return other;
}

/* A group of the user's that someone else is in, for a file to be put in; -1 when none. */
static gid_t shared_group(void)
{
    gid_t groups[256];
    int count = getgroups(256, groups);
    if (geteuid() == 0 && getgrgid(65534))
        return has_other_member(65534, 0) ? 65534 : (gid_t)-1; /* root may give any */
    for (int i = 0; i < count; i++)
        if (has_other_member(groups[i], geteuid()))
            return groups[i];
    return (gid_t)-1;
}

static void test_plugin_writable_by_group(void **state)
{
    fixture *f = *state;
    size_t length;
    char *code = harness_read_file(env("RPCD_PLUGIN_ECHO"), &length);
    assert_non_null(code);
    char *plugin = format("%s/echo.so", f->dir);
    FILE *copy = fopen(plugin, "wb");
    assert_non_null(copy);
    assert_int_equal(fwrite(code, 1, length, copy), length);
    fclose(copy);
    free(code);
    assert_int_equal(chmod(plugin, 0775), 0);
    /* A group that others are in: refused. A relative path starts from the config's directory. */
    gid_t shared = shared_group();
    if (shared != (gid_t)-1) {
        assert_int_equal(chown(plugin, (uid_t)-1, shared), 0);
        expect_config_failure(f, "[plugin echo]\npath = echo.so\n",
                              (const char *const[]){plugin, "writable by its group", NULL});
    }
    /* Its owner's own group, with no other member (umask 002 with user private groups): none
     * but its owner can write it, and it loads. */
    if (!has_other_member(getegid(), geteuid())) {
        assert_int_equal(chown(plugin, (uid_t)-1, getegid()), 0);
        char *path = write_config(f, "[plugin echo]\npath = echo.so\n");
        assert_int_equal(chmod(path, 0664), 0);
        harness_argv args = harness_rpcd_argv(path);
        harness_run_result result;
        run(&args, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}\n", &result);
        if (!result.status.exited || result.status.code != 0)
            print_error("stderr:\n%s\n", result.err);
        assert_true(result.status.exited);
        assert_int_equal(result.status.code, 0);
        assert_true(
            harness_json_equal("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[1]}", result.out));
        harness_run_result_free(&result);
        free(path);
    }
    free(plugin);
}

static void test_directory_writable_by_others(void **state)
{
    fixture *f = *state;
    char *open_dir = format("%s/open", f->dir);
    assert_int_equal(mkdir(open_dir, 0777), 0);
    assert_int_equal(chmod(open_dir, 0777), 0); /* whatever the umask */
    char *text = format("[plugin echo]\npath = %s\n", env("RPCD_PLUGIN_ECHO"));
    char *path = harness_write_file(open_dir, "rpcd.conf", text);
    char *fix = format("chmod go-w %s", open_dir);
    expect_start_failure(path, (const char *const[]){path, "the directory", open_dir, fix, NULL});
    free(fix);
    free(path);
    free(text);
    free(open_dir);
}

static void test_config_owned_by_another_user(void **state)
{
    fixture *f = *state;
    if (geteuid() != 0)
        skip(); /* only root can give a file away */
    char *text = format("[plugin echo]\npath = %s\n", env("RPCD_PLUGIN_ECHO"));
    char *path = write_config(f, text);
    assert_int_equal(chown(path, 65534, 65534), 0);
    expect_start_failure(path, (const char *const[]){path, "owned by uid 65534", NULL});
    free(path);
    free(text);
}

static void test_missing_config(void **state)
{
    fixture *f = *state;
    char *path = format("%s/no-such.conf", f->dir);
    expect_start_failure(path, (const char *const[]){path, NULL});
    free(path);
}

static void test_config_is_a_directory(void **state)
{
    fixture *f = *state;
    expect_start_failure(f->dir, (const char *const[]){f->dir, NULL});
}

static void test_syntax_error_names_line(void **state)
{
    fixture *f = *state;
    char *path = write_config(f, "[rpcd]\nlog_level = info\nthis is not ini\n");
    char *where = format("%s:3:", path);
    expect_start_failure(path, (const char *const[]){where, NULL});
    free(where);
    free(path);
}

static void test_unknown_daemon_key(void **state)
{
    fixture *f = *state;
    char *path = write_config(f, "[rpcd]\n\nbogus_key = 1\n");
    char *where = format("%s:3:", path);
    expect_start_failure(path, (const char *const[]){where, "bogus_key", NULL});
    free(where);
    free(path);
}

static void test_bad_daemon_value(void **state)
{
    fixture *f = *state;
    char *path = write_config(f, "[rpcd]\nmax_line_bytes = lots\n");
    char *where = format("%s:2:", path);
    expect_start_failure(path, (const char *const[]){where, "max_line_bytes", "lots", NULL});
    free(where);
    free(path);
}

/* The line named is the section's own header, where the mistake is. */
static void test_unknown_section(void **state)
{
    fixture *f = *state;
    char *path = write_config(f, "[rpcd]\n[nope]\nx = 1\n");
    char *where = format("%s:2:", path);
    expect_start_failure(path, (const char *const[]){where, "nope", NULL});
    free(where);
    free(path);
}

static void test_missing_plugin_file(void **state)
{
    fixture *f = *state;
    char *plugin = format("%s/missing.so", f->dir);
    char *text = format("[plugin missing]\npath = %s\n", plugin);
    expect_config_failure(f, text, (const char *const[]){plugin, NULL});
    free(text);
    free(plugin);
}

static void test_plugin_not_a_shared_object(void **state)
{
    fixture *f = *state;
    char *plugin = harness_write_file(f->dir, "bogus.so", "this is text, not ELF\n");
    assert_non_null(plugin);
    char *text = format("[plugin bogus]\npath = %s\n", plugin);
    expect_config_failure(f, text, (const char *const[]){plugin, NULL});
    free(text);
    free(plugin);
}

static void test_plugin_without_entry_point(void **state)
{
    fixture *f = *state;
    const char *plugin = env("RPCD_FIXTURE_NO_ENTRY");
    char *text = format("[plugin no_entry]\npath = %s\n", plugin);
    expect_config_failure(f, text, (const char *const[]){plugin, "rpcd_plugin_entry", NULL});
    free(text);
}

static void test_plugin_abi_too_new(void **state)
{
    fixture *f = *state;
    const char *plugin = env("RPCD_FIXTURE_ABI_TOO_NEW");
    char *text = format("[plugin abi_too_new]\npath = %s\n", plugin);
    /* The fixture asks for the minor after the daemon's: both versions must be named. */
    char *wanted = format("ABI %d.%d", RPCD_ABI_MAJOR, RPCD_ABI_MINOR + 1);
    char *have = format("has ABI %d.%d", RPCD_ABI_MAJOR, RPCD_ABI_MINOR);
    expect_config_failure(f, text, (const char *const[]){plugin, wanted, have, NULL});
    free(wanted);
    free(have);
    free(text);
}

static void test_plugin_abi_major_2(void **state)
{
    fixture *f = *state;
    const char *plugin = env("RPCD_FIXTURE_ABI_MAJOR_2");
    char *text = format("[plugin abi_major_2]\npath = %s\n", plugin);
    char *have = format("has ABI %d.%d", RPCD_ABI_MAJOR, RPCD_ABI_MINOR);
    expect_config_failure(f, text, (const char *const[]){plugin, "ABI 2.0", have, NULL});
    free(have);
    free(text);
}

static void test_plugin_init_failure(void **state)
{
    fixture *f = *state;
    const char *plugin = env("RPCD_FIXTURE_INIT_FAIL");
    char *text = format("[plugin init_fail]\npath = %s\n", plugin);
    expect_config_failure(f, text, (const char *const[]){plugin, "database unreachable", NULL});
    free(text);
}

/*
 * A stop signal while a plugin's init never returns ends rpcd at once, with status 128 + 15 and
 * a line that says so: nothing is served yet, so there is nothing to stop gracefully.
 */
static void test_signal_while_plugin_init_hangs(void **state)
{
    fixture *f = *state;
    char *text = format("[plugin init_hang]\npath = %s\n", env("RPCD_FIXTURE_INIT_HANG"));
    char *path = write_config(f, text);
    harness_argv args = harness_rpcd_argv(path);
    harness_process *rpcd = harness_start(args.argv);
    assert_non_null(rpcd);
    int seen = harness_wait_for_stderr(rpcd, "init waits for ever", RUN_TIMEOUT_MS);
    if (seen != HARNESS_OK)
        print_error("init did not start; stderr:\n%s\n", harness_stderr(rpcd));
    assert_int_equal(seen, HARNESS_OK);
    assert_int_equal(harness_signal(rpcd, SIGTERM), 0);
    harness_exit status;
    assert_int_equal(harness_wait(rpcd, RUN_TIMEOUT_MS, &status), HARNESS_OK);
    bool ok = status.exited && status.code == 128 + SIGTERM &&
              strstr(harness_stderr(rpcd), "signal 15: exiting at once") != NULL;
    if (!ok)
        print_error("expected exit 143 and a line about the signal; got %s\nstderr:\n%s\n",
                    harness_exit_describe(&status), harness_stderr(rpcd));
    harness_free(rpcd);
    free(path);
    free(text);
    assert_true(ok);
}

/*
 * With file descriptors for the protocol and the plugins but not for serving (a plugin's init
 * takes every one left), rpcd says why on one line and exits 70 instead of serving without a way
 * to be stopped. Not under a wrapper, which needs descriptors of its own.
 */
static void test_no_descriptor_left_to_serve(void **state)
{
    fixture *f = *state;
    static const char prlimit[] = "/usr/bin/prlimit"; /* util-linux, in every Debian */
    if (harness_wrapped())
        skip();
    assert_int_equal(access(prlimit, X_OK), 0);
    char *text = format("[plugin echo]\npath = %s\n[plugin fd_hog]\npath = %s\n",
                        env("RPCD_PLUGIN_ECHO"), env("RPCD_FIXTURE_FD_HOG"));
    char *path = write_config(f, text);
    harness_argv args;
    memset(&args, 0, sizeof args);
    harness_argv_push(&args, prlimit);
    harness_argv_push(&args, "--nofile=64");
    harness_argv_push(&args, env("RPCD_BINARY"));
    harness_argv_push(&args, "-c");
    harness_argv_push(&args, path);
    harness_run_result result;
    run(&args, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\"}\n", &result);
    bool ok = result.status.exited && result.status.code == 70 && result.out_length == 0 &&
              strstr(result.err, "cannot start serving: out of memory or file descriptors");
    if (!ok)
        print_error("expected exit 70 and a line about serving; got %s\nstderr:\n%s\n",
                    harness_exit_describe(&result.status), result.err);
    harness_run_result_free(&result);
    free(path);
    free(text);
    assert_true(ok);
}

/* ---- Files that are not regular, and what a config file may hold ------------------------- */

/*
 * A FIFO as the config or as a plugin is refused at once: nothing waits for a writer. No writer
 * ever comes, so an rpcd that waited would still wait when its run's bound (RUN_TIMEOUT_MS)
 * passed, and run() fails on that; how soon it is refused is the machine's figure.
 */
static void test_fifo_config_and_plugin(void **state)
{
    fixture *f = *state;
    char *fifo = format("%s/fifo", f->dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    char *what = format("%s is a FIFO", fifo);
    expect_start_failure(fifo, (const char *const[]){fifo, "not a regular file", what, NULL});
    char *text = format("[plugin fifo]\npath = %s\n", fifo);
    expect_config_failure(f, text, (const char *const[]){"plugin", what, NULL});
    free(text);
    free(what);
    free(fifo);
}

static void test_config_with_nul_byte(void **state)
{
    fixture *f = *state;
    char *path = format("%s/rpcd.conf", f->dir);
    FILE *file = fopen(path, "wb");
    assert_non_null(file);
    static const char text[] = "[rpcd]\nlog_level = info\nworkers = 2\0 # the rest\nworkers = 9\n";
    assert_int_equal(fwrite(text, 1, sizeof text - 1, file), sizeof text - 1);
    assert_int_equal(fclose(file), 0);
    char *where = format("%s:3: NUL byte", path);
    expect_start_failure(path, (const char *const[]){where, NULL});
    free(where);
    free(path);
}

/* A config over 1 MiB is refused before it is read, so that its size costs no memory. */
static void test_config_too_big(void **state)
{
    fixture *f = *state;
    char *path = format("%s/rpcd.conf", f->dir);
    FILE *file = fopen(path, "wb");
    assert_non_null(file);
    assert_true(fputs("[rpcd]\n", file) >= 0);
    for (int i = 0; i < 1024 * 1024 / 16; i++)
        assert_true(fputs("# padding line.\n", file) >= 0);
    assert_int_equal(fclose(file), 0);
    expect_start_failure(path,
                         (const char *const[]){path, "1048583 bytes, more than the 1048576", NULL});
    free(path);
}

/* A link's target is walked: a plugin reached through a link into a world-writable directory is
 * refused, naming that directory. */
static void test_plugin_link_into_open_directory(void **state)
{
    fixture *f = *state;
    char *open_dir = format("%s/open", f->dir);
    assert_int_equal(mkdir(open_dir, 0755), 0);
    assert_int_equal(chmod(open_dir, 0777), 0);
    size_t length;
    char *code = harness_read_file(env("RPCD_PLUGIN_ECHO"), &length);
    assert_non_null(code);
    char *plugin = format("%s/echo.so", open_dir);
    FILE *copy = fopen(plugin, "wb");
    assert_non_null(copy);
    assert_int_equal(fwrite(code, 1, length, copy), length);
    assert_int_equal(fclose(copy), 0);
    free(code);
    assert_int_equal(chmod(plugin, 0644), 0);
    char *via = format("%s/echo.so", f->dir);
    assert_int_equal(symlink(plugin, via), 0);
    char *fix = format("chmod go-w %s", open_dir);
    expect_config_failure(f, "[plugin echo]\npath = echo.so\n",
                          (const char *const[]){via, "the directory", open_dir, fix, NULL});
    unlink(plugin);
    rmdir(open_dir);
    free(fix);
    free(via);
    free(plugin);
    free(open_dir);
}

/* ---- Least privilege ----------------------------------------------------------------------- */

/* The value of a "Name:" line of /proc/PID/status, without the name and the tab (new). */
static char *status_line(pid_t pid, const char *name)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *file = fopen(path, "r");
    assert_non_null(file);
    char line[1024];
    char *value = NULL;
    size_t name_length = strlen(name);
    while (!value && fgets(line, sizeof line, file)) {
        if (strncmp(line, name, name_length) == 0 && line[name_length] == ':') {
            char *start = line + name_length + 1;
            start += strspn(start, " \t");
            start[strcspn(start, "\n")] = '\0';
            value = strdup(start);
        }
    }
    fclose(file);
    assert_non_null(value);
    return value;
}

/*
 * Starts rpcd on text, waits for the answer to one call (so that start-up is over), and hands
 * back the running process (the caller frees it).
 */
static harness_process *start_serving(const fixture *f, const char *text)
{
    char *path = write_config(f, text);
    harness_argv args = harness_rpcd_argv(path);
    harness_process *rpcd = harness_start(args.argv);
    assert_non_null(rpcd);
    assert_int_equal(harness_write_text(rpcd,
                                        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\","
                                        "\"params\":[1]}\n",
                                        RUN_TIMEOUT_MS),
                     HARNESS_OK);
    char *line = NULL;
    int status = harness_read_line(rpcd, RUN_TIMEOUT_MS, &line, NULL, NULL);
    if (status != HARNESS_OK)
        print_error("no answer; stderr:\n%s\n", harness_stderr(rpcd));
    assert_int_equal(status, HARNESS_OK);
    assert_true(harness_json_equal("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[1]}", line));
    free(line);
    free(path);
    return rpcd;
}

static void expect_clean_exit(harness_process *rpcd)
{
    harness_close_stdin(rpcd);
    harness_exit status;
    assert_int_equal(harness_wait(rpcd, RUN_TIMEOUT_MS, &status), HARNESS_OK);
    if (!status.exited || status.code != 0)
        print_error("%s\nstderr:\n%s\n", harness_exit_describe(&status), harness_stderr(rpcd));
    assert_true(status.exited);
    assert_int_equal(status.code, 0);
}

/*
 * user = nobody: once serving, every uid and gid (real, effective, saved, filesystem) is
 * nobody's, no supplementary group is left, and no_new_privs is set (the default).
 */
static void test_user_drops_every_id(void **state)
{
    fixture *f = *state;
    if (geteuid() != 0)
        skip(); /* only root can change user: nothing to test as anyone else */
    const struct passwd *nobody = getpwnam("nobody");
    assert_non_null(nobody);
    char *text =
        format("[rpcd]\nuser = nobody\n\n[plugin echo]\npath = %s\n", env("RPCD_PLUGIN_ECHO"));
    harness_process *rpcd = start_serving(f, text);
    pid_t pid = harness_pid(rpcd);
    char *uids = status_line(pid, "Uid");
    char *gids = status_line(pid, "Gid");
    char *groups = status_line(pid, "Groups");
    char *no_new_privs = status_line(pid, "NoNewPrivs");
    char *want_uids = format("%u\t%u\t%u\t%u", (unsigned)nobody->pw_uid, (unsigned)nobody->pw_uid,
                             (unsigned)nobody->pw_uid, (unsigned)nobody->pw_uid);
    char *want_gids = format("%u\t%u\t%u\t%u", (unsigned)nobody->pw_gid, (unsigned)nobody->pw_gid,
                             (unsigned)nobody->pw_gid, (unsigned)nobody->pw_gid);
    assert_string_equal(uids, want_uids);
    assert_string_equal(gids, want_gids);
    assert_string_equal(groups, "");
    assert_string_equal(no_new_privs, "1");
    /* Dropping root is what was asked for: no warning about running as root. */
    expect_clean_exit(rpcd);
    assert_null(strstr(harness_stderr(rpcd), "running as root"));
    harness_free(rpcd);
    free(want_gids);
    free(want_uids);
    free(no_new_privs);
    free(groups);
    free(gids);
    free(uids);
    free(text);
}

/*
 * The switch is verified, not trusted: with a preloaded library whose setresuid does nothing,
 * or whose setuid(0) claims to work after the switch, rpcd refuses to serve. Not under a wrapper
 * or a sanitizer, whose runtimes must come first among the preloaded libraries.
 */
static void test_user_switch_verified(void **state)
{
    fixture *f = *state;
    if (geteuid() != 0 || harness_wrapped())
        skip();
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    skip();
#endif
    char *text =
        format("[rpcd]\nuser = nobody\n\n[plugin echo]\npath = %s\n", env("RPCD_PLUGIN_ECHO"));
    char *path = write_config(f, text);
    char *preload = format("LD_PRELOAD=%s", env("RPCD_FIXTURE_FAKE_IDS"));
    static const struct {
        const char *lie;
        const char *message;
    } cases[] = {
        {"RPCD_FAKE_SETRESUID_NOOP=1", "left other ids behind"},
        {"RPCD_FAKE_SETUID_WORKS=1", "root could be taken back"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        harness_argv args;
        memset(&args, 0, sizeof args);
        harness_argv_push(&args, "/usr/bin/env");
        harness_argv_push(&args, preload);
        harness_argv_push(&args, cases[i].lie);
        harness_argv_push(&args, env("RPCD_BINARY"));
        harness_argv_push(&args, "-c");
        harness_argv_push(&args, path);
        harness_run_result result;
        run(&args, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\"}\n", &result);
        bool ok = result.status.exited && result.status.code == EXIT_CONFIG &&
                  result.out_length == 0 && count_lines(result.err) == 1 &&
                  strstr(result.err, cases[i].message);
        if (!ok)
            print_error("%s: expected exit 78 and \"%s\"; got %s\nstderr:\n%s\n", cases[i].lie,
                        cases[i].message, harness_exit_describe(&result.status), result.err);
        harness_run_result_free(&result);
        assert_true(ok);
    }
    free(preload);
    free(path);
    free(text);
}

/* group = NAME replaces the user's own group, in all four gid slots. */
static void test_group_replaces_the_users(void **state)
{
    fixture *f = *state;
    if (geteuid() != 0)
        skip();
    const struct group *daemon_group = getgrnam("daemon");
    assert_non_null(daemon_group);
    unsigned gid = (unsigned)daemon_group->gr_gid;
    char *text = format("[rpcd]\nuser = nobody\ngroup = daemon\n\n[plugin echo]\npath = %s\n",
                        env("RPCD_PLUGIN_ECHO"));
    harness_process *rpcd = start_serving(f, text);
    char *gids = status_line(harness_pid(rpcd), "Gid");
    char *groups = status_line(harness_pid(rpcd), "Groups");
    char *want = format("%u\t%u\t%u\t%u", gid, gid, gid, gid);
    assert_string_equal(gids, want);
    assert_string_equal(groups, "");
    expect_clean_exit(rpcd);
    harness_free(rpcd);
    free(want);
    free(groups);
    free(gids);
    free(text);
}

/* no_new_privs = false leaves the flag as rpcd's parent had it (clear here). */
static void test_no_new_privs_opt_out(void **state)
{
    fixture *f = *state;
    char *own = status_line(getpid(), "NoNewPrivs");
    bool inherited = strcmp(own, "1") == 0;
    free(own);
    if (inherited)
        skip(); /* the test runs with the flag set: rpcd cannot show it clear */
    char *text = format("[rpcd]\nno_new_privs = false\n\n[plugin echo]\npath = %s\n",
                        env("RPCD_PLUGIN_ECHO"));
    harness_process *rpcd = start_serving(f, text);
    char *flag = status_line(harness_pid(rpcd), "NoNewPrivs");
    assert_string_equal(flag, "0");
    expect_clean_exit(rpcd);
    harness_free(rpcd);
    free(flag);
    free(text);
}

/* Started as root without user, rpcd says so once; with -q, not at all. */
static void test_root_without_user_warns_once(void **state)
{
    fixture *f = *state;
    if (geteuid() != 0)
        skip();
    char *text = format("[plugin echo]\npath = %s\n", env("RPCD_PLUGIN_ECHO"));
    harness_process *rpcd = start_serving(f, text);
    expect_clean_exit(rpcd);
    const char *err = harness_stderr(rpcd);
    const char *first = strstr(err, "rpcd: warning: running as root: set user = NAME in [rpcd]");
    if (!first)
        print_error("no warning:\n%s\n", err);
    assert_non_null(first);
    assert_null(strstr(first + strlen("rpcd: warning: running as root"), "running as root"));
    harness_free(rpcd);
    free(text);
}

/*
 * Without /proc there is no name for the descriptor checked: rpcd refuses to load the plugin
 * instead of loading it by path again. Needs root, for a mount namespace where an empty tmpfs
 * hides /proc; not under a wrapper or a sanitizer, which need /proc themselves.
 */
static void test_plugin_without_proc(void **state)
{
    fixture *f = *state;
    static const char unshare[] = "/usr/bin/unshare"; /* util-linux */
    if (geteuid() != 0 || harness_wrapped() || access(unshare, X_OK) != 0)
        skip();
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    skip(); /* the sanitizers' runtimes read /proc themselves, even their options */
#endif
    char *text = format("[plugin echo]\npath = %s\n", env("RPCD_PLUGIN_ECHO"));
    char *path = write_config(f, text);
    char *script = format("mount -t tmpfs none /proc && exec %s -c %s", env("RPCD_BINARY"), path);
    harness_argv args;
    memset(&args, 0, sizeof args);
    harness_argv_push(&args, unshare);
    harness_argv_push(&args, "--mount");
    harness_argv_push(&args, "--propagation=private");
    harness_argv_push(&args, "/bin/sh");
    harness_argv_push(&args, "-c");
    harness_argv_push(&args, script);
    harness_run_result result;
    run(&args, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\"}\n", &result);
    bool unsupported = result.status.exited && result.status.code != EXIT_CONFIG &&
                       strstr(result.err, "rpcd:") == NULL;
    if (unsupported) { /* no mount namespace here (a container without CAP_SYS_ADMIN) */
        harness_run_result_free(&result);
        free(script);
        free(path);
        free(text);
        skip();
    }
    bool ok = result.status.exited && result.status.code == EXIT_CONFIG && result.out_length == 0 &&
              strstr(result.err, env("RPCD_PLUGIN_ECHO")) &&
              strstr(result.err, "is /proc mounted?");
    if (!ok)
        print_error("expected exit 78 naming /proc; got %s\nstderr:\n%s\n",
                    harness_exit_describe(&result.status), result.err);
    harness_run_result_free(&result);
    free(script);
    free(path);
    free(text);
    assert_true(ok);
}

/* user needs rpcd to start as root: started as nobody, it refuses to run as anyone else. */
/* rpcd -c path, run as nobody by setpriv (util-linux): strings borrowed. */
static harness_argv as_nobody(const char *setpriv, const char *path)
{
    harness_argv args;
    memset(&args, 0, sizeof args);
    harness_argv_push(&args, setpriv);
    harness_argv_push(&args, "--reuid=65534");
    harness_argv_push(&args, "--regid=65534");
    harness_argv_push(&args, "--clear-groups");
    harness_argv_push(&args, env("RPCD_BINARY"));
    harness_argv_push(&args, "-c");
    harness_argv_push(&args, path);
    return args;
}

static void test_user_needs_root(void **state)
{
    (void)state;
    static const char setpriv[] = "/usr/bin/setpriv"; /* util-linux */
    if (geteuid() != 0 || access(setpriv, X_OK) != 0)
        skip(); /* root makes the test's unprivileged rpcd */
    /* A directory nobody can read, unlike the test's own. */
    char dir[] = "/tmp/rpcd-nobody-XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(chmod(dir, 0755), 0);
    char *text =
        format("[rpcd]\nuser = root\n\n[plugin echo]\npath = %s\n", env("RPCD_PLUGIN_ECHO"));
    char *path = harness_write_file(dir, "rpcd.conf", text);
    assert_non_null(path);
    assert_int_equal(chmod(path, 0644), 0);
    harness_argv args = as_nobody(setpriv, path);
    harness_run_result result;
    run(&args, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\"}\n", &result);
    bool ok = result.status.exited && result.status.code == EXIT_CONFIG && result.out_length == 0 &&
              count_lines(result.err) == 1 && strstr(result.err, "cannot switch to uid 0") &&
              strstr(result.err, "rpcd runs as uid 65534, and only root may change user");
    if (!ok)
        print_error("expected exit 78 and one line; got %s\nstderr:\n%s\n",
                    harness_exit_describe(&result.status), result.err);
    harness_run_result_free(&result);
    harness_remove_dir(dir);
    free(path);
    free(text);
    assert_true(ok);
}

/*
 * Started as nobody, rpcd has no root to warn about nor to give up: user and group naming its
 * own ids are what it already is, and it serves; without them, no warning about root either.
 */
static void test_unprivileged_own_user(void **state)
{
    (void)state;
    static const char setpriv[] = "/usr/bin/setpriv"; /* util-linux */
    if (geteuid() != 0 || access(setpriv, X_OK) != 0)
        skip(); /* root makes the test's unprivileged rpcd */
    char dir[] = "/tmp/rpcd-nobody-XXXXXX";
    assert_non_null(mkdtemp(dir));
    assert_int_equal(chmod(dir, 0755), 0);
    /* The third: its own group, but another user, is a change it cannot make. */
    static const char *const settings[] = {"[rpcd]\nuser = nobody\ngroup = nogroup\n", "",
                                           "[rpcd]\nuser = root\ngroup = nogroup\n"};
    for (size_t i = 0; i < 3; i++) {
        char *text = format("%s\n[plugin echo]\npath = %s\n", settings[i], env("RPCD_PLUGIN_ECHO"));
        char *path = harness_write_file(dir, "rpcd.conf", text);
        assert_non_null(path);
        assert_int_equal(chmod(path, 0644), 0);
        harness_argv args = as_nobody(setpriv, path);
        harness_run_result result;
        run(&args, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}\n", &result);
        bool ok =
            i < 2
                ? result.status.exited && result.status.code == 0 && result.out &&
                      strcmp(result.out, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[1]}\n") == 0 &&
                      !strstr(result.err, "root") && !strstr(result.err, "error")
                : result.status.exited && result.status.code == EXIT_CONFIG &&
                      result.out_length == 0 && strstr(result.err, "only root may change user");
        if (!ok)
            print_error("as nobody with '%s': %s\nstdout:\n%s\nstderr:\n%s\n", settings[i],
                        harness_exit_describe(&result.status), result.out ? result.out : "",
                        result.err);
        harness_run_result_free(&result);
        unlink(path);
        free(path);
        free(text);
        assert_true(ok);
    }
    rmdir(dir);
}

static void test_user_and_group_errors(void **state)
{
    fixture *f = *state;
    char *path = write_config(f, "[rpcd]\nuser = no-such-user-here\n");
    expect_start_failure(
        path, (const char *const[]){path, "user = no-such-user-here", "no such user", NULL});
    free(path);
    path = write_config(f, "[rpcd]\nuser = nobody\ngroup = no-such-group-here\n");
    expect_start_failure(
        path, (const char *const[]){path, "group = no-such-group-here", "no such group", NULL});
    free(path);
    path = write_config(f, "[rpcd]\ngroup = nogroup\n");
    expect_start_failure(path, (const char *const[]){path, "needs user as well", NULL});
    free(path);
    path = write_config(f, "[rpcd]\nuser = nobody\n\nuser = root\n");
    char *where = format("%s:4: user is given twice in [rpcd] (first on line 2)", path);
    expect_start_failure(path, (const char *const[]){where, NULL});
    free(where);
    free(path);
}

/* A name two plugins register: the line names the two sections, as the config names them. */
static void test_duplicate_method(void **state)
{
    fixture *f = *state;
    char *text = format("[plugin first]\npath = %s\n\n[plugin second]\npath = %s\n",
                        env("RPCD_FIXTURE_DUPLICATE_A"), env("RPCD_FIXTURE_DUPLICATE_B"));
    expect_config_failure(
        f, text,
        (const char *const[]){
            "method 'dup.method' is registered by both [plugin first] and [plugin second]", NULL});
    free(text);
}

/* A plugin's own config key with a bad value fails its init, and so the start. */
static void test_plugin_config_value_rejected(void **state)
{
    fixture *f = *state;
    const char *plugin = env("RPCD_PLUGIN_PROGRESS");
    char *text = format("[plugin progress]\npath = %s\ndefault_steps = abc\n", plugin);
    expect_config_failure(f, text, (const char *const[]){plugin, "default_steps", NULL});
    free(text);
}

/* The error stays visible with -q, and --check fails the same way. */
static void test_failure_with_quiet_and_check(void **state)
{
    fixture *f = *state;
    char *plugin = format("%s/missing.so", f->dir);
    char *text = format("[plugin missing]\npath = %s\n", plugin);
    char *path = write_config(f, text);
    static const char *const options[] = {"-q", "--check"};
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        harness_argv args = harness_rpcd_argv(path);
        harness_argv_push(&args, options[i]);
        harness_run_result result;
        run(&args, NULL, &result);
        if (!result.status.exited || result.status.code != EXIT_CONFIG)
            print_error("%s: %s\n%s\n", options[i], harness_exit_describe(&result.status),
                        result.err);
        assert_true(result.status.exited);
        assert_int_equal(result.status.code, EXIT_CONFIG);
        assert_int_equal(count_lines(result.err), 1);
        assert_non_null(strstr(result.err, plugin));
        harness_run_result_free(&result);
    }
    free(path);
    free(text);
    free(plugin);
}

/* A plugin marked required = false that fails is skipped with a warning; the rest is served. */
static void test_optional_plugin_failure_skipped(void **state)
{
    fixture *f = *state;
    const char *broken = env("RPCD_FIXTURE_INIT_FAIL");
    /* One worker, so that the two responses come in request order. */
    char *text = format("[rpcd]\nworkers = 1\n\n[plugin echo]\npath = %s\n\n"
                        "[plugin broken]\npath = %s\nrequired = false\n",
                        env("RPCD_PLUGIN_ECHO"), broken);
    char *path = write_config(f, text);
    harness_argv args = harness_rpcd_argv(path);
    harness_run_result result;
    run(&args,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[\"up\"]}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"init_fail.never\"}\n",
        &result);
    if (!result.status.exited || result.status.code != 0)
        print_error("%s\n%s\n", harness_exit_describe(&result.status), result.err);
    assert_true(result.status.exited);
    assert_int_equal(result.status.code, 0);
    harness_lines lines;
    assert_int_equal(harness_split_lines(result.out, result.out_length, &lines), 0);
    assert_int_equal(lines.count, 2);
    assert_true(
        harness_json_equal("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[\"up\"]}", lines.items[0]));
    /* What the failed init registered is gone with it. */
    assert_true(harness_json_equal("{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32601,"
                                   "\"message\":\"Method not found\"}}",
                                   lines.items[1]));
    harness_lines_free(&lines);
    assert_non_null(strstr(result.err, "rpcd: warning:"));
    assert_non_null(strstr(result.err, broken));
    assert_non_null(strstr(result.err, "database unreachable"));
    harness_run_result_free(&result);
    free(path);
    free(text);
}

/* --check loads everything and exits 0, keeping stdout for the protocol: nothing there. */
static void test_check_default_config(void **state)
{
    (void)state;
    harness_argv args = harness_rpcd_argv(env("RPCD_BUILD_CONFIG"));
    harness_argv_push(&args, "--check");
    harness_run_result result;
    run(&args, NULL, &result);
    if (!result.status.exited || result.status.code != 0)
        print_error("%s\n%s\n", harness_exit_describe(&result.status), result.err);
    assert_true(result.status.exited);
    assert_int_equal(result.status.code, 0);
    assert_int_equal(result.out_length, 0);
    harness_run_result_free(&result);
}

static void test_help(void **state)
{
    (void)state;
    harness_argv args = harness_rpcd_argv(NULL);
    harness_argv_push(&args, "--help");
    harness_run_result result;
    run(&args, NULL, &result);
    assert_true(result.status.exited);
    assert_int_equal(result.status.code, 0);
    assert_non_null(strstr(result.out, "Usage: rpcd"));
    assert_non_null(strstr(result.out, "--config"));
    /* Where the rest is: the manual pages. */
    assert_non_null(strstr(result.out, "rpcd(8)"));
    assert_non_null(strstr(result.out, "rpcd.conf(5)"));
    assert_non_null(strstr(result.out, "rpcd-plugin(3)"));
    assert_string_equal(result.err, "");
    harness_run_result_free(&result);
}

static void test_version(void **state)
{
    (void)state;
    harness_argv args = harness_rpcd_argv(NULL);
    harness_argv_push(&args, "--version");
    harness_run_result result;
    run(&args, NULL, &result);
    assert_true(result.status.exited);
    assert_int_equal(result.status.code, 0);
    assert_int_equal(strncmp(result.out, "rpcd ", 5), 0);
    /* The plugin ABI a plugin author must build against. */
    char *abi = format("ABI %d.%d", RPCD_ABI_MAJOR, RPCD_ABI_MINOR);
    assert_non_null(strstr(result.out, abi));
    free(abi);
    assert_int_equal(count_lines(result.out), 1);
    harness_run_result_free(&result);
}

static void test_bad_usage(void **state)
{
    (void)state;
    static const char *const bad[] = {"--no-such-option", "-Z", "stray-argument"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        harness_argv args = harness_rpcd_argv(env("RPCD_BUILD_CONFIG"));
        harness_argv_push(&args, bad[i]);
        harness_run_result result;
        run(&args, NULL, &result);
        if (!result.status.exited || result.status.code != EXIT_USAGE)
            print_error("%s: %s\n", bad[i], harness_exit_describe(&result.status));
        assert_true(result.status.exited);
        assert_int_equal(result.status.code, EXIT_USAGE);
        assert_int_equal(result.out_length, 0);
        assert_true(strlen(result.err) > 0);
        harness_run_result_free(&result);
    }
}

/*
 * The default level logs an info line at start; -q keeps only errors. The bundled plugins with
 * fail, whose bad result would be logged as a warning.
 */
static void test_quiet_hides_info(void **state)
{
    fixture *f = *state;
    char *plugins = harness_bundled_plugin_sections();
    assert_non_null(plugins);
    char *path = write_config(f, plugins);
    free(plugins);
    harness_argv args = harness_rpcd_argv(path);
    harness_run_result result;
    run(&args, NULL, &result);
    assert_int_equal(result.status.code, 0);
    assert_non_null(strstr(result.err, "rpcd: info:"));
    harness_run_result_free(&result);

    harness_argv_push(&args, "-q");
    run(&args, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"fail.bad_result\"}\n", &result);
    assert_true(result.status.exited);
    assert_int_equal(result.status.code, 0);
    if (result.err[0])
        print_error("stderr with -q:\n%s\n", result.err);
    assert_string_equal(result.err, "");
    harness_run_result_free(&result);
    free(path);
}

/* Keys of a plugin section reach the plugin: misbehave answers with its greeting. */
static void test_plugin_reads_its_section(void **state)
{
    fixture *f = *state;
    char *text =
        format("[plugin misbehave]\npath = %s\ngreeting = hi\n", env("RPCD_FIXTURE_MISBEHAVE"));
    char *path = write_config(f, text);
    harness_argv args = harness_rpcd_argv(path);
    harness_run_result result;
    run(&args, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"misbehave.greeting\"}\n", &result);
    assert_true(result.status.exited);
    assert_int_equal(result.status.code, 0);
    if (!harness_json_equal("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"hi\"}\n", result.out))
        print_error("got %s\nstderr:\n%s\n", result.out, result.err);
    assert_true(
        harness_json_equal("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"hi\"}\n", result.out));
    /* The key was used: no warning about it. */
    assert_null(strstr(result.err, "greeting"));
    harness_run_result_free(&result);
    free(path);
    free(text);
}

/* A plugin built against ABI 1.0 with the shorter method descriptor of its time still works. */
static void test_old_plugin(void **state)
{
    fixture *f = *state;
    char *text = format("[plugin old]\npath = %s\n", env("RPCD_FIXTURE_OLD_PLUGIN"));
    char *path = write_config(f, text);
    harness_argv args = harness_rpcd_argv(path);
    harness_run_result result;
    run(&args, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"old.ping\"}\n", &result);
    if (!result.status.exited || result.status.code != 0)
        print_error("%s\n%s\n", harness_exit_describe(&result.status), result.err);
    assert_true(result.status.exited);
    assert_int_equal(result.status.code, 0);
    assert_true(
        harness_json_equal("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"pong\"}", result.out));
    harness_run_result_free(&result);
    free(path);
    free(text);
}

/* A key no plugin reads is most likely a typo: rpcd warns, naming it, and serves anyway. */
static void test_unused_plugin_key_warns(void **state)
{
    fixture *f = *state;
    char *text = format("[plugin echo]\npath = %s\ncolour = blue\n", env("RPCD_PLUGIN_ECHO"));
    char *path = write_config(f, text);
    harness_argv args = harness_rpcd_argv(path);
    harness_run_result result;
    run(&args, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[1]}\n", &result);
    assert_true(result.status.exited);
    assert_int_equal(result.status.code, 0);
    assert_true(harness_json_equal("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[1]}", result.out));
    const char *warning = strstr(result.err, "rpcd: warning:");
    if (!warning || !strstr(warning, "colour"))
        print_error("no warning naming the key:\n%s\n", result.err);
    assert_non_null(warning);
    assert_non_null(strstr(warning, "colour"));
    harness_run_result_free(&result);
    free(path);
    free(text);
}

int main(void)
{
#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        TEST(test_config_writable_by_others),
        TEST(test_plugin_writable_by_group),
        TEST(test_directory_writable_by_others),
        TEST(test_config_owned_by_another_user),
        TEST(test_missing_config),
        TEST(test_config_is_a_directory),
        TEST(test_syntax_error_names_line),
        TEST(test_unknown_daemon_key),
        TEST(test_bad_daemon_value),
        TEST(test_unknown_section),
        TEST(test_missing_plugin_file),
        TEST(test_plugin_not_a_shared_object),
        TEST(test_plugin_without_entry_point),
        TEST(test_plugin_abi_too_new),
        TEST(test_plugin_abi_major_2),
        TEST(test_plugin_init_failure),
        TEST(test_signal_while_plugin_init_hangs),
        TEST(test_no_descriptor_left_to_serve),
        TEST(test_duplicate_method),
        TEST(test_plugin_config_value_rejected),
        TEST(test_failure_with_quiet_and_check),
        TEST(test_optional_plugin_failure_skipped),
        TEST(test_check_default_config),
        TEST(test_help),
        TEST(test_version),
        TEST(test_bad_usage),
        TEST(test_quiet_hides_info),
        TEST(test_plugin_reads_its_section),
        TEST(test_old_plugin),
        TEST(test_unused_plugin_key_warns),
        TEST(test_fifo_config_and_plugin),
        TEST(test_config_with_nul_byte),
        TEST(test_config_too_big),
        TEST(test_plugin_link_into_open_directory),
        TEST(test_user_drops_every_id),
        TEST(test_group_replaces_the_users),
        TEST(test_user_switch_verified),
        TEST(test_no_new_privs_opt_out),
        TEST(test_root_without_user_warns_once),
        TEST(test_user_and_group_errors),
        TEST(test_plugin_without_proc),
        TEST(test_user_needs_root),
        TEST(test_unprivileged_own_user),
    };
#undef TEST
    return cmocka_run_group_tests(tests, NULL, NULL);
}
