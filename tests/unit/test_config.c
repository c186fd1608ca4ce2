/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for config: defaults, every [rpcd] key with good and bad values, plugin sections,
 * how plugin paths are resolved, and that every error names the file and the line, both from
 * text in memory and from real files in a temporary directory.
 */
#include "config/config.h"

#include "base/log.h"

#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <ini.h>

static const char conf_name[] = "/etc/rpcd/rpcd.conf";

static rpcd_config *load_ok(const char *text)
{
    rpcd_config *config = NULL;
    char error[512] = "";
    if (cfg_load_string(text, conf_name, &config, error, sizeof error) != 0)
        fail_msg("refused: %s\n--- text ---\n%s", error, text);
    assert_non_null(config);
    return config;
}

/* Loads text, expects a failure whose message starts "FILE:LINE: " and holds fragment. */
static void expect_error(const char *text, int line, const char *fragment)
{
    rpcd_config *config = NULL;
    char error[512] = "";
    assert_int_equal(cfg_load_string(text, conf_name, &config, error, sizeof error), -1);
    assert_null(config);
    char prefix[128];
    if (line > 0)
        snprintf(prefix, sizeof prefix, "%s:%d: ", conf_name, line);
    else
        snprintf(prefix, sizeof prefix, "%s: ", conf_name);
    if (strncmp(error, prefix, strlen(prefix)) != 0)
        fail_msg("message '%s' does not start with '%s'\n--- text ---\n%s", error, prefix, text);
    if (!strstr(error, fragment))
        fail_msg("message '%s' does not mention '%s'", error, fragment);
    assert_null(strchr(error, '\n')); /* one line */
}

/* A copy of path with "/./" and "//" collapsed, for comparing resolved paths. */
static void normalize(const char *path, char *out, size_t size)
{
    size_t used = 0;
    for (const char *p = path; *p && used + 1 < size;) {
        if (p[0] == '/' && p[1] == '/') {
            p++;
        } else if (p[0] == '/' && p[1] == '.' && (p[2] == '/' || p[2] == '\0')) {
            p += 2;
        } else {
            out[used++] = *p++;
        }
    }
    out[used] = '\0';
    if (used == 0 && size > 1) {
        out[0] = '/';
        out[1] = '\0';
    }
}

static void assert_same_path(const char *actual, const char *expected)
{
    assert_non_null(actual);
    char a[PATH_MAX], b[PATH_MAX];
    normalize(actual, a, sizeof a);
    normalize(expected, b, sizeof b);
    if (strcmp(a, b) != 0)
        fail_msg("path '%s', expected '%s'", actual, expected);
}

static void test_defaults(void **state)
{
    (void)state;
    static const char *const texts[] = {"", "[rpcd]\n", "; comment\n# another\n\n[rpcd]\n; x\n"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        rpcd_config *config = load_ok(texts[i]);
        assert_int_equal(config->log_level, LOG_INFO);
        assert_int_equal(config->log_format, LOG_FORMAT_TEXT);
        assert_false(config->watch);
        assert_int_equal(config->limits.max_line_bytes, 32 * 1024 * 1024);
        assert_int_equal(config->limits.max_line_bytes, CFG_DEFAULT_MAX_LINE_BYTES);
        assert_int_equal(config->limits.max_depth, 512);
        assert_int_equal(config->limits.max_depth, CFG_DEFAULT_MAX_DEPTH);
        assert_int_equal(config->plugin_count, 0);
        assert_string_equal(config->path, conf_name);
        assert_same_path(config->plugin_dir, "/etc/rpcd");
        cfg_free(config);
    }
    cfg_free(NULL);
}

/*
 * The default workers follow the CPU affinity, not the cores online: pinned to one core, rpcd
 * starts the minimum of two; unpinned, one per core it may use.
 */
static void test_default_workers_follow_affinity(void **state)
{
    (void)state;
    cpu_set_t original;
    assert_int_equal(sched_getaffinity(0, sizeof original, &original), 0);
    rpcd_config *config = load_ok("");
    size_t expected = CPU_COUNT(&original) > 2 ? (size_t)CPU_COUNT(&original) : 2;
    assert_int_equal(config->limits.workers, expected);
    cfg_free(config);

    int first = -1;
    for (int cpu = 0; cpu < CPU_SETSIZE && first < 0; cpu++)
        if (CPU_ISSET(cpu, &original))
            first = cpu;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    config = load_ok("");
    assert_int_equal(sched_setaffinity(0, sizeof original, &original), 0);
    assert_int_equal(config->limits.workers, 2);
    cfg_free(config);
}

static void test_log_level(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int level;
    } levels[] = {
        {"error", LOG_ERROR}, {"warning", LOG_WARNING}, {"info", LOG_INFO}, {"debug", LOG_DEBUG}};
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "[rpcd]\nlog_level = %s\n", levels[i].name);
        rpcd_config *config = load_ok(text);
        assert_int_equal(config->log_level, levels[i].level);
        cfg_free(config);
    }
    expect_error("[rpcd]\nlog_level = verbose\n", 2, "log_level");
    expect_error("[rpcd]\nlog_level = verbose\n", 2, "'verbose'");
    expect_error("[rpcd]\n\n\nlog_level =\n", 4, "log_level");
    expect_error("[rpcd]\nlog_level = 3\n", 2, "log_level");
    rpcd_config *config = load_ok("[rpcd]\nlog_format = json\nwatch = true\n");
    assert_int_equal(config->log_format, LOG_FORMAT_JSON);
    assert_true(config->watch);
    cfg_free(config);
}

static void test_max_line_bytes(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        size_t expected;
    } good[] = {
        {"64", 64}, {"1024", 1024}, {"1099511627776", (size_t)1 << 40}, {"33554432", 33554432}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "[rpcd]\nmax_line_bytes = %s\n", good[i].value);
        rpcd_config *config = load_ok(text);
        assert_int_equal(config->limits.max_line_bytes, good[i].expected);
        cfg_free(config);
    }
    static const char *const bad[] = {
        "63",   "0",     "-1",  "1099511627777",           "abc",  "12k",
        "+100", "0x100", "1.5", "99999999999999999999999", "64 64"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[128], fragment[64];
        snprintf(text, sizeof text, "# settings\n[rpcd]\nmax_line_bytes = %s\n", bad[i]);
        snprintf(fragment, sizeof fragment, "'%s'", bad[i]);
        expect_error(text, 3, "max_line_bytes");
        expect_error(text, 3, fragment);
    }
}

