/* SPDX-License-Identifier: MIT */
/*
 * The control socket's file and its peers: settings read from the config, the socket bound in a
 * directory held open since the file-safety walk checked it, and the credentials of each peer.
 */
#include "control/control_socket.h"

#include "base/file_safety.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

enum { DEFAULT_MODE = 0600, MOST_PEER_GROUPS = 256 };

/* Octal digits up to 0777. Returns 0 and *mode, or -1. */
static int parse_mode(const char *text, mode_t *mode)
{
    size_t length = strlen(text);
    if (length == 0 || length > 4 || strspn(text, "01234567") != length)
        return -1;
    unsigned long value = strtoul(text, NULL, 8);
    if (value > 0777)
        return -1;
    *mode = (mode_t)value;
    return 0;
}

/* A user by name or number. Returns 0 and *uid, or -1. */
static int find_user(const char *text, uid_t *uid)
{
    char *end;
    errno = 0;
    unsigned long number = strtoul(text, &end, 10);
    if (text[0] >= '0' && text[0] <= '9' && *end == '\0' && errno == 0 && number < UINT32_MAX) {
        *uid = (uid_t)number;
        return 0;
    }
    struct passwd *found = getpwnam(text);
    if (!found)
        return -1;
    *uid = found->pw_uid;
    return 0;
}

static int find_group(const char *text, gid_t *gid)
{
    char *end;
    errno = 0;
    unsigned long number = strtoul(text, &end, 10);
    if (text[0] >= '0' && text[0] <= '9' && *end == '\0' && errno == 0 && number < UINT32_MAX) {
        *gid = (gid_t)number;
        return 0;
    }
    struct group *found = getgrnam(text);
    if (!found)
        return -1;
    *gid = found->gr_gid;
    return 0;
}

/* Splits path into its directory and its name. Returns 0, or -1 with error. */
static int split_path(const char *path, ctl_socket *out, char *error, size_t error_size)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    if (name[0] == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
        snprintf(error, error_size, "control_socket %s does not name a socket in a directory",
                 path);
        return -1;
    }
    /* Bound as /proc/self/fd/N/NAME: sun_path must hold that. */
    if (strlen(name) > sizeof(((struct sockaddr_un *)0)->sun_path) - 32) {
        snprintf(error, error_size, "control_socket %s: its name is too long for a socket", path);
        return -1;
    }
    out->name = strdup(name);
    if (!slash)
        out->directory = strdup(".");
    else
        out->directory = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
    if (!out->name || !out->directory) {
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    return 0;
}

int ctl_socket_settings(const rpcd_config *config, ctl_socket *out, char *error, size_t error_size)
{
    memset(out, 0, sizeof *out);
    out->directory_fd = -1;
    if (!config->control_socket)
        return 0;
    out->check = !config->insecure;
    out->mode = DEFAULT_MODE;
    out->owner = geteuid();
    const char *mode = config->control_socket_mode;
    const char *owner = config->control_socket_owner;
    const char *group = config->control_socket_group;
    if (mode && parse_mode(mode, &out->mode) != 0) {
        snprintf(error, error_size, "control_socket_mode must be octal from 0 to 0777, not '%s'",
                 mode);
    } else if (owner && find_user(owner, &out->owner) != 0) {
        snprintf(error, error_size, "control_socket_owner: no user '%s'", owner);
    } else if (group && find_group(group, &out->group) != 0) {
        snprintf(error, error_size, "control_socket_group: no group '%s'", group);
    } else if (split_path(config->control_socket, out, error, error_size) == 0) {
        out->give_owner = owner != NULL;
        out->has_group = group != NULL;
        return 1;
    }
    ctl_socket_close(out);
    return -1;
}

/* What is at the socket's name: nothing, or a socket of ours nobody listens on (removed).
 * Returns 0, or -1 with error. */
