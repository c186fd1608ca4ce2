/* SPDX-License-Identifier: MIT */
/*
 * Fixture that does in its init what language runtimes and careless libraries do: takes over
 * SIGTERM, puts SIGPIPE back to its default, takes the real-time signal rpcd wakes its reader
 * with (the highest one with a handler) or the one of its grace period's timer (SIGRTMIN + 1), as
 * its config key take lists.
 */
#include <rpcd/plugin.h>

#include <signal.h>
#include <string.h>

static void on_signal(int number)
{
    (void)number;
}

/* A handler as runtimes install them: system calls it interrupts are restarted. */
static void take(int number)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(number, &action, NULL);
}

static int taker_init(rpcd_plugin *plugin, const rpcd_host_api *host, void **state, char *error,
                      size_t error_size)
{
    (void)plugin, (void)state, (void)error, (void)error_size;
    const char *what = host->config_get(plugin, "take");
    if (!what)
        return RPCD_OK;
    if (strstr(what, "sigterm"))
        take(SIGTERM);
    if (strstr(what, "sigpipe"))
        signal(SIGPIPE, SIG_DFL);
    if (strstr(what, "wake")) {
        for (int number = SIGRTMAX; number >= SIGRTMIN; number--) {
            struct sigaction current;
            if (sigaction(number, NULL, &current) == 0 && current.sa_handler != SIG_DFL &&
                current.sa_handler != SIG_IGN) {
                take(number);
                break;
            }
        }
    }
    if (strstr(what, "grace"))
        take(SIGRTMIN + 1);
    return RPCD_OK;
}

RPCD_PLUGIN_DEFINE("signal_taker", "1.0.0", taker_init, NULL);
