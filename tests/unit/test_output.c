/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for output: line assembly from parts, when pending lines reach the write function
 * (flush, reader idle, size threshold), failure handling, and whole lines from many threads.
 */
#include "base/output.h"

#include "base/buffer.h"
#include "test_time.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cmocka.h>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

enum { FLUSH_THRESHOLD = 64 * 1024 }; /* as documented in output.c */

/* A write function that records everything, and can be told to fail. */
typedef struct sink {
    buffer written;
    size_t writes;
    size_t last_write_length;
    bool fail;
    bool partial_line; /* a write ended inside a line */
} sink;

static int sink_write(void *context, const struct iovec *parts, int part_count)
{
    sink *s = context;
    s->writes++;
    s->last_write_length = 0;
    for (int i = 0; i < part_count; i++)
        s->last_write_length += parts[i].iov_len;
    if (s->fail)
        return -1;
    const struct iovec *last = &parts[part_count - 1];
    /* Writer threads call this too, where a failed assertion cannot unwind: just note it. */
    if (last->iov_len == 0 || ((const char *)last->iov_base)[last->iov_len - 1] != '\n')
        s->partial_line = true;
    for (int i = 0; i < part_count; i++) {
        if (buf_append(&s->written, parts[i].iov_base, parts[i].iov_len) != 0)
            return -1;
    }
    return 0;
}

#define PART(literal)                                                                              \
    {                                                                                              \
        (void *)(literal), sizeof(literal) - 1                                                     \
    }

#define ASSERT_WRITTEN(s, literal)                                                                 \
    do {                                                                                           \
        assert_int_equal((s)->written.length, sizeof(literal) - 1);                                \
        assert_memory_equal((s)->written.data, (literal), sizeof(literal) - 1);                    \
    } while (0)

static output *open_output(sink *s)
{
    output *out = NULL;
    assert_int_equal(out_new(sink_write, s, &out), 0);
    assert_non_null(out);
    return out;
}

static void test_line_from_parts(void **state)
{
    (void)state;
    sink s = {BUFFER_INIT, 0, 0, false, false};
    output *out = open_output(&s);
    struct iovec parts[] = {PART("{\"a\":"), PART(""), PART("1}")};
    assert_int_equal(out_write_line(out, parts, 3), 0);
    assert_int_equal(out_write_line(out, NULL, 0), 0); /* an empty line is just "\n" */
    struct iovec one[] = {PART("x")};
    assert_int_equal(out_write_line(out, one, 1), 0);
    assert_int_equal(s.writes, 0); /* nothing yet: the reader may have more input */
    assert_int_equal(out_flush(out), 0);
    assert_int_equal(s.writes, 1); /* one write for the whole burst */
    ASSERT_WRITTEN(&s, "{\"a\":1}\n\nx\n");
    assert_int_equal(out_flush(out), 0);
    assert_int_equal(s.writes, 1); /* nothing pending: no empty write */
    assert_false(out_failed(out));
    out_free(out);
    assert_false(s.partial_line);
    buf_free(&s.written);
}

static void test_reader_idle(void **state)
{
    (void)state;
    sink s = {BUFFER_INIT, 0, 0, false, false};
    output *out = open_output(&s);
    struct iovec a[] = {PART("a")}, b[] = {PART("b")}, c[] = {PART("c")}, d[] = {PART("d")};
    assert_int_equal(out_write_line(out, a, 1), 0);
    assert_int_equal(out_write_line(out, b, 1), 0);
    assert_int_equal(s.writes, 0);
    out_set_reader_idle(out, true); /* the reader waits: what is pending goes now */
    assert_int_equal(s.writes, 1);
    ASSERT_WRITTEN(&s, "a\nb\n");
    assert_int_equal(out_write_line(out, c, 1), 0); /* while idle: at once */
    assert_int_equal(s.writes, 2);
    ASSERT_WRITTEN(&s, "a\nb\nc\n");
    out_set_reader_idle(out, true); /* nothing pending: no write */
    assert_int_equal(s.writes, 2);
    out_set_reader_idle(out, false); /* busy again: batching resumes */
    assert_int_equal(out_write_line(out, d, 1), 0);
    assert_int_equal(s.writes, 2);
    out_set_reader_idle(out, true);
    assert_int_equal(s.writes, 3);
    ASSERT_WRITTEN(&s, "a\nb\nc\nd\n");
    out_free(out);
    assert_false(s.partial_line);
    buf_free(&s.written);
}

