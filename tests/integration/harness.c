/* SPDX-License-Identifier: MIT */
/*
 * The process harness: fork/exec over three pipes and one poll() loop that moves bytes in and
 * out under a deadline, plus temp files and jansson-based comparison for the integration tests.
 */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct byte_buffer {
    char *data; /* always NUL-terminated when not NULL */
    size_t length;
    size_t capacity;
} byte_buffer;

struct harness_process {
    pid_t pid;
    int in_fd;       /* -1 once closed */
    int out_fd;      /* -1 at EOF */
    int err_fd;      /* -1 at EOF */
    byte_buffer out; /* stdout read but not handed out yet */
    byte_buffer err; /* all of stderr so far */
    bool reaped;
    int wait_status;
};

static long long now_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

static int reserve(byte_buffer *buf, size_t more)
{
    if (buf->data && buf->capacity - buf->length > more)
        return 0;
    size_t capacity = buf->capacity ? buf->capacity : 4096;
    while (capacity - buf->length <= more)
        capacity *= 2;
    char *data = realloc(buf->data, capacity);
    if (!data)
        return -1;
    buf->data = data;
    buf->capacity = capacity;
    buf->data[buf->length] = '\0';
    return 0;
}

/* Reads what one read() gives from *fd into buf; closes *fd at EOF or on an error. */
static void drain_once(int *fd, byte_buffer *buf)
{
    if (reserve(buf, 65536) != 0) {
        close(*fd);
        *fd = -1;
        return;
    }
    ssize_t n = read(*fd, buf->data + buf->length, 65536);
    if (n > 0) {
        buf->length += (size_t)n;
        buf->data[buf->length] = '\0';
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(*fd);
        *fd = -1;
    }
}

/*
 * One round of poll() until deadline: reads stdout and stderr when they have data and, when
 * *left > 0, writes to stdin. Returns HARNESS_OK after any progress (or nothing to wait for),
 * HARNESS_TIMED_OUT when the deadline passed, HARNESS_ERROR when writing failed.
 */
static int pump(harness_process *process, long long deadline, const char **data, size_t *left)
{
    struct pollfd fds[3];
    int count = 0, out_index = -1, err_index = -1, in_index = -1;
    if (process->out_fd >= 0) {
        out_index = count;
        fds[count++] = (struct pollfd){.fd = process->out_fd, .events = POLLIN};
    }
    if (process->err_fd >= 0) {
        err_index = count;
        fds[count++] = (struct pollfd){.fd = process->err_fd, .events = POLLIN};
    }
    if (left && *left > 0) {
        if (process->in_fd < 0)
            return HARNESS_ERROR;
        in_index = count;
        fds[count++] = (struct pollfd){.fd = process->in_fd, .events = POLLOUT};
    }
    long long wait = deadline - now_ms();
    if (wait < 0)
        wait = 0;
    if (count == 0) {
        /* Nothing open: only time can pass. */
        if (wait == 0)
            return HARNESS_TIMED_OUT;
        poll(NULL, 0, wait > 10 ? 10 : (int)wait);
        return HARNESS_OK;
    }
    int ready = poll(fds, (nfds_t)count, (int)wait);
    if (ready < 0)
        return errno == EINTR ? HARNESS_OK : HARNESS_ERROR;
    if (ready == 0)
        return HARNESS_TIMED_OUT;
    if (out_index >= 0 && fds[out_index].revents)
        drain_once(&process->out_fd, &process->out);
    if (err_index >= 0 && fds[err_index].revents)
        drain_once(&process->err_fd, &process->err);
    if (in_index >= 0 && fds[in_index].revents) {
        ssize_t n = write(process->in_fd, *data, *left);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                return HARNESS_OK;
            return HARNESS_ERROR;
        }
        *data += n;
        *left -= (size_t)n;
    }
    return HARNESS_OK;
}

