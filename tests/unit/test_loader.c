/* SPDX-License-Identifier: MIT */
/*
 * Loader tests through the real dlopen path: bundled plugins and fixture plugins built to
 * fail each start-up check (ABI versions, entry point, init, duplicate names).
 */
#include "config/config.h"
#include "loader/loader.h"
#include "base/log.h"
#include "methods/registry.h"
#include "test_time.h"

#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static const char *env_path(const char *name)
{
    const char *value = getenv(name);
    if (!value)
        fail_msg("%s is not set: run this test through meson test", name);
    return value;
}

typedef struct attempt {
    rpcd_config *config;
    registry *methods;
    loader *plugins;
    int status;
    char error[1024];
    char log[4096];
} attempt;

/*
 * What the running test holds, freed by its teardown (release_held) when an assertion ends it
 * early: a failing test then reports its failure, not a leak of everything it had loaded besides.
 * The attempts are recorded by value (the test's own copy is on a stack cmocka has left).
 */
enum { HELD_MAX = 8 };
static attempt held_attempts[HELD_MAX];
static char *held_texts[HELD_MAX * 2];

static void hold_attempt(const attempt *a)
{
    for (size_t i = 0; i < HELD_MAX; i++) {
        if (!held_attempts[i].config) {
            held_attempts[i] = *a;
            return;
        }
    }
    fail_msg("more than %d attempts held at once", HELD_MAX);
}

/* The record of a's resources, or NULL. */
static attempt *held_record(const attempt *a)
{
    for (size_t i = 0; i < HELD_MAX; i++)
        if (a->config && held_attempts[i].config == a->config)
            return &held_attempts[i];
    return NULL;
}

/* text (new, from asprintf), held until the test's teardown. */
static char *hold_text(char *text)
{
    for (size_t i = 0; i < HELD_MAX * 2; i++) {
        if (!held_texts[i]) {
            held_texts[i] = text;
            return text;
        }
    }
    fail_msg("more than %d texts held at once", HELD_MAX * 2);
    return NULL;
}

/* A new text like asprintf's, held until the test's teardown. */
static char *format(const char *pattern, ...) __attribute__((format(printf, 1, 2)));
static char *format(const char *pattern, ...)
{
    va_list arguments;
    va_start(arguments, pattern);
    char *text;
    int length = vasprintf(&text, pattern, arguments);
    va_end(arguments);
    assert_true(length >= 0);
    return hold_text(text);
}

/* Loads a config made of the given "[plugin ...]" sections; captures the log. */
static void load(attempt *a, const char *sections)
{
    memset(a, 0, sizeof *a);
    char config_error[512];
    assert_int_equal(
        cfg_load_string(sections, "/test/rpcd.conf", &a->config, config_error, sizeof config_error),
        0);
    hold_attempt(a);
    assert_int_equal(reg_new(&a->methods), 0);
    held_record(a)->methods = a->methods;
    FILE *log_file = tmpfile();
    assert_non_null(log_file);
    log_set_fd(fileno(log_file));
    a->status = ld_load_all(a->config, a->methods, &a->plugins, a->error, sizeof a->error);
    held_record(a)->plugins = a->plugins;
    held_record(a)->status = a->status;
    log_set_fd(STDERR_FILENO);
    rewind(log_file);
    size_t n = fread(a->log, 1, sizeof a->log - 1, log_file);
    a->log[n] = '\0';
    fclose(log_file);
}

static void finish(attempt *a)
{
    attempt *record = held_record(a);
    if (record)
        memset(record, 0, sizeof *record);
    if (a->status == 0)
        ld_unload_all(a->plugins, a->methods);
    reg_free(a->methods);
    cfg_free(a->config);
}

/* The teardown of every test: frees what an assertion that failed left held, newest first. */
static int release_held(void **state)
{
    (void)state;
    for (size_t i = HELD_MAX; i-- > 0;) {
        attempt left = held_attempts[i];
        if (left.config)
            finish(&left);
    }
    for (size_t i = 0; i < HELD_MAX * 2; i++) {
        free(held_texts[i]);
        held_texts[i] = NULL;
    }
    return 0;
}