typedef struct other_thread_line {
    output *out;
    int status;
} other_thread_line;

static void *write_other_line(void *context)
{
    other_thread_line *other = context;
    struct iovec line[] = {PART("other")};
    other->status = out_write_line(other->out, line, 1);
    return NULL;
}

/*
 * A thread's batch holds its own lines for an idle reader until it ends, then writes them in one
 * go; a line of another thread meanwhile goes as usual (with what is pending); past its end,
 * lines go at once again.
 */
static void test_batch(void **state)
{
    (void)state;
    sink s = {BUFFER_INIT, 0, 0, false, false};
    output *out = open_output(&s);
    out_set_reader_idle(out, true);
    struct iovec a[] = {PART("a")}, b[] = {PART("b")}, c[] = {PART("c")}, d[] = {PART("d")};
    out_batch_begin();
    assert_int_equal(out_write_line(out, a, 1), 0);
    assert_int_equal(out_write_line(out, b, 1), 0);
    assert_int_equal(s.writes, 0);
    assert_int_equal(out_batch_end(), 0);
    assert_int_equal(s.writes, 1);
    ASSERT_WRITTEN(&s, "a\nb\n");
    assert_int_equal(out_batch_end(), 0); /* nothing held: no write */
    assert_int_equal(s.writes, 1);

    out_batch_begin();
    assert_int_equal(out_write_line(out, c, 1), 0);
    other_thread_line other = {out, -1};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, write_other_line, &other), 0);
    assert_int_equal(pthread_join(thread, NULL), 0);
    assert_int_equal(other.status, 0);
    assert_int_equal(s.writes, 2); /* the other thread's line took the held one along */
    ASSERT_WRITTEN(&s, "a\nb\nc\nother\n");
    assert_int_equal(out_batch_end(), 0);
    assert_int_equal(s.writes, 2);

    /* A batch ended while the reader works leaves its lines for the reader's next wait. */
    out_batch_begin();
    assert_int_equal(out_write_line(out, d, 1), 0);
    out_set_reader_idle(out, false);
    assert_int_equal(out_batch_end(), 0);
    assert_int_equal(s.writes, 2);
    out_set_reader_idle(out, true);
    assert_int_equal(s.writes, 3);
    ASSERT_WRITTEN(&s, "a\nb\nc\nother\nd\n");

    assert_int_equal(out_write_line(out, a, 1), 0); /* no batch: at once */
    assert_int_equal(s.writes, 4);
    out_free(out);
    assert_false(s.partial_line);
    buf_free(&s.written);
}

/* A thread in a batch that holds a line of the output, until told to end it. */
typedef struct batch_holder {
    output *out;
    atomic_bool holding;
    atomic_bool end;
} batch_holder;

static void *hold_a_line(void *context)
{
    batch_holder *holder = context;
    out_batch_begin();
    struct iovec line[] = {PART("held")};
    out_write_line(holder->out, line, 1);
    atomic_store(&holder->holding, true);
    while (!atomic_load(&holder->end))
        sched_yield();
    out_batch_end();
    return NULL;
}

typedef struct freer {
    output *out;
    atomic_bool freed;
} freer;

static void *free_output(void *context)
{
    freer *f = context;
    out_free(f->out);
    atomic_store(&f->freed, true);
    return NULL;
}

/*
 * The call that wrote a held line may have ended, and its output be freed, before the batch
 * ends: out_free waits for the batch's end, which still touches the output.
 */
