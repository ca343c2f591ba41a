#ifndef LEAF_API_H
#define LEAF_API_H

/*
 * The HTTP API's handlers, which the route table (src/app/router.c)
 * dispatches to; the HTML pages are src/pages'. Handlers run on an event-loop thread and reach the
 * node's services through the request's struct api_ctx (api_ctx.h). What they share is below them
 * and included here: api_respond.h (arguments and answers), api_ids.h (issuing), api_auth.h (who
 * may do what); the admin handlers' database jobs are api_admin.h's.
 */
#include "api_auth.h"
#include "api_ctx.h"
#include "api_ids.h"
#include "api_respond.h"

/* api.c */
leaf_status_t api_snowflake_get(struct http_request *req);
leaf_status_t api_segment_get(struct http_request *req);
leaf_status_t api_decode(struct http_request *req);
leaf_status_t api_time(struct http_request *req);
leaf_status_t api_health(struct http_request *req);
leaf_status_t api_ready(struct http_request *req);

/* api_segment.c */
leaf_status_t api_leaf_get(struct http_request *req);
leaf_status_t api_segment_range(struct http_request *req);
leaf_status_t api_opaque_get(struct http_request *req);
leaf_status_t api_decode_opaque(struct http_request *req);

/* the admin API (api_admin.c) */
leaf_status_t api_admin_create(struct http_request *req);
leaf_status_t api_admin_init_cache(struct http_request *req);
leaf_status_t api_admin_step(struct http_request *req);

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
