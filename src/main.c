/*
 * leafd: a distributed ID node. Start here.
 *
 * The folders are the layers, each a library that may include only the
 * ones below it (CMake enforces it):
 *   src/base     status codes, logging, clocks, growable buffers, parsers;
 *   src/config   the configuration table and its parser;
 *   snowflake/, segment/, zk/   the ID domains (pure cores + their I/O);
 *   src/net      event loops, listeners, connections, wake-ups, drain;
 *   src/http     HTTP/1.1 as a protocol module of src/net (no I/O);
 *   src/node     the node's services: snowflake_node (worker ID, clock
 *                checks, time reservation, the generator) and
 *                segment_service (tags, buffers, the database thread),
 *                sequence_service (the elected primary's sequences);
 *   src/api      routes, handlers, pages, /ready and the metrics registry.
 *
 * main() loads the configuration, checks the listen port, starts the
 * services, starts the event loops (one thread each) and then runs the
 * control loop on the main thread: signals, the services' timers (time
 * reports, tag refresh) and the asyncs through which the ZooKeeper and
 * database threads hand results back. SIGTERM/SIGINT drain in-flight
 * requests, shut the services down in order and exit 0. main() owns every
 * object and passes each module what it needs; there is no global state.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "api.h"
#include "api_setup.h"
#include "clock.h"
#include "config.h"
#include "log.h"
#include "net.h"
#include "node_config.h"
#include "node_zk.h"
#include "resp_api.h"
#include "resp_app.h"
#include "resp_auth.h"
#include "segment_service.h"
#include "sequence_service.h"
#include "snowflake_node.h"
#include "user_service.h"

/* Everything the process runs, owned by main() on its stack. */
struct daemon {
    struct leaf_config cfg;
    uv_loop_t control; /* the main thread's loop */
    uv_signal_t sig_term, sig_int;
    struct node_zk zk; /* the process's one ZooKeeper session, shared by the services */
    struct snowflake_node *snowflake;
    struct segment_service *segment;
    struct sequence_service *sequence;
    struct user_service *users;
    struct cluster_survey *cluster;
    struct metrics *metrics;
    struct api_ctx api;
    struct http_proto_config http;
    struct resp_conn_config resp;
    struct net_listen_config listeners[API_NPROTOS];
    int nlisteners;
    int listener_of[API_NPROTOS]; /* listener index of each protocol, -1 = off */
    struct net_server *server;
    int control_ready; /* control was initialised */
};

static void usage(FILE *out) {
    fprintf(out, "usage: leafd -c FILE            run with a configuration file\n"
                 "       leafd --check-config -c FILE   validate the configuration and exit 0/1\n"
                 "       leafd --print-config -c FILE   print the effective configuration\n"
                 "       leafd --version\n");
}

struct args {
    const char *config_path;
    int check_only;
    int print_config;
};