static void test_max_depth(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        size_t expected;
    } good[] = {{"2", 2}, {"100", 100}, {"1000000", 1000000}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "[rpcd]\nmax_depth=%s\n", good[i].value);
        rpcd_config *config = load_ok(text);
        assert_int_equal(config->limits.max_depth, good[i].expected);
        cfg_free(config);
    }
    static const char *const bad[] = {"1", "0", "1000001", "-5", "deep", "", "2e3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "[rpcd]\nlog_level = info\nmax_depth = %s\n", bad[i]);
        expect_error(text, 3, "max_depth");
    }
}

/* Unset, max_in_flight_bytes gives each worker room for a 1 MiB message, and at least 2 MiB. */
static void test_max_in_flight_bytes(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        size_t expected;
    } good[] = {
        {"[rpcd]\nworkers = 1\n", 2 * 1024 * 1024},
        {"[rpcd]\nworkers = 2\n", 2 * 1024 * 1024},
        {"[rpcd]\nworkers = 8\n", 8 * 1024 * 1024},
        {"[rpcd]\nmax_in_flight_bytes = 1\nworkers = 8\n", 1},
        {"[rpcd]\nmax_in_flight_bytes = 1099511627776\n", (size_t)1 << 40},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        rpcd_config *config = load_ok(good[i].text);
        assert_int_equal(config->limits.max_in_flight_bytes, good[i].expected);
        cfg_free(config);
    }
    static const char *const bad[] = {"0", "-1", "1099511627777", "4M", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "[rpcd]\n\nmax_in_flight_bytes = %s\n", bad[i]);
        expect_error(text, 3, "max_in_flight_bytes must be an integer from 1 to 1099511627776");
    }
}

static void test_plugin_dir(void **state)
{
    (void)state;
    rpcd_config *config = load_ok("[rpcd]\nplugin_dir = plugins\n[plugin echo]\npath = echo.so\n");
    assert_same_path(config->plugin_dir, "/etc/rpcd/plugins");
    assert_same_path(config->plugins[0].path, "/etc/rpcd/plugins/echo.so");
    cfg_free(config);

    config = load_ok("[rpcd]\nplugin_dir = /opt/rpcd/lib\n[plugin echo]\npath = sub/echo.so\n");
    assert_same_path(config->plugin_dir, "/opt/rpcd/lib");
    assert_same_path(config->plugins[0].path, "/opt/rpcd/lib/sub/echo.so");
    cfg_free(config);

    /* plugin_dir may come after the plugins that use it. */
    config = load_ok("[plugin echo]\npath = echo.so\n[rpcd]\nplugin_dir = /opt/p\n");
    assert_same_path(config->plugins[0].path, "/opt/p/echo.so");
    cfg_free(config);

    expect_error("[rpcd]\nplugin_dir =\n", 2, "plugin_dir");
    expect_error("[rpcd]\nplugin_dir = a\nplugin_dir = b\n", 3, "plugin_dir");
}

static void test_unknown_key_and_section(void **state)
{
    (void)state;
    expect_error("[rpcd]\nlog_level = info\nmax_lines = 5\n", 3, "'max_lines'");
    expect_error("[rpcd]\nlog_level = info\nmax_lines = 5\n", 3, "[rpcd]");
    expect_error("[rpcd]\n[server]\nport = 1\n", 2, "[server]");
    expect_error("[plugins echo]\npath = x.so\n", 1, "[plugins echo]");
    expect_error("[plugin]\npath = x.so\n", 1, "[plugin]");
    expect_error("; top\nstray = 1\n[rpcd]\n", 2, "'stray'");
    expect_error("stray = 1\n", 1, "outside any section");
    /* Only the first problem is reported, with its own line. */
    expect_error("[rpcd]\nbad_one = 1\nbad_two = 2\n", 2, "'bad_one'");
    /* Sections without keys are judged too. */
    expect_error("[rpcd]\nlog_level = info\n[server]\n", 3, "[server]");
    expect_error("[rpcd]\n[plugin empty]\n", 0, "[plugin empty] has no path");
}

static void test_syntax_error(void **state)
{
    (void)state;
    expect_error("[rpcd]\nthis is not a key value pair\n", 2, "syntax");
    expect_error("[rpcd]\nlog_level = info\n[plugin echo\npath = x.so\n", 3, "syntax");
    expect_error("\n\n\n\njust words\n", 5, "syntax");
}

static void test_first_error_line_matches_message(void **state)
{
    (void)state;
    /*
     * A syntax error followed by a bad key: the message printed with the syntax error's line
     * must be about that line, not about the later key.
     */
    static const char text[] = "[rpcd]\nthis line is garbage\nbogus_key = 1\n";
    rpcd_config *config = NULL;
    char error[512] = "";
    assert_int_equal(cfg_load_string(text, conf_name, &config, error, sizeof error), -1);
    char line2[128], line3[128];
    snprintf(line2, sizeof line2, "%s:2: ", conf_name);
    snprintf(line3, sizeof line3, "%s:3: ", conf_name);
    if (strstr(error, "bogus_key")) {
        if (strncmp(error, line3, strlen(line3)) != 0)
            fail_msg("'%s': the message is about line 3 but names another line", error);
    } else if (strncmp(error, line2, strlen(line2)) != 0 || !strstr(error, "syntax")) {
        fail_msg("'%s': expected the syntax error of line 2", error);
    }
}

static void test_plugin_sections(void **state)
{
    (void)state;
    rpcd_config *config = load_ok("[plugin echo]\n"
                                  "path = echo.so\n"
                                  "greeting = hello world\n"
                                  "count = 3\n"
                                  "[plugin math]\n"
                                  "required = false\n"
                                  "path = /usr/lib/rpcd/math.so\n"
                                  "[plugin third]\n"
                                  "path = third.so\n"
                                  "required = true\n");
    assert_int_equal(config->plugin_count, 3);
    cfg_plugin *echo = &config->plugins[0];
    assert_string_equal(echo->name, "echo");
    assert_true(echo->required);
    assert_same_path(echo->path, "/etc/rpcd/echo.so");
    assert_int_equal(echo->pair_count, 2);
    assert_string_equal(echo->pairs[0].key, "greeting");
    assert_string_equal(echo->pairs[0].value, "hello world");
    assert_string_equal(echo->pairs[1].key, "count");
    assert_false(echo->pairs[0].used);
    assert_false(echo->pairs[1].used);
    const char *value = cfg_plugin_get(echo, "count");
    assert_non_null(value);
    assert_string_equal(value, "3");
    assert_true(echo->pairs[1].used);
    assert_false(echo->pairs[0].used);
    assert_null(cfg_plugin_get(echo, "missing"));
    assert_null(cfg_plugin_get(echo, "path")); /* path and required are the daemon's */
    assert_null(cfg_plugin_get(echo, "Count"));

    cfg_plugin *math = &config->plugins[1];
    assert_string_equal(math->name, "math");
    assert_false(math->required);
    assert_string_equal(math->path, "/usr/lib/rpcd/math.so"); /* absolute: kept as is */
    assert_int_equal(math->pair_count, 0);
    assert_null(cfg_plugin_get(math, "greeting"));

    assert_string_equal(config->plugins[2].name, "third");
    assert_true(config->plugins[2].required);
    cfg_free(config);

    static const struct {
        const char *value;
        bool required;
    } bools[] = {{"true", true},   {"yes", true}, {"1", true},
                 {"false", false}, {"no", false}, {"0", false}};
    for (size_t i = 0; i < sizeof bools / sizeof bools[0]; i++) {
        char text[128];
        snprintf(text, sizeof text, "[plugin p]\npath = p.so\nrequired = %s\n", bools[i].value);
        config = load_ok(text);
        assert_int_equal(config->plugins[0].required, bools[i].required);
        cfg_free(config);
    }
}

