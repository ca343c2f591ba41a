/*
 * The HTTP route table: one row per endpoint (table_http.h). Its dispatch is the
 * HTTP protocol's handler (http_conn_config.handler) and its completion
 * hook does the per-route accounting, so the protocol knows neither.
 */
#include "table_http.h"

#include <stdio.h>
#include <string.h>

#include "api.h"
#include "api_audit.h"
#include "api_origin.h"
#include "door_auth.h"
#include "door_http.h"
#include "llhttp.h"
#include "metrics.h"
#include "pages.h"
#include "validate.h"

/* A handler, called with its row's mode: the mode the ID routes issue in, the area of the rest. */
typedef leaf_status_t (*route_fn)(struct http_request *req, enum ids_mode mode);

/* Where the key of a route's need is (users and permissions). */
enum route_key {
    RK_NONE,  /* the need is not keyed */
    RK_PATH,  /* the rest of the path after the prefix: /api/segment/get/{key} */
    RK_QUERY, /* ?biz_tag= */
    RK_BODY,  /* in the body: the route table checks who asks, the handler the key */
};

struct route {
    int method;       /* llhttp method */
    int prefix;       /* the rest of the path is the handler's argument */
    const char *path; /* exact path, or a prefix when prefix = 1; NULL: the mode's GET prefix */
    route_fn fn;
    const char *name;    /* metric label */
    enum auth_need need; /* what the caller needs (door_http_auth_route) */
    enum route_key key;
    enum ids_mode mode; /* the key's mode (IDS_MODES) */
    int open;           /* open when auth is off, whatever the need (Leaf's /cache) */
    int issues;         /* answers with IDs: HEAD gets 405, an ID spent unseen is waste */
    const char *what;   /* one line for the reference (leafd --print-reference routes) */
};

#define IDS AUTH_NEED_IDS
#define CREATE AUTH_NEED_CREATE
#define ADMIN AUTH_NEED_ADMIN
#define OPEN AUTH_NEED_NONE
#define SF IDS_SNOWFLAKE
#define SEG IDS_SEGMENT
#define SEQ IDS_SEQUENCE
#define OPQ IDS_OPAQUE
#define UUID IDS_UUID
#define NUM IDS_NUMBER
#define KEY IDS_KEYED

/* The ID GETs come from their modes' rows (IDS_MODES, ids_mode.h); their path is NULL: the
 * mode's HTTP prefix. */
#define ID_GET_ROUTE(e, name, http, key, rule, dense, batch, metric, textcmd, what, issue, text,   \
                     prepare)                                                                      \
    {HTTP_GET, 1, NULL, api_ids_get, name "_get", IDS, RK_PATH, e, 0, 1, what},

