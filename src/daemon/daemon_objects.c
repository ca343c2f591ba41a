/*
 * Every object the process builds, one row each, in the order they are built
 * (docs/design.md, "The code: floors, rooms and names"): created forward before
 * the listeners are probed, started forward once the ports are known to be free,
 * stopped and freed backward, as nginx's cycle runs its modules' init_process
 * and exit_process hooks. A failure at row k frees rows k-1..0 (daemon_table.c).
 * The sequence service also stops early, at SIGTERM (daemon_stop) or at an
 * upgrade's hand-over (daemon.c); its stop here is then a no-op.
 *
 * The services keep handles on the control loop: before any of them is freed, the
 * process quiesces (daemon_objects_quiesce: /cluster's thread joined, the
 * ZooKeeper session closed, every handle of the control loop closed), whichever
 * row the unwinding starts from.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "command_client.h"
#include "daemon_adopt.h"
#include "daemon_objects.h"
#include "daemon_table.h"
#include "log.h"
#include "metrics.h"
#include "net_tls.h"
#include "node_config.h"
#include "node_survey.h"
#include "region_service.h"
#include "segment_service.h"
#include "sequence_service.h"
#include "snowflake_service.h"
#include "table.h"
#include "table_http.h"
#include "table_resp.h"
#include "user_service.h"

/* src/node hands leaf.jdbc.url's TLS mode to segment/ as is: the two enums are one list. */
_Static_assert(CONFIG_DB_TLS_DISABLED == (int)SEGMENT_DB_TLS_DISABLED &&
                   CONFIG_DB_TLS_PREFERRED == (int)SEGMENT_DB_TLS_PREFERRED &&
                   CONFIG_DB_TLS_REQUIRED == (int)SEGMENT_DB_TLS_REQUIRED &&
                   CONFIG_DB_TLS_VERIFY_CA == (int)SEGMENT_DB_TLS_VERIFY_CA &&
                   CONFIG_DB_TLS_VERIFY_IDENTITY == (int)SEGMENT_DB_TLS_VERIFY_IDENTITY,
               "enum config_db_tls and enum segment_db_tls differ");

static void close_handle(uv_handle_t *h, void *arg) {
    (void)arg;
    if (!uv_is_closing(h)) {
        uv_close(h, NULL);
    }
}

/* Before a service is freed; a no-op the second time. */
static void daemon_objects_quiesce(struct daemon *d) {
    node_survey_free(d->cluster); /* joins its thread, the session's last other user */
    d->cluster = NULL;
    node_zk_close(&d->zk); /* no more wake-ups; every ephemeral node goes at once */
    if (d->control_ready) {
        uv_walk(&d->control, close_handle, NULL);
        uv_run(&d->control, UV_RUN_DEFAULT);
    }
}

/* The control loop: the signals, the services' timers, the asyncs of their threads. */
static leaf_status_t control_create(struct daemon *d) {
    if (uv_loop_init(&d->control) != 0) {
        log_error("main", "cannot create the control loop");
        return LEAF_ERR;
    }
    d->control_ready = 1;
    return LEAF_OK;
}

static void control_free(struct daemon *d) {
    daemon_objects_quiesce(d);
    if (d->control_ready && uv_loop_close(&d->control) != 0) {
        log_warn("main", "the control loop still had handles at exit");
    }
    d->control_ready = 0;
}

/* leafd.data.dir's lock: taken, or adopted from the previous process of an upgrade. It is
 * released at a clean stop only (daemon.c): an upgrade's new process that fails leaves it. */
static leaf_status_t lock_create(struct daemon *d) {
    char err[512];
    if (d->child.on) {
        if (daemon_adopt_sockets(d) != LEAF_OK || daemon_objects_tls_check(&d->cfg) != LEAF_OK) {
            return LEAF_ERR;
        }
        return daemon_adopt_session(d);
    }
    if (dirlock_acquire(&d->lock, d->cfg.data_dir, err, sizeof(err)) != LEAF_OK) {
        log_error("main", "%s", err);
        return LEAF_ERR;
    }
    return LEAF_OK;
}