static void test_plugin_section_errors(void **state)
{
    (void)state;
    expect_error("[plugin echo]\ngreeting = hi\n", 0, "[plugin echo] has no path");
    expect_error("[plugin a]\npath = a.so\n[plugin b]\nrequired = false\n", 0,
                 "[plugin b] has no path");
    expect_error("[plugin echo]\npath = e.so\nrequired = maybe\n", 3, "required");
    expect_error("[plugin echo]\npath = e.so\nrequired = maybe\n", 3, "'maybe'");
    expect_error("[plugin echo]\npath = e.so\nrequired =\n", 3, "required");
    expect_error("[plugin echo]\npath = a.so\npath = b.so\n", 3, "path");
    expect_error("[plugin echo]\npath =\n", 2, "path");
    expect_error("[plugin echo]\npath = e.so\nkey = 1\nother = 2\nkey = 3\n", 5, "'key'");
    expect_error("[plugin echo]\npath = e.so\nkey = 1\nother = 2\nkey = 3\n", 5, "[plugin echo]");
    /* A section given twice is refused at its second header, which names the first. */
    expect_error("[plugin echo]\npath = a.so\n[rpcd]\n[plugin echo]\npath = b.so\n", 4,
                 "section [plugin echo] is given twice (first on line 1)");
    expect_error("[plugin echo]\npath = a.so\n[rpcd]\n[plugin echo]\nx = 1\n", 4,
                 "[plugin echo] is given twice");
    expect_error("[rpcd]\nworkers = 2\n[mcp]\n[rpcd]\n", 4,
                 "section [rpcd] is given twice (first on line 1)");
    expect_error("[mcp]\n\n[mcp]\n", 3, "section [mcp] is given twice (first on line 1)");
    /* Every key of a plugin section once, required included. */
    expect_error("[plugin echo]\npath = e.so\nrequired = true\nrequired = false\n", 4,
                 "required is given twice in [plugin echo] (first on line 3)");
}

/*
 * isolation in [rpcd] and per plugin, deadlines per plugin and per method, max_restarts,
 * scheduler_slice_us.
 */
static void test_isolation_keys(void **state)
{
    (void)state;
    rpcd_config *config = load_ok("[plugin a]\npath = a.so\n");
    assert_int_equal(config->isolation, CFG_ISOLATION_NONE);
    assert_int_equal(config->plugins[0].isolation, CFG_ISOLATION_NONE);
    assert_int_equal(config->plugins[0].timeout_ms, 0);
    assert_int_equal(config->plugins[0].max_restarts, CFG_DEFAULT_MAX_RESTARTS);
    assert_int_equal(config->plugins[0].scheduler_slice_us, 500);
    cfg_free(config);
    config = load_ok("[rpcd]\nisolation = process\n[plugin a]\npath = a.so\n"
                     "[plugin b]\npath = b.so\nisolation = none\ntimeout_ms = 250\n"
                     "timeout_ms.b.slow = 9000\nmax_restarts = 0\nkey = v\n"
                     "scheduler_slice_us = 0\n[plugin c]\npath = c.so\n"
                     "scheduler_slice_us = 100\n[plugin d]\npath = d.so\n"
                     "scheduler_slice_us = 100000\n");
    assert_int_equal(config->plugins[0].isolation, CFG_ISOLATION_PROCESS);
    cfg_plugin *b = &config->plugins[1];
    assert_int_equal(b->isolation, CFG_ISOLATION_NONE);
    assert_int_equal(b->timeout_ms, 250);
    assert_int_equal(b->timeout_count, 1);
    assert_string_equal(b->timeouts[0].key, "b.slow");
    assert_string_equal(b->timeouts[0].value, "9000");
    assert_int_equal(b->max_restarts, 0);
    assert_int_equal(b->scheduler_slice_us, 0);
    assert_int_equal(config->plugins[2].scheduler_slice_us, 100);
    assert_int_equal(config->plugins[3].scheduler_slice_us, 100000);
    /* Only the plugin's own keys reach it. */
    assert_int_equal(b->pair_count, 1);
    assert_string_equal(b->pairs[0].key, "key");
    cfg_free(config);
    expect_error("[rpcd]\nisolation = thread\n", 2, "isolation must be none or process");
    expect_error("[rpcd]\nlog_format = xml\n", 2, "log_format must be text or json, not 'xml'");
    expect_error("[plugin a]\npath = a.so\nisolation = yes\n", 3, "'yes'");
    expect_error("[plugin a]\npath = a.so\ntimeout_ms = 0\n", 3, "from 1 to 86400000");
    expect_error("[plugin a]\npath = a.so\ntimeout_ms.x = 86400001\n", 3, "timeout_ms.x");
    expect_error("[plugin a]\npath = a.so\ntimeout_ms. = 5\n", 3, "needs a method name");
    expect_error("[plugin a]\npath = a.so\nmax_restarts = -1\n", 3, "max_restarts");
    static const char slice_problem[] =
        "scheduler_slice_us must be 0 (the kernel's own) or an integer from 100 to 100000";
    expect_error("[plugin a]\npath = a.so\nscheduler_slice_us = 99\n", 3, slice_problem);
    expect_error("[plugin a]\npath = a.so\nscheduler_slice_us = 100001\n", 3, slice_problem);
    expect_error("[plugin a]\npath = a.so\nscheduler_slice_us = 1ms\n", 3, "not '1ms'");
    expect_error("[plugin a]\npath = a.so\nscheduler_slice_us = 200\nscheduler_slice_us = 300\n", 4,
                 "scheduler_slice_us is given twice in [plugin a]");
    expect_error("[plugin a]\npath = a.so\nisolation = none\nisolation = none\n", 4,
                 "isolation is given twice in [plugin a]");
    expect_error("[plugin a]\npath = a.so\ntimeout_ms.m = 5\ntimeout_ms.m = 6\n", 4,
                 "timeout_ms.m is given twice");
}

