/* The listening sockets, accepting, and the connection limits at accept (net.h). */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include "log.h"
#include "net_state.h"

/* ---- listeners ------------------------------------------------------------ */

/* Opens a listening socket with SO_REUSEPORT, so every loop has its own. */
static int listen_socket(const struct net_listen_config *lc) {
    struct sockaddr_in addr;
    int one = 1;
    if (uv_ip4_addr(lc->host, lc->port, &addr) != 0) {
        log_error("net", "bad listen address %s", lc->addr);
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        log_error("net", "socket() failed: %s", strerror(errno));
        return -1;
    }
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) {
        log_error("net", "setsockopt(%s, SO_REUSEPORT) failed: %s", lc->addr, strerror(errno));
        close(fd);
        return -1;
    }
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        log_error("net", "bind(%s) for %s failed: %s", lc->addr, lc->what ? lc->what : "listening",
                  strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int net_listener_init(struct net_loop *nl, struct net_listener *ls,
                      const struct net_listen_config *lc, int index) {
    ls->cfg = lc;
    ls->nl = nl;
    ls->index = index;
    if (lc->fds != NULL && nl->index < lc->nfds) {
        /* Inherited from the previous process (an in-place upgrade): already bound. */
        ls->fd = lc->fds[nl->index];
        int fl = fcntl(ls->fd, F_GETFL);
        if (fl < 0 || fcntl(ls->fd, F_SETFL, fl | O_NONBLOCK) != 0 ||
            fcntl(ls->fd, F_SETFD, FD_CLOEXEC) != 0) {
            log_error("net", "inherited socket %d for %s is not usable: %s", ls->fd, lc->addr,
                      strerror(errno));
            return -1;
        }
    } else {
        ls->fd = listen_socket(lc);
    }
    if (ls->fd < 0) {
        return -1;
    }
    nl->srv->fds[index][nl->index] = ls->fd;
    /* leafd accepts itself (net_listener_on_readable): out of descriptors, it can stop
     * polling the socket, which libuv's listen cannot (it spins on EMFILE). */
    if (listen(ls->fd, 4096) != 0) {
        log_error("net", "listen(%s) failed: %s", lc->addr, strerror(errno));
        return -1;
    }
    int rc = uv_poll_init(&nl->loop, &ls->poll, ls->fd);
    if (rc != 0) {
        log_error("net", "polling %s failed: %s", lc->addr, uv_strerror(rc));
        return -1;
    }
    ls->poll.data = ls;
    uv_timer_init(&nl->loop, &ls->resume);
    ls->resume.data = ls;
    ls->listening = 1;
    uv_poll_start(&ls->poll, UV_READABLE, net_listener_on_readable);
    return 0;
}

/* ---- accepting: admission and the connection limits ------------------------ */

static int addr_is_loopback(const struct sockaddr_storage *ss) {
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
    }
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        return IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
    }
    return 0;
}

/* "ip:port" of a peer ("?" when unknown), for log lines. */
static void peer_name(const struct sockaddr_storage *ss, char *out, size_t cap) {
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
        uv_ip4_name(a, ip, sizeof(ip));
        port = ntohs(a->sin_port);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
        uv_ip6_name(a, ip, sizeof(ip));
        port = ntohs(a->sin6_port);
    }
    snprintf(out, cap, "%s:%d", ip, port);
}

/* The address bytes of a peer (an IPv4-mapped IPv6 address as IPv4); 0 when it has none. */
static size_t peer_addr(const struct sockaddr_storage *ss, const unsigned char **addr) {
    if (ss->ss_family == AF_INET) {
        *addr = (const unsigned char *)&((const struct sockaddr_in *)ss)->sin_addr;
        return 4;
    }
    if (ss->ss_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
        *addr = IN6_IS_ADDR_V4MAPPED(a) ? a->s6_addr + 12 : a->s6_addr;
        return IN6_IS_ADDR_V4MAPPED(a) ? 4 : 16;
    }
    return 0;
}

/* One line a second for the whole process, whichever loop logs; 1 when this one may. */

static int conn_admit_address(struct net_conn *c, const struct sockaddr_storage *ss,
                              const char *who) {
    struct net_loop *nl = c->nl;
    struct net_server *srv = nl->srv;
    const unsigned char *addr = NULL;
    size_t n = peer_addr(ss, &addr);
    if (srv->peers.slots == NULL || n == 0) {
        return 1; /* no limit per address, or no address to count it under (a peer gone) */
    }
    c->peer_slot = net_peercount_take(&srv->peers, addr, n);
    if (c->peer_slot != 0) {
        return 1;
    }
    unsigned long long refused = atomic_fetch_add(&srv->rejected_per_address, 1) + 1;
    if (net_log_once_a_second(nl, &srv->addr_log_ms)) {
        const char *port = strrchr(who, ':'); /* the address is what reached it, not this port */
        int len = port != NULL ? (int)(port - who) : (int)strlen(who);
        log_warn("net",
                 "connection limit leafd.http.max.connections.per.address = %" PRId64
                 " reached by %.*s; closing its new connections on %s (%llu refused so far)",
                 srv->limits.max_per_address, len, who, c->ls->cfg->addr, refused);
    }
    return 0;
}

