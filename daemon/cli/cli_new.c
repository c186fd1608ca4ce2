/* SPDX-License-Identifier: MIT */
/*
 * rpcd new: the command line, the checks of the project's name and language, and what to do
 * next; cli_new_write.c writes the files.
 */
#include "cli/cli_new.h"

#include "cli/cli.h"
#include "methods/reserved_names.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

/* A language, and the commands that build and test its project as written. */
typedef struct new_language {
    const char *name;
    const char *next;         /* the commands, up to the plugin's name */
    const char *next_of_name; /* NULL: they do not name it; else what follows the name */
} new_language;

static const new_language languages[] = {
    {"c", "meson setup build && meson compile -C build && meson test -C build", NULL},
    {"cpp", "meson setup build && meson compile -C build && meson test -C build", NULL},
    {"rust", "cargo build --release --offline && cargo test --release --offline", NULL},
    {"go", "sh build.sh && sh tests/call.sh ./", ".so"},
};

/*
 * Words a name may not be: Rust's keywords (Cargo refuses them as package names), the crates of
 * Rust's standard library, the binding's own crate and package (rpcd), and the names Cargo keeps
 * for its build directories.
 */
static const char *const reserved_words[] = {
    "abstract", "alloc", "as",       "async",       "await",  "become",     "box",     "break",
    "build",    "const", "continue", "core",        "crate",  "deps",       "do",      "dyn",
    "else",     "enum",  "examples", "extern",      "false",  "final",      "fn",      "for",
    "if",       "impl",  "in",       "incremental", "let",    "loop",       "macro",   "match",
    "mod",      "move",  "mut",      "override",    "priv",   "proc_macro", "pub",     "ref",
    "return",   "rpcd",  "self",     "static",      "std",    "struct",     "super",   "test",
    "trait",    "true",  "try",      "type",        "typeof", "unsafe",     "unsized", "use",
    "virtual",  "where", "while",    "yield",
};

static const new_language *find_language(const char *name)
{
    for (size_t i = 0; i < sizeof languages / sizeof languages[0]; i++)
        if (strcmp(languages[i].name, name) == 0)
            return &languages[i];
    return NULL;
}

/* Why name is refused by its characters, or NULL: the rule said once, whatever broke it. */
static const char *spelling_problem(const char *name)
{
    size_t length = strlen(name);
    if (length == 0)
        return "it is empty";
    if (length > CLI_NEW_NAME_MAX)
        return "it is longer than 32 bytes";
    if (strchr(name, '/'))
        return "it holds a '/'";
    if (strstr(name, ".."))
        return "it holds '..'";
    if (name[0] < 'a' || name[0] > 'z')
        return "it does not begin with a lowercase letter";
    if (name[strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_")] != '\0')
        return "it holds a byte other than a lowercase letter, a digit or '_'";
    return NULL;
}

int cli_new_check_name(const char *name, char *error, size_t error_size)
{
    const char *why = spelling_problem(name);
    for (size_t i = 0; !why && i < sizeof reserved_words / sizeof reserved_words[0]; i++)
        if (strcmp(name, reserved_words[i]) == 0)
            why = "it is a reserved word (of Rust, Cargo or rpcd)";
    char method[CLI_NEW_NAME_MAX + 16];
    if (!why) {
        /* The tool's method: a name such as "rpc" would make one JSON-RPC reserves. */
        snprintf(method, sizeof method, "%s.greet", name);
        why = reserved_name_reason(method, strlen(method));
    }
    if (!why)
        return 0;
    snprintf(error, error_size,
             "'%.*s' cannot name a plugin: %s (use 1 to %d lowercase letters, digits and _, "
             "a letter first)",
             64, name, why, CLI_NEW_NAME_MAX);
    return -1;
}

/* What the command line asks for. */
typedef struct new_asked {
    const char *name;
    const char *language;
    const char *dir; /* NULL: the name, in the working directory */
} new_asked;

/* Reads the options of rpcd new into *out. Returns 0, -1 after --help, or an exit status. */
static int parse_new(int argc, char **argv, new_asked *out)
{
    enum { OPT_LANG = 3000, OPT_DIR };
    static const struct option options[] = {
        {"lang", required_argument, NULL, OPT_LANG},
        {"dir", required_argument, NULL, OPT_DIR},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *out = (new_asked){NULL, "c", NULL};
    int option;
    while ((option = getopt_long(argc, argv, "h", options, NULL)) != -1) {
        switch (option) {
        case OPT_LANG: out->language = optarg; break;
        case OPT_DIR: out->dir = optarg; break;
        case 'h': cli_new_usage(stdout); return -1;
        default: cli_new_usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "rpcd new: give one NAME (try rpcd new --help)\n");
        return CLI_EXIT_USAGE;
    }
    out->name = argv[optind];
    return 0;
}

int cli_new_main(int argc, char **argv)
{
    new_asked asked;
    int status = parse_new(argc, argv, &asked);
    if (status != 0)
        return status < 0 ? CLI_EXIT_OK : status;
    char error[1024];
    if (cli_new_check_name(asked.name, error, sizeof error) != 0) {
        fprintf(stderr, "rpcd new: %s\n", error);
        return CLI_EXIT_USAGE;
    }
    const new_language *language = find_language(asked.language);
    if (!language) {
        fprintf(stderr, "rpcd new: unknown language '%.*s' (c, cpp, rust or go)\n", 64,
                asked.language);
        return CLI_EXIT_USAGE;
    }
    const char *dir = asked.dir ? asked.dir : asked.name;
    int written = cli_new_write(dir, asked.name, language->name, error, sizeof error);
    if (written < 0) {
        fprintf(stderr, "rpcd new: %s\n", error);
        return CLI_NEW_EXIT_CANNOT_CREATE;
    }
    printf(
        "rpcd new: wrote %d files of the %s plugin %s in %s; build and test it with\n  cd %s && ",
        written, language->name, asked.name, dir, dir);
    if (language->next_of_name)
        printf("%s%s%s\n", language->next, asked.name, language->next_of_name);
    else
        printf("%s\n", language->next);
    return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_SOFTWARE;
}

void cli_new_usage(FILE *stream)
{
    fprintf(stream,
            "\n"
            "A plugin project to start from (nothing loaded; the templates are in rpcd):\n"
            "  rpcd new NAME [--lang=LANG] [--dir=PATH]\n"
            "      --lang=LANG        c (default), cpp, rust or go\n"
            "      --dir=PATH         write into PATH, made or empty (default ./NAME)\n"
            "NAME: 1 to %d lowercase letters, digits and _, a letter first. Exit status of\n"
            "new: 0 written, 64 bad usage or name, 73 the directory exists and is not empty,\n"
            "or cannot be written.\n",
            CLI_NEW_NAME_MAX);
}
