#ifndef LEAF_API_H
#define LEAF_API_H

/*
 * The HTTP API: handlers (the route table is in router.c) and the helpers
 * they share. Handlers run on an event-loop thread and reach the node's
 * services through the request's context, a struct api_ctx that main()
 * builds before the loops start and never changes afterwards.
 */
#include <stdint.h>

#include "auth_limit.h"
#include "cluster_survey.h"
#include "config.h"
#include "http_proto.h"
#include "ids.h"
#include "metrics.h"
#include "segment_service.h"
#include "sequence_service.h"
#include "snowflake_node.h"
#include "user_service.h"

#define LEAFD_VERSION "0.1.0"

/* The protocols, as the metrics' protocol label and the connection counts know them. */
enum api_proto { API_PROTO_HTTP, API_PROTO_RESP, API_NPROTOS };

struct api_ctx {
    const struct leaf_config *cfg;
    struct snowflake_node *snowflake;
    struct segment_service *segment;
    struct sequence_service *sequence;
    struct user_service *users;
    struct metrics *metrics;
    /* Opaque IDs: one cipher context per event loop (indexed by the loop),
     * each used by its loop's thread only; NULL when leafd.opaque.key is empty. */
    struct segment_opaque *opaque;
    int opaque_loops;
    int64_t started_ms; /* wall clock at start */
    long pid;
    /* Open connections of a protocol's listener (the server's count). */
    uint64_t (*connections)(void *arg, enum api_proto proto);
    void *conn_arg;
    struct cluster_survey *cluster; /* the /cluster page's survey of the live nodes */
    struct auth_limit *auth_limit;  /* failed authentications per client address (thread-safe) */
};

/* The router: dispatches a request to its handler (http_proto_config.handler). */
leaf_status_t router_dispatch(struct http_request *req);
/* The completion hook (http_proto_config.done): per-route accounting. */
void router_done(const struct http_request *req);
/* Number of routes + the pseudo-routes not_found and bad_request; route names. */
int router_count(void);
const char *router_name(int route);

leaf_status_t api_snowflake_get(struct http_request *req);
leaf_status_t api_decode(struct http_request *req);
leaf_status_t api_time(struct http_request *req);
leaf_status_t api_health(struct http_request *req);
leaf_status_t api_ready(struct http_request *req);
leaf_status_t api_metrics(struct http_request *req);

leaf_status_t api_segment_get(struct http_request *req);
/* api_segment.c */
leaf_status_t api_leaf_get(struct http_request *req);
leaf_status_t api_segment_range(struct http_request *req);
leaf_status_t api_opaque_get(struct http_request *req);
leaf_status_t api_decode_opaque(struct http_request *req);
/* admin API (api_admin.c) and monitor pages (api_pages.c) */
leaf_status_t api_admin_create(struct http_request *req);
leaf_status_t api_admin_init_cache(struct http_request *req);
leaf_status_t api_admin_step(struct http_request *req);
leaf_status_t api_cache_page(struct http_request *req);
leaf_status_t api_db_page(struct http_request *req);
leaf_status_t api_cluster_page(struct http_request *req); /* api_cluster.c */

static inline const struct api_ctx *api_ctx(const struct http_request *req) {
    return (const struct api_ctx *)req->ctx;
}

/*
 * Admin requests wait for one database job: start() queues it and parks the
 * request (LEAF_EAGAIN); wait(), on every later call, answers through
 * `answer` once the job is back, or 503 after leafd.db.timeout.ms + 1 s.
 */
typedef void (*api_admin_answer_fn)(struct http_request *req, struct segment_db_job *job);
leaf_status_t api_admin_start(struct http_request *req, struct segment_db_job *job);
leaf_status_t api_admin_wait(struct http_request *req, api_admin_answer_fn answer);
/* The same with extra_ms instead of 1 s on top of leafd.db.timeout.ms (a long read: /db). */
leaf_status_t api_admin_wait_for(struct http_request *req, api_admin_answer_fn answer,
                                 int64_t extra_ms);

