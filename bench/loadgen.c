/* SPDX-License-Identifier: MIT */
/*
 * loadgen: starts a JSON-RPC stdio server over pipes and measures one scenario: pipelined
 * throughput, ping-pong latency, start-up to first reply, batches, or a payload-size sweep.
 * One JSON object per scenario goes to stdout, readable lines to stderr (see bench/README.md).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

/* The params of a "small" request: a typical tool call argument object. */
#define SMALL_PARAMS "{\"text\":\"hello, world\"}"
#define READ_CHUNK (256 * 1024)
/* Requests are gathered into writes of about this size, as a real pipelining client would. */
#define FLUSH_BYTES (64 * 1024)
/* Above this, the params are written straight from their own buffer instead of copied. */
#define LARGE_PARAMS (32 * 1024)
/* How far into a single reply the "error" member is looked for (it follows the id). */
#define ERROR_SCAN_BYTES 512
/* The longest method name -m takes; the request head holds it and the rest of the envelope. */
#define METHOD_MAX 200
#define HEAD_BYTES (METHOD_MAX + 96)

static struct {
    char **command;
    const char *label;
    const char *scenario;
    const char *method;
    const char *params; /* NULL: by payload_bytes */
    const char *stderr_path;
    int timeout_ms;
    long requests; /* 0: the scenario's default */
    int window;
    int batch;
    long payload_bytes; /* -1: SMALL_PARAMS */
    int repeat;
    const char *sizes;
    double seconds;
    long max_requests;
    long client_work_ns; /* latency: busy work after each round trip, outside the timing */
} opt = {
    .method = "echo",
    .stderr_path = "/dev/null",
    .timeout_ms = 60000,
    .window = 256,
    .batch = 50,
    .payload_bytes = -1,
    .repeat = 10,
    .sizes = "100,1000,10000,100000,1000000,16000000",
    .seconds = 1.0,
    .max_requests = 200000,
};

/* The first failure, from whichever thread saw it; later ones are consequences. */
static pthread_mutex_t failure_lock = PTHREAD_MUTEX_INITIALIZER;
static char failure[512];

