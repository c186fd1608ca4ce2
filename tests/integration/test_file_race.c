/* SPDX-License-Identifier: MIT */
/*
 * The check-then-load race, tested as a race: rpcd --check starts over and over while another
 * process swaps the plugin under it (a file exchanged with a foreign one, a directory link
 * pointed elsewhere, and, when the test runs as root, a directory on the way exchanged by user
 * nobody), or the config. The foreign object's constructor leaves a mark; rpcd must never leave
 * one.
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

extern char **environ;

/*
 * Each race runs at least MIN_STARTS start-ups (four races: 1,000 or more), and goes on up to
 * MAX_STARTS while it has taken less than BUDGET_SECONDS, so that a sanitizer build, where a
 * start-up takes ten times as long, stays within CI's time.
 */
enum {
    MIN_STARTS = 250,
    MAX_STARTS = 1000,
    BUDGET_SECONDS = 4,
    SWAP_PHASE_US = 2000, /* the longest burst of swaps, and the longest pause */
    PARALLEL = 2,         /* start-ups at once; divides MIN_STARTS and MAX_STARTS */
    EXIT_CONFIG = 78,
    NOBODY = 65534,
};

typedef struct race {
    char base[64];    /* the race's own directory, 0755 */
    char marker[128]; /* where the foreign code writes when it is loaded */
    char config[128]; /* rpcd.conf */
    char **env;       /* environ plus RPCD_FOREIGN_MARKER (owned, the added string too) */
} race;

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

static int setup(void **state)
{
    race *r = calloc(1, sizeof *r);
    if (!r)
        return -1;
    snprintf(r->base, sizeof r->base, "/tmp/rpcd-race-XXXXXX");
    if (!mkdtemp(r->base) || chmod(r->base, 0755) != 0)
        return -1;
    snprintf(r->marker, sizeof r->marker, "%s/marker", r->base);
    snprintf(r->config, sizeof r->config, "%s/rpcd.conf", r->base);
    size_t count = 0;
    while (environ[count])
        count++;
    r->env = calloc(count + 2, sizeof *r->env);
    if (!r->env)
        return -1;
    memcpy(r->env, environ, count * sizeof *r->env);
    if (asprintf(&r->env[count], "RPCD_FOREIGN_MARKER=%s", r->marker) < 0)
        return -1;
    *state = r;
    return 0;
}

static int teardown(void **state)
{
    race *r = *state;
    char *command = format("rm -rf '%s'", r->base);
    int status = system(command);
    free(command);
    size_t count = 0;
    while (r->env[count + 1])
        count++;
    free(r->env[count]);
    free(r->env);
    free(r);
    return status == 0 ? 0 : -1;
}

static void copy_file(const char *from, const char *to, mode_t mode)
{
    size_t length;
    char *bytes = harness_read_file(from, &length);
    assert_non_null(bytes);
    FILE *out = fopen(to, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(bytes, 1, length, out), length);
    assert_int_equal(fclose(out), 0);
    assert_int_equal(chmod(to, mode), 0);
    free(bytes);
}

static char *make_dir(const race *r, const char *name, mode_t mode)
{
    char *path = format("%s/%s", r->base, name);
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(chmod(path, mode), 0);
    return path;
}

static void write_config(const race *r, const char *plugin_path)
{
    FILE *file = fopen(r->config, "w");
    assert_non_null(file);
    fprintf(file, "[plugin raced]\npath = %s\n", plugin_path);
    assert_int_equal(fclose(file), 0);
}

/* Microseconds on the monotonic clock. */
static long long now_us(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000 + now.tv_nsec / 1000;
}

/*
 * Starts a process that exchanges a and b in dir for ever, as user (uid and gid) when as_nobody.
 * It swaps in bursts as fast as it can, with pauses between (each up to SWAP_PHASE_US, drawn at
 * random): a burst races every step of a start-up, and a pause lets one through now and then
 * on a loaded machine too, where swaps without end would make every start-up see a change.
 * Returns its pid.
 */