/* The admin rule without users (leafd.admin.token, else loopback); answers 401/403, returns 0. */
int api_admin_allowed(struct http_request *req);

/*
 * Users and permissions (api_auth.c). api_route_allowed is the router's
 * check of a route's need; with auth off it applies the rule from before
 * users existed (ID routes open, admin and create routes api_admin_allowed;
 * open_without_auth: Leaf's open /cache page). api_authorize decides need on
 * key (NULL: the identity only, for a key the handler reads from the body)
 * and api_authorize_key does so for a key the handler read; both answer
 * 401/403 themselves, return 0 when refused, and allow all with auth off.
 */
int api_route_allowed(struct http_request *req, enum auth_need need, int open_without_auth,
                      const struct auth_key *key);
int api_authorize(struct http_request *req, enum auth_need need, const struct auth_key *key);
int api_authorize_key(struct http_request *req, enum auth_need need, enum auth_mode mode,
                      const char *name, size_t len);
/*
 * The failed-authentication limit (auth_limit.h), for a request that
 * presents credentials: api_auth_limited is 1 when its client is blocked
 * (HTTP: answered 429 already); api_auth_count_failure counts a failure
 * whose reason is one (not missing credentials, not a lapsed session).
 */
int api_auth_limited(const struct api_ctx *ctx, const char *peer);
int api_auth_limited_http(struct http_request *req);
void api_auth_count_failure(const struct api_ctx *ctx, const char *peer, enum user_failure why);
/* A failed authentication's warn line, at most one a second per client address. */
void api_auth_log_failure(const struct api_ctx *ctx, const char *proto, const char *peer,
                          enum user_failure why, const char *user, size_t user_len);

/* The users' admin API (api_users.c). */
leaf_status_t api_users_list(struct http_request *req);
leaf_status_t api_users_add(struct http_request *req);
leaf_status_t api_users_change(struct http_request *req);
leaf_status_t api_users_delete(struct http_request *req);

/* Finds name=value in the query; returns 1 and the raw value when present. */
int api_query_get(const struct http_request *req, const char *name, const char **val, size_t *len);

/*
 * Reads the {key} after `prefix_len` bytes of the path and the optional
 * ?count=N; answers 400 itself and returns LEAF_EINVAL when either is bad.
 */
leaf_status_t api_key_and_count(struct http_request *req, size_t prefix_len, const char **key,
                                size_t *key_len, int *count);

/*
 * Issues IDs for an HTTP request through ids_issue(): LEAF_OK, LEAF_EAGAIN
 * (parked: retry_ms set), or LEAF_ERR with the error response written.
 */
leaf_status_t api_issue(struct http_request *req, enum ids_mode mode, const char *key,
                        size_t key_len, int count, int64_t *ids);

/* GET .../get/{key}[?count=N] of a mode, the key after prefix_len bytes of the path. */
leaf_status_t api_ids_get(struct http_request *req, enum ids_mode mode, size_t prefix_len);

/* 307 to the sequence primary, with Location and {"code":"not_primary",...,"primary"}. */
void api_respond_redirect(struct http_request *req, const struct sequence_where *primary);

/* sequences and the cluster (api_sequence.c) */
leaf_status_t api_sequence_get(struct http_request *req);
leaf_status_t api_sequence_create(struct http_request *req);
leaf_status_t api_cluster_demote(struct http_request *req);

/* Answers with an ID error's HTTP status, code and message. */
void api_respond_ids_error(struct http_request *req, enum ids_error e);

/* Answers 200 text/plain with the IDs, one per line. */
void api_respond_ids(struct http_request *req, const int64_t *ids, int n);

/* Answers 200 with the JSON in b (or 500 when building it ran out of memory). */
void api_respond_sbuf(struct http_request *req, int status, const char *type, struct sbuf *b);

/*
 * Room for count IDs: the stack buffer when it is big enough, else the heap
 * (free with api_ids_free). NULL when out of memory.
 */
#define API_IDS_STACK 16
int64_t *api_ids_alloc(int64_t *stack, int count);
void api_ids_free(int64_t *stack, int64_t *ids);

#endif