static void fail_note(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void fail_note(const char *format, ...)
{
    va_list args;
    pthread_mutex_lock(&failure_lock);
    if (failure[0] == '\0') {
        va_start(args, format);
        vsnprintf(failure, sizeof failure, format, args);
        va_end(args);
    }
    pthread_mutex_unlock(&failure_lock);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the server process ---- */

typedef struct {
    pid_t pid;
    int to_server;   /* its stdin, non-blocking */
    int from_server; /* its stdout, non-blocking */
} server;

typedef struct {
    long max_rss_kib;
    long cpu_us;
} server_usage;

static int set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return -1;
    return 0;
}

static void close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

/*
 * Forks and execs opt.command with pipes on stdin and stdout. An exec failure comes back
 * through a close-on-exec pipe, so a mistyped command fails here rather than as a timeout.
 */
static int server_start(server *srv)
{
    int to[2] = {-1, -1}, from[2] = {-1, -1}, report[2] = {-1, -1};
    int err_fd = -1, child_errno = 0;

    srv->pid = -1;
    srv->to_server = srv->from_server = -1;
    if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0 || pipe2(report, O_CLOEXEC) < 0) {
        fail_note("pipe: %s", strerror(errno));
        goto fail;
    }
    err_fd = open(opt.stderr_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (err_fd < 0) {
        fail_note("%s: %s", opt.stderr_path, strerror(errno));
        goto fail;
    }
    srv->pid = fork();
    if (srv->pid < 0) {
        fail_note("fork: %s", strerror(errno));
        goto fail;
    }
    if (srv->pid == 0) {
        /* An ignored SIGPIPE survives exec; the server gets the default it would normally have. */
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigaction(SIGPIPE, &dfl, NULL);
        if (dup2(to[0], STDIN_FILENO) >= 0 && dup2(from[1], STDOUT_FILENO) >= 0 &&
            dup2(err_fd, STDERR_FILENO) >= 0)
            execvp(opt.command[0], opt.command);
        child_errno = errno;
        ssize_t ignored = write(report[1], &child_errno, sizeof child_errno);
        (void)ignored;
        _exit(127);
    }
    close_fd(&to[0]);
    close_fd(&from[1]);
    close_fd(&report[1]);
    close_fd(&err_fd);
    ssize_t got;
    do
        got = read(report[0], &child_errno, sizeof child_errno);
    while (got < 0 && errno == EINTR);
    close_fd(&report[0]);
    if (got > 0) {
        fail_note("cannot run %s: %s", opt.command[0], strerror(child_errno));
        waitpid(srv->pid, NULL, 0);
        srv->pid = -1;
        goto fail;
    }
    srv->to_server = to[1];
    srv->from_server = from[0];
    if (set_nonblocking(srv->to_server) < 0 || set_nonblocking(srv->from_server) < 0) {
        fail_note("fcntl: %s", strerror(errno));
        goto fail;
    }
    return 0;
fail:
    if (srv->pid > 0) {
        kill(srv->pid, SIGKILL);
        waitpid(srv->pid, NULL, 0);
        srv->pid = -1;
    }
    close_fd(&srv->to_server);
    close_fd(&srv->from_server);
    close_fd(&to[0]);
    close_fd(&to[1]);
    close_fd(&from[0]);
    close_fd(&from[1]);
    close_fd(&report[0]);
    close_fd(&report[1]);
    close_fd(&err_fd);
    return -1;
}

static void server_kill(server *srv)
{
    close_fd(&srv->to_server);
    close_fd(&srv->from_server);
    if (srv->pid > 0) {
        kill(srv->pid, SIGKILL);
        waitpid(srv->pid, NULL, 0);
        srv->pid = -1;
    }
}

/*
 * The CPU time the server's threads have used so far, in µs: the sum of the first field of
 * /proc/PID/task/<tid>/schedstat (ns on the CPU). -1 when the kernel does not provide it.
 * Subtracted from the total that wait4() reports, it leaves what the server spent after this
 * point, start-up excluded (threads that already ended are in neither figure).
 */
static long server_cpu_now_us(pid_t pid)
{
    char path[64];
    long long total_ns = 0;
    int found = 0;

    snprintf(path, sizeof path, "/proc/%ld/task", (long)pid);
    DIR *dir = opendir(path);
    if (!dir)
        return -1;
    for (struct dirent *entry; (entry = readdir(dir)) != NULL;) {
        if (entry->d_name[0] == '.')
            continue;
        char file[sizeof path + 280];
        snprintf(file, sizeof file, "/proc/%ld/task/%s/schedstat", (long)pid, entry->d_name);
        FILE *stat = fopen(file, "r");
        if (!stat)
            continue; /* the thread has just ended */
        long long ns;
        if (fscanf(stat, "%lld", &ns) == 1) {
            total_ns += ns;
            found = 1;
        }
        fclose(stat);
    }
    closedir(dir);
    return found ? (long)(total_ns / 1000) : -1;
}

/*
 * Closes the server's stdin and waits, at most opt.timeout_ms, for it to exit; its peak RSS and
 * CPU time come from wait4(). The caller has already read its stdout to the end.
 */
static int server_finish(server *srv, server_usage *usage)
{
    struct rusage ru;
    int status = 0;
    double deadline = now_s() + opt.timeout_ms / 1000.0;
    useconds_t nap = 100;

    close_fd(&srv->to_server);
    close_fd(&srv->from_server);
    for (;;) {
        pid_t done = wait4(srv->pid, &status, WNOHANG, &ru);
        if (done == srv->pid)
            break;
        if (done < 0 && errno != EINTR) {
            fail_note("wait4: %s", strerror(errno));
            server_kill(srv);
            return -1;
        }
        if (now_s() > deadline) {
            fail_note("the server did not exit within %d s of the end of its input",
                      opt.timeout_ms / 1000);
            server_kill(srv);
            return -1;
        }
        usleep(nap);
        if (nap < 10000)
            nap *= 2;
    }
    srv->pid = -1;
    usage->max_rss_kib = ru.ru_maxrss;
    usage->cpu_us = (long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000L +
                    ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
    if (WIFSIGNALED(status)) {
        fail_note("the server was killed by signal %d", WTERMSIG(status));
        return -1;
    }
    if (WEXITSTATUS(status) != 0) {
        fail_note("the server exited with status %d", WEXITSTATUS(status));
        return -1;
    }
    return 0;
}

/* ---- bounded I/O ---- */

/* Writes every byte of iov, waiting at most opt.timeout_ms each time the pipe is full. */
static int write_full(int fd, struct iovec *iov, int count)
{
    while (count > 0) {
        ssize_t wrote = writev(fd, iov, count);
        if (wrote < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN) {
                fail_note("writing to the server: %s", strerror(errno));
                return -1;
            }
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            int ready = poll(&pfd, 1, opt.timeout_ms);
            if (ready == 0) {
                fail_note("the server read nothing for %d s", opt.timeout_ms / 1000);
                return -1;
            }
            if (ready < 0 && errno != EINTR) {
                fail_note("poll: %s", strerror(errno));
                return -1;
            }
            continue;
        }
        while (count > 0 && (size_t)wrote >= iov->iov_len) {
            wrote -= (ssize_t)iov->iov_len;
            iov++;
            count--;
        }
        if (count > 0) {
            iov->iov_base = (char *)iov->iov_base + wrote;
            iov->iov_len -= (size_t)wrote;
        }
    }
    return 0;
}

static int write_bytes(int fd, const char *data, size_t length)
{
    struct iovec iov = {.iov_base = (void *)data, .iov_len = length};
    return write_full(fd, &iov, 1);
}

typedef struct {
    char *data;
    size_t length;
    size_t capacity;
} byte_buffer;

static int buffer_reserve(byte_buffer *buf, size_t more)
{
    if (buf->capacity - buf->length >= more)
        return 0;
    size_t capacity = buf->capacity ? buf->capacity : 4096;
    while (capacity - buf->length < more)
        capacity *= 2;
    char *data = realloc(buf->data, capacity);
    if (!data) {
        fail_note("out of memory");
        return -1;
    }
    buf->data = data;
    buf->capacity = capacity;
    return 0;
}

/* Replies as lines: complete lines are handed out in place, the partial rest is kept. */
typedef struct {
    byte_buffer buf;
    size_t start;   /* first byte of the next line */
    size_t scanned; /* bytes before this hold no newline after start */
} line_buffer;

/* Returns 1 and the next complete line (without its newline), or 0 when none is buffered. */
static int next_line(line_buffer *lb, const char **line, size_t *length)
{
    char *newline = memchr(lb->buf.data + lb->scanned, '\n', lb->buf.length - lb->scanned);
    if (!newline) {
        lb->scanned = lb->buf.length;
        return 0;
    }
    *line = lb->buf.data + lb->start;
    *length = (size_t)(newline - *line);
    lb->start = lb->scanned = (size_t)(newline - lb->buf.data) + 1;
    return 1;
}

/* Reads what is available, waiting at most opt.timeout_ms: >0 bytes read, 0 at EOF, -1. */
static int read_more(int fd, line_buffer *lb)
{
    if (lb->start > 0) {
        memmove(lb->buf.data, lb->buf.data + lb->start, lb->buf.length - lb->start);
        lb->buf.length -= lb->start;
        lb->scanned -= lb->start;
        lb->start = 0;
    }
    if (buffer_reserve(&lb->buf, READ_CHUNK) < 0)
        return -1;
    for (;;) {
        ssize_t got = read(fd, lb->buf.data + lb->buf.length, lb->buf.capacity - lb->buf.length);
        if (got > 0) {
            lb->buf.length += (size_t)got;
            return 1;
        }
        if (got == 0)
            return 0;
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN) {
            fail_note("reading from the server: %s", strerror(errno));
            return -1;
        }
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int ready = poll(&pfd, 1, opt.timeout_ms);
        if (ready == 0) {
            fail_note("no reply from the server for %d s", opt.timeout_ms / 1000);
            return -1;
        }
        if (ready < 0 && errno != EINTR) {
            fail_note("poll: %s", strerror(errno));
            return -1;
        }
    }
}

