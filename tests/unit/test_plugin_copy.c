/* SPDX-License-Identifier: MIT */
/*
 * The private copy a plugin is loaded from: the same bytes and hash as the file, sealed so that
 * nothing holding its descriptor (an isolated plugin's host, which loads it again at each restart)
 * can change the code, and the content hash that tells a changed file on a reload.
 */
#include "loader/plugin_copy.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

/* A temporary file holding length bytes of pattern; its descriptor, open for reading. */
static int file_with(char *path, size_t path_size, unsigned char pattern, size_t length)
{
    snprintf(path, path_size, "/tmp/rpcd-plugin-copy-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unsigned char *bytes = malloc(length);
    assert_non_null(bytes);
    for (size_t i = 0; i < length; i++)
        bytes[i] = (unsigned char)(pattern + i * 7);
    assert_int_equal(write(fd, bytes, length), (ssize_t)length);
    free(bytes);
    return fd;
}

/* More than one chunk of the copy loop, and not a whole number of them. */
enum { FILE_BYTES = 3 * 64 * 1024 + 123 };

static void test_same_bytes_and_hash(void **state)
{
    (void)state;
    char path[64];
    int fd = file_with(path, sizeof path, 1, FILE_BYTES);
    int copy;
    uint64_t hash, hash_of_file;
    struct stat info;
    char reason[256];
    assert_int_equal(pcopy_sealed(fd, "test", &copy, &hash, &info, reason, sizeof reason), 0);
    assert_int_equal(info.st_size, FILE_BYTES);
    assert_int_equal(pcopy_hash(fd, &hash_of_file), 0);
    assert_true(hash == hash_of_file);
    struct stat copied;
    assert_int_equal(fstat(copy, &copied), 0);
    assert_int_equal(copied.st_size, FILE_BYTES);
    unsigned char *a = malloc(FILE_BYTES), *b = malloc(FILE_BYTES);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(pread(fd, a, FILE_BYTES, 0), FILE_BYTES);
    assert_int_equal(pread(copy, b, FILE_BYTES, 0), FILE_BYTES);
    assert_memory_equal(a, b, FILE_BYTES);
    assert_true(fcntl(copy, F_GETFD) & FD_CLOEXEC);
    free(a);
    free(b);

    /* One byte changed, or one more byte: another hash. */
    uint64_t changed;
    assert_int_equal(pwrite(fd, "x", 1, FILE_BYTES / 2), 1);
    assert_int_equal(pcopy_hash(fd, &changed), 0);
    assert_true(changed != hash);
    assert_int_equal(pwrite(fd, "x", 1, FILE_BYTES), 1);
    uint64_t longer;
    assert_int_equal(pcopy_hash(fd, &longer), 0);
    assert_true(longer != changed);
    close(copy);
    close(fd);
    unlink(path);
}

/*
 * Every way to change the copy is closed, through its descriptor or through /proc/self/fd as a
 * plugin in its host could open it: no write, no shared writable mapping, no truncation, no
 * growth, and no seal taken away (F_SEAL_SEAL).
 */
static void test_sealed_against_every_change(void **state)
{
    (void)state;
    char path[64];
    int fd = file_with(path, sizeof path, 9, 4096);
    int copy;
    uint64_t hash;
    struct stat info;
    char reason[256];
    assert_int_equal(pcopy_sealed(fd, "test", &copy, &hash, &info, reason, sizeof reason), 0);
    int seals = fcntl(copy, F_GET_SEALS);
    assert_int_equal(seals, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);

    errno = 0;
    assert_int_equal(pwrite(copy, "x", 1, 0), -1);
    assert_int_equal(errno, EPERM);
    assert_int_equal(ftruncate(copy, 1), -1);
    assert_int_equal(ftruncate(copy, 8192), -1);
    assert_int_equal(fallocate(copy, 0, 0, 8192), -1);
    assert_ptr_equal(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, copy, 0), MAP_FAILED);
    assert_int_equal(fcntl(copy, F_ADD_SEALS, F_SEAL_FUTURE_WRITE), -1);

    char through_proc[64];
    snprintf(through_proc, sizeof through_proc, "/proc/self/fd/%d", copy);
    int again = open(through_proc, O_RDWR);
    if (again >= 0) {
        errno = 0;
        assert_int_equal(write(again, "x", 1), -1);
        assert_int_equal(errno, EPERM);
        close(again);
    }
    /* What can still be done: read it, and map it to run it. */
    void *mapped = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, copy, 0);
    assert_ptr_not_equal(mapped, MAP_FAILED);
    munmap(mapped, 4096);
    assert_int_equal(info.st_size, 4096);
    close(copy);
    close(fd);
    unlink(path);
}

/* A descriptor that reads nothing (a directory): refused with a reason, no copy left open. */
static void test_unreadable_refused(void **state)
{
    (void)state;
    int dir = open("/tmp", O_RDONLY | O_DIRECTORY);
    assert_true(dir >= 0);
    int copy = -1;
    uint64_t hash;
    struct stat info;
    char reason[256] = "";
    assert_int_equal(pcopy_sealed(dir, "test", &copy, &hash, &info, reason, sizeof reason), -1);
    assert_int_equal(copy, -1);
    assert_non_null(strstr(reason, "cannot make a private copy"));
    assert_int_equal(pcopy_hash(dir, &hash), -1);
    close(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_bytes_and_hash),
        cmocka_unit_test(test_sealed_against_every_change),
        cmocka_unit_test(test_unreadable_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
