/* SPDX-License-Identifier: MIT */
/*
 * The stdio transport over pipes: lines read and written, a stop that ends a read waiting for
 * input (in read() or, on a non-blocking input, in poll()) and every read after it, an output
 * whose reader has gone, and the take-over of fds 0 and 1 in a child process of its own.
 */
#include "wire/line_reader.h"
#include "wire/transport_stdio.h"
#include "test_time.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

/* How long a read may take to notice a stop before the test calls it stuck (scaled). */
enum { STUCK_S = 5 };

static void pause_ms(long ms)
{
    struct timespec pause = {ms / 1000, (ms % 1000) * 1000 * 1000};
    nanosleep(&pause, NULL);
}

static void expect_line(line_reader *reader, const char *expected)
{
    const char *line;
    size_t length;
    assert_int_equal(lr_next(reader, &line, &length), LR_LINE);
    assert_int_equal(length, strlen(expected));
    assert_memory_equal(line, expected, length);
}

/* Lines in, lines out: what is written to the input comes out as lines, then the end. */
static void test_reads_lines_and_writes(void **state)
{
    (void)state;
    int in[2], out[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(pipe(out), 0);
    stdio_transport *transport = NULL;
    assert_int_equal(stdio_new(in[0], out[1], &transport), 0);

    assert_int_equal(write(in[1], "one\r\ntwo\n", 9), 9);
    close(in[1]);
    line_reader *reader = NULL;
    assert_int_equal(lr_new(stdio_read, transport, 100, &reader), 0);
    expect_line(reader, "one");
    expect_line(reader, "two");
    const char *line;
    size_t length;
    assert_int_equal(lr_next(reader, &line, &length), LR_EOF);
    lr_free(reader);

    struct iovec parts[] = {{(void *)"{\"id\":1}", 8}, {(void *)"\n", 1}};
    assert_int_equal(stdio_write(transport, parts, 2), 0);
    char written[16];
    assert_int_equal(read(out[0], written, sizeof written), 9);
    assert_memory_equal(written, "{\"id\":1}\n", 9);

    stdio_free(transport);
    close(in[0]);
    close(out[0]);
    close(out[1]);
}

typedef struct blocked_read {
    stdio_transport *transport;
    ssize_t result;
    int error;
    atomic_bool done;
} blocked_read;

static void *blocked_read_main(void *context)
{
    blocked_read *blocked = context;
    char bytes[64];
    blocked->result = stdio_read(blocked->transport, bytes, sizeof bytes);
    blocked->error = errno;
    atomic_store(&blocked->done, true);
    return NULL;
}

/*
 * Starts a read on another thread, lets it wait for input, stops reading, and expects the read
 * to return -1 with ECANCELED within STUCK_S. A read the stop did not reach is released by
 * closing the input's write end, and the test fails.
 */
static void expect_stop_ends_waiting_read(int input_write_end, stdio_transport *transport)
{
    blocked_read blocked = {.transport = transport};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, blocked_read_main, &blocked), 0);
    pause_ms(100); /* long enough to be inside read() or poll() */
    assert_false(atomic_load(&blocked.done));
    stdio_stop_reading(transport);
    for (int waited = 0; waited < test_time_ms(STUCK_S * 1000) / 10 && !atomic_load(&blocked.done);
         waited++)
        pause_ms(10);
    bool ended = atomic_load(&blocked.done);
    if (!ended)
        close(input_write_end);
    pthread_join(thread, NULL);
    assert_true(ended);
    assert_int_equal(blocked.result, -1);
    assert_int_equal(blocked.error, ECANCELED);
}

/* A read waiting for input in read() returns ECANCELED once stopped: the signal reaches it. */
static void test_stop_ends_read_waiting_for_input(void **state)
{
    (void)state;
    int in[2];
    assert_int_equal(pipe(in), 0);
    stdio_transport *transport = NULL;
    assert_int_equal(stdio_new(in[0], STDERR_FILENO, &transport), 0);
    expect_stop_ends_waiting_read(in[1], transport);
    stdio_free(transport);
    close(in[0]);
    close(in[1]);
}