static int read_line(int fd, line_buffer *lb, const char **line, size_t *length)
{
    while (!next_line(lb, line, length)) {
        int got = read_more(fd, lb);
        if (got == 0)
            fail_note("the server closed its stdout while a reply was awaited");
        if (got <= 0)
            return -1;
    }
    return 0;
}

/*
 * Finds the next "id" member from *pos and reads its digits: 1 and *id, 0 when there is none,
 * -1 when an id is not a plain non-negative integer. A fast scan, not a parser: the payloads
 * this tool sends cannot contain the text "id".
 */
static int scan_id(const char *line, size_t length, size_t *pos, long *id)
{
    const char *end = line + length;
    for (;;) {
        const char *p = memmem(line + *pos, length - *pos, "\"id\"", 4);
        if (!p)
            return 0;
        p += 4;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        *pos = (size_t)(p - line);
        if (p == end || *p != ':')
            continue; /* "id" as a value, not a member name */
        p++;
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        if (p == end || *p < '0' || *p > '9')
            return -1;
        long value = 0;
        while (p < end && *p >= '0' && *p <= '9' && value < LONG_MAX / 10)
            value = value * 10 + (*p++ - '0');
        *pos = (size_t)(p - line);
        *id = value;
        return 1;
    }
}

static bool has_error(const char *line, size_t length, size_t limit)
{
    return memmem(line, length < limit ? length : limit, "\"error\"", 7) != NULL;
}

static void note_bad_reply(const char *what, const char *line, size_t length)
{
    fail_note("%s: %.*s%s", what, (int)(length < 200 ? length : 200), line,
              length > 200 ? "..." : "");
}

/* ---- requests ---- */

static int append_request(byte_buffer *buf, long id, const char *params, size_t params_length)
{
    if (buffer_reserve(buf, params_length + HEAD_BYTES) < 0)
        return -1;
    int n =
        snprintf(buf->data + buf->length, HEAD_BYTES,
                 "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\",\"params\":", id, opt.method);
    buf->length += (size_t)n;
    memcpy(buf->data + buf->length, params, params_length);
    buf->length += params_length;
    buf->data[buf->length++] = '}';
    return 0;
}

/* Writes one request line; large params go out from their own buffer, uncopied. */
static int send_request(int fd, long id, const char *params, size_t params_length)
{
    char head[HEAD_BYTES];
    int n =
        snprintf(head, sizeof head,
                 "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\",\"params\":", id, opt.method);
    struct iovec iov[3] = {
        {.iov_base = head, .iov_len = (size_t)n},
        {.iov_base = (void *)params, .iov_len = params_length},
        {.iov_base = "}\n", .iov_len = 2},
    };
    return write_full(fd, iov, 3);
}

/*
 * Params ["xxx...x"]: a string of size bytes (the protocol wants params to be an array); with
 * --params, that text whatever the size.
 */
static char *make_params(long size, size_t *length)
{
    if (opt.params) {
        *length = strlen(opt.params);
        return strdup(opt.params);
    }
    if (size < 0) {
        *length = strlen(SMALL_PARAMS);
        return strdup(SMALL_PARAMS);
    }
    char *params = malloc((size_t)size + 5);
    if (!params)
        return NULL;
    params[0] = '[';
    params[1] = '"';
    memset(params + 2, 'x', (size_t)size);
    params[size + 2] = '"';
    params[size + 3] = ']';
    params[size + 4] = '\0';
    *length = (size_t)size + 4;
    return params;
}

/* One request, one reply, whose id must be the one sent. */
static int round_trip(server *srv, line_buffer *lb, long id, const char *params, size_t length)
{
    const char *line;
    size_t line_length, pos = 0;
    long got;

    if (send_request(srv->to_server, id, params, length) < 0 ||
        read_line(srv->from_server, lb, &line, &line_length) < 0)
        return -1;
    if (scan_id(line, line_length, &pos, &got) != 1 || got != id) {
        note_bad_reply("reply without the expected id", line, line_length);
        return -1;
    }
    if (has_error(line, line_length, ERROR_SCAN_BYTES)) {
        note_bad_reply("error reply", line, line_length);
        return -1;
    }
    return 0;
}

/* After the last reply: closes stdin, expects EOF and nothing more, then reaps the server. */
static int end_session(server *srv, line_buffer *lb, server_usage *usage)
{
    close_fd(&srv->to_server);
    for (;;) {
        int got = read_more(srv->from_server, lb);
        if (got < 0)
            goto fail;
        if (got == 0)
            break;
    }
    if (lb->buf.length > lb->start) {
        note_bad_reply("unexpected output after the last reply", lb->buf.data + lb->start,
                       lb->buf.length - lb->start);
        goto fail;
    }
    return server_finish(srv, usage);
fail:
    server_kill(srv);
    return -1;
}

