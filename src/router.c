#include "router.h"

#include <stdio.h>
#include <string.h>

#include "llhttp.h"
#include "api.h"
#include "metrics.h"

/* The routing table: one row per endpoint (contract section 3). */
static const struct route routes[] = {
    {HTTP_GET, "/api/snowflake/get/", 1, api_snowflake_get, "snowflake_get"},
    {HTTP_GET, "/api/segment/get/", 1, api_segment_get, "segment_get"},
    {HTTP_GET, "/api/leaf", 0, api_leaf_get, "leaf_get"},
    {HTTP_POST, "/api/leaf", 0, api_admin_create, "leaf_create"},
    {HTTP_PUT, "/api/leaf/init/cache", 0, api_admin_init_cache, "leaf_init_cache"},
    {HTTP_PUT, "/api/leaf/step", 0, api_admin_step, "leaf_step"},
    {HTTP_GET, "/cache", 0, api_cache_page, "cache"},
    {HTTP_GET, "/db", 0, api_db_page, "db"},
    {HTTP_GET, "/decodeSnowflakeId", 0, api_decode, "decode"},
    {HTTP_GET, "/api/snowflake/time", 0, api_time, "time"},
    {HTTP_GET, "/health", 0, api_health, "health"},
    {HTTP_GET, "/ready", 0, api_ready, "ready"},
    {HTTP_GET, "/metrics", 0, api_metrics, "metrics"},
};

#define ROUTES_N ((int)(sizeof(routes) / sizeof(routes[0])))
#define ROUTE_NOT_FOUND ROUTES_N
#define ROUTE_BAD_REQUEST (ROUTES_N + 1)

int router_count(void) {
    return ROUTES_N + 2;
}

const char *router_name(int route) {
    if (route == ROUTE_NOT_FOUND) {
        return "not_found";
    }
    if (route == ROUTE_BAD_REQUEST) {
        return "bad_request";
    }
    return route >= 0 && route < ROUTES_N ? routes[route].name : "unknown";
}

int router_route_not_found(void) {
    return ROUTE_NOT_FOUND;
}

int router_route_bad_request(void) {
    return ROUTE_BAD_REQUEST;
}

static int route_matches(const struct route *r, const struct http_request *req) {
    size_t n = strlen(r->path);
    if (r->prefix) {
        return req->path_len >= n && memcmp(req->path, r->path, n) == 0;
    }
    return req->path_len == n && memcmp(req->path, r->path, n) == 0;
}

static const char *method_name(int method) {
    return llhttp_method_name((llhttp_method_t)method);
}

/* Answers 405 with the Allow header listing the methods the path has. */
static void respond_405(struct http_request *req) {
    char allow[128] = "Allow: ";
    size_t pos = strlen(allow);
    for (int i = 0; i < ROUTES_N; i++) {
        if (route_matches(&routes[i], req) && pos + 24 < sizeof(allow)) {
            pos += (size_t)snprintf(allow + pos, sizeof(allow) - pos, "%s%s",
                                    pos > 7 ? ", " : "", method_name(routes[i].method));
            if (routes[i].method == HTTP_GET) {
                pos += (size_t)snprintf(allow + pos, sizeof(allow) - pos, ", HEAD");
            }
        }
    }
    snprintf(allow + pos, sizeof(allow) - pos, "\r\n");
    static const char body[] =
        "{\"code\":\"method_not_allowed\",\"message\":\"method not allowed for this path\"}";
    http_respond_ex(req, 405, "application/json", allow, body, sizeof(body) - 1);
}

leaf_status_t router_dispatch(struct http_request *req) {
    /* HEAD is answered as GET; the protocol layer drops the body. */
    int method = req->method == HTTP_HEAD ? HTTP_GET : req->method;
    int path_route = -1;
    for (int i = 0; i < ROUTES_N; i++) {
        if (!route_matches(&routes[i], req)) {
            continue;
        }
        if (path_route < 0) {
            path_route = i;
        }
        if (routes[i].method != method) {
            continue;
        }
        req->route = i;
        leaf_status_t rc = routes[i].fn(req);
        if (rc != LEAF_EAGAIN) {
            int loop = http_loop_index(req->loop);
            metrics_count_request(loop, i, req->status);
            metrics_observe_latency(loop, i, metrics_now_ns() - req->started_ns);
        }
        return rc;
    }
    if (path_route >= 0) {
        req->route = path_route;
        respond_405(req);
    } else {
        req->route = ROUTE_NOT_FOUND;
        http_respond_error(req, 404, "not_found", "no such endpoint");
    }
    metrics_count_request(http_loop_index(req->loop), req->route, req->status);
    return LEAF_OK;
}
