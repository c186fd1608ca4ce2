/* SPDX-License-Identifier: MIT */
/*
 * A plugin run with isolation = process is confined by its section's keys: the forbidden fixture
 * tries each forbidden thing through the real rpcd, every call is answered (EPERM, EACCES, ENOMEM,
 * EAGAIN in the result, or an error when the limit killed the plugin host) and the next call to
 * the same plugin succeeds.
 */
#include "harness.h"

#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/landlock.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

typedef struct confined {
    char *dir;    /* a temporary directory: the config, and a place to write */
    char *config; /* its rpcd.conf */
    harness_process *rpcd;
    int next_id;
} confined;

/* Starts rpcd with the forbidden fixture, isolated, its section holding keys (lines). */
static void start(confined *c, const char *keys)
{
    const char *fixture = harness_env("RPCD_FIXTURE_FORBIDDEN");
    assert_non_null(fixture);
    c->dir = harness_temp_dir();
    assert_non_null(c->dir);
    /* The host may run as nobody: it must reach the directory, and write into out/. */
    assert_int_equal(chmod(c->dir, 0755), 0);
    char out[4096];
    snprintf(out, sizeof out, "%s/out", c->dir);
    assert_int_equal(mkdir(out, 0777), 0);
    assert_int_equal(chmod(out, 0777), 0);
    char *text;
    assert_true(asprintf(&text,
                         "[rpcd]\nworkers = 2\n[plugin forbidden]\npath = %s\nisolation = "
                         "process\n%s",
                         fixture, keys) >= 0);
    c->config = harness_write_file(c->dir, "rpcd.conf", text);
    free(text);
    assert_non_null(c->config);
    harness_argv args = harness_rpcd_argv(c->config);
    assert_non_null(args.argv[0]);
    c->rpcd = harness_start(args.argv);
    assert_non_null(c->rpcd);
    c->next_id = 1;
}

static void stop(confined *c)
{
    harness_close_stdin(c->rpcd);
    harness_exit status;
    assert_int_equal(harness_wait(c->rpcd, HARNESS_TIMEOUT_MS, &status), HARNESS_OK);
    if (!status.exited || status.code != 0)
        print_error("rpcd ended with %s:\n%s\n", harness_exit_describe(&status),
                    harness_stderr(c->rpcd));
    assert_true(status.exited);
    assert_int_equal(status.code, 0);
    harness_free(c->rpcd);
    char out[4096];
    snprintf(out, sizeof out, "%s/out", c->dir);
    rmdir(out);
    harness_remove_dir(c->dir);
    free(c->dir);
    free(c->config);
}

/* One call, answered before the next is sent. Returns the response (new). */
static json_t *call(confined *c, const char *method, const char *params)
{
    char request[4096];
    int id = c->next_id++;
    snprintf(request, sizeof request, "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"%s\"%s%s}\n", id,
             method, params ? ",\"params\":" : "", params ? params : "");
    assert_int_equal(harness_write_text(c->rpcd, request, HARNESS_TIMEOUT_MS), HARNESS_OK);
    char *line = NULL;
    if (harness_read_line(c->rpcd, HARNESS_TIMEOUT_MS, &line, NULL, NULL) != HARNESS_OK)
        fail_msg("no answer to %s; stderr:\n%s", request, harness_stderr(c->rpcd));
    json_t *response = json_loads(line, 0, NULL);
    if (!response || json_integer_value(json_object_get(response, "id")) != id)
        fail_msg("not the answer to %s: %s", request, line);
    free(line);
    return response;
}

/* The errno a method reported in its result. */
static int call_errno(confined *c, const char *method, const char *params)
{
    json_t *response = call(c, method, params);
    json_t *result = json_object_get(response, "result");
    if (!json_is_integer(json_object_get(result, "errno"))) {
        char *text = json_dumps(response, 0);
        fail_msg("%s: no errno in %s", method, text);
    }
    int number = (int)json_integer_value(json_object_get(result, "errno"));
    json_decref(response);
    return number;
}

/* The plugin still answers: whoami, with the ids it runs as. */
static void expect_alive(confined *c, unsigned uid)
{
    json_t *response = call(c, "forbidden.whoami", NULL);
    json_t *result = json_object_get(response, "result");
    assert_non_null(result);
    assert_int_equal(json_integer_value(json_object_get(result, "uid")), uid);
    json_decref(response);
}

static bool sanitized(void)
{
    const char *sanitize = getenv("RPCD_SANITIZE");
    return sanitize && strcmp(sanitize, "none") != 0 && sanitize[0];
}

/* The default profile: no ptrace, no mount, no kernel keys; exec and sockets are allowed. */
static void test_seccomp_default(void **state)
{
    (void)state;
    confined c;
    start(&c, "");
    /* Sanitized builds keep ptrace for LeakSanitizer (rpcd.conf(5)). */
    if (!sanitized())
        assert_int_equal(call_errno(&c, "forbidden.ptrace", NULL), EPERM);
    assert_int_equal(call_errno(&c, "forbidden.mount", NULL), EPERM);
    assert_int_equal(call_errno(&c, "forbidden.keyctl", NULL), EPERM);
    /* rpcd is out of the host's reach on any kernel, Landlock's scope or not: by the filter
     * (EPERM), or, in a PID namespace of the host's own, by no pid naming it there (ESRCH). */
    json_t *who = call(&c, "forbidden.whoami", NULL);
    bool own_namespace =
        json_integer_value(json_object_get(json_object_get(who, "result"), "namespaced")) != 0;
    json_decref(who);
    char rpcd[64];
    snprintf(rpcd, sizeof rpcd, "{\"pid\":%d}", (int)harness_pid(c.rpcd));
    assert_int_equal(call_errno(&c, "forbidden.signal", rpcd), own_namespace ? ESRCH : EPERM);
    assert_int_equal(call_errno(&c, "forbidden.exec", NULL), 0);
    assert_int_equal(call_errno(&c, "forbidden.socket", NULL), 0);
    expect_alive(&c, getuid());
    stop(&c);
}