static void test_free_waits_for_a_batch(void **state)
{
    (void)state;
    sink s = {BUFFER_INIT, 0, 0, false, false};
    batch_holder holder = {open_output(&s), false, false};
    out_set_reader_idle(holder.out, true);
    pthread_t holding, freeing;
    assert_int_equal(pthread_create(&holding, NULL, hold_a_line, &holder), 0);
    while (!atomic_load(&holder.holding))
        sched_yield();
    freer f = {holder.out, false};
    assert_int_equal(pthread_create(&freeing, NULL, free_output, &f), 0);
    nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    assert_false(atomic_load(&f.freed));
    atomic_store(&holder.end, true);
    assert_int_equal(pthread_join(holding, NULL), 0);
    assert_int_equal(pthread_join(freeing, NULL), 0);
    assert_true(atomic_load(&f.freed));
    ASSERT_WRITTEN(&s, "held\n");
    buf_free(&s.written);
}

static void test_free_flushes(void **state)
{
    (void)state;
    sink s = {BUFFER_INIT, 0, 0, false, false};
    output *out = open_output(&s);
    struct iovec parts[] = {PART("last words")};
    assert_int_equal(out_write_line(out, parts, 1), 0);
    assert_int_equal(s.writes, 0);
    out_free(out);
    ASSERT_WRITTEN(&s, "last words\n");
    out_free(NULL);
    buf_free(&s.written);
}

static void test_flush_threshold(void **state)
{
    (void)state;
    sink s = {BUFFER_INIT, 0, 0, false, false};
    output *out = open_output(&s);
    char line[999];
    memset(line, 'z', sizeof line);
    struct iovec parts[] = {{line, sizeof line}};
    size_t lines = 0;
    while (s.writes == 0) {
        assert_int_equal(out_write_line(out, parts, 1), 0);
        lines++;
        assert_true(lines < 1000);
    }
    /* The write came as soon as the pending bytes reached the threshold, not later. */
    assert_int_equal(s.written.length, lines * 1000);
    assert_true(s.written.length >= FLUSH_THRESHOLD);
    assert_true(s.written.length < FLUSH_THRESHOLD + 1000);
    /* Then batching starts over. */
    assert_int_equal(out_write_line(out, parts, 1), 0);
    assert_int_equal(s.writes, 1);

    /* One line above the threshold goes out by itself, whole. */
    size_t big_length = 3 * FLUSH_THRESHOLD;
    char *big = malloc(big_length);
    assert_non_null(big);
    memset(big, 'B', big_length);
    struct iovec big_parts[] = {{big, big_length / 2}, {big + big_length / 2, big_length / 2}};
    assert_int_equal(out_write_line(out, big_parts, 2), 0);
    assert_int_equal(s.writes, 2);
    assert_int_equal(s.last_write_length, 1000 + big_length + 1);
    /* Still working afterwards. */
    struct iovec small[] = {PART("small")};
    assert_int_equal(out_write_line(out, small, 1), 0);
    assert_int_equal(s.writes, 2);
    assert_int_equal(out_flush(out), 0);
    assert_int_equal(s.writes, 3);
    assert_int_equal(s.last_write_length, 6);
    free(big);
    out_free(out);
    assert_false(s.partial_line);
    buf_free(&s.written);
}

static void test_failed_write(void **state)
{
    (void)state;
    sink s = {BUFFER_INIT, 0, 0, false, false};
    output *out = open_output(&s);
    struct iovec parts[] = {PART("line")};
    out_set_reader_idle(out, true);
    assert_int_equal(out_write_line(out, parts, 1), 0);
    assert_int_equal(s.writes, 1);
    assert_false(out_failed(out));

    s.fail = true; /* the client went away */
    assert_int_equal(out_write_line(out, parts, 1), -1);
    assert_true(out_failed(out));
    size_t writes = s.writes;
    /* From now on lines are refused and nothing more is attempted. */
    assert_int_equal(out_write_line(out, parts, 1), -1);
    assert_int_equal(out_flush(out), -1);
    out_set_reader_idle(out, false);
    assert_int_equal(out_write_line(out, parts, 1), -1);
    assert_true(out_failed(out));
    assert_int_equal(s.writes, writes);
    out_free(out);
    assert_int_equal(s.writes, writes);
    ASSERT_WRITTEN(&s, "line\n");
    buf_free(&s.written);
}

