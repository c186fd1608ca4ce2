/* SPDX-License-Identifier: MIT */
/*
 * Runs the real rpcd binary over pipes for the integration tests: start it, feed its stdin, read
 * its stdout line by line, collect its stderr and wait for its exit, every wait bounded in time so
 * that a daemon that hangs fails a test instead of stalling it. Also temp configs and JSON compare.
 */
#ifndef RPCD_TEST_HARNESS_H
#define RPCD_TEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "test_time.h"

/*
 * A generous bound for one wait: 10 s on a plain build, where rpcd starts and answers within
 * milliseconds, times the factor of tests/test_time.h (sanitizers, valgrind). Every timeout_ms
 * below is such a bound, there to fail a test that hangs; a test passes a figure of its own
 * through test_time_ms() so that it is scaled the same way.
 */
#define HARNESS_TIMEOUT_MS test_time_ms(10000)

/* What the I/O functions return. */
enum harness_status {
    HARNESS_OK = 0,
    HARNESS_EOF = 1,        /* read_line: stdout closed and nothing is left */
    HARNESS_ERROR = -1,     /* a system call failed, or the child closed its stdin */
    HARNESS_TIMED_OUT = -2, /* the deadline passed first */
};

typedef struct harness_process harness_process;

/* How a child ended. */
typedef struct harness_exit {
    bool exited; /* it called exit(): code is valid */
    int code;
    int signal;     /* it was killed by this signal (0 when it exited) */
    bool timed_out; /* it did not end in time and the harness killed its process group */
} harness_exit;

/*
 * Starts argv[0] (a path, not searched in PATH) with argv, stdin, stdout and stderr all pipes, in
 * a process group of its own. SIGPIPE is ignored in the calling process from then on, so that a
 * write to a dead child fails with EPIPE instead of killing the test.
 * Returns a new process (free with harness_free), or NULL with the reason on stderr.
 */
harness_process *harness_start(const char *const argv[]);

/* The child's process id. */
pid_t harness_pid(const harness_process *process);

/*
 * Writes length bytes to the child's stdin, reading its stdout and stderr meanwhile so that a
 * child blocked on a full output pipe cannot deadlock the write. Returns HARNESS_OK,
 * HARNESS_TIMED_OUT or HARNESS_ERROR (stdin closed, or the child is gone: EPIPE).
 */
int harness_write(harness_process *process, const void *data, size_t length, int timeout_ms);

/* harness_write of a NUL-terminated text. */
int harness_write_text(harness_process *process, const char *text, int timeout_ms);

/* Closes the child's stdin: end of input. Harmless when already closed. */
void harness_close_stdin(harness_process *process);

/*
 * Closes the read end of the child's stdout, as a client that stops listening does: the child's
 * next write fails with EPIPE (or kills it with SIGPIPE unless it ignores the signal). Whatever
 * stdout held and was not read yet is discarded. Harmless when already closed.
 */
void harness_close_stdout(harness_process *process);

/*
 * Reads one line of stdout. Returns HARNESS_OK with *line (new, NUL-terminated, without its
 * "\n"; free it) and *length (may be NULL); HARNESS_EOF when stdout closed with nothing left;
 * HARNESS_TIMED_OUT; HARNESS_ERROR. A last line without "\n" is returned as a line, with
 * *unterminated (may be NULL) set to true.
 */
int harness_read_line(harness_process *process, int timeout_ms, char **line, size_t *length,
                      bool *unterminated);

/*
 * Reads stdout until EOF. Returns HARNESS_OK with *text (new, NUL-terminated; free it) and
 * *length (may be NULL), or HARNESS_TIMED_OUT / HARNESS_ERROR, in which case *text is NULL.
 */
int harness_read_all(harness_process *process, int timeout_ms, char **text, size_t *length);

/* Lines of a text, split at "\n". */
typedef struct harness_lines {
    char **items; /* owned, each NUL-terminated without its "\n" */
    size_t count;
    bool unterminated; /* the text did not end with "\n" (and was not empty) */
} harness_lines;

/* Splits text (borrowed) into lines. Returns 0, or -1 when out of memory. */
int harness_split_lines(const char *text, size_t length, harness_lines *out);

/* harness_read_all, split into lines. Same return values. */
int harness_read_all_lines(harness_process *process, int timeout_ms, harness_lines *out);

void harness_lines_free(harness_lines *lines);

/*
 * Reads stderr until EOF (it is also collected while any other function waits). Returns
 * HARNESS_OK, HARNESS_TIMED_OUT or HARNESS_ERROR.
 */
int harness_collect_stderr(harness_process *process, int timeout_ms);

/*
 * Collects stdout and stderr until stderr contains text (stdout stays buffered for
 * harness_read_line). Returns HARNESS_OK, HARNESS_TIMED_OUT, or HARNESS_EOF when stderr closed
 * without it.
 */
