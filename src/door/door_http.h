#ifndef LEAF_DOOR_HTTP_H
#define LEAF_DOOR_HTTP_H

/*
 * Reading an HTTP request's arguments and writing its answer, for every
 * HTTP handler and page (door_http.c). Runs on the request's loop thread.
 */
#include <stddef.h>
#include <stdint.h>

#include "door_errors.h"
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

/*
 * HTTP's one error writer: the row's status and {"code":"<code>","message":"<message>"}, the
 * row's own message when message is NULL (door_errors.h). Every handler and page answers its
 * errors through it.
 */
void door_http_error(struct http_request *req, enum door_error e, const char *message);

/* The same with extra header lines ("Name: value\r\n"...): Allow, WWW-Authenticate, Retry-After. */
void door_http_error_ex(struct http_request *req, enum door_error e, const char *extra_headers,
                        const char *message);

/* The same for a code a pure library handed back (segment_request.c's): its row, or
 * DOOR_E_BAD_REQUEST's status when no row has it. */
void door_http_error_code(struct http_request *req, const char *code, const char *message);

/* The header of every answer that carries IDs, and of the pages: never kept by a cache (an ID
 * served twice from one is a duplicate). */
#define DOOR_HTTP_NO_STORE "Cache-Control: no-store\r\n"

#endif
