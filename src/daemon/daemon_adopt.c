/*
 * The new process of an in-place upgrade, the daemon's side (see daemon_adopt.h).
 * Main thread, before any other thread starts.
 */
#include "daemon_adopt.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

/*
 * The new side of an in-place upgrade, before ZooKeeper (the table's lock row): the lock and the
 * sockets are the previous process's; what can fail without ZooKeeper (these, and the
 * certificate: daemon_objects.c) is checked before it is told to stop (a failure here leaves it
 * serving).
 */
leaf_status_t daemon_adopt_sockets(struct daemon *d) {
    char err[512];
    if (dirlock_adopt(&d->lock, d->child.lock, d->cfg.data_dir, err, sizeof(err)) != LEAF_OK) {
        log_error("main", "%s", err);
        return LEAF_ERR;
    }
    /* The listeners by their settings, as daemon_objects.c names them. */
    const struct {
        const char *what, *addr, *host;
        int port;
    } want[] = {
        {"leafd.listen", d->cfg.listen, d->cfg.listen_host, (int)d->cfg.listen_port},
        {"leafd.resp.listen", d->cfg.resp_listen, d->cfg.resp_host, (int)d->cfg.resp_port},
        {"leafd.tls.listen", d->cfg.tls_listen, d->cfg.tls_host, (int)d->cfg.tls_port},
        {"leafd.resp.tls.listen", d->cfg.resp_tls_listen, d->cfg.resp_tls_host,
         (int)d->cfg.resp_tls_port},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        for (int j = 0; j < d->child.nls; j++) {
            char got[64];
            const struct daemon_handover_listener *l = &d->child.ls[j];
            if (strcmp(l->what, want[i].what) != 0 || want[i].port == 0) {
                continue;
            }
            if (daemon_handover_child_check_addr(l->fds, l->nfds, want[i].host, want[i].port, got,
                                                 sizeof(got)) != 0) {
                log_error("main",
                          "%s = %s, but the previous process listens on %s: a changed listen "
                          "address needs a restart, not an in-place upgrade",
                          want[i].what, want[i].addr, got);
                return LEAF_ERR;
            }
        }
    }
    return LEAF_OK;
}

leaf_status_t daemon_adopt_session(struct daemon *d) {
    /* leafctl finds the node by its pid file: from ADOPTED on it names this process, which
     * serves from then (should this one end before the hand-over, the previous process takes it
     * back: daemon_resume), so a stop during the drain reaches the process that will serve. */
    int pf = dirlock_pidfile_follow(d->cfg.data_dir, d->child.parent);
    if (pf < 0) {
        log_warn("reload",
                 "%s/leafd.pid names the previous process (pid %ld) and cannot be "
                 "rewritten: %s; leafctl will not find this process (pid %ld)",
                 d->cfg.data_dir, d->child.parent, strerror(errno), (long)getpid());
    } else if (pf > 0) {
        log_info("reload", "%s/leafd.pid now names this process (pid %ld)", d->cfg.data_dir,
                 (long)getpid());
    }
    if (daemon_handover_child_take(&d->child, &d->zk.adopt) != LEAF_OK) {
        return LEAF_ERR;
    }
    return LEAF_OK;
}

/*
 * The new process of an upgrade resumes the adopted ZooKeeper session before its services
 * start. ZooKeeper may be slow right at the hand-over (paused, electing a leader); nobody
 * serves meanwhile (the old process has exited), and giving up would leave the node down, so
 * it waits longer than a fresh start: up to twice the session timeout, at least 20 s, logging
 * every 5 s. After that the services' own start-up waits decide, as at a start with ZooKeeper
 * down (docs/UPGRADING.md, "In place, without a restart").
 */
void daemon_adopt_wait_session(struct daemon *d) {
    struct zk_session *zs = node_zk_session(&d->zk);
    if (!d->child.on || zs == NULL || d->zk.adopt.id == 0) {
        return;
    }
    int64_t limit =
        2 * d->cfg.zk_session_timeout_ms > 20000 ? 2 * d->cfg.zk_session_timeout_ms : 20000;
    int64_t start = clock_mono_ms(), logged = -5000;
    while (zk_session_wait_connected(zs, 200) != LEAF_OK) {
        int64_t waited = clock_mono_ms() - start;
        if (waited >= limit) {
            log_error("reload",
                      "ZooKeeper (%s) did not answer within %lld ms of the hand-over; "
                      "starting as with ZooKeeper down",
                      d->cfg.zk_address, (long long)limit);
            return;
        }
        if (waited - logged >= 5000) {
            logged = waited;
            log_warn("reload",
                     "waiting for ZooKeeper (%s) to resume the adopted session: %lld ms "
                     "so far, at most %lld",
                     d->cfg.zk_address, (long long)waited, (long long)limit);
        }
        if (zk_session_state(zs) != ZK_STATE_CONNECTING) {
            /* Expired: there is nothing left to resume. The start goes on as after a crash
             * (a new session, the identity taken over), which is no longer a wait. */
            log_warn("reload", "the adopted ZooKeeper session expired during the hand-over; "
                               "starting on a new session, as after a restart");
            return;
        }
    }
}
