/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for sandbox: the confinement keys as the config reads them, and each confinement at
 * work, in a forked child that applies the settings and then tries the forbidden thing itself.
 */
#include "isolation/sandbox.h"

#include "config/config.h"
#include "base/file_safety.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/keyctl.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

/* LeakSanitizer needs ptrace at exit, so sanitized builds leave it allowed (sandbox.c). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_LEAK__)
#define LEAK_CHECKED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define LEAK_CHECKED 1
#endif
#endif

/* The sanitizers map terabytes of shadow memory: no address space limit fits them. */
#if defined(LEAK_CHECKED) || defined(__SANITIZE_THREAD__)
#define SHADOW_MAPPED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SHADOW_MAPPED 1
#endif
#endif

enum { APPLY_FAILED = 200, PROBE_WRONG = 201 };

static const char conf_name[] = "/etc/rpcd/rpcd.conf";

/* ---- the keys --------------------------------------------------------------------------- */

static rpcd_config *load_ok(const char *text)
{
    rpcd_config *config = NULL;
    char error[512] = "";
    if (cfg_load_string(text, conf_name, &config, error, sizeof error) != 0)
        fail_msg("refused: %s\n--- text ---\n%s", error, text);
    return config;
}

static void expect_config_error(const char *text, int line, const char *fragment)
{
    rpcd_config *config = NULL;
    char error[512] = "";
    assert_int_equal(cfg_load_string(text, conf_name, &config, error, sizeof error), -1);
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s:%d: ", conf_name, line);
    if (strncmp(error, prefix, strlen(prefix)) != 0 || !strstr(error, fragment))
        fail_msg("message '%s' is not '%s...%s...'", error, prefix, fragment);
}

static void test_keys_read(void **state)
{
    (void)state;
    rpcd_config *config = load_ok("[plugin p]\npath = /p.so\nlimit_memory = 268435456\n"
                                  "limit_cpu_seconds = 5\nlimit_open_files = 64\n"
                                  "limit_processes = 10\nuser = nobody\ngroup = nogroup\n"
                                  "seccomp = strict\nread_paths = /usr/share  /etc\n"
                                  "write_paths = /tmp\ncolour = blue\n");
    cfg_plugin *plugin = &config->plugins[0];
    /* The confinement keys are rpcd's: the plugin never sees them, only its own. */
    assert_null(cfg_plugin_get(plugin, "user"));
    assert_null(cfg_plugin_get(plugin, "seccomp"));
    assert_string_equal(cfg_plugin_get(plugin, "colour"), "blue");

    sandbox_settings settings;
    char error[256];
    assert_int_equal(sandbox_settings_from_config(config, plugin, &settings, error, sizeof error),
                     0);
    assert_int_equal(settings.limit_memory, 268435456);
    assert_int_equal(settings.limit_cpu_seconds, 5);
    assert_int_equal(settings.limit_open_files, 64);
    assert_int_equal(settings.limit_processes, 10);
    assert_true(settings.target.change);
    assert_int_equal(settings.target.uid, getpwnam("nobody")->pw_uid);
    assert_int_equal(settings.target.gid, getgrnam("nogroup")->gr_gid);
    assert_int_equal(settings.seccomp, SANDBOX_SECCOMP_STRICT);
    assert_string_equal(settings.read_paths, "/usr/share  /etc");
    assert_string_equal(settings.write_paths, "/tmp");
    assert_string_equal(settings.plugin_path, "/p.so");
    char line[512];
    sandbox_describe(&settings, line, sizeof line);
    char expected[512];
    snprintf(expected, sizeof expected,
             "memory 268435456 bytes, cpu 5 s, files 64, processes 10, user %u:%u, seccomp "
             "strict, read /usr/share  /etc, write /tmp",
             (unsigned)settings.target.uid, (unsigned)settings.target.gid);
    assert_string_equal(line, expected);
    /* Cut, but NUL-terminated, and the length it needed. */
    char short_line[8];
    assert_int_equal(sandbox_describe(&settings, short_line, sizeof short_line), strlen(expected));
    assert_string_equal(short_line, "memory ");
    sandbox_settings_free(&settings);
    cfg_free(config);
}

