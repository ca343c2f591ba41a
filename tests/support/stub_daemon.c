/*
 * Stands in for src/main.c and the socket side of src/http.c, so the
 * protocol, router and handlers can be driven without sockets or threads:
 * by the request-parsing unit test and by the libFuzzer harness.
 */
#include <string.h>
#include <time.h>

#include "http.h"
#include "leafd.h"
#include "stub_daemon.h"

struct leafd leafd;

struct http_loop {
    char scratch[HTTP_SCRATCH];
    int64_t now_ms;
};

static struct http_loop stub_loop;

struct uv_loop_s *leafd_control_loop(void) {
    return NULL;
}

int64_t leafd_wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *http_loop_scratch(struct http_loop *hl) {
    return hl->scratch;
}

int http_loop_index(const struct http_loop *hl) {
    return 0;
}

int64_t http_loop_now(const struct http_loop *hl) {
    return hl->now_ms;
}

uint64_t http_server_connections(const struct http_server *srv) {
    return 1;
}

struct http_loop *stub_daemon_init(void) {
    config_defaults(&leafd.cfg);
    leafd.cfg.snowflake_enable = 1;
    leafd.cfg.worker_id = 1;
    snprintf(leafd.cfg.name, sizeof(leafd.cfg.name), "stub");
    pthread_mutex_init(&leafd.gen_lock, NULL);
    snowflake_gen_init(&leafd.gen, leafd.cfg.epoch, 1);
    snowflake_gen_set_worker(&leafd.gen, 1);
    leafd.snowflake_static = 1;
    atomic_store(&leafd.snowflake_ready, 1);
    stub_loop.now_ms = 1;
    return &stub_loop;
}

void stub_daemon_advance(int64_t ms) {
    stub_loop.now_ms += ms;
}
