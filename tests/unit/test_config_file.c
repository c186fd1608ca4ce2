/* SPDX-License-Identifier: MIT */
/*
 * The config file read from its descriptor: read whole up to the size cap and refused past it
 * (before reading, or when it grew past it since fstat), a NUL byte refused with its line. fstat
 * is wrapped (-Wl,--wrap=fstat,--wrap=fstat64) so that a file can look smaller than it is, as
 * one that grows while it is read does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "config/config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* >= 0: the size fstat reports for regular files. */
static off_t reported_size = -1;

int __real_fstat(int fd, struct stat *info);
int __wrap_fstat(int fd, struct stat *info);
int __real_fstat64(int fd, struct stat *info);
int __wrap_fstat64(int fd, struct stat *info);

static int shrink(int status, struct stat *info)
{
    if (status == 0 && reported_size >= 0 && S_ISREG(info->st_mode))
        info->st_size = reported_size;
    return status;
}

int __wrap_fstat(int fd, struct stat *info)
{
    return shrink(__real_fstat(fd, info), info);
}

int __wrap_fstat64(int fd, struct stat *info)
{
    return shrink(__real_fstat64(fd, info), info);
}

typedef struct scratch {
    char dir[64];
    char path[128];
    char error[512];
    rpcd_config *config;
} scratch;

static int setup(void **state)
{
    scratch *s = calloc(1, sizeof *s);
    assert_non_null(s);
    snprintf(s->dir, sizeof s->dir, "/tmp/rpcd-config-file-XXXXXX");
    assert_non_null(mkdtemp(s->dir));
    snprintf(s->path, sizeof s->path, "%s/rpcd.conf", s->dir);
    reported_size = -1;
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    scratch *s = *state;
    reported_size = -1;
    cfg_free(s->config);
    unlink(s->path);
    rmdir(s->dir);
    free(s);
    return 0;
}

/* Writes head, then '#' comment lines up to size bytes in all. */
static void write_file(const scratch *s, const char *head, size_t head_length, size_t size)
{
    int fd = open(s->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    char *text = malloc(size);
    assert_non_null(text);
    memset(text, '#', size);
    memcpy(text, head, head_length);
    for (size_t i = head_length + 63; i < size; i += 64)
        text[i] = '\n';
    if (size > head_length)
        text[size - 1] = '\n';
    assert_int_equal(write(fd, text, size), (ssize_t)size);
    free(text);
    assert_int_equal(close(fd), 0);
}

static int load(scratch *s)
{
    /* The file is in /tmp, written by this test: its owner and mode are not what is tested. */
    return cfg_load(s->path, false, &s->config, s->error, sizeof s->error);
}

static const char head[] = "[rpcd]\nworkers = 6\n";

static void test_reads_the_file_and_marks_it_unchecked(void **state)
{
    scratch *s = *state;
    write_file(s, head, sizeof head - 1, sizeof head - 1);
    assert_int_equal(load(s), 0);
    assert_int_equal(s->config->limits.workers, 6);
    assert_true(s->config->insecure);
}

static void test_file_at_the_cap_is_read(void **state)
{
    scratch *s = *state;
    write_file(s, head, sizeof head - 1, CFG_MAX_FILE_BYTES);
    assert_int_equal(load(s), 0);
    assert_int_equal(s->config->limits.workers, 6);
}

static void test_file_over_the_cap_refused_before_reading(void **state)
{
    scratch *s = *state;
    int fd = open(s->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, CFG_MAX_FILE_BYTES + 1), 0);
    close(fd);
    assert_int_equal(load(s), -1);
    char expected[512];
    snprintf(expected, sizeof expected,
             "%s: cannot read: %d bytes, more than the %d a config may have", s->path,
             CFG_MAX_FILE_BYTES + 1, CFG_MAX_FILE_BYTES);
    assert_string_equal(s->error, expected);
    assert_null(s->config);
}

static void test_nul_byte_refused_with_its_line(void **state)
{
    scratch *s = *state;
    static const char text[] = "[rpcd]\nworkers = 2\n# a\0b\nlog_level = info\n";
    write_file(s, text, sizeof text - 1, sizeof text - 1);
    assert_int_equal(load(s), -1);
    char expected[512];
    snprintf(expected, sizeof expected, "%s:3: NUL byte (a config is text)", s->path);
    assert_string_equal(s->error, expected);
    assert_null(s->config);
}

static void test_file_larger_than_fstat_said_is_read_whole(void **state)
{
    scratch *s = *state;
    /* The workers line is past what fstat reported: the text keeps being read. */
    static const char text[] = "# padding\n# padding\n[rpcd]\nworkers = 9\n";
    write_file(s, text, sizeof text - 1, 3000);
    reported_size = 5;
    assert_int_equal(load(s), 0);
    assert_int_equal(s->config->limits.workers, 9);
}

static void test_file_grown_past_the_cap_while_read_is_refused(void **state)
{
    scratch *s = *state;
    write_file(s, head, sizeof head - 1, CFG_MAX_FILE_BYTES + 100);
    reported_size = 10;
    assert_int_equal(load(s), -1);
    char expected[512];
    snprintf(expected, sizeof expected, "%s: cannot read: more than the %d bytes a config may have",
             s->path, CFG_MAX_FILE_BYTES);
    assert_string_equal(s->error, expected);
    assert_null(s->config);
}

static void test_file_one_byte_past_the_cap_while_read_is_refused(void **state)
{
    scratch *s = *state;
    write_file(s, head, sizeof head - 1, CFG_MAX_FILE_BYTES + 1);
    reported_size = CFG_MAX_FILE_BYTES;
    assert_int_equal(load(s), -1);
    assert_non_null(strstr(s->error, "more than the 1048576 bytes a config may have"));
}

static void test_missing_file_named(void **state)
{
    scratch *s = *state;
    assert_int_equal(load(s), -1);
    char expected[512];
    snprintf(expected, sizeof expected, "%s: cannot read: ", s->path);
    assert_memory_equal(s->error, expected, strlen(expected));
    assert_non_null(strstr(s->error, "No such file or directory"));
}

/*
 * A read that fails (EIO: /proc/self/mem read from address 0, a regular file to stat) is named
 * with its reason, never taken for bytes.
 */
static void test_read_error_named(void **state)
{
    (void)state;
    rpcd_config *config = NULL;
    char error[512] = "";
    assert_int_equal(cfg_load("/proc/self/mem", false, &config, error, sizeof error), -1);
    assert_null(config);
    assert_non_null(strstr(error, "/proc/self/mem: cannot read: "));
    assert_non_null(strstr(error, strerror(EIO)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reads_the_file_and_marks_it_unchecked, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_file_at_the_cap_is_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_over_the_cap_refused_before_reading, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_nul_byte_refused_with_its_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_larger_than_fstat_said_is_read_whole, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_file_grown_past_the_cap_while_read_is_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_file_one_byte_past_the_cap_while_read_is_refused,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_file_named, setup, teardown),
        cmocka_unit_test(test_read_error_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
