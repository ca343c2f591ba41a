/*
 * Secrets with libcrypto: EVP for SHA-256 and base64, CRYPTO_memcmp for the
 * comparison, getrandom(2) for the randomness.
 */
#include "auth_secret.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <string.h>
#include <sys/random.h>

static leaf_status_t secret_random(unsigned char *buf, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(buf + got, n - got, 0);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            return LEAF_ERR;
        }
        got += (size_t)r;
    }
    return LEAF_OK;
}

leaf_status_t auth_secret_generate(char *out) {
    unsigned char raw[AUTH_SECRET_RANDOM];
    size_t plen = sizeof(AUTH_SECRET_PREFIX) - 1;
    if (secret_random(raw, sizeof(raw)) != LEAF_OK) {
        explicit_bzero(raw, sizeof(raw));
        explicit_bzero(out, AUTH_SECRET_LEN + 1);
        return LEAF_ERR;
    }
    memcpy(out, AUTH_SECRET_PREFIX, plen);
    /* 24 bytes are 32 base64 characters with no padding; EVP_EncodeBlock
     * writes them and a NUL. Then the URL-safe alphabet, so the secret
     * needs no quoting in a shell, a URL or a redis-cli argument. */
    EVP_EncodeBlock((unsigned char *)out + plen, raw, (int)sizeof(raw));
    explicit_bzero(raw, sizeof(raw));
    for (char *p = out + plen; *p != '\0'; p++) {
        if (*p == '+') {
            *p = '-';
        } else if (*p == '/') {
            *p = '_';
        }
    }
    return LEAF_OK;
}

leaf_status_t auth_secret_hash(const char *secret, size_t len, uint8_t out[AUTH_HASH_LEN]) {
    unsigned int n = 0;
    if (EVP_Digest(secret, len, out, &n, EVP_sha256(), NULL) != 1 || n != AUTH_HASH_LEN) {
        return LEAF_ERR;
    }
    return LEAF_OK;
}

/* 1 when secret (len bytes) hashes to hash, compared in constant time; else 0. */
static int auth_secret_verify(const uint8_t hash[AUTH_HASH_LEN], const char *secret, size_t len) {
    uint8_t got[AUTH_HASH_LEN];
    if (auth_secret_hash(secret, len, got) != LEAF_OK) {
        return 0;
    }
    return CRYPTO_memcmp(got, hash, AUTH_HASH_LEN) == 0;
}

leaf_status_t auth_secret_authenticate(const struct auth_table *t, const char *name,
                                       size_t name_len, const char *secret, size_t secret_len,
                                       const struct auth_user **user) {
    /* Compared against when the user is unknown, so that both paths hash once. */
    static const uint8_t nobody[AUTH_HASH_LEN];
    const struct auth_user *u = auth_table_find(t, name, name_len);
    int ok = auth_secret_verify(u != NULL ? u->secret_hash : nobody, secret, secret_len);
    *user = NULL;
    if (u == NULL) {
        return LEAF_ENOTFOUND;
    }
    if (!ok) {
        return LEAF_EINVAL;
    }
    *user = u;
    return LEAF_OK;
}

int auth_secret_equal(const char *a, size_t alen, const char *b, size_t blen) {
    uint8_t ha[AUTH_HASH_LEN], hb[AUTH_HASH_LEN];
    if (auth_secret_hash(a, alen, ha) != LEAF_OK || auth_secret_hash(b, blen, hb) != LEAF_OK) {
        return 0;
    }
    return CRYPTO_memcmp(ha, hb, AUTH_HASH_LEN) == 0;
}
