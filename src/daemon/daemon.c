/*
 * The daemon's one state machine (see daemon.h): start, serve, hand over to the
 * new process of an in-place upgrade (docs/UPGRADING.md, "In place, without a
 * restart") or stop, and the stop's end. The hand-over's mechanics are below
 * it (daemon_handover*.c); this file decides when each runs. Control thread,
 * but for daemon_main's start, which runs on the same thread before the
 * event loops start.
 */
#include "daemon.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "daemon_objects.h"
#include "daemon_signals.h"
#include "log.h"
#include "net_tls.h"
#include "sequence_service.h"
#include "snowflake_service.h"
#include "version.h"

void daemon_init(struct daemon *d, char **argv) {
    memset(d, 0, sizeof(*d));
    d->phase = DAEMON_STARTING;
    d->lock.fd = -1;
    d->argv = argv;
}

/* 1 while a drain runs (a stop or an upgrade's hand-over) or after it. */
static int daemon_stopping(const struct daemon *d) {
    return d->phase >= DAEMON_HANDING_OVER;
}

static void daemon_resume(struct daemon *d);

/*
 * An upgrade's drain: once every connection is gone (or 10 s), the sequences hand back. Should
 * the new process end before that, this process serves on (daemon_resume).
 */
static void on_handover_drained(uv_timer_t *t) {
    struct daemon *d = t->data;
    int gone = daemon_handover_new_gone(&d->reload) && d->exit_code == 0;
    if (gone && !d->stop_asked) {
        daemon_resume(d);
        return;
    }
    if (!gone &&
        daemon_objects_connections(d, DOOR_PROTO_HTTP) +
                daemon_objects_connections(d, DOOR_PROTO_RESP) >
            0 &&
        clock_mono_ms() < d->reload_deadline_ms) {
        return;
    }
    /* The point of no return: from here the services stop and the session goes over. */
    uv_close((uv_handle_t *)t, NULL);
    daemon_signals_stop(d);
    daemon_signals_ignore_stopping();
    net_server_stop(d->server); /* the listeners close; each loop ends with its last connection */
    if (gone) {
        /* Asked to stop, and the new process is gone too: a plain stop (the drain bounded it). */
        log_info("reload", "the new process (pid %d) ended during the drain; stopping as asked",
                 d->reload.pid);
        d->phase = DAEMON_STOPPING;
        sequence_service_stop(d->sequence);
    } else {
        sequence_service_stop_handover(d->sequence); /* stays in line: the new process keeps it */
    }
    uv_stop(&d->control);
}

/* The new process of an upgrade: the sequence election settles before it accepts (bounded). */
static void on_settle(uv_timer_t *t) {
    struct daemon *d = t->data;
    struct sequence_service_stats st;
    memset(&st, 0, sizeof(st));
    if (d->sequence != NULL) {
        sequence_service_stats(d->sequence, &st);
    }
    /* Sharded, the slots the map gives this node again are issued past the barrier. */
    int settled = !sequence_service_shard_settling(d->sequence) &&
                  (st.primary || st.where.known || st.sharded);
    if (!st.enabled || settled || clock_mono_ms() >= d->reload_deadline_ms) {
        uv_timer_stop(t);
        uv_stop(t->loop);
    }
}

static void daemon_settle(struct daemon *d) {
    d->reload_deadline_ms = clock_mono_ms() + 3000;
    uv_timer_init(&d->control, &d->reload_timer);
    d->reload_timer.data = d;
    uv_timer_start(&d->reload_timer, on_settle, 0, 5);
    uv_run(&d->control, UV_RUN_DEFAULT);
    uv_close((uv_handle_t *)&d->reload_timer, NULL);
}

/*
 * Drains and stops the services in order, or, in HANDING_OVER, drains for the new process of an
 * upgrade and hands over at the end (on_handover_drained).
 */
