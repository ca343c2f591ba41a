/*
 * leafd: a distributed ID node. Start here.
 *
 * The folders are the layers, each a library that may include only the
 * ones below it (CMake enforces it), from the ground up:
 *   src/base     status codes, logging, clocks, growable buffers, parsers;
 *   snowflake/, segment/, sequence/, zk/   the ID domains: pure cores (no
 *                libuv, ZooKeeper or MySQL header) and their I/O;
 *   src/config   the configuration table and its parser;
 *   src/auth     users and permissions, pure (grants, the decision);
 *   src/net      event loops, listeners, connections, wake-ups, drain;
 *   src/http, src/resp   HTTP/1.1 and RESP as protocol modules (no I/O);
 *   src/metrics  the request counters (src/base alone);
 *   src/node     the node's services, one room each: snowflake_node (worker
 *                ID, clock checks, time reservation, the generator),
 *                segment_service (tags, buffers, the database threads),
 *                sequence_service (the elected primary's sequences),
 *                user_service (the users), and the one ZooKeeper session;
 *   src/door     what HTTP, RESP and the pages share: the context the doors
 *                see (door_ctx.h), readiness, issuing, the one auth door;
 *   src/api      the HTTP handlers; src/pages the HTML pages and /metrics;
 *   src/commands the Redis commands;
 *   src/tables   both protocols' tables side by side: the HTTP routes, the
 *                RESP commands, and the metrics registry built from both;
 *   src/main.c   this file, with reload.c (the in-place upgrade) and
 *                notify_ready.c (systemd's notification) beside it.
 * A file's name starts with its room's prefix (docs/design.md, "The code:
 * floors, rooms and names").
 *
 * main() loads the configuration, checks the listen port, starts the
 * services, starts the event loops (one thread each) and then runs the
 * control loop on the main thread: signals, the services' timers (time
 * reports, tag refresh) and the asyncs through which the ZooKeeper and
 * database threads hand results back. SIGTERM/SIGINT drain in-flight
 * requests, shut the services down in order and exit 0. main() owns every
 * object and passes each module what it needs; there is no global state.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "clock.h"
#include "command_client.h"
#include "command_outcome.h"
#include "config.h"
#include "dirlock.h"
#include "door_ctx.h"
#include "log.h"
#include "net.h"
#include "net_tls.h"
#include "node_config.h"
#include "node_zk.h"
#include "notify_ready.h"
#include "pages.h"
#include "reload.h"
#include "segment_service.h"
#include "sequence_service.h"
#include "snowflake_node.h"
#include "snowflake_node_retire.h"
#include "table.h"
#include "table_http.h"
#include "table_resp.h"
#include "user_service.h"
#include "version.h"

/* src/node hands leaf.jdbc.url's TLS mode to segment/ as is: the two enums are one list. */
_Static_assert(CONFIG_DB_TLS_DISABLED == (int)SEGMENT_DB_TLS_DISABLED &&
                   CONFIG_DB_TLS_PREFERRED == (int)SEGMENT_DB_TLS_PREFERRED &&
                   CONFIG_DB_TLS_REQUIRED == (int)SEGMENT_DB_TLS_REQUIRED &&
                   CONFIG_DB_TLS_VERIFY_CA == (int)SEGMENT_DB_TLS_VERIFY_CA &&
                   CONFIG_DB_TLS_VERIFY_IDENTITY == (int)SEGMENT_DB_TLS_VERIFY_IDENTITY,
               "enum config_db_tls and enum segment_db_tls differ");

