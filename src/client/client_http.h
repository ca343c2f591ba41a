#ifndef CLIENT_HTTP_H
#define CLIENT_HTTP_H

/*
 * A small blocking HTTP/1.1 client for the refill thread: one keep-alive
 * connection per node, plain or TLS (OpenSSL, the CA file of ca= or the
 * system's, the node's name or address checked against its certificate),
 * GET only, answers with a Content-Length (as leafd sends them). Every
 * request is bounded by timeout.ms, connect included.
 *
 * Owned by the refill thread of the handle (client.c); no other thread
 * touches a connection.
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
