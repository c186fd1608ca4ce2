/* SPDX-License-Identifier: MIT */
/*
 * rpcd: command line, start-up, serve stdin/stdout, exit status. Everything else is in the
 * core library, which the tests link directly.
 */
#include "cli/cli.h"
#include "cli/cli_new.h"
#include "base/crash_report.h"
#include "calls/grace.h"
#include "isolation/sandbox.h"
#include "isolation/host.h"
#include "base/log.h"
#include "base/privileges.h"
#include "serve/reload.h"
#include "serve/runtime.h"
#include "serve/server.h"
#include "base/signals.h"
#include "base/stop_signals.h"
#include "base/clock.h"
#include "base/metrics.h"
#include "control/control.h"
#include "control/control_socket.h"
#include "wire/transport_stdio.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef RPCD_DEFAULT_CONFIG
#define RPCD_DEFAULT_CONFIG "/etc/rpcd/rpcd.conf"
#endif
#ifndef RPCD_VERSION
#define RPCD_VERSION "unknown"
#endif

/* sysexits.h values, spelled out: the exit status is part of rpcd's interface. */
enum {
    EXIT_USAGE = 64,
    EXIT_SOFTWARE = 70,
    EXIT_IO_ERROR = 74,
    EXIT_CONFIG = 78,
};

/*
 * The server a stop signal stops; NULL while starting up and once serving is over. A handler
 * counts itself in handlers_inside before it reads the pointer, and main waits until none is
 * inside before freeing the server: a stop must never run on a server being freed.
 */
static _Atomic(server *) running_server;
static atomic_int handlers_inside;
static atomic_bool stop_taken;

/*
 * SIGTERM and SIGINT are taken by a handler, not by a thread of their own that waits for them:
 * a process with a second thread pays for it on every round trip, in the kernel and in the C
 * library (bench/README.md, "Figures behind design choices"). srv_stop is async-signal-safe for
 * this. The first signal asks for a graceful stop; the second (or the first during start-up) ends
 * the process at once.
 */
static void on_stop_signal(int number)
{
    int saved_errno = errno;
    atomic_fetch_add(&handlers_inside, 1);
    server *srv = atomic_load(&running_server);
    if (atomic_exchange(&stop_taken, true) || !srv) {
        log_signal(LOG_WARNING, number, "exiting at once");
        _exit(128 + number);
    }
    log_signal(LOG_INFO, number, "stopping (a second one exits at once)");
    srv_stop(srv);
    atomic_fetch_sub(&handlers_inside, 1);
    errno = saved_errno;
}

/*
 * Without SA_RESTART: a read the signal interrupts returns EINTR. With it, a runtime that defers
 * signals to the end of a system call (ThreadSanitizer's does) restarts the read, which then
 * waits for input before the handler ever runs. Each handler runs with both signals blocked, so
 * the second waits for the first to finish.
 */
static int take_stop_signals(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_stop_signal;
    /* The signal may land on a thread of a language runtime (Go's), whose stack is too small for
     * a C handler: there it runs on the stack the runtime set aside for signals. */
    action.sa_flags = SA_ONSTACK;
    stop_signals_fill(&action.sa_mask);
    if (sigaction(SIGTERM, &action, NULL) != 0 || sigaction(SIGINT, &action, NULL) != 0)
        return -1;
    sig_watch(SIGTERM);
    sig_watch(SIGINT);
    /* A mask inherited from the parent must not keep them away. */
    return pthread_sigmask(SIG_UNBLOCK, &action.sa_mask, NULL) == 0 ? 0 : -1;
}

