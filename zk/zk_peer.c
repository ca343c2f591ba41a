#include "zk_peer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

/* Waits for events on fd until the monotonic deadline; 0 when ready. */
static int wait_fd(int fd, short events, int64_t deadline) {
    for (;;) {
        int64_t left = deadline - clock_mono_ms();
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = {.fd = fd, .events = events};
        int n = poll(&p, 1, (int)left);
        if (n > 0) {
            return 0;
        }
        if (n < 0 && errno != EINTR) {
            return -1;
        }
    }
}

static int connect_to(const char *ip, int port, int64_t deadline) {
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1) {
        errno = EINVAL;
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    int err = 0;
    socklen_t elen = sizeof(err);
    if ((connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 &&
         (errno != EINPROGRESS || wait_fd(fd, POLLOUT, deadline) != 0)) ||
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0 || err != 0) {
        int saved = err ? err : errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/* Sends the request and reads until the peer closes; returns bytes read or -1. */
static ssize_t exchange(int fd, const char *req, char *buf, size_t cap, int64_t deadline) {
    size_t len = strlen(req), off = 0, got = 0;
    while (off < len) {
        ssize_t n = send(fd, req + off, len - off, MSG_NOSIGNAL);
        if (n < 0 && (errno != EAGAIN || wait_fd(fd, POLLOUT, deadline) != 0)) {
            return -1;
        }
        off += n > 0 ? (size_t)n : 0;
    }
    while (got + 1 < cap) {
        ssize_t n = recv(fd, buf + got, cap - 1 - got, 0);
        if (n == 0) {
            break;
        }
        if (n < 0 && (errno != EAGAIN || wait_fd(fd, POLLIN, deadline) != 0)) {
            return -1;
        }
        got += n > 0 ? (size_t)n : 0;
    }
    buf[got] = '\0';
    return (ssize_t)got;
}

/* Parses the body holding "timestamp":<ms>. */
static int parse_time(const char *body, int64_t *peer_ms) {
    const char *ts = strstr(body, "\"timestamp\":");
    if (ts == NULL) {
        return -1;
    }
    char *end;
    long long v = strtoll(ts + 12, &end, 10);
    if (end == ts + 12 || v <= 0) {
        return -1;
    }
    *peer_ms = v;
    return 0;
}

leaf_status_t zk_peer_get(const char *ip, int port, const char *path, int timeout_ms,
                          struct zk_peer_answer *a) {
    char req[320];
    memset(a, 0, sizeof(*a));
    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n", path,
             ip, port);
    int64_t deadline = clock_mono_ms() + timeout_ms;
    int fd = connect_to(ip, port, deadline);
    if (fd < 0) {
        snprintf(a->error, sizeof(a->error), "connect: %s", strerror(errno));
        return LEAF_EUNAVAIL;
    }
    a->sent_ms = clock_wall_ms();
    ssize_t n = exchange(fd, req, a->buf, sizeof(a->buf), deadline);
    a->recv_ms = clock_wall_ms();
    int err = errno;
    close(fd);
    const char *body = n > 0 ? strstr(a->buf, "\r\n\r\n") : NULL;
    if (n < 0 || strncmp(a->buf, "HTTP/1.", 7) != 0 || body == NULL) {
        snprintf(a->error, sizeof(a->error), "%s", n < 0 ? strerror(err) : "not an HTTP answer");
        return LEAF_EUNAVAIL;
    }
    a->status = atoi(a->buf + 9);
    a->body = body + 4;
    return LEAF_OK;
}

leaf_status_t zk_peer_time(const char *ip, int port, int timeout_ms, int64_t *sent_ms,
                           int64_t *peer_ms, int64_t *recv_ms) {
    struct zk_peer_answer *a = malloc(sizeof(*a));
    if (a == NULL) {
        return LEAF_ENOMEM;
    }
    leaf_status_t rc = zk_peer_get(ip, port, "/api/snowflake/time", timeout_ms, a);
    if (rc == LEAF_OK && (a->status != 200 || parse_time(a->body, peer_ms) != 0)) {
        snprintf(a->error, sizeof(a->error), "bad answer");
        rc = LEAF_EUNAVAIL;
    }
    if (rc != LEAF_OK) {
        log_warn("zk",
                 "peer time check: GET http://%s:%d/api/snowflake/time failed: %s; "
                 "skipping this peer",
                 ip, port, a->error);
    } else {
        *sent_ms = a->sent_ms;
        *recv_ms = a->recv_ms;
    }
    free(a);
    return rc;
}
