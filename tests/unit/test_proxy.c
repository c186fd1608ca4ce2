/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for isolation/proxy.c and spawn.c, with the real rpcd as the host program: the
 * methods a host reports become proxies (same names, flags and descriptions, a cancel hook),
 * and each way a start fails is one message with nothing left behind (no method, no process).
 */
#include "isolation/proxy.h"
#include "isolation/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

/* No config: a host with the default seccomp profile and nothing else confined. */
static const iso_settings settings = {2, 64, 1, true, 1000, NULL};

/* No child process is left, reaped or not. */
static void assert_no_children(void)
{
    errno = 0;
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
}

/* Starts the plugin at the path in the environment variable, into methods. */
static int start(const char *variable, registry *methods, iso_proxy **out, char *error, size_t size)
{
    const char *path = getenv(variable);
    assert_non_null(path);
    static cfg_plugin config;
    static cfg_pair pair = {(char *)"greeting", (char *)"hi", false};
    config = (cfg_plugin){.name = (char *)"fixture",
                          .path = (char *)path,
                          .pairs = &pair,
                          .pair_count = 1,
                          .max_restarts = 10};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    static int owner;
    return iso_proxy_start(&config, fd, &settings, methods, &owner, out, error, size);
}

static void setup_program(void)
{
    const char *rpcd = getenv("RPCD_BINARY");
    assert_non_null(rpcd);
    iso_set_host_program(rpcd);
}

static void test_methods_become_proxies(void **state)
{
    (void)state;
    setup_program();
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    iso_proxy *proxy = NULL;
    char error[512] = "";
    if (start("RPCD_FIXTURE_ISOLATED_A", methods, &proxy, error, sizeof error) != 0)
        fail_msg("start failed: %s", error);
    const reg_method *echo = reg_find(methods, "a.echo", 6);
    assert_non_null(echo);
    assert_string_equal(echo->owner_name, "isolated_a");
    assert_string_equal(echo->description, "an isolated fixture method");
    assert_true(echo->flags & RPCD_METHOD_QUICK);
    assert_non_null(echo->cancel_hook);
    assert_non_null(reg_find(methods, "a.null", 6));
    assert_int_equal(reg_count(methods), 14);
    iso_proxy_stop(proxy);
    assert_no_children();
    reg_free(methods);
}

static void refused(const char *variable, const char *expected)
{
    setup_program();
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    iso_proxy *proxy = NULL;
    char error[512] = "";
    assert_int_equal(start(variable, methods, &proxy, error, sizeof error), -1);
    if (!strstr(error, expected))
        fail_msg("expected '%s' in: %s", expected, error);
    assert_int_equal(reg_count(methods), 0);
    assert_no_children();
    reg_free(methods);
}

static void test_init_fails(void **state)
{
    (void)state;
    refused("RPCD_FIXTURE_INIT_FAIL", "init failed");
}

static void test_not_a_plugin(void **state)
{
    (void)state;
    refused("RPCD_FIXTURE_NO_ENTRY", "not an rpcd plugin");
}

static void test_host_program_is_not_rpcd(void **state)
{
    (void)state;
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    iso_set_host_program("/bin/true");
    iso_proxy *proxy = NULL;
    char error[512] = "";
    assert_int_equal(start("RPCD_FIXTURE_ISOLATED_A", methods, &proxy, error, sizeof error), -1);
    assert_non_null(strstr(error, "its host ended before the plugin's init returned"));
    assert_no_children();
    reg_free(methods);
}

static int dummy(rpcd_call *call, const char *params, size_t params_length, void *user_data)
{
    (void)call, (void)params, (void)params_length, (void)user_data;
    return RPCD_OK;
}

/* A name another plugin has: refused, the host ended, none of its proxies left. */
static void test_duplicate_name(void **state)
{
    (void)state;
    setup_program();
    registry *methods;
    assert_int_equal(reg_new(&methods), 0);
    rpcd_method taken = rpcd_method_new("a.info", dummy);
    static int other;
    assert_int_equal(reg_add(methods, &taken, &other, "other", NULL), 0);
    iso_proxy *proxy = NULL;
    char error[512] = "";
    assert_int_equal(start("RPCD_FIXTURE_ISOLATED_A", methods, &proxy, error, sizeof error), -1);
    assert_non_null(strstr(error, "'a.info' is registered by both plugin 'other'"));
    assert_int_equal(reg_count(methods), 1);
    assert_no_children();
    reg_free(methods);
}

static void test_describe_status(void **state)
{
    (void)state;
    char text[96];
    pid_t child = fork();
    if (child == 0)
        _exit(3);
    iso_describe_status(iso_reap(child, 5000), text, sizeof text);
    assert_string_equal(text, "exited with status 3");
    /* One that never ends is killed once the wait is over. */
    child = fork();
    if (child == 0)
        for (;;)
            pause();
    iso_describe_status(iso_reap(child, 10), text, sizeof text);
    assert_string_equal(text, "killed by signal 9 (SIGKILL)");
    assert_no_children();
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_methods_become_proxies),
        cmocka_unit_test(test_init_fails),
        cmocka_unit_test(test_not_a_plugin),
        cmocka_unit_test(test_host_program_is_not_rpcd),
        cmocka_unit_test(test_duplicate_name),
        cmocka_unit_test(test_describe_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
