#ifndef LEAF_API_H
#define LEAF_API_H

/*
 * The HTTP API: the router (the route table, router.c) and the handlers it
 * dispatches to. Handlers run on an event-loop thread and reach the node's
 * services through the request's struct api_ctx (api_ctx.h). What they
 * share is below them and included here: api_respond.h (arguments and
 * answers), api_ids.h (issuing), api_auth.h (who may do what); the admin
 * handlers' database jobs are api_admin.h's.
 */
#include "api_auth.h"
#include "api_ctx.h"
#include "api_ids.h"
#include "api_respond.h"

/* The router: dispatches a request to its handler (http_proto_config.handler). */
leaf_status_t router_dispatch(struct http_request *req);
/* The completion hook (http_proto_config.done): per-route accounting. */
void router_done(const struct http_request *req);
/*
 * The routes' metric labels by index, then the pseudo-routes not_found and
 * bad_request: writes up to cap names, returns how many there are.
 */
int router_names(const char **names, int cap);
/* ids[i] = 1 when route i hands out IDs (its need is the ids right), in router_names' order. */
void router_kinds(unsigned char *ids, int cap);

/* api.c */
leaf_status_t api_snowflake_get(struct http_request *req);
leaf_status_t api_segment_get(struct http_request *req);
leaf_status_t api_decode(struct http_request *req);
leaf_status_t api_time(struct http_request *req);
leaf_status_t api_health(struct http_request *req);
leaf_status_t api_ready(struct http_request *req);
leaf_status_t api_metrics(struct http_request *req);

/* api_segment.c */
leaf_status_t api_leaf_get(struct http_request *req);
leaf_status_t api_segment_range(struct http_request *req);
leaf_status_t api_opaque_get(struct http_request *req);
leaf_status_t api_decode_opaque(struct http_request *req);

/* the admin API (api_admin.c) and monitor pages (api_pages.c, api_cluster.c) */
leaf_status_t api_admin_create(struct http_request *req);
leaf_status_t api_admin_init_cache(struct http_request *req);
leaf_status_t api_admin_step(struct http_request *req);
leaf_status_t api_cache_page(struct http_request *req);
leaf_status_t api_db_page(struct http_request *req);
leaf_status_t api_cluster_page(struct http_request *req);
/* GET /: the index page linking the pages (api_index.c). */
leaf_status_t api_index_page(struct http_request *req);

/* the users' admin API (api_users.c) */
leaf_status_t api_users_list(struct http_request *req);
leaf_status_t api_users_add(struct http_request *req);
leaf_status_t api_users_change(struct http_request *req);
leaf_status_t api_users_delete(struct http_request *req);

/* sequences and the cluster (api_sequence.c) */
leaf_status_t api_sequence_get(struct http_request *req);
leaf_status_t api_sequence_create(struct http_request *req);
leaf_status_t api_cluster_demote(struct http_request *req);

#endif