static void test_failed_flush(void **state)
{
    (void)state;
    sink s = {BUFFER_INIT, 0, 0, true, false};
    output *out = open_output(&s);
    struct iovec parts[] = {PART("line")};
    assert_int_equal(out_write_line(out, parts, 1), 0); /* only pending so far */
    assert_false(out_failed(out));
    assert_int_equal(out_flush(out), -1);
    assert_true(out_failed(out));
    assert_int_equal(out_write_line(out, parts, 1), -1);
    out_free(out);
    assert_int_equal(s.writes, 1);
    buf_free(&s.written);
}

static void test_write_fd(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    output *out = NULL;
    assert_int_equal(out_new(out_write_fd, &fds[1], &out), 0);
    struct iovec parts[] = {PART("{\"id\":"), PART("7}")};
    assert_int_equal(out_write_line(out, parts, 2), 0);
    assert_int_equal(out_flush(out), 0);
    char received[32];
    ssize_t n = read(fds[0], received, sizeof received);
    assert_int_equal(n, 9);
    assert_memory_equal(received, "{\"id\":7}\n", 9);
    out_free(out);
    close(fds[0]);
    close(fds[1]);
}

/* Reads a pipe slowly (a pause first, then small reads) until it ends; counts the bytes. */
typedef struct slow_reader {
    int fd;
    size_t received;
    bool newline_last; /* the last byte read was "\n" */
} slow_reader;

static void *slow_reader_main(void *context)
{
    slow_reader *r = context;
    struct timespec pause = {0, 100 * 1000 * 1000};
    nanosleep(&pause, NULL);
    char chunk[4096];
    ssize_t n;
    while ((n = read(r->fd, chunk, sizeof chunk)) > 0) {
        r->received += (size_t)n;
        r->newline_last = chunk[n - 1] == '\n';
    }
    return NULL;
}

/*
 * A non-blocking pipe (a parent may share one with rpcd) whose reader is slow: the writes find
 * it full and get EAGAIN, which is no failure; they wait for room and every byte goes out.
 */
static void test_write_fd_nonblocking(void **state)
{
    (void)state;
    enum { LINES = 64, LINE_BYTES = 8191 };
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK), 0);
    slow_reader reader = {fds[0], 0, false};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, slow_reader_main, &reader), 0);
    output *out = NULL;
    assert_int_equal(out_new(out_write_fd, &fds[1], &out), 0);
    static char text[LINE_BYTES];
    memset(text, 'x', sizeof text);
    struct iovec parts[] = {{text, sizeof text}};
    for (int i = 0; i < LINES; i++)
        assert_int_equal(out_write_line(out, parts, 1), 0); /* 512 KiB, 8 pipes full */
    assert_int_equal(out_flush(out), 0);
    assert_false(out_failed(out));
    out_free(out);
    close(fds[1]);
    pthread_join(thread, NULL);
    close(fds[0]);
    assert_int_equal(reader.received, (size_t)LINES * (LINE_BYTES + 1));
    assert_true(reader.newline_last);
}

/* A signal handler that does nothing: its only effect is to interrupt a system call. */
static void interrupt_only(int signal_number)
{
    (void)signal_number;
}

typedef struct blocked_write {
    int fd;
    int status;
    atomic_bool started;
} blocked_write;

static void *blocked_write_main(void *context)
{
    blocked_write *w = context;
    static char text[] = "{\"id\":1}\n";
    struct iovec part = {text, sizeof text - 1};
    atomic_store(&w->started, true);
    w->status = out_write_fd(&w->fd, &part, 1); /* the pipe is full: it blocks */
    return NULL;
}

/*
 * A signal taken while a write waits on a full pipe (rpcd's stop and reload signals have
 * handlers, without SA_RESTART) interrupts it with EINTR before a byte went out: the write is
 * made again, not taken for a failed output.
 */
