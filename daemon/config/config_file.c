/* SPDX-License-Identifier: MIT */
/*
 * The config file and its drop-ins: each opened once by the StrictModes walk, read from that
 * descriptor, and refused when it is too large or holds a NUL byte, before config.c gives the
 * text its meaning.
 */
#include "config/config.h"

#include "base/file_safety.h"
#include "base/log.h"

#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Reads the whole file from fd into *text (new, NUL-terminated), refusing more than
 * CFG_MAX_FILE_BYTES before reading them, and NUL bytes, which would end the text early.
 */
static int read_text(int fd, const char *path, char **text, char *error, size_t error_size)
{
    struct stat info;
    if (fstat(fd, &info) != 0) {
        snprintf(error, error_size, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    if (info.st_size > CFG_MAX_FILE_BYTES) {
        snprintf(error, error_size,
                 "%s: cannot read: %lld bytes, more than the %d a config may have", path,
                 (long long)info.st_size, CFG_MAX_FILE_BYTES);
        return -1;
    }
    /* One byte more than the limit: a file that grew past it since fstat is noticed. */
    size_t capacity = (size_t)info.st_size + 2, length = 0;
    char *buffer = malloc(capacity);
    while (buffer) {
        if (length + 1 == capacity) {
            if (length > CFG_MAX_FILE_BYTES)
                break;
            capacity =
                capacity * 2 < CFG_MAX_FILE_BYTES + 2 ? capacity * 2 : CFG_MAX_FILE_BYTES + 2;
            char *grown = realloc(buffer, capacity);
            if (!grown) {
                free(buffer);
                buffer = NULL;
                break;
            }
            buffer = grown;
        }
        ssize_t n = read(fd, buffer + length, capacity - 1 - length);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(error, error_size, "%s: cannot read: %s", path, strerror(errno));
            free(buffer);
            return -1;
        }
        if (n == 0)
            break;
        length += (size_t)n;
    }
    if (!buffer) {
        snprintf(error, error_size, "%s: out of memory", path);
        return -1;
    }
    if (length > CFG_MAX_FILE_BYTES) {
        snprintf(error, error_size, "%s: cannot read: more than the %d bytes a config may have",
                 path, CFG_MAX_FILE_BYTES);
        free(buffer);
        return -1;
    }
    const char *nul = memchr(buffer, '\0', length);
    if (nul) {
        int line = 1;
        for (const char *at = buffer; at < nul; at++)
            line += *at == '\n';
        snprintf(error, error_size, "%s:%d: NUL byte (a config is text)", path, line);
        free(buffer);
        return -1;
    }
    buffer[length] = '\0';
    *text = buffer;
    return 0;
}

/* Opens path by the StrictModes walk and reads it whole into *text (new). */
static int read_file(const char *path, bool check, char **text, char *error, size_t error_size)
{
    int fd;
    char reason[512];
    int opened = fsafe_open(path, check, &fd, reason, sizeof reason);
    if (opened != 0) {
        snprintf(error, error_size, "%s: %s%s", path,
                 opened == FSAFE_ERR_UNSAFE ? "" : "cannot read: ", reason);
        return -1;
    }
    int status = read_text(fd, path, text, error, error_size);
    close(fd);
    return status;
}

int cfg_list_dropin(rpcd_config *config, const char *file_name)
{
    size_t count = config->dropin_count + 1;
    char **files = realloc(config->dropins, count * sizeof *files);
    if (files)
        config->dropins = files;
    char **skipped = files ? realloc(config->dropin_skipped, count * sizeof *skipped) : NULL;
    if (skipped)
        config->dropin_skipped = skipped;
    char *file = skipped ? strdup(file_name) : NULL;
    if (!file)
        return -1;
    files[config->dropin_count] = file;
    skipped[config->dropin_count] = NULL;
    config->dropin_count = count;
    return 0;
}

int cfg_skip_dropin(rpcd_config *config, const char *file_name, const char *error)
{
    size_t length = strlen(file_name);
    const char *reason = error;
    char *why = NULL;
    if (strncmp(error, file_name, length) == 0 && error[length] == ':') {
        reason = error + length + 1;
        reason += strspn(reason, " ");
    }
    bool numbered = reason != error && reason[0] >= '0' && reason[0] <= '9';
    if (numbered ? asprintf(&why, "line %s", reason) < 0 : !(why = strdup(reason)))
        return -1;
    if (cfg_list_dropin(config, file_name) != 0) {
        free(why);
        return -1;
    }
    config->dropin_skipped[config->dropin_count - 1] = why;
    return 0;
}

static bool is_dropin_name(const char *path)
{
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    size_t length = strlen(name);
    return length > 5 && strcmp(name + length - 5, ".conf") == 0;
}

/* Where glob met a directory it could not read: a missing one is no drop-in, not an error. */
static int glob_failed(const char *path, int error_number)
{
    (void)path;
    return error_number != ENOENT && error_number != ENOTDIR;
}

/*
 * Reads the drop-ins config->include matches into config, in lexical order (glob sorts in the C
 * locale's order, which rpcd never changes): each through the same walk as the config file, so
 * that every directory on the way to it is judged too.
 */
static int add_dropins(rpcd_config *config, bool check, char *error, size_t error_size)
{
    glob_t found;
    int matched = glob(config->include, 0, glob_failed, &found);
    if (matched != 0) {
        if (matched != GLOB_NOMATCH)
            snprintf(error, error_size, "%s: include = %s: %s", config->path, config->include,
                     matched == GLOB_NOSPACE ? "out of memory" : "cannot read the directory");
        globfree(&found);
        return matched == GLOB_NOMATCH ? 0 : -1;
    }
    int status = 0;
    for (size_t i = 0; i < found.gl_pathc && status == 0; i++) {
        const char *path = found.gl_pathv[i];
        if (!is_dropin_name(path))
            continue;
        char *text;
        status = read_file(path, check, &text, error, error_size);
        if (status == 0) {
            status = cfg_add_dropin(config, text, path, error, error_size);
            free(text);
        }
        /* Not strict: the drop-in is left out whole and the others are read. */
        if (status != 0 && !config->strict) {
            status = cfg_skip_dropin(config, path, error);
            if (status != 0)
                snprintf(error, error_size, "%s: out of memory", path);
        }
    }
    globfree(&found);
    return status;
}

int cfg_load(const char *path, bool check, rpcd_config **out, char *error, size_t error_size)
{
    error[0] = '\0';
    char *text;
    if (read_file(path, check, &text, error, error_size) != 0)
        return -1;
    /* Read whole, so that the parser counts lines itself. */
    rpcd_config *config;
    int status = cfg_load_string(text, path, &config, error, error_size);
    free(text);
    if (status != 0)
        return -1;
    config->insecure = !check;
    fsafe_session_begin(); /* drop-ins share a directory */
    status = add_dropins(config, check, error, error_size);
    fsafe_session_end();
    if (status != 0) {
        cfg_free(config);
        return -1;
    }
    *out = config;
    return 0;
}

void cfg_log_skipped_dropins(const rpcd_config *config)
{
    for (size_t i = 0; i < config->dropin_count; i++)
        if (config->dropin_skipped[i])
            log_message(LOG_ERROR, "drop-in %s skipped: %s", config->dropins[i],
                        config->dropin_skipped[i]);
}
