/* SPDX-License-Identifier: MIT */
/*
 * A plugin host confining itself before its plugin loads: setrlimit, Landlock (raw system calls,
 * the best ABI the kernel offers), privileges.c's switch of user and capabilities, and the
 * seccomp filter of sandbox_filter.c.
 */
#include "isolation/sandbox.h"

#include "isolation/host_namespace.h"
#include "isolation/time_slice.h"
#include "base/log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/landlock.h>
#include <pwd.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Rights of later ABIs, for kernel headers older than the kernel. */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/* ThreadSanitizer's runtime keeps a thread of its own in every process, forked ones included. */
#if defined(__SANITIZE_THREAD__)
#define SANDBOX_RUNTIME_THREADS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SANDBOX_RUNTIME_THREADS 1
#endif
#endif
#ifndef SANDBOX_RUNTIME_THREADS
#define SANDBOX_RUNTIME_THREADS 0
#endif

#define READ_RIGHTS                                                                                \
    (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
/* The rights a rule on a file (not a directory) may carry. */
#define FILE_RIGHTS                                                                                \
    (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |   \
     LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

/*
 * What the dynamic loader, libc and the plugin host read whatever read_paths says: libraries and
 * their cache, the time zone, messages, the resolver's files (none of them secret), the
 * process's own /proc entries (the sanitizers and glibc read maps and status), the CPU count
 * glibc reads from /sys, and the harmless devices.
 */
/* clang-format off */
static const char *const always_readable[] = {
    "/lib", "/lib32", "/lib64", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/local/lib",
    "/etc/ld.so.cache", "/etc/localtime", "/usr/share/zoneinfo", "/usr/share/locale",
    "/etc/nsswitch.conf", "/etc/host.conf", "/etc/hosts", "/etc/resolv.conf", "/etc/gai.conf",
    "/etc/services", "/etc/protocols",
    "/proc/self", "/sys/devices/system/cpu",
    "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random",
};
/* clang-format on */
static const char *const always_writable[] = {"/dev/null"};

static void copy_error(char *error, size_t error_size, const char *name, const char *text)
{
    snprintf(error, error_size, "[plugin %s]: %s", name ? name : "?", text);
}

/* ---- settings ---------------------------------------------------------------------------- */

static int resolve_ids(const char *name, const char *user, const char *group, priv_target *out,
                       char *error, size_t error_size)
{
    out->change = false;
    if (!user && !group)
        return 0;
    if (!user) {
        snprintf(error, error_size,
                 "[plugin %s]: group = %s needs user as well (the plugin host changes both or "
                 "neither)",
                 name, group);
        return -1;
    }
    errno = 0;
    const struct passwd *account = getpwnam(user);
    if (!account) {
        snprintf(error, error_size, "[plugin %s]: user %s: %s", name, user,
                 errno ? strerror(errno) : "no such user");
        return -1;
    }
    out->uid = account->pw_uid;
    out->gid = account->pw_gid;
    if (group) {
        errno = 0;
        const struct group *entry = getgrnam(group);
        if (!entry) {
            snprintf(error, error_size, "[plugin %s]: group %s: %s", name, group,
                     errno ? strerror(errno) : "no such group");
            return -1;
        }
        out->gid = entry->gr_gid;
    }
    out->change = true;
    return 0;
}

static int copy_string(const char *from, char **to)
{
    *to = NULL;
    if (!from)
        return 0;
    *to = strdup(from);
    return *to ? 0 : -1;
}

int sandbox_settings_from_config(const rpcd_config *config, const cfg_plugin *plugin,
                                 sandbox_settings *out, char *error, size_t error_size)
{
    const cfg_confinement *keys = &plugin->confinement;
    memset(out, 0, sizeof *out);
    out->limit_memory = keys->limit_memory;
    out->limit_cpu_seconds = keys->limit_cpu_seconds;
    out->limit_open_files = keys->limit_open_files;
    out->limit_processes = keys->limit_processes;
    out->seccomp = keys->seccomp == CFG_SECCOMP_STRICT ? SANDBOX_SECCOMP_STRICT
                   : keys->seccomp == CFG_SECCOMP_OFF  ? SANDBOX_SECCOMP_OFF
                                                       : SANDBOX_SECCOMP_DEFAULT;
    if (copy_string(plugin->name, &out->name) != 0 ||
        copy_string(plugin->path, &out->plugin_path) != 0 ||
        copy_string(keys->read_paths, &out->read_paths) != 0 ||
        copy_string(keys->write_paths, &out->write_paths) != 0) {
        copy_error(error, error_size, plugin->name, "out of memory");
        goto fail;
    }
    /* The plugin's own user, else rpcd's: a host must never keep root when rpcd gives it up. */
    const char *user = keys->user ? keys->user : config->user;
    const char *group = keys->user || keys->group ? keys->group : config->group;
    if (resolve_ids(plugin->name, user, group, &out->target, error, error_size) != 0)
        goto fail;
    return 0;
fail:
    sandbox_settings_free(out);
    return -1;
}

void sandbox_settings_free(sandbox_settings *settings)
{
    free(settings->name);
    free(settings->plugin_path);
    free(settings->read_paths);
    free(settings->write_paths);
    memset(settings, 0, sizeof *settings);
}

/* ---- resource limits --------------------------------------------------------------------- */

static int set_limit(const sandbox_settings *settings, int resource, const char *key, size_t value,
                     rlim_t hard_extra, char *error, size_t error_size)
{
    if (value == 0)
        return 0;
    /* The hard limit too: a plugin must not raise its own soft limit back. */
    struct rlimit limit = {.rlim_cur = (rlim_t)value, .rlim_max = (rlim_t)value + hard_extra};
    if (setrlimit(resource, &limit) != 0) {
        snprintf(error, error_size, "[plugin %s]: cannot set %s to %zu: %s", settings->name, key,
                 value, strerror(errno));
        return -1;
    }
    return 0;
}

static int apply_limits(const sandbox_settings *s, char *error, size_t error_size)
{
    /* A second past the CPU limit SIGKILL follows the SIGXCPU a plugin might catch. */
    if (set_limit(s, RLIMIT_AS, "limit_memory", s->limit_memory, 0, error, error_size) != 0 ||
        set_limit(s, RLIMIT_CPU, "limit_cpu_seconds", s->limit_cpu_seconds, 1, error, error_size) !=
            0 ||
        set_limit(s, RLIMIT_NOFILE, "limit_open_files", s->limit_open_files, 0, error,
                  error_size) != 0 ||
        set_limit(s, RLIMIT_NPROC, "limit_processes", s->limit_processes, 0, error, error_size) !=
            0)
        return -1;
    return 0;
}

/* ---- Landlock ---------------------------------------------------------------------------- */

int sandbox_landlock_abi(void)
{
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : (int)abi;
}

/* The write rights an ABI knows: each version added some. */
static uint64_t write_rights(int abi)
{
    uint64_t rights = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                      LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                      LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                      LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                      LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
    if (abi >= 2)
        rights |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3)
        rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 5)
        rights |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    return rights;
}