static void test_write_fd_interrupted(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    /* Fill the pipe, then make its end blocking again. */
    int flags = fcntl(fds[1], F_GETFL);
    assert_int_equal(fcntl(fds[1], F_SETFL, flags | O_NONBLOCK), 0);
    static char filler[4096];
    size_t filled = 0;
    for (ssize_t n; (n = write(fds[1], filler, sizeof filler)) > 0;)
        filled += (size_t)n;
    while (write(fds[1], filler, 1) == 1)
        filled++;
    assert_int_equal(fcntl(fds[1], F_SETFL, flags), 0);
    struct sigaction action = {0}, before;
    action.sa_handler = interrupt_only; /* no SA_RESTART */
    sigemptyset(&action.sa_mask);
    assert_int_equal(sigaction(SIGUSR1, &action, &before), 0);
    blocked_write w = {fds[1], -2, false};
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, blocked_write_main, &w), 0);
    while (!atomic_load(&w.started))
        sched_yield();
    struct timespec pause = {0, 50 * 1000 * 1000};
    for (int i = 0; i < 3; i++) { /* the writer is in writev by now; more than once, to be sure */
        nanosleep(&pause, NULL);
        pthread_kill(thread, SIGUSR1);
    }
    nanosleep(&pause, NULL);
    /* Drain: the write completes, whole. */
    static char drained[70000];
    size_t read_total = 0;
    while (read_total < filled + 9) {
        struct pollfd readable = {fds[0], POLLIN, 0};
        if (poll(&readable, 1, test_time_ms(2000)) != 1)
            break; /* the line never came: the write gave up */
        ssize_t n = read(fds[0], drained, sizeof drained);
        assert_true(n > 0);
        read_total += (size_t)n;
    }
    pthread_join(thread, NULL);
    assert_int_equal(w.status, 0);
    assert_int_equal(read_total, filled + 9);
    sigaction(SIGUSR1, &before, NULL);
    close(fds[0]);
    close(fds[1]);
}

/*
 * Ordered output: a ticket given up (its call is left running at the end) lets the lines after
 * it go out, and a line written for it later is dropped, not written out of order.
 */
static void test_line_for_a_ticket_given_up_is_dropped(void **state)
{
    (void)state;
    sink s = {BUFFER_INIT, 0, 0, false, false};
    output *out = open_output(&s);
    out_set_ordered(out, true);
    out_set_reader_idle(out, true);
    uint64_t stuck = out_ticket_take(out);
    uint64_t after = out_ticket_take(out);
    struct iovec second[] = {PART("second")};
    assert_int_equal(out_write_ticket(out, after, second, 1), 0);
    assert_int_equal(s.written.length, 0); /* waits for the first */
    out_ticket_drop(out, stuck);
    ASSERT_WRITTEN(&s, "second\n");
    struct iovec late[] = {PART("late")};
    assert_int_equal(out_write_ticket(out, stuck, late, 1), 0);
    out_ticket_drop(out, stuck); /* harmless again */
    assert_int_equal(out_flush(out), 0);
    ASSERT_WRITTEN(&s, "second\n");
    /* The order goes on from there, even where a later ticket takes the same place in the ring
     * of waiting lines as the one given up (64 places at first). */
    uint64_t waiting[64];
    size_t count = 0;
    do {
        waiting[count] = out_ticket_take(out);
    } while (waiting[count++] != stuck + 64 && count < 64);
    assert_int_equal(waiting[count - 1], stuck + 64);
    assert_int_equal(out_write_ticket(out, stuck, late, 1), 0);
    out_ticket_drop(out, stuck);
    for (size_t i = 0; i + 1 < count; i++)
        out_ticket_drop(out, waiting[i]);
    struct iovec last[] = {PART("last")};
    assert_int_equal(out_write_ticket(out, waiting[count - 1], last, 1), 0);
    assert_int_equal(out_flush(out), 0);
    ASSERT_WRITTEN(&s, "second\nlast\n");
    out_free(out);
    buf_free(&s.written);
}

/*
 * Runs body in a child process (a seized output is kept locked for good) with an output on a
 * pipe, and checks that it returned 0 and that the pipe received expected.
 */