static pid_t start_swapper(const char *dir, const char *a, const char *b, bool as_nobody)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (as_nobody && (setgroups(0, NULL) != 0 || setresgid(NOBODY, NOBODY, NOBODY) != 0 ||
                          setresuid(NOBODY, NOBODY, NOBODY) != 0))
            _exit(2);
        int fd = open(dir, O_PATH | O_DIRECTORY);
        if (fd < 0)
            _exit(3);
        unsigned seed = (unsigned)getpid();
        for (;;) {
            long long burst_end = now_us() + rand_r(&seed) % SWAP_PHASE_US;
            do {
                for (int i = 0; i < 16; i++)
                    if (renameat2(fd, a, fd, b, RENAME_EXCHANGE) != 0)
                        _exit(4);
            } while (now_us() < burst_end);
            long pause_us = rand_r(&seed) % SWAP_PHASE_US;
            struct timespec pause = {0, pause_us * 1000L};
            nanosleep(&pause, NULL);
        }
    }
    return pid;
}

static void stop_swapper(pid_t pid)
{
    int status;
    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    /* Killed, not ended by an error of its own: the swaps went on the whole time. */
    if (!WIFSIGNALED(status))
        fail_msg("the swapper stopped by itself (status %d)", WEXITSTATUS(status));
}

/* Lines in the marker file: how many times foreign code was loaded. */
static size_t foreign_loads(const race *r)
{
    size_t length = 0;
    char *text = harness_read_file(r->marker, &length);
    size_t lines = 0;
    for (size_t i = 0; text && i < length; i++)
        lines += text[i] == '\n';
    free(text);
    return lines;
}

typedef struct tally {
    size_t starts, accepted, refused, other;
} tally;

static double seconds_since(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* Runs rpcd --check on the race's config over and over (see MIN_STARTS), nothing on stdin. */
static void run_starts(const race *r, tally *out)
{
    const char *binary = harness_env("RPCD_BINARY");
    assert_non_null(binary);
    const char *argv[] = {binary, "-q", "--check", "-c", r->config, NULL};
    posix_spawn_file_actions_t actions;
    assert_int_equal(posix_spawn_file_actions_init(&actions), 0);
    for (int fd = 0; fd < 3; fd++)
        assert_int_equal(posix_spawn_file_actions_addopen(&actions, fd, "/dev/null",
                                                          fd == 0 ? O_RDONLY : O_WRONLY, 0),
                         0);
    memset(out, 0, sizeof *out);
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    /* Two at a time: the machine's cores stay busy while one rpcd waits on the other. */
    while (out->starts < MAX_STARTS) {
        if (out->starts >= MIN_STARTS && seconds_since(&start) >= BUDGET_SECONDS)
            break;
        pid_t pids[PARALLEL];
        for (int i = 0; i < PARALLEL; i++)
            assert_int_equal(
                posix_spawn(&pids[i], binary, &actions, NULL, (char *const *)argv, r->env), 0);
        for (int i = 0; i < PARALLEL; i++) {
            int status;
            assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
            out->starts++;
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                out->accepted++;
            else if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_CONFIG)
                out->refused++;
            else
                out->other++;
        }
    }
    posix_spawn_file_actions_destroy(&actions);
}

/*
 * One race: starts rpcd while the swapper runs, then reports. rpcd must have loaded no foreign
 * code and ended each time either served (the checked plugin) or refused (exit 78).
 * both_outcomes: the swap is visible to the check, so both must have happened.
 */
static void expect_no_foreign_code(const race *r, const char *name, pid_t swapper,
                                   bool both_outcomes)
{
    tally counts;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    run_starts(r, &counts);
    double seconds = seconds_since(&start);
    stop_swapper(swapper);
    size_t foreign = foreign_loads(r);
    print_message("%s: %zu start-ups in %.1f s: %zu loaded the checked plugin, %zu refused, %zu "
                  "other; foreign code loaded %zu times\n",
                  name, counts.starts, seconds, counts.accepted, counts.refused, counts.other,
                  foreign);
    assert_int_equal(foreign, 0);
    assert_int_equal(counts.other, 0);
    if (both_outcomes) {
        assert_true(counts.accepted > 0);
        assert_true(counts.refused > 0);
    }
}

/*
 * The plugin file exchanged with a foreign one in its own (safe) directory. The foreign file
 * is writable by others, so a check that sees it refuses it: only a load of something other
 * than what was checked can run it.
 */
static void test_file_exchanged(void **state)
{
    race *r = *state;
    if (harness_wrapped())
        skip(); /* a race needs many quick start-ups, which a wrapper makes slow */
    char *dir = make_dir(r, "a", 0755);
    char *plugin = format("%s/plugin.so", dir);
    char *other = format("%s/other.so", dir);
    copy_file(harness_env("RPCD_PLUGIN_ECHO"), plugin, 0644);
    copy_file(harness_env("RPCD_FIXTURE_FOREIGN"), other, 0666);
    write_config(r, plugin);
    pid_t swapper = start_swapper(dir, "plugin.so", "other.so", false);
    expect_no_foreign_code(r, "file exchanged", swapper, true);
    free(other);
    free(plugin);
    free(dir);
}

