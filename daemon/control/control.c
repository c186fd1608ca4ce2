/* SPDX-License-Identifier: MIT */
/*
 * The control socket's thread: one poll() over the listening socket, the peers and a stop, every
 * read and write non-blocking. A peer's line is bounded, its answer is written before its next
 * line is read (one answer buffered per peer), and a peer that leaves an answer unread for
 * CTL_WRITE_TIMEOUT_MS is dropped: nothing a peer does can hold the thread, and the thread holds
 * no lock of the serving path longer than a copy.
 */
#include "control/control.h"

#include "base/clock.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/signals.h"
#include "control/control_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

typedef struct peer {
    int fd;          /* -1: a free place */
    char who[96];    /* its credentials, for log lines */
    buffer in;       /* bytes read, not yet a whole line */
    buffer out;      /* the answer being written */
    size_t sent;     /* of out */
    long long since; /* when out last made progress (or was queued) */
    bool ended;      /* the peer shut its side: close once out is written */
} peer;

struct control {
    ctl_target target;
    ctl_socket socket;
    int listen_fd;
    int wake; /* eventfd: ctl_stop */
    pthread_t thread;
    bool started;        /* the thread runs (from the first peer on) */
    unsigned wakes_seen; /* sig_wake_count when ctl_before_read last looked */
    timer_t tick;        /* wakes the reader while the thread waits to be started */
    bool ticking;
    peer peers[CTL_MOST_PEERS];
};

static void drop(peer *p, const char *why)
{
    if (why)
        log_message(LOG_WARNING, "control socket: peer (%s) dropped: %s", p->who, why);
    close(p->fd);
    p->fd = -1;
    buf_free(&p->in);
    buf_free(&p->out);
    p->sent = 0;
    p->ended = false;
}

static bool pending(const peer *p)
{
    return p->sent < p->out.length;
}

/* Answers one line (line feed removed) into the peer's output. */
static void answer_line(control *ctl, peer *p, const char *line, size_t length)
{
    if (length && line[length - 1] == '\r')
        length--;
    if (length == 0)
        return;
    ctl_request request;
    ctl_refusal refusal;
    size_t before = p->out.length;
    int failed = ctl_parse_request(line, length, &request, &refusal) == 0
                     ? ctl_answer(&ctl->target, &request, &p->out)
                     : ctl_append_refusal(&p->out, &refusal);
    /* A notification is acted on and answered with nothing; out of memory answers nothing. */
    if (failed || (refusal.code == 0 && !request.has_id))
        p->out.length = before;
    if (failed)
        log_message(LOG_WARNING, "control socket: out of memory answering %s", p->who);
}

/* Answers the whole lines read, one at a time: stops at the first answer left to write. */
static void answer_lines(control *ctl, peer *p)
{
    size_t used = 0;
    while (!pending(p) && used < p->in.length) {
        char *end = memchr(p->in.data + used, '\n', p->in.length - used);
        if (!end) {
            /* An unterminated last line counts once the peer has shut its side. */
            if (!p->ended)
                break;
            end = p->in.data + p->in.length;
        }
        size_t length = (size_t)(end - (p->in.data + used));
        answer_line(ctl, p, p->in.data + used, length);
        used += length + (end < p->in.data + p->in.length);
        p->since = clock_now_ms();
    }
    memmove(p->in.data, p->in.data + used, p->in.length - used);
    p->in.length -= used;
}

