/*
 * TLS over memory BIOs: see net_tls.h. The socket side is net_conn.c's.
 */
#include "net_tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"

/* Sessions resumed by clients must come from this server's own contexts. */
static const unsigned char net_tls_session_ctx[] = "leafd";

/*
 * The current OpenSSL context, swapped by a reload. Files and policy are
 * read-only after create; cur is guarded by mu.
 */
struct net_tls_ctx {
    char *cert_file, *key_file, *ca_file;
    enum net_tls_verify verify;
    pthread_mutex_t mu;
    SSL_CTX *cur;
};

/* One connection's session. Loop thread only. */
struct net_tls {
    SSL *ssl;
    BIO *rbio;  /* ciphertext from the client, not yet consumed by OpenSSL */
    BIO *wbio;  /* ciphertext for the client, not yet taken by net_conn.c */
    int failed; /* a fatal error: no close_notify may follow */
    char error[160];
};

/* OpenSSL's error queue as one line ("what: reason"), emptied. */
static void tls_reason(const char *what, char *why, size_t whylen) {
    unsigned long e = ERR_get_error();
    char reason[256] = "unknown error";
    if (e != 0) {
        ERR_error_string_n(e, reason, sizeof(reason));
    }
    ERR_clear_error();
    snprintf(why, whylen, "%s: %s", what, reason);
}

static int tls_load_ca(SSL_CTX *sc, const char *ca_file, char *why, size_t whylen) {
    char what[600];
    if (SSL_CTX_load_verify_locations(sc, ca_file, NULL) != 1) {
        snprintf(what, sizeof(what), "cannot load the CA file %s", ca_file);
        tls_reason(what, why, whylen);
        return -1;
    }
    STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(ca_file);
    if (names != NULL) {
        SSL_CTX_set_client_CA_list(sc, names); /* the CAs named in the CertificateRequest */
    }
    return 0;
}

#define NET_TLS12_CIPHERS                                                                          \
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"     \
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

/* Warns when others may read the private key (group may: the ssl-cert group's way). */
static void tls_key_mode_check(const char *key_file) {
    struct stat st;
    if (stat(key_file, &st) == 0 && (st.st_mode & S_IROTH) != 0) {
        log_warn("tls",
                 "leafd.tls.key.file: %s is readable by others; chmod o-r it (or 600) so only "
                 "leafd's user (and its group) can read the private key",
                 key_file);
    }
}

/* A new OpenSSL context from the files; NULL with why set. */
static SSL_CTX *tls_build(const struct net_tls_ctx *ctx, char *why, size_t whylen) {
    char what[600];
    SSL_CTX *sc = SSL_CTX_new(TLS_server_method());
    if (sc == NULL) {
        tls_reason("SSL_CTX_new", why, whylen);
        return NULL;
    }
    SSL_CTX_set_min_proto_version(sc, TLS1_2_VERSION);
    /* TLS 1.2: forward-secret AEAD suites only (ECDHE with GCM or ChaCha20-Poly1305); no RSA key
     * exchange, no CBC. TLS 1.3's suites are OpenSSL's defaults, all of that kind. */
    if (SSL_CTX_set_cipher_list(sc, NET_TLS12_CIPHERS) != 1) {
        snprintf(what, sizeof(what), "no TLS 1.2 cipher suite usable (%s)", NET_TLS12_CIPHERS);
        goto fail;
    }
    SSL_CTX_set_options(sc, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE |
                                SSL_OP_NO_COMPRESSION);
    /* Idle connections give their record buffers back (allocate late). */
    SSL_CTX_set_mode(sc, SSL_MODE_RELEASE_BUFFERS);
    SSL_CTX_set_session_id_context(sc, net_tls_session_ctx, sizeof(net_tls_session_ctx) - 1);
    if (SSL_CTX_use_certificate_chain_file(sc, ctx->cert_file) != 1) {
        snprintf(what, sizeof(what), "cannot load the certificate %s (leafd.tls.cert.file)",
                 ctx->cert_file);
        goto fail;
    }
    if (SSL_CTX_use_PrivateKey_file(sc, ctx->key_file, SSL_FILETYPE_PEM) != 1) {
        snprintf(what, sizeof(what), "cannot load the private key %s (leafd.tls.key.file)",
                 ctx->key_file);
        goto fail;
    }
    tls_key_mode_check(ctx->key_file);
    if (SSL_CTX_check_private_key(sc) != 1) {
        snprintf(what, sizeof(what), "the key %s does not match the certificate %s", ctx->key_file,
                 ctx->cert_file);
        goto fail;
    }
    if (ctx->ca_file != NULL && ctx->ca_file[0] != '\0' &&
        tls_load_ca(sc, ctx->ca_file, why, whylen) != 0) {
        SSL_CTX_free(sc);
        return NULL;
    }
    if (ctx->verify == NET_TLS_VERIFY_REQUIRED) {
        SSL_CTX_set_verify(sc, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    } else if (ctx->verify == NET_TLS_VERIFY_OPTIONAL) {
        SSL_CTX_set_verify(sc, SSL_VERIFY_PEER, NULL);
    }
    return sc;
fail:
    tls_reason(what, why, whylen);
    SSL_CTX_free(sc);
    return NULL;
}

static char *tls_strdup(const char *s) {
    return strdup(s != NULL ? s : "");
}

void net_tls_ctx_free(struct net_tls_ctx *ctx) {
    if (ctx == NULL) {
        return;
    }
    SSL_CTX_free(ctx->cur);
    pthread_mutex_destroy(&ctx->mu);
    free(ctx->cert_file);
    free(ctx->key_file);
    free(ctx->ca_file);
    free(ctx);
}

leaf_status_t net_tls_ctx_create(struct net_tls_ctx **out, const struct net_tls_config *cfg,
                                 char *why, size_t whylen) {
    struct net_tls_ctx *ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL) {
        snprintf(why, whylen, "out of memory");
        return LEAF_ENOMEM;
    }
    pthread_mutex_init(&ctx->mu, NULL);
    ctx->cert_file = tls_strdup(cfg->cert_file);
    ctx->key_file = tls_strdup(cfg->key_file);
    ctx->ca_file = tls_strdup(cfg->ca_file);
    ctx->verify = cfg->verify;
    if (ctx->cert_file == NULL || ctx->key_file == NULL || ctx->ca_file == NULL) {
        snprintf(why, whylen, "out of memory");
        net_tls_ctx_free(ctx);
        return LEAF_ENOMEM;
    }
    ctx->cur = tls_build(ctx, why, whylen);
    if (ctx->cur == NULL) {
        net_tls_ctx_free(ctx);
        return LEAF_EINVAL;
    }
    *out = ctx;
    return LEAF_OK;
}

