/* SPDX-License-Identifier: MIT */
/*
 * rpcd inspect: what one plugin says of itself and registers, without serving: loaded, its
 * init run with no config keys, its methods listed, then shut down, through the loader that
 * serving uses.
 */
#include "cli/cli.h"

#include <getopt.h>

/* The plugin's description and methods as one JSON object (new), or NULL. */
static json_t *inspect_json(const rpcd_runtime *runtime, const ld_about *about)
{
    json_t *methods = cli_methods_json(runtime);
    if (!methods)
        return NULL;
    return json_pack("{s:s,s:s,s:o,s:{s:I,s:I},s:o}", "path", about->path, "name", about->name,
                     "version", about->version ? json_string(about->version) : json_null(), "abi",
                     "major", (json_int_t)about->abi_major, "minor", (json_int_t)about->abi_minor,
                     "methods", methods);
}

static void inspect_text(const rpcd_runtime *runtime, const ld_about *about)
{
    fprintf(cli_output(),
            "plugin:  %s\nversion: %s\nabi:     %u.%u (this rpcd: %d.%d)\npath:    %s\n"
            "methods: %zu\n\n",
            about->name, about->version ? about->version : "-", about->abi_major, about->abi_minor,
            RPCD_ABI_MAJOR, RPCD_ABI_MINOR, about->path, reg_count(runtime->methods));
    cli_print_methods(runtime, cli_output());
}

int cli_inspect_main(int argc, char **argv)
{
    enum { OPT_JSON = 2000 };
    static const struct option options[] = {{"json", no_argument, NULL, OPT_JSON},
                                            {"insecure", no_argument, NULL, CLI_OPT_INSECURE},
                                            {"verbose", no_argument, NULL, 'v'},
                                            {"quiet", no_argument, NULL, 'q'},
                                            {NULL, 0, NULL, 0}};
    cli_source source = {.log_level = -1};
    bool as_json = false;
    int option;
    optind = 1;
    while ((option = getopt_long(argc, argv, "vq", options, NULL)) != -1) {
        if (option == OPT_JSON)
            as_json = true;
        else if (cli_source_option(&source, option, optarg) != 1) {
            fprintf(stderr, "rpcd inspect: try rpcd --help\n");
            return CLI_EXIT_USAGE;
        }
    }
    if (argc - optind != 1) {
        fprintf(stderr, "rpcd inspect: give one plugin file (try rpcd --help)\n");
        return CLI_EXIT_USAGE;
    }
    source.plugin_path = argv[optind];
    rpcd_runtime runtime;
    int status = cli_start(&source, &runtime);
    if (status != 0)
        return status;
    ld_about about;
    ld_about_at(runtime.plugins, 0, &about);
    if (as_json)
        status = cli_print_json(inspect_json(&runtime, &about));
    else
        inspect_text(&runtime, &about);
    rt_stop(&runtime);
    return status;
}