static void seize_in_child(int (*body)(output *out), const char *expected)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        output *out = NULL;
        if (out_new(out_write_fd, &fds[1], &out) != 0)
            _exit(100);
        _exit(body(out));
    }
    close(fds[1]);
    char received[128];
    size_t length = 0;
    ssize_t n;
    while ((n = read(fds[0], received + length, sizeof received - length)) > 0)
        length += (size_t)n;
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(length, strlen(expected));
    assert_memory_equal(received, expected, length);
}

static int seize_pending_then_one_more(output *out)
{
    struct iovec pending[] = {PART("{\"pending\":"), PART("1}")};
    out_write_line(out, pending, 2); /* the reader is not idle: it stays pending */
    if (out_seize_dying(out, 100) != 0)
        return 2;
    struct iovec last[] = {PART("{\"last\":"), PART("2}")};
    if (out_write_seized(out, last, 2) != 0)
        return 3;
    return 0;
}

/* The end from a signal handler: what is pending goes out, whole lines only, then the lines
 * written after the seizure. */
static void test_seize_from_signal(void **state)
{
    (void)state;
    seize_in_child(seize_pending_then_one_more, "{\"pending\":1}\n{\"last\":2}\n");
}

static int seize_with_parked(output *out)
{
    out_set_ordered(out, true);
    uint64_t first = out_ticket_take(out), second = out_ticket_take(out);
    struct iovec parked[] = {PART("{\"parked\":2}")};
    if (first == 0 || second == 0 || out_write_ticket(out, second, parked, 1) != 0)
        return 1;
    return out_seize_dying(out, 100) == 0 ? 0 : 2;
}

/* In ordered output, a finished line still waiting for an earlier one goes out at the end. */
static void test_seize_writes_parked_lines(void **state)
{
    (void)state;
    seize_in_child(seize_with_parked, "{\"parked\":2}\n");
}

/* The test program alone links buffer.c's realloc to this: the next one seizes the output first,
 * as a signal landing in the middle of a change of the output's state would. */
void *__real_realloc(void *data, size_t size);
void *__wrap_realloc(void *data, size_t size);
static output *seize_during_realloc;
static int seized_during_realloc = 1;

void *__wrap_realloc(void *data, size_t size)
{
    output *out = seize_during_realloc;
    if (out) {
        seize_during_realloc = NULL;
        seized_during_realloc = out_seize_dying(out, 0);
    }
    return __real_realloc(data, size);
}

/*
 * A dying thread that has interrupted its own change of the output (the pending buffer being
 * reallocated as a line is added) writes nothing: with one thread no lock is taken, and the
 * buffer it would write from is on its way to another address. Runs first, while the process
 * has never had a second thread.
 */
static void test_seize_refused_in_the_middle_of_a_change(void **state)
{
    (void)state;
    sink s = {BUFFER_INIT, 0, 0, false, false};
    output *out = open_output(&s);
    struct iovec first[] = {PART("{\"first\":1}")};
    assert_int_equal(out_write_line(out, first, 1), 0);
    static char big[8192]; /* more than the pending buffer holds, less than a flush */
    memset(big, 'x', sizeof big);
    struct iovec second[] = {{big, sizeof big}};
    seize_during_realloc = out;
    assert_int_equal(out_write_line(out, second, 1), 0);
    assert_null(seize_during_realloc);
    assert_int_equal(seized_during_realloc, -1);
    assert_int_equal(s.written.length, 0);
    out_free(out);
    buf_free(&s.written);
}

/* A failed output is not seized: nothing may be written. */
static void test_seize_failed_output(void **state)
{
    (void)state;
    sink s = {BUFFER_INIT, 0, 0, true, false};
    output *out = open_output(&s);
    struct iovec parts[] = {PART("line")};
    out_write_line(out, parts, 1);
    assert_int_equal(out_flush(out), -1);
    assert_int_equal(out_seize_dying(out, 100), -1);
    out_free(out);
    buf_free(&s.written);
}