static void usage(FILE *stream)
{
    fprintf(stream,
            "Usage: rpcd [OPTION]...\n"
            "  or:  rpcd call|list|inspect|new ... (one-shot commands, below)\n"
            "Serve JSON-RPC 2.0 over stdin/stdout (one message per line) with the methods of\n"
            "the plugins listed in the config file.\n"
            "\n"
            "  -c, --config=FILE  read FILE (default %s)\n"
            "      --check        check the config and load every plugin, then exit\n"
            "      --insecure     load the config and plugins even when others could change them\n"
            "  -v, --verbose      log more (debug); overrides log_level\n"
            "  -q, --quiet        log errors only; overrides log_level\n"
            "  -h, --help         show this help and exit\n"
            "  -V, --version      show the version and exit\n"
            "\n"
            "Exit status: 0 served until end of input (or --check passed), 64 bad usage,\n"
            "74 stdin or stdout closed or failing, 78 config or plugin error, 70 internal\n"
            "failure.\n",
            RPCD_DEFAULT_CONFIG);
    cli_usage(stream);
    cli_new_usage(stream);
    fprintf(stream,
            "\nManuals: rpcd(8) (this command, signals, files), rpcd.conf(5) (every config\n"
            "key), rpcd-plugin(3) (writing a plugin): man rpcd, man rpcd.conf, man "
            "rpcd-plugin.\n");
}

/* What the command line asks for. */
typedef struct command_line {
    const char *config_path;
    int log_level; /* -1: the config's */
    bool check_only;
    bool insecure;
} command_line;

/*
 * Reads the options into *out. Returns 0 to go on, or -1 when rpcd is to exit with *exit_status
 * at once (--help, --version, bad usage).
 */
static int parse_command_line(int argc, char **argv, command_line *out, int *exit_status)
{
    static const struct option options[] = {
        {"config", required_argument, NULL, 'c'}, {"check", no_argument, NULL, 'C'},
        {"insecure", no_argument, NULL, 'I'},     {"verbose", no_argument, NULL, 'v'},
        {"quiet", no_argument, NULL, 'q'},        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},      {NULL, 0, NULL, 0},
    };
    *out = (command_line){RPCD_DEFAULT_CONFIG, -1, false, false};
    *exit_status = 0;
    int option;
    while ((option = getopt_long(argc, argv, "c:vqhV", options, NULL)) != -1) {
        switch (option) {
        case 'c': out->config_path = optarg; break;
        case 'C': out->check_only = true; break;
        case 'I': out->insecure = true; break;
        case 'v': out->log_level = LOG_DEBUG; break;
        case 'q': out->log_level = LOG_ERROR; break;
        case 'h': usage(stdout); return -1;
        case 'V':
            printf("rpcd %s (plugin ABI %d.%d)\n", RPCD_VERSION, RPCD_ABI_MAJOR, RPCD_ABI_MINOR);
            return -1;
        default:
            usage(stderr);
            *exit_status = EXIT_USAGE;
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "rpcd: unexpected argument '%s' (try --help)\n", argv[optind]);
        *exit_status = EXIT_USAGE;
        return -1;
    }
    return 0;
}

/*
 * Every handler before the first plugin loads: what a plugin's init changes is then seen
 * (sig_check_after_init), and a runtime that chains (Go) keeps ours for what is not its. Returns
 * 0, or -1 with errno.
 */
static int take_signals(void)
{
    if (take_stop_signals() != 0 || sig_take_others() != 0 || crash_report_install() != 0)
        return -1;
    return grace_install();
}

/* The exit status for how serving ended (enum srv_result). */
static int exit_status_of(int result)
{
    switch (result) {
    case SRV_DONE:
    case SRV_STOPPED:
    case SRV_STOPPED_EARLY: return 0;
    case SRV_OUTPUT_FAILED:
    case SRV_INPUT_FAILED: return EXIT_IO_ERROR;
    default: return EXIT_SOFTWARE;
    }
}

/* The deadlines of plugin's calls, for --check: "timeout_ms 300 ms, a.wait 100 ms", or "none". */
static void describe_timeouts(const cfg_plugin *plugin, char *text, size_t size)
{
    size_t used = 0;
    if (plugin->timeout_ms)
        used += (size_t)snprintf(text, size, "timeout_ms %zu ms", plugin->timeout_ms);
    else
        used += (size_t)snprintf(text, size, "timeout_ms none");
    for (size_t i = 0; i < plugin->timeout_count && used < size; i++)
        used += (size_t)snprintf(text + used, size - used, ", %s %s ms", plugin->timeouts[i].key,
                                 plugin->timeouts[i].value);
}