static void daemon_drain(struct daemon *d) {
    int handover = d->phase == DAEMON_HANDING_OVER;
    atomic_store(&d->stop_flag, 1);
    if (d->stop_delaying) {
        d->stop_delaying = 0;
        uv_close((uv_handle_t *)&d->stop_delay, NULL);
    }
    if (handover) {
        daemon_notify_handover(&d->notify); /* the new process tells systemd READY=1 */
    } else {
        daemon_notify_stopping(&d->notify);
    }
    daemon_signals_drain_bound(1);
    if (handover) {
        /* The sequence primary serves until its clients have gone: then it hands back. */
        net_server_stop_polite(d->server); /* clients reconnect to the new process */
        /* The loops drain on their own; the control loop serves them until then, and keeps
         * catching the signals (on_signal, on_sighup) until the point of no return. */
        d->reload_deadline_ms = clock_mono_ms() + 10000;
        uv_timer_init(&d->control, &d->reload_timer);
        d->reload_timer.data = d;
        uv_timer_start(&d->reload_timer, on_handover_drained, 10, 10);
        return;
    }
    /* The sequence primary hands over first, at once: the next node in line
     * takes over while this one drains. */
    sequence_service_stop(d->sequence);
    net_server_stop(d->server);
    daemon_signals_stop(d);         /* the services run the loop until it is empty */
    daemon_signals_usr2_stopping(); /* a second upgrade while this one stops: logged */
    /* Leave the control loop now; the services are stopped in order in daemon_main(). */
    uv_stop(&d->control);
}

/* Stops the process as SIGTERM does: drain, then the services backward (daemon_end). */
static void daemon_stop(struct daemon *d) {
    if (daemon_stopping(d)) {
        return;
    }
    d->phase = DAEMON_STOPPING;
    daemon_drain(d);
}

/* The new process adopted the listeners: stop as at SIGTERM, but hand over at the end. */
static void on_handover_adopted(void *arg) {
    struct daemon *d = arg;
    int was_stopping = daemon_stopping(d);
    d->phase = DAEMON_HANDING_OVER;
    if (!was_stopping) {
        daemon_drain(d);
    }
}

/*
 * Control thread: a service cannot go on safely (its identity is another
 * live node's, ZooKeeper lost the cluster's tree): it has stopped issuing
 * and logged why; the rest of the process stops as at a signal, exit 1.
 */
static void daemon_fail(void *arg) {
    struct daemon *d = arg;
    /* The service logged why on this thread just now; the shutdown may log more. */
    snprintf(d->fail_reason, sizeof(d->fail_reason), "%s", log_last_error());
    log_error("main", "stopping: a service cannot go on (see the error above); exit 1");
    d->exit_code = 1;
    daemon_stop(d);
}

/* SIGUSR2: the in-place upgrade starts (or waits until the process serves). */
static void daemon_upgrade(struct daemon *d) {
    struct daemon_handover_listener ls[NET_MAX_LISTENERS];
    if (daemon_stopping(d) || d->stop_delaying) {
        log_warn("reload", "received SIGUSR2 while stopping: ignored");
        return;
    }
    if (d->phase == DAEMON_STARTING) {
        /* The listeners are not this process's to hand over yet (an upgrade's new
         * process settling, before net_server_start): the upgrade waits for them. */
        if (!d->usr2_pending) {
            log_info("reload", "received SIGUSR2 while starting: the in-place upgrade starts "
                               "once this process accepts");
        }
        d->usr2_pending = 1;
        return;
    }
    struct zk_session *zs = node_zk_session(&d->zk);
    if (zs != NULL && zk_session_state(zs) != ZK_STATE_CONNECTED) {
        /* The new process must resume this session to keep the node's identity and its
         * place in line; with ZooKeeper out of reach it could not, and the node would be
         * down until ZooKeeper returns. This process serves on meanwhile. */
        log_warn("reload", "received SIGUSR2: in-place upgrade not started: the ZooKeeper "
                           "session is not connected (the new process could not take it over); "
                           "still serving; send SIGUSR2 again once ZooKeeper is back");
        return;
    }
    for (int i = 0; i < d->nlisteners; i++) {
        ls[i].what = d->listeners[i].what;
        ls[i].nfds = net_server_listener_fds(d->server, i, ls[i].fds, DAEMON_HANDOVER_MAX_FDS);
    }
    daemon_handover_start(&d->reload, ls, d->nlisteners, d->lock.fd);
}

