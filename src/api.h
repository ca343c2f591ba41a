#ifndef LEAF_API_H
#define LEAF_API_H

/*
 * HTTP handlers (see router.c for the table) and the helpers they share.
 * Handlers run on an event-loop thread; see router.h for the contract.
 */
#include <stdint.h>

#include "http.h"

leaf_status_t api_snowflake_get(struct http_request *req);
leaf_status_t api_decode(struct http_request *req);
leaf_status_t api_time(struct http_request *req);
leaf_status_t api_health(struct http_request *req);
leaf_status_t api_ready(struct http_request *req);
leaf_status_t api_metrics(struct http_request *req);

/* segment handlers: src/api_segment.c */
leaf_status_t api_segment_get(struct http_request *req);
leaf_status_t api_leaf_get(struct http_request *req);
/* admin API (src/api_admin.c) and monitor pages (src/api_pages.c) */
leaf_status_t api_admin_create(struct http_request *req);
leaf_status_t api_admin_init_cache(struct http_request *req);
leaf_status_t api_admin_step(struct http_request *req);
leaf_status_t api_cache_page(struct http_request *req);
leaf_status_t api_db_page(struct http_request *req);

/* The admin rule (contract section 2); answers 401/403 itself and returns 0 when refused. */
int api_admin_allowed(struct http_request *req);

/* Writes s as a quoted, escaped JSON string at dst (room: 6 * strlen(s) + 3); returns the length. */
size_t api_json_string(char *dst, const char *s);

/* Finds name=value in the query; returns 1 and the raw value when present. */
int api_query_get(const struct http_request *req, const char *name, const char **val,
                  size_t *len);

/*
 * Reads the {key} after `prefix_len` bytes of the path and the optional
 * ?count=N; answers 400 itself and returns LEAF_EINVAL when either is bad.
 */
leaf_status_t api_key_and_count(struct http_request *req, size_t prefix_len, const char **key,
                                size_t *key_len, int *count);

/* Answers 200 text/plain with the IDs, one per line. */
void api_respond_ids(struct http_request *req, const int64_t *ids, int n);

/* Writes v in decimal at dst (no NUL); returns the length. */
size_t api_format_i64(char *dst, int64_t v);

#endif