static char *section(const char *name, const char *path, const char *extra)
{
    return format("[plugin %s]\npath = %s\n%s", name, path, extra);
}

static void expect_failure(const char *fixture, const char *must_contain_1,
                           const char *must_contain_2)
{
    attempt a;
    char *text = section("x", env_path(fixture), "");
    load(&a, text);
    assert_int_equal(a.status, -1);
    assert_non_null(strstr(a.error, env_path(fixture))); /* names the plugin's path */
    if (!strstr(a.error, must_contain_1) || (must_contain_2 && !strstr(a.error, must_contain_2)))
        fail_msg("unexpected message: %s", a.error);
    assert_null(strchr(a.error, '\n'));
    assert_int_equal(reg_count(a.methods), 0);
    finish(&a);
}

static void test_bundled_plugins_load(void **state)
{
    (void)state;
    attempt a;
    char *text;
    text = format("[plugin echo]\npath = %s\n[plugin spec]\npath = %s\n",
                  env_path("RPCD_PLUGIN_ECHO"), env_path("RPCD_PLUGIN_SPEC"));
    load(&a, text);
    assert_int_equal(a.status, 0);
    assert_int_equal(ld_count(a.plugins), 2);
    const reg_method *echo = reg_find(a.methods, "echo", 4);
    assert_non_null(echo);
    assert_string_equal(echo->owner_name, "echo");
    assert_non_null(echo->description);
    assert_non_null(reg_find(a.methods, "subtract", 8));
    finish(&a);
}

/* A stand-in for the isolation layer's kind: what the loader hands it, and when. */
static struct {
    int starts, stops;
    bool fd_open;
    const void *running;
} stand_in;

static int stand_in_start(const rpcd_config *daemon, const cfg_plugin *config, int fd,
                          registry *methods, const void *owner, void **out, char *error,
                          size_t error_size)
{
    (void)daemon, (void)owner, (void)error, (void)error_size;
    stand_in.starts++;
    stand_in.fd_open = fcntl(fd, F_GETFD) != -1;
    close(fd);
    assert_int_equal(config->isolation, CFG_ISOLATION_PROCESS);
    assert_int_equal(reg_count(methods), 0);
    *out = &stand_in;
    stand_in.running = &stand_in;
    return 0;
}

static void stand_in_stop(void *running)
{
    assert_ptr_equal(running, stand_in.running);
    stand_in.stops++;
}

/* isolation = process goes through the kind set by the layer above, and without one fails. */
static void test_isolated_plugin_through_its_kind(void **state)
{
    (void)state;
    attempt a;
    char *text = section("x", env_path("RPCD_PLUGIN_ECHO"), "isolation = process\n");
    ld_set_isolated_kind(NULL);
    load(&a, text);
    assert_int_equal(a.status, -1);
    assert_non_null(strstr(a.error, "isolation = process is not available here"));
    assert_non_null(strstr(a.error, env_path("RPCD_PLUGIN_ECHO")));
    finish(&a);

    static const ld_plugin_kind kind = {stand_in_start, stand_in_stop, NULL};
    ld_set_isolated_kind(&kind);
    load(&a, text);
    assert_int_equal(a.status, 0);
    assert_int_equal(stand_in.starts, 1);
    assert_true(stand_in.fd_open); /* the checked copy, handed over open */
    assert_int_equal(stand_in.stops, 0);
    finish(&a);
    assert_int_equal(stand_in.stops, 1); /* stopped with the last reference */
    ld_set_isolated_kind(NULL);
}

/* "has ABI <the daemon's version>", the second version every refusal names. */
static const char *daemon_version(void)
{
    static char text[32];
    snprintf(text, sizeof text, "has ABI %d.%d", RPCD_ABI_MAJOR, RPCD_ABI_MINOR);
    return text;
}

static void test_abi_too_new(void **state)
{
    (void)state;
    char wanted[32];
    snprintf(wanted, sizeof wanted, "ABI %d.%d,", RPCD_ABI_MAJOR, RPCD_ABI_MINOR + 1);
    expect_failure("RPCD_FIXTURE_ABI_TOO_NEW", wanted, daemon_version());
}