/*
 * A link to the plugin's directory pointed now at a safe directory, now at a world-writable one
 * holding the foreign plugin: a check must judge the directory the load uses.
 */
static void test_directory_link_swapped(void **state)
{
    race *r = *state;
    if (harness_wrapped())
        skip();
    char *dir = make_dir(r, "b", 0755);
    char *good = make_dir(r, "b/good", 0755);
    char *evil = make_dir(r, "b/evil", 0777);
    char *good_plugin = format("%s/plugin.so", good);
    char *evil_plugin = format("%s/plugin.so", evil);
    copy_file(harness_env("RPCD_PLUGIN_ECHO"), good_plugin, 0644);
    copy_file(harness_env("RPCD_FIXTURE_FOREIGN"), evil_plugin, 0644);
    char *current = format("%s/cur", dir);
    char *alternate = format("%s/alt", dir);
    assert_int_equal(symlink("good", current), 0);
    assert_int_equal(symlink("evil", alternate), 0);
    char *plugin = format("%s/plugin.so", current);
    write_config(r, plugin);
    pid_t swapper = start_swapper(dir, "cur", "alt", false);
    expect_no_foreign_code(r, "directory link swapped", swapper, true);
    free(plugin);
    free(alternate);
    free(current);
    free(evil_plugin);
    free(good_plugin);
    free(evil);
    free(good);
    free(dir);
}

/*
 * Another user exchanges the plugin's directory with one of their own, in a world-writable
 * directory on the way. rpcd refuses that directory every time; nothing of theirs may run.
 */
static void test_ancestor_exchanged_by_another_user(void **state)
{
    race *r = *state;
    if (harness_wrapped())
        skip();
    if (geteuid() != 0)
        skip(); /* another user is needed, and only root can become one */
    char *open_dir = make_dir(r, "c", 0777);
    char *mine = make_dir(r, "c/d", 0755);
    char *theirs = make_dir(r, "c/e", 0755);
    char *plugin = format("%s/plugin.so", mine);
    char *their_plugin = format("%s/plugin.so", theirs);
    copy_file(harness_env("RPCD_PLUGIN_ECHO"), plugin, 0644);
    copy_file(harness_env("RPCD_FIXTURE_FOREIGN"), their_plugin, 0644);
    assert_int_equal(chown(theirs, NOBODY, NOBODY), 0);
    assert_int_equal(chown(their_plugin, NOBODY, NOBODY), 0);
    write_config(r, plugin);
    pid_t swapper = start_swapper(open_dir, "d", "e", true);
    expect_no_foreign_code(r, "ancestor exchanged by nobody", swapper, false);
    free(their_plugin);
    free(plugin);
    free(theirs);
    free(mine);
    free(open_dir);
}

/*
 * The config exchanged with a foreign one that names the foreign plugin (kept in a safe place:
 * read, that config would load it). The foreign config is writable by others, so that only a
 * read of something other than what was checked can use it.
 */
static void test_config_exchanged(void **state)
{
    race *r = *state;
    if (harness_wrapped())
        skip();
    char *dir = make_dir(r, "k", 0755);
    char *foreign = format("%s/foreign.so", dir);
    copy_file(harness_env("RPCD_FIXTURE_FOREIGN"), foreign, 0644);
    char *other = format("%s/other.conf", dir);
    snprintf(r->config, sizeof r->config, "%s", other);
    write_config(r, foreign);
    assert_int_equal(chmod(other, 0666), 0);
    snprintf(r->config, sizeof r->config, "%s/rpcd.conf", dir);
    write_config(r, harness_env("RPCD_PLUGIN_ECHO"));
    pid_t swapper = start_swapper(dir, "rpcd.conf", "other.conf", false);
    expect_no_foreign_code(r, "config exchanged", swapper, true);
    free(other);
    free(foreign);
    free(dir);
}

int main(void)
{
#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        TEST(test_file_exchanged),
        TEST(test_directory_link_swapped),
        TEST(test_ancestor_exchanged_by_another_user),
        TEST(test_config_exchanged),
    };
#undef TEST
    return cmocka_run_group_tests(tests, NULL, NULL);
}
