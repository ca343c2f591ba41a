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
 *   src/node     the node's services, one room each: snowflake_service (worker
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
 *   src/daemon   the process's one state machine (daemon.c): every object
 *                built from one table (daemon_objects.c), the signals, the
 *                in-place upgrade's hand-over, systemd's notification;
 *   src/main.c   this file: the command line and the configuration.
 * A file's name starts with its room's prefix (docs/design.md, "The code:
 * floors, rooms and names").
 *
 * main() reads the command line, runs the one-shot commands (--check-config,
 * --print-reference, ...) and loads the configuration; then daemon_main()
 * (src/daemon/daemon.h) builds every object from one table, starts the event
 * loops (one thread each) and runs the control loop on the main thread:
 * signals, the services' timers (time reports, tag refresh) and the asyncs
 * through which the ZooKeeper and database threads hand results back.
 * SIGTERM/SIGINT drain in-flight requests, shut the services down in order
 * and exit 0. main() owns struct daemon, which owns every object and passes
 * each module what it needs; there is no global state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "command_outcome.h"
#include "config.h"
#include "daemon.h"
#include "daemon_objects.h"
#include "daemon_signals.h"
#include "log.h"
#include "node_config.h"
#include "node_zk.h"
#include "pages.h"
#include "snowflake_service_retire.h"
#include "table_http.h"
#include "table_resp.h"
#include "version.h"

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
    daemon_signals_early();
    struct args a = {0};
    struct daemon d;
    daemon_init(&d, argv);
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
        return snowflake_service_retire_main(&d.cfg, a.retire);
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
        if (daemon_objects_tls_check(&d.cfg) != LEAF_OK) {
            return 1;
        }
        printf("configuration OK: %s\n", a.config_path);
        return 0;
    }
    log_set_level(d.cfg.log_level);
    log_loose_secrets(&d.cfg);
    log_set_format(d.cfg.log_json);
    log_startup(&d.cfg, a.config_path);
    return daemon_main(&d);
}