/* The process's one ZooKeeper session (an upgrade's new process resumes the old one's). */
static void zk_free(struct daemon *d) {
    node_zk_close(&d->zk);
}

static leaf_status_t zk_create(struct daemon *d) {
    if (node_zk_open(&d->zk, &d->cfg, &d->control) != LEAF_OK) {
        zk_free(d); /* what it opened before it failed */
        return LEAF_ERR;
    }
    daemon_adopt_wait_session(d);
    return LEAF_OK;
}

/*
 * A service's row: its create takes the configuration, the control loop and, but for the
 * segment service, the ZooKeeper session (the macro's last arguments); start, stop and free
 * take the service. One macro writes the four adapters of each, naming the service's functions
 * in full so that a search for them finds this table.
 */
#define DAEMON_SERVICE(row, field, create, start, stop, free_, ...)                                \
    static void row##_free(struct daemon *d) {                                                     \
        daemon_objects_quiesce(d);                                                                 \
        free_(d->field);                                                                           \
        d->field = NULL;                                                                           \
    }                                                                                              \
    static leaf_status_t row##_create(struct daemon *d) {                                          \
        leaf_status_t st = create(&d->field, __VA_ARGS__);                                         \
        if (st != LEAF_OK) {                                                                       \
            row##_free(d); /* what it built before it failed, if anything */                       \
        }                                                                                          \
        return st;                                                                                 \
    }                                                                                              \
    static leaf_status_t row##_start(struct daemon *d) {                                           \
        return start(d->field);                                                                    \
    }                                                                                              \
    static void row##_stop(struct daemon *d) {                                                     \
        stop(d->field);                                                                            \
    }