harness_process *harness_start(const char *const argv[])
{
    if (!argv || !argv[0]) {
        fprintf(stderr, "harness: no program to start\n");
        return NULL;
    }
    signal(SIGPIPE, SIG_IGN);
    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
    harness_process *process = calloc(1, sizeof *process);
    if (!process || pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 ||
        pipe2(err, O_CLOEXEC) != 0) {
        fprintf(stderr, "harness: cannot make pipes: %s\n", strerror(errno));
        goto fail;
    }
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "harness: fork: %s\n", strerror(errno));
        goto fail;
    }
    if (pid == 0) {
        /* The child: only async-signal-safe calls from here to exec. */
        setpgid(0, 0);
        if (dup2(in[0], STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0 ||
            dup2(err[1], STDERR_FILENO) < 0)
            _exit(126);
        execv(argv[0], (char *const *)argv);
        static const char message[] = "harness: exec failed\n";
        ssize_t ignored = write(STDERR_FILENO, message, sizeof message - 1);
        (void)ignored;
        _exit(127);
    }
    /* Also here, so that the group exists before the parent may signal it. */
    setpgid(pid, pid);
    close(in[0]);
    close(out[1]);
    close(err[1]);
    process->pid = pid;
    process->in_fd = in[1];
    process->out_fd = out[0];
    process->err_fd = err[0];
    /* Non-blocking, so that a write never waits longer than poll() said it could. */
    fcntl(process->in_fd, F_SETFL, fcntl(process->in_fd, F_GETFL) | O_NONBLOCK);
    if (reserve(&process->out, 0) != 0 || reserve(&process->err, 0) != 0) {
        harness_free(process);
        return NULL;
    }
    return process;

fail:
    for (int i = 0; i < 2; i++) {
        if (in[i] >= 0)
            close(in[i]);
        if (out[i] >= 0)
            close(out[i]);
        if (err[i] >= 0)
            close(err[i]);
    }
    free(process);
    return NULL;
}

pid_t harness_pid(const harness_process *process)
{
    return process->pid;
}

int harness_write(harness_process *process, const void *data, size_t length, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    const char *next = data;
    size_t left = length;
    while (left > 0) {
        int status = pump(process, deadline, &next, &left);
        if (status != HARNESS_OK)
            return status;
    }
    return HARNESS_OK;
}

int harness_write_text(harness_process *process, const char *text, int timeout_ms)
{
    return harness_write(process, text, strlen(text), timeout_ms);
}

void harness_close_stdin(harness_process *process)
{
    if (process->in_fd >= 0) {
        close(process->in_fd);
        process->in_fd = -1;
    }
}

void harness_close_stdout(harness_process *process)
{
    if (process->out_fd >= 0) {
        close(process->out_fd);
        process->out_fd = -1;
    }
    process->out.length = 0;
    if (process->out.data)
        process->out.data[0] = '\0';
}

/* Hands out the first length bytes of the stdout buffer as a new string. */
static char *take_out(harness_process *process, size_t length, size_t skip)
{
    char *text = malloc(length + 1);
    if (!text)
        return NULL;
    memcpy(text, process->out.data, length);
    text[length] = '\0';
    size_t used = length + skip;
    memmove(process->out.data, process->out.data + used, process->out.length - used);
    process->out.length -= used;
    process->out.data[process->out.length] = '\0';
    return text;
}

int harness_read_line(harness_process *process, int timeout_ms, char **line, size_t *length,
                      bool *unterminated)
{
    long long deadline = now_ms() + timeout_ms;
    *line = NULL;
    if (unterminated)
        *unterminated = false;
    for (;;) {
        char *newline = memchr(process->out.data, '\n', process->out.length);
        size_t line_length;
        if (newline) {
            line_length = (size_t)(newline - process->out.data);
            *line = take_out(process, line_length, 1);
        } else if (process->out_fd < 0) {
            if (process->out.length == 0)
                return HARNESS_EOF;
            line_length = process->out.length;
            *line = take_out(process, line_length, 0);
            if (unterminated)
                *unterminated = true;
        } else {
            int status = pump(process, deadline, NULL, NULL);
            if (status != HARNESS_OK)
                return status;
            continue;
        }
        if (!*line)
            return HARNESS_ERROR;
        if (length)
            *length = line_length;
        return HARNESS_OK;
    }
}

