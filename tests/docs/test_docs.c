/* SPDX-License-Identifier: MIT */
/*
 * The man pages against the code: every option `rpcd --help` prints is in rpcd(8); every key
 * the config parser knows is in rpcd.conf(5) with its range and default; and every key the page
 * lists, at both ends of the range it gives, is accepted by the parser (and refused past them).
 */
#include "config/config.h"

#include "base/log.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

enum { MAX_ENTRIES = 64 };

/* One key as a page lists it: "*name* = _VALUE_" and the indented lines below it. */
typedef struct page_key {
    char section[64]; /* "rpcd", "plugin NAME", "mcp" */
    char name[64];
    char text[2048]; /* the description, its lines joined with spaces */
} page_key;

static char *read_text(const char *path)
{
    FILE *file = fopen(path, "r");
    if (!file)
        fail_msg("cannot open %s", path);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    int c;
    while ((c = fgetc(file)) != EOF)
        fputc(c, out);
    fclose(file);
    fclose(out);
    return text;
}

static char *read_page(const char *page)
{
    const char *dir = getenv("RPCD_MAN_SOURCES");
    assert_non_null(dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.scd", dir, page);
    return read_text(path);
}

/*
 * Reads "*tool.*_METHOD_ = ..." as "tool.METHOD": the name in bold, then an optional
 * placeholder in italics. Returns false when the line does not introduce a key.
 */
static bool parse_key_line(const char *line, char *name, size_t size)
{
    if (line[0] != '*')
        return false;
    const char *end = strchr(line + 1, '*');
    if (!end || end == line + 1)
        return false;
    int length = snprintf(name, size, "%.*s", (int)(end - line - 1), line + 1);
    const char *at = end + 1;
    if (at[0] == '_') {
        const char *close = strchr(at + 1, '_');
        if (!close)
            return false;
        snprintf(name + length, size - (size_t)length, "%.*s", (int)(close - at - 1), at + 1);
        at = close + 1;
    }
    return strncmp(at, " = ", 3) == 0 &&
           strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_.") == strlen(name);
}

/* The keys rpcd.conf(5) lists under its "## [SECTION]" headings. */
static size_t page_keys(const char *text, page_key *keys, size_t capacity)
{
    char section[64] = "";
    size_t count = 0;
    page_key *current = NULL;
    for (const char *line = text; *line;) {
        const char *newline = strchr(line, '\n');
        size_t length = newline ? (size_t)(newline - line) : strlen(line);
        char copy[1024];
        snprintf(copy, sizeof copy, "%.*s", (int)length, line);
        line += length + (newline ? 1 : 0);

        char name[64];
        if (copy[0] == '#') {
            section[0] = '\0';
            current = NULL;
            char *open = strchr(copy, '[');
            char *close = open ? strchr(open, ']') : NULL;
            if (strncmp(copy, "## [", 4) == 0 && close)
                snprintf(section, sizeof section, "%.*s", (int)(close - open - 1), open + 1);
        } else if (copy[0] == '\t' && current) {
            size_t used = strlen(current->text);
            snprintf(current->text + used, sizeof current->text - used, " %s", copy + 1);
        } else if (section[0] && parse_key_line(copy, name, sizeof name)) {
            assert_true(count < capacity);
            current = &keys[count++];
            snprintf(current->section, sizeof current->section, "%s", section);
            snprintf(current->name, sizeof current->name, "%s", name);
            current->text[0] = '\0';
        } else {
            current = NULL;
        }
    }
    return count;
}

static const page_key *find_page_key(const page_key *keys, size_t count, const cfg_key *key)
{
    for (size_t i = 0; i < count; i++)
        if (strcmp(keys[i].section, key->section) == 0 && strcmp(keys[i].name, key->name) == 0)
            return &keys[i];
    return NULL;
}

/* Loads a config holding one key; returns what cfg_load_string returned, error in error. */
static int load_one(const char *section, const char *name, const char *value, char *error,
                    size_t error_size)
{
    char text[512];
    bool plugin = strncmp(section, "plugin ", 7) == 0;
    snprintf(text, sizeof text, "[%s]\n%s%s = %s\n", section,
             plugin && strcmp(name, "path") != 0 ? "path = x.so\n" : "", name, value);
    rpcd_config *config = NULL;
    int status = cfg_load_string(text, "/etc/rpcd/rpcd.conf", &config, error, error_size);
    cfg_free(config);
    return status;
}

/* Every option --help shows is in rpcd(8), in bold: *-c*, *--config*. */
static void test_help_options_in_rpcd_8(void **state)
{
    (void)state;
    const char *binary = getenv("RPCD_BINARY");
    assert_non_null(binary);
    char command[4096];
    snprintf(command, sizeof command, "'%s' --help", binary);
    FILE *help = popen(command, "r");
    assert_non_null(help);
    char *page = read_page("rpcd.8");
    char line[512];
    size_t options = 0, commands = 0;
    while (fgets(line, sizeof line, help)) {
        const char *at = line + strspn(line, " ");
        /* "  rpcd call SOURCE ...": a one-shot command, in the synopsis as *rpcd* *call*. */
        if (at > line && strncmp(at, "rpcd ", 5) == 0) {
            char bold[64];
            snprintf(bold, sizeof bold, "*rpcd* *%.*s*", (int)strcspn(at + 5, " \n"), at + 5);
            if (!strstr(page, bold))
                fail_msg("rpcd --help shows %s, which rpcd(8) does not list", bold);
            commands++;
            continue;
        }
        if (at == line || at[0] != '-')
            continue;
        /* "-c, --config=FILE  read FILE": the options end where two spaces begin. */
        const char *end = strstr(at, "  ");
        assert_non_null(end);
        while (at < end) {
            size_t length = strspn(at, "-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");
            if (length > 1 && at[0] == '-') {
                char bold[64];
                snprintf(bold, sizeof bold, "*%.*s*", (int)length, at);
                if (!strstr(page, bold))
                    fail_msg("rpcd --help shows %.*s, which rpcd(8) does not list as %s",
                             (int)length, at, bold);
                options++;
            }
            at += length ? length : 1;
            at += strcspn(at, ",-");
            at += strspn(at, ", ");
            if (at > end)
                break;
        }
    }
    assert_int_equal(pclose(help), 0);
    free(page);
    assert_true(options >= 7);     /* -c, --config, --check, --insecure, -v, ... */
    assert_int_equal(commands, 5); /* call, list, inspect, new, ctl */
}

/* Every key the parser knows is in rpcd.conf(5), under its section, with range and default. */
static void test_parser_keys_in_rpcd_conf_5(void **state)
{
    (void)state;
    char *page = read_page("rpcd.conf.5");
    static page_key listed[MAX_ENTRIES];
    size_t count = page_keys(page, listed, MAX_ENTRIES);
    assert_true(cfg_key_count() > 0);
    for (size_t i = 0; i < cfg_key_count(); i++) {
        const cfg_key *key = cfg_key_at(i);
        const page_key *entry = find_page_key(listed, count, key);
        if (!entry)
            fail_msg("the parser accepts %s in [%s], which rpcd.conf(5) does not list", key->name,
                     key->section);
        char expected[128];
        if (key->type == CFG_KEY_SIZE) {
            snprintf(expected, sizeof expected, "from %zu to %zu", key->minimum, key->maximum);
            if (!strstr(entry->text, expected))
                fail_msg("rpcd.conf(5) does not give %s's range as '%s'", key->name, expected);
            snprintf(expected, sizeof expected, "Default: %zu", key->default_value);
            if (key->default_value && !strstr(entry->text, expected))
                fail_msg("rpcd.conf(5) does not give %s's default as '%s'", key->name, expected);
        } else if (key->type == CFG_KEY_BOOL) {
            snprintf(expected, sizeof expected, "Default: *%s*",
                     key->default_value ? "true" : "false");
            if (!strstr(entry->text, expected))
                fail_msg("rpcd.conf(5) does not give %s's default as '%s'", key->name, expected);
        } else if (key->type == CFG_KEY_LOG_LEVEL) {
            const char *word = strstr(entry->text, "Default: *");
            assert_non_null(word);
            char level[32];
            int parsed;
            assert_int_equal(sscanf(word, "Default: *%31[a-z]*", level), 1);
            assert_int_equal(log_level_parse(level, &parsed), 0);
            assert_int_equal(parsed, (int)key->default_value);
        } else if (key->type == CFG_KEY_LOG_FORMAT) {
            const char *word = strstr(entry->text, "Default: *");
            assert_non_null(word);
            char format[32];
            int parsed;
            assert_int_equal(sscanf(word, "Default: *%31[a-z]*", format), 1);
            assert_int_equal(log_format_parse(format, &parsed), 0);
            assert_int_equal(parsed, (int)key->default_value);
        }
    }
    free(page);
}

/*
 * Every key rpcd.conf(5) lists is accepted in its section, with a value of its kind; where the
 * page gives a range "from A to B", A and B are accepted and A - 1 and B + 1 refused.
 */
static void test_page_keys_accepted(void **state)
{
    (void)state;
    char *page = read_page("rpcd.conf.5");
    static page_key listed[MAX_ENTRIES];
    size_t count = page_keys(page, listed, MAX_ENTRIES);
    assert_true(count >= cfg_key_count());
    char error[512];
    for (size_t i = 0; i < count; i++) {
        const page_key *entry = &listed[i];
        unsigned long long low = 0, high = 0;
        const char *range = strstr(entry->text, "from ");
        while (range && sscanf(range, "from %llu to %llu", &low, &high) != 2)
            range = strstr(range + 1, "from ");
        if (range) {
            char value[32];
            for (int end = 0; end < 2; end++) {
                unsigned long long inside = end ? high : low;
                snprintf(value, sizeof value, "%llu", inside);
                if (load_one(entry->section, entry->name, value, error, sizeof error) != 0)
                    fail_msg("rpcd.conf(5) lists %s = %s, which the parser refuses: %s",
                             entry->name, value, error);
                if (!end && low == 0)
                    continue;
                snprintf(value, sizeof value, "%llu", end ? high + 1 : low - 1);
                if (load_one(entry->section, entry->name, value, error, sizeof error) == 0)
                    fail_msg("the parser accepts %s = %s, outside the range rpcd.conf(5) gives",
                             entry->name, value);
            }
            continue;
        }
        /* A value of each kind the page's keys take: one of them is the key's own. */
        static const char *const values[] = {"x.so",    "true", "info",      "all",
                                             "default", "/",    "portable",  "process",
                                             "text",    "10/s", "annotation"};
        bool accepted = false;
        for (size_t v = 0; v < sizeof values / sizeof values[0] && !accepted; v++)
            accepted = load_one(entry->section, entry->name, values[v], error, sizeof error) == 0;
        if (!accepted)
            fail_msg("rpcd.conf(5) lists %s in [%s], which the parser refuses: %s", entry->name,
                     entry->section, error);
    }
    free(page);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_options_in_rpcd_8),
        cmocka_unit_test(test_parser_keys_in_rpcd_conf_5),
        cmocka_unit_test(test_page_keys_accepted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
