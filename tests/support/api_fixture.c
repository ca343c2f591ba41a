#include "api_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "command_auth.h"
#include "command_client.h"
#include "config.h"
#include "log.h"
#include "table.h"
#include "table_http.h"
#include "table_resp.h"

static struct {
    struct leaf_config cfg;
    uv_loop_t loop;
    struct door_ctx api;
    struct http_conn_config http;
    struct resp_conn_config resp;
    char dir[64];
    int ready;
} fx;

struct door_ctx *api_fixture_init(void) {
    if (fx.ready) {
        return &fx.api;
    }
    log_set_level(LEAF_LOG_ERROR);
    config_defaults(&fx.cfg);
    fx.cfg.snowflake_enable = 1;
    fx.cfg.worker_id = 1;
    snprintf(fx.cfg.name, sizeof(fx.cfg.name), "fixture");
    snprintf(fx.cfg.advertise_ip, sizeof(fx.cfg.advertise_ip), "127.0.0.1");
    snprintf(fx.dir, sizeof(fx.dir), "/tmp/leafd-fixture-XXXXXX");
    if (mkdtemp(fx.dir) == NULL) {
        perror("mkdtemp");
        exit(2);
    }
    snprintf(fx.cfg.data_dir, sizeof(fx.cfg.data_dir), "%s", fx.dir);
    char err[512];
    if (config_finish(&fx.cfg, err, sizeof(err)) != LEAF_OK) {
        fprintf(stderr, "fixture config: %s\n", err);
        exit(2);
    }
    uv_loop_init(&fx.loop);
    struct snowflake_service *sf;
    struct segment_service *seg;
    struct metrics *m;
    if (snowflake_service_create(&sf, &fx.cfg, &fx.loop, NULL) != LEAF_OK ||
        snowflake_service_start(sf) != LEAF_OK ||
        segment_service_create(&seg, &fx.cfg, &fx.loop) != LEAF_OK ||
        table_metrics_create(&m) != LEAF_OK) {
        fprintf(stderr, "fixture: start-up failed\n");
        exit(2);
    }
    fx.api = (struct door_ctx){.cfg = &fx.cfg, .snowflake = sf, .segment = seg, .metrics = m};
    fx.http = (struct http_conn_config){table_http_dispatch, table_http_done, &fx.api};
    fx.resp = (struct resp_conn_config){table_resp_dispatch,   table_resp_done,      &fx.api, 0,
                                        command_client_size(), command_client_close, 0};
    fx.ready = 1;
    return &fx.api;
}

struct session *api_fixture_conn(int loopback) {
    return http_proto_ops.open(&fx.http, loopback, 0);
}

void api_fixture_close(struct session *s) {
    leaf_wait_cancel(&s->wait);
    http_proto_ops.close(s);
}

void api_fixture_resp_anonymous_out(size_t max) {
    fx.resp.anonymous_out_max = max;
}

struct session *api_fixture_resp_conn(int loopback) {
    return resp_proto_ops.open(&fx.resp, loopback, 0);
}

void api_fixture_resp_close(struct session *s) {
    leaf_wait_cancel(&s->wait);
    resp_proto_ops.close(s);
}

void api_fixture_done(void) {
    if (!fx.ready) {
        return;
    }
    snowflake_service_stop(fx.api.snowflake);
    snowflake_service_free(fx.api.snowflake);
    segment_service_free(fx.api.segment);
    metrics_free(fx.api.metrics);
    uv_loop_close(&fx.loop);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx.dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "fixture: could not remove %s\n", fx.dir);
    }
    fx.ready = 0;
}