/* ---- pipelined runs: throughput, batches, payload sizes ---- */

typedef struct {
    server srv;
    line_buffer lb;
    const char *params;
    size_t params_length;
    int window;          /* requests in flight at most */
    int batch;           /* requests per line; 0: one request per line */
    long max_requests;   /* the count to send, or with duration > 0 the cap */
    long min_requests;   /* with duration > 0 */
    double duration;     /* > 0: send until this many seconds have passed */
    unsigned char *seen; /* seen[id] for ids 1..max_requests */

    pthread_mutex_t lock;
    pthread_cond_t cond;
    atomic_long received;
    long total; /* requests sent, known once the writer is done; -1 before */
    bool writer_waiting;
    atomic_bool failed;
    bool reader_done;

    double t_start;
    double t_last;    /* when the last reply arrived */
    long cpu_us_warm; /* the server's CPU time after the warm-up reply; -1: unknown */
} pipeline;

/*
 * Marks the run failed and kills the server: the other thread, blocked on a pipe, then sees
 * EOF or EPIPE at once instead of waiting for the timeout.
 */
static void pipeline_fail(pipeline *pl)
{
    if (pl->srv.pid > 0)
        kill(pl->srv.pid, SIGKILL);
    pthread_mutex_lock(&pl->lock);
    atomic_store(&pl->failed, true);
    pthread_cond_broadcast(&pl->cond);
    pthread_mutex_unlock(&pl->lock);
}

/* Waits until `more` requests fit in the window; the caller has flushed what it holds. */
static int wait_window(pipeline *pl, long sent, long more)
{
    struct timespec deadline;
    int status = 0;

    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += opt.timeout_ms / 1000;
    pthread_mutex_lock(&pl->lock);
    pl->writer_waiting = true;
    for (;;) {
        long in_flight = sent - atomic_load(&pl->received);
        if (in_flight == 0 || in_flight + more <= pl->window)
            break;
        if (atomic_load(&pl->failed)) {
            status = -1;
            break;
        }
        if (pl->reader_done) {
            fail_note("the server closed its stdout with %ld requests unanswered", in_flight);
            status = -1;
            break;
        }
        if (pthread_cond_timedwait(&pl->cond, &pl->lock, &deadline) == ETIMEDOUT) {
            fail_note("no reply for %d s with %ld requests in flight", opt.timeout_ms / 1000,
                      in_flight);
            status = -1;
            break;
        }
    }
    pl->writer_waiting = false;
    pthread_mutex_unlock(&pl->lock);
    return status;
}

static int flush_buffer(pipeline *pl, byte_buffer *out)
{
    if (out->length == 0)
        return 0;
    int status = write_bytes(pl->srv.to_server, out->data, out->length);
    out->length = 0;
    return status;
}

static void *writer_main(void *arg)
{
    pipeline *pl = arg;
    byte_buffer out = {0};
    long sent = 0;
    bool large = pl->batch == 0 && pl->params_length > LARGE_PARAMS;

    while (sent < pl->max_requests && !atomic_load(&pl->failed)) {
        if (pl->duration > 0 && sent >= pl->min_requests && now_s() - pl->t_start >= pl->duration)
            break;
        long more = pl->batch ? pl->batch : 1;
        if (more > pl->max_requests - sent)
            more = pl->max_requests - sent;
        long in_flight = sent - atomic_load(&pl->received);
        if (in_flight > 0 && in_flight + more > pl->window) {
            if (flush_buffer(pl, &out) < 0 || wait_window(pl, sent, more) < 0)
                goto fail;
        }
        if (large) {
            if (send_request(pl->srv.to_server, sent + 1, pl->params, pl->params_length) < 0)
                goto fail;
            sent++;
            continue;
        }
        if (pl->batch) {
            if (buffer_reserve(&out, 1) < 0)
                goto fail;
            out.data[out.length++] = '[';
        }
        for (long i = 0; i < more; i++) {
            if (i > 0) {
                if (buffer_reserve(&out, 1) < 0)
                    goto fail;
                out.data[out.length++] = ',';
            }
            if (append_request(&out, sent + 1 + i, pl->params, pl->params_length) < 0)
                goto fail;
        }
        if (buffer_reserve(&out, 2) < 0)
            goto fail;
        if (pl->batch)
            out.data[out.length++] = ']';
        out.data[out.length++] = '\n';
        sent += more;
        if (out.length >= FLUSH_BYTES && flush_buffer(pl, &out) < 0)
            goto fail;
    }
    if (flush_buffer(pl, &out) < 0)
        goto fail;
    pthread_mutex_lock(&pl->lock);
    pl->total = sent;
    pthread_mutex_unlock(&pl->lock);
    /* End of input: the server answers what it has and exits, which ends the reader. */
    close_fd(&pl->srv.to_server);
    free(out.data);
    return NULL;
fail:
    free(out.data);
    pipeline_fail(pl);
    return NULL;
}

/* Counts the ids of one reply line; every id must be new and in range. */
static int take_reply(pipeline *pl, const char *line, size_t length, long *count)
{
    size_t pos = 0;
    long id, found = 0;
    int status;

    while ((status = scan_id(line, length, &pos, &id)) == 1) {
        if (id == 0) {
            fail_note("id 0 (the warm-up request) got a second reply");
            return -1;
        }
        if (id < 0 || id > pl->max_requests) {
            note_bad_reply("reply with an id never sent", line, length);
            return -1;
        }
        if (pl->seen[id]) {
            fail_note("id %ld got a second reply", id);
            return -1;
        }
        pl->seen[id] = 1;
        found++;
        if (!pl->batch)
            break;
    }
    if (status < 0 || found == 0) {
        note_bad_reply("reply without a numeric id", line, length);
        return -1;
    }
    if (has_error(line, length, pl->batch ? length : ERROR_SCAN_BYTES)) {
        note_bad_reply("error reply", line, length);
        return -1;
    }
    *count += found;
    return 0;
}