/* --check: each drop-in, read or skipped (and why). */
static void report_dropins(const rpcd_config *config)
{
    for (size_t i = 0; i < config->dropin_count; i++) {
        if (config->dropin_skipped[i])
            log_message(LOG_INFO, "drop-in %s: skipped: %s", config->dropins[i],
                        config->dropin_skipped[i]);
        else
            log_message(LOG_INFO, "drop-in %s: loaded", config->dropins[i]);
    }
}

/* --check: each plugin loaded, its isolation and deadlines, and what confines an isolated one
 * and the time slice its host asks for; a plugin skipped (not required) is not one of them. */
static void report_check(const rpcd_runtime *runtime)
{
    const rpcd_config *config = runtime->config;
    report_dropins(config);
    for (size_t i = 0; i < config->plugin_count; i++) {
        const cfg_plugin *plugin = &config->plugins[i];
        if (!ld_instance(runtime->plugins, plugin->name))
            continue;
        char timeouts[512];
        describe_timeouts(plugin, timeouts, sizeof timeouts);
        if (plugin->isolation != CFG_ISOLATION_PROCESS) {
            log_message(LOG_INFO, "plugin %s: isolation = none; %s", plugin->name, timeouts);
            continue;
        }
        sandbox_settings sandbox;
        char text[1024] = "";
        if (sandbox_settings_from_config(config, plugin, &sandbox, text, sizeof text) == 0) {
            sandbox_describe(&sandbox, text, sizeof text);
            sandbox_settings_free(&sandbox);
        }
        char slice[32] = "the kernel's";
        if (plugin->scheduler_slice_us)
            snprintf(slice, sizeof slice, "%zu us", plugin->scheduler_slice_us);
        log_message(LOG_INFO,
                    "plugin %s: isolation = process; confined: %s; %s; scheduler slice %s",
                    plugin->name, text, timeouts, slice);
    }
}

/* What the reader does before each read of the input. */
typedef struct before_read_hooks {
    reloader *reloads;
    server *srv;
    control *ctl; /* the control socket, whose thread starts with its first peer; or NULL */
} before_read_hooks;

/* Starts reloading after a first SIGHUP; takes a generation a reload published meanwhile. */
static void before_read(void *context)
{
    before_read_hooks *hooks = context;
    if (hooks->reloads)
        rl_before_read(hooks->reloads);
    srv_refresh(hooks->srv);
    ctl_before_read(hooks->ctl);
}

/* After a reload that changed what MCP lists: the client is told, list by list. */
static void lists_changed(void *context, const rl_result *result)
{
    if (result->tools_changed)
        srv_list_changed(context, MCP_LIST_OF_TOOLS);
    if (result->prompts_changed)
        srv_list_changed(context, MCP_LIST_OF_PROMPTS);
    if (result->resources_changed)
        srv_list_changed(context, MCP_LIST_OF_RESOURCES);
}

/*
 * Serves the methods of runtime over input_fd and output_fd until the end of input or a stop,
 * the server reachable from the stop signals meanwhile. Returns the exit status, or ends the
 * process with it when calls still run in plugin code.
 */