/* Everything the process runs, owned by main() on its stack. */
struct daemon {
    struct leaf_config cfg;
    uv_loop_t control; /* the main thread's loop */
    uv_signal_t sig_term, sig_int, sig_hup;
    struct dirlock lock; /* leafd.data.dir, held for the process's life */
    struct node_zk zk;   /* the process's one ZooKeeper session, shared by the services */
    int exit_code;       /* 1 after a service gave up at run time (daemon_fail) */
    /* The error that stopped it (at start or in daemon_fail), repeated as the last line. */
    char fail_reason[2048];
    struct snowflake_node *snowflake;
    struct segment_service *segment;
    struct sequence_service *sequence;
    struct user_service *users;
    struct node_survey *cluster;
    struct metrics *metrics;
    struct door_ctx api;
    struct http_conn_config http;
    struct resp_conn_config resp;
    struct net_listen_config listeners[NET_MAX_LISTENERS];
    int nlisteners;
    enum door_proto listener_proto[NET_MAX_LISTENERS]; /* the protocol of each listener */
    struct net_tls_ctx *tls; /* the TLS listeners' certificate (NULL: none); SIGHUP reloads it */
    struct auth_limit *auth_limit; /* failed authentications per client address */
    struct net_server *server;
    int control_ready;          /* control was initialised */
    int stopping;               /* daemon_stop ran */
    struct notify_ready notify; /* systemd's READY=1/STATUS=/STOPPING=1 (Type=notify) */
    uv_signal_t sig_usr2;       /* SIGUSR2: in-place upgrade (reload.h) */
    struct reload reload;       /* the old side of an in-place upgrade */
    struct reload_child child;  /* the new side: what the previous process handed over */
    int reloading;              /* stopping for an in-place upgrade: hand over, do not close */
    char **argv;                /* as started: an in-place upgrade runs the same */
    uv_timer_t reload_timer;    /* the upgrade's waits on the control loop (drain, election) */
    int signals_closing;        /* signal handles whose close has not completed */
    int64_t reload_deadline_ms; /* monotonic */
    int serving;                /* net_server_start succeeded: an upgrade can hand over */
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

static void usage(FILE *out) {
    fprintf(out, "usage: leafd -c FILE            run with a configuration file\n"
                 "       leafd --check-config -c FILE   validate the configuration and exit 0/1\n"
                 "       leafd --print-config -c FILE   print the effective configuration\n"
                 "       leafd --retire IP:PORT|stopped -c FILE   retire forever-mode identities\n"
                 "                                   (their worker IDs join the lease pool)\n"
                 "       leafd --print-reference KIND   a reference table (KIND list: kinds)\n"
                 "       leafd --zk-acl status|open|close -c FILE   the stage of the cluster's\n"
                 "                                   ZooKeeper ACLs (leafd.zk.auth)\n"
                 "       leafd --version\n");
}

/*
 * leafd --print-reference KIND: one of the code's tables as Markdown, the
 * generated parts of docs/reference/ (tools/checks/gen-reference rewrites them,
 * test_ops_reference checks them). One row per kind.
 */
static const struct {
    const char *kind;
    void (*print)(FILE *out);
} reference_kinds[] = {
    /* clang-format off */
    {"config", config_print_reference},
    {"metrics", page_metrics_print_reference},
    {"routes", table_http_print_reference},
    {"commands", table_resp_print_reference},
    {"errors", command_outcome_print_reference},
    /* clang-format on */
};
#define REFERENCE_NKINDS (sizeof(reference_kinds) / sizeof(reference_kinds[0]))

/* Returns the exit code: 0, or 2 for an unknown kind. */
static int print_reference(const char *kind) {
    size_t i;

    for (i = 0; i < REFERENCE_NKINDS; i++) {
        if (kind != NULL && strcmp(kind, reference_kinds[i].kind) == 0) {
            reference_kinds[i].print(stdout);
            return 0;
        }
    }
    if (kind != NULL && strcmp(kind, "list") == 0) {
        for (i = 0; i < REFERENCE_NKINDS; i++) {
            printf("%s\n", reference_kinds[i].kind);
        }
        return 0;
    }
    fprintf(stderr, "leafd: --print-reference: unknown kind '%s'; kinds:", kind ? kind : "");
    for (i = 0; i < REFERENCE_NKINDS; i++) {
        fprintf(stderr, " %s", reference_kinds[i].kind);
    }
    fprintf(stderr, " list\n");
    return 2;
}

struct args {
    const char *config_path;
    int check_only;
    int print_config;
    const char *retire; /* --retire IDENTITY|stopped */
    const char *zk_acl; /* --zk-acl status|open|close */
};

static int parse_args(int argc, char **argv, struct args *a) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-c") == 0 && i + 1 < argc) {
            a->config_path = argv[++i];
        } else if (strcmp(argv[i], "--check-config") == 0) {
            a->check_only = 1;
        } else if (strcmp(argv[i], "--print-config") == 0) {
            a->print_config = 1;
        } else if (strcmp(argv[i], "--retire") == 0 && i + 1 < argc) {
            a->retire = argv[++i];
        } else if (strcmp(argv[i], "--print-reference") == 0) {
            exit(print_reference(i + 1 < argc ? argv[i + 1] : NULL));
        } else if (strcmp(argv[i], "--zk-acl") == 0 && i + 1 < argc) {
            a->zk_acl = argv[++i];
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("leafd %s (commit %s)\n", leafd_version(), leafd_revision());
            exit(0);
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            exit(0);
        } else {
            /* The reason last: it is the line a supervisor shows. */
            usage(stderr);
            fprintf(stderr, "leafd: unknown argument '%s': see the usage above (leafd --help)\n",
                    argv[i]);
            return -1;
        }
    }
    return 0;
}

extern char **environ;

static const char *env_get(const char *name) {
    return getenv(name);
}

/* Loads file + environment + cross-key checks; prints the error and returns -1. */
static int load_config(const struct args *a, struct leaf_config *cfg) {
    char err[1024];
    if (a->config_path == NULL) {
        /* Running on silent defaults (0.0.0.0:8080) is never what was meant. */
        fprintf(stderr, "leafd: no configuration file: give -c FILE (-c /dev/null runs on the "
                        "defaults and LEAF_*/LEAFD_* environment variables alone)\n");
        return -1;
    }
    config_defaults(cfg);
    if (config_load_file(cfg, a->config_path, err, sizeof(err)) != LEAF_OK ||
        config_check_env(environ, err, sizeof(err)) != LEAF_OK ||
        config_apply_env(cfg, env_get, err, sizeof(err)) != LEAF_OK ||
        config_finish(cfg, err, sizeof(err)) != LEAF_OK ||
        node_config_check(cfg, clock_wall_ms(), err, sizeof(err)) != LEAF_OK) {
        fprintf(stderr, "leafd: configuration error: %s\n", err);
        return -1;
    }
    return 0;
}

/* The drain is bounded: a client that never finishes cannot hold the exit. */
#define LEAFD_DRAIN_MAX_S 15

/* leafd.log.format = json, for the signal handler (which may call no log function). */
static volatile sig_atomic_t drain_log_json;

static void on_drain_timeout(int signum) {
    /* A signal handler: no formatting, so no time field either. */
    static const char msg[] = "level=error component=main msg=\"drain took longer than 15 s, "
                              "exiting with requests unanswered\"\n";
    static const char json[] = "{\"level\":\"error\",\"component\":\"main\",\"msg\":\"drain "
                               "took longer than 15 s, exiting with requests unanswered\"}\n";
    ssize_t rc = drain_log_json ? write(STDERR_FILENO, json, sizeof(json) - 1)
                                : write(STDERR_FILENO, msg, sizeof(msg) - 1);
    (void)rc;
    _exit(1);
}