/* clang-format off */
static const struct route routes[] = {
    IDS_MODES(ID_GET_ROUTE)
    {HTTP_GET, 0, "/api/leaf", api_leaf_get, "leaf_get", IDS, RK_QUERY, SEG, 0, 1,
     "a segment ID of ?biz_tag=, as Leaf's"},
    {HTTP_POST, 0, "/api/leaf", api_admin_create, "leaf_create", CREATE, RK_BODY, SEG, 0, 0,
     "creates a segment tag"},
    {HTTP_PUT, 0, "/api/leaf/init/cache", api_admin_init_cache, "leaf_init_cache", ADMIN, RK_NONE, SEG, 0, 0,
     "loads the tags from the database, as Leaf's"},
    {HTTP_PUT, 0, "/api/leaf/step", api_admin_step, "leaf_step", ADMIN, RK_NONE, SEG, 0, 0,
     "changes a tag's step"},
    {HTTP_POST, 0, "/api/sequence", api_sequence_create, "sequence_create", CREATE, RK_BODY, SEQ, 0, 0,
     "creates a sequence"},
    {HTTP_POST, 0, "/api/keyed", api_keyed_create, "keyed_create", ADMIN, RK_NONE, KEY, 0, 0,
     "creates a keyed space (keyed sequences)"},
    {HTTP_GET, 0, "/api/keyed", api_keyed_list, "keyed_list", ADMIN, RK_NONE, KEY, 0, 0,
     "lists the keyed spaces and their counters on this node"},
    {HTTP_POST, 0, "/api/cluster/demote", api_cluster_demote, "cluster_demote", ADMIN, RK_NONE, SEQ, 0, 0,
     "hands the sequence primary to another node"},
    {HTTP_POST, 0, "/api/region/move", api_region_move, "region_move", ADMIN, RK_NONE, SEQ, 0, 0,
     "moving a sequence's home: the old home stops issuing it and marks it moved"},
    {HTTP_POST, 0, "/api/region/adopt", api_region_adopt, "region_adopt", ADMIN, RK_NONE, SEQ, 0, 0,
     "moving a sequence's home: the new home creates it above the mark and takes the home"},
    {HTTP_GET, 0, "/cache", page_cache, "cache", ADMIN, RK_NONE, SEG, 1, 0,
     "the segment buffers of every tag (HTML, as Leaf's)"},
    {HTTP_GET, 0, "/db", page_db, "db", ADMIN, RK_NONE, SEG, 0, 0,
     "the leaf_alloc rows (HTML)"},
    {HTTP_GET, 0, "/decodeSnowflakeId", api_decode, "decode", OPEN, RK_NONE, SF, 0, 0,
     "decodes a snowflake ID (?snowflakeId=)"},
    {HTTP_GET, 0, "/api/snowflake/time", api_time, "time", OPEN, RK_NONE, SF, 0, 0,
     "this node's clock and its snowflake time"},
    {HTTP_GET, 0, "/health", api_health, "health", OPEN, RK_NONE, SF, 0, 0,
     "200 while the process serves"},
    {HTTP_GET, 0, "/ready", api_ready, "ready", OPEN, RK_NONE, SF, 0, 0,
     "200 when every enabled mode (or ?mode=) can issue IDs now, else 503"},
    {HTTP_GET, 0, "/metrics", page_metrics, "metrics", OPEN, RK_NONE, SF, 0, 0,
     "Prometheus text format"},
    {HTTP_GET, 0, "/api/users", api_users_list, "users_list", ADMIN, RK_NONE, SF, 0, 0,
     "lists the users"},
    {HTTP_POST, 0, "/api/users", api_users_add, "users_add", ADMIN, RK_NONE, SF, 0, 0,
     "adds a user"},
    {HTTP_POST, 1, "/api/users/", api_users_change, "users_change", ADMIN, RK_NONE, SF, 0, 0,
     "changes a user's secret or grants"},
    {HTTP_DELETE, 1, "/api/users/", api_users_delete, "users_delete", ADMIN, RK_NONE, SF, 0, 0,
     "deletes a user"},
    {HTTP_GET, 0, "/cluster", page_cluster, "cluster", ADMIN, RK_NONE, SF, 1, 0,
     "the cluster at a glance (HTML)"},
    {HTTP_GET, 1, "/api/segment/range/", api_segment_range, "segment_range", IDS, RK_PATH, SEG, 0, 1,
     "a range of segment IDs of the tag (?count=), as first and last"},
    {HTTP_GET, 0, "/decodeOpaqueId", api_decode_opaque, "decode_opaque", ADMIN, RK_NONE, OPQ, 0, 0,
     "decodes an opaque ID"},
    {HTTP_GET, 0, "/decodeUuid", api_decode_uuid, "decode_uuid", OPEN, RK_NONE, UUID, 0, 0,
     "decodes a UUIDv7 (?uuid=): its time, worker and counter"},
    {HTTP_POST, 0, "/api/numbering", api_numbering_create, "numbering_create", CREATE, RK_BODY, NUM, 0, 0,
     "creates a numbering (business numbers)"},
    {HTTP_PUT, 0, "/api/numbering", api_numbering_update, "numbering_update", ADMIN, RK_NONE, NUM, 0, 0,
     "changes a numbering's prefix, date or time zone"},
    {HTTP_DELETE, 1, "/api/numbering/", api_numbering_delete, "numbering_delete", ADMIN, RK_NONE, NUM, 0, 0,
     "deletes a numbering and its counter"},
    {HTTP_GET, 0, "/api/numbering", api_numbering_list, "numbering_list", ADMIN, RK_NONE, NUM, 0, 0,
     "lists the numberings"},
    {HTTP_GET, 0, "/", page_index, "index", OPEN, RK_NONE, SF, 0, 0,
     "the index page linking the pages (HTML)"},
};
/* clang-format on */

/* HEAD on a route that issues gets 405: RFC 9110 9.3.2 lets HEAD skip the work of GET, and an
 * ID spent without being seen is waste. */
static int route_issues(const struct route *r) {
    return r->issues;
}

#define ROUTES_N ((int)(sizeof(routes) / sizeof(routes[0])))
#define ROUTE_NOT_FOUND ROUTES_N
#define ROUTE_BAD_REQUEST (ROUTES_N + 1)
_Static_assert(ROUTES_N + 2 <= METRICS_MAX_ROUTES, "METRICS_MAX_ROUTES: room for every row");

int table_http_names(const char **names, int cap) {
    for (int i = 0; i < ROUTES_N && i < cap; i++) {
        names[i] = routes[i].name;
    }
    if (ROUTE_NOT_FOUND < cap) {
        names[ROUTE_NOT_FOUND] = "not_found";
    }
    if (ROUTE_BAD_REQUEST < cap) {
        names[ROUTE_BAD_REQUEST] = "bad_request";
    }
    return ROUTES_N + 2;
}

void table_http_kinds(unsigned char *ids, int cap) {
    for (int i = 0; i < ROUTES_N && i < cap; i++) {
        ids[i] = (unsigned char)routes[i].issues;
    }
}