static int serve(const rpcd_runtime *runtime, int input_fd, int output_fd)
{
    srv_options serve_options = rt_serve_options(runtime);
    /* A stop's grace period ends on time even while a handler holds the reading thread. */
    serve_options.keep_grace_period = true;
    serve_options.exit_stopped = 0;
    serve_options.exit_output_failed = EXIT_IO_ERROR;
    stdio_transport *transport = NULL;
    server *srv = NULL;
    if (stdio_new(input_fd, output_fd, &transport) == 0) {
        serve_options.stop_reading = stdio_stop_reading;
        serve_options.stop_reading_context = transport;
        serve_options.output_closed = stdio_output_closed;
        serve_options.output_closed_context = transport;
    }
    if (!transport ||
        srv_new(runtime->methods, &serve_options, stdio_write, transport, &srv) != 0) {
        log_message(LOG_ERROR, "cannot start serving: out of memory or file descriptors");
        stdio_free(transport);
        return EXIT_SOFTWARE;
    }
    atomic_store(&running_server, srv);
    /* Reloads only while serving: a reload publishes to the server's generations. */
    reloader *reloads = NULL;
    before_read_hooks hooks = {NULL, srv, NULL};
    if (rl_start(runtime, lists_changed, srv, &reloads) == 0)
        hooks.reloads = reloads;
    else
        log_message(LOG_WARNING, "cannot reload on SIGHUP (no descriptor or memory): %s",
                    strerror(errno));
    /* The control socket ([rpcd] control_socket): refused at start when it cannot be made. */
    control *ctl = NULL;
    char error[1024];
    ctl_target target = {runtime, srv, reloads, clock_now_ms()};
    if (ctl_start(&target, &ctl, error, sizeof error) != 0) {
        log_message(LOG_ERROR, "%s", error);
        rl_stop(reloads);
        atomic_store(&running_server, NULL);
        while (atomic_load(&handlers_inside) > 0)
            sched_yield();
        srv_free(srv);
        stdio_free(transport);
        return EXIT_CONFIG;
    }
    hooks.ctl = ctl;
    if (reloads || ctl)
        stdio_set_before_read(transport, before_read, &hooks);
    int status = exit_status_of(srv_run(srv, stdio_read, transport));
    ctl_stop(ctl);
    rl_stop(reloads);
    if (!srv_finished(srv)) {
        /* Calls still run inside plugin code: unloading it now would pull the code from under
         * them. What finished has been written; leave without tearing anything down. */
        _exit(status);
    }
    atomic_store(&running_server, NULL);
    while (atomic_load(&handlers_inside) > 0)
        sched_yield();
    srv_free(srv);
    stdio_free(transport);
    return status;
}

/* The one-shot command argv[1] names, run; -1 when it names none. */
static int run_subcommand(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int argc, char **argv);
    } commands[] = {
        {"call", cli_call_main}, {"list", cli_list_main}, {"inspect", cli_inspect_main},
        {"new", cli_new_main},   {"ctl", cli_ctl_main},
    };
    for (size_t i = 0; argc > 1 && i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    return -1;
}

int main(int argc, char **argv)
{
    command_line asked;
    /* A plugin host started by rpcd itself, for a plugin with isolation = process. */
    if (argc == 2 && strcmp(argv[1], ISO_HOST_ARGUMENT) == 0)
        return iso_host_main();
    int status = run_subcommand(argc, argv);
    if (status >= 0)
        return status;
    if (parse_command_line(argc, argv, &asked, &status) != 0)
        return status;
    char error[1024];
    /* Before any plugin runs: no process of rpcd's user (a plugin host among them) may open
     * rpcd's descriptors or memory through /proc, nor ptrace it. */
    if (priv_not_dumpable(error, sizeof error) != 0) {
        log_message(LOG_ERROR, "%s", error);
        return EXIT_SOFTWARE;
    }
    if (take_signals() != 0) {
        log_message(LOG_ERROR, "cannot set up signal handling: %s", strerror(errno));
        return EXIT_SOFTWARE;
    }
    int input_fd, output_fd;
    int taken = stdio_take_over(&input_fd, &output_fd, error, sizeof error);
    if (taken != STDIO_OK) {
        log_message(LOG_ERROR, "%s", error);
        return taken == STDIO_CLOSED ? EXIT_IO_ERROR : EXIT_SOFTWARE;
    }

    rpcd_runtime runtime;
    rt_flags flags = {asked.log_level, asked.insecure, false, true};
    if (rt_start(asked.config_path, &flags, &runtime, error, sizeof error) != 0) {
        log_message(LOG_ERROR, "%s", error);
        return EXIT_CONFIG;
    }
    sandbox_warn_unenforced(runtime.config);
    ctl_socket control_settings;
    if (asked.check_only &&
        ctl_socket_settings(runtime.config, &control_settings, error, sizeof error) < 0) {
        /* The control socket's mode, owner and group, as serving would read them. */
        log_message(LOG_ERROR, "%s", error);
        status = EXIT_CONFIG;
    } else if (asked.check_only) {
        ctl_socket_close(&control_settings);
        report_check(&runtime);
        log_message(LOG_INFO, "config %s is valid", asked.config_path);
    } else
        status = serve(&runtime, input_fd, output_fd);
    rt_stop(&runtime);
    mx_release(); /* after every registry that held a series */
    return status;
}