static void test_defaults(void **state)
{
    (void)state;
    rpcd_config *config = load_ok("[plugin p]\npath = /p.so\n");
    sandbox_settings settings;
    char error[256];
    assert_int_equal(
        sandbox_settings_from_config(config, &config->plugins[0], &settings, error, sizeof error),
        0);
    char line[512];
    sandbox_describe(&settings, line, sizeof line);
    assert_string_equal(line, "memory unlimited, cpu unlimited, files unlimited, processes "
                              "unlimited, user unchanged, seccomp default, read everywhere, "
                              "write everywhere");
    sandbox_settings_free(&settings);
    cfg_free(config);

    /* [rpcd]'s user is the host's too, unless the plugin names its own (with its own group). */
    config = load_ok("[rpcd]\nuser = nobody\ngroup = nogroup\n[plugin a]\npath = /a.so\n"
                     "[plugin b]\npath = /b.so\nuser = root\n");
    assert_int_equal(
        sandbox_settings_from_config(config, &config->plugins[0], &settings, error, sizeof error),
        0);
    assert_true(settings.target.change);
    assert_int_equal(settings.target.uid, 65534);
    assert_int_equal(settings.target.gid, getgrnam("nogroup")->gr_gid);
    sandbox_settings_free(&settings);
    assert_int_equal(
        sandbox_settings_from_config(config, &config->plugins[1], &settings, error, sizeof error),
        0);
    assert_int_equal(settings.target.uid, 0);
    assert_int_equal(settings.target.gid, 0);
    sandbox_settings_free(&settings);
    cfg_free(config);
}

static void test_key_errors(void **state)
{
    (void)state;
    expect_config_error("[plugin p]\npath = p.so\nseccomp = tight\n", 3,
                        "seccomp must be default, strict or off, not 'tight'");
    expect_config_error("[plugin p]\npath = p.so\nread_paths = /a etc\n", 3,
                        "read_paths must be absolute paths");
    expect_config_error("[plugin p]\npath = p.so\nwrite_paths =  \n", 3,
                        "write_paths must be absolute paths");
    expect_config_error("[plugin p]\npath = p.so\nlimit_memory = 1024\n", 3,
                        "limit_memory must be an integer from 16777216 to");
    expect_config_error("[plugin p]\npath = p.so\nlimit_open_files = 8\n", 3,
                        "limit_open_files must be an integer from 16 to 1048576");
    expect_config_error("[plugin p]\npath = p.so\nuser = a\nuser = b\n", 4,
                        "user is given twice in [plugin p]");
    expect_config_error("[plugin p]\npath = p.so\nseccomp = off\nseccomp = off\n", 4,
                        "seccomp is given twice");
    expect_config_error("[plugin p]\npath = p.so\nlimit_cpu_seconds = 1\nlimit_cpu_seconds = 2\n",
                        4, "limit_cpu_seconds is given twice");

    sandbox_settings settings;
    char error[256];
    rpcd_config *config = load_ok("[plugin p]\npath = /p.so\nuser = no-such-user-here\n");
    assert_int_equal(
        sandbox_settings_from_config(config, &config->plugins[0], &settings, error, sizeof error),
        -1);
    assert_string_equal(error, "[plugin p]: user no-such-user-here: no such user");
    cfg_free(config);
    config = load_ok("[plugin p]\npath = /p.so\ngroup = nogroup\n");
    assert_int_equal(
        sandbox_settings_from_config(config, &config->plugins[0], &settings, error, sizeof error),
        -1);
    assert_non_null(strstr(error, "group = nogroup needs user as well"));
    cfg_free(config);
}

/* ---- the confinement at work ------------------------------------------------------------ */

typedef int (*probe_fn)(const void *argument);

/*
 * Forks a child that applies settings and runs probe, which returns the errno its forbidden
 * call failed with (0 when it succeeded). Returns the child's wait status.
 */
static int run_confined(const sandbox_settings *settings, probe_fn probe, const void *argument)
{
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        /* cmocka's handlers would turn a crash of the probe into a second test runner here. */
        signal(SIGSEGV, SIG_DFL);
        signal(SIGBUS, SIG_DFL);
        signal(SIGILL, SIG_DFL);
        signal(SIGFPE, SIG_DFL);
        char error[512];
        if (sandbox_apply(settings, error, sizeof error) != 0) {
            fprintf(stderr, "sandbox_apply: %s\n", error);
            _exit(APPLY_FAILED);
        }
        /* _exit: the parent's leak check is not the child's to run. */
        _exit(probe(argument));
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    return status;
}

/* What probe's forbidden call failed with in a confined child. */
static int confined_errno(const sandbox_settings *settings, probe_fn probe, const void *argument)
{
    int status = run_confined(settings, probe, argument);
    if (!WIFEXITED(status))
        fail_msg("the child died of signal %d", WTERMSIG(status));
    assert_int_not_equal(WEXITSTATUS(status), APPLY_FAILED);
    return WEXITSTATUS(status);
}

