/* SPDX-License-Identifier: MIT */
/*
 * watch: a change of the config file, of a drop-in the pattern matches, of the drop-in
 * directory and of a plugin file is seen; other files in the same directories are not; a new
 * set replaces the old one.
 */
#include "config/watch.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

typedef struct fixture {
    char dir[64];
    char config_path[256];
    char include[256];
    char plugin_path[256];
    cfg_plugin plugin;
    rpcd_config config;
    watcher *watch;
} fixture;

static void touch(const fixture *f, const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", f->dir, name);
    FILE *file = fopen(path, "a");
    assert_non_null(file);
    fputs("x\n", file);
    assert_int_equal(fclose(file), 0);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/rpcd-watch-XXXXXX");
    if (!f || !mkdtemp(f->dir))
        return -1;
    char dropins[128];
    snprintf(dropins, sizeof dropins, "%s/rpcd.conf.d", f->dir);
    mkdir(dropins, 0700);
    snprintf(f->config_path, sizeof f->config_path, "%s/rpcd.conf", f->dir);
    snprintf(f->include, sizeof f->include, "%s/*.conf", dropins);
    snprintf(f->plugin_path, sizeof f->plugin_path, "%s/tool.so", f->dir);
    f->plugin.path = f->plugin_path;
    f->config.path = f->config_path;
    f->config.include = f->include;
    f->config.plugins = &f->plugin;
    f->config.plugin_count = 1;
    if (watch_new(&f->watch) != 0 || watch_set(f->watch, &f->config) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    watch_free(f->watch);
    char command[128];
    snprintf(command, sizeof command, "rm -rf %s", f->dir);
    int status = system(command);
    free(f);
    return status == 0 ? 0 : -1;
}

static void test_each_file_read_is_seen(void **state)
{
    fixture *f = *state;
    assert_false(watch_read(f->watch)); /* nothing yet, and it does not block */
    static const char *const seen[] = {"rpcd.conf", "rpcd.conf.d/50-a.conf", "tool.so"};
    for (size_t i = 0; i < sizeof seen / sizeof seen[0]; i++) {
        touch(f, seen[i]);
        assert_true(watch_read(f->watch));
        assert_false(watch_read(f->watch));
    }
}

static void test_other_files_are_not(void **state)
{
    fixture *f = *state;
    static const char *const unseen[] = {"rpcd.conf~", "rpcd.conf.d/README", "tool.so.new",
                                         "rpcd.conf.d/.hidden.conf", "other.so"};
    for (size_t i = 0; i < sizeof unseen / sizeof unseen[0]; i++) {
        touch(f, unseen[i]);
        assert_false(watch_read(f->watch));
    }
}

static void test_dropin_directory_itself(void **state)
{
    fixture *f = *state;
    char dropins[128];
    snprintf(dropins, sizeof dropins, "%s/rpcd.conf.d", f->dir);
    assert_int_equal(rmdir(dropins), 0);
    assert_true(watch_read(f->watch));
    assert_int_equal(mkdir(dropins, 0700), 0);
    assert_true(watch_read(f->watch));
}

static void test_new_set_replaces_old(void **state)
{
    fixture *f = *state;
    char other[128];
    snprintf(other, sizeof other, "%s/other.so", f->dir);
    f->plugin.path = other;
    assert_int_equal(watch_set(f->watch, &f->config), 0);
    touch(f, "tool.so");
    assert_false(watch_read(f->watch));
    touch(f, "other.so");
    assert_true(watch_read(f->watch));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_each_file_read_is_seen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_files_are_not, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dropin_directory_itself, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_set_replaces_old, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