/* Every key of [rpcd] may be given once: a second one is an error naming both lines. */
static void test_daemon_key_twice(void **state)
{
    (void)state;
    static const char *const keys[] = {
        "log_level = info",
        "max_line_bytes = 1024",
        "max_depth = 10",
        "max_batch = 10",
        "workers = 2",
        "max_in_flight = 10",
        "max_in_flight_bytes = 10",
        "shutdown_grace_ms = 10",
        "plugin_dir = p",
        "user = nobody",
        "group = nogroup",
        "no_new_privs = true",
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char text[256], fragment[128];
        snprintf(text, sizeof text, "[rpcd]\n%s\n\n%s\n", keys[i], keys[i]);
        snprintf(fragment, sizeof fragment, "%.*s is given twice in [rpcd] (first on line 2)",
                 (int)strcspn(keys[i], " "), keys[i]);
        expect_error(text, 4, fragment);
    }
}

/* user, group and no_new_privs: read as given, checked when rpcd starts. */
static void test_privilege_keys(void **state)
{
    (void)state;
    rpcd_config *config = load_ok("");
    assert_true(config->no_new_privs);
    assert_null(config->user);
    assert_null(config->group);
    cfg_free(config);
    config = load_ok("[rpcd]\nuser = nobody\ngroup = nogroup\nno_new_privs = false\n");
    assert_string_equal(config->user, "nobody");
    assert_string_equal(config->group, "nogroup");
    assert_false(config->no_new_privs);
    cfg_free(config);
    expect_error("[rpcd]\nno_new_privs = maybe\n", 2, "no_new_privs must be true or false");
    expect_error("[rpcd]\nuser =\n", 2, "user is empty");
    expect_error("[rpcd]\n\ngroup =\n", 3, "group is empty");
}

static void test_relative_paths(void **state)
{
    (void)state;
    rpcd_config *config = load_ok("[plugin a]\npath = a.so\n[plugin b]\npath = lib/b.so\n"
                                  "[plugin c]\npath = /abs/../c.so\n[plugin d]\npath = /abs/d.so\n"
                                  "[plugin e]\npath = lib/..x/e..so\n");
    assert_same_path(config->plugins[0].path, "/etc/rpcd/a.so");
    assert_same_path(config->plugins[1].path, "/etc/rpcd/lib/b.so");
    assert_string_equal(config->plugins[2].path, "/abs/../c.so"); /* absolute: as written */
    assert_string_equal(config->plugins[3].path, "/abs/d.so");
    assert_same_path(config->plugins[4].path, "/etc/rpcd/lib/..x/e..so");
    cfg_free(config);

    /* A relative path may not leave plugin_dir: "..", wherever it is, needs an absolute path. */
    static const char *const leaving[] = {"../c.so", "lib/../../c.so", "lib/..", "./..//c.so",
                                          ".."};
    for (size_t i = 0; i < sizeof leaving / sizeof leaving[0]; i++) {
        char text[128], fragment[128];
        snprintf(text, sizeof text, "[plugin c]\n\npath = %s\n", leaving[i]);
        snprintf(fragment, sizeof fragment, "path '%s' of [plugin c] leaves plugin_dir",
                 leaving[i]);
        expect_error(text, 3, fragment);
        expect_error(text, 3, "write it as an absolute path");
    }

    /* A config named without a directory resolves against the working directory. */
    char error[512] = "";
    assert_int_equal(
        cfg_load_string("[plugin a]\npath = a.so\n", "rpcd.conf", &config, error, sizeof error), 0);
    assert_same_path(config->plugins[0].path, "./a.so");
    cfg_free(config);

    /* plugin_dir relative to the config's directory; absolute plugin paths ignore it. */
    config = load_ok("[rpcd]\nplugin_dir = ../lib/rpcd\n[plugin a]\npath = a.so\n"
                     "[plugin b]\npath = /abs/b.so\n");
    assert_same_path(config->plugins[0].path, "/etc/rpcd/../lib/rpcd/a.so");
    assert_string_equal(config->plugins[1].path, "/abs/b.so");
    cfg_free(config);
}

/* The longest config line, line break not counted: inih's buffer, less the "\n" and the NUL. */
enum { LINE_LIMIT = INI_MAX_LINE - 2 };

/*
 * "[plugin p]\npath = p.so\nKEY = VALUE" with the last line exactly length bytes long and
 * ending with end ("\n", "\r\n", or "" for none). Returns the text (new) and sets *value.
 */
static char *text_with_line(size_t length, const char *end, char **value)
{
    static const char head[] = "[plugin p]\npath = p.so\n", key[] = "servers = ";
    assert_true(length > sizeof key);
    size_t value_length = length - (sizeof key - 1);
    char *text = malloc(sizeof head + length + strlen(end));
    assert_non_null(text);
    char *line = stpcpy(stpcpy(text, head), key);
    /* A list of host:port pairs, as a plugin's own key might hold: commas and colons split
     * nothing. */
    static const char pattern[] = "host7.example:8007,";
    for (size_t i = 0; i < value_length; i++)
        line[i] = pattern[i % (sizeof pattern - 1)];
    strcpy(line + value_length, end);
    *value = strndup(line, value_length);
    assert_non_null(*value);
    return text;
}

static void test_long_value_not_truncated(void **state)
{
    (void)state;
    /* A value as long as a line may be comes back whole, one key, whatever ends its line. */
    static const char *const ends[] = {"\n", "\r\n", ""};
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        char *value;
        char *text = text_with_line(LINE_LIMIT, ends[i], &value);
        rpcd_config *config = load_ok(text);
        const char *got = cfg_plugin_get(&config->plugins[0], "servers");
        bool whole = got && strcmp(got, value) == 0;
        size_t got_length = got ? strlen(got) : 0, pair_count = config->plugins[0].pair_count;
        cfg_free(config); /* before any failure, so that a failure reports no leak */
        free(text);
        if (!whole || pair_count != 1)
            fail_msg("a %zu-byte value came back as %zu bytes, with %zu keys in the section",
                     strlen(value), got_length, pair_count);
        free(value);
    }

    /* One byte more is refused, naming the line and why: never cut short, never split. */
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        char *value;
        char *text = text_with_line(LINE_LIMIT + 1, ends[i], &value);
        char reason[64];
        snprintf(reason, sizeof reason, "line longer than %d bytes", LINE_LIMIT);
        expect_error(text, 3, reason);
        free(text);
        free(value);
    }
}