/* The same for a non-blocking input, whose read waits in poll(). */
static void test_stop_ends_read_waiting_in_poll(void **state)
{
    (void)state;
    int in[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(fcntl(in[0], F_SETFL, fcntl(in[0], F_GETFL) | O_NONBLOCK), 0);
    stdio_transport *transport = NULL;
    assert_int_equal(stdio_new(in[0], STDERR_FILENO, &transport), 0);
    expect_stop_ends_waiting_read(in[1], transport);
    stdio_free(transport);
    close(in[0]);
    close(in[1]);
}

/*
 * Once stopped, reading stays cancelled though input is waiting; and the input descriptor itself
 * now reads as ended, so that a read entered just after the stop's check of the flag (where the
 * signal comes too early to interrupt it) does not wait either, and is no end of input.
 */
static void count_before_read(void *context)
{
    (*(int *)context)++;
}

static void test_stop_before_read_cancels_for_good(void **state)
{
    (void)state;
    int in[2];
    assert_int_equal(pipe(in), 0);
    stdio_transport *transport = NULL;
    assert_int_equal(stdio_new(in[0], STDERR_FILENO, &transport), 0);
    /* The hook before each read (a reload's) no longer runs once reading is stopped. */
    int hooks = 0;
    stdio_set_before_read(transport, count_before_read, &hooks);
    assert_int_equal(write(in[1], "waiting\n", 8), 8);
    stdio_stop_reading(transport);
    char bytes[16];
    errno = 0;
    assert_int_equal(stdio_read(transport, bytes, sizeof bytes), -1);
    assert_int_equal(errno, ECANCELED);
    assert_int_equal(stdio_read(transport, bytes, sizeof bytes), -1);
    assert_int_equal(errno, ECANCELED);
    assert_int_equal(read(in[0], bytes, sizeof bytes), 0);
    assert_int_equal(hooks, 0);
    stdio_free(transport);
    close(in[0]);
    close(in[1]);
}

/* Writes two lines into a pipe after a pause, then closes it. */
static void *late_writer_main(void *context)
{
    int fd = *(int *)context;
    pause_ms(50);
    ssize_t n = write(fd, "first\n", 6);
    pause_ms(50);
    n += write(fd, "second\n", 7);
    close(fd);
    return (void *)(intptr_t)n;
}

/*
 * A non-blocking input (a parent may share one with rpcd) with nothing to read yet: EAGAIN is no
 * failure; the read waits for input and the lines and the end come as from a blocking one. The
 * flag, which belongs to the parent's open file too, stays set.
 */
static void test_nonblocking_input_waits_for_lines(void **state)
{
    (void)state;
    int in[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(fcntl(in[0], F_SETFL, fcntl(in[0], F_GETFL) | O_NONBLOCK), 0);
    stdio_transport *transport = NULL;
    assert_int_equal(stdio_new(in[0], STDERR_FILENO, &transport), 0);
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, late_writer_main, &in[1]), 0);
    line_reader *reader = NULL;
    assert_int_equal(lr_new(stdio_read, transport, 100, &reader), 0);
    expect_line(reader, "first");
    expect_line(reader, "second");
    const char *line;
    size_t length;
    assert_int_equal(lr_next(reader, &line, &length), LR_EOF);
    lr_free(reader);
    void *written;
    pthread_join(thread, &written);
    assert_int_equal((intptr_t)written, 13);
    assert_int_equal(fcntl(in[0], F_GETFL) & O_NONBLOCK, O_NONBLOCK);
    stdio_free(transport);
    close(in[0]);
}

static bool same_file(int a, int b)
{
    struct stat first, second;
    return fstat(a, &first) == 0 && fstat(b, &second) == 0 && first.st_dev == second.st_dev &&
           first.st_ino == second.st_ino;
}

/* What the child checks after the take-over, one exit code per failed check (0: all good). */
static int child_take_over(void)
{
    int original_in = dup(STDIN_FILENO), original_out = dup(STDOUT_FILENO);
    int in, out;
    char error[256];
    if (stdio_take_over(&in, &out, error, sizeof error) != STDIO_OK)
        return 10;
    if (!same_file(in, original_in) || !same_file(out, original_out))
        return 11; /* the protocol no longer reaches the client */
    if (same_file(STDIN_FILENO, original_in) || !same_file(STDOUT_FILENO, STDERR_FILENO))
        return 12; /* fds 0 and 1 still are the protocol */
    stdio_transport *transport;
    if (stdio_new(in, out, &transport) != 0)
        return 13;
    char bytes[16];
    if (stdio_read(transport, bytes, sizeof bytes) != 5 || memcmp(bytes, "ping\n", 5) != 0)
        return 14;
    struct iovec part = {(void *)"pong\n", 5};
    if (stdio_write(transport, &part, 1) != 0)
        return 15;
    stdio_free(transport);
    return 0;
}