static void on_stop_delay(uv_timer_t *t) {
    struct daemon *d = t->data;
    log_info("main", "stop delay over (leafd.stop.delay.ms), draining in-flight requests");
    daemon_stop(d);
}

/*
 * SIGTERM with leafd.stop.delay.ms: the node answers /ready 503 at once and serves on for the
 * delay, so the Service's endpoints and the load balancers drop it before its listener closes
 * (docs/kubernetes.md, "Stopping"); a second SIGTERM or SIGINT drains at once.
 */
static void on_signal(uv_signal_t *s, int signum) {
    struct daemon *d = s->data;
    if (d->phase == DAEMON_HANDING_OVER) {
        /* The old process of an upgrade, draining: the new one serves and owns the pid file. */
        if (!d->stop_asked) {
            log_info("reload",
                     "received %s during an in-place upgrade's drain: ending the drain now and "
                     "handing over; the new process (pid %d) serves on (stop it to stop the node)",
                     strsignal(signum), d->reload.pid);
        }
        d->stop_asked = 1;
        d->reload_deadline_ms = clock_mono_ms();
        return;
    }
    if (signum == SIGTERM && d->cfg.stop_delay_ms > 0 && !daemon_stopping(d) && !d->stop_delaying) {
        atomic_store(&d->stop_flag, 1);
        uv_timer_init(&d->control, &d->stop_delay);
        d->stop_delay.data = d;
        uv_timer_start(&d->stop_delay, on_stop_delay, (uint64_t)d->cfg.stop_delay_ms, 0);
        d->stop_delaying = 1;
        log_info("main",
                 "received %s: /ready answers 503, serving on for %lld ms (leafd.stop.delay.ms) "
                 "before the drain",
                 strsignal(signum), (long long)d->cfg.stop_delay_ms);
        return;
    }
    log_info("main", "received %s, draining in-flight requests", strsignal(signum));
    daemon_stop(d);
}

/* SIGHUP: a new certificate and key for new TLS connections; open ones keep theirs. */
static void on_sighup(uv_signal_t *s, int signum) {
    struct daemon *d = s->data;
    char why[1024];
    (void)signum;
    if (daemon_stopping(d)) {
        log_info("reload",
                 "received SIGHUP during an in-place upgrade's drain: ignored (the new "
                 "process, pid %d, loaded the certificate at its start)",
                 d->reload.pid);
        return;
    }
    if (d->tls == NULL) {
        log_info("main", "received SIGHUP: nothing to reload (no TLS listener)");
        return;
    }
    if (net_tls_ctx_reload(d->tls, why, sizeof(why)) != LEAF_OK) {
        log_error("main",
                  "received SIGHUP: TLS reload failed, still serving the previous "
                  "certificate: %s",
                  why);
        return;
    }
    log_info("main", "received SIGHUP: reloaded the TLS certificate %s and key %s",
             d->cfg.tls_cert_file, d->cfg.tls_key_file);
}

/* SIGUSR2: start the new binary, handing it the listening sockets and the lock. */
static void on_sigusr2(uv_signal_t *s, int signum) {
    (void)signum;
    daemon_upgrade(s->data);
}

/*
 * The new process of an in-place upgrade ended after it adopted the listeners, before this one
 * handed its ZooKeeper session over (docs/UPGRADING.md, "In place, without a restart"). Until the
 * drain's end (on_handover_drained) this process has only stopped accepting: its listening
 * sockets are open, its services and its session untouched, the lock its own open file. So it
 * serves on: the lock and the pid file name it again, the loops accept again (what queued
 * meanwhile included), the signals and systemd's status come back. Connections closed in the
 * drain are gone; their clients reconnect. Control thread, from the drain's timer.
 */
