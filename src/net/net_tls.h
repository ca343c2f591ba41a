#ifndef LEAF_NET_TLS_H
#define LEAF_NET_TLS_H

/*
 * TLS for the client listeners (OpenSSL; TLS 1.2 and 1.3 only), as a filter
 * between the socket and the protocol: it knows no libuv and no protocol.
 * net_conn.c hands it the bytes read from the socket (net_tls_feed), takes the
 * plaintext out (net_tls_read), hands it the replies (net_tls_write) and
 * writes whatever it has to send (net_tls_take). Two memory BIOs per
 * connection stand for the socket, so the event loop does all the I/O.
 *
 * A context (certificate, key, client-certificate policy) is shared by every
 * loop. net_tls_ctx_reload() builds a new OpenSSL context from the files and
 * swaps it in: connections opened afterwards use it, open ones keep the one
 * they started with (OpenSSL counts the references), so a reload drops no
 * connection, and a reload that fails changes nothing.
 *
 * Ownership: a struct net_tls_ctx is created and reloaded by the main
 * thread and read by every loop (the current OpenSSL context is behind a
 * mutex, taken once per new connection). A struct net_tls belongs to its
 * connection's loop thread.
 */
#include <stddef.h>

#include "status.h"

/* Client certificates (leafd.tls.client.auth). */
enum net_tls_verify {
    NET_TLS_VERIFY_NONE,
    NET_TLS_VERIFY_OPTIONAL, /* asked for; a certificate sent must chain to ca_file */
    NET_TLS_VERIFY_REQUIRED, /* no valid certificate, no handshake */
};

struct net_tls_config {
    const char *cert_file; /* PEM certificate chain */
    const char *key_file;  /* PEM private key */
    const char *ca_file;   /* PEM CAs for client certificates ("" or NULL: none) */
    enum net_tls_verify verify;
};

struct net_tls_ctx;
struct net_tls;

/* What net_tls_read() found. */
#define NET_TLS_AGAIN 0   /* nothing more until more input arrives */
#define NET_TLS_EOF (-1)  /* the client closed the TLS session (close_notify) */
#define NET_TLS_FAIL (-2) /* handshake or record failed: close (net_tls_error says why) */

/*
 * Loads the certificate and key (they must match) and the CA file. The
 * config's strings are copied. On failure writes "what failed: OpenSSL's
 * reason" into why and returns LEAF_EINVAL.
 */
leaf_status_t net_tls_ctx_create(struct net_tls_ctx **out, const struct net_tls_config *cfg,
                                 char *why, size_t whylen);

/* Builds a new context from the same files; on failure keeps the old one (why says why). */
leaf_status_t net_tls_ctx_reload(struct net_tls_ctx *ctx, char *why, size_t whylen);

/* After every connection using it is gone. NULL is fine. */
void net_tls_ctx_free(struct net_tls_ctx *ctx);

/* A server-side session on the current context; NULL when out of memory. */
struct net_tls *net_tls_new(struct net_tls_ctx *ctx);
void net_tls_free(struct net_tls *t);

/* Takes ciphertext read from the socket (copied). 0, or -1 when out of memory. */
int net_tls_feed(struct net_tls *t, const char *data, size_t len);

/*
 * Decrypts into buf (cap bytes), driving the handshake first: the number of
 * plaintext bytes (> 0), NET_TLS_AGAIN, NET_TLS_EOF or NET_TLS_FAIL. After
 * each call, net_tls_pending() may have bytes to send (handshake, alerts).
 */
long net_tls_read(struct net_tls *t, char *buf, size_t cap);

/* Encrypts plaintext (all of it) for net_tls_take(). 0, or -1 on failure. */
int net_tls_write(struct net_tls *t, const char *data, size_t len);

/* Ciphertext waiting to be sent. */
size_t net_tls_pending(const struct net_tls *t);

/* Moves up to cap bytes of it into buf; returns how many. */
size_t net_tls_take(struct net_tls *t, char *buf, size_t cap);

/* 1 when ciphertext fed in has not been decrypted yet (the drain waits for it). */
int net_tls_has_input(const struct net_tls *t);

/* 1 once the handshake is done. */
int net_tls_established(const struct net_tls *t);

/* Queues a close_notify alert (net_tls_take sends it). */
void net_tls_shutdown(struct net_tls *t);

/* Why the last NET_TLS_FAIL happened (OpenSSL's reason), for a log line. */
const char *net_tls_error(const struct net_tls *t);

#endif