/* With stdin closed, the take-over refuses with STDIO_CLOSED and names it. */
static int child_stdin_closed(void)
{
    close(STDIN_FILENO);
    int in, out;
    char error[256] = "";
    if (stdio_take_over(&in, &out, error, sizeof error) != STDIO_CLOSED)
        return 20;
    if (strcmp(error, "stdin is closed: rpcd speaks its protocol over stdin and stdout") != 0)
        return 21;
    return 0;
}

/* Runs check in a child whose stdin reads "ping\n" and whose stdout the parent reads. */
static void run_in_child(int (*check)(void), const char *expected_output)
{
    int to_child[2], from_child[2];
    assert_int_equal(pipe(to_child), 0);
    assert_int_equal(pipe(from_child), 0);
    assert_int_equal(write(to_child[1], "ping\n", 5), 5);
    close(to_child[1]);
    fflush(NULL);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        dup2(to_child[0], STDIN_FILENO);
        dup2(from_child[1], STDOUT_FILENO);
        close(to_child[0]);
        close(from_child[0]);
        close(from_child[1]);
        _exit(check());
    }
    close(to_child[0]);
    close(from_child[1]);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0)
        fail_msg("check %d failed in the child", WEXITSTATUS(status));
    char output[16];
    ssize_t n = read(from_child[0], output, sizeof output);
    assert_int_equal(n, (ssize_t)strlen(expected_output));
    assert_memory_equal(output, expected_output, (size_t)n);
    close(from_child[0]);
}

/* A transport writing to output, for stdio_output_closed; its input, unused, is a pipe. */
typedef struct over_output {
    stdio_transport *transport;
    int input[2];
} over_output;

static void open_over(over_output *over, int output)
{
    assert_int_equal(pipe(over->input), 0);
    assert_int_equal(stdio_new(over->input[0], output, &over->transport), 0);
}

static void close_over(over_output *over)
{
    stdio_free(over->transport);
    close(over->input[0]);
    close(over->input[1]);
}

/*
 * An output is closed once nobody can read it: a pipe whose read end is closed, a socket whose
 * peer has gone. A pipe with its reader, even full, a socket whose peer only ended its own
 * sending (the end of input of a client on one connection, still reading), and /dev/null are not.
 */
static void test_output_closed_when_its_reader_goes(void **state)
{
    (void)state;
    over_output over;
    int out[2];
    assert_int_equal(pipe2(out, O_NONBLOCK), 0);
    open_over(&over, out[1]);
    assert_false(stdio_output_closed(over.transport));
    static const char fill[4096];
    while (write(out[1], fill, sizeof fill) > 0)
        ;
    assert_int_equal(errno, EAGAIN);
    assert_false(stdio_output_closed(over.transport)); /* full, but read */
    close(out[0]);
    assert_true(stdio_output_closed(over.transport));
    close_over(&over);
    close(out[1]);

    int peers[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, peers), 0);
    open_over(&over, peers[0]);
    assert_false(stdio_output_closed(over.transport));
    assert_int_equal(shutdown(peers[1], SHUT_WR), 0);
    assert_false(stdio_output_closed(over.transport));
    close(peers[1]);
    assert_true(stdio_output_closed(over.transport));
    close_over(&over);
    close(peers[0]);

    int null_output = open("/dev/null", O_WRONLY | O_CLOEXEC);
    assert_true(null_output >= 0);
    open_over(&over, null_output);
    assert_false(stdio_output_closed(over.transport));
    close_over(&over);
    close(null_output);
}

/* The take-over moves the protocol to private descriptors the transport then reads and writes. */
static void test_take_over_moves_protocol(void **state)
{
    (void)state;
    run_in_child(child_take_over, "pong\n");
}

static void test_take_over_refuses_closed_stdin(void **state)
{
    (void)state;
    run_in_child(child_stdin_closed, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_lines_and_writes),
        cmocka_unit_test(test_stop_ends_read_waiting_for_input),
        cmocka_unit_test(test_stop_ends_read_waiting_in_poll),
        cmocka_unit_test(test_stop_before_read_cancels_for_good),
        cmocka_unit_test(test_nonblocking_input_waits_for_lines),
        cmocka_unit_test(test_output_closed_when_its_reader_goes),
        cmocka_unit_test(test_take_over_moves_protocol),
        cmocka_unit_test(test_take_over_refuses_closed_stdin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
