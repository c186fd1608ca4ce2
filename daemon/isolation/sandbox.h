/* SPDX-License-Identifier: MIT */
/*
 * The confinement a plugin host applies to itself before it loads its plugin: resource limits,
 * a Landlock file system rule set, another user, no_new_privs and a seccomp filter.
 */
#ifndef RPCD_SANDBOX_H
#define RPCD_SANDBOX_H

#include "config/config.h"
#include "base/privileges.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum sandbox_seccomp {
    SANDBOX_SECCOMP_DEFAULT, /* what a tool never needs fails with EPERM */
    SANDBOX_SECCOMP_STRICT,  /* the default, and no exec, no socket but socketpair(AF_UNIX) */
    SANDBOX_SECCOMP_OFF,
} sandbox_seccomp;

/* One plugin host's confinement. Every string is owned: free with sandbox_settings_free. */
typedef struct sandbox_settings {
    char *name;               /* the plugin's name, for messages */
    char *plugin_path;        /* stays readable under Landlock, NULL: none */
    size_t limit_memory;      /* RLIMIT_AS in bytes; 0: left as inherited */
    size_t limit_cpu_seconds; /* RLIMIT_CPU; 0: left as inherited */
    size_t limit_open_files;  /* RLIMIT_NOFILE; 0: left as inherited */
    size_t limit_processes;   /* RLIMIT_NPROC (per user, see rpcd.conf(5)); 0: inherited */
    priv_target target;       /* who to become; target.change false: stay */
    sandbox_seccomp seccomp;  /* default SANDBOX_SECCOMP_DEFAULT */
    char *read_paths;         /* space-separated absolute paths, NULL: reads not restricted */
    char *write_paths;        /* the same for writes; NULL: none, unless seccomp is off */
    pid_t rpcd_pid;           /* the filter refuses signals to it (and its group); 0: none */
    bool own_pid_namespace;   /* the host has a PID namespace of its own (host_namespace.h) */
} sandbox_settings;

/*
 * Fills *out (all fields; free with sandbox_settings_free) from plugin's confinement keys, with
 * [rpcd]'s user and group as the default user and group. Resolves the user and group names.
 * config and plugin are borrowed. Returns 0, or -1 with a one-line message in error naming the
 * plugin (*out then holds nothing to free).
 */
int sandbox_settings_from_config(const rpcd_config *config, const cfg_plugin *plugin,
                                 sandbox_settings *out, char *error, size_t error_size);

void sandbox_settings_free(sandbox_settings *settings);

/*
 * Confines the calling process for good, in this order: resource limits, no_new_privs, the
 * Landlock rule set (skipped with a warning where the kernel has no Landlock), the user and
 * group, the seccomp filter. The process must have one thread only (ThreadSanitizer's own
 * aside): no_new_privs and Landlock bind the calling thread, and a thread started before would
 * escape them; threads started after inherit everything. Each step is checked; on failure the
 * process is half confined and must exit. Returns 0, or -1 with a one-line message in error.
 */
int sandbox_apply(const sandbox_settings *settings, char *error, size_t error_size);

/*
 * A one-line summary of settings for rpcd --check, for example "memory 1073741824, cpu 60 s,
 * files unlimited, processes unlimited, user nobody (65534:65534), seccomp default, read
 * everywhere, write /var/tmp". Always NUL-terminated; cut when out is too small. Returns the
 * length it needed, as snprintf does.
 */
size_t sandbox_describe(const sandbox_settings *settings, char *out, size_t size);

/*
 * The seccomp part of sandbox_apply (sandbox_filter.c), loaded last. Returns 0, or -1 with a
 * one-line message in error.
 */
int sandbox_filter_apply(const sandbox_settings *settings, char *error, size_t error_size);

/* The Landlock ABI version the kernel offers, 0 when it has none (or it is disabled). */
int sandbox_landlock_abi(void);

/*
 * What a kernel with Landlock ABI landlock_abi (0: none) cannot enforce of settings: the
 * index-th gap, as one line naming the plugin, the key and the ABI and Linux release that
 * would enforce it. Returns the length snprintf would (0: no such gap, the last one was before).
 * Gaps: a host without the seccomp filter can signal rpcd, unless apart (it runs as a user
 * neither rpcd's nor root, which the kernel itself keeps from signalling rpcd); without
 * Landlock, read_paths and write_paths, or (filtered) the closed writes; truncation (ABI 3) and
 * device ioctls (ABI 5) under write_paths; for a filtered host, the signal scope (ABI 6) that
 * keeps it from other hosts of its user and, unless apart, from rpcd's threads named by id
 * (the filter refuses every other way it can name on any kernel).
 */
size_t sandbox_unenforced(const sandbox_settings *settings, int landlock_abi, bool apart,
                          size_t index, char *out, size_t size);

/*
 * Logs a warning for each thing the running kernel cannot enforce for an isolated plugin of
 * config, naming the plugin and what is missing (sandbox_unenforced, and scheduler_slice_us
 * before Linux 6.12): rpcd promises no more than it enforces. At start-up, in --check and after
 * each reload.
 */
void sandbox_warn_unenforced(const rpcd_config *config);

#endif
