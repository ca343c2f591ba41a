#ifndef LEAF_DAEMON_STATE_H
#define LEAF_DAEMON_STATE_H

/*
 * The daemon's state: what the process runs, one struct (see daemon.h for the
 * state machine that drives it). Every file of src/daemon/ reads it; only
 * daemon.c changes the phase.
 *
 * Ownership: main() embeds struct daemon; the main thread builds it before any
 * other thread starts, then the control loop's thread (the main thread) owns
 * every field. The event loops see only door_ctx (src/door/door_ctx.h), and
 * stop_flag through it.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <uv.h>

#include "config.h"
#include "daemon_handover.h"
#include "daemon_notify.h"
#include "dirlock.h"
#include "door_ctx.h"
#include "http_conn.h"
#include "net.h"
#include "node_zk.h"
#include "resp_conn.h"

enum daemon_phase {
    DAEMON_STARTING,     /* building and starting, not accepting yet */
    DAEMON_SERVING,      /* the listeners accept */
    DAEMON_HANDING_OVER, /* an in-place upgrade's drain: hand over at its end */
    DAEMON_STOPPING,     /* a stop's drain (a signal, or a service that failed) */
    DAEMON_STOPPED,      /* the control loop has ended */
};

/* Everything the process runs, owned by main() on its stack. */
struct daemon {
    struct leaf_config cfg;
    enum daemon_phase phase;
    uv_loop_t control; /* the main thread's loop */
    uv_signal_t sig_term, sig_int, sig_hup;
    struct dirlock lock; /* leafd.data.dir, held for the process's life */
    struct node_zk zk;   /* the process's one ZooKeeper session, shared by the services */
    int exit_code;       /* 1 after a service gave up at run time (daemon_fail) */
    /* The error that stopped it (at start or in daemon_fail), repeated as the last line. */
    char fail_reason[2048];
    struct snowflake_service *snowflake;
    struct segment_service *segment;
    struct sequence_service *sequence;
    struct user_service *users;
    struct region_service *region;
    struct node_survey *cluster;
    struct metrics *metrics;
    struct door_ctx api;
    struct http_conn_config http;
    struct resp_conn_config resp;
    struct net_listen_config listeners[NET_MAX_LISTENERS];
    int nlisteners;
    enum door_proto listener_proto[NET_MAX_LISTENERS]; /* the protocol of each listener */
    int nthreads;            /* event loops: leafd.threads, or one per inherited socket */
    struct net_tls_ctx *tls; /* the TLS listeners' certificate (NULL: none); SIGHUP reloads it */
    struct auth_limit *auth_limit; /* failed authentications per client address */
    struct net_server *server;
    int control_ready;                  /* control was initialised */
    struct daemon_notify notify;        /* systemd's READY=1/STATUS=/STOPPING=1 (Type=notify) */
    uv_signal_t sig_usr2;               /* SIGUSR2: in-place upgrade (daemon_handover.h) */
    struct daemon_handover reload;      /* the old side of an in-place upgrade */
    struct daemon_handover_child child; /* the new side: what the previous process handed over */
    char **argv;                        /* as started: an in-place upgrade runs the same */
    uv_timer_t reload_timer;    /* the upgrade's waits on the control loop (drain, election) */
    int signals_closing;        /* signal handles whose close has not completed */
    int64_t reload_deadline_ms; /* monotonic */
    int usr2_pending;           /* SIGUSR2 came while starting: upgrade once serving */
    /* SIGTERM's delay (leafd.stop.delay.ms): /ready answers 503 while the node serves on,
     * then the drain. stop_flag is door_ctx.stopping (read by any loop thread). */
    atomic_int stop_flag;
    uv_timer_t stop_delay;
    int stop_delaying; /* stop_delay runs (its handle is open) */
    int stop_asked;    /* SIGTERM/SIGINT during an upgrade's drain: end it now and
                        * never serve on (docs/UPGRADING.md, "Signals during a
                        * hand-over") */
};

#endif