static void *reader_main(void *arg)
{
    pipeline *pl = arg;
    const char *line;
    size_t length;

    for (;;) {
        long count = 0;
        while (next_line(&pl->lb, &line, &length))
            if (take_reply(pl, line, length, &count) < 0)
                goto fail;
        if (count > 0) {
            pl->t_last = now_s();
            atomic_fetch_add(&pl->received, count);
            pthread_mutex_lock(&pl->lock);
            if (pl->writer_waiting)
                pthread_cond_signal(&pl->cond);
            pthread_mutex_unlock(&pl->lock);
        }
        if (atomic_load(&pl->failed))
            goto fail;
        int got = read_more(pl->srv.from_server, &pl->lb);
        if (got < 0)
            goto fail;
        if (got == 0)
            break;
    }
    if (pl->lb.buf.length > pl->lb.start) {
        fail_note("the server's output ends with an incomplete line");
        goto fail;
    }
    pthread_mutex_lock(&pl->lock);
    pl->reader_done = true;
    pthread_cond_broadcast(&pl->cond);
    pthread_mutex_unlock(&pl->lock);
    return NULL;
fail:
    pipeline_fail(pl);
    return NULL;
}

/*
 * Starts the server, waits for one warm-up reply (id 0) so that start-up is not measured,
 * then writes and reads on two threads. Every id must get exactly one reply.
 */
static int run_pipeline(pipeline *pl, server_usage *usage, double *seconds)
{
    pthread_t writer, reader;
    int status = -1;

    pthread_mutex_init(&pl->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&pl->cond, &attr);
    pthread_condattr_destroy(&attr);
    atomic_init(&pl->received, 0);
    atomic_init(&pl->failed, false);
    pl->total = -1;
    pl->seen = calloc((size_t)pl->max_requests + 1, 1);
    if (!pl->seen) {
        fail_note("out of memory");
        goto done;
    }
    if (server_start(&pl->srv) < 0)
        goto done;
    if (round_trip(&pl->srv, &pl->lb, 0, pl->params, pl->params_length) < 0)
        goto kill;
    pl->cpu_us_warm = server_cpu_now_us(pl->srv.pid);
    pl->t_start = now_s();
    pl->t_last = pl->t_start;
    if (pthread_create(&reader, NULL, reader_main, pl) != 0) {
        fail_note("pthread_create failed");
        goto kill;
    }
    if (pthread_create(&writer, NULL, writer_main, pl) != 0) {
        fail_note("pthread_create failed");
        pipeline_fail(pl);
    } else {
        pthread_join(writer, NULL);
    }
    pthread_join(reader, NULL);
    if (atomic_load(&pl->failed))
        goto kill;
    long received = atomic_load(&pl->received);
    if (received != pl->total) {
        fail_note("%ld requests sent, %ld replies", pl->total, received);
        goto kill;
    }
    for (long id = 1; id <= pl->total; id++) {
        if (!pl->seen[id]) {
            fail_note("id %ld got no reply", id);
            goto kill;
        }
    }
    *seconds = pl->t_last - pl->t_start;
    status = server_finish(&pl->srv, usage);
    goto done;
kill:
    server_kill(&pl->srv);
done:
    free(pl->seen);
    free(pl->lb.buf.data);
    pthread_cond_destroy(&pl->cond);
    pthread_mutex_destroy(&pl->lock);
    return status;
}

/* ---- reports ---- */

static json_t *report_new(const char *scenario)
{
    json_t *command = json_array();
    for (char **arg = opt.command; *arg; arg++)
        json_array_append_new(command, json_string(*arg));
    return json_pack("{s:s, s:s, s:o}", "scenario", scenario, "server", opt.label, "command",
                     command);
}

static void report_usage(json_t *report, const server_usage *usage, long requests)
{
    json_object_set_new(report, "server_max_rss_kib", json_integer(usage->max_rss_kib));
    json_object_set_new(report, "server_cpu_us", json_integer(usage->cpu_us));
    json_object_set_new(report, "server_cpu_us_per_request",
                        json_real(requests > 0 ? (double)usage->cpu_us / (double)requests : 0));
}