static sandbox_settings settings_with(sandbox_seccomp seccomp)
{
    sandbox_settings settings = {.name = "test", .seccomp = seccomp};
    return settings;
}

static int errno_of(long result)
{
    return result < 0 ? errno : 0;
}

static int probe_ptrace(const void *argument)
{
    (void)argument;
    return errno_of(ptrace(PTRACE_TRACEME, 0, NULL, NULL));
}

/* With every capability, the mount point is what fails; without the filter, ENOENT. */
static int probe_mount(const void *argument)
{
    (void)argument;
    return errno_of(mount("none", "/nonexistent/rpcd-sandbox", "tmpfs", 0, NULL));
}

static int probe_keyctl(const void *argument)
{
    (void)argument;
    return errno_of(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
}

/* An unknown command: EINVAL from the kernel when the call gets there. */
static int probe_bpf(const void *argument)
{
    (void)argument;
    return errno_of(syscall(SYS_bpf, 0x7fff, NULL, 0));
}

static int probe_unshare(const void *argument)
{
    (void)argument;
    return errno_of(unshare(CLONE_NEWUSER));
}

static void *thread_main(void *argument)
{
    return argument;
}

/* Threads still start: glibc falls back from clone3 to clone, whose flags the filter reads. */
static int probe_thread(const void *argument)
{
    (void)argument;
    pthread_t thread;
    int error = pthread_create(&thread, NULL, thread_main, NULL);
    if (error)
        return error;
    return pthread_join(thread, NULL);
}

static int probe_exec(const void *argument)
{
    (void)argument;
    char *const args[] = {"sh", "-c", "exit 0", NULL};
    char *const environment[] = {NULL};
    execve("/bin/sh", args, environment);
    return errno;
}

static int probe_inet_socket(const void *argument)
{
    (void)argument;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return errno;
    close(fd);
    return 0;
}

static int probe_unix_socketpair(const void *argument)
{
    (void)argument;
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
        return errno;
    close(fds[0]);
    close(fds[1]);
    return 0;
}

static int probe_no_new_privs(const void *argument)
{
    (void)argument;
    return prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ? 0 : PROBE_WRONG;
}

/*
 * A 32-bit system call (int 0x80) on x86-64: another ABI, with other numbers, which a filter
 * written for this one would let through. Returns what getpid returned, or its error.
 */
static int probe_other_abi(const void *argument)
{
    (void)argument;
#if defined(__x86_64__)
    long result;
    __asm__ volatile("int $0x80" : "=a"(result) : "a"(20L) : "memory"); /* i386 getpid */
    return result == getpid() ? 0 : result < 0 ? (int)-result : PROBE_WRONG;
#else
    return 0;
#endif
}

/*
 * Whether this kernel serves the 32-bit ABI at all: some are built or booted without it, and
 * kill a process that asks (SIGSEGV), with or without a filter. Asked of a child, unconfined.
 */
static bool kernel_has_other_abi(void)
{
#if defined(__x86_64__)
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        signal(SIGSEGV, SIG_DFL);
        _exit(probe_other_abi(NULL));
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return true;
    print_message("this kernel serves no 32-bit system call: the other ABI goes unprobed\n");
#endif
    return false;
}

/* Signal 0 to the test process, outside the confined child. */
static int probe_signal_parent(const void *argument)
{
    (void)argument;
    return errno_of(kill(getppid(), 0));
}

static void test_seccomp_default(void **state)
{
    (void)state;
    sandbox_settings settings = settings_with(SANDBOX_SECCOMP_DEFAULT);
#ifndef LEAK_CHECKED
    assert_int_equal(confined_errno(&settings, probe_ptrace, NULL), EPERM);
#endif
    assert_int_equal(confined_errno(&settings, probe_mount, NULL), EPERM);
    assert_int_equal(confined_errno(&settings, probe_keyctl, NULL), EPERM);
    assert_int_equal(confined_errno(&settings, probe_bpf, NULL), EPERM);
    assert_int_equal(confined_errno(&settings, probe_unshare, NULL), EPERM);
    if (kernel_has_other_abi())
        assert_int_equal(confined_errno(&settings, probe_other_abi, NULL), EPERM);
    /* Landlock's scope (ABI 6) keeps its signals inside; before it, the signal goes out, and
     * rpcd says so at start-up (sandbox_unenforced). */
    assert_int_equal(confined_errno(&settings, probe_signal_parent, NULL),
                     sandbox_landlock_abi() >= 6 ? EPERM : 0);
    /* What a tool does need still works. */
    assert_int_equal(confined_errno(&settings, probe_thread, NULL), 0);
    assert_int_equal(confined_errno(&settings, probe_inet_socket, NULL), 0);
    assert_int_equal(confined_errno(&settings, probe_no_new_privs, NULL), 0);
}

/* The same probes pass without the filter: the EPERM above is the filter's. */
static void test_seccomp_off(void **state)
{
    (void)state;
    sandbox_settings settings = settings_with(SANDBOX_SECCOMP_OFF);
    assert_int_equal(confined_errno(&settings, probe_ptrace, NULL), 0);
    assert_int_equal(confined_errno(&settings, probe_mount, NULL), ENOENT);
    assert_int_equal(confined_errno(&settings, probe_keyctl, NULL), 0);
    assert_int_equal(confined_errno(&settings, probe_bpf, NULL), EINVAL);
    if (kernel_has_other_abi())
        assert_int_equal(confined_errno(&settings, probe_other_abi, NULL), 0);
    assert_int_equal(confined_errno(&settings, probe_signal_parent, NULL), 0);
    assert_int_equal(confined_errno(&settings, probe_exec, NULL), 0); /* sh's exit 0 */
    /* no_new_privs is set whatever the profile. */
    assert_int_equal(confined_errno(&settings, probe_no_new_privs, NULL), 0);
}

static void test_seccomp_strict(void **state)
{
    (void)state;
    sandbox_settings settings = settings_with(SANDBOX_SECCOMP_STRICT);
    assert_int_equal(confined_errno(&settings, probe_exec, NULL), EPERM);
    assert_int_equal(confined_errno(&settings, probe_inet_socket, NULL), EPERM);
    assert_int_equal(confined_errno(&settings, probe_unix_socketpair, NULL), 0);
    assert_int_equal(confined_errno(&settings, probe_keyctl, NULL), EPERM);
    assert_int_equal(confined_errno(&settings, probe_thread, NULL), 0);
    assert_int_equal(confined_errno(&settings, probe_signal_parent, NULL),
                     sandbox_landlock_abi() >= 6 ? EPERM : 0);
    /* The default profile leaves exec alone. */
    settings = settings_with(SANDBOX_SECCOMP_DEFAULT);
    assert_int_equal(confined_errno(&settings, probe_exec, NULL), 0);
}

/* ---- Landlock --------------------------------------------------------------------------- */

typedef struct landlock_dirs {
    char inside[64];  /* listed in read_paths or write_paths */
    char outside[64]; /* not listed */
} landlock_dirs;

static void make_dirs(landlock_dirs *dirs)
{
    snprintf(dirs->inside, sizeof dirs->inside, "/tmp/rpcd-sandbox-in-XXXXXX");
    snprintf(dirs->outside, sizeof dirs->outside, "/tmp/rpcd-sandbox-out-XXXXXX");
    assert_non_null(mkdtemp(dirs->inside));
    assert_non_null(mkdtemp(dirs->outside));
    char path[128];
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/file", i ? dirs->outside : dirs->inside);
        FILE *file = fopen(path, "w");
        assert_non_null(file);
        fputs("text\n", file);
        fclose(file);
    }
}