static int parse_args(int argc, char **argv, struct args *a) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-c") == 0 && i + 1 < argc) {
            a->config_path = argv[++i];
        } else if (strcmp(argv[i], "--check-config") == 0) {
            a->check_only = 1;
        } else if (strcmp(argv[i], "--print-config") == 0) {
            a->print_config = 1;
        } else if (strcmp(argv[i], "--version") == 0) {
            printf("leafd %s\n", LEAFD_VERSION);
            exit(0);
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            exit(0);
        } else {
            fprintf(stderr, "leafd: unknown argument '%s'\n", argv[i]);
            usage(stderr);
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

static void on_drain_timeout(int signum) {
    static const char msg[] = "level=error component=main msg=\"drain took longer than 15 s, "
                              "exiting with requests unanswered\"\n";
    ssize_t rc = write(STDERR_FILENO, msg, sizeof(msg) - 1);
    (void)rc;
    _exit(1);
}

static void on_signal(uv_signal_t *s, int signum) {
    struct daemon *d = s->data;
    log_info("main", "received %s, draining in-flight requests", strsignal(signum));
    signal(SIGALRM, on_drain_timeout);
    alarm(LEAFD_DRAIN_MAX_S);
    /* The sequence primary hands over first, at once: the next node in line
     * takes over while this one drains. */
    sequence_service_step_down(d->sequence);
    net_server_stop(d->server);
    uv_close((uv_handle_t *)&d->sig_term, NULL);
    uv_close((uv_handle_t *)&d->sig_int, NULL);
    /* Leave the control loop now; the services are shut down in order in main(). */
    uv_stop(&d->control);
}

static int resolve_threads(const struct leaf_config *cfg) {
    if (cfg->threads > 0) {
        return (int)cfg->threads;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (n > NET_MAX_LOOPS ? NET_MAX_LOOPS : (int)n);
}

static uint64_t proto_connections(void *arg, enum api_proto proto) {
    struct daemon *d = arg;
    int i = d->listener_of[proto];
    return i < 0 ? 0 : net_server_connections(d->server, i);
}

static void add_listener(struct daemon *d, enum api_proto proto, const char *what, const char *addr,
                         const char *host, int port, const struct proto_ops *ops, void *arg) {
    d->listener_of[proto] = d->nlisteners;
    d->listeners[d->nlisteners++] = (struct net_listen_config){
        .addr = addr,
        .what = what,
        .host = host,
        .port = port,
        .proto = ops,
        .proto_arg = arg,
    };
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
    if (api_setup_metrics(&d->metrics) != LEAF_OK) {
        return LEAF_ENOMEM;
    }
    d->api = (struct api_ctx){
        .cfg = &d->cfg,
        .snowflake = d->snowflake,
        .segment = d->segment,
        .sequence = d->sequence,
        .users = d->users,
        .metrics = d->metrics,
        .started_ms = clock_wall_ms(),
        .pid = (long)getpid(),
        .connections = proto_connections,
        .conn_arg = d,
        .cluster = d->cluster,
        .zk = node_zk_session(&d->zk),
    };
    if (opaque_create(d, resolve_threads(&d->cfg)) != LEAF_OK) {
        return LEAF_ERR;
    }
    d->http = (struct http_proto_config){router_dispatch, router_done, &d->api};
    d->resp = (struct resp_conn_config){resp_api_dispatch,    resp_api_done, &d->api, 0,
                                        resp_auth_app_size(), resp_app_close};
    d->listener_of[API_PROTO_HTTP] = d->listener_of[API_PROTO_RESP] = -1;
    add_listener(d, API_PROTO_HTTP, "leafd.listen", d->cfg.listen, d->cfg.listen_host,
                 d->cfg.listen_port, &http_proto_ops, &d->http);
    if (d->cfg.resp_port != 0) {
        add_listener(d, API_PROTO_RESP, "leafd.resp.listen", d->cfg.resp_listen, d->cfg.resp_host,
                     d->cfg.resp_port, &resp_proto_ops, &d->resp);
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
    cluster_survey_free(d->cluster); /* joins its thread, the session's last other user */
    d->cluster = NULL;
    node_zk_close(&d->zk); /* no more wake-ups; every ephemeral node goes at once */
    if (d->control_ready) {
        uv_walk(&d->control, close_handle, NULL);
        uv_run(&d->control, UV_RUN_DEFAULT);
        if (uv_loop_close(&d->control) != 0) {
            log_warn("main", "the control loop still had handles at exit");
        }
    }
    segment_service_free(d->segment);
    sequence_service_free(d->sequence);
    user_service_free(d->users);
    snowflake_node_free(d->snowflake);
    metrics_free(d->metrics);
    opaque_free(d);
}

/* Starts everything in order; on failure undoes what started and returns non-zero. */
static int daemon_start(struct daemon *d) {
    if (uv_loop_init(&d->control) != 0) {
        log_error("main", "cannot create the control loop");
        return -1;
    }
    d->control_ready = 1;
    if (node_zk_open(&d->zk, &d->cfg, &d->control) != LEAF_OK) {
        return -1;
    }
    struct zk_session *zk = node_zk_session(&d->zk);
    if (snowflake_node_create(&d->snowflake, &d->cfg, &d->control, zk) != LEAF_OK ||
        segment_service_create(&d->segment, &d->cfg, &d->control) != LEAF_OK ||
        sequence_service_create(&d->sequence, &d->cfg, &d->control, zk) != LEAF_OK ||
        user_service_create(&d->users, &d->cfg, &d->control, zk) != LEAF_OK ||
        cluster_survey_create(&d->cluster, &d->cfg, zk) != LEAF_OK || wire(d) != LEAF_OK) {
        return -1;
    }
    /* The port first: a node that cannot serve must not register anywhere. */
    for (int i = 0; i < d->nlisteners; i++) {
        if (net_listen_probe(&d->listeners[i]) != LEAF_OK) {
            return -1;
        }
    }
    if (snowflake_node_start(d->snowflake) != LEAF_OK) {
        snowflake_node_shutdown(d->snowflake); /* leaves ZooKeeper, persists nothing */
        return -1;
    }
    if (segment_service_start(d->segment) != LEAF_OK) {
        snowflake_node_shutdown(d->snowflake);
        return -1;
    }
    if (sequence_service_start(d->sequence) != LEAF_OK) {
        sequence_service_step_down(d->sequence);
        segment_service_stop(d->segment);
        snowflake_node_shutdown(d->snowflake);
        return -1;
    }
    if (user_service_start(d->users) != LEAF_OK) {
        user_service_stop(d->users);
        sequence_service_step_down(d->sequence);
        segment_service_stop(d->segment);
        snowflake_node_shutdown(d->snowflake);
        return -1;
    }
    struct net_limits limits = {d->cfg.idle_timeout_ms, d->cfg.request_timeout_ms,
                                d->cfg.max_connections};
    int nthreads = resolve_threads(&d->cfg);
    if (net_server_start(&d->server, &limits, d->listeners, d->nlisteners, nthreads) != LEAF_OK) {
        user_service_stop(d->users);
        sequence_service_step_down(d->sequence);
        segment_service_stop(d->segment);
        snowflake_node_shutdown(d->snowflake);
        return -1;
    }
    uv_signal_init(&d->control, &d->sig_term);
    uv_signal_init(&d->control, &d->sig_int);
    d->sig_term.data = d->sig_int.data = d;
    uv_signal_start(&d->sig_term, on_signal, SIGTERM);
    uv_signal_start(&d->sig_int, on_signal, SIGINT);
    log_info("main", "leafd %s listening on %s (HTTP)%s%s%s with %d event loops", LEAFD_VERSION,
             d->cfg.listen, d->cfg.resp_port ? " and " : "", d->cfg.resp_listen,
             d->cfg.resp_port ? " (RESP)" : "", nthreads);
    return 0;
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
             LEAFD_VERSION, (long)getpid(), path, c->listen, c->resp_port ? ", RESP " : "",
             c->resp_listen, snowflake, segment, c->sequence_enable ? "on" : "off");
}

int main(int argc, char **argv) {
    struct args a = {0};
    struct daemon d;
    memset(&d, 0, sizeof(d));
    if (parse_args(argc, argv, &a) != 0 || load_config(&a, &d.cfg) != 0) {
        return 1;
    }
    if (a.print_config) {
        static char dump[16384];
        config_dump(&d.cfg, dump, sizeof(dump));
        fputs(dump, stdout);
        return 0;
    }
    if (a.check_only) {
        printf("configuration OK: %s\n", a.config_path);
        return 0;
    }
    log_set_level(d.cfg.log_level);
    log_startup(&d.cfg, a.config_path);
    signal(SIGPIPE, SIG_IGN); /* libuv does not; a closed client must not kill us */
    if (daemon_start(&d) != 0) {
        daemon_free(&d);
        return 1;
    }
    uv_run(&d.control, UV_RUN_DEFAULT);
    net_server_join(d.server);
    segment_service_stop(d.segment); /* after the event loops: stop the database thread */
    user_service_stop(d.users);
    snowflake_node_shutdown(d.snowflake); /* persist the last issued time, leave ZooKeeper */
    daemon_free(&d);
    log_info("main", "stopped cleanly");
    return 0;
}
