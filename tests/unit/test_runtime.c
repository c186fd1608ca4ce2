/* SPDX-License-Identifier: MIT */
/*
 * Start-up and tear-down: a config file to loaded plugins, their methods in the first
 * generation, serve options from the config, and back; a required plugin that fails undoes the
 * plugins loaded before it, an optional one is skipped; a mistake in the config names the file.
 * Plugins are the bundled and fixture ones, their paths given by the environment.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/token_bucket.h"

#include "log_capture.h"
#include "serve/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *env_path(const char *name)
{
    const char *value = getenv(name);
    if (!value)
        fail_msg("%s is not set: run this test through meson test", name);
    return value;
}

typedef struct scratch {
    char dir[64];
    char config[128];
    char marker[128];
} scratch;

static int setup(void **state)
{
    scratch *s = calloc(1, sizeof *s);
    assert_non_null(s);
    snprintf(s->dir, sizeof s->dir, "/tmp/rpcd-runtime-XXXXXX");
    assert_non_null(mkdtemp(s->dir));
    snprintf(s->config, sizeof s->config, "%s/rpcd.conf", s->dir);
    snprintf(s->marker, sizeof s->marker, "%s/shutdown-ran", s->dir);
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    scratch *s = *state;
    unlink(s->config);
    unlink(s->marker);
    rmdir(s->dir);
    free(s);
    return 0;
}

static void write_config(const scratch *s, const char *text)
{
    FILE *file = fopen(s->config, "w");
    assert_non_null(file);
    assert_int_equal(fputs(text, file) >= 0, 1);
    assert_int_equal(fclose(file), 0);
}

/*
 * Whether the plugin of section name is mapped into this process: a plugin is loaded from a
 * sealed memfd copy named after its section.
 */
static bool mapped(const char *name)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    assert_non_null(maps);
    char line[4096], copy[256];
    snprintf(copy, sizeof copy, "/memfd:%s ", name);
    bool found = false;
    while (!found && fgets(line, sizeof line, maps))
        found = strstr(line, copy) != NULL;
    fclose(maps);
    return found;
}

/* The config is written by this test in /tmp: its owner and mode are not what is tested. */
static const rt_flags flags = {.log_level = LOG_WARNING, .insecure = true};

static int start(const scratch *s, rpcd_runtime *runtime, char *error, size_t error_size,
                 log_capture *log)
{
    log_capture_start(log, LOG_WARNING);
    int status = rt_start(s->config, &flags, runtime, error, error_size);
    log_capture_end(log);
    return status;
}

/* In-memory input and output for one serve. */
typedef struct memory {
    const char *in;
    size_t at;
    char out[4096];
    size_t length;
} memory;

static ssize_t memory_read(void *context, char *into, size_t capacity)
{
    memory *m = context;
    size_t n = strlen(m->in + m->at);
    if (n > capacity)
        n = capacity;
    memcpy(into, m->in + m->at, n);
    m->at += n;
    return (ssize_t)n;
}

static int memory_write(void *context, const struct iovec *parts, int part_count)
{
    memory *m = context;
    for (int i = 0; i < part_count; i++) {
        assert_true(m->length + parts[i].iov_len < sizeof m->out);
        memcpy(m->out + m->length, parts[i].iov_base, parts[i].iov_len);
        m->length += parts[i].iov_len;
    }
    m->out[m->length] = '\0';
    return 0;
}