leaf_status_t net_tls_ctx_reload(struct net_tls_ctx *ctx, char *why, size_t whylen) {
    SSL_CTX *sc = tls_build(ctx, why, whylen);
    if (sc == NULL) {
        return LEAF_EINVAL;
    }
    pthread_mutex_lock(&ctx->mu);
    SSL_CTX *old = ctx->cur;
    ctx->cur = sc;
    pthread_mutex_unlock(&ctx->mu);
    SSL_CTX_free(old); /* gone once the last session that uses it is */
    return LEAF_OK;
}

/* ---- one connection ------------------------------------------------------- */

struct net_tls *net_tls_new(struct net_tls_ctx *ctx) {
    struct net_tls *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        return NULL;
    }
    pthread_mutex_lock(&ctx->mu);
    t->ssl = SSL_new(ctx->cur); /* holds a reference to the context it was made from */
    pthread_mutex_unlock(&ctx->mu);
    t->rbio = BIO_new(BIO_s_mem());
    t->wbio = BIO_new(BIO_s_mem());
    if (t->ssl == NULL || t->rbio == NULL || t->wbio == NULL) {
        BIO_free(t->rbio);
        BIO_free(t->wbio);
        SSL_free(t->ssl);
        free(t);
        ERR_clear_error();
        return NULL;
    }
    /* An empty memory BIO means "not yet", not end of file. */
    BIO_set_mem_eof_return(t->rbio, -1);
    BIO_set_mem_eof_return(t->wbio, -1);
    SSL_set_bio(t->ssl, t->rbio, t->wbio); /* the SSL owns both BIOs now */
    SSL_set_accept_state(t->ssl);
    return t;
}

void net_tls_free(struct net_tls *t) {
    if (t == NULL) {
        return;
    }
    SSL_free(t->ssl);
    free(t);
}

int net_tls_feed(struct net_tls *t, const char *data, size_t len) {
    while (len > 0) {
        int chunk = len > (1u << 30) ? (1 << 30) : (int)len;
        int n = BIO_write(t->rbio, data, chunk);
        if (n <= 0) {
            ERR_clear_error();
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

long net_tls_read(struct net_tls *t, char *buf, size_t cap) {
    size_t got = 0;
    while (got < cap) {
        size_t n = 0;
        int rc = SSL_read_ex(t->ssl, buf + got, cap - got, &n);
        if (rc == 1) {
            got += n;
            continue;
        }
        int err = SSL_get_error(t->ssl, rc);
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
            break;
        }
        if (got > 0) {
            /* Hand over what came before; the next call meets the error again. */
            break;
        }
        if (err == SSL_ERROR_ZERO_RETURN) {
            return NET_TLS_EOF;
        }
        tls_reason(SSL_is_init_finished(t->ssl) ? "TLS record" : "TLS handshake", t->error,
                   sizeof(t->error));
        t->failed = 1;
        return NET_TLS_FAIL;
    }
    return (long)got;
}

int net_tls_write(struct net_tls *t, const char *data, size_t len) {
    while (len > 0) {
        size_t n = 0;
        if (SSL_write_ex(t->ssl, data, len, &n) != 1) {
            tls_reason("TLS write", t->error, sizeof(t->error));
            t->failed = 1;
            return -1;
        }
        data += n;
        len -= n;
    }
    return 0;
}

size_t net_tls_pending(const struct net_tls *t) {
    return BIO_ctrl_pending(t->wbio);
}

size_t net_tls_take(struct net_tls *t, char *buf, size_t cap) {
    size_t n = 0;
    if (cap == 0 || BIO_read_ex(t->wbio, buf, cap, &n) != 1) {
        return 0;
    }
    return n;
}

int net_tls_has_input(const struct net_tls *t) {
    return BIO_ctrl_pending(t->rbio) > 0 || SSL_pending(t->ssl) > 0;
}

int net_tls_established(const struct net_tls *t) {
    return SSL_is_init_finished(t->ssl);
}

void net_tls_shutdown(struct net_tls *t) {
    if (!t->failed && SSL_is_init_finished(t->ssl)) {
        SSL_shutdown(t->ssl);
        ERR_clear_error();
    }
}

const char *net_tls_error(const struct net_tls *t) {
    return t->error;
}