/*
 * Debian's inih can take its line buffer from the heap instead of the stack (ini_use_stack, a
 * run-time setting there): on the heap, AddressSanitizer sees a byte written past it. Weak, so
 * that an inih without the setting still links.
 */
extern bool ini_use_stack __attribute__((weak));

/* The line length limit, one byte under, at and over, with each line ending. */
static void test_line_length_limit(void **state)
{
    (void)state;
    static const char *const ends[] = {"\n", "\r\n", ""};
    bool on_stack = &ini_use_stack ? ini_use_stack : true;
    if (&ini_use_stack)
        ini_use_stack = false;
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        for (size_t length = LINE_LIMIT - 1; length <= LINE_LIMIT + 1; length++) {
            char *value;
            char *text = text_with_line(length, ends[i], &value);
            rpcd_config *config = NULL;
            char error[512] = "";
            int status = cfg_load_string(text, conf_name, &config, error, sizeof error);
            bool kept =
                status == 0 && strcmp(cfg_plugin_get(&config->plugins[0], "servers"), value) == 0;
            cfg_free(config);
            free(text);
            free(value);
            if (length <= LINE_LIMIT && !kept)
                fail_msg("a %zu-byte line (limit %d) was not kept: %s", length, LINE_LIMIT, error);
            if (length > LINE_LIMIT && status == 0)
                fail_msg("a %zu-byte line (limit %d) was accepted", length, LINE_LIMIT);
        }
    }
    if (&ini_use_stack)
        ini_use_stack = on_stack;
}

/* A temporary directory with files, removed by the test itself. */
typedef struct temp_dir {
    char path[PATH_MAX];
} temp_dir;

static void write_file(const char *path, const char *text)
{
    FILE *file = fopen(path, "w");
    assert_non_null(file);
    assert_int_equal(fputs(text, file) >= 0, 1);
    assert_int_equal(fclose(file), 0);
}

static int make_temp_dir(void **state)
{
    temp_dir *dir = malloc(sizeof *dir);
    if (!dir)
        return -1;
    const char *base = getenv("TMPDIR");
    snprintf(dir->path, sizeof dir->path, "%s/rpcd-config-XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(dir->path)) {
        free(dir);
        return -1;
    }
    *state = dir;
    return 0;
}

static int remove_temp_dir(void **state)
{
    temp_dir *dir = *state;
    static const char *const names[] = {"rpcd.conf",
                                        "bad.conf",
                                        "plugins/echo.so",
                                        "echo.so",
                                        "plugins",
                                        "conf.d",
                                        "rpcd.conf.d/10-b.conf",
                                        "rpcd.conf.d/20-a.conf",
                                        "rpcd.conf.d/30-c.conf",
                                        "rpcd.conf.d/20-d.conf",
                                        "rpcd.conf.d/30-e.conf",
                                        "rpcd.conf.d/40-f.conf",
                                        "rpcd.conf.d/README",
                                        "rpcd.conf.d/x.conf.bak",
                                        "rpcd.conf.d",
                                        "other/one.conf",
                                        "other/two.txt",
                                        "other"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/%s", dir->path, names[i]);
        if (unlink(path) != 0)
            rmdir(path);
    }
    int status = rmdir(dir->path);
    free(dir);
    return status;
}

static void test_load_file(void **state)
{
    temp_dir *dir = *state;
    char conf[PATH_MAX + 32], plugins[PATH_MAX + 32], plugin[PATH_MAX + 64];
    snprintf(conf, sizeof conf, "%s/rpcd.conf", dir->path);
    snprintf(plugins, sizeof plugins, "%s/plugins", dir->path);
    snprintf(plugin, sizeof plugin, "%s/plugins/echo.so", dir->path);
    assert_int_equal(mkdir(plugins, 0700), 0);
    write_file(plugin, "not really a plugin");
    write_file(conf, "# test config\n[rpcd]\nlog_level = debug\nmax_depth = 64\n"
                     "plugin_dir = plugins\n\n[plugin echo]\npath = echo.so\nrequired = no\n"
                     "greeting = hi\n");

    rpcd_config *config = NULL;
    char error[512] = "";
    if (cfg_load(conf, false, &config, error, sizeof error) != 0)
        fail_msg("%s", error);
    assert_string_equal(config->path, conf);
    assert_int_equal(config->log_level, LOG_DEBUG);
    assert_int_equal(config->limits.max_depth, 64);
    assert_int_equal(config->plugin_count, 1);
    assert_false(config->plugins[0].required);
    assert_same_path(config->plugins[0].path, plugin);
    /* The resolved path is the real file. */
    char expected[PATH_MAX], actual[PATH_MAX];
    assert_non_null(realpath(plugin, expected));
    assert_non_null(realpath(config->plugins[0].path, actual));
    assert_string_equal(actual, expected);
    assert_string_equal(cfg_plugin_get(&config->plugins[0], "greeting"), "hi");
    cfg_free(config);

    /* Without plugin_dir: next to the config file. */
    char beside[PATH_MAX + 32];
    snprintf(beside, sizeof beside, "%s/echo.so", dir->path);
    write_file(beside, "x");
    write_file(conf, "[plugin echo]\npath = echo.so\n");
    assert_int_equal(cfg_load(conf, false, &config, error, sizeof error), 0);
    assert_same_path(config->plugins[0].path, beside);
    assert_non_null(realpath(config->plugins[0].path, actual));
    assert_non_null(realpath(beside, expected));
    assert_string_equal(actual, expected);
    cfg_free(config);

    /* Absolute plugin_dir. */
    char text[PATH_MAX + 128];
    snprintf(text, sizeof text, "[rpcd]\nplugin_dir = %s\n[plugin echo]\npath = echo.so\n",
             plugins);
    write_file(conf, text);
    assert_int_equal(cfg_load(conf, false, &config, error, sizeof error), 0);
    assert_same_path(config->plugins[0].path, plugin);
    cfg_free(config);
}