/* Reads what the peer sent. Returns 0, or -1 when the peer was dropped. */
static int read_peer(control *ctl, peer *p)
{
    char chunk[16384];
    ssize_t got = recv(p->fd, chunk, sizeof chunk, MSG_DONTWAIT);
    if (got < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (got <= 0) {
        p->ended = true;
        if (got < 0 || (p->in.length == 0 && !pending(p))) {
            drop(p, NULL);
            return -1;
        }
    } else if (buf_append(&p->in, chunk, (size_t)got) != 0) {
        drop(p, "out of memory");
        return -1;
    }
    if (p->in.length > CTL_MAX_LINE_BYTES && !memchr(p->in.data, '\n', CTL_MAX_LINE_BYTES + 1)) {
        /* Said once, without waiting for the peer to read it. */
        static const char refusal[] = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,"
                                      "\"message\":\"Invalid Request: line longer than 65536 "
                                      "bytes\"}}\n";
        ssize_t written = send(p->fd, refusal, sizeof refusal - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        (void)written;
        drop(p, "a line longer than 65536 bytes");
        return -1;
    }
    answer_lines(ctl, p);
    if (p->ended && !pending(p)) {
        drop(p, NULL);
        return -1;
    }
    return 0;
}

/* Writes what it can of the peer's answer. Returns 0, or -1 when the peer was dropped. */
static int write_peer(control *ctl, peer *p)
{
    while (pending(p)) {
        ssize_t written = send(p->fd, p->out.data + p->sent, p->out.length - p->sent,
                               MSG_DONTWAIT | MSG_NOSIGNAL);
        if (written < 0 && errno == EINTR)
            continue;
        if (written < 0 && errno == EAGAIN)
            return 0;
        if (written <= 0) {
            drop(p, NULL);
            return -1;
        }
        p->sent += (size_t)written;
        p->since = clock_now_ms();
    }
    buf_clear(&p->out);
    p->sent = 0;
    answer_lines(ctl, p); /* the lines that waited for this answer */
    if (!pending(p) && p->ended) {
        drop(p, NULL);
        return -1;
    }
    return 0;
}

static void accept_peer(control *ctl)
{
    int fd = accept4(ctl->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return;
    peer *free_place = NULL;
    for (int i = 0; i < CTL_MOST_PEERS && !free_place; i++)
        if (ctl->peers[i].fd < 0)
            free_place = &ctl->peers[i];
    char who[96];
    if (!ctl_socket_peer_allowed(&ctl->socket, fd, who, sizeof who)) {
        log_message(LOG_WARNING,
                    "control socket: refused a peer (%s): neither root, the owner (uid %u) nor "
                    "in its group",
                    who, (unsigned)ctl->socket.owner);
        close(fd);
        return;
    }
    if (!free_place) {
        log_message(LOG_WARNING, "control socket: refused a peer (%s): %d peers already", who,
                    CTL_MOST_PEERS);
        close(fd);
        return;
    }
    free_place->fd = fd;
    snprintf(free_place->who, sizeof free_place->who, "%s", who);
    free_place->since = clock_now_ms();
}

/* The poll timeout: until the first peer's answer times out, -1 when none waits. */
static int next_timeout(const control *ctl, long long now)
{
    long long first = -1;
    for (int i = 0; i < CTL_MOST_PEERS; i++) {
        const peer *p = &ctl->peers[i];
        if (p->fd < 0 || !pending(p))
            continue;
        long long due = p->since + CTL_WRITE_TIMEOUT_MS;
        if (first < 0 || due < first)
            first = due;
    }
    return first < 0 ? -1 : first <= now ? 0 : (int)(first - now);
}

static void serve_peers(control *ctl, const struct pollfd *fds)
{
    long long now = clock_now_ms();
    for (int i = 0; i < CTL_MOST_PEERS; i++) {
        peer *p = &ctl->peers[i];
        short events = fds[2 + i].revents;
        if (p->fd < 0 || fds[2 + i].fd != p->fd)
            continue;
        if ((events & (POLLIN | POLLHUP | POLLERR)) && !pending(p) && read_peer(ctl, p) != 0)
            continue;
        if (pending(p) && (events & (POLLOUT | POLLERR | POLLHUP)) && write_peer(ctl, p) != 0)
            continue;
        if (pending(p) && now - p->since >= CTL_WRITE_TIMEOUT_MS)
            drop(p, "it left an answer unread");
    }
}

static void *control_main(void *argument)
{
    control *ctl = argument;
    for (;;) {
        struct pollfd fds[2 + CTL_MOST_PEERS];
        fds[0] = (struct pollfd){ctl->wake, POLLIN, 0};
        fds[1] = (struct pollfd){ctl->listen_fd, POLLIN, 0};
        for (int i = 0; i < CTL_MOST_PEERS; i++) {
            const peer *p = &ctl->peers[i];
            fds[2 + i] = (struct pollfd){p->fd, (short)(pending(p) ? POLLOUT : POLLIN), 0};
        }
        int ready = poll(fds, 2 + CTL_MOST_PEERS, next_timeout(ctl, clock_now_ms()));
        if (ready < 0 && errno != EINTR)
            break;
        if (ready > 0 && (fds[0].revents & POLLIN))
            break;
        if (ready > 0 && (fds[1].revents & POLLIN))
            accept_peer(ctl);
        serve_peers(ctl, fds);
    }
    return NULL;
}

/* Starts the thread without any of the signals rpcd is sent: they are the reader's. */
static int start_thread(control *ctl)
{
    sigset_t all, before;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &before);
    int started = pthread_create(&ctl->thread, NULL, control_main, ctl);
    pthread_sigmask(SIG_SETMASK, &before, NULL);
    return started == 0 ? 0 : -1;
}

/*
 * The thread starts with the first peer, not with rpcd: a process with a second thread pays for
 * it on every call, in the C library's locks and rpcd's own (lock.h), and most sessions never
 * see an operator. The listening socket signals the reader with the wake-up signal when a peer
 * connects (O_ASYNC, F_SETSIG), which interrupts its read(); ctl_before_read then starts the
 * thread. A signal that lands just before read() is caught by the tick, once a second.
 */
static int signal_reader(control *ctl)
{
    /* Should the queue of real-time signals overflow (a flood of connections), the kernel sends
     * SIGIO instead, whose default ends the process: ignored, the tick finds the peers. */
    struct sigaction ignore = {.sa_handler = SIG_IGN};
    if (sigaction(SIGIO, &ignore, NULL) != 0)
        return -1;
    struct f_owner_ex owner = {F_OWNER_TID, (pid_t)gettid()};
    int flags = fcntl(ctl->listen_fd, F_GETFL);
    if (sig_wake_number() == 0 || flags < 0 || fcntl(ctl->listen_fd, F_SETOWN_EX, &owner) != 0 ||
        fcntl(ctl->listen_fd, F_SETSIG, sig_wake_number()) != 0 ||
        fcntl(ctl->listen_fd, F_SETFL, flags | O_ASYNC) != 0)
        return -1;
    struct sigevent event;
    memset(&event, 0, sizeof event);
    event.sigev_notify = SIGEV_THREAD_ID;
    event._sigev_un._tid = gettid();
    event.sigev_signo = sig_wake_number();
    struct itimerspec every = {{CTL_TICK_MS / 1000, 0}, {CTL_TICK_MS / 1000, 0}};
    if (timer_create(CLOCK_MONOTONIC, &event, &ctl->tick) != 0)
        return -1;
    ctl->ticking = true;
    ctl->wakes_seen = sig_wake_count();
    return timer_settime(ctl->tick, 0, &every, NULL);
}

static void stop_ticking(control *ctl)
{
    if (ctl->ticking)
        timer_delete(ctl->tick);
    ctl->ticking = false;
}

void ctl_before_read(void *context)
{
    control *ctl = context;
    if (!ctl || ctl->started || sig_wake_count() == ctl->wakes_seen)
        return;
    ctl->wakes_seen = sig_wake_count();
    struct pollfd waiting = {ctl->listen_fd, POLLIN, 0};
    if (poll(&waiting, 1, 0) != 1)
        return;
    stop_ticking(ctl);
    int flags = fcntl(ctl->listen_fd, F_GETFL);
    if (flags >= 0)
        fcntl(ctl->listen_fd, F_SETFL, flags & ~O_ASYNC);
    if (start_thread(ctl) != 0) {
        log_message(LOG_ERROR, "control socket: cannot start its thread: %s", strerror(errno));
        return;
    }
    ctl->started = true;
}

int ctl_start(const ctl_target *target, control **out, char *error, size_t error_size)
{
    *out = NULL;
    control *ctl = calloc(1, sizeof *ctl);
    if (!ctl) {
        snprintf(error, error_size, "control socket: out of memory");
        return -1;
    }
    ctl->target = *target;
    ctl->listen_fd = ctl->wake = -1;
    for (int i = 0; i < CTL_MOST_PEERS; i++)
        ctl->peers[i].fd = -1;
    int configured = ctl_socket_settings(target->runtime->config, &ctl->socket, error, error_size);
    if (configured <= 0) {
        free(ctl);
        return configured;
    }
    if (ctl_socket_listen(&ctl->socket, &ctl->listen_fd, error, error_size) != 0)
        goto fail;
    ctl->wake = eventfd(0, EFD_CLOEXEC);
    if (ctl->wake < 0 || signal_reader(ctl) != 0) {
        snprintf(error, error_size, "control socket: cannot wait for its first peer: %s",
                 strerror(errno));
        goto fail;
    }
    mx_enable(target->runtime->config->control_metrics);
    log_message(LOG_INFO, "control socket %s/%s: listening", ctl->socket.directory,
                ctl->socket.name);
    *out = ctl;
    return 0;
fail:
    stop_ticking(ctl);
    if (ctl->wake >= 0)
        close(ctl->wake);
    if (ctl->listen_fd >= 0)
        close(ctl->listen_fd);
    ctl_socket_close(&ctl->socket);
    free(ctl);
    return -1;
}

void ctl_stop(control *ctl)
{
    if (!ctl)
        return;
    stop_ticking(ctl);
    uint64_t one = 1;
    ssize_t written = write(ctl->wake, &one, sizeof one);
    (void)written;
    if (ctl->started)
        pthread_join(ctl->thread, NULL);
    for (int i = 0; i < CTL_MOST_PEERS; i++)
        if (ctl->peers[i].fd >= 0)
            drop(&ctl->peers[i], NULL);
    mx_enable(false);
    close(ctl->wake);
    close(ctl->listen_fd);
    ctl_socket_close(&ctl->socket);
    free(ctl);
}
