#ifndef LEAF_API_H
#define LEAF_API_H

/*
 * The HTTP API's handlers, which the route table (src/tables/table_http.c)
 * dispatches to; the pages and /metrics are src/pages'. Handlers run on an event-loop thread and
 * reach the node's services through the request's struct door_ctx (door_ctx.h). What they share
 * with the pages is src/door's and included here: door_http.h (arguments and answers) and
 * door_http_auth.h (who may do what); issuing over HTTP is api_ids.h's.
 */
#include "api_ids.h"
#include "door_ctx.h"
#include "door_http.h"
#include "door_http_auth.h"

/* api.c */
leaf_status_t api_decode(struct http_request *req, enum ids_mode mode);
leaf_status_t api_decode_uuid(struct http_request *req, enum ids_mode mode);
leaf_status_t api_time(struct http_request *req, enum ids_mode mode);
leaf_status_t api_health(struct http_request *req, enum ids_mode mode);
leaf_status_t api_ready(struct http_request *req, enum ids_mode mode);

/* api_segment.c */
leaf_status_t api_leaf_get(struct http_request *req, enum ids_mode mode);
leaf_status_t api_segment_range(struct http_request *req, enum ids_mode mode);
leaf_status_t api_decode_opaque(struct http_request *req, enum ids_mode mode);

/* the admin API (api_admin.c) */
leaf_status_t api_admin_create(struct http_request *req, enum ids_mode mode);
leaf_status_t api_admin_init_cache(struct http_request *req, enum ids_mode mode);
leaf_status_t api_admin_step(struct http_request *req, enum ids_mode mode);

/* the users' admin API (api_users.c) */
leaf_status_t api_users_list(struct http_request *req, enum ids_mode mode);
leaf_status_t api_users_add(struct http_request *req, enum ids_mode mode);
leaf_status_t api_users_change(struct http_request *req, enum ids_mode mode);
leaf_status_t api_users_delete(struct http_request *req, enum ids_mode mode);

/* business numbers' admin API (api_numbering.c) */
leaf_status_t api_numbering_create(struct http_request *req, enum ids_mode mode);
leaf_status_t api_numbering_list(struct http_request *req, enum ids_mode mode);
leaf_status_t api_numbering_update(struct http_request *req, enum ids_mode mode);
leaf_status_t api_numbering_delete(struct http_request *req, enum ids_mode mode);

/* keyed sequences' admin API (api_keyed.c) */
leaf_status_t api_keyed_create(struct http_request *req, enum ids_mode mode);
leaf_status_t api_keyed_list(struct http_request *req, enum ids_mode mode);

/* sequences and the cluster (api_sequence.c) */
leaf_status_t api_sequence_create(struct http_request *req, enum ids_mode mode);
/* Answers a refused create of a ZooKeeper object (a sequence, a keyed space): LEAF_EEXIST
 * exists, LEAF_ERANGE limit (DOOR_E_ZOOKEEPER_UNAVAILABLE: none), LEAF_ENOMEM busy, else 503. */
void api_create_refused(struct http_request *req, leaf_status_t rc, enum door_error exists,
                        enum door_error limit);
/*
 * With several regions, the home of a sequence, keyed space or numbering being created
 * (api_home.c): LEAF_OK to create it here; LEAF_EAGAIN (req->retry_ms set) while the registry
 * answers this region's claim; LEAF_ERR when answered (307 to the home named, 400, exists 409
 * when homed in another region, 503 when the registry does not answer).
 */
leaf_status_t api_home_create(struct http_request *req, enum zk_region_kind k, const char *name,
                              enum door_error exists);

leaf_status_t api_cluster_demote(struct http_request *req, enum ids_mode mode);

/* 307 to http (host:port), the same path without the query, a client resending a POST and its
 * body there; the body {"code":code,key:value,"location":http} (api_home.c). */
void api_redirect(struct http_request *req, const char *http, const char *code, const char *key,
                  const char *value);

/* moving a sequence's home to another region (api_move.c) */
leaf_status_t api_region_move(struct http_request *req, enum ids_mode mode);
leaf_status_t api_region_adopt(struct http_request *req, enum ids_mode mode);

#endif