#define DAEMON_SERVICE_ROW(row)                                                                    \
    { #row, row##_create, row##_start, row##_stop, row##_free }

/* The region claim in the registry (docs/regions.md): before the ID services, so that a region
 * ID held by another region stops the start before anything registers. */
DAEMON_SERVICE(region, region, region_service_create, region_service_start, region_service_stop,
               region_service_free, &d->cfg, &d->control)
/* The snowflake node: the worker ID, the clock checks, the generator. Its stop persists the
 * last issued time and leaves ZooKeeper (after a failed start: nothing). */
DAEMON_SERVICE(snowflake, snowflake, snowflake_service_create, snowflake_service_start,
               snowflake_service_stop, snowflake_service_free, &d->cfg, &d->control,
               node_zk_session(&d->zk))
/* The segment service: tags, buffers, the database threads. Its stop gives the unused IDs
 * back and stops the database threads. */
DAEMON_SERVICE(segment, segment, segment_service_create, segment_service_start,
               segment_service_stop, segment_service_free, &d->cfg, &d->control)
/* The sequence service: the elected primary's sequences. */
DAEMON_SERVICE(sequence, sequence, sequence_service_create, sequence_service_start,
               sequence_service_stop, sequence_service_free, &d->cfg, &d->control,
               node_zk_session(&d->zk))
/* The users and their rights, from ZooKeeper. */
DAEMON_SERVICE(users, users, user_service_create, user_service_start, user_service_stop,
               user_service_free, &d->cfg, &d->control, node_zk_session(&d->zk))

/* /cluster's view of the other nodes (its own thread). */
static leaf_status_t survey_create(struct daemon *d) {
    return node_survey_create(&d->cluster, &d->cfg, node_zk_session(&d->zk));
}

static void survey_free(struct daemon *d) {
    node_survey_free(d->cluster);
    d->cluster = NULL;
}

/* The request counters, registered from both protocols' tables. */
static leaf_status_t counters_create(struct daemon *d) {
    return table_metrics_create(&d->metrics) == LEAF_OK ? LEAF_OK : LEAF_ENOMEM;
}

static void counters_free(struct daemon *d) {
    metrics_free(d->metrics);
    d->metrics = NULL;
}

static int resolve_threads(const struct leaf_config *cfg) {
    if (cfg->threads > 0) {
        return (int)cfg->threads;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (n > NET_MAX_LOOPS ? NET_MAX_LOOPS : (int)n);
}

uint64_t daemon_objects_connections(void *arg, enum door_proto proto) {
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
static uint64_t closed_unread(void *arg) {
    struct daemon *d = arg;
    return net_server_closed_unread(d->server);
}

/* The context the doors see (src/door/door_ctx.h) and both protocols' configurations. */
static leaf_status_t doors_create(struct daemon *d) {
    d->api = (struct door_ctx){
        .cfg = &d->cfg,
        .snowflake = d->snowflake,
        .segment = d->segment,
        .sequence = d->sequence,
        .users = d->users,
        .region = d->region,
        .metrics = d->metrics,
        .started_ms = clock_wall_ms(),
        .pid = (long)getpid(),
        .connections = daemon_objects_connections,
        .closed_unread = closed_unread,
        .conn_arg = d,
        .cluster = d->cluster,
        .zk = node_zk_session(&d->zk),
        .node_zk = &d->zk,
        .stopping = &d->stop_flag,
    };
    d->http = (struct http_conn_config){table_http_dispatch, table_http_done, &d->api};
    d->resp = (struct resp_conn_config){table_resp_dispatch,
                                        table_resp_done,
                                        &d->api,
                                        0,
                                        command_client_size(),
                                        command_client_close,
                                        d->cfg.auth_enable ? RESP_OUT_ANONYMOUS : 0};
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

/* One opaque-ID cipher per event loop, when leafd.opaque.key is set. */
static leaf_status_t opaque_create(struct daemon *d) {
    struct segment_opaque_key key;
    int nloops = resolve_threads(&d->cfg);
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
            memset(&key, 0, sizeof(key));
            opaque_free(d);
            return LEAF_ERR;
        }
        d->api.opaque_loops = i + 1;
    }
    memset(&key, 0, sizeof(key));
    log_info("main", "opaque IDs on: /api/opaque/get/{tag} and opaque:<tag>");
    return LEAF_OK;
}

/* Failed authentications per client address (leafd.auth.failures.max). */
static leaf_status_t auth_limit_create(struct daemon *d) {
    d->auth_limit = malloc(sizeof(*d->auth_limit));
    if (d->auth_limit == NULL) {
        log_error("main", "malloc(failed-authentication table) failed");
        return LEAF_ENOMEM;
    }
    auth_limit_init(d->auth_limit, (int)d->cfg.auth_failures_max);
    d->api.auth_limit = d->auth_limit;
    return LEAF_OK;
}

static void auth_limit_free(struct daemon *d) {
    if (d->auth_limit != NULL) {
        auth_limit_destroy(d->auth_limit);
        free(d->auth_limit);
    }
    d->auth_limit = NULL;
    d->api.auth_limit = NULL;
}

/* The TLS listeners' certificate, key and client-certificate policy (NULL: no TLS listener). */
static leaf_status_t tls_ctx_create(const struct leaf_config *cfg, struct net_tls_ctx **out) {
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

leaf_status_t daemon_objects_tls_check(const struct leaf_config *cfg) {
    struct net_tls_ctx *tls = NULL;
    leaf_status_t st = tls_ctx_create(cfg, &tls);
    net_tls_ctx_free(tls);
    return st;
}

/* After the event loops: no connection uses it any more. */
static void tls_free(struct daemon *d) {
    net_tls_ctx_free(d->tls);
    d->tls = NULL;
}

static leaf_status_t tls_create(struct daemon *d) {
    leaf_status_t st = tls_ctx_create(&d->cfg, &d->tls);
    if (st != LEAF_OK) {
        tls_free(d);
    }
    return st;
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

/*
 * The listeners, by their settings (daemon_adopt.c matches an upgrade's inherited sockets by the
 * same names), and the event loops they need. The ports are probed here, before any service
 * starts: a node that cannot serve must not register anywhere.
 */
static leaf_status_t listeners_create(struct daemon *d) {
    const struct leaf_config *c = &d->cfg;
    add_listener(d, DOOR_PROTO_HTTP, "leafd.listen", c->listen, c->listen_host, c->listen_port,
                 &http_proto_ops, &d->http, NULL);
    if (c->resp_port != 0) {
        add_listener(d, DOOR_PROTO_RESP, "leafd.resp.listen", c->resp_listen, c->resp_host,
                     c->resp_port, &resp_proto_ops, &d->resp, NULL);
    }
    if (c->tls_port != 0) {
        add_listener(d, DOOR_PROTO_HTTP, "leafd.tls.listen", c->tls_listen, c->tls_host,
                     c->tls_port, &http_proto_ops, &d->http, d->tls);
    }
    if (c->resp_tls_port != 0) {
        add_listener(d, DOOR_PROTO_RESP, "leafd.resp.tls.listen", c->resp_tls_listen,
                     c->resp_tls_host, c->resp_tls_port, &resp_proto_ops, &d->resp, d->tls);
    }
    d->nthreads = resolve_threads(c);
    for (int i = 0; i < d->nlisteners && d->child.on; i++) {
        d->listeners[i].fds =
            daemon_handover_child_fds(&d->child, d->listeners[i].what, &d->listeners[i].nfds);
        /* Every inherited socket gets a loop: closing one would drop its queued connections. */
        d->nthreads = d->listeners[i].nfds > d->nthreads ? d->listeners[i].nfds : d->nthreads;
    }
    if (d->child.on) {
        daemon_handover_child_close_unused(&d->child);
    }
    for (int i = 0; i < d->nlisteners; i++) {
        if (d->listeners[i].fds == NULL && net_listen_probe(&d->listeners[i]) != LEAF_OK) {
            return LEAF_EUNAVAIL;
        }
    }
    return LEAF_OK;
}

/* Every object, in the order it is built. */
static const struct daemon_row daemon_objects[] = {
    /* clang-format off */
    {"control",    control_create,    NULL, NULL, control_free},
    {"lock",       lock_create,       NULL, NULL, NULL},
    {"zookeeper",  zk_create,         NULL, NULL, zk_free},
    DAEMON_SERVICE_ROW(region),
    DAEMON_SERVICE_ROW(snowflake),
    DAEMON_SERVICE_ROW(segment),
    DAEMON_SERVICE_ROW(sequence),
    DAEMON_SERVICE_ROW(users),
    {"survey",     survey_create,     NULL, NULL, survey_free},
    {"metrics",    counters_create,   NULL, NULL, counters_free},
    {"doors",      doors_create,      NULL, NULL, NULL},
    {"opaque",     opaque_create,     NULL, NULL, opaque_free},
    {"auth_limit", auth_limit_create, NULL, NULL, auth_limit_free},
    {"tls",        tls_create,        NULL, NULL, tls_free},
    {"listeners",  listeners_create,  NULL, NULL, NULL},
    /* clang-format on */
};
#define DAEMON_NOBJECTS (sizeof(daemon_objects) / sizeof(daemon_objects[0]))

leaf_status_t daemon_objects_create(struct daemon *d, void (*failed)(struct daemon *d)) {
    return daemon_table_create(daemon_objects, DAEMON_NOBJECTS, d, failed);
}

leaf_status_t daemon_objects_start(struct daemon *d) {
    return daemon_table_start(daemon_objects, DAEMON_NOBJECTS, d);
}

void daemon_objects_stop(struct daemon *d) {
    daemon_table_stop(daemon_objects, DAEMON_NOBJECTS, d);
}

void daemon_objects_free(struct daemon *d) {
    daemon_table_free(daemon_objects, DAEMON_NOBJECTS, d);
}