static void test_abi_major_differs(void **state)
{
    (void)state;
    expect_failure("RPCD_FIXTURE_ABI_MAJOR_2", "ABI 2.0,", daemon_version());
}

static void test_no_entry_point(void **state)
{
    (void)state;
    expect_failure("RPCD_FIXTURE_NO_ENTRY", "no entry point rpcd_plugin_entry", NULL);
}

static void test_init_failure_frees_registered_user_data(void **state)
{
    (void)state;
    /* The fixture registers a method with heap user data before failing: leak checkers
     * (ASan's LeakSanitizer in CI) see it freed or not. */
    expect_failure("RPCD_FIXTURE_INIT_FAIL", "init failed: database unreachable", NULL);
}

/*
 * The ABI promises that a plugin whose init failed is not shut down: the fixture's shutdown
 * creates a marker file. The same fixture told to succeed creates it at unload, which shows the
 * marker would tell.
 */
static void test_init_failure_skips_shutdown(void **state)
{
    (void)state;
    char dir[] = "/tmp/rpcd-marker-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char marker[sizeof dir + 16];
    snprintf(marker, sizeof marker, "%s/shutdown", dir);
    char *extra, *text;
    attempt a;

    extra = format("shutdown_marker = %s\n", marker);
    text = section("x", env_path("RPCD_FIXTURE_INIT_FAIL"), extra);
    load(&a, text);
    assert_int_equal(a.status, -1);
    assert_non_null(strstr(a.error, "init failed: database unreachable"));
    finish(&a);
    bool called = access(marker, F_OK) == 0;
    unlink(marker);

    extra = format("shutdown_marker = %s\nsucceed = true\n", marker);
    text = section("x", env_path("RPCD_FIXTURE_INIT_FAIL"), extra);
    load(&a, text);
    assert_int_equal(a.status, 0);
    finish(&a);
    bool called_after_success = access(marker, F_OK) == 0;
    unlink(marker);
    rmdir(dir);

    if (called)
        fail_msg("shutdown was called after a failed init");
    assert_true(called_after_success);
}

static void test_missing_file_and_not_a_shared_object(void **state)
{
    (void)state;
    attempt a;
    load(&a, "[plugin x]\npath = /nonexistent/plugin.so\n");
    assert_int_equal(a.status, -1);
    assert_string_equal(a.error, "plugin /nonexistent/plugin.so: No such file or directory");
    finish(&a);

    char path[] = "/tmp/rpcd-not-elf-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "not elf\n", 8), 8);
    close(fd);
    char *text = section("x", path, "");
    load(&a, text);
    assert_int_equal(a.status, -1);
    assert_non_null(strstr(a.error, "not a loadable shared object"));
    assert_non_null(strstr(a.error, path));
    finish(&a);
    unlink(path);
}

static void test_duplicate_method_names_both_plugins(void **state)
{
    (void)state;
    attempt a;
    char *text;
    text = format("[plugin a]\npath = %s\n[plugin b]\npath = %s\n",
                  env_path("RPCD_FIXTURE_DUPLICATE_A"), env_path("RPCD_FIXTURE_DUPLICATE_B"));
    load(&a, text);
    assert_int_equal(a.status, -1);
    assert_non_null(strstr(a.error, "'dup.method'"));
    /* Named by their sections, as the config names them. */
    assert_non_null(strstr(a.error, "registered by both [plugin a] and [plugin b]"));
    assert_int_equal(reg_count(a.methods), 0); /* everything loaded so far is undone */
    finish(&a);
}

static void test_optional_plugin_is_skipped(void **state)
{
    (void)state;
    attempt a;
    char *text;
    text = format("[plugin broken]\npath = %s\nrequired = false\n"
                  "[plugin echo]\npath = %s\n",
                  env_path("RPCD_FIXTURE_INIT_FAIL"), env_path("RPCD_PLUGIN_ECHO"));
    load(&a, text);
    assert_int_equal(a.status, 0);
    assert_int_equal(ld_count(a.plugins), 1);
    assert_non_null(strstr(a.log, "not required: skipped"));
    assert_null(reg_find(a.methods, "init_fail.never", 15));
    assert_non_null(reg_find(a.methods, "echo", 4));
    finish(&a);
}