static void remove_dirs(const landlock_dirs *dirs)
{
    char path[128];
    for (int i = 0; i < 2; i++) {
        const char *dir = i ? dirs->outside : dirs->inside;
        snprintf(path, sizeof path, "%s/file", dir);
        unlink(path);
        snprintf(path, sizeof path, "%s/new", dir);
        unlink(path);
        rmdir(dir);
    }
}

static int probe_open(const void *argument)
{
    const char *path = argument;
    int flags = strstr(path, "/new") ? O_WRONLY | O_CREAT : O_RDONLY;
    int fd = open(path, flags | O_CLOEXEC, 0600);
    if (fd < 0)
        return errno;
    close(fd);
    return 0;
}

static int probe_truncate(const void *argument)
{
    return truncate(argument, 0) == 0 ? 0 : errno;
}

/* Both a library the loader maps and the files of the process stay readable. */
static int probe_essentials(const void *argument)
{
    (void)argument;
    static const char *const paths[] = {"/etc/ld.so.cache", "/proc/self/status", "/dev/null",
                                        "/dev/urandom"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return errno;
        close(fd);
    }
    return 0;
}

static void test_landlock_read_paths(void **state)
{
    (void)state;
    if (sandbox_landlock_abi() <= 0)
        skip();
    landlock_dirs dirs;
    make_dirs(&dirs);
    char inside[128], outside[128];
    snprintf(inside, sizeof inside, "%s/file", dirs.inside);
    snprintf(outside, sizeof outside, "%s/file", dirs.outside);
    sandbox_settings settings = settings_with(SANDBOX_SECCOMP_OFF);
    settings.read_paths = dirs.inside;
    assert_int_equal(confined_errno(&settings, probe_open, inside), 0);
    assert_int_equal(confined_errno(&settings, probe_open, outside), EACCES);
    assert_int_equal(confined_errno(&settings, probe_essentials, NULL), 0);
    /* The plugin's own file is readable without being listed. */
    settings.plugin_path = outside;
    assert_int_equal(confined_errno(&settings, probe_open, outside), 0);
    /* Without the rule set, the same file opens. */
    settings = settings_with(SANDBOX_SECCOMP_OFF);
    char other[128];
    snprintf(other, sizeof other, "%s/file", dirs.outside);
    assert_int_equal(confined_errno(&settings, probe_open, other), 0);
    remove_dirs(&dirs);
}

