#ifndef LEAF_AUTH_HEADER_H
#define LEAF_AUTH_HEADER_H

/*
 * The HTTP Authorization header (docs/SECURITY.md): `Basic
 * base64(user:secret)` for users, and `Bearer <token>` detected so that the
 * caller can check the legacy leafd.admin.token. Pure code (base64 decoding
 * is not crypto), unit-tested in tests/unit/test_auth.c and fuzzed by
 * tests/fuzz/fuzz_auth.c.
 *
 * Strict, because anything lenient here is a way round the checks:
 *   - the value is at most AUTH_HEADER_MAX bytes (after trimming spaces and
 *     tabs at both ends); longer is refused before any decoding;
 *   - the scheme is "Basic" or "Bearer" in any case, then one or more
 *     spaces, then the credentials;
 *   - Basic: standard base64 (A-Z a-z 0-9 + /), length a multiple of 4, '='
 *     only as the last one or two characters, unused bits zero, no spaces
 *     inside; the decoded text must hold a colon; the user (before the first
 *     colon) and the secret (after it) must both be non-empty and hold no
 *     control character (RFC 7617);
 *   - Bearer: the rest of the value, non-empty, as given (the legacy token is
 *     any configured string, so its characters are not checked here).
 */
#include <stddef.h>

#define AUTH_HEADER_MAX 1024
#define AUTH_HEADER_DECODED_MAX (AUTH_HEADER_MAX / 4 * 3)

enum auth_scheme {
    AUTH_SCHEME_NONE,    /* no header, or an empty one: no credentials */
    AUTH_SCHEME_BASIC,   /* user and secret set */
    AUTH_SCHEME_BEARER,  /* secret is the token */
    AUTH_SCHEME_INVALID, /* malformed or an unknown scheme: bad credentials; why says how */
};

/*
 * The decoded header. Lives on the stack of the request's check; user and
 * secret point into decoded (Basic) or into the header value (Bearer), so
 * the struct must not be copied, and the value must outlive it. Clear it with
 * auth_header_clear() once checked: decoded holds the secret.
 */
struct auth_header {
    enum auth_scheme scheme;
    const char *user, *secret;
    size_t user_len, secret_len;
    const char *why; /* AUTH_SCHEME_INVALID: a static reason, safe to log (no input quoted) */
    char decoded[AUTH_HEADER_DECODED_MAX + 1];
};

/* Parses value (len bytes; NULL or 0 = no header) into *out; returns out->scheme. */
enum auth_scheme auth_header_parse(const char *value, size_t len, struct auth_header *out);

/* Wipes the decoded secret (explicit_bzero, so the compiler keeps the wipe). */
void auth_header_clear(struct auth_header *h);

#endif