static void test_old_descriptor_and_config_keys(void **state)
{
    (void)state;
    attempt a;
    char *text;
    text = format("[plugin old]\npath = %s\n[plugin m]\npath = %s\n"
                  "greeting = hi\nunused_key = 1\n",
                  env_path("RPCD_FIXTURE_OLD_PLUGIN"), env_path("RPCD_FIXTURE_MISBEHAVE"));
    load(&a, text);
    assert_int_equal(a.status, 0);
    const reg_method *old = reg_find(a.methods, "old.ping", 8);
    assert_non_null(old);
    assert_null(old->description); /* beyond the size the old plugin declared */
    assert_non_null(strstr(a.log, "did not use its key 'unused_key'"));
    assert_null(strstr(a.log, "'greeting'"));
    finish(&a);
}

static void test_plugin_config_errors_reach_init(void **state)
{
    (void)state;
    attempt a;
    char *text = section("progress", env_path("RPCD_PLUGIN_PROGRESS"), "default_steps = abc\n");
    load(&a, text);
    assert_int_equal(a.status, -1);
    assert_non_null(strstr(a.error, "init failed"));
    assert_non_null(strstr(a.error, "default_steps"));
    finish(&a);
}

/* A FIFO (or any file that is not regular) as a plugin is refused at once, never opened for
 * reading, whose open would wait for a writer for ever. */