int harness_read_all(harness_process *process, int timeout_ms, char **text, size_t *length)
{
    long long deadline = now_ms() + timeout_ms;
    *text = NULL;
    while (process->out_fd >= 0) {
        int status = pump(process, deadline, NULL, NULL);
        if (status != HARNESS_OK)
            return status;
    }
    size_t all = process->out.length;
    *text = take_out(process, all, 0);
    if (!*text)
        return HARNESS_ERROR;
    if (length)
        *length = all;
    return HARNESS_OK;
}

int harness_split_lines(const char *text, size_t length, harness_lines *out)
{
    memset(out, 0, sizeof *out);
    size_t capacity = 0;
    size_t start = 0;
    while (start < length) {
        const char *newline = memchr(text + start, '\n', length - start);
        size_t end = newline ? (size_t)(newline - text) : length;
        if (out->count == capacity) {
            capacity = capacity ? capacity * 2 : 16;
            char **items = realloc(out->items, capacity * sizeof *items);
            if (!items)
                goto fail;
            out->items = items;
        }
        char *item = malloc(end - start + 1);
        if (!item)
            goto fail;
        memcpy(item, text + start, end - start);
        item[end - start] = '\0';
        out->items[out->count++] = item;
        if (!newline)
            out->unterminated = true;
        start = end + 1;
    }
    return 0;
fail:
    harness_lines_free(out);
    return -1;
}

int harness_read_all_lines(harness_process *process, int timeout_ms, harness_lines *out)
{
    char *text;
    size_t length;
    memset(out, 0, sizeof *out);
    int status = harness_read_all(process, timeout_ms, &text, &length);
    if (status != HARNESS_OK)
        return status;
    status = harness_split_lines(text, length, out) == 0 ? HARNESS_OK : HARNESS_ERROR;
    free(text);
    return status;
}

void harness_lines_free(harness_lines *lines)
{
    for (size_t i = 0; i < lines->count; i++)
        free(lines->items[i]);
    free(lines->items);
    memset(lines, 0, sizeof *lines);
}

int harness_collect_stderr(harness_process *process, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    while (process->err_fd >= 0) {
        int status = pump(process, deadline, NULL, NULL);
        if (status != HARNESS_OK)
            return status;
    }
    return HARNESS_OK;
}

int harness_wait_for_stderr(harness_process *process, const char *text, int timeout_ms)
{
    long long deadline = now_ms() + timeout_ms;
    while (!strstr(harness_stderr(process), text)) {
        if (process->err_fd < 0)
            return HARNESS_EOF;
        int status = pump(process, deadline, NULL, NULL);
        if (status != HARNESS_OK)
            return status;
    }
    return HARNESS_OK;
}

const char *harness_stderr(const harness_process *process)
{
    return process->err.data ? process->err.data : "";
}

static void fill_exit(int wait_status, bool timed_out, harness_exit *out)
{
    memset(out, 0, sizeof *out);
    out->timed_out = timed_out;
    if (WIFEXITED(wait_status)) {
        out->exited = true;
        out->code = WEXITSTATUS(wait_status);
    } else if (WIFSIGNALED(wait_status)) {
        out->signal = WTERMSIG(wait_status);
    }
}