/* Loads a plugin the way rpcd does: fsafe_open, then dlopen of the descriptor, and its entry. */
static int probe_load(const void *argument)
{
    char reason[512];
    int fd;
    if (fsafe_open(argument, false, &fd, reason, sizeof reason) != 0)
        return 1;
    void *handle = fsafe_dlopen(fd, RTLD_NOW | RTLD_LOCAL, reason, sizeof reason);
    close(fd);
    if (!handle) {
        fprintf(stderr, "%s\n", reason);
        return 2;
    }
    return dlsym(handle, "rpcd_plugin_entry") ? 0 : 3;
}

/*
 * With reads restricted to a directory that holds nothing of it, a plugin still loads: its own
 * file, and the libraries the loader maps for it (the fixture links jansson), stay readable.
 */
static void test_landlock_plugin_loads(void **state)
{
    (void)state;
    const char *plugin = getenv("RPCD_FIXTURE_FORBIDDEN");
    if (sandbox_landlock_abi() <= 0 || !plugin)
        skip();
    landlock_dirs dirs;
    make_dirs(&dirs);
    sandbox_settings settings = settings_with(SANDBOX_SECCOMP_STRICT);
    settings.read_paths = dirs.inside;
    settings.plugin_path = (char *)plugin;
    assert_int_equal(confined_errno(&settings, probe_load, plugin), 0);
    /* Without the plugin's own rule, it does not load. */
    settings.plugin_path = NULL;
    assert_int_not_equal(confined_errno(&settings, probe_load, plugin), 0);
    remove_dirs(&dirs);
}

static void test_landlock_write_paths(void **state)
{
    (void)state;
    if (sandbox_landlock_abi() <= 0)
        skip();
    landlock_dirs dirs;
    make_dirs(&dirs);
    char inside[128], outside[128], outside_read[128];
    snprintf(inside, sizeof inside, "%s/new", dirs.inside);
    snprintf(outside, sizeof outside, "%s/new", dirs.outside);
    snprintf(outside_read, sizeof outside_read, "%s/file", dirs.outside);
    sandbox_settings settings = settings_with(SANDBOX_SECCOMP_OFF);
    settings.write_paths = dirs.inside;
    assert_int_equal(confined_errno(&settings, probe_open, inside), 0);
    assert_int_equal(confined_errno(&settings, probe_open, outside), EACCES);
    /* Writes alone are restricted: reading elsewhere is left to file permissions. */
    assert_int_equal(confined_errno(&settings, probe_open, outside_read), 0);
    /* truncate(2) is refused from ABI 3 (Linux 6.2); before, it is not, and rpcd warns. */
    char inside_file[128];
    snprintf(inside_file, sizeof inside_file, "%s/file", dirs.inside);
    assert_int_equal(confined_errno(&settings, probe_truncate, inside_file), 0);
    assert_int_equal(confined_errno(&settings, probe_truncate, outside_read),
                     sandbox_landlock_abi() >= 3 ? EACCES : 0);
    settings = settings_with(SANDBOX_SECCOMP_OFF);
    assert_int_equal(confined_errno(&settings, probe_open, outside), 0);
    remove_dirs(&dirs);
}