/*
 * SIGUSR2 outside the control loop's handler: before it is installed (start-up)
 * the signal is remembered and the upgrade runs once the process serves; while
 * the process stops (after a hand-over, the new process is the one to upgrade)
 * it is logged and ignored. Signal handlers: no formatting, no log function.
 */
static volatile sig_atomic_t usr2_early;

static void on_usr2_early(int signum) {
    (void)signum;
    usr2_early = 1;
}

/*
 * The new process of an in-place upgrade, until the control loop catches its signals
 * (docs/UPGRADING.md, "Signals during a hand-over"): SIGTERM and SIGINT are remembered and the
 * process stops cleanly before it accepts (it takes the session over first, so the previous
 * process's hand-over is not wasted); SIGHUP is ignored (the certificate is loaded at start).
 */
static volatile sig_atomic_t stop_early;

static void on_stop_early(int signum) {
    stop_early = signum;
}

static void signals_early_child(void) {
    signal(SIGTERM, on_stop_early);
    signal(SIGINT, on_stop_early);
    signal(SIGHUP, SIG_IGN);
}

static void on_usr2_stopping(int signum) {
    static const char msg[] = "level=warn component=reload msg=\"received SIGUSR2 while "
                              "stopping: ignored (after an in-place upgrade the new process "
                              "takes the next one)\"\n";
    static const char json[] = "{\"level\":\"warn\",\"component\":\"reload\",\"msg\":"
                               "\"received SIGUSR2 while stopping: ignored (after an in-place "
                               "upgrade the new process takes the next one)\"}\n";
    (void)signum;
    ssize_t rc = drain_log_json ? write(STDERR_FILENO, json, sizeof(json) - 1)
                                : write(STDERR_FILENO, msg, sizeof(msg) - 1);
    (void)rc;
}

/*
 * An upgrade's drain: once every connection is gone (or 10 s), the sequences hand back. Should
 * the new process end before that, this process serves on (daemon_resume).
 */
static uint64_t proto_connections(void *arg, enum door_proto proto);
static void daemon_resume(struct daemon *d);
static void signals_stop(struct daemon *d);
static void signals_ignore_stopping(void);

static void on_reload_drained(uv_timer_t *t) {
    struct daemon *d = t->data;
    int gone = reload_new_gone(&d->reload) && d->exit_code == 0;
    if (gone && !d->stop_asked) {
        daemon_resume(d);
        return;
    }
    if (!gone &&
        proto_connections(d, DOOR_PROTO_HTTP) + proto_connections(d, DOOR_PROTO_RESP) > 0 &&
        clock_mono_ms() < d->reload_deadline_ms) {
        return;
    }
    /* The point of no return: from here the services stop and the session goes over. */
    uv_close((uv_handle_t *)t, NULL);
    signals_stop(d);
    signals_ignore_stopping();
    net_server_stop(d->server); /* the listeners close; each loop ends with its last connection */
    if (gone) {
        /* Asked to stop, and the new process is gone too: a plain stop (the drain bounded it). */
        log_info("reload", "the new process (pid %d) ended during the drain; stopping as asked",
                 d->reload.pid);
        d->reloading = 0;
        sequence_service_stop(d->sequence);
    } else {
        sequence_service_stop_handover(d->sequence); /* stays in line: the new process keeps it */
    }
    uv_stop(&d->control);
}

/* The new process of an upgrade: the sequence election settles before it accepts (bounded). */
static void on_reload_settle(uv_timer_t *t) {
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

static void reload_settle(struct daemon *d) {
    d->reload_deadline_ms = clock_mono_ms() + 3000;
    uv_timer_init(&d->control, &d->reload_timer);
    d->reload_timer.data = d;
    uv_timer_start(&d->reload_timer, on_reload_settle, 0, 5);
    uv_run(&d->control, UV_RUN_DEFAULT);
    uv_close((uv_handle_t *)&d->reload_timer, NULL);
}

static void on_signal(uv_signal_t *s, int signum);
static void on_sighup(uv_signal_t *s, int signum);
static void on_sigusr2(uv_signal_t *s, int signum);

/*
 * The control loop's signals. They are caught before anyone can connect: a client that saw
 * /ready and sent SIGTERM at once must get a drain, not the default action.
 */
static void signals_start(struct daemon *d) {
    uv_signal_t *hs[] = {&d->sig_term, &d->sig_int, &d->sig_hup, &d->sig_usr2};
    void (*cbs[])(uv_signal_t *, int) = {on_signal, on_signal, on_sighup, on_sigusr2};
    int nums[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR2};
    for (size_t i = 0; i < sizeof(hs) / sizeof(hs[0]); i++) {
        uv_signal_init(&d->control, hs[i]);
        hs[i]->data = d;
        uv_signal_start(hs[i], cbs[i], nums[i]);
    }
}

/*
 * After an upgrade's point of no return the process only hands over and exits: a stop or a
 * SIGHUP then changes nothing, and their default action would lose the hand-over.
 */
static void signals_ignore_stopping(void) {
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGUSR2, on_usr2_stopping); /* a second upgrade while this one stops: logged */
}

static void on_signal_closed(uv_handle_t *h) {
    struct daemon *d = h->data;
    d->signals_closing--;
}

/* A stop: the loop must run empty. A close may take a turn or more (a signal still queued). */
static void signals_stop(struct daemon *d) {
    uv_signal_t *hs[] = {&d->sig_term, &d->sig_int, &d->sig_hup, &d->sig_usr2};
    for (size_t i = 0; i < sizeof(hs) / sizeof(hs[0]); i++) {
        d->signals_closing++;
        uv_close((uv_handle_t *)hs[i], on_signal_closed);
    }
}