/* Drop-ins: read in lexical order after the config file, only files ending in .conf. */
static void test_dropins(void **state)
{
    temp_dir *dir = *state;
    char conf[PATH_MAX + 32], dropins[PATH_MAX + 32], path[PATH_MAX + 64];
    snprintf(conf, sizeof conf, "%s/rpcd.conf", dir->path);
    snprintf(dropins, sizeof dropins, "%s/rpcd.conf.d", dir->path);
    rpcd_config *config = NULL;
    char error[1024] = "";

    /* No directory: no drop-in, no error. */
    write_file(conf, "[plugin main]\npath = main.so\n");
    if (cfg_load(conf, false, &config, error, sizeof error) != 0)
        fail_msg("%s", error);
    assert_int_equal(config->plugin_count, 1);
    assert_int_equal(config->dropin_count, 0);
    cfg_free(config);

    assert_int_equal(mkdir(dropins, 0700), 0);
    snprintf(path, sizeof path, "%s/20-a.conf", dropins);
    write_file(path, "[plugin a]\npath = /abs/a.so\nkey = 1\n[mcp]\ntool.a.run = a_run\n");
    snprintf(path, sizeof path, "%s/10-b.conf", dropins);
    write_file(path, "# b first\n[plugin b]\npath = b.so\nrequired = false\n");
    snprintf(path, sizeof path, "%s/README", dropins);
    write_file(path, "not a config at all [\n");
    snprintf(path, sizeof path, "%s/x.conf.bak", dropins);
    write_file(path, "not a config at all [\n");
    if (cfg_load(conf, false, &config, error, sizeof error) != 0)
        fail_msg("%s", error);
    assert_int_equal(config->plugin_count, 3);
    assert_string_equal(config->plugins[0].name, "main");
    assert_string_equal(config->plugins[1].name, "b");
    assert_string_equal(config->plugins[2].name, "a");
    assert_false(config->plugins[1].required);
    assert_string_equal(config->plugins[2].path, "/abs/a.so");
    snprintf(path, sizeof path, "%s/b.so", dir->path);
    assert_same_path(config->plugins[1].path, path);
    assert_string_equal(cfg_plugin_get(&config->plugins[2], "key"), "1");
    assert_int_equal(config->mcp_name_count, 1);
    assert_string_equal(config->mcp_names[0].key, "a.run");
    assert_int_equal(config->dropin_count, 2);
    /* A drop-in's plugin that does not say takes [rpcd] isolation, as one of the file does. */
    assert_int_equal(config->plugins[1].isolation, CFG_ISOLATION_NONE);
    snprintf(path, sizeof path, "%s/20-a.conf", dropins);
    assert_string_equal(config->plugins[2].file, path);
    assert_string_equal(config->dropins[1], path);
    cfg_free(config);

    /* include elsewhere, relative to the config's directory; a .txt it matches is skipped. */
    snprintf(path, sizeof path, "%s/other", dir->path);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/other/one.conf", dir->path);
    write_file(path, "[plugin one]\npath = one.so\n");
    snprintf(path, sizeof path, "%s/other/two.txt", dir->path);
    write_file(path, "[plugin two]\npath = two.so\n");
    write_file(conf, "[rpcd]\ninclude = other/*\n");
    if (cfg_load(conf, false, &config, error, sizeof error) != 0)
        fail_msg("%s", error);
    assert_int_equal(config->plugin_count, 1);
    assert_string_equal(config->plugins[0].name, "one");
    cfg_free(config);
}

/* A drop-in's plugin sections take [rpcd] isolation and their own isolation keys. */
static void test_dropin_isolation(void **state)
{
    temp_dir *dir = *state;
    char conf[PATH_MAX + 32], dropins[PATH_MAX + 32], path[PATH_MAX + 64];
    snprintf(conf, sizeof conf, "%s/rpcd.conf", dir->path);
    snprintf(dropins, sizeof dropins, "%s/rpcd.conf.d", dir->path);
    assert_int_equal(mkdir(dropins, 0700), 0);
    write_file(conf, "[rpcd]\nisolation = process\n[plugin main]\npath = main.so\n");
    snprintf(path, sizeof path, "%s/10-b.conf", dropins);
    write_file(path, "[plugin a]\npath = a.so\ntimeout_ms = 50\nlimit_open_files = 64\n"
                     "[plugin b]\npath = b.so\nisolation = none\n");
    rpcd_config *config = NULL;
    char error[1024] = "";
    if (cfg_load(conf, false, &config, error, sizeof error) != 0)
        fail_msg("%s", error);
    assert_int_equal(config->plugin_count, 3);
    assert_int_equal(config->plugins[0].isolation, CFG_ISOLATION_PROCESS);
    assert_int_equal(config->plugins[1].isolation, CFG_ISOLATION_PROCESS);
    assert_int_equal(config->plugins[1].timeout_ms, 50);
    assert_int_equal(config->plugins[1].confinement.limit_open_files, 64);
    assert_int_equal(config->plugins[2].isolation, CFG_ISOLATION_NONE);
    cfg_free(config);
}

/* Expects cfg_load of conf to fail with a message starting with prefix and holding part. */
static void expect_load_error(const char *conf, const char *prefix, const char *part)
{
    rpcd_config *config = NULL;
    char error[1024] = "";
    assert_int_equal(cfg_load(conf, false, &config, error, sizeof error), -1);
    assert_null(config);
    if (strncmp(error, prefix, strlen(prefix)) != 0 || !strstr(error, part))
        fail_msg("'%s' does not start with '%s' or does not hold '%s'", error, prefix, part);
}

/* With strict = true, a mistake in a drop-in fails the load, naming the drop-in and its line. */
static void test_dropin_errors(void **state)
{
    temp_dir *dir = *state;
    char conf[PATH_MAX + 32], dropins[PATH_MAX + 32], path[PATH_MAX + 64], prefix[PATH_MAX + 80];
    snprintf(conf, sizeof conf, "%s/rpcd.conf", dir->path);
    snprintf(dropins, sizeof dropins, "%s/rpcd.conf.d", dir->path);
    assert_int_equal(mkdir(dropins, 0700), 0);
    write_file(conf, "[rpcd]\nlog_level = info\nstrict = true\n[plugin a]\npath = a.so\n");
    snprintf(path, sizeof path, "%s/10-b.conf", dropins);

    write_file(path, "[plugin b]\npath = b.so\nthis is no key\n");
    snprintf(prefix, sizeof prefix, "%s:3: ", path);
    expect_load_error(conf, prefix, "syntax error");

    write_file(path, "\n[rpcd]\nlog_level = debug\n");
    snprintf(prefix, sizeof prefix, "%s:2: ", path);
    expect_load_error(conf, prefix, "[rpcd] belongs in the main config file");

    write_file(path, "[mcp]\ntools = none\n");
    snprintf(prefix, sizeof prefix, "%s:2: ", path);
    expect_load_error(conf, prefix, "tools belongs in [mcp] of the main config file");

    /* So do tool_names and instructions: a drop-in only names tools. */
    write_file(path, "[mcp]\ntool.echo = say\ntool_names = specification\n");
    snprintf(prefix, sizeof prefix, "%s:3: ", path);
    expect_load_error(conf, prefix, "tool_names belongs in [mcp] of the main config file");

    write_file(path, "[mcp]\ninstructions = be brief\n");
    snprintf(prefix, sizeof prefix, "%s:2: ", path);
    expect_load_error(conf, prefix, "instructions belongs in [mcp] of the main config file");

    write_file(path, "[plugin b]\npath = b.so\n\n[plugin a]\npath = other.so\n");
    snprintf(prefix, sizeof prefix, "%s:4: ", path);
    char first[PATH_MAX + 160];
    snprintf(first, sizeof first, "section [plugin a] is given twice (first in %s, line 4)", conf);
    expect_load_error(conf, prefix, first);

    write_file(path, "[plugin b]\nrequired = false\n");
    snprintf(prefix, sizeof prefix, "%s: ", path);
    expect_load_error(conf, prefix, "[plugin b] has no path");

    /* A later drop-in meets what an earlier one gave. */
    write_file(path, "[plugin b]\npath = b.so\n");
    char later[PATH_MAX + 64];
    snprintf(later, sizeof later, "%s/30-c.conf", dropins);
    write_file(later, "[plugin b]\npath = c.so\n");
    snprintf(prefix, sizeof prefix, "%s:1: ", later);
    expect_load_error(conf, prefix, "[plugin b] is given twice (first in");
    unlink(later);

    /* Unsafe: a drop-in anyone may write is refused when the files are checked. */
    write_file(path, "[plugin b]\npath = b.so\n");
    assert_int_equal(chmod(path, 0666), 0);
    rpcd_config *config = NULL;
    char error[1024] = "";
    assert_int_equal(cfg_load(conf, true, &config, error, sizeof error), -1);
    if (strncmp(error, path, strlen(path)) != 0 || !strstr(error, "writable"))
        fail_msg("'%s' does not refuse %s as writable by others", error, path);
}