static const char *route_path(const struct route *r) {
    return r->path != NULL ? r->path : ids_mode_info(r->mode)->http_prefix;
}

static int route_matches(const struct route *r, const struct http_request *req) {
    const char *path = route_path(r);
    size_t n = strlen(path);
    if (r->prefix) {
        return req->path_len >= n && memcmp(req->path, path, n) == 0;
    }
    return req->path_len == n && memcmp(req->path, path, n) == 0;
}

/* Answers 405 with the Allow header listing the methods the path has. */
static void respond_405(struct http_request *req) {
    struct sbuf allow = SBUF_INIT;
    sbuf_puts(&allow, "Allow: ");
    for (int i = 0; i < ROUTES_N; i++) {
        if (route_matches(&routes[i], req)) {
            sbuf_printf(&allow, "%s%s%s", allow.len > 7 ? ", " : "",
                        http_method_name(routes[i].method),
                        routes[i].method == HTTP_GET && !route_issues(&routes[i]) ? ", HEAD" : "");
        }
    }
    sbuf_puts(&allow, "\r\n");
    door_http_error_ex(req, DOOR_E_METHOD_NOT_ALLOWED, allow.failed ? NULL : allow.data,
                       "method not allowed for this path");
    sbuf_free(&allow);
}

/* The route's need, with its key read from where the route keeps it. */
static int route_allowed(const struct route *r, struct http_request *req) {
    if (!door_auth_on(door_ctx(req))) {
        return door_http_auth_route(req, r->need, r->open, NULL); /* no key needed: no lookup */
    }
    struct auth_key key = {r->mode, NULL, 0};
    const struct auth_key *k = NULL;
    char buf[IDS_MODE_HTTP_KEY_MAX];
    int ok = 0;
    if (r->key == RK_PATH) {
        size_t n = strlen(route_path(r));
        ok = ids_mode_http_key(r->mode, req->path + n, req->path_len - n, buf, sizeof(buf),
                               &key.name, &key.len);
    } else if (r->key == RK_QUERY) {
        ok =
            door_http_query(req, "biz_tag", &key.name, &key.len) && validate_tag(key.name, key.len);
    }
    /* A key that breaks the mode's key rule is refused by the handler with a 400,
     * before it issues anything: only who asks is checked here. */
    if (ok) {
        k = &key;
    }
    return door_http_auth_route(req, r->need, r->open, r->key == RK_NONE ? NULL : k);
}

leaf_status_t table_http_dispatch(struct http_request *req) {
    /* HEAD is answered as GET, the protocol layer dropping the body; not on issuing routes. */
    int method = req->method == HTTP_HEAD ? HTTP_GET : req->method;
    int path_route = -1;
    for (int i = 0; i < ROUTES_N; i++) {
        if (!route_matches(&routes[i], req)) {
            continue;
        }
        if (path_route < 0) {
            path_route = i;
        }
        if (routes[i].method == method && !(req->method == HTTP_HEAD && route_issues(&routes[i]))) {
            req->route = i;
            /* Checked at arrival; a parked request that resumes was allowed. */
            leaf_status_t rc = LEAF_OK;
            if (req->retries > 0 || (api_origin_allowed(req) && route_allowed(&routes[i], req))) {
                rc = routes[i].fn(req, routes[i].mode);
            }
            /* Every state change is an admin change: one audit line once it is answered. */
            if (rc == LEAF_OK && routes[i].method != HTTP_GET && req->status != 0) {
                api_audit(req, routes[i].name);
            }
            return rc;
        }
    }
    if (path_route >= 0) {
        req->route = path_route;
        respond_405(req);
    } else {
        req->route = ROUTE_NOT_FOUND;
        door_http_error(req, DOOR_E_NOT_FOUND, "no such endpoint");
    }
    return LEAF_OK;
}

void table_http_done(const struct http_request *req) {
    struct metrics *m = door_ctx(req)->metrics;
    int route = req->route == HTTP_ROUTE_NONE ? ROUTE_BAD_REQUEST : req->route;
    metrics_count_request(m, req->loop, route, req->status);
    if (route < ROUTES_N) {
        metrics_observe_latency(m, req->loop, route, req->finished_ns - req->started_ns);
    }
}

void table_http_print_reference(FILE *out) {
    fprintf(out, "| Method | Path | Issues IDs | Right needed | Description |\n"
                 "|---|---|---|---|---|\n");
    for (int i = 0; i < ROUTES_N; i++) {
        const struct route *r = &routes[i];
        fprintf(out, "| %s | `%s%s` | %s | %s%s | %s |\n", http_method_name(r->method),
                route_path(r),
                !r->prefix                                       ? ""
                : r->key != RK_PATH                              ? "{name}"
                : ids_mode_info(r->mode)->rule == IDS_KEY_SPACED ? "{space}/{key}"
                                                                 : "{key}",
                r->issues ? "yes" : "no", door_auth_need_name(r->need),
                r->open ? " (open when auth is off)" : "", r->what);
    }
}