int harness_wait(harness_process *process, int timeout_ms, harness_exit *out)
{
    long long deadline = now_ms() + timeout_ms;
    bool timed_out = false;
    while (!process->reaped) {
        pid_t reaped = waitpid(process->pid, &process->wait_status, WNOHANG);
        if (reaped == process->pid) {
            process->reaped = true;
            break;
        }
        if (reaped < 0 && errno != EINTR)
            return HARNESS_ERROR;
        if (now_ms() >= deadline) {
            kill(-process->pid, SIGKILL);
            kill(process->pid, SIGKILL);
            while (waitpid(process->pid, &process->wait_status, 0) < 0 && errno == EINTR) {
            }
            process->reaped = true;
            timed_out = true;
            break;
        }
        /* Short rounds: the exit itself is not something poll() can see. */
        long long round = now_ms() + 10;
        pump(process, round < deadline ? round : deadline, NULL, NULL);
    }
    /* The pipes close with the process; what is still in them belongs to this run. */
    long long drain_deadline = now_ms() + test_time_ms(2000);
    while ((process->out_fd >= 0 || process->err_fd >= 0) &&
           pump(process, drain_deadline, NULL, NULL) == HARNESS_OK) {
    }
    fill_exit(process->wait_status, timed_out, out);
    return HARNESS_OK;
}

int harness_signal(harness_process *process, int signal_number)
{
    if (process->reaped)
        return -1;
    return kill(process->pid, signal_number);
}

void harness_free(harness_process *process)
{
    if (!process)
        return;
    harness_close_stdin(process);
    if (process->out_fd >= 0)
        close(process->out_fd);
    if (process->err_fd >= 0)
        close(process->err_fd);
    if (!process->reaped && process->pid > 0) {
        kill(-process->pid, SIGKILL);
        kill(process->pid, SIGKILL);
        while (waitpid(process->pid, &process->wait_status, 0) < 0 && errno == EINTR) {
        }
    }
    free(process->out.data);
    free(process->err.data);
    free(process);
}

const char *harness_exit_describe(const harness_exit *status)
{
    static char text[64];
    if (status->timed_out)
        snprintf(text, sizeof text, "timed out (killed)");
    else if (status->exited)
        snprintf(text, sizeof text, "exit %d", status->code);
    else
        snprintf(text, sizeof text, "signal %d", status->signal);
    return text;
}

int harness_run(const char *const argv[], const char *input, size_t input_length, int timeout_ms,
                harness_run_result *out)
{
    memset(out, 0, sizeof *out);
    long long deadline = now_ms() + timeout_ms;
    harness_process *process = harness_start(argv);
    if (!process) {
        out->io_status = HARNESS_ERROR;
        return HARNESS_ERROR;
    }
    int status = HARNESS_OK;
    if (input && input_length > 0) {
        status = harness_write(process, input, input_length, timeout_ms);
        /* A program may end without reading its input (rpcd refusing its config does): that is
         * an outcome for the test to check through the exit status, not a failed run. */
        if (status == HARNESS_ERROR && errno == EPIPE)
            status = HARNESS_OK;
    }
    harness_close_stdin(process);
    if (status == HARNESS_OK)
        status = harness_read_all(process, (int)(deadline - now_ms()), &out->out, &out->out_length);
    if (status == HARNESS_OK)
        status = harness_collect_stderr(process, (int)(deadline - now_ms()));
    long long left = deadline - now_ms();
    harness_wait(process, left > 0 ? (int)left : 0, &out->status);
    out->err = strdup(harness_stderr(process));
    out->io_status = status;
    harness_free(process);
    return status;
}

void harness_run_result_free(harness_run_result *result)
{
    free(result->out);
    free(result->err);
    memset(result, 0, sizeof *result);
}

/* ---- Environment, argv and config files ------------------------------------------------ */

const char *harness_env(const char *name)
{
    const char *value = getenv(name);
    if (!value || !value[0]) {
        fprintf(stderr, "harness: environment variable %s is not set (run through meson test)\n",
                name);
        return NULL;
    }
    return value;
}

/*
 * RPCD_TEST_WRAPPER, split at spaces (for instance "valgrind --error-exitcode=99"): the
 * command every rpcd of the tests runs under. Parsed once; the words live until exit.
 */
static void push_wrapper(harness_argv *args)
{
    static char *words;
    static const char *tokens[HARNESS_MAX_ARGS / 2];
    static size_t count;
    if (!words) {
        const char *wrapper = getenv("RPCD_TEST_WRAPPER");
        words = strdup(wrapper ? wrapper : "");
        if (!words)
            return;
        char *save = NULL;
        for (char *word = strtok_r(words, " ", &save);
             word && count < sizeof tokens / sizeof tokens[0]; word = strtok_r(NULL, " ", &save))
            tokens[count++] = word;
    }
    for (size_t i = 0; i < count; i++)
        harness_argv_push(args, tokens[i]);
}

