#ifndef LEAF_DOOR_HTTP_H
#define LEAF_DOOR_HTTP_H

/*
 * Reading an HTTP request's arguments and writing its answer, for every
 * HTTP handler and page (door_http.c). Runs on the request's loop thread.
 */
#include <stddef.h>
#include <stdint.h>

#include "http_conn.h"
#include "sbuf.h"

struct cJSON;

/*
 * The body as one JSON object with nothing after it but white space (cJSON
 * alone stops after the object and ignores the rest: '{"name":"a"} garbage').
 * NULL when it is not; the caller answers 400 and cJSON_Delete()s the result.
 */
struct cJSON *door_http_body(const struct http_request *req);

/* Finds name=value in the query; returns 1 and the raw value when present. */
int door_http_query(const struct http_request *req, const char *name, const char **val,
                    size_t *len);

/* Answers with the body in b (or 500 when building it ran out of memory). */
void door_http_respond_sbuf(struct http_request *req, int status, const char *type, struct sbuf *b);

/* The header of every answer that carries IDs, and of the pages: never kept by a cache (an ID
 * served twice from one is a duplicate). */
#define DOOR_HTTP_NO_STORE "Cache-Control: no-store\r\n"

#endif