enum { THREADS = 4, LINES_PER_THREAD = 10000 };

typedef struct writer_args {
    output *out;
    int thread;
    int failures;
} writer_args;

/* Line i of thread t: "t<t>:<i>:" then (i % 97) copies of a letter of t, in several parts. */
static void *writer_main(void *context)
{
    writer_args *args = context;
    char padding[128];
    memset(padding, 'a' + args->thread, sizeof padding);
    for (int i = 0; i < LINES_PER_THREAD; i++) {
        char head[32], number[32];
        int head_length = snprintf(head, sizeof head, "t%d", args->thread);
        int number_length = snprintf(number, sizeof number, "%d", i);
        struct iovec parts[] = {
            {head, (size_t)head_length}, PART(":"), {number, (size_t)number_length}, PART(":"),
            {padding, (size_t)(i % 97)},
        };
        if (out_write_line(args->out, parts, 5) != 0)
            args->failures++;
    }
    return NULL;
}

static void test_threads_lines_whole(void **state)
{
    (void)state;
    sink s = {BUFFER_INIT, 0, 0, false, false};
    output *out = open_output(&s);
    pthread_t threads[THREADS];
    writer_args args[THREADS];
    for (int t = 0; t < THREADS; t++) {
        args[t] = (writer_args){out, t, 0};
        assert_int_equal(pthread_create(&threads[t], NULL, writer_main, &args[t]), 0);
    }
    /* Meanwhile, the reader goes idle and busy again, and flushes happen from here too. */
    for (int round = 0; round < 2000; round++) {
        out_set_reader_idle(out, round % 2 == 0);
        if (round % 7 == 0)
            out_flush(out);
    }
    out_set_reader_idle(out, false);
    for (int t = 0; t < THREADS; t++) {
        assert_int_equal(pthread_join(threads[t], NULL), 0);
        assert_int_equal(args[t].failures, 0);
    }
    assert_int_equal(out_flush(out), 0);

    bool *seen = calloc(THREADS * LINES_PER_THREAD, sizeof *seen);
    assert_non_null(seen);
    int next_expected[THREADS] = {0};
    size_t count = 0;
    const char *p = s.written.data, *end = s.written.data + s.written.length;
    while (p < end) {
        const char *newline = memchr(p, '\n', (size_t)(end - p));
        assert_non_null(newline);
        int thread = -1, index = -1, consumed = 0;
        char line[256];
        size_t length = (size_t)(newline - p);
        assert_true(length < sizeof line);
        memcpy(line, p, length);
        line[length] = '\0';
        if (sscanf(line, "t%d:%d:%n", &thread, &index, &consumed) != 2 || thread < 0 ||
            thread >= THREADS || index < 0 || index >= LINES_PER_THREAD)
            fail_msg("mangled line '%s'", line);
        size_t padding = length - (size_t)consumed;
        if (padding != (size_t)(index % 97))
            fail_msg("line '%s' has %zu padding bytes, expected %d", line, padding, index % 97);
        for (size_t i = (size_t)consumed; i < length; i++)
            if (line[i] != 'a' + thread)
                fail_msg("line '%s' holds bytes of another line", line);
        if (seen[thread * LINES_PER_THREAD + index])
            fail_msg("line '%s' arrived twice", line);
        seen[thread * LINES_PER_THREAD + index] = true;
        /* One thread's lines keep their order. */
        assert_int_equal(index, next_expected[thread]);
        next_expected[thread]++;
        count++;
        p = newline + 1;
    }
    assert_int_equal(count, THREADS * LINES_PER_THREAD);
    free(seen);
    out_free(out);
    assert_false(s.partial_line);
    buf_free(&s.written);
}

/* A write function that blocks until released, so that output backs up behind it. */
typedef struct slow_sink {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    bool released;
    bool writing; /* a write has begun */
    size_t bytes;
} slow_sink;