static void daemon_resume(struct daemon *d) {
    char how[96], err[512];
    daemon_handover_exit_text(&d->reload, how, sizeof(how));
    leaf_status_t rc = dirlock_reclaim(&d->lock, d->cfg.data_dir, err, sizeof(err));
    if (rc == LEAF_OK && net_server_resume(d->server) != LEAF_OK) {
        snprintf(err, sizeof(err), "its listeners are closed already");
        rc = LEAF_ERR;
    }
    if (rc != LEAF_OK) {
        /* The drain goes on to its end; the hand-over then fails and the process exits 1. */
        snprintf(d->fail_reason, sizeof(d->fail_reason),
                 "in-place upgrade: the new process (pid %d) %s after it adopted the listeners, "
                 "and this one cannot serve on: %s",
                 d->reload.pid, how, err);
        log_error("reload", "%s", d->fail_reason);
        d->exit_code = 1;
        return;
    }
    daemon_signals_drain_bound(0);
    uv_close((uv_handle_t *)&d->reload_timer, NULL);
    atomic_store(&d->stop_flag, 0); /* /ready answers for this process again */
    d->phase = DAEMON_SERVING;      /* the signal handles stayed open through the drain */
    daemon_notify_resume(&d->notify);
    if (dirlock_pidfile_follow(d->cfg.data_dir, d->reload.pid) < 0) {
        log_warn("reload", "%s/leafd.pid cannot be rewritten to name this process (pid %ld): %s",
                 d->cfg.data_dir, (long)getpid(), strerror(errno));
    }
    log_error("reload",
              "in-place upgrade failed: the new process (pid %d) %s after it adopted the "
              "listeners, before the hand-over; serving on from this process (pid %ld), "
              "accepting again on the same sockets",
              d->reload.pid, how, (long)getpid());
}

/* The refusal that stopped the start, kept before the clean-up may log more. */
static void daemon_keep_reason(struct daemon *d) {
    snprintf(d->fail_reason, sizeof(d->fail_reason), "%s", log_last_error());
}

/* The first accept of an upgrade's new process: the gap since the previous one stopped. */
static void log_handover_gap(const struct daemon *d) {
    if (d->child.on && d->child.stopped_mono_ms > 0) {
        log_info("reload",
                 "in-place upgrade: accepting again %lld ms after the previous process stopped",
                 (long long)(clock_mono_ms() - d->child.stopped_mono_ms));
    } else if (d->child.on) { /* a 1.0 process sends the wall clock only: a step shows here */
        log_info("reload",
                 "in-place upgrade: accepting again %lld ms after the previous process stopped "
                 "(by the wall clock)",
                 (long long)(clock_wall_ms() - d->child.stopped_ms));
    }
}

