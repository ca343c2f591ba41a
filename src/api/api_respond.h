#ifndef LEAF_API_RESPOND_H
#define LEAF_API_RESPOND_H

/*
 * Reading an HTTP request's arguments and writing its answer, for every
 * handler (api_respond.c). Runs on the request's loop thread.
 */
#include <stddef.h>
#include <stdint.h>

#include "http_proto.h"
#include "ids.h"
#include "sbuf.h"
#include "sequence_service.h"

struct cJSON;

/*
 * The body as one JSON object with nothing after it but white space (cJSON
 * alone stops after the object and ignores the rest: '{"name":"a"} garbage').
 * NULL when it is not; the caller answers 400 and cJSON_Delete()s the result.
 */
struct cJSON *api_body_object(const struct http_request *req);

/* Finds name=value in the query; returns 1 and the raw value when present. */
int api_query_get(const struct http_request *req, const char *name, const char **val, size_t *len);

/* Answers with the body in b (or 500 when building it ran out of memory). */
void api_respond_sbuf(struct http_request *req, int status, const char *type, struct sbuf *b);

/* Answers 200 text/plain with the IDs, one per line. */
void api_respond_ids(struct http_request *req, const int64_t *ids, int n);

/* The header of every answer that carries IDs, and of the pages: never kept by a cache (an ID
 * served twice from one is a duplicate). */
#define API_NO_STORE "Cache-Control: no-store\r\n"

/* Answers with an ID error's HTTP status, code and message. */
void api_respond_ids_error(struct http_request *req, enum ids_error e);

/* 307 to the sequence primary, with Location and {"code":"not_primary",...,"primary"}. */
void api_respond_redirect(struct http_request *req, const struct sequence_where *primary);

#endif