/* Stops the process as a signal does: drain, shut the services down in order. */
static void daemon_stop(struct daemon *d) {
    if (d->stopping) {
        return;
    }
    d->stopping = 1;
    atomic_store(&d->stop_flag, 1);
    if (d->stop_delaying) {
        d->stop_delaying = 0;
        uv_close((uv_handle_t *)&d->stop_delay, NULL);
    }
    if (d->reloading) {
        notify_ready_handover(&d->notify); /* the new process tells systemd READY=1 */
    } else {
        notify_ready_stopping(&d->notify);
    }
    signal(SIGALRM, on_drain_timeout);
    alarm(LEAFD_DRAIN_MAX_S);
    if (d->reloading) {
        /* The sequence primary serves until its clients have gone: then it hands back. */
        net_server_stop_polite(d->server); /* clients reconnect to the new process */
    } else {
        /* The sequence primary hands over first, at once: the next node in line
         * takes over while this one drains. */
        sequence_service_stop(d->sequence);
        net_server_stop(d->server);
    }
    if (d->reloading) {
        /* The loops drain on their own; the control loop serves them until then, and keeps
         * catching the signals (on_signal, on_sighup) until the point of no return. */
        d->reload_deadline_ms = clock_mono_ms() + 10000;
        uv_timer_init(&d->control, &d->reload_timer);
        d->reload_timer.data = d;
        uv_timer_start(&d->reload_timer, on_reload_drained, 10, 10);
        return;
    }
    signals_stop(d);                   /* the services run the loop until it is empty */
    signal(SIGUSR2, on_usr2_stopping); /* a second upgrade while this one stops: logged */
    /* Leave the control loop now; the services are shut down in order in main(). */
    uv_stop(&d->control);
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
    if (d->stopping && d->reloading) {
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
    if (signum == SIGTERM && d->cfg.stop_delay_ms > 0 && !d->stopping && !d->stop_delaying) {
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

/*
 * The node's services, one row each, in the order they start: created in that
 * order (daemon_start, before the listeners are probed), started in that order
 * once the ports are known to be free, and stopped and freed in the reverse
 * order, as nginx's cycle runs its modules' init_process and exit_process hooks.
 * A stop is a no-op on a service that never started, and it undoes a start that
 * failed part-way, so a failure at step k stops steps k..1. The sequence service
 * also stops early, at SIGTERM (daemon_stop) or at an upgrade's hand-over
 * (on_reload_drained); its stop here is then a no-op.
 */
struct service {
    const char *name;
    leaf_status_t (*create)(struct daemon *d);
    leaf_status_t (*start)(struct daemon *d);
    void (*stop)(struct daemon *d);
    void (*free)(struct daemon *d);
};

/* The snowflake node: the worker ID, the clock checks, the generator. */
static leaf_status_t snowflake_create(struct daemon *d) {
    return snowflake_node_create(&d->snowflake, &d->cfg, &d->control, node_zk_session(&d->zk));
}

static leaf_status_t snowflake_start(struct daemon *d) {
    snowflake_node_on_fail(d->snowflake, daemon_fail, d);
    return snowflake_node_start(d->snowflake);
}

/* Persists the last issued time and leaves ZooKeeper (after a failed start: nothing). */
static void snowflake_stop(struct daemon *d) {
    snowflake_node_stop(d->snowflake);
}

static void snowflake_free(struct daemon *d) {
    snowflake_node_free(d->snowflake);
}

/* The segment service: tags, buffers, the database threads. */
static leaf_status_t segment_create(struct daemon *d) {
    return segment_service_create(&d->segment, &d->cfg, &d->control);
}

static leaf_status_t segment_start(struct daemon *d) {
    return segment_service_start(d->segment);
}

/* Gives the unused IDs back and stops the database threads. */
static void segment_stop(struct daemon *d) {
    segment_service_stop(d->segment);
}

static void segment_free(struct daemon *d) {
    segment_service_free(d->segment);
}

/* The sequence service: the elected primary's sequences. */
static leaf_status_t sequence_create(struct daemon *d) {
    return sequence_service_create(&d->sequence, &d->cfg, &d->control, node_zk_session(&d->zk));
}

static leaf_status_t sequence_start(struct daemon *d) {
    return sequence_service_start(d->sequence);
}

static void sequence_stop(struct daemon *d) {
    sequence_service_stop(d->sequence);
}

static void sequence_free(struct daemon *d) {
    sequence_service_free(d->sequence);
}

/* The users and their rights, from ZooKeeper. */
static leaf_status_t users_create(struct daemon *d) {
    return user_service_create(&d->users, &d->cfg, &d->control, node_zk_session(&d->zk));
}

static leaf_status_t users_start(struct daemon *d) {
    return user_service_start(d->users);
}

static void users_stop(struct daemon *d) {
    user_service_stop(d->users);
}

static void users_free(struct daemon *d) {
    user_service_free(d->users);
}

static const struct service services[] = {
    /* clang-format off */
    {"snowflake", snowflake_create, snowflake_start, snowflake_stop, snowflake_free},
    {"segment",   segment_create,   segment_start,   segment_stop,   segment_free},
    {"sequence",  sequence_create,  sequence_start,  sequence_stop,  sequence_free},
    {"users",     users_create,     users_start,     users_stop,     users_free},
    /* clang-format on */
};
#define NSERVICES (sizeof(services) / sizeof(services[0]))

/* Stops the first n services, the last started first. */
static void services_stop(struct daemon *d, size_t n) {
    while (n-- > 0) {
        log_debug("main", "stopping the %s service", services[n].name);
        services[n].stop(d);
    }
}

static int resolve_threads(const struct leaf_config *cfg) {
    if (cfg->threads > 0) {
        return (int)cfg->threads;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (n > NET_MAX_LOOPS ? NET_MAX_LOOPS : (int)n);
}

/* Open connections of a protocol, plain and TLS listeners together. */
static uint64_t proto_connections(void *arg, enum door_proto proto) {
    struct daemon *d = arg;
    uint64_t n = 0;
    for (int i = 0; i < d->nlisteners; i++) {
        if (d->listener_proto[i] == proto) {
            n += net_server_connections(d->server, i);
        }
    }
    return n;
}

/* Connections closed because their client left its replies unread (a metric). */
static uint64_t proto_closed_unread(void *arg) {
    struct daemon *d = arg;
    return net_server_closed_unread(d->server);
}

static void add_listener(struct daemon *d, enum door_proto proto, const char *what,
                         const char *addr, const char *host, int port, const struct proto_ops *ops,
                         void *arg, struct net_tls_ctx *tls) {
    d->listener_proto[d->nlisteners] = proto;
    d->listeners[d->nlisteners++] = (struct net_listen_config){
        .addr = addr,
        .what = what,
        .host = host,
        .port = port,
        .proto = ops,
        .proto_arg = arg,
        .tls = tls,
        .claim_fd = -1,
    };
}

/* The TLS listeners' certificate, key and client-certificate policy. */
static leaf_status_t tls_create(const struct leaf_config *cfg, struct net_tls_ctx **out) {
    char why[1024];
    static const enum net_tls_verify verify[] = {
        [CONFIG_TLS_VERIFY_NONE] = NET_TLS_VERIFY_NONE,
        [CONFIG_TLS_VERIFY_OPTIONAL] = NET_TLS_VERIFY_OPTIONAL,
        [CONFIG_TLS_VERIFY_REQUIRED] = NET_TLS_VERIFY_REQUIRED,
    };
    *out = NULL;
    if (cfg->tls_port == 0 && cfg->resp_tls_port == 0) {
        return LEAF_OK;
    }
    struct net_tls_config tc = {cfg->tls_cert_file, cfg->tls_key_file, cfg->tls_ca_file,
                                verify[cfg->tls_verify]};
    if (net_tls_ctx_create(out, &tc, why, sizeof(why)) != LEAF_OK) {
        log_error("main",
                  "TLS set-up failed: %s; leafd.tls.cert.file and leafd.tls.key.file must be "
                  "readable PEM files, the key the certificate's",
                  why);
        return LEAF_EINVAL;
    }
    return LEAF_OK;
}

/* SIGHUP: a new certificate and key for new TLS connections; open ones keep theirs. */
static void on_sighup(uv_signal_t *s, int signum) {
    struct daemon *d = s->data;
    char why[1024];
    if (d->stopping) {
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
    struct daemon *d = s->data;
    struct reload_listener ls[NET_MAX_LISTENERS];
    (void)signum;
    if (d->stopping || d->stop_delaying) {
        log_warn("reload", "received SIGUSR2 while stopping: ignored");
        return;
    }
    if (!d->serving) {
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
        ls[i].nfds = net_server_listener_fds(d->server, i, ls[i].fds, RELOAD_MAX_FDS);
    }
    reload_start(&d->reload, ls, d->nlisteners, d->lock.fd);
}

/* The new process adopted the listeners: stop as at SIGTERM, but hand over at the end. */
static void on_reload_adopted(void *arg) {
    struct daemon *d = arg;
    d->reloading = 1;
    daemon_stop(d);
}

/*
 * The new process of an in-place upgrade ended after it adopted the listeners, before this one
 * handed its ZooKeeper session over (docs/UPGRADING.md, "In place, without a restart"). Until the
 * drain's end (on_reload_drained) this process has only stopped accepting: its listening sockets
 * are open, its services and its session untouched, the lock its own open file. So it serves on:
 * the lock and the pid file name it again, the loops accept again (what queued meanwhile
 * included), the signals and systemd's status come back. Connections closed in the drain are
 * gone; their clients reconnect. Control thread, from the drain's timer.
 */
static void daemon_resume(struct daemon *d) {
    char how[96], err[512];
    reload_exit_text(&d->reload, how, sizeof(how));
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
    alarm(0); /* the drain's bound (on_drain_timeout) */
    signal(SIGALRM, SIG_DFL);
    uv_close((uv_handle_t *)&d->reload_timer, NULL);
    d->stopping = 0;
    atomic_store(&d->stop_flag, 0); /* /ready answers for this process again */
    d->reloading = 0; /* the signal handles stayed open through the drain (daemon_stop) */
    notify_ready_resume(&d->notify);
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

/*
 * The new side of an in-place upgrade, before ZooKeeper: the lock and the
 * sockets are the previous process's; what can fail without ZooKeeper is
 * checked before it is told to stop (a failure here leaves it serving).
 */
static int reload_adopt(struct daemon *d) {
    char err[512];
    if (dirlock_adopt(&d->lock, d->child.lock, d->cfg.data_dir, err, sizeof(err)) != LEAF_OK) {
        log_error("main", "%s", err);
        return -1;
    }
    /* The listeners by their settings, as wire() names them. */
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
            const struct reload_listener *l = &d->child.ls[j];
            if (strcmp(l->what, want[i].what) != 0 || want[i].port == 0) {
                continue;
            }
            if (reload_child_check_addr(l->fds, l->nfds, want[i].host, want[i].port, got,
                                        sizeof(got)) != 0) {
                log_error("main",
                          "%s = %s, but the previous process listens on %s: a changed listen "
                          "address needs a restart, not an in-place upgrade",
                          want[i].what, want[i].addr, got);
                return -1;
            }
        }
    }
    struct net_tls_ctx *tls = NULL;
    if (tls_create(&d->cfg, &tls) != LEAF_OK) {
        return -1;
    }
    net_tls_ctx_free(tls);
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
    if (reload_child_take(&d->child, &d->zk.adopt) != LEAF_OK) {
        return -1;
    }
    return 0;
}

/*
 * The new process of an upgrade resumes the adopted ZooKeeper session before its services
 * start. ZooKeeper may be slow right at the hand-over (paused, electing a leader); nobody
 * serves meanwhile (the old process has exited), and giving up would leave the node down, so
 * it waits longer than a fresh start: up to twice the session timeout, at least 20 s, logging
 * every 5 s. After that the services' own start-up waits decide, as at a start with ZooKeeper
 * down (docs/UPGRADING.md, "In place, without a restart").
 */
static void reload_wait_session(struct daemon *d) {
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

/* The API's context and the HTTP listener: what the event loops serve. */
/* One opaque-ID cipher per event loop, when leafd.opaque.key is set. */
static leaf_status_t opaque_create(struct daemon *d, int nloops) {
    struct segment_opaque_key key;
    if (node_config_opaque_key(&d->cfg, &key) != LEAF_OK) {
        return LEAF_OK; /* off (the key was checked with the configuration) */
    }
    d->api.opaque = calloc((size_t)nloops, sizeof(*d->api.opaque));
    if (d->api.opaque == NULL) {
        log_error("main", "calloc(opaque ID ciphers) failed");
        return LEAF_ENOMEM;
    }
    for (int i = 0; i < nloops; i++) {
        if (segment_opaque_init(&d->api.opaque[i], &key) != LEAF_OK) {
            log_error("main", "cannot set up AES-128 for opaque IDs (OpenSSL)");
            return LEAF_ERR;
        }
        d->api.opaque_loops = i + 1;
    }
    memset(&key, 0, sizeof(key));
    log_info("main", "opaque IDs on: /api/opaque/get/{tag} and opaque:<tag>");
    return LEAF_OK;
}

static void opaque_free(struct daemon *d) {
    for (int i = 0; i < d->api.opaque_loops; i++) {
        segment_opaque_close(&d->api.opaque[i]);
    }
    free(d->api.opaque);
    d->api.opaque = NULL;
    d->api.opaque_loops = 0;
}

static leaf_status_t wire(struct daemon *d) {
    if (table_metrics_create(&d->metrics) != LEAF_OK) {
        return LEAF_ENOMEM;
    }
    d->api = (struct door_ctx){
        .cfg = &d->cfg,
        .snowflake = d->snowflake,
        .segment = d->segment,
        .sequence = d->sequence,
        .users = d->users,
        .metrics = d->metrics,
        .started_ms = clock_wall_ms(),
        .pid = (long)getpid(),
        .connections = proto_connections,
        .closed_unread = proto_closed_unread,
        .conn_arg = d,
        .cluster = d->cluster,
        .zk = node_zk_session(&d->zk),
        .node_zk = &d->zk,
        .stopping = &d->stop_flag,
    };
    if (opaque_create(d, resolve_threads(&d->cfg)) != LEAF_OK) {
        return LEAF_ERR;
    }
    d->auth_limit = malloc(sizeof(*d->auth_limit));
    if (d->auth_limit == NULL) {
        log_error("main", "malloc(failed-authentication table) failed");
        return LEAF_ENOMEM;
    }
    auth_limit_init(d->auth_limit, (int)d->cfg.auth_failures_max);
    d->api.auth_limit = d->auth_limit;
    d->http = (struct http_conn_config){table_http_dispatch, table_http_done, &d->api};
    d->resp = (struct resp_conn_config){table_resp_dispatch,
                                        table_resp_done,
                                        &d->api,
                                        0,
                                        command_client_size(),
                                        command_client_close,
                                        d->cfg.auth_enable ? RESP_OUT_ANONYMOUS : 0};
    add_listener(d, DOOR_PROTO_HTTP, "leafd.listen", d->cfg.listen, d->cfg.listen_host,
                 d->cfg.listen_port, &http_proto_ops, &d->http, NULL);
    if (d->cfg.resp_port != 0) {
        add_listener(d, DOOR_PROTO_RESP, "leafd.resp.listen", d->cfg.resp_listen, d->cfg.resp_host,
                     d->cfg.resp_port, &resp_proto_ops, &d->resp, NULL);
    }
    if (tls_create(&d->cfg, &d->tls) != LEAF_OK) {
        return LEAF_EINVAL;
    }
    if (d->cfg.tls_port != 0) {
        add_listener(d, DOOR_PROTO_HTTP, "leafd.tls.listen", d->cfg.tls_listen, d->cfg.tls_host,
                     d->cfg.tls_port, &http_proto_ops, &d->http, d->tls);
    }
    if (d->cfg.resp_tls_port != 0) {
        add_listener(d, DOOR_PROTO_RESP, "leafd.resp.tls.listen", d->cfg.resp_tls_listen,
                     d->cfg.resp_tls_host, d->cfg.resp_tls_port, &resp_proto_ops, &d->resp, d->tls);
    }
    return LEAF_OK;
}

static void close_handle(uv_handle_t *h, void *arg) {
    if (!uv_is_closing(h)) {
        uv_close(h, NULL);
    }
}

/* Frees what daemon_start created, whether it got far or not; the services
 * are stopped already. The control loop is closed first, with every handle
 * still on it, while the objects that hold those handles are alive. */
static void daemon_free(struct daemon *d) {
    node_survey_free(d->cluster); /* joins its thread, the session's last other user */
    d->cluster = NULL;
    node_zk_close(&d->zk); /* no more wake-ups; every ephemeral node goes at once */
    if (d->control_ready) {
        uv_walk(&d->control, close_handle, NULL);
        uv_run(&d->control, UV_RUN_DEFAULT);
        if (uv_loop_close(&d->control) != 0) {
            log_warn("main", "the control loop still had handles at exit");
        }
    }
    for (size_t i = NSERVICES; i-- > 0;) {
        services[i].free(d);
    }
    metrics_free(d->metrics);
    opaque_free(d);
    net_tls_ctx_free(d->tls); /* after the loops: no connection uses it any more */
    if (d->auth_limit != NULL) {
        auth_limit_destroy(d->auth_limit);
        free(d->auth_limit);
    }
}

/* Starts everything in order; on failure undoes what started and returns non-zero. */
static int daemon_start(struct daemon *d) {
    if (uv_loop_init(&d->control) != 0) {
        log_error("main", "cannot create the control loop");
        return -1;
    }
    d->control_ready = 1;
    char err[512];
    if (d->child.on) {
        if (reload_adopt(d) != 0) {
            return -1;
        }
    } else if (dirlock_acquire(&d->lock, d->cfg.data_dir, err, sizeof(err)) != LEAF_OK) {
        log_error("main", "%s", err);
        return -1;
    }
    if (node_zk_open(&d->zk, &d->cfg, &d->control) != LEAF_OK) {
        return -1;
    }
    reload_wait_session(d);
    for (size_t i = 0; i < NSERVICES; i++) {
        if (services[i].create(d) != LEAF_OK) {
            return -1; /* daemon_free frees what was created */
        }
    }
    if (node_survey_create(&d->cluster, &d->cfg, node_zk_session(&d->zk)) != LEAF_OK ||
        wire(d) != LEAF_OK) {
        return -1;
    }
    int nthreads = resolve_threads(&d->cfg);
    for (int i = 0; i < d->nlisteners && d->child.on; i++) {
        d->listeners[i].fds =
            reload_child_fds(&d->child, d->listeners[i].what, &d->listeners[i].nfds);
        /* Every inherited socket gets a loop: closing one would drop its queued connections. */
        nthreads = d->listeners[i].nfds > nthreads ? d->listeners[i].nfds : nthreads;
    }
    if (d->child.on) {
        reload_child_close_unused(&d->child);
    }
    /* The port first: a node that cannot serve must not register anywhere. */
    for (int i = 0; i < d->nlisteners; i++) {
        if (d->listeners[i].fds == NULL && net_listen_probe(&d->listeners[i]) != LEAF_OK) {
            return -1;
        }
    }
    for (size_t i = 0; i < NSERVICES; i++) {
        log_debug("main", "starting the %s service", services[i].name);
        if (services[i].start(d) != LEAF_OK) {
            services_stop(d, i + 1); /* the one that failed too: it may have half-joined */
            return -1;
        }
    }
    struct net_limits limits = {d->cfg.idle_timeout_ms, d->cfg.request_timeout_ms,
                                d->cfg.max_connections, d->cfg.max_connections_per_address};
    signals_start(d); /* the control loop handles them once it runs */
    reload_init(&d->reload, &d->control, d->argv, on_reload_adopted, d);
    if (stop_early) {
        log_info("main",
                 "received %s while taking over from the previous process: stopping "
                 "before accepting",
                 strsignal(stop_early));
        daemon_stop(d);
    }
    if (d->child.on && !d->stopping) {
        reload_settle(d);
    }
    if (d->stopping) {
        /* SIGTERM while the election settled: stop before accepting (main() sees it). */
        return 0;
    }
    if (net_server_start(&d->server, &limits, d->listeners, d->nlisteners, nthreads) != LEAF_OK) {
        signals_stop(d); /* the stops below run the loop until it is empty */
        services_stop(d, NSERVICES);
        return -1;
    }
    log_info("main", "leafd %s listening on %s (HTTP)%s%s%s%s%s%s%s%s%s with %d event loops",
             leafd_version(), d->cfg.listen, d->cfg.resp_port ? ", " : "", d->cfg.resp_listen,
             d->cfg.resp_port ? " (RESP)" : "", d->cfg.tls_port ? ", " : "", d->cfg.tls_listen,
             d->cfg.tls_port ? " (HTTPS)" : "", d->cfg.resp_tls_port ? ", " : "",
             d->cfg.resp_tls_listen, d->cfg.resp_tls_port ? " (RESP over TLS)" : "", nthreads);
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
    d->serving = 1;
    if (usr2_early && !d->usr2_pending) {
        log_info("reload", "received SIGUSR2 while starting: the in-place upgrade starts now");
    }
    if (usr2_early || d->usr2_pending) {
        usr2_early = 0;
        d->usr2_pending = 0;
        on_sigusr2(&d->sig_usr2, SIGUSR2);
    }
    return 0;
}

/* A secret that others may read (its file, or the configuration it sits in) gets a warn line. */
static void log_loose_secrets(const struct leaf_config *c) {
    const char *p = c->loose_secret_files;
    while (*p != '\0') {
        size_t n = strcspn(p, "\n");
        log_warn("config", "%.*s", (int)n, p);
        p += n + (p[n] == '\n');
    }
}

/*
 * The first line of the log: what this process is about to be, before the
 * services (and the ZooKeeper client) write their own lines.
 */
static void log_startup(const struct leaf_config *c, const char *path) {
    char snowflake[700], segment[512];
    if (!c->snowflake_enable) {
        snprintf(snowflake, sizeof(snowflake), "off");
    } else if (c->zk_address[0] != '\0') {
        snprintf(snowflake, sizeof(snowflake), "ZooKeeper %s, cluster %s", c->zk_address, c->name);
    } else {
        snprintf(snowflake, sizeof(snowflake), "static worker ID %lld (not coordinated)",
                 (long long)c->worker_id);
    }
    if (c->segment_enable) {
        snprintf(segment, sizeof(segment), "database %s:%d/%s", c->db_host, c->db_port, c->db_name);
    } else {
        snprintf(segment, sizeof(segment), "off");
    }
    log_info("main",
             "leafd %s starting (pid %ld, config %s): HTTP %s%s%s, snowflake %s, segment %s, "
             "sequence %s",
             leafd_version(), (long)getpid(), path, c->listen, c->resp_port ? ", RESP " : "",
             c->resp_listen, snowflake, segment, c->sequence_enable ? "on" : "off");
}

int main(int argc, char **argv) {
    /* First: an upgrade asked for before the control loop runs is remembered, not fatal
     * (SIGUSR2's default action ends the process; systemd sends it to MAINPID, which the
     * previous process of an upgrade names once this one runs). */
    signal(SIGUSR2, on_usr2_early);
    if (reload_child_pending()) {
        signals_early_child();
    }
    struct args a = {0};
    struct daemon d;
    memset(&d, 0, sizeof(d));
    d.lock.fd = -1;
    d.argv = argv;
    if (parse_args(argc, argv, &a) != 0 || load_config(&a, &d.cfg) != 0) {
        return 1;
    }
    if (a.print_config) {
        static char dump[16384];
        config_dump(&d.cfg, dump, sizeof(dump));
        fputs(dump, stdout);
        return 0;
    }
    if (a.retire != NULL) {
        log_set_level(d.cfg.log_level);
        return snowflake_node_retire_main(&d.cfg, a.retire);
    }
    if (a.zk_acl != NULL) {
        log_set_level(d.cfg.log_level);
        return node_zk_acl_main(&d.cfg, a.zk_acl);
    }
    if (a.check_only) {
        /* The warnings a start would log (loose secrets, example values) are printed too. */
        log_set_level(d.cfg.log_level);
        log_loose_secrets(&d.cfg);
        /* The certificate and key must load, too. */
        struct net_tls_ctx *tls = NULL;
        if (tls_create(&d.cfg, &tls) != LEAF_OK) {
            return 1;
        }
        net_tls_ctx_free(tls);
        printf("configuration OK: %s\n", a.config_path);
        return 0;
    }
    log_set_level(d.cfg.log_level);
    log_loose_secrets(&d.cfg);
    log_set_format(d.cfg.log_json);
    drain_log_json = d.cfg.log_json;
    log_startup(&d.cfg, a.config_path);
    char rerr[256];
    if (reload_child_parse(&d.child, rerr, sizeof(rerr)) != 0) {
        log_error("main", "%s", rerr);
        return 1;
    }
    signal(SIGPIPE, SIG_IGN); /* libuv does not; a closed client must not kill us */
    if (daemon_start(&d) != 0) {
        /* Every refusal at start is logged on this thread; the clean-up may log more, so the
         * last line repeats it (docs/OPERATIONS.md, "When a node refuses to start"). */
        snprintf(d.fail_reason, sizeof(d.fail_reason), "%s", log_last_error());
        daemon_free(&d);
        log_error("main", "not started (exit 1): %s",
                  d.fail_reason[0] != '\0' ? d.fail_reason : "see the error above");
        return 1;
    }
    if (d.stopping) {
        log_info("main", "stopped before accepting: a signal came while starting");
    } else if (d.child.on) {
        notify_ready_start_main(&d.notify, &d.control, &d.api); /* systemd's main process now */
    } else {
        notify_ready_start(&d.notify, &d.control, &d.api);
    }
    if (!d.stopping) {
        uv_run(&d.control, UV_RUN_DEFAULT);
    }
    net_server_join(d.server);
    services_stop(&d, NSERVICES); /* after the event loops */
    if (d.reloading) {
        /* An in-place upgrade: the new process takes the session, the lock and the
         * sockets; exit without closing the session (its ephemeral nodes stay). */
        struct zk_client_id id = {0};
        struct zk_session *zs = node_zk_session(&d.zk);
        if (zs != NULL) {
            (void)zk_session_client_id(zs, &id);
        }
        if (reload_handover(&d.reload, &id) == LEAF_OK) {
            _exit(0);
        }
        /* Nobody serves now: a supervisor restarts the node. The last line says why (the
         * reason given first, should daemon_resume have found it cannot serve on). */
        if (d.fail_reason[0] == '\0') {
            snprintf(d.fail_reason, sizeof(d.fail_reason), "%s", log_last_error());
        }
        d.exit_code = 1;
    }
    daemon_free(&d);
    dirlock_release(&d.lock);
    if (d.exit_code != 0) {
        log_error("main", "stopped after a failure (exit %d): %s", d.exit_code,
                  d.fail_reason[0] != '\0' ? d.fail_reason : "see the errors above");
        return d.exit_code;
    }
    log_info("main", "stopped cleanly");
    return 0;
}