static void test_fifo_plugin_refused_without_hanging(void **state)
{
    (void)state;
    char dir[] = "/tmp/rpcd-loader-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char fifo[sizeof dir + 16];
    snprintf(fifo, sizeof fifo, "%s/p.so", dir);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    static const char *const extras[] = {"", "required = false\n"};
    for (size_t i = 0; i < 2; i++) {
        attempt a;
        char *text = section("fifo", fifo, extras[i]);
        struct timespec start, end;
        clock_gettime(CLOCK_MONOTONIC, &start);
        load(&a, text);
        clock_gettime(CLOCK_MONOTONIC, &end);
        assert_true(end.tv_sec - start.tv_sec < test_time_ms(2000) / 1000);
        if (i == 0) {
            assert_int_equal(a.status, -1);
            char expected[256];
            snprintf(expected, sizeof expected, "plugin %s: not a regular file (%s is a FIFO)",
                     fifo, fifo);
            assert_string_equal(a.error, expected);
        } else {
            assert_int_equal(a.status, 0);
            assert_non_null(strstr(a.log, "is a FIFO"));
        }
        finish(&a);
    }
    unlink(fifo);
    rmdir(dir);
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    FILE *out = fopen(to, "wb");
    assert_non_null(in);
    assert_non_null(out);
    char buffer[65536];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, in)) > 0)
        assert_int_equal(fwrite(buffer, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
    assert_int_equal(chmod(to, 0644), 0);
}

/* Every directory on the way to a plugin is checked, and a link's target directory too. */
static void test_plugin_in_unsafe_directory(void **state)
{
    (void)state;
    char dir[] = "/tmp/rpcd-loader-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char open_dir[64], inner[80], plugin[96], via[96];
    snprintf(open_dir, sizeof open_dir, "%s/open", dir);
    snprintf(inner, sizeof inner, "%s/inner", open_dir);
    snprintf(plugin, sizeof plugin, "%s/echo.so", inner);
    snprintf(via, sizeof via, "%s/echo.so", dir);
    assert_int_equal(mkdir(open_dir, 0755), 0);
    assert_int_equal(chmod(open_dir, 0777), 0);
    assert_int_equal(mkdir(inner, 0755), 0);
    copy_file(env_path("RPCD_PLUGIN_ECHO"), plugin);
    assert_int_equal(symlink(plugin, via), 0);
    const char *paths[] = {plugin, via};
    for (size_t i = 0; i < 2; i++) {
        attempt a;
        char *text = section("echo", paths[i], "");
        load(&a, text);
        assert_int_equal(a.status, -1);
        char expected[512];
        snprintf(expected, sizeof expected,
                 "plugin %s: the directory %s is writable by others; run chmod go-w %s, or run "
                 "rpcd with --insecure",
                 paths[i], open_dir, open_dir);
        assert_string_equal(a.error, expected);
        finish(&a);
    }
    unlink(via);
    unlink(plugin);
    rmdir(inner);
    rmdir(open_dir);
    rmdir(dir);
}

/* A reload of config text over previous: the new loader and table, with the log. */
static void reload(attempt *next, const attempt *previous, const char *sections)
{
    memset(next, 0, sizeof *next);
    char config_error[512];
    assert_int_equal(cfg_load_string(sections, "/test/rpcd.conf", &next->config, config_error,
                                     sizeof config_error),
                     0);
    hold_attempt(next);
    assert_int_equal(reg_new(&next->methods), 0);
    held_record(next)->methods = next->methods;
    FILE *log_file = tmpfile();
    assert_non_null(log_file);
    log_set_fd(fileno(log_file));
    ld_previous before = {previous->plugins, previous->methods, NULL};
    next->status = ld_load(next->config, &before, next->methods, &next->plugins, next->error,
                           sizeof next->error);
    held_record(next)->plugins = next->plugins;
    held_record(next)->status = next->status;
    log_set_fd(STDERR_FILENO);
    rewind(log_file);
    size_t n = fread(next->log, 1, sizeof next->log - 1, log_file);
    next->log[n] = '\0';
    fclose(log_file);
}

/* Unloads a and captures what the plugins log on their way out. */
static void finish_logged(attempt *a, char *log, size_t size)
{
    FILE *log_file = tmpfile();
    assert_non_null(log_file);
    log_set_fd(fileno(log_file));
    finish(a);
    log_set_fd(STDERR_FILENO);
    rewind(log_file);
    size_t n = fread(log, 1, size - 1, log_file);
    log[n] = '\0';
    fclose(log_file);
}

/*
 * An unchanged plugin is shared by the next set, not initialised again, and shut down only when
 * the last set holding it goes; a file changed in place (same path, same inode, new content) is
 * loaded anew, as its own code, beside the one running.
 */
static void test_reload_shares_unchanged_and_loads_changed(void **state)
{
    (void)state;
    char path[] = "/tmp/rpcd-loader-XXXXXX.so";
    int fd = mkstemps(path, 3);
    assert_true(fd >= 0);
    close(fd);
    copy_file(env_path("RPCD_FIXTURE_BUILD_A"), path);
    char *text = section("named", path, "prefix = x.\n");
    attempt first, second, third;
    load(&first, text);
    assert_int_equal(first.status, 0);
    assert_non_null(strstr(first.log, "init build a"));
    const void *instance = ld_instance(first.plugins, "named");
    assert_non_null(instance);

    reload(&second, &first, text);
    assert_int_equal(second.status, 0);
    assert_null(strstr(second.log, "init build")); /* kept, not initialised again */
    assert_ptr_equal(ld_instance(second.plugins, "named"), instance);
    const reg_method *method = reg_find(second.methods, "x.build.name", 12);
    assert_non_null(method);
    assert_ptr_equal(method->owner, instance);
    assert_ptr_equal(method->user_data, reg_find(first.methods, "x.build.name", 12)->user_data);
    char log[4096];
    finish_logged(&first, log, sizeof log);
    assert_null(strstr(log, "shutdown")); /* the second set still holds it */

    /* The same file written over in place with the other build: new code, loaded beside. */
    copy_file(env_path("RPCD_FIXTURE_BUILD_B"), path);
    reload(&third, &second, text);
    assert_int_equal(third.status, 0);
    assert_non_null(strstr(third.log, "init build b"));
    assert_ptr_not_equal(ld_instance(third.plugins, "named"), instance);
    finish_logged(&second, log, sizeof log);
    assert_non_null(strstr(log, "shutdown build a"));
    finish_logged(&third, log, sizeof log);
    assert_non_null(strstr(log, "shutdown build b"));
    unlink(path);
}

/*
 * A file written over in place with the same size and its old modification time put back (as
 * a copy that keeps times does): only its content tells it changed, and it is loaded anew.
 */
static void test_reload_compares_content(void **state)
{
    (void)state;
    char path[] = "/tmp/rpcd-loader-XXXXXX.so";
    int fd = mkstemps(path, 3);
    assert_true(fd >= 0);
    close(fd);
    copy_file(env_path("RPCD_FIXTURE_BUILD_A"), path);
    struct stat before, after;
    assert_int_equal(stat(path, &before), 0);
    char *text = section("named", path, "prefix = x.\n");
    attempt first, second;
    load(&first, text);
    assert_int_equal(first.status, 0);
    copy_file(env_path("RPCD_FIXTURE_BUILD_B"), path);
    const struct timespec times[2] = {before.st_atim, before.st_mtim};
    assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
    assert_int_equal(stat(path, &after), 0);
    /* Only the content differs from what the identity records. */
    assert_int_equal(after.st_ino, before.st_ino);
    assert_int_equal(after.st_size, before.st_size);
    assert_int_equal(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
    assert_int_equal(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
    reload(&second, &first, text);
    assert_int_equal(second.status, 0);
    assert_non_null(strstr(second.log, "init build b"));
    char log[4096];
    finish_logged(&first, log, sizeof log);
    assert_non_null(strstr(log, "shutdown build a"));
    finish_logged(&second, log, sizeof log);
    unlink(path);
}

/* A changed section (another key) is a changed plugin: loaded anew. */
static void test_reload_loads_plugin_with_changed_keys(void **state)
{
    (void)state;
    char *text = section("named", env_path("RPCD_FIXTURE_BUILD_A"), "prefix = x.\n");
    char *changed = section("named", env_path("RPCD_FIXTURE_BUILD_A"), "prefix = y.\n");
    attempt first, second;
    load(&first, text);
    assert_int_equal(first.status, 0);
    reload(&second, &first, changed);
    assert_int_equal(second.status, 0);
    assert_non_null(strstr(second.log, "init build a"));
    assert_ptr_not_equal(ld_instance(second.plugins, "named"), ld_instance(first.plugins, "named"));
    assert_non_null(reg_find(second.methods, "y.build.name", 12));
    assert_null(reg_find(second.methods, "x.build.name", 12));
    finish(&first);
    finish(&second);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_bundled_plugins_load, release_held),
        cmocka_unit_test_teardown(test_abi_too_new, release_held),
        cmocka_unit_test_teardown(test_abi_major_differs, release_held),
        cmocka_unit_test_teardown(test_no_entry_point, release_held),
        cmocka_unit_test_teardown(test_init_failure_frees_registered_user_data, release_held),
        cmocka_unit_test_teardown(test_init_failure_skips_shutdown, release_held),
        cmocka_unit_test_teardown(test_missing_file_and_not_a_shared_object, release_held),
        cmocka_unit_test_teardown(test_duplicate_method_names_both_plugins, release_held),
        cmocka_unit_test_teardown(test_optional_plugin_is_skipped, release_held),
        cmocka_unit_test_teardown(test_old_descriptor_and_config_keys, release_held),
        cmocka_unit_test_teardown(test_plugin_config_errors_reach_init, release_held),
        cmocka_unit_test_teardown(test_fifo_plugin_refused_without_hanging, release_held),
        cmocka_unit_test_teardown(test_plugin_in_unsafe_directory, release_held),
        cmocka_unit_test_teardown(test_reload_shares_unchanged_and_loads_changed, release_held),
        cmocka_unit_test_teardown(test_reload_compares_content, release_held),
        cmocka_unit_test_teardown(test_reload_loads_plugin_with_changed_keys, release_held),
        cmocka_unit_test_teardown(test_isolated_plugin_through_its_kind, release_held),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
