#include "net.h"

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

/*
 * Counts the connection under its client's address; 0 when that address
 * holds its share already (leafd.http.max.connections.per.address).
 */

static long long open_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    long long n = 0;
    if (d == NULL) {
        return 0;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        n += e->d_name[0] != '.';
    }
    closedir(d);
    return n > 0 ? n - 1 : 0; /* less opendir's own */
}

/*
 * Fits the connection limit to RLIMIT_NOFILE: raises the soft limit to the
 * hard one where it can, then lowers max_connections to what the soft limit
 * leaves after the descriptors open now, the listeners and a margin.
 */
static void limits_fit_nofile(struct net_limits *lim, int nsockets) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        return;
    }
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit want = {rl.rlim_max, rl.rlim_max};
        if (setrlimit(RLIMIT_NOFILE, &want) == 0) {
            log_info("net", "RLIMIT_NOFILE soft limit raised from %llu to the hard limit %llu",
                     (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
            rl = want;
        }
    }
    if (rl.rlim_cur == RLIM_INFINITY) {
        return;
    }
    long long now = open_fds();
    long long room = (long long)rl.rlim_cur - now - nsockets - NET_FD_MARGIN;
    if (room < 1) {
        room = 1;
    }
    if (lim->max_connections > room) {
        log_warn("net",
                 "leafd.http.max.connections = %" PRId64 " is more than RLIMIT_NOFILE %llu leaves "
                 "for connections (%lld descriptors open, %d kept free); using %lld (raise "
                 "LimitNOFILE= or ulimit -n, or lower leafd.http.max.connections)",
                 lim->max_connections, (unsigned long long)rl.rlim_cur, now + nsockets,
                 NET_FD_MARGIN, room);
        lim->max_connections = room;
    }
}

/*
 * The limit per client address, once max_connections is fitted: 0 takes
 * half of it, so one client leaves the other half to the rest, and the last
 * eighth is kept for addresses with few connections, so two clients cannot
 * take everything either; at or above it, no table is kept (no lock at
 * accept). 0, or -1 out of memory (logged).
 */
static int limits_per_address(struct net_server *srv) {
    struct net_limits *lim = &srv->limits;
    if (lim->max_per_address <= 0) {
        lim->max_per_address = lim->max_connections > 1 ? lim->max_connections / 2 : 1;
    }
    if (lim->max_per_address >= lim->max_connections) {
        return 0;
    }
    if (net_peercount_init(&srv->peers, (size_t)lim->max_connections, lim->max_per_address,
                           lim->max_connections / NET_RESERVE_DIV) != LEAF_OK) {
        log_error("net", "out of memory for the connection count of %" PRId64 " addresses",
                  lim->max_connections);
        return -1;
    }
    return 0;
}

leaf_status_t net_server_start(struct net_server **out, const struct net_limits *limits,
                               const struct net_listen_config *listeners, int nlisteners,
                               int nloops) {
    if (nlisteners < 1 || nlisteners > NET_MAX_LISTENERS || nloops < 1 || nloops > NET_MAX_LOOPS) {
        log_error("net", "bad server shape: %d listeners, %d loops", nlisteners, nloops);
        return LEAF_EINVAL;
    }
    struct net_server *srv = calloc(1, sizeof(*srv));
    if (srv == NULL) {
        log_error("net", "calloc(server) failed");
        return LEAF_ENOMEM;
    }
    srv->limits = *limits;
    limits_fit_nofile(&srv->limits, nlisteners * nloops);
    if (limits_per_address(srv) != 0) {
        free(srv);
        return LEAF_ENOMEM;
    }
    srv->listeners = listeners;
    srv->nlisteners = nlisteners;
    for (int i = 0; i < nloops; i++) {
        struct net_loop *nl = calloc(1, sizeof(*nl));
        if (nl == NULL) {
            log_error("net", "calloc(loop) failed");
            goto fail;
        }
        srv->loops[srv->nloops++] = nl;
        if (net_loop_init(nl, srv, i) != 0) {
            goto fail;
        }
    }
    *out = srv; /* visible before any loop can serve /metrics */
    for (int i = 0; i < srv->nloops; i++) {
        if (uv_thread_create(&srv->loops[i]->thread, net_loop_thread, srv->loops[i]) != 0) {
            log_error("net", "uv_thread_create(loop %d) failed", i);
            abort();
        }
    }
    return LEAF_OK;
fail:
    /* Start-up failed before any thread ran: release in reverse order. */
    while (srv->nloops > 0) {
        net_loop_destroy(srv->loops[--srv->nloops]);
    }
    net_peercount_destroy(&srv->peers);
    free(srv);
    return LEAF_ERR;
}

void net_server_stop(struct net_server *srv) {
    for (int i = 0; srv != NULL && i < srv->nloops; i++) {
        atomic_store(&srv->loops[i]->want, NET_STOPPING);
        uv_async_send(&srv->loops[i]->async);
    }
}

void net_server_stop_polite(struct net_server *srv) {
    for (int i = 0; srv != NULL && i < srv->nloops; i++) {
        struct net_loop *nl = srv->loops[i];
        atomic_store(&nl->polite_asked, 1);
        if (atomic_load(&nl->want) == NET_SERVING) {
            atomic_store(&nl->want, NET_HOLDING);
        }
        uv_async_send(&nl->async);
    }
}

leaf_status_t net_server_resume(struct net_server *srv) {
    for (int i = 0; srv != NULL && i < srv->nloops; i++) {
        if (atomic_load(&srv->loops[i]->want) != NET_HOLDING) {
            return LEAF_EINVAL; /* stopping: its listeners are closed */
        }
    }
    for (int i = 0; srv != NULL && i < srv->nloops; i++) {
        struct net_loop *nl = srv->loops[i];
        atomic_store(&nl->polite_asked, 0);
        atomic_store(&nl->want, NET_SERVING);
        uv_async_send(&nl->async);
    }
    return srv != NULL ? LEAF_OK : LEAF_EINVAL;
}

void net_server_join(struct net_server *srv) {
    if (srv == NULL) {
        return; /* never started (a stop before accepting) */
    }
    net_server_stop(srv); /* a held drain ends too: nothing else would end its loop */
    for (int i = 0; i < srv->nloops; i++) {
        struct net_loop *nl = srv->loops[i];
        uv_thread_join(&nl->thread);
        uv_loop_close(&nl->loop);
        pthread_mutex_destroy(&nl->ready_lock);
        free(nl->rbuf);
        free(nl);
    }
    net_peercount_destroy(&srv->peers);
    free(srv);
}

int net_server_listener_fds(const struct net_server *srv, int listener, int *fds, int cap) {
    int n = 0;
    if (srv == NULL || listener < 0 || listener >= srv->nlisteners) {
        return 0;
    }
    for (int i = 0; i < srv->nloops && n < cap; i++) {
        fds[n++] = srv->fds[listener][i];
    }
    return n;
}

uint64_t net_server_closed_unread(const struct net_server *srv) {
    return srv != NULL ? atomic_load_explicit(&srv->stalled, memory_order_relaxed) : 0;
}

uint64_t net_server_connections(const struct net_server *srv, int listener) {
    if (srv == NULL || listener < 0 || listener >= srv->nlisteners) {
        return 0;
    }
    long long n = atomic_load_explicit(&srv->nconns[listener], memory_order_relaxed);
    return n > 0 ? (uint64_t)n : 0;
}