int harness_wait_for_stderr(harness_process *process, const char *text, int timeout_ms);

/* The stderr collected so far, NUL-terminated. Borrowed: valid until the next harness call. */
const char *harness_stderr(const harness_process *process);

/*
 * Waits for the child to end, collecting its output meanwhile and the rest of it afterwards.
 * When it has not ended after timeout_ms, kills its process group with SIGKILL, reaps it and
 * sets out->timed_out. Returns HARNESS_OK (also after a kill: look at *out) or HARNESS_ERROR.
 */
int harness_wait(harness_process *process, int timeout_ms, harness_exit *out);

/* Sends signal to the child (not its group). Returns 0, or -1 when it has been reaped. */
int harness_signal(harness_process *process, int signal_number);

/* Kills the child's process group if it still runs, reaps it, closes the pipes, frees. */
void harness_free(harness_process *process);

/* Describes an exit for messages: "exit 0", "signal 6", "timed out (killed)". Static storage. */
const char *harness_exit_describe(const harness_exit *status);

/*
 * Runs argv to completion: writes input (may be NULL), closes stdin, reads stdout and stderr to
 * EOF and waits for the exit, all within timeout_ms. A program that ends before it has read all
 * of its input is not an error: what it wrote and its exit status are the result.
 */
typedef struct harness_run_result {
    char *out; /* owned: all of stdout, NUL-terminated (NULL when it timed out) */
    size_t out_length;
    char *err; /* owned: all of stderr, NUL-terminated */
    harness_exit status;
    int io_status; /* HARNESS_OK, or what went wrong with the pipes */
} harness_run_result;

int harness_run(const char *const argv[], const char *input, size_t input_length, int timeout_ms,
                harness_run_result *out);
void harness_run_result_free(harness_run_result *result);

/* ---- Environment, argv and config files ------------------------------------------------ */

/* getenv(name), or NULL with a message naming the variable on stderr. Borrowed. */
const char *harness_env(const char *name);

/* An argument vector of borrowed strings, NULL-terminated. */
enum { HARNESS_MAX_ARGS = 31 };
typedef struct harness_argv {
    const char *argv[HARNESS_MAX_ARGS + 1];
    int count;
} harness_argv;

/*
 * {RPCD_BINARY, "-c", config_path} (config_path borrowed; when NULL, no "-c" at all).
 * argv[0] is NULL when RPCD_BINARY is not set.
 */
harness_argv harness_rpcd_argv(const char *config_path);

/*
 * True when rpcd runs under a wrapper (RPCD_TEST_WRAPPER, e.g. valgrind): it is then much
 * slower, and its memory figures are the wrapper's.
 */
bool harness_wrapped(void);

/* Appends one argument (borrowed). Ignored beyond HARNESS_MAX_ARGS. */
void harness_argv_push(harness_argv *args, const char *arg);

/*
 * The arguments of wrapper (NULL-terminated), then inner's: inner run by a program that runs the
 * rest of its arguments. Every string stays borrowed.
 */
harness_argv harness_argv_wrapped(const char *const *wrapper, const harness_argv *inner);

/*
 * inner run by /bin/sh -c script, where script runs "$@" (such as "exec \"$@\" 2>&-", which
 * closes stderr first). script and inner's strings stay borrowed.
 */
harness_argv harness_argv_in_shell(const char *script, const harness_argv *inner);

/* A new directory from mkdtemp under $TMPDIR (or /tmp). New string, or NULL. */
char *harness_temp_dir(void);

/*
 * Reads a whole file. Returns its bytes (new, NUL-terminated for convenience; free()) and, when
 * length is not NULL, their count; NULL when the file cannot be read.
 */
char *harness_read_file(const char *path, size_t *length);

/* Writes text to dir/name. Returns the path (new string), or NULL. */
char *harness_write_file(const char *dir, const char *name, const char *text);

/* Removes the files in dir (one level) and dir itself. */
void harness_remove_dir(const char *dir);

/*
 * The [plugin NAME] sections of the bundled plugins: those of the default config (echo, spec,
 * progress with default_steps = 3) and fail, which it does not load, with absolute paths from
 * RPCD_PLUGIN_*. New string, or NULL.
 */
char *harness_bundled_plugin_sections(void);

/*
 * Replaces each ${NAME} in text (borrowed) by the value of the environment variable NAME.
 * Returns a new string, or NULL (with a message on stderr) when a variable is not set.
 */
char *harness_expand_env(const char *text);

/* ---- JSON ------------------------------------------------------------------------------ */

/*
 * Whether two JSON texts are equal: a top-level array on both sides (a batch response) is
 * compared as a multiset of elements, in any order; everything else with json_equal, so object
 * member order does not matter but 1 and 1.0 differ. A text that jansson cannot load (1e400,
 * integers beyond 64 bits) is compared byte for byte outside whitespace instead, on both sides.
 */
bool harness_json_equal(const char *expected, const char *actual);

#endif