static void test_landlock_missing_path(void **state)
{
    (void)state;
    if (sandbox_landlock_abi() <= 0)
        skip();
    sandbox_settings settings = settings_with(SANDBOX_SECCOMP_OFF);
    settings.read_paths = "/nonexistent/rpcd-sandbox";
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        char error[512];
        int status = sandbox_apply(&settings, error, sizeof error);
        _exit(status == -1 &&
                      strcmp(error, "[plugin test]: cannot open /nonexistent/rpcd-sandbox for "
                                    "its Landlock rule: No such file or directory") == 0
                  ? 0
                  : 1);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* ---- resource limits --------------------------------------------------------------------- */

static int probe_allocate(const void *argument)
{
    size_t bytes = *(const size_t *)argument;
    char *memory = malloc(bytes);
    if (!memory)
        return ENOMEM;
    memory[bytes - 1] = 1;
    free(memory);
    return 0;
}

static void test_limit_memory(void **state)
{
    (void)state;
#ifdef SHADOW_MAPPED
    skip();
#endif
    sandbox_settings settings = settings_with(SANDBOX_SECCOMP_OFF);
    settings.limit_memory = 256u << 20;
    size_t bytes = 512u << 20;
    assert_int_equal(confined_errno(&settings, probe_allocate, &bytes), ENOMEM);
    bytes = 16u << 20;
    assert_int_equal(confined_errno(&settings, probe_allocate, &bytes), 0);
    settings.limit_memory = 0;
    bytes = 512u << 20;
    assert_int_equal(confined_errno(&settings, probe_allocate, &bytes), 0);
}

/* Opens /dev/null until it fails or 64 descriptors were opened; the errno, 0 for no failure. */
static int probe_open_many(const void *argument)
{
    (void)argument;
    for (int i = 0; i < 64; i++)
        if (open("/dev/null", O_RDONLY) < 0)
            return errno;
    return 0;
}

static void test_limit_open_files(void **state)
{
    (void)state;
    sandbox_settings settings = settings_with(SANDBOX_SECCOMP_OFF);
    settings.limit_open_files = 16;
    assert_int_equal(confined_errno(&settings, probe_open_many, NULL), EMFILE);
    settings.limit_open_files = 0;
    assert_int_equal(confined_errno(&settings, probe_open_many, NULL), 0);
}

static int probe_fork(const void *argument)
{
    (void)argument;
    pid_t child = fork();
    if (child < 0)
        return errno;
    if (child == 0)
        _exit(0);
    waitpid(child, NULL, 0);
    return 0;
}

/*
 * RLIMIT_NPROC counts the processes of the real user, and the kernel does not enforce it on
 * root: it binds only a host that runs as another user.
 */
static void test_limit_processes(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    sandbox_settings settings = settings_with(SANDBOX_SECCOMP_OFF);
    settings.limit_processes = 1;
    settings.target = (priv_target){.change = true, .uid = 65534, .gid = 65534};
    assert_int_equal(confined_errno(&settings, probe_fork, NULL), EAGAIN);
    /* Root is not bound by it. */
    settings.target.change = false;
    assert_int_equal(confined_errno(&settings, probe_fork, NULL), 0);
    /* Nor is nobody without it. */
    settings.target.change = true;
    settings.limit_processes = 0;
    assert_int_equal(confined_errno(&settings, probe_fork, NULL), 0);
}

static double cpu_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* Spins for *argument seconds of CPU time, then exits 0. */
static int probe_spin(const void *argument)
{
    double seconds = *(const double *)argument;
    while (cpu_seconds() < seconds) {
    }
    return 0;
}

static void test_limit_cpu(void **state)
{
    (void)state;
    sandbox_settings settings = settings_with(SANDBOX_SECCOMP_OFF);
    settings.limit_cpu_seconds = 1;
    /* Far past the limit: the kernel checks it at its ticks, which an emulated CPU on a busy
     * machine delivers late (4 s once ran out before the check); spinning that long only
     * happens when the limit does not hold. */
    double seconds = 30;
    int status = run_confined(&settings, probe_spin, &seconds);
    assert_true(WIFSIGNALED(status));
    assert_true(WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGKILL);
    /* A short spin stays within it. */
    seconds = 0.2;
    status = run_confined(&settings, probe_spin, &seconds);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static int probe_ids(const void *argument)
{
    const priv_target *target = argument;
    uid_t ruid, euid, suid;
    gid_t rgid, egid, sgid;
    if (getresuid(&ruid, &euid, &suid) != 0 || getresgid(&rgid, &egid, &sgid) != 0)
        return PROBE_WRONG;
    bool ids = ruid == target->uid && euid == target->uid && suid == target->uid &&
               rgid == target->gid && egid == target->gid && sgid == target->gid;
    return ids && getgroups(0, NULL) == 0 ? 0 : PROBE_WRONG;
}

static void test_user_group(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip();
    rpcd_config *config =
        load_ok("[plugin p]\npath = /p.so\nuser = nobody\ngroup = nogroup\nseccomp = off\n");
    sandbox_settings settings;
    char error[256];
    assert_int_equal(
        sandbox_settings_from_config(config, &config->plugins[0], &settings, error, sizeof error),
        0);
    priv_target expected = {.uid = getpwnam("nobody")->pw_uid, .gid = getgrnam("nogroup")->gr_gid};
    assert_int_equal(confined_errno(&settings, probe_ids, &expected), 0);
    /* Without user and group the host stays root. */
    settings.target.change = false;
    assert_int_equal(confined_errno(&settings, probe_ids, &expected), PROBE_WRONG);
    sandbox_settings_free(&settings);
    cfg_free(config);
}

static int probe_exit(const void *argument)
{
    (void)argument;
    exit(0);
}

/*
 * A host ends with exit(), which runs LeakSanitizer's check in sanitized builds: under either
 * profile it must still end with status 0 (the check stops threads with ptrace).
 */
static void test_exit_under_filter(void **state)
{
    (void)state;
    for (int strict = 0; strict < 2; strict++) {
        sandbox_settings settings =
            settings_with(strict ? SANDBOX_SECCOMP_STRICT : SANDBOX_SECCOMP_DEFAULT);
        int status = run_confined(&settings, probe_exit, NULL);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
}

static void *wait_forever(void *argument)
{
    pause();
    return argument;
}

/* A thread started before the confinement would escape it: sandbox_apply refuses. */
static void test_refuses_threads(void **state)
{
    (void)state;
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, wait_forever, NULL) != 0)
            _exit(2);
        sandbox_settings settings = settings_with(SANDBOX_SECCOMP_DEFAULT);
        char error[512];
        int status = sandbox_apply(&settings, error, sizeof error);
        _exit(status == -1 && strcmp(error, "[plugin test]: the plugin host must confine itself "
                                            "before it starts a thread") == 0
                  ? 0
                  : 1);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * What a kernel cannot enforce, by its Landlock ABI, one line each naming the plugin and what
 * would: no Landlock, truncation and device ioctls under write_paths, the signal scope.
 */
static void test_unenforced(void **state)
{
    (void)state;
    char line[512];
    sandbox_settings paths = {.name = "p", .read_paths = "/srv", .write_paths = "/tmp"};
    size_t length = sandbox_unenforced(&paths, 0, false, 0, line, sizeof line);
    assert_int_equal(length, strlen(line));
    assert_string_equal(line, "plugin p: this kernel has no Landlock (or it is not among the LSMs "
                              "it booted with): read_paths and write_paths are not enforced");
    assert_true(sandbox_unenforced(&paths, 0, false, 1, line, sizeof line) > 0);
    assert_non_null(strstr(line, "no signal scope (ABI 6, Linux 6.12)"));
    assert_int_equal(sandbox_unenforced(&paths, 0, false, 2, line, sizeof line), 0);
    assert_string_equal(line, "");
    /* Debian 12's Linux 6.1: ABI 2. */
    assert_true(sandbox_unenforced(&paths, 2, false, 0, line, sizeof line) > 0);
    assert_string_equal(line, "plugin p: this kernel's Landlock (ABI 2) does not confine "
                              "truncation (ABI 3, Linux 6.2) nor device ioctls (ABI 5, Linux "
                              "6.10) beneath write_paths");
    assert_true(sandbox_unenforced(&paths, 2, false, 1, line, sizeof line) > 0);
    assert_string_equal(line, "plugin p: this kernel's Landlock (ABI 2) has no signal scope (ABI "
                              "6, Linux 6.12): its host can signal rpcd (through the id of one of "
                              "rpcd's threads; give it a user of its own to prevent that), and "
                              "other plugins' hosts of its user");
    assert_int_equal(sandbox_unenforced(&paths, 2, false, 2, line, sizeof line), 0);
    assert_true(sandbox_unenforced(&paths, 4, false, 0, line, sizeof line) > 0);
    assert_string_equal(line, "plugin p: this kernel's Landlock (ABI 4) does not confine device "
                              "ioctls (ABI 5, Linux 6.10) beneath write_paths");
    assert_true(sandbox_unenforced(&paths, 5, false, 0, line, sizeof line) > 0);
    assert_non_null(strstr(line, "(ABI 5) has no signal scope"));
    /* From ABI 6 everything holds. */
    assert_int_equal(sandbox_unenforced(&paths, 6, false, 0, line, sizeof line), 0);
    /* read_paths alone needs nothing past ABI 1. Without the filter a host can signal rpcd,
     * unless apart: of a user neither rpcd's (a user = that [rpcd] has too) nor root. */
    sandbox_settings reads = {.name = "r", .read_paths = "/srv", .seccomp = SANDBOX_SECCOMP_OFF};
    assert_true(sandbox_unenforced(&reads, 1, false, 0, line, sizeof line) > 0);
    assert_string_equal(line, "plugin r: seccomp = off: nothing keeps its host from signalling "
                              "rpcd or other plugins' hosts of its user");
    assert_int_equal(sandbox_unenforced(&reads, 1, false, 1, line, sizeof line), 0);
    assert_int_equal(sandbox_unenforced(&reads, 1, true, 0, line, sizeof line), 0);
    /* A filtered host of another user still reaches the other hosts of that user. */
    sandbox_settings other_user = {.name = "u", .target = {.change = true, .uid = 65534}};
    assert_true(sandbox_unenforced(&other_user, 2, true, 0, line, sizeof line) > 0);
    assert_string_equal(line, "plugin u: this kernel's Landlock (ABI 2) has no signal scope (ABI "
                              "6, Linux 6.12): its host can signal other plugins' hosts of its "
                              "user");
    assert_int_equal(sandbox_unenforced(&other_user, 2, true, 1, line, sizeof line), 0);
    /* Without Landlock a filtered host's writes are not closed either. */
    sandbox_settings plain = {.name = "d"};
    assert_true(sandbox_unenforced(&plain, 0, false, 0, line, sizeof line) > 0);
    assert_string_equal(line, "plugin d: this kernel has no Landlock (or it is not among the LSMs "
                              "it booted with): its host may write wherever its user may");
    assert_true(sandbox_unenforced(&plain, 2, false, 0, line, sizeof line) > 0);
    assert_int_equal(sandbox_unenforced(&plain, 2, false, 1, line, sizeof line), 0);
    /* A cut line is still a string. */
    char tiny[8];
    assert_true(sandbox_unenforced(&plain, 2, false, 0, tiny, sizeof tiny) > sizeof tiny);
    assert_string_equal(tiny, "plugin ");
    /* A host in a PID namespace of its own names neither rpcd nor another host, on any
     * kernel and without the filter: no signal gap is left, the others stay. */
    sandbox_settings apart_ns = {.name = "n", .write_paths = "/tmp", .own_pid_namespace = true};
    assert_true(sandbox_unenforced(&apart_ns, 2, false, 0, line, sizeof line) > 0);
    assert_non_null(strstr(line, "beneath write_paths"));
    assert_int_equal(sandbox_unenforced(&apart_ns, 2, false, 1, line, sizeof line), 0);
    sandbox_settings off_ns = {
        .name = "o", .seccomp = SANDBOX_SECCOMP_OFF, .own_pid_namespace = true};
    assert_int_equal(sandbox_unenforced(&off_ns, 6, false, 0, line, sizeof line), 0);
    assert_int_equal(sandbox_unenforced(&off_ns, 2, false, 0, line, sizeof line), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys_read),
        cmocka_unit_test(test_unenforced),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_key_errors),
        cmocka_unit_test(test_seccomp_default),
        cmocka_unit_test(test_seccomp_off),
        cmocka_unit_test(test_seccomp_strict),
        cmocka_unit_test(test_landlock_read_paths),
        cmocka_unit_test(test_landlock_plugin_loads),
        cmocka_unit_test(test_landlock_write_paths),
        cmocka_unit_test(test_landlock_missing_path),
        cmocka_unit_test(test_limit_memory),
        cmocka_unit_test(test_limit_open_files),
        cmocka_unit_test(test_limit_processes),
        cmocka_unit_test(test_limit_cpu),
        cmocka_unit_test(test_user_group),
        cmocka_unit_test(test_refuses_threads),
        cmocka_unit_test(test_exit_under_filter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
