/*
 * leafd: a distributed ID node. Start here.
 *
 * main() loads the configuration (src/config.c), checks the listen port,
 * sets up snowflake IDs (src/snowflake_node.c: worker ID from ZooKeeper or
 * static, clock checks, time reservation; generator in snowflake/) and
 * segment IDs (src/segment_service.c: tags, buffers, the database thread in
 * segment/), starts the HTTP event loops (src/http.c, one thread each; the
 * protocol in src/http_proto.c, routes in src/router.c, handlers in
 * src/api*.c) and then runs the control loop on the main thread: signals,
 * the subsystems' timers (time reports, tag refresh) and the asyncs through
 * which the ZooKeeper and database threads hand results back.
 * SIGTERM/SIGINT drain in-flight requests, shut the subsystems down in
 * order and exit 0.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "config.h"
#include "http.h"
#include "leafd.h"
#include "log.h"
#include "segment_service.h"
#include "snowflake_node.h"

struct leafd leafd;

/* The control loop: owned by the main thread. */
static uv_loop_t control_loop;
static uv_signal_t sig_term, sig_int;

struct uv_loop_s *leafd_control_loop(void) {
    return &control_loop;
}

int64_t leafd_wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void usage(FILE *out) {
    fprintf(out,
            "usage: leafd -c FILE            run with a configuration file\n"
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

static const char *env_get(const char *name) {
    return getenv(name);
}

/* Loads file + environment + cross-key checks; prints the error and returns -1. */
static int load_config(const struct args *a, struct leaf_config *cfg) {
    char err[1024];
    config_defaults(cfg);
    if ((a->config_path && config_load_file(cfg, a->config_path, err, sizeof(err)) != LEAF_OK) ||
        config_apply_env(cfg, env_get, err, sizeof(err)) != LEAF_OK ||
        config_finish(cfg, err, sizeof(err)) != LEAF_OK) {
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
    log_info("main", "received %s, draining in-flight requests", strsignal(signum));
    signal(SIGALRM, on_drain_timeout);
    alarm(LEAFD_DRAIN_MAX_S);
    http_server_stop(leafd.http);
    uv_close((uv_handle_t *)&sig_term, NULL);
    uv_close((uv_handle_t *)&sig_int, NULL);
    /* Leave the control loop now; subsystems are shut down in order in main(). */
    uv_stop(&control_loop);
}

static int snowflake_setup(void) {
    const struct leaf_config *cfg = &leafd.cfg;
    pthread_mutex_init(&leafd.gen_lock, NULL);
    uint64_t seed = (uint64_t)leafd_wall_ms() ^ ((uint64_t)getpid() << 32);
    snowflake_gen_init(&leafd.gen, cfg->epoch, seed);
    if (!cfg->snowflake_enable) {
        return 0;
    }
    if (cfg->zk_address[0] == '\0') {
        leafd.snowflake_static = 1;
        log_warn("snowflake",
                 "static worker mode: worker ID %d is not coordinated; never run two nodes "
                 "with the same worker ID",
                 (int)cfg->worker_id);
    }
    /* Blocks until the worker ID is leased (ZooKeeper, or the static one) and
     * the clock checked against the stored time (src/snowflake_node.c). */
    return snowflake_node_start() == LEAF_OK ? 0 : -1;
}

static int resolve_threads(const struct leaf_config *cfg) {
    if (cfg->threads > 0) {
        return (int)cfg->threads;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (n > HTTP_MAX_LOOPS ? HTTP_MAX_LOOPS : (int)n);
}

int main(int argc, char **argv) {
    struct args a = {0};
    if (parse_args(argc, argv, &a) != 0 || load_config(&a, &leafd.cfg) != 0) {
        return 1;
    }
    if (a.print_config) {
        static char dump[16384];
        config_dump(&leafd.cfg, dump, sizeof(dump));
        fputs(dump, stdout);
        return 0;
    }
    if (a.check_only) {
        printf("configuration OK%s%s\n", a.config_path ? ": " : "",
               a.config_path ? a.config_path : "");
        return 0;
    }
    log_set_level(leafd.cfg.log_level);
    signal(SIGPIPE, SIG_IGN); /* libuv does not; a closed client must not kill us */
    leafd.started_ms = leafd_wall_ms();
    uv_loop_init(&control_loop);
    /* The port first: a node that cannot serve must not register anywhere. */
    if (http_listen_probe(&leafd.cfg) != LEAF_OK || snowflake_setup() != 0) {
        return 1;
    }
    if (segment_service_start(&leafd.cfg, &control_loop) != LEAF_OK) {
        snowflake_node_shutdown();
        return 1;
    }
    int nthreads = resolve_threads(&leafd.cfg);
    if (http_server_start(&leafd.http, &leafd.cfg, nthreads) != LEAF_OK) {
        segment_service_stop();
        snowflake_node_shutdown();
        return 1;
    }
    uv_signal_init(&control_loop, &sig_term);
    uv_signal_init(&control_loop, &sig_int);
    uv_signal_start(&sig_term, on_signal, SIGTERM);
    uv_signal_start(&sig_int, on_signal, SIGINT);
    log_info("main", "leafd %s listening on %s with %d event loops", LEAFD_VERSION,
             leafd.cfg.listen, nthreads);
    uv_run(&control_loop, UV_RUN_DEFAULT);
    http_server_join(leafd.http);
    segment_service_stop(); /* after the HTTP loops: stop the database thread, free tags */
    snowflake_node_shutdown(); /* persist the last issued time, leave ZooKeeper */
    log_info("main", "stopped cleanly");
    return 0;
}