/*
 * Without strict, a drop-in with a mistake is left out whole: what it gave before the mistake
 * (a plugin, an [mcp] name) is undone, it is listed with why, and the drop-ins after it are read.
 */
static void test_dropin_skipped(void **state)
{
    temp_dir *dir = *state;
    char conf[PATH_MAX + 32], dropins[PATH_MAX + 32], path[PATH_MAX + 64];
    snprintf(conf, sizeof conf, "%s/rpcd.conf", dir->path);
    snprintf(dropins, sizeof dropins, "%s/rpcd.conf.d", dir->path);
    assert_int_equal(mkdir(dropins, 0700), 0);
    write_file(conf, "[plugin a]\npath = a.so\n[mcp]\ntool.a = first\n");
    snprintf(path, sizeof path, "%s/10-b.conf", dropins);
    write_file(path, "[mcp]\ntool.b = bee\n[plugin b]\npath = b.so\nkey = 1\n[plugin c]\n"
                     "path = c.so\nthis is no key\n");
    snprintf(path, sizeof path, "%s/20-d.conf", dropins);
    write_file(path, "[plugin d]\npath = d.so\n[mcp]\ntool.d = dee\n");
    snprintf(path, sizeof path, "%s/30-e.conf", dropins);
    write_file(path, "[plugin e]\nrequired = false\n");
    snprintf(path, sizeof path, "%s/40-f.conf", dropins);
    write_file(path, "[plugin f]\npath = f.so\n");
    assert_int_equal(chmod(path, 0666), 0);
    rpcd_config *config = NULL;
    char error[1024] = "";
    if (cfg_load(conf, true, &config, error, sizeof error) != 0)
        fail_msg("%s", error);
    assert_false(config->strict);
    assert_int_equal(config->plugin_count, 2);
    assert_string_equal(config->plugins[0].name, "a");
    assert_string_equal(config->plugins[1].name, "d");
    assert_int_equal(config->mcp_name_count, 2);
    assert_string_equal(config->mcp_names[0].key, "a");
    assert_string_equal(config->mcp_names[1].key, "d");
    /* Every drop-in in order: read (NULL) or skipped and why, without its own path. */
    assert_int_equal(config->dropin_count, 4);
    snprintf(path, sizeof path, "%s/10-b.conf", dropins);
    assert_string_equal(config->dropins[0], path);
    assert_string_equal(config->dropin_skipped[0],
                        "line 8: syntax error (expected [section] or key = value)");
    assert_null(config->dropin_skipped[1]);
    snprintf(path, sizeof path, "%s/30-e.conf", dropins);
    assert_string_equal(config->dropins[2], path);
    assert_string_equal(config->dropin_skipped[2], "[plugin e] has no path");
    snprintf(path, sizeof path, "%s/40-f.conf", dropins);
    assert_string_equal(config->dropins[3], path);
    assert_non_null(strstr(config->dropin_skipped[3], "writable by others"));
    assert_null(strstr(config->dropin_skipped[3], "40-f.conf:"));
    cfg_free(config);
}