/*
 * Lets path be used with rights (those the rule set handles) beneath it. A path that does not
 * exist is an error when configured (required), skipped otherwise.
 */
static int allow_path(const sandbox_settings *s, int ruleset, const char *path, uint64_t rights,
                      uint64_t handled, bool required, char *error, size_t error_size)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) {
        if (!required)
            return 0;
        snprintf(error, error_size, "[plugin %s]: cannot open %s for its Landlock rule: %s",
                 s->name, path, strerror(errno));
        return -1;
    }
    struct stat status;
    struct landlock_path_beneath_attr rule = {.allowed_access = rights & handled, .parent_fd = fd};
    if (fstat(fd, &status) == 0 && !S_ISDIR(status.st_mode))
        rule.allowed_access &= FILE_RIGHTS;
    int result = 0;
    if (rule.allowed_access &&
        syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0) {
        snprintf(error, error_size, "[plugin %s]: cannot add the Landlock rule for %s: %s", s->name,
                 path, strerror(errno));
        result = -1;
    }
    close(fd);
    return result;
}

/* Each path of a space-separated list. */
static int allow_list(const sandbox_settings *s, int ruleset, const char *list, uint64_t rights,
                      uint64_t handled, char *error, size_t error_size)
{
    for (const char *at = list; *at;) {
        at += strspn(at, " \t");
        size_t length = strcspn(at, " \t");
        if (length == 0)
            break;
        char path[4096];
        snprintf(path, sizeof path, "%.*s", (int)length, at);
        if (allow_path(s, ruleset, path, rights, handled, true, error, error_size) != 0)
            return -1;
        at += length;
    }
    return 0;
}