static void test_seccomp_strict(void **state)
{
    (void)state;
    confined c;
    start(&c, "seccomp = strict\n");
    assert_int_equal(call_errno(&c, "forbidden.exec", NULL), EPERM);
    assert_int_equal(call_errno(&c, "forbidden.socket", NULL), EPERM);
    assert_int_equal(call_errno(&c, "forbidden.mount", NULL), EPERM);
    expect_alive(&c, getuid());
    stop(&c);
}

/* The control: without a filter, the same calls reach the kernel. */
static void test_seccomp_off(void **state)
{
    (void)state;
    if (getuid() != 0)
        skip();
    confined c;
    start(&c, "seccomp = off\n");
    assert_int_equal(call_errno(&c, "forbidden.mount", NULL), ENOENT);
    assert_int_equal(call_errno(&c, "forbidden.keyctl", NULL), 0);
    assert_int_equal(call_errno(&c, "forbidden.signal", NULL), 0);
    stop(&c);
}

static void test_read_paths(void **state)
{
    (void)state;
    /* A directory listed is readable, /etc is not. */
    confined c;
    char *keys;
    char *dir = harness_temp_dir();
    assert_non_null(dir);
    assert_true(asprintf(&keys, "read_paths = %s\n", dir) >= 0);
    start(&c, keys);
    char params[4096];
    snprintf(params, sizeof params, "{\"path\":\"%s\"}", dir);
    assert_int_equal(call_errno(&c, "forbidden.read", params), 0);
    assert_int_equal(call_errno(&c, "forbidden.read", "{\"path\":\"/etc/hostname\"}"), EACCES);
    expect_alive(&c, getuid());
    stop(&c);
    free(keys);
    harness_remove_dir(dir);
    free(dir);
}

static void test_write_paths(void **state)
{
    (void)state;
    confined c;
    char *dir = harness_temp_dir();
    assert_non_null(dir);
    char *other = harness_temp_dir();
    assert_non_null(other);
    char *keys;
    assert_true(asprintf(&keys, "write_paths = %s\n", dir) >= 0);
    start(&c, keys);
    char params[4096];
    snprintf(params, sizeof params, "{\"path\":\"%s/new\"}", dir);
    assert_int_equal(call_errno(&c, "forbidden.write", params), 0);
    snprintf(params, sizeof params, "{\"path\":\"%s/new\"}", other);
    assert_int_equal(call_errno(&c, "forbidden.write", params), EACCES);
    expect_alive(&c, getuid());
    stop(&c);
    free(keys);
    harness_remove_dir(dir);
    harness_remove_dir(other);
    free(dir);
    free(other);
}

static void test_limit_memory(void **state)
{
    (void)state;
    /* AddressSanitizer's shadow memory does not fit any address space limit. */
    if (sanitized() || harness_wrapped())
        skip();
    confined c;
    start(&c, "limit_memory = 1073741824\n");
    assert_int_equal(call_errno(&c, "forbidden.allocate", "{\"bytes\":2147483648}"), ENOMEM);
    assert_int_equal(call_errno(&c, "forbidden.allocate", "{\"bytes\":16777216}"), 0);
    expect_alive(&c, getuid());
    stop(&c);
}

/* RLIMIT_NPROC binds a host of its own user only (rpcd.conf(5)). */
static void test_limit_processes(void **state)
{
    (void)state;
    if (getuid() != 0)
        skip();
    confined c;
    start(&c, "user = nobody\ngroup = nogroup\nlimit_processes = 8\n");
    json_t *response = call(&c, "forbidden.fork", "{\"count\":64}");
    json_t *result = json_object_get(response, "result");
    assert_int_equal(json_integer_value(json_object_get(result, "errno")), EAGAIN);
    assert_true(json_integer_value(json_object_get(result, "forked")) < 8);
    json_decref(response);
    expect_alive(&c, 65534);
    stop(&c);
}

/* The host is killed at its CPU limit: the call gets an error, and a new host the next call. */
static void test_limit_cpu(void **state)
{
    (void)state;
    confined c;
    start(&c, "limit_cpu_seconds = 1\n");
    json_t *response = call(&c, "forbidden.spin", "{\"seconds\":30}");
    json_t *error = json_object_get(response, "error");
    assert_non_null(error);
    assert_int_equal(json_integer_value(json_object_get(error, "code")), -32603);
    json_decref(response);
    expect_alive(&c, getuid());
    stop(&c);
}

static void test_user_group(void **state)
{
    (void)state;
    if (getuid() != 0)
        skip();
    confined c;
    start(&c, "user = nobody\ngroup = nogroup\n");
    json_t *response = call(&c, "forbidden.whoami", NULL);
    json_t *result = json_object_get(response, "result");
    assert_int_equal(json_integer_value(json_object_get(result, "uid")), 65534);
    assert_int_equal(json_integer_value(json_object_get(result, "gid")), 65534);
    json_decref(response);
    stop(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seccomp_default), cmocka_unit_test(test_seccomp_strict),
        cmocka_unit_test(test_seccomp_off),     cmocka_unit_test(test_read_paths),
        cmocka_unit_test(test_write_paths),     cmocka_unit_test(test_limit_memory),
        cmocka_unit_test(test_limit_processes), cmocka_unit_test(test_limit_cpu),
        cmocka_unit_test(test_user_group),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
