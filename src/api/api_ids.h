#ifndef LEAF_API_IDS_H
#define LEAF_API_IDS_H

/*
 * Issuing IDs over HTTP (api_ids.c): the one path from a request to
 * door_ids_issue() and back to an answer. Runs on the request's loop thread.
 */
#include <stddef.h>
#include <stdint.h>

#include "door_ctx.h"
#include "door_ids.h"
#include "http_conn.h"

/*
 * Issues IDs for an HTTP request through door_ids_issue(): LEAF_OK, LEAF_EAGAIN
 * (parked: retry_ms set), or LEAF_ERR with the error response written.
 */
leaf_status_t api_ids_issue(struct http_request *req, enum ids_mode mode, const char *key,
                            size_t key_len, int count, int64_t *ids);

/* GET <the mode's HTTP prefix (IDS_MODES)>{key}[?count=N]: the IDs, one per line. The route
 * table names it for every ID route, with the row's mode. */
leaf_status_t api_ids_get(struct http_request *req, enum ids_mode mode);

#endif