static int slow_write(void *context, const struct iovec *parts, int part_count)
{
    size_t length = 0;
    for (int i = 0; i < part_count; i++)
        length += parts[i].iov_len;
    slow_sink *s = context;
    pthread_mutex_lock(&s->lock);
    s->writing = true;
    pthread_cond_broadcast(&s->changed);
    while (!s->released)
        pthread_cond_wait(&s->changed, &s->lock);
    s->bytes += length;
    pthread_mutex_unlock(&s->lock);
    return 0;
}

typedef struct appender {
    output *out;
    atomic_size_t lines_written;
} appender;

enum { BACKED_UP_LINES = 200, BACKED_UP_LINE_BYTES = 4096 };

static void *append_many(void *argument)
{
    appender *a = argument;
    static char text[BACKED_UP_LINE_BYTES];
    memset(text, 'x', sizeof text);
    for (int i = 0; i < BACKED_UP_LINES; i++) {
        struct iovec part = {text, sizeof text - 1};
        out_write_line(a->out, &part, 1);
        atomic_fetch_add(&a->lines_written, 1);
    }
    return NULL;
}

static void *append_one(void *argument)
{
    appender *a = argument;
    static char text[BACKED_UP_LINE_BYTES];
    memset(text, 'y', sizeof text);
    struct iovec part = {text, sizeof text - 1};
    out_write_line(a->out, &part, 1);
    atomic_fetch_add(&a->lines_written, 1);
    return NULL;
}

/*
 * While a write is blocked (a client that does not read), other threads add at most about
 * FLUSH_THRESHOLD before they block too: their calls stay in flight, so reading stops at
 * max_in_flight and memory stays bounded.
 */
static void test_backed_up_output_blocks_writers(void **state)
{
    (void)state;
    slow_sink s = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false, 0};
    output *out = NULL;
    assert_int_equal(out_new(slow_write, &s, &out), 0);
    out_set_reader_idle(out, true); /* every line is flushed at once */
    /* One thread becomes the writer and blocks in the write; another then keeps adding. */
    appender first = {out, 0};
    pthread_t writer, thread;
    assert_int_equal(pthread_create(&writer, NULL, append_one, &first), 0);
    pthread_mutex_lock(&s.lock);
    while (!s.writing)
        pthread_cond_wait(&s.changed, &s.lock);
    pthread_mutex_unlock(&s.lock);
    appender a = {out, 0};
    assert_int_equal(pthread_create(&thread, NULL, append_many, &a), 0);
    usleep(200 * 1000); /* time to run ahead, if nothing held it back */
    size_t ahead = atomic_load(&a.lines_written);
    assert_true(ahead * BACKED_UP_LINE_BYTES <= FLUSH_THRESHOLD + 2 * BACKED_UP_LINE_BYTES);
    pthread_mutex_lock(&s.lock);
    s.released = true;
    pthread_cond_broadcast(&s.changed);
    pthread_mutex_unlock(&s.lock);
    assert_int_equal(pthread_join(thread, NULL), 0);
    assert_int_equal(pthread_join(writer, NULL), 0);
    assert_int_equal(out_flush(out), 0);
    assert_int_equal(s.bytes, (size_t)(BACKED_UP_LINES + 1) * BACKED_UP_LINE_BYTES);
    out_free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seize_refused_in_the_middle_of_a_change),
        cmocka_unit_test(test_line_from_parts),
        cmocka_unit_test(test_reader_idle),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_free_waits_for_a_batch),
        cmocka_unit_test(test_free_flushes),
        cmocka_unit_test(test_flush_threshold),
        cmocka_unit_test(test_failed_write),
        cmocka_unit_test(test_failed_flush),
        cmocka_unit_test(test_write_fd),
        cmocka_unit_test(test_write_fd_nonblocking),
        cmocka_unit_test(test_write_fd_interrupted),
        cmocka_unit_test(test_line_for_a_ticket_given_up_is_dropped),
        cmocka_unit_test(test_seize_from_signal),
        cmocka_unit_test(test_seize_writes_parked_lines),
        cmocka_unit_test(test_seize_failed_output),
        cmocka_unit_test(test_threads_lines_whole),
        cmocka_unit_test(test_backed_up_output_blocks_writers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