static int report_print(json_t *report)
{
    int status = json_dumpf(report, stdout, JSON_COMPACT | JSON_REAL_PRECISION(6));
    json_decref(report);
    if (status != 0 || fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
        fail_note("writing the report failed");
        return -1;
    }
    return 0;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted values. */
static double percentile(const double *sorted, size_t count, double fraction)
{
    size_t rank = (size_t)(fraction * (double)count + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > count)
        rank = count;
    return sorted[rank - 1];
}

/* ---- scenarios ---- */

static int pipelined_report(const char *scenario, long payload_bytes, int window, int batch,
                            long requests, double duration, json_t **out)
{
    /* A timed run sends at least one full window, so that the window is what is measured. */
    pipeline pl = {.window = window,
                   .batch = batch,
                   .max_requests = requests,
                   .duration = duration,
                   .min_requests = window};
    server_usage usage;
    double seconds = 0;
    char *params = make_params(payload_bytes, &pl.params_length);

    if (!params) {
        fail_note("out of memory");
        return -1;
    }
    pl.params = params;
    int status = run_pipeline(&pl, &usage, &seconds);
    free(params);
    if (status < 0)
        return -1;
    long total = pl.total;
    double rps = seconds > 0 ? (double)total / seconds : 0;
    json_t *report = report_new(scenario);
    json_object_set_new(report, "requests", json_integer(total));
    json_object_set_new(report, "window", json_integer(window));
    if (batch)
        json_object_set_new(report, "batch", json_integer(batch));
    json_object_set_new(report, "payload_bytes",
                        json_integer(payload_bytes < 0 ? (long)pl.params_length : payload_bytes));
    json_object_set_new(report, "seconds", json_real(seconds));
    json_object_set_new(report, "requests_per_s", json_real(rps));
    if (payload_bytes >= 0)
        json_object_set_new(report, "mb_per_s", json_real(rps * (double)payload_bytes / 1e6));
    report_usage(report, &usage, total);
    /* Without start-up and warm-up: what the requests themselves cost. */
    double steady = -1;
    if (pl.cpu_us_warm >= 0 && usage.cpu_us >= pl.cpu_us_warm && total > 0) {
        steady = (double)(usage.cpu_us - pl.cpu_us_warm) / (double)total;
        json_object_set_new(report, "server_cpu_us_at_warmup", json_integer(pl.cpu_us_warm));
        json_object_set_new(report, "server_cpu_us_per_request_steady", json_real(steady));
    }
    fprintf(stderr,
            "%s %s: %ld requests%s, window %d, params %zu B: %.0f req/s, %.1f MB/s; "
            "server peak RSS %ld KiB, CPU %.2f us/request (%.2f after warm-up)\n",
            opt.label, scenario, total, batch ? " in batches" : "", window, pl.params_length, rps,
            rps * (double)pl.params_length / 1e6, usage.max_rss_kib,
            total ? (double)usage.cpu_us / (double)total : 0.0, steady);
    *out = report;
    return 0;
}

static int scenario_throughput(void)
{
    json_t *report;
    long requests = opt.requests ? opt.requests : 100000;
    if (pipelined_report("throughput", opt.payload_bytes, opt.window, 0, requests, 0, &report) < 0)
        return -1;
    return report_print(report);
}

static int scenario_batch(void)
{
    json_t *report;
    long requests = opt.requests ? opt.requests : 100000;
    if (pipelined_report("batch", opt.payload_bytes, opt.window, opt.batch, requests, 0, &report) <
        0)
        return -1;
    return report_print(report);
}

/* Small payloads keep many requests in flight; huge ones few, so memory stays bounded. */
static int window_for(long size)
{
    if (size <= 16 * 1000)
        return 256;
    if (size <= 128 * 1000)
        return 64;
    if (size <= 1000 * 1000)
        return 16;
    return 4;
}

static int scenario_payload(void)
{
    json_t *points = json_array();
    char *sizes = strdup(opt.sizes), *save = NULL;

    if (!sizes) {
        fail_note("out of memory");
        goto fail;
    }
    for (char *item = strtok_r(sizes, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *end;
        long size = strtol(item, &end, 10);
        if (*end != '\0' || size < 0) {
            fail_note("bad size in --sizes: %s", item);
            goto fail;
        }
        int window = opt.window != 256 ? opt.window : window_for(size);
        /* Enough for about opt.seconds, but never more than some 4 GB each way. */
        long cap = size > 0 ? (long)(4e9 / (double)size) : opt.max_requests;
        if (cap > opt.max_requests)
            cap = opt.max_requests;
        if (cap < window)
            cap = window;
        json_t *point;
        if (pipelined_report("payload", size, window, 0, cap, opt.seconds, &point) < 0)
            goto fail;
        json_object_del(point, "scenario");
        json_object_del(point, "server");
        json_object_del(point, "command");
        json_array_append_new(points, point);
    }
    free(sizes);
    json_t *report = report_new("payload");
    json_object_set_new(report, "points", points);
    return report_print(report);
fail:
    free(sizes);
    json_decref(points);
    return -1;
}

static int scenario_latency(void)
{
    long count = opt.requests ? opt.requests : 10000;
    long warmup = count / 10 < 100 ? count / 10 : 100;
    double *samples = malloc((size_t)count * sizeof *samples);
    server srv;
    line_buffer lb = {0};
    server_usage usage;
    size_t params_length;
    char *params = make_params(opt.payload_bytes, &params_length);

    if (!samples || !params) {
        fail_note("out of memory");
        goto fail;
    }
    if (server_start(&srv) < 0)
        goto fail;
    for (long i = 0; i < warmup; i++)
        if (round_trip(&srv, &lb, i + 1, params, params_length) < 0)
            goto kill;
    for (long i = 0; i < count; i++) {
        double t0 = now_s();
        if (round_trip(&srv, &lb, warmup + i + 1, params, params_length) < 0)
            goto kill;
        samples[i] = (now_s() - t0) * 1e6;
        /* A real client does something with each reply before it sends the next request. On a
         * shared core, the server's wake-up was measured to preempt the client only while the
         * server used clearly less CPU than the client: an idle client is the worst case. */
        double until = now_s() + (double)opt.client_work_ns / 1e9;
        while (opt.client_work_ns > 0 && now_s() < until)
            ;
    }
    if (end_session(&srv, &lb, &usage) < 0)
        goto fail;
    qsort(samples, (size_t)count, sizeof *samples, compare_double);
    double sum = 0;
    for (long i = 0; i < count; i++)
        sum += samples[i];
    json_t *report = report_new("latency");
    json_object_set_new(report, "round_trips", json_integer(count));
    json_object_set_new(report, "client_work_ns", json_integer(opt.client_work_ns));
    json_object_set_new(report, "p50_us", json_real(percentile(samples, (size_t)count, 0.50)));
    json_object_set_new(report, "p90_us", json_real(percentile(samples, (size_t)count, 0.90)));
    json_object_set_new(report, "p99_us", json_real(percentile(samples, (size_t)count, 0.99)));
    json_object_set_new(report, "max_us", json_real(samples[count - 1]));
    json_object_set_new(report, "mean_us", json_real(sum / (double)count));
    report_usage(report, &usage, count + warmup);
    fprintf(stderr,
            "%s latency: %ld round trips: p50 %.1f us, p90 %.1f us, p99 %.1f us, max %.1f us\n",
            opt.label, count, percentile(samples, (size_t)count, 0.50),
            percentile(samples, (size_t)count, 0.90), percentile(samples, (size_t)count, 0.99),
            samples[count - 1]);
    free(samples);
    free(params);
    free(lb.buf.data);
    return report_print(report);
kill:
    server_kill(&srv);
fail:
    free(samples);
    free(params);
    free(lb.buf.data);
    return -1;
}

static int scenario_startup(void)
{
    int runs = opt.repeat > 0 ? opt.repeat : 1;
    double *samples = calloc((size_t)runs, sizeof *samples);
    long *rss = calloc((size_t)runs, sizeof *rss), *cpu = calloc((size_t)runs, sizeof *cpu);
    size_t params_length;
    char *params = make_params(opt.payload_bytes, &params_length);
    line_buffer lb = {0};

    if (!samples || !rss || !cpu || !params) {
        fail_note("out of memory");
        goto fail;
    }
    json_t *each = json_array();
    /* Run -1 is a warm-up, not counted: the first start of a series also pays for a cold page
     * cache and idle cores waking up, whichever server it is. */
    for (int i = -1; i < runs; i++) {
        server srv;
        server_usage usage;
        lb.start = lb.scanned = lb.buf.length = 0;
        double t0 = now_s();
        if (server_start(&srv) < 0) {
            json_decref(each);
            goto fail;
        }
        if (round_trip(&srv, &lb, 1, params, params_length) < 0) {
            server_kill(&srv);
            json_decref(each);
            goto fail;
        }
        double elapsed_us = (now_s() - t0) * 1e6;
        if (end_session(&srv, &lb, &usage) < 0) {
            json_decref(each);
            goto fail;
        }
        if (i < 0)
            continue;
        samples[i] = elapsed_us;
        rss[i] = usage.max_rss_kib;
        cpu[i] = usage.cpu_us;
        json_array_append_new(each, json_real(samples[i]));
    }
    double *sorted = malloc((size_t)runs * sizeof *sorted);
    if (!sorted) {
        json_decref(each);
        fail_note("out of memory");
        goto fail;
    }
    /* The medians of RSS and CPU are taken on their own, not at the median start-up run. */
    for (int i = 0; i < runs; i++)
        sorted[i] = (double)rss[i];
    qsort(sorted, (size_t)runs, sizeof *sorted, compare_double);
    server_usage usage = {.max_rss_kib = (long)sorted[runs / 2]};
    for (int i = 0; i < runs; i++)
        sorted[i] = (double)cpu[i];
    qsort(sorted, (size_t)runs, sizeof *sorted, compare_double);
    usage.cpu_us = (long)sorted[runs / 2];
    free(sorted);
    qsort(samples, (size_t)runs, sizeof *samples, compare_double);
    double median = runs % 2 ? samples[runs / 2] : (samples[runs / 2 - 1] + samples[runs / 2]) / 2;
    json_t *report = report_new("startup");
    json_object_set_new(report, "runs", json_integer(runs));
    json_object_set_new(report, "median_us", json_real(median));
    json_object_set_new(report, "min_us", json_real(samples[0]));
    json_object_set_new(report, "max_us", json_real(samples[runs - 1]));
    json_object_set_new(report, "samples_us", each);
    report_usage(report, &usage, 1);
    fprintf(stderr, "%s startup: %d runs: median %.0f us to the first reply (min %.0f, max %.0f)\n",
            opt.label, runs, median, samples[0], samples[runs - 1]);
    free(samples);
    free(rss);
    free(cpu);
    free(params);
    free(lb.buf.data);
    return report_print(report);
fail:
    free(samples);
    free(rss);
    free(cpu);
    free(params);
    free(lb.buf.data);
    return -1;
}

/* ---- command line ---- */

static void usage_text(FILE *to)
{
    fprintf(to,
            "usage: loadgen -s SCENARIO [options] -- COMMAND [ARG...]\n"
            "Runs COMMAND as a JSON-RPC stdio server offering \"echo\" (or -m) and measures it.\n"
            "\n"
            "  -s, --scenario NAME      throughput | latency | startup | batch | payload\n"
            "  -l, --label NAME         server name in the reports (default: COMMAND)\n"
            "  -n, --requests N         throughput, batch: requests (100000);\n"
            "                           latency: round trips (10000)\n"
            "  -w, --window W           requests in flight at most (256; payload: by size)\n"
            "  -b, --batch B            batch: requests per line (50)\n"
            "  -p, --payload-bytes S    params [\"<S bytes>\"] instead of %s\n"
            "  -m, --method NAME        the method called (echo); its result must not\n"
            "                           contain the text \"id\"\n"
            "      --params JSON        these params (an array or object) instead\n"
            "  -r, --repeat R           startup: server starts after a warm-up one (10)\n"
            "      --sizes LIST         payload: byte counts (%s)\n"
            "      --seconds T          payload: seconds per size, about (1)\n"
            "      --max-requests N     payload: requests per size at most (200000)\n"
            "      --client-work-ns N   latency: spin N ns after each round trip, untimed,\n"
            "                           as a client handling the reply would (0)\n"
            "  -t, --timeout S          fail after S seconds without progress (60)\n"
            "  -e, --server-stderr FILE where the server's stderr goes (/dev/null)\n"
            "\n"
            "One JSON object per scenario on stdout; exit status 1 on any failure.\n",
            SMALL_PARAMS, opt.sizes);
}

static int parse_long(const char *text, long min, long *out)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || *end != '\0' || end == text || value < min)
        return -1;
    *out = value;
    return 0;
}