static void test_load_file_errors(void **state)
{
    temp_dir *dir = *state;
    char path[PATH_MAX + 32], expected[3 * PATH_MAX + 256];
    rpcd_config *config = NULL;
    char error[512] = "";

    snprintf(path, sizeof path, "%s/missing.conf", dir->path);
    assert_int_equal(cfg_load(path, false, &config, error, sizeof error), -1);
    assert_null(config);
    snprintf(expected, sizeof expected, "%s: cannot read", path);
    if (strncmp(error, expected, strlen(expected)) != 0)
        fail_msg("'%s' does not start with '%s'", error, expected);

    /* A directory opens fine on Linux; it must still be refused, by name. */
    snprintf(path, sizeof path, "%s/conf.d", dir->path);
    assert_int_equal(mkdir(path, 0700), 0);
    error[0] = '\0';
    assert_int_equal(cfg_load(path, false, &config, error, sizeof error), -1);
    assert_null(config);
    snprintf(expected, sizeof expected, "%s: ", path);
    if (strncmp(error, expected, strlen(expected)) != 0 || !strstr(error, "cannot read") ||
        !strstr(error, "not a regular file"))
        fail_msg("'%s' is not '%scannot read: not a regular file'", error, expected);

    /* An error inside a file names that file and the line. */
    snprintf(path, sizeof path, "%s/bad.conf", dir->path);
    write_file(path, "[rpcd]\nlog_level = info\n\nmax_depth = 1\n");
    error[0] = '\0';
    assert_int_equal(cfg_load(path, false, &config, error, sizeof error), -1);
    assert_null(config);
    snprintf(expected, sizeof expected, "%s:4: ", path);
    if (strncmp(error, expected, strlen(expected)) != 0 || !strstr(error, "max_depth"))
        fail_msg("'%s' does not start with '%s' or does not name max_depth", error, expected);

    /* A NUL byte would end the text early: refused, naming its line. */
    FILE *file = fopen(path, "wb");
    assert_non_null(file);
    assert_int_equal(fwrite("[rpcd]\n\nworkers = 2\0\n", 1, 22, file), 22);
    assert_int_equal(fclose(file), 0);
    error[0] = '\0';
    assert_int_equal(cfg_load(path, false, &config, error, sizeof error), -1);
    snprintf(expected, sizeof expected, "%s:3: NUL byte (a config is text)", path);
    assert_string_equal(error, expected);

    /* At most CFG_MAX_FILE_BYTES: one more is refused before anything is parsed. */
    file = fopen(path, "wb");
    assert_non_null(file);
    for (size_t i = 0; i <= CFG_MAX_FILE_BYTES; i++)
        assert_int_equal(fputc(i % 64 == 63 ? '\n' : '#', file), i % 64 == 63 ? '\n' : '#');
    assert_int_equal(fclose(file), 0);
    error[0] = '\0';
    assert_int_equal(cfg_load(path, false, &config, error, sizeof error), -1);
    snprintf(expected, sizeof expected,
             "%s: cannot read: 1048577 bytes, more than the 1048576 a config may have", path);
    assert_string_equal(error, expected);
    assert_int_equal(truncate(path, CFG_MAX_FILE_BYTES), 0);
    assert_int_equal(cfg_load(path, false, &config, error, sizeof error), 0);
    cfg_free(config);
    config = NULL;

    /* With check, a file others may write is refused, naming the fix; without, read. */
    write_file(path, "[rpcd]\n");
    assert_int_equal(chmod(path, 0646), 0);
    error[0] = '\0';
    assert_int_equal(cfg_load(path, true, &config, error, sizeof error), -1);
    snprintf(expected, sizeof expected,
             "%s: the file %s is writable by others; run chmod go-w %s, or run rpcd with "
             "--insecure",
             path, path, path);
    assert_string_equal(error, expected);
    assert_int_equal(cfg_load(path, false, &config, error, sizeof error), 0);
    assert_true(config->insecure);
    cfg_free(config);
    config = NULL;
    assert_int_equal(chmod(path, 0644), 0);
    assert_int_equal(cfg_load(path, true, &config, error, sizeof error), 0);
    assert_false(config->insecure);
    cfg_free(config);
    config = NULL;

    /* No path in a plugin section: file named, no line. */
    write_file(path, "[plugin lonely]\nrequired = true\n");
    error[0] = '\0';
    assert_int_equal(cfg_load(path, false, &config, error, sizeof error), -1);
    snprintf(expected, sizeof expected, "%s: [plugin lonely] has no path", path);
    assert_string_equal(error, expected);
}

/* [mcp] tool_names and instructions: their values, their defaults, their mistakes. */
static void test_mcp_names_and_instructions(void **state)
{
    (void)state;
    rpcd_config *config = load_ok("[mcp]\n");
    assert_int_equal(config->mcp_tool_names, CFG_TOOL_NAMES_PORTABLE);
    assert_null(config->mcp_instructions);
    cfg_free(config);
    config = load_ok("[mcp]\ntool_names = specification\ninstructions = Use echo; it is cheap.\n");
    assert_int_equal(config->mcp_tool_names, CFG_TOOL_NAMES_SPECIFICATION);
    /* A ";" after a value starts a comment only after a blank (inih's inline comments). */
    assert_string_equal(config->mcp_instructions, "Use echo; it is cheap.");
    cfg_free(config);
    config = load_ok("[mcp]\ntool_names = portable\n");
    assert_int_equal(config->mcp_tool_names, CFG_TOOL_NAMES_PORTABLE);
    cfg_free(config);
    /* Indented lines go on with the text, one line each. */
    config = load_ok("[mcp]\ninstructions = First line.\n  Second line.\n\tThird.\ntools = all\n");
    assert_string_equal(config->mcp_instructions, "First line.\nSecond line.\nThird.");
    assert_string_equal(config->mcp_tools, "all");
    cfg_free(config);

    expect_error("[mcp]\ntool_names = strict\n", 2,
                 "tool_names must be portable or specification, not 'strict'");
    expect_error("[mcp]\ntool_names = portable\ntool_names = portable\n", 3,
                 "tool_names is given twice in [mcp] (first on line 2)");
    expect_error("[mcp]\ninstructions = a\ninstructions = b\n", 3,
                 "instructions is given twice in [mcp]");
    expect_error("[mcp]\ninstructions =\n", 2, "instructions is empty");
    expect_error("[mcp]\ntool_name = portable\n", 2, "unknown key 'tool_name' in [mcp]");
}

static void test_small_error_buffer(void **state)
{
    (void)state;
    rpcd_config *config = NULL;
    char error[16];
    memset(error, 'x', sizeof error);
    assert_int_equal(
        cfg_load_string("[rpcd]\nmax_depth = 1\n", conf_name, &config, error, sizeof error), -1);
    assert_non_null(memchr(error, '\0', sizeof error)); /* cut short, but terminated */
    assert_int_equal(strncmp(error, conf_name, strlen(error)), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_default_workers_follow_affinity),
        cmocka_unit_test(test_max_in_flight_bytes),
        cmocka_unit_test(test_log_level),
        cmocka_unit_test(test_max_line_bytes),
        cmocka_unit_test(test_max_depth),
        cmocka_unit_test(test_plugin_dir),
        cmocka_unit_test(test_unknown_key_and_section),
        cmocka_unit_test(test_syntax_error),
        cmocka_unit_test(test_first_error_line_matches_message),
        cmocka_unit_test(test_plugin_sections),
        cmocka_unit_test(test_plugin_section_errors),
        cmocka_unit_test(test_isolation_keys),
        cmocka_unit_test(test_daemon_key_twice),
        cmocka_unit_test(test_privilege_keys),
        cmocka_unit_test(test_relative_paths),
        cmocka_unit_test(test_long_value_not_truncated),
        cmocka_unit_test(test_line_length_limit),
        cmocka_unit_test_setup_teardown(test_load_file, make_temp_dir, remove_temp_dir),
        cmocka_unit_test_setup_teardown(test_load_file_errors, make_temp_dir, remove_temp_dir),
        cmocka_unit_test(test_mcp_names_and_instructions),
        cmocka_unit_test_setup_teardown(test_dropins, make_temp_dir, remove_temp_dir),
        cmocka_unit_test_setup_teardown(test_dropin_skipped, make_temp_dir, remove_temp_dir),
        cmocka_unit_test_setup_teardown(test_dropin_errors, make_temp_dir, remove_temp_dir),
        cmocka_unit_test_setup_teardown(test_dropin_isolation, make_temp_dir, remove_temp_dir),
        cmocka_unit_test(test_small_error_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