static int clear_stale(const ctl_socket *s, const char *bind_path, char *error, size_t error_size)
{
    struct stat info;
    if (fstatat(s->directory_fd, s->name, &info, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? 0 : (snprintf(error, error_size, "%s", strerror(errno)), -1);
    if (!S_ISSOCK(info.st_mode) || info.st_uid != geteuid()) {
        snprintf(error, error_size,
                 "%s exists and is no socket of rpcd's user (mode %o, uid %u): remove it", s->name,
                 (unsigned)info.st_mode, (unsigned)info.st_uid);
        return -1;
    }
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    snprintf(address.sun_path, sizeof address.sun_path, "%s", bind_path);
    bool live = probe >= 0 && connect(probe, (struct sockaddr *)&address, sizeof address) == 0;
    if (probe >= 0)
        close(probe);
    if (live) {
        snprintf(error, error_size, "%s: another process listens on it", s->name);
        return -1;
    }
    if (unlinkat(s->directory_fd, s->name, 0) != 0) {
        snprintf(error, error_size, "cannot remove the stale %s: %s", s->name, strerror(errno));
        return -1;
    }
    return 0;
}

/* Binds fd as name in the directory held, under a umask that gives nobody more than mode. */
static int bind_socket(ctl_socket *s, int fd, const char *bind_path, char *error, size_t error_size)
{
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    snprintf(address.sun_path, sizeof address.sun_path, "%s", bind_path);
    mode_t before = umask(~s->mode & 0777);
    int bound = bind(fd, (struct sockaddr *)&address, sizeof address);
    int saved = errno;
    umask(before);
    if (bound != 0) {
        snprintf(error, error_size, "cannot bind %s: %s", s->name, strerror(saved));
        return -1;
    }
    struct stat info;
    /* The name was made by this bind in a directory only root or rpcd's user may change. */
    if (fstatat(s->directory_fd, s->name, &info, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISSOCK(info.st_mode)) {
        snprintf(error, error_size, "%s changed while it was made", s->name);
        return -1;
    }
    s->device = info.st_dev;
    s->inode = info.st_ino;
    if (fchmodat(s->directory_fd, s->name, s->mode, 0) != 0 ||
        fchownat(s->directory_fd, s->name, s->give_owner ? s->owner : (uid_t)-1,
                 s->has_group ? s->group : (gid_t)-1, AT_SYMLINK_NOFOLLOW) != 0) {
        snprintf(error, error_size, "cannot give %s its mode, owner and group: %s", s->name,
                 strerror(errno));
        return -1;
    }
    return 0;
}

int ctl_socket_listen(ctl_socket *s, int *out, char *error, size_t error_size)
{
    char reason[768];
    if (fsafe_open_directory(s->directory, s->check, &s->directory_fd, reason, sizeof reason) !=
        0) {
        snprintf(error, error_size, "control socket directory %s: %s", s->directory, reason);
        return -1;
    }
    char bind_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    snprintf(bind_path, sizeof bind_path, "/proc/self/fd/%d/%s", s->directory_fd, s->name);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(error, error_size, "control socket: %s", strerror(errno));
        return -1;
    }
    char why[512];
    int status = clear_stale(s, bind_path, why, sizeof why);
    if (status == 0)
        status = bind_socket(s, fd, bind_path, why, sizeof why);
    if (status == 0 && listen(fd, 16) != 0) {
        snprintf(why, sizeof why, "listen: %s", strerror(errno));
        status = -1;
    }
    if (status != 0) {
        snprintf(error, error_size, "control socket %s/%s: %s", s->directory, s->name, why);
        close(fd);
        return -1;
    }
    *out = fd;
    return 0;
}

/* Whether the peer's supplementary groups hold gid (SO_PEERGROUPS: as they were at connect). */
static bool peer_in_group(int fd, gid_t gid)
{
    gid_t groups[MOST_PEER_GROUPS];
    socklen_t length = sizeof groups;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &length) != 0)
        return false;
    for (size_t i = 0; i < length / sizeof groups[0]; i++)
        if (groups[i] == gid)
            return true;
    return false;
}

int ctl_socket_peer_allowed(const ctl_socket *s, int fd, char *who, size_t who_size)
{
    struct ucred peer;
    socklen_t length = sizeof peer;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0) {
        snprintf(who, who_size, "unknown (%s)", strerror(errno));
        return 0;
    }
    snprintf(who, who_size, "uid %u, gid %u, pid %d", (unsigned)peer.uid, (unsigned)peer.gid,
             (int)peer.pid);
    if (peer.uid == 0 || peer.uid == s->owner)
        return 1;
    return s->has_group && (peer.gid == s->group || peer_in_group(fd, s->group));
}

void ctl_socket_close(ctl_socket *s)
{
    struct stat info;
    if (s->directory_fd >= 0 && s->inode &&
        fstatat(s->directory_fd, s->name, &info, AT_SYMLINK_NOFOLLOW) == 0 &&
        info.st_dev == s->device && info.st_ino == s->inode)
        unlinkat(s->directory_fd, s->name, 0);
    if (s->directory_fd >= 0)
        close(s->directory_fd);
    free(s->directory);
    free(s->name);
    memset(s, 0, sizeof *s);
    s->directory_fd = -1;
}
