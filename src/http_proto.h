#ifndef LEAF_HTTP_PROTO_H
#define LEAF_HTTP_PROTO_H

/*
 * The HTTP/1.1 protocol of one connection, without any I/O: bytes go in
 * (http_proto_execute), responses come out (p->out). It parses with llhttp
 * (compiled in), one request at a time, dispatches each to the router, and
 * appends the responses to one buffer in request order. src/http.c does the
 * socket side; the fuzzer and the unit tests drive this directly.
 *
 * Ownership: a struct http_proto belongs to the thread of the connection
 * that embeds it.
 */
#include <stddef.h>
#include <stdint.h>

#include "llhttp.h"
#include "http.h"

struct http_buf {
    char *data;
    size_t len, cap;
};

struct http_proto {
    llhttp_t parser;
    struct http_loop *loop;
    struct http_buf out; /* responses not yet handed to the socket */

    /* the request being received */
    char url[HTTP_MAX_URL + 1];
    size_t url_len;
    size_t head_bytes;
    char field[32];
    size_t field_len;
    int in_auth;
    char auth[HTTP_MAX_AUTH + 1];
    size_t auth_len;
    char body[HTTP_MAX_BODY];
    size_t body_len;
    int too_large; /* 413/414/431 once a limit is hit */

    struct http_request req; /* the request dispatched last (kept while waiting) */
    int64_t head_started_ms; /* loop time the current request began; 0 = none */
    int loopback;
    int waiting;      /* a handler said LEAF_EAGAIN: call http_proto_retry() later */
    int close_after;  /* close once the output is written */
    int head_only;    /* the request is HEAD: answers carry no body */
};

/* Resets p completely; a used p must be http_proto_free()d first. */
void http_proto_init(struct http_proto *p, struct http_loop *loop, int loopback);
void http_proto_free(struct http_proto *p);

/*
 * Parses and answers requests from data until it is used up, a handler must
 * wait (p->waiting, retry after p->req.retry_ms), the connection must close
 * (p->close_after) or the output is over HTTP_MAX_OUTPUT. Returns the bytes
 * consumed; the caller keeps the rest and passes it again later.
 */
size_t http_proto_execute(struct http_proto *p, const char *data, size_t len);

/* Runs the waiting request again (after its retry delay). */
void http_proto_retry(struct http_proto *p);

/* Answers with an error of the HTTP layer itself and marks close_after. */
void http_proto_fail(struct http_proto *p, int status, const char *code, const char *message);

#endif
