/* SPDX-License-Identifier: MIT */
/*
 * bound_relay: the fastest an out-of-process plugin can be answered. Echoes stdin as
 * bound_line_echo does, but through a child process: each read goes to it over a socket and
 * comes back on a pipe, the shape of rpcd's channel to an isolated plugin's host (no lines, no
 * JSON, no frames), and the child asks for the time slice a host asks for by default. A
 * yardstick for `isolation = process` (see bench/README.md).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bound_io.h"
#include "config/config.h"
#include "isolation/time_slice.h"

/* The child: what comes on the socket goes back on the pipe, until the socket ends. */
static int serve(int requests, int answers)
{
    static char data[READ_CHUNK];
    for (;;) {
        ssize_t got = read(requests, data, sizeof data);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return got == 0 ? 0 : 1;
        for (ssize_t done = 0; done < got;) {
            ssize_t wrote = write(answers, data + done, (size_t)(got - done));
            if (wrote < 0 && errno == EINTR)
                continue;
            if (wrote < 0)
                return 1;
            done += wrote;
        }
    }
}

/*
 * Sends length bytes to the child and reads as many back into the same place, a piece at a time:
 * a piece the pipe back cannot hold would leave both ends blocked on a write.
 */
static int relay(int requests, int answers, char *data, size_t length)
{
    enum { PIECE = 32 * 1024 };
    while (length > PIECE) {
        if (relay(requests, answers, data, PIECE) < 0)
            return -1;
        data += PIECE;
        length -= PIECE;
    }
    for (size_t done = 0; done < length;) {
        ssize_t sent = send(requests, data + done, length - done, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR)
            continue;
        if (sent < 0)
            return -1;
        done += (size_t)sent;
    }
    for (size_t done = 0; done < length;) {
        ssize_t got = read(answers, data + done, length - done);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        done += (size_t)got;
    }
    return 0;
}

int main(int argc, char **argv)
{
    (void)argv;
    if (argc != 1) {
        fprintf(stderr, "usage: bound_relay\n");
        return 64;
    }
    signal(SIGPIPE, SIG_IGN);
    int channel[2], back[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, channel) != 0 ||
        pipe2(back, O_CLOEXEC) != 0) {
        perror("bound_relay");
        return 1;
    }
    pid_t child = fork();
    if (child < 0) {
        perror("bound_relay: fork");
        return 1;
    }
    if (child == 0) {
        char error[128];
        if (slice_request(CFG_DEFAULT_SCHEDULER_SLICE_US, error, sizeof error) != 0)
            fprintf(stderr, "bound_relay: %s\n", error);
        close(channel[0]);
        close(back[0]);
        _exit(serve(channel[1], back[1]));
    }
    close(channel[1]);
    close(back[1]);

    buffer in = {0};
    int status = 1;
    for (;;) {
        if (reserve(&in, READ_CHUNK) < 0)
            goto done;
        ssize_t got = read(STDIN_FILENO, in.data, in.capacity);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            goto done;
        if (got == 0)
            break;
        if (relay(channel[0], back[0], in.data, (size_t)got) < 0 ||
            write_all(in.data, (size_t)got) < 0)
            goto done;
    }
    status = 0;
done:
    close(channel[0]);
    close(back[0]);
    waitpid(child, NULL, 0);
    free(in.data);
    return status;
}