bool harness_wrapped(void)
{
    const char *wrapper = getenv("RPCD_TEST_WRAPPER");
    return wrapper && wrapper[0];
}

harness_argv harness_rpcd_argv(const char *config_path)
{
    harness_argv args;
    memset(&args, 0, sizeof args);
    push_wrapper(&args);
    harness_argv_push(&args, harness_env("RPCD_BINARY"));
    if (config_path) {
        harness_argv_push(&args, "-c");
        harness_argv_push(&args, config_path);
    }
    return args;
}

void harness_argv_push(harness_argv *args, const char *arg)
{
    if (args->count >= HARNESS_MAX_ARGS)
        return;
    args->argv[args->count++] = arg;
    args->argv[args->count] = NULL;
}

harness_argv harness_argv_wrapped(const char *const *wrapper, const harness_argv *inner)
{
    harness_argv args = {{NULL}, 0};
    for (size_t i = 0; wrapper[i]; i++)
        harness_argv_push(&args, wrapper[i]);
    for (int i = 0; i < inner->count; i++)
        harness_argv_push(&args, inner->argv[i]);
    return args;
}

harness_argv harness_argv_in_shell(const char *script, const harness_argv *inner)
{
    const char *const shell[] = {"/bin/sh", "-c", script, "sh", NULL};
    return harness_argv_wrapped(shell, inner);
}

char *harness_temp_dir(void)
{
    const char *base = getenv("TMPDIR");
    char *path;
    if (!base || !base[0])
        base = "/tmp";
    if (asprintf(&path, "%s/rpcd-test-XXXXXX", base) < 0)
        return NULL;
    if (!mkdtemp(path)) {
        fprintf(stderr, "harness: mkdtemp %s: %s\n", path, strerror(errno));
        free(path);
        return NULL;
    }
    return path;
}

char *harness_write_file(const char *dir, const char *name, const char *text)
{
    char *path;
    if (asprintf(&path, "%s/%s", dir, name) < 0)
        return NULL;
    FILE *file = fopen(path, "w");
    size_t length = strlen(text);
    if (!file || fwrite(text, 1, length, file) != length) {
        fprintf(stderr, "harness: cannot write %s: %s\n", path, strerror(errno));
        if (file)
            fclose(file);
        free(path);
        return NULL;
    }
    if (fclose(file) != 0) {
        free(path);
        return NULL;
    }
    return path;
}

void harness_remove_dir(const char *dir)
{
    if (!dir)
        return;
    DIR *entries = opendir(dir);
    if (entries) {
        struct dirent *entry;
        while ((entry = readdir(entries)) != NULL) {
            if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0)
                continue;
            char *path;
            if (asprintf(&path, "%s/%s", dir, entry->d_name) < 0)
                continue;
            unlink(path);
            free(path);
        }
        closedir(entries);
    }
    rmdir(dir);
}

char *harness_bundled_plugin_sections(void)
{
    const char *echo = harness_env("RPCD_PLUGIN_ECHO");
    const char *spec = harness_env("RPCD_PLUGIN_SPEC");
    const char *progress = harness_env("RPCD_PLUGIN_PROGRESS");
    const char *fail = harness_env("RPCD_PLUGIN_FAIL");
    char *text;
    if (!echo || !spec || !progress || !fail)
        return NULL;
    if (asprintf(&text,
                 "[plugin echo]\npath = %s\n\n"
                 "[plugin spec]\npath = %s\n\n"
                 "[plugin progress]\npath = %s\ndefault_steps = 3\n\n"
                 "[plugin fail]\npath = %s\n",
                 echo, spec, progress, fail) < 0)
        return NULL;
    return text;
}