/* The rule set's attributes up to ABI 6, whatever the kernel headers have. */
typedef struct ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
} ruleset_attr;

static int apply_landlock(const sandbox_settings *s, char *error, size_t error_size)
{
    /*
     * A filtered host may not signal what lies outside it, rpcd first: a host of rpcd's own user
     * could otherwise kill it. Landlock gives that from ABI 6, rule set or not.
     */
    int abi = sandbox_landlock_abi();
    uint64_t scoped = s->seccomp != SANDBOX_SECCOMP_OFF && abi >= 6 ? LANDLOCK_SCOPE_SIGNAL : 0;
    /*
     * A filtered host writes nowhere but write_paths (and /dev/null), write_paths or not: a
     * host of the user that owns the plugin's file, or rpcd's, could otherwise rewrite it, and
     * what rpcd loads next would be the plugin's choice.
     */
    bool writes_closed = s->seccomp != SANDBOX_SECCOMP_OFF;
    if (!s->read_paths && !s->write_paths && !scoped && !writes_closed)
        return 0;
    if (abi <= 0 && !s->read_paths && !s->write_paths)
        return 0; /* what is then left open is said by rpcd (sandbox_unenforced) */
    if (abi <= 0) {
        log_message(LOG_WARNING,
                    "[plugin %s]: the kernel has no Landlock: read_paths and write_paths are not "
                    "enforced",
                    s->name);
        return 0;
    }
    /* Only what is restricted is handled: read_paths alone leaves writes to file permissions. */
    uint64_t writes = write_rights(abi);
    ruleset_attr attr = {
        .handled_access_fs =
            (s->read_paths ? READ_RIGHTS : 0) | (s->write_paths || writes_closed ? writes : 0),
        .scoped = scoped,
    };
    uint64_t handled = attr.handled_access_fs;
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (ruleset < 0) {
        snprintf(error, error_size, "[plugin %s]: cannot create a Landlock rule set: %s", s->name,
                 strerror(errno));
        return -1;
    }
    int status = -1;
    if (s->read_paths) {
        for (size_t i = 0; i < sizeof always_readable / sizeof always_readable[0]; i++)
            if (allow_path(s, ruleset, always_readable[i], READ_RIGHTS, handled, false, error,
                           error_size) != 0)
                goto done;
        /* The host loads rpcd's sealed copy, which Landlock does not govern (a memfd); the
         * file itself may be gone by a restart, and is then skipped. */
        if (s->plugin_path && allow_path(s, ruleset, s->plugin_path, READ_RIGHTS, handled, false,
                                         error, error_size) != 0)
            goto done;
        if (allow_list(s, ruleset, s->read_paths, READ_RIGHTS, handled, error, error_size) != 0)
            goto done;
    }
    if (s->write_paths || writes_closed) {
        for (size_t i = 0; i < sizeof always_writable / sizeof always_writable[0]; i++)
            if (allow_path(s, ruleset, always_writable[i], writes, handled, false, error,
                           error_size) != 0)
                goto done;
        /* A place one may write to is one to read back: reads too, when they are handled. */
        if (s->write_paths && allow_list(s, ruleset, s->write_paths, writes | READ_RIGHTS, handled,
                                         error, error_size) != 0)
            goto done;
    }
    if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
        snprintf(error, error_size, "[plugin %s]: cannot enforce the Landlock rule set: %s",
                 s->name, strerror(errno));
        goto done;
    }
    status = 0;
done:
    close(ruleset);
    return status;
}

