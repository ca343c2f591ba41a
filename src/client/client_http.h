#ifndef CLIENT_HTTP_H
#define CLIENT_HTTP_H

/*
 * A small blocking HTTP/1.1 client for the refill thread and the callers that lead a strict
 * key's batch (client_strict.c): one keep-alive connection per node and user, plain or TLS
 * (OpenSSL, the CA file of ca= or the system's, the node's name or address checked against its
 * certificate), GET only, answers with a Content-Length (as leafd sends them). Every request is
 * bounded by timeout.ms, connect included.
 *
 * A connection is owned by one thread at a time: the refill thread's own (client_handle.h), or
 * one taken from the handle's pool of strict connections (client_strict.c) by the caller that
 * leads a batch, until it puts it back.
 */
#include <openssl/ssl.h>
#include <stddef.h>
#include <stdint.h>

#include "client_head.h"
#include "client_options.h"

struct client_conn {
    int fd; /* -1 when closed */
    SSL *ssl;
    char *buf; /* the answer: head and body (grows) */
    size_t cap, len;
};

/* An answer: its status and body (pointing into the connection's buffer). */
struct client_answer {
    int status;
    const char *body;
    size_t body_len;
    const char *location; /* a redirect's Location value (location_len 0: none) */
    size_t location_len;
};

/* The TLS context of a handle (NULL when no endpoint is https); the reason in err. */
SSL_CTX *client_http_tls(const struct client_options *o, char *err, size_t errlen);

void client_http_init(struct client_conn *c);
/* Closes it and frees the buffer. */
void client_http_free(struct client_conn *c);
/* In a child of fork(): closes the child's copy of the socket and lets the TLS state and the
 * buffer go unfreed (the parent's thread may have been changing them at the fork). */
void client_http_forget(struct client_conn *c);

/*
 * GET path from node e over c (connecting first when closed), with the header
 * lines in extra ("" or "Authorization: ...\r\n"). 0 with the answer in *a, or
 * -1 with the reason in err (the connection is then closed).
 */
int client_http_get(struct client_conn *c, SSL_CTX *tls, const struct client_endpoint *e,
                    const char *path, const char *extra, int64_t timeout_ms,
                    struct client_answer *a, char *err, size_t errlen);

#endif