char *harness_expand_env(const char *text)
{
    byte_buffer out = {0};
    if (reserve(&out, 0) != 0)
        return NULL;
    const char *at = text;
    for (;;) {
        const char *open = strstr(at, "${");
        const char *close = open ? strchr(open + 2, '}') : NULL;
        size_t plain = open && close ? (size_t)(open - at) : strlen(at);
        if (reserve(&out, plain) != 0)
            goto fail;
        memcpy(out.data + out.length, at, plain);
        out.length += plain;
        out.data[out.length] = '\0';
        if (!open || !close)
            return out.data;
        char name[128];
        size_t name_length = (size_t)(close - open - 2);
        if (name_length >= sizeof name) {
            fprintf(stderr, "harness: variable name too long in ${...}\n");
            goto fail;
        }
        memcpy(name, open + 2, name_length);
        name[name_length] = '\0';
        const char *value = harness_env(name);
        if (!value)
            goto fail;
        size_t value_length = strlen(value);
        if (reserve(&out, value_length) != 0)
            goto fail;
        memcpy(out.data + out.length, value, value_length);
        out.length += value_length;
        out.data[out.length] = '\0';
        at = close + 1;
    }
fail:
    free(out.data);
    return NULL;
}

/* ---- JSON ------------------------------------------------------------------------------ */

static json_t *load_json(const char *text)
{
    json_error_t error;
    return json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &error);
}

/* Whether a and b are the same bytes once whitespace outside strings is dropped. */
static bool same_without_whitespace(const char *a, const char *b)
{
    bool in_string[2] = {false, false}, escaped[2] = {false, false};
    const char *at[2] = {a, b};
    for (;;) {
        for (int side = 0; side < 2; side++) {
            while (!in_string[side] && *at[side] && strchr(" \t\r\n", *at[side]) != NULL)
                at[side]++;
        }
        if (*at[0] != *at[1])
            return false;
        if (!*at[0])
            return true;
        for (int side = 0; side < 2; side++) {
            char c = *at[side]++;
            if (escaped[side])
                escaped[side] = false;
            else if (in_string[side] && c == '\\')
                escaped[side] = true;
            else if (c == '"')
                in_string[side] = !in_string[side];
        }
    }
}

static bool arrays_equal_as_multisets(const json_t *expected, const json_t *actual)
{
    size_t count = json_array_size(expected);
    if (count != json_array_size(actual))
        return false;
    bool *used = calloc(count ? count : 1, sizeof *used);
    if (!used)
        return false;
    bool equal = true;
    for (size_t i = 0; i < count && equal; i++) {
        bool found = false;
        for (size_t j = 0; j < count && !found; j++) {
            if (!used[j] && json_equal(json_array_get(expected, i), json_array_get(actual, j))) {
                used[j] = true;
                found = true;
            }
        }
        equal = found;
    }
    free(used);
    return equal;
}

bool harness_json_equal(const char *expected, const char *actual)
{
    json_t *left = load_json(expected);
    json_t *right = load_json(actual);
    bool equal;
    if (!left || !right)
        equal = !left && !right && same_without_whitespace(expected, actual);
    else if (json_is_array(left) && json_is_array(right))
        equal = arrays_equal_as_multisets(left, right);
    else
        equal = json_equal(left, right);
    json_decref(left);
    json_decref(right);
    return equal;
}

char *harness_read_file(const char *path, size_t *length)
{
    FILE *file = fopen(path, "rb");
    if (!file)
        return NULL;
    char *text = NULL;
    size_t used = 0, capacity = 0;
    for (;;) {
        if (capacity - used < 4096) {
            capacity = capacity ? capacity * 2 : 8192;
            char *grown = realloc(text, capacity + 1);
            if (!grown) {
                free(text);
                fclose(file);
                return NULL;
            }
            text = grown;
        }
        size_t n = fread(text + used, 1, capacity - used, file);
        used += n;
        if (n == 0)
            break;
    }
    fclose(file);
    text[used] = '\0';
    if (length)
        *length = used;
    return text;
}