/* ---- all together ------------------------------------------------------------------------ */

/* The threads of this process, 0 when /proc cannot tell. */
static size_t thread_count(void)
{
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks)
        return 0;
    size_t count = 0;
    const struct dirent *entry;
    while ((entry = readdir(tasks)))
        if (entry->d_name[0] != '.')
            count++;
    closedir(tasks);
    return count;
}

int sandbox_apply(const sandbox_settings *s, char *error, size_t error_size)
{
    if (thread_count() > 1 + SANDBOX_RUNTIME_THREADS) {
        copy_error(error, error_size, s->name,
                   "the plugin host must confine itself before it starts a thread");
        return -1;
    }
    char reason[256];
    if (apply_limits(s, error, error_size) != 0)
        return -1;
    /* First of the rest: it is what lets an unprivileged process enforce Landlock. */
    if (priv_no_new_privs(reason, sizeof reason) != 0) {
        copy_error(error, error_size, s->name, reason);
        return -1;
    }
    /* Before the switch of user: the new user might not be able to open the paths. */
    if (apply_landlock(s, error, error_size) != 0)
        return -1;
    /* A host that stays root gives up its capabilities all the same: with CAP_SYS_PTRACE,
     * CAP_KILL or CAP_DAC_OVERRIDE it could reach into rpcd, not dumpable as it is. */
    if (priv_drop(&s->target, reason, sizeof reason) != 0 ||
        priv_drop_capabilities(reason, sizeof reason) != 0) {
        copy_error(error, error_size, s->name, reason);
        return -1;
    }
    /* Last: the steps before make system calls the filter may forbid. */
    return sandbox_filter_apply(s, error, error_size);
}

/* ---- what the kernel cannot enforce ------------------------------------------------------ */

size_t sandbox_unenforced(const sandbox_settings *s, int abi, bool apart, size_t index, char *out,
                          size_t size)
{
    const char *gaps[4];
    size_t count = 0;
    char write[192], scope[320];
    /* Without the filter only the kernel's permission checks stand between the host and rpcd,
     * outside a PID namespace of the host's own, where no pid names rpcd nor another host (and
     * the kernel refuses a pidfd of theirs: access_pidfd_pidns). */
    if (s->seccomp == SANDBOX_SECCOMP_OFF && !apart && !s->own_pid_namespace)
        gaps[count++] = "seccomp = off: nothing keeps its host from signalling rpcd or other "
                        "plugins' hosts of its user";
    if (abi <= 0 && (s->read_paths || s->write_paths))
        gaps[count++] = "this kernel has no Landlock (or it is not among the LSMs it booted with): "
                        "read_paths and write_paths are not enforced";
    else if (abi <= 0 && s->seccomp != SANDBOX_SECCOMP_OFF)
        gaps[count++] = "this kernel has no Landlock (or it is not among the LSMs it booted with): "
                        "its host may write wherever its user may";
    if (abi > 0 && abi < 5 && s->write_paths) {
        snprintf(write, sizeof write,
                 "this kernel's Landlock (ABI %d) does not confine %s beneath write_paths", abi,
                 abi < 3 ? "truncation (ABI 3, Linux 6.2) nor device ioctls (ABI 5, Linux 6.10)"
                         : "device ioctls (ABI 5, Linux 6.10)");
        gaps[count++] = write;
    }
    /* The filter refuses the ways of signalling rpcd it can name (sandbox_filter.c), but not a
     * kill() aimed at one of rpcd's threads by its id, which signals the whole of rpcd: only
     * a PID namespace of the host's own, Landlock's scope, or a user of the host's own, closes
     * that; and hosts of one user, only the namespace or the scope keeps apart. */
    if (abi < 6 && s->seccomp != SANDBOX_SECCOMP_OFF && !s->own_pid_namespace) {
        snprintf(scope, sizeof scope,
                 "this kernel's Landlock (ABI %d) has no signal scope (ABI 6, Linux 6.12): its "
                 "host can signal %sother plugins' hosts of its user",
                 abi < 0 ? 0 : abi,
                 apart ? ""
                       : "rpcd (through the id of one of rpcd's threads; give it a user of "
                         "its own to prevent that), and ");
        gaps[count++] = scope;
    }
    if (index >= count) {
        if (size)
            out[0] = '\0';
        return 0;
    }
    int length = snprintf(out, size, "plugin %s: %s", s->name ? s->name : "?", gaps[index]);
    return length < 0 ? 0 : (size_t)length;
}