static void test_start_serve_and_stop(void **state)
{
    scratch *s = *state;
    char text[2048];
    snprintf(text, sizeof text,
             "[rpcd]\nworkers = 3\nmax_in_flight = 17\nshutdown_grace_ms = 1234\n"
             "[plugin echo]\npath = %s\n[plugin spec]\npath = %s\n",
             env_path("RPCD_PLUGIN_ECHO"), env_path("RPCD_PLUGIN_SPEC"));
    write_config(s, text);
    rpcd_runtime runtime;
    char error[512] = "";
    log_capture log;
    assert_int_equal(start(s, &runtime, error, sizeof error, &log), 0);
    assert_string_equal(error, "");
    assert_int_equal(ld_count(runtime.plugins), 2);
    assert_non_null(reg_find(runtime.methods, "echo", 4));
    assert_non_null(runtime.generations);
    assert_true(mapped("echo"));

    srv_options options = rt_serve_options(&runtime);
    assert_int_equal(options.limits.workers, 3);
    assert_int_equal(options.limits.max_in_flight, 17);
    assert_int_equal(options.shutdown_grace_ms, 1234);
    assert_false(options.ordered);
    assert_ptr_equal(options.generations, runtime.generations);
    assert_ptr_equal(options.tools, runtime.tools);

    /* The generation published is the one served: the echo plugin answers. */
    memory io = {.in = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"echo\",\"params\":[\"hi\"]}\n"};
    assert_int_equal(srv_serve(runtime.methods, &options, memory_read, &io, memory_write, &io),
                     SRV_DONE);
    assert_string_equal(io.out, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[\"hi\"]}\n");

    rt_stop(&runtime);
    assert_null(runtime.config);
    assert_null(runtime.generations);
    assert_null(runtime.plugins);
    /* The last reference went with the generation: the plugins are unloaded. */
    assert_false(mapped("echo"));
    assert_false(mapped("spec"));
}

static void test_one_worker_serves_in_order(void **state)
{
    scratch *s = *state;
    char text[1024];
    snprintf(text, sizeof text, "[rpcd]\nworkers = 1\n[plugin echo]\npath = %s\n",
             env_path("RPCD_PLUGIN_ECHO"));
    write_config(s, text);
    rpcd_runtime runtime;
    char error[512] = "";
    log_capture log;
    assert_int_equal(start(s, &runtime, error, sizeof error, &log), 0);
    assert_true(rt_serve_options(&runtime).ordered);
    rt_stop(&runtime);
}

static void test_failing_required_plugin_undoes_those_before(void **state)
{
    scratch *s = *state;
    char text[2048];
    snprintf(text, sizeof text,
             "[plugin first]\npath = %s\nsucceed = true\nshutdown_marker = %s\n"
             "[plugin second]\npath = %s\n",
             env_path("RPCD_FIXTURE_INIT_FAIL"), s->marker, env_path("RPCD_FIXTURE_NO_ENTRY"));
    write_config(s, text);
    rpcd_runtime runtime;
    char error[512] = "";
    log_capture log;
    assert_int_equal(start(s, &runtime, error, sizeof error, &log), -1);
    assert_non_null(strstr(error, "no entry point rpcd_plugin_entry"));
    /* The first plugin was shut down and unloaded; nothing is left to free. */
    assert_int_equal(access(s->marker, F_OK), 0);
    assert_false(mapped("first"));
    assert_null(runtime.config);
    assert_null(runtime.methods);
    assert_null(runtime.plugins);
    assert_null(runtime.generations);
}

static void test_failing_optional_plugin_is_skipped(void **state)
{
    scratch *s = *state;
    char text[2048];
    snprintf(text, sizeof text,
             "[plugin flaky]\npath = %s\nrequired = false\nshutdown_marker = %s\n"
             "[plugin echo]\npath = %s\n",
             env_path("RPCD_FIXTURE_INIT_FAIL"), s->marker, env_path("RPCD_PLUGIN_ECHO"));
    write_config(s, text);
    rpcd_runtime runtime;
    char error[512] = "";
    log_capture log;
    assert_int_equal(start(s, &runtime, error, sizeof error, &log), 0);
    assert_logged(log.text, "init failed: database unreachable (not required: skipped)");
    assert_int_equal(ld_count(runtime.plugins), 1);
    assert_null(reg_find(runtime.methods, "init_fail.never", 15));
    assert_non_null(reg_find(runtime.methods, "echo", 4));
    rt_stop(&runtime);
    /* A plugin whose init failed is never shut down. */
    assert_int_equal(access(s->marker, F_OK), -1);
}

/* Whether tb_init fails (linked with --wrap=tb_init): a rate limit whose lock cannot be made. */
static bool rate_locks_fail;

int __real_tb_init(tb_bucket *bucket, tb_rate rate, long long now_ms);
int __wrap_tb_init(tb_bucket *bucket, tb_rate rate, long long now_ms);
int __wrap_tb_init(tb_bucket *bucket, tb_rate rate, long long now_ms)
{
    return rate_locks_fail ? -1 : __real_tb_init(bucket, rate, now_ms);
}

/*
 * A start that fails once the plugins are loaded and their tools made (here: a rate limit's lock
 * cannot be made) says why, shuts the plugins down and leaves nothing behind: under memcheck, a
 * leak of the tools fails the test.
 */
static void test_failing_policy_undoes_the_start(void **state)
{
    scratch *s = *state;
    char text[2048];
    snprintf(text, sizeof text, "[plugin echo]\npath = %s\nrate_limit = 10/s\n",
             env_path("RPCD_PLUGIN_ECHO"));
    write_config(s, text);
    rpcd_runtime runtime;
    char error[512] = "";
    log_capture log;
    rate_locks_fail = true;
    int status = start(s, &runtime, error, sizeof error, &log);
    rate_locks_fail = false;
    assert_int_equal(status, -1);
    assert_string_equal(error, "cannot make the lock of a rate limit");
    assert_false(mapped("echo"));
    assert_null(runtime.config);
    assert_null(runtime.methods);
    assert_null(runtime.tools);
    assert_null(runtime.generations);
    /* The same config starts once the lock can be made. */
    assert_int_equal(start(s, &runtime, error, sizeof error, &log), 0);
    assert_true(mapped("echo"));
    rt_stop(&runtime);
}

static void test_config_mistake_names_the_file(void **state)
{
    scratch *s = *state;
    write_config(s, "[rpcd]\nworkers = 2\nno_such_key = 1\n");
    rpcd_runtime runtime;
    char error[512] = "";
    log_capture log;
    assert_int_equal(start(s, &runtime, error, sizeof error, &log), -1);
    char expected[256];
    snprintf(expected, sizeof expected, "%s:3:", s->config);
    assert_memory_equal(error, expected, strlen(expected));
    assert_null(runtime.config);
}

static void test_unknown_user_refused_before_any_plugin(void **state)
{
    scratch *s = *state;
    char text[2048];
    snprintf(text, sizeof text,
             "[rpcd]\nuser = rpcd-no-such-user\n[plugin first]\npath = %s\nsucceed = true\n"
             "shutdown_marker = %s\n",
             env_path("RPCD_FIXTURE_INIT_FAIL"), s->marker);
    write_config(s, text);
    rpcd_runtime runtime;
    char error[512] = "";
    log_capture log;
    assert_int_equal(start(s, &runtime, error, sizeof error, &log), -1);
    char expected[512];
    snprintf(expected, sizeof expected, "%s: user = rpcd-no-such-user in [rpcd]: no such user",
             s->config);
    assert_string_equal(error, expected);
    /* Refused before the plugins: none was loaded, so none was shut down. */
    assert_int_equal(access(s->marker, F_OK), -1);
    assert_false(mapped("first"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_start_serve_and_stop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_worker_serves_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failing_required_plugin_undoes_those_before, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_failing_optional_plugin_is_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failing_policy_undoes_the_start, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_mistake_names_the_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_user_refused_before_any_plugin, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
