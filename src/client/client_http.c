/* The refill thread's HTTP/1.1 client (client_http.h). */
#include "client_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "client_clock.h"

/* The biggest answer read: a batch of 10000 IDs of 20 bytes, and room to spare. */
#define CLIENT_HTTP_ANSWER_MAX ((size_t)1024 * 1024)

SSL_CTX *client_http_tls(const struct client_options *o, char *err, size_t errlen) {
    int any = 0;
    for (int i = 0; i < o->n_nodes; i++) {
        any |= o->nodes[i].tls;
    }
    if (!any) {
        return NULL;
    }
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL) {
        snprintf(err, errlen, "SSL_CTX_new() failed");
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    int ok = o->ca_file[0] ? SSL_CTX_load_verify_locations(ctx, o->ca_file, NULL)
                           : SSL_CTX_set_default_verify_paths(ctx);
    if (ok != 1) {
        snprintf(err, errlen, "loading the CA file %s failed: %s",
                 o->ca_file[0] ? o->ca_file : "(system)", ERR_reason_error_string(ERR_get_error()));
        SSL_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

void client_http_init(struct client_conn *c) {
    c->fd = -1;
    c->ssl = NULL;
    c->buf = NULL;
    c->cap = c->len = 0;
}

/* Closes the connection; the buffer is kept for the next. */
static void client_http_close(struct client_conn *c) {
    if (c->ssl != NULL) {
        SSL_free(c->ssl);
        c->ssl = NULL;
    }
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
}

void client_http_free(struct client_conn *c) {
    client_http_close(c);
    free(c->buf);
    c->buf = NULL;
    c->cap = c->len = 0;
}

void client_http_forget(struct client_conn *c) {
    if (c->fd >= 0) {
        close(c->fd);
    }
    client_http_init(c);
}

/* Waits until fd is ready for events or the deadline passes: 0, or -1 (timed out). */
static int wait_fd(int fd, short events, int64_t deadline) {
    for (;;) {
        int64_t left = deadline - client_clock_ms();
        if (left <= 0) {
            return -1;
        }
        struct pollfd p = {.fd = fd, .events = events};
        int r = poll(&p, 1, (int)left);
        if (r > 0) {
            return 0;
        }
        if (r < 0 && errno != EINTR) {
            return -1;
        }
    }
}

static int dial(const struct client_endpoint *e, int64_t deadline, char *err, size_t errlen) {
    char port[8];
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res, *ai;
    snprintf(port, sizeof(port), "%d", e->port);
    int rc = getaddrinfo(e->host, port, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "resolving %s failed: %s", e->host, gai_strerror(rc));
        return -1;
    }
    int fd = -1, saved = 0;
    for (ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            saved = errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 ||
            (errno == EINPROGRESS && wait_fd(fd, POLLOUT, deadline) == 0)) {
            int soerr = 0;
            socklen_t sl = sizeof(soerr);
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
            if (soerr == 0) {
                break;
            }
            saved = soerr;
        } else {
            saved = errno == EINPROGRESS ? ETIMEDOUT : errno;
        }
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        snprintf(err, errlen, "connect(%s:%d) failed: %s", e->host, e->port, strerror(saved));
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* The TLS handshake on c->fd, the node's name or address checked against its certificate. */
static int handshake(struct client_conn *c, SSL_CTX *tls, const struct client_endpoint *e,
                     int64_t deadline, char *err, size_t errlen) {
    c->ssl = SSL_new(tls);
    if (c->ssl == NULL || SSL_set_fd(c->ssl, c->fd) != 1) {
        snprintf(err, errlen, "SSL_new(%s:%d) failed", e->host, e->port);
        return -1;
    }
    unsigned char addr[16];
    int is_ip = inet_pton(AF_INET, e->host, addr) == 1 || inet_pton(AF_INET6, e->host, addr) == 1;
    X509_VERIFY_PARAM *param = SSL_get0_param(c->ssl);
    if (is_ip) {
        X509_VERIFY_PARAM_set1_ip_asc(param, e->host);
    } else {
        SSL_set_tlsext_host_name(c->ssl, e->host);
        SSL_set1_host(c->ssl, e->host);
    }
    for (;;) {
        int r = SSL_connect(c->ssl);
        if (r == 1) {
            return 0;
        }
        int why = SSL_get_error(c->ssl, r);
        short ev = (short)(why == SSL_ERROR_WANT_READ    ? POLLIN
                           : why == SSL_ERROR_WANT_WRITE ? POLLOUT
                                                         : 0);
        if (ev == 0 || wait_fd(c->fd, ev, deadline) != 0) {
            long v = SSL_get_verify_result(c->ssl);
            snprintf(err, errlen, "TLS handshake with %s:%d failed: %s", e->host, e->port,
                     v != X509_V_OK ? X509_verify_cert_error_string(v)
                     : ev == 0      ? ERR_reason_error_string(ERR_get_error())
                                    : "timed out");
            return -1;
        }
    }
}

/* Writes all of data: 0, or -1 (closed, failed, timed out). */
static int send_all(struct client_conn *c, const char *data, size_t len, int64_t deadline) {
    while (len > 0) {
        ssize_t n;
        short ev = POLLOUT;
        if (c->ssl != NULL) {
            n = SSL_write(c->ssl, data, (int)len);
            if (n <= 0) {
                int why = SSL_get_error(c->ssl, (int)n);
                if (why != SSL_ERROR_WANT_READ && why != SSL_ERROR_WANT_WRITE) {
                    return -1;
                }
                ev = why == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
            }
        } else {
            n = send(c->fd, data, len, MSG_NOSIGNAL);
            if (n < 0 && errno != EAGAIN && errno != EINTR) {
                return -1;
            }
        }
        if (n > 0) {
            data += n;
            len -= (size_t)n;
        } else if (wait_fd(c->fd, ev, deadline) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Reads what arrives into c->buf: bytes read, 0 at the peer's close, -1 on failure. */
static ssize_t recv_some(struct client_conn *c, int64_t deadline) {
    if (c->len == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 65536;
        if (cap > CLIENT_HTTP_ANSWER_MAX) {
            return -1;
        }
        char *b = realloc(c->buf, cap);
        if (b == NULL) {
            return -1;
        }
        c->buf = b;
        c->cap = cap;
    }
    for (;;) {
        ssize_t n;
        short ev = POLLIN;
        if (c->ssl != NULL) {
            n = SSL_read(c->ssl, c->buf + c->len, (int)(c->cap - c->len));
            if (n <= 0) {
                int why = SSL_get_error(c->ssl, (int)n);
                if (why == SSL_ERROR_ZERO_RETURN) {
                    return 0;
                }
                if (why != SSL_ERROR_WANT_READ && why != SSL_ERROR_WANT_WRITE) {
                    return -1;
                }
                ev = why == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
            }
        } else {
            n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
            if (n == 0) {
                return 0;
            }
            if (n < 0 && errno != EAGAIN && errno != EINTR) {
                return -1;
            }
        }
        if (n > 0) {
            c->len += (size_t)n;
            return n;
        }
        if (wait_fd(c->fd, ev, deadline) != 0) {
            return -1;
        }
    }
}

/* Reads one answer into c->buf. The body fits the buffer's cap (client_head.h bounds the length
 * before any sum of it); bytes past the answer are refused: the refill sends one request at a
 * time, so more than announced is a node out of step, or an answer not from a node. */
static int read_answer(struct client_conn *c, int64_t deadline, struct client_answer *a,
                       int *close_after) {
    c->len = 0;
    char *end;
    for (;;) {
        if (c->len > 0 && (end = memmem(c->buf, c->len, "\r\n\r\n", 4)) != NULL) {
            break;
        }
        if (recv_some(c, deadline) <= 0) {
            return -1;
        }
    }
    size_t head_len = (size_t)(end - c->buf) + 4;
    struct client_head h;
    if (client_head_parse(c->buf, head_len - 2, CLIENT_HTTP_ANSWER_MAX - head_len, &h) != 0) {
        return -1;
    }
    while (c->len - head_len < h.body_len) {
        if (recv_some(c, deadline) <= 0) {
            return -1;
        }
    }
    if (c->len - head_len != h.body_len) {
        return -1;
    }
    a->status = h.status;
    a->body = c->buf + head_len;
    a->body_len = h.body_len;
    a->location = c->buf + h.location_off;
    a->location_len = h.location_len;
    *close_after = h.close_after;
    return 0;
}

static int connect_node(struct client_conn *c, SSL_CTX *tls, const struct client_endpoint *e,
                        int64_t deadline, char *err, size_t errlen) {
    c->fd = dial(e, deadline, err, errlen);
    if (c->fd < 0) {
        return -1;
    }
    if (e->tls && handshake(c, tls, e, deadline, err, errlen) != 0) {
        client_http_close(c);
        return -1;
    }
    return 0;
}

int client_http_get(struct client_conn *c, SSL_CTX *tls, const struct client_endpoint *e,
                    const char *path, const char *extra, int64_t timeout_ms,
                    struct client_answer *a, char *err, size_t errlen) {
    int64_t deadline = client_clock_ms() + timeout_ms;
    char req[2048];
    int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s:%d\r\n%s\r\n", path, e->host,
                     e->port, extra);
    if (n < 0 || (size_t)n >= sizeof(req)) {
        snprintf(err, errlen, "request for %s too long", path);
        return -1;
    }
    /* A kept connection the node closed while idle fails at once: one more try, fresh. */
    for (int attempt = 0; attempt < 2; attempt++) {
        int reused = c->fd >= 0, close_after = 0;
        if (!reused && connect_node(c, tls, e, deadline, err, errlen) != 0) {
            return -1;
        }
        if (send_all(c, req, (size_t)n, deadline) == 0 &&
            read_answer(c, deadline, a, &close_after) == 0) {
            if (close_after) {
                client_http_close(c);
            }
            return 0;
        }
        client_http_close(c);
        if (!reused || client_clock_ms() >= deadline) {
            break;
        }
    }
    snprintf(err, errlen, "GET %s from %s:%d failed: %s", path, e->host, e->port,
             client_clock_ms() >= deadline ? "timed out" : "connection closed or refused");
    return -1;
}