/*
 * Read once a call, from the kernel's answers: the Landlock ABI and whether a time slice asked
 * for is taken (Linux 6.12).
 */
void sandbox_warn_unenforced(const rpcd_config *config)
{
    int abi = -1, slice = -2;
    /* The user rpcd serves as: [rpcd]'s, once the plugins are loaded, else its own. */
    uid_t served_as = geteuid();
    if (config->user) {
        const struct passwd *account = getpwnam(config->user);
        if (account)
            served_as = account->pw_uid;
    }
    for (size_t i = 0; i < config->plugin_count; i++) {
        const cfg_plugin *plugin = &config->plugins[i];
        if (plugin->isolation != CFG_ISOLATION_PROCESS)
            continue;
        if (abi < 0)
            abi = sandbox_landlock_abi();
        if (plugin->scheduler_slice_us) {
            if (slice == -2)
                slice = slice_honoured();
            if (slice == 0)
                log_message(LOG_WARNING,
                            "plugin %s: this kernel gives no task a time slice of its own (Linux "
                            "6.12): scheduler_slice_us = %zu is not honoured, its host runs with "
                            "the kernel's",
                            plugin->name, plugin->scheduler_slice_us);
        }
        sandbox_settings sandbox;
        char text[512];
        if (sandbox_settings_from_config(config, plugin, &sandbox, text, sizeof text) != 0)
            continue; /* the host says why when it starts */
        /* A host of a user neither rpcd's nor root's cannot signal rpcd. */
        bool apart =
            sandbox.target.change && sandbox.target.uid != served_as && sandbox.target.uid != 0;
        /* As the host will try (host.c): a user namespace only for a host that keeps its user. */
        bool keeps_user = !sandbox.target.change ||
                          (sandbox.target.uid == geteuid() && sandbox.target.gid == getegid());
        char why[256] = "no child could be started to find out";
        bool available = false;
        if (host_ns_probe(keeps_user, &available, why, sizeof why) != 0)
            available = false;
        sandbox.own_pid_namespace = available;
        if (!available)
            log_message(LOG_WARNING, "plugin %s: its host can have no PID namespace of its own: %s",
                        plugin->name, why);
        for (size_t gap = 0; sandbox_unenforced(&sandbox, abi, apart, gap, text, sizeof text);
             gap++)
            log_message(LOG_WARNING, "%s", text);
        sandbox_settings_free(&sandbox);
    }
}

/* ---- rpcd --check ------------------------------------------------------------------------ */

static const char *limit_text(char *buffer, size_t size, size_t value, const char *unit)
{
    if (value == 0)
        return "unlimited";
    snprintf(buffer, size, "%zu%s", value, unit);
    return buffer;
}

size_t sandbox_describe(const sandbox_settings *s, char *out, size_t size)
{
    static const char *const profiles[] = {"default", "strict", "off"};
    char memory[32], cpu[32], files[32], processes[32], ids[64] = "unchanged";
    if (s->target.change)
        snprintf(ids, sizeof ids, "%u:%u", (unsigned)s->target.uid, (unsigned)s->target.gid);
    int length = snprintf(
        out, size,
        "memory %s, cpu %s, files %s, processes %s, user %s, seccomp %s, read %s, write %s",
        limit_text(memory, sizeof memory, s->limit_memory, " bytes"),
        limit_text(cpu, sizeof cpu, s->limit_cpu_seconds, " s"),
        limit_text(files, sizeof files, s->limit_open_files, ""),
        limit_text(processes, sizeof processes, s->limit_processes, ""), ids, profiles[s->seccomp],
        s->read_paths ? s->read_paths : "everywhere",
        s->write_paths ? s->write_paths : "everywhere");
    return length < 0 ? 0 : (size_t)length;
}