/* Counts the connection; 0 when the process-wide limit or the one per address says close it. */
static int conn_admit(struct net_conn *c, const struct sockaddr_storage *ss, const char *who) {
    struct net_loop *nl = c->nl;
    struct net_server *srv = nl->srv;
    atomic_fetch_add_explicit(&srv->nconns[c->ls->index], 1, memory_order_relaxed);
    long long n = atomic_fetch_add_explicit(&srv->total_conns, 1, memory_order_relaxed) + 1;
    if (n <= srv->limits.max_connections) {
        return conn_admit_address(c, ss, who);
    }
    atomic_fetch_add_explicit(&srv->rejected, 1, memory_order_relaxed);
    if (net_log_once_a_second(nl, &srv->limit_log_ms)) {
        log_warn("net",
                 "connection limit leafd.http.max.connections = %" PRId64
                 " reached; closing new clients on %s (%llu refused so far)",
                 srv->limits.max_connections, c->ls->cfg->addr,
                 (unsigned long long)atomic_load(&srv->rejected));
    }
    return 0;
}

/*
 * A connection over a limit: told so in its protocol's words where the
 * socket takes them at once (a plain listener; a TLS client expects a
 * handshake), then closed.
 */
static void conn_refuse(struct net_conn *c) {
    const struct proto_ops *proto = c->ls->cfg->proto;
    char buf[512];
    size_t n =
        c->ls->cfg->tls == NULL && proto->refusal != NULL ? proto->refusal(buf, sizeof(buf)) : 0;
    if (n > 0) {
        uv_buf_t b = uv_buf_init(buf, (unsigned)n);
        (void)uv_try_write((uv_stream_t *)&c->tcp, &b, 1);
    }
    net_conn_close(c);
}

/* A connection fd accepted on ls: a connection of the loop, or closed. */
static void conn_accepted(struct net_listener *ls, int fd) {
    struct net_loop *nl = ls->nl;
    struct net_conn *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        log_error("net", "calloc(connection) failed");
        close(fd);
        return;
    }
    c->nl = nl;
    c->ls = ls;
    uv_tcp_init(&nl->loop, &c->tcp);
    uv_timer_init(&nl->loop, &c->timer);
    c->tcp.data = c->timer.data = c;
    c->handles_open = 2;
    if (uv_tcp_open(&c->tcp, fd) != 0) {
        close(fd);
        c->closing = 1;
        uv_close((uv_handle_t *)&c->timer, net_conn_on_closed);
        uv_close((uv_handle_t *)&c->tcp, net_conn_on_closed);
        return;
    }
    c->next = nl->conns;
    if (nl->conns) {
        nl->conns->prev = c;
    }
    nl->conns = c;
    struct sockaddr_storage ss;
    int len = sizeof(ss), loopback = 0;
    char who[sizeof(c->s->peer)] = "?";
    memset(&ss, 0, sizeof(ss));
    if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &len) == 0) {
        loopback = addr_is_loopback(&ss);
        peer_name(&ss, who, sizeof(who));
    }
    if (!conn_admit(c, &ss, who)) {
        conn_refuse(c);
        return;
    }
    c->s = ls->cfg->proto->open(ls->cfg->proto_arg, loopback, nl->index);
    if (c->s == NULL) {
        log_error("net", "out of memory opening a %s connection", ls->cfg->proto->name);
        net_conn_close(c);
        return;
    }
    c->s->conn = c;
    c->s->wait.wake = net_conn_wake;
    memcpy(c->s->peer, who, sizeof(who));
    if (ls->cfg->tls != NULL && (c->tls = net_tls_new(ls->cfg->tls)) == NULL) {
        log_error("net", "out of memory opening a TLS session on %s", ls->cfg->addr);
        net_conn_close(c);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    c->last_active_ms = c->opened_ms = net_loop_now(nl);
    net_conn_update_reading(c);
}

static void on_listener_resume(uv_timer_t *t) {
    struct net_listener *ls = t->data;
    if (ls->listening) {
        uv_poll_start(&ls->poll, UV_READABLE, net_listener_on_readable);
    }
}

/*
 * Out of descriptors (EMFILE, ENFILE, or the kernel's memory): stops polling
 * the listener for NET_ACCEPT_PAUSE_MS instead of spinning on accept. The
 * clients wait in the listen backlog and are served once descriptors free.
 */
static void listener_pause(struct net_listener *ls, int err) {
    struct net_server *srv = ls->nl->srv;
    uv_poll_stop(&ls->poll);
    uv_timer_start(&ls->resume, on_listener_resume, NET_ACCEPT_PAUSE_MS, 0);
    unsigned long long n = atomic_fetch_add(&srv->fd_pauses, 1) + 1;
    if (net_log_once_a_second(ls->nl, &srv->fd_log_ms)) {
        struct rlimit rl = {0, 0};
        getrlimit(RLIMIT_NOFILE, &rl);
        log_warn("net",
                 "accept on %s: %s (RLIMIT_NOFILE %llu, %lld connections open); pausing accepts "
                 "for %d ms (%llu pauses so far; raise LimitNOFILE= or lower "
                 "leafd.http.max.connections)",
                 ls->cfg->addr, strerror(err), (unsigned long long)rl.rlim_cur,
                 (long long)atomic_load(&srv->total_conns), NET_ACCEPT_PAUSE_MS, n);
    }
}

void net_listener_on_readable(uv_poll_t *p, int status, int events) {
    struct net_listener *ls = p->data;
    (void)events;
    if (status < 0 || !ls->listening) {
        return;
    }
    for (int i = 0; i < NET_ACCEPT_BATCH; i++) {
        int fd = accept4(ls->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            conn_accepted(ls, fd);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED) {
            continue;
        }
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            listener_pause(ls, errno);
        } else if (errno != EAGAIN && errno != EWOULDBLOCK &&
                   net_log_once_a_second(ls->nl, &ls->nl->srv->fd_log_ms)) {
            log_warn("net", "accept on %s failed: %s", ls->cfg->addr, strerror(errno));
        }
        return;
    }
}