static int parse_args(int argc, char **argv)
{
    static const struct option options[] = {
        {"scenario", required_argument, NULL, 's'},
        {"label", required_argument, NULL, 'l'},
        {"requests", required_argument, NULL, 'n'},
        {"window", required_argument, NULL, 'w'},
        {"batch", required_argument, NULL, 'b'},
        {"payload-bytes", required_argument, NULL, 'p'},
        {"repeat", required_argument, NULL, 'r'},
        {"sizes", required_argument, NULL, 'S'},
        {"seconds", required_argument, NULL, 'T'},
        {"max-requests", required_argument, NULL, 'M'},
        {"timeout", required_argument, NULL, 't'},
        {"server-stderr", required_argument, NULL, 'e'},
        {"method", required_argument, NULL, 'm'},
        {"params", required_argument, NULL, 'P'},
        {"client-work-ns", required_argument, NULL, 'W'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    long value;

    while ((c = getopt_long(argc, argv, "+s:l:n:w:b:p:r:t:e:m:h", options, NULL)) != -1) {
        switch (c) {
        case 's': opt.scenario = optarg; break;
        case 'l': opt.label = optarg; break;
        case 'n':
            if (parse_long(optarg, 1, &opt.requests) < 0)
                goto bad;
            break;
        case 'w':
            if (parse_long(optarg, 1, &value) < 0 || value > INT_MAX)
                goto bad;
            opt.window = (int)value;
            break;
        case 'b':
            if (parse_long(optarg, 1, &value) < 0 || value > INT_MAX)
                goto bad;
            opt.batch = (int)value;
            break;
        case 'p':
            if (parse_long(optarg, 0, &opt.payload_bytes) < 0)
                goto bad;
            break;
        case 'r':
            if (parse_long(optarg, 1, &value) < 0 || value > INT_MAX)
                goto bad;
            opt.repeat = (int)value;
            break;
        case 'S': opt.sizes = optarg; break;
        case 'T': {
            char *end;
            opt.seconds = strtod(optarg, &end);
            if (*end != '\0' || !(opt.seconds > 0))
                goto bad;
            break;
        }
        case 'M':
            if (parse_long(optarg, 1, &opt.max_requests) < 0)
                goto bad;
            break;
        case 'W':
            if (parse_long(optarg, 0, &opt.client_work_ns) < 0)
                goto bad;
            break;
        case 't':
            if (parse_long(optarg, 1, &value) < 0 || value > INT_MAX / 1000)
                goto bad;
            opt.timeout_ms = (int)value * 1000;
            break;
        case 'e': opt.stderr_path = optarg; break;
        case 'm':
            /* Written into the request as it is, so it must need no escaping. */
            if (optarg[0] == '\0' || strlen(optarg) > METHOD_MAX || strpbrk(optarg, "\"\\") != NULL)
                goto bad;
            for (const char *p = optarg; *p; p++)
                if ((unsigned char)*p < 0x20)
                    goto bad;
            opt.method = optarg;
            break;
        case 'P': {
            json_error_t error;
            json_t *params = json_loads(optarg, JSON_REJECT_DUPLICATES, &error);
            bool usable = params && (json_is_array(params) || json_is_object(params)) &&
                          strstr(optarg, "\"id\"") == NULL && strchr(optarg, '\n') == NULL;
            json_decref(params);
            if (!usable)
                goto bad;
            opt.params = optarg;
            break;
        }
        case 'h': usage_text(stdout); exit(0);
        default: usage_text(stderr); return -1;
        }
    }
    if (opt.params && opt.payload_bytes >= 0) {
        fprintf(stderr, "loadgen: --params and -p exclude each other\n");
        return -1;
    }
    if (!opt.scenario || optind >= argc) {
        usage_text(stderr);
        return -1;
    }
    opt.command = argv + optind;
    if (!opt.label)
        opt.label = opt.command[0];
    return 0;
bad:
    if (c == 'P')
        fprintf(stderr, "loadgen: bad value for --params (an array or object without \"id\"): %s\n",
                optarg);
    else
        fprintf(stderr, "loadgen: bad value for -%c: %s\n", c, optarg);
    return -1;
}

int main(int argc, char **argv)
{
    int status;

    if (parse_args(argc, argv) < 0)
        return 2;
    /* A server that dies must show up as EPIPE on our write, not kill us silently. */
    signal(SIGPIPE, SIG_IGN);
    if (strcmp(opt.scenario, "throughput") == 0)
        status = scenario_throughput();
    else if (strcmp(opt.scenario, "latency") == 0)
        status = scenario_latency();
    else if (strcmp(opt.scenario, "startup") == 0)
        status = scenario_startup();
    else if (strcmp(opt.scenario, "batch") == 0)
        status = scenario_batch();
    else if (strcmp(opt.scenario, "payload") == 0)
        status = scenario_payload();
    else {
        fprintf(stderr, "loadgen: unknown scenario %s\n", opt.scenario);
        return 2;
    }
    if (status < 0) {
        fprintf(stderr, "loadgen: %s: %s: FAILED: %s\n", opt.label, opt.scenario,
                failure[0] ? failure : "unknown error");
        return 1;
    }
    return 0;
}