/* STARTING: every object from the table, then the loops. On failure what started is undone. */
static leaf_status_t daemon_start(struct daemon *d) {
    const struct leaf_config *c = &d->cfg;
    if (daemon_objects_create(d, daemon_keep_reason) != LEAF_OK) {
        return LEAF_ERR; /* unwound already */
    }
    snowflake_service_on_fail(d->snowflake, daemon_fail, d);
    if (daemon_objects_start(d) != LEAF_OK) {
        daemon_keep_reason(d);
        daemon_objects_free(d);
        return LEAF_ERR;
    }
    struct net_limits limits = {c->idle_timeout_ms, c->request_timeout_ms, c->max_connections,
                                c->max_connections_per_address};
    /* The control loop handles them once it runs. */
    daemon_signals_start(d, on_signal, on_sighup, on_sigusr2);
    daemon_handover_init(&d->reload, &d->control, d->argv, on_handover_adopted, d);
    int early = daemon_signals_stop_early();
    if (early != 0) {
        log_info("main",
                 "received %s while taking over from the previous process: stopping "
                 "before accepting",
                 strsignal(early));
        daemon_stop(d);
    }
    if (d->child.on && !daemon_stopping(d)) {
        daemon_settle(d);
    }
    if (daemon_stopping(d)) {
        /* SIGTERM while the election settled: stop before accepting (daemon_main sees it). */
        return LEAF_OK;
    }
    if (net_server_start(&d->server, &limits, d->listeners, d->nlisteners, d->nthreads) !=
        LEAF_OK) {
        daemon_signals_stop(d); /* the stops below run the loop until it is empty */
        daemon_objects_stop(d);
        daemon_keep_reason(d);
        daemon_objects_free(d);
        return LEAF_ERR;
    }
    log_info("main", "leafd %s listening on %s (HTTP)%s%s%s%s%s%s%s%s%s with %d event loops",
             leafd_version(), c->listen, c->resp_port ? ", " : "", c->resp_listen,
             c->resp_port ? " (RESP)" : "", c->tls_port ? ", " : "", c->tls_listen,
             c->tls_port ? " (HTTPS)" : "", c->resp_tls_port ? ", " : "", c->resp_tls_listen,
             c->resp_tls_port ? " (RESP over TLS)" : "", d->nthreads);
    log_handover_gap(d);
    d->phase = DAEMON_SERVING;
    int usr2 = daemon_signals_usr2_early();
    if (usr2 && !d->usr2_pending) {
        log_info("reload", "received SIGUSR2 while starting: the in-place upgrade starts now");
    }
    if (usr2 || d->usr2_pending) {
        d->usr2_pending = 0;
        daemon_upgrade(d);
    }
    return LEAF_OK;
}

/* The control loop has ended: the services stop backward, then hand over or free and exit. */
static int daemon_end(struct daemon *d) {
    net_server_join(d->server);
    daemon_objects_stop(d); /* after the event loops */
    if (d->phase == DAEMON_HANDING_OVER) {
        /* An in-place upgrade: the new process takes the session, the lock and the
         * sockets; exit without closing the session (its ephemeral nodes stay). */
        struct zk_client_id id = {0};
        struct zk_session *zs = node_zk_session(&d->zk);
        if (zs != NULL) {
            (void)zk_session_client_id(zs, &id);
        }
        if (daemon_handover_session(&d->reload, &id) == LEAF_OK) {
            _exit(0);
        }
        /* Nobody serves now: a supervisor restarts the node. The last line says why (the
         * reason given first, should daemon_resume have found it cannot serve on). */
        if (d->fail_reason[0] == '\0') {
            daemon_keep_reason(d);
        }
        d->exit_code = 1;
    }
    d->phase = DAEMON_STOPPED;
    daemon_objects_free(d);
    dirlock_release(&d->lock);
    if (d->exit_code != 0) {
        log_error("main", "stopped after a failure (exit %d): %s", d->exit_code,
                  d->fail_reason[0] != '\0' ? d->fail_reason : "see the errors above");
        return d->exit_code;
    }
    log_info("main", "stopped cleanly");
    return 0;
}

int daemon_main(struct daemon *d) {
    char err[256];
    daemon_signals_log_json(d->cfg.log_json);
    if (daemon_handover_child_parse(&d->child, err, sizeof(err)) != 0) {
        log_error("main", "%s", err);
        return 1;
    }
    signal(SIGPIPE, SIG_IGN); /* libuv does not; a closed client must not kill us */
    if (daemon_start(d) != LEAF_OK) {
        /* Every refusal at start is logged on this thread; the clean-up may log more, so the
         * last line repeats it (docs/OPERATIONS.md, "When a node refuses to start"). */
        log_error("main", "not started (exit 1): %s",
                  d->fail_reason[0] != '\0' ? d->fail_reason : "see the error above");
        return 1;
    }
    if (daemon_stopping(d)) {
        log_info("main", "stopped before accepting: a signal came while starting");
    } else if (d->child.on) {
        daemon_notify_start_main(&d->notify, &d->control, &d->api); /* systemd's main process */
    } else {
        daemon_notify_start(&d->notify, &d->control, &d->api);
    }
    if (!daemon_stopping(d)) {
        uv_run(&d->control, UV_RUN_DEFAULT);
    }
    return daemon_end(d);
}
