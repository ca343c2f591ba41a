#ifndef LEAF_AUTH_SECRET_H
#define LEAF_AUTH_SECRET_H

/*
 * Secrets (docs/SECURITY.md): generated from the kernel's CSPRNG
 * (getrandom), stored only as a SHA-256 hash, verified in constant time.
 * All crypto is OpenSSL's libcrypto (EVP, CRYPTO_memcmp); nothing here is
 * hand-written crypto. Unit-tested in tests/unit/test_auth.c.
 *
 * Why a fast, unsalted hash is right here: a generated secret carries 192
 * random bits, so neither a dictionary nor a precomputed table can reach it,
 * and a slow password hash (bcrypt, argon2) would only cost every request
 * tens of milliseconds on an event loop. Verifying is one SHA-256 of a
 * 36-byte string: well under a microsecond, fine on an event loop.
 *
 * Thread-safe: no state; call from any thread.
 */
#include <stddef.h>
#include <stdint.h>

#include "auth_table.h"
#include "auth_user.h"
#include "status.h"

#define AUTH_SECRET_PREFIX "lfd_" /* recognisable in a leaked file or a scanner's rules */
#define AUTH_SECRET_RANDOM 24     /* bytes from getrandom: 192 bits */
#define AUTH_SECRET_LEN (sizeof(AUTH_SECRET_PREFIX) - 1 + (size_t)AUTH_SECRET_RANDOM / 3 * 4)

/*
 * Writes a new secret and a NUL at out (room: AUTH_SECRET_LEN + 1):
 * "lfd_" and 32 base64url characters [A-Za-z0-9_-]. LEAF_OK, or LEAF_ERR
 * when the kernel's generator fails (out is then wiped).
 */
leaf_status_t auth_secret_generate(char *out);

/* SHA-256 of secret (len bytes) into out. LEAF_OK, or LEAF_ERR (libcrypto failed). */
leaf_status_t auth_secret_hash(const char *secret, size_t len, uint8_t out[AUTH_HASH_LEN]);

/*
 * Looks name up in t and verifies secret. LEAF_OK and *user; LEAF_ENOTFOUND
 * (no such user) or LEAF_EINVAL (wrong secret), *user NULL. An unknown user
 * costs the same hash as a known one, so timing does not tell which names
 * exist. Distinguish the two only in metrics, never in the answer.
 */
leaf_status_t auth_secret_authenticate(const struct auth_table *t, const char *name,
                                       size_t name_len, const char *secret, size_t secret_len,
                                       const struct auth_user **user);

/*
 * 1 when a and b are equal, in time that depends on neither content nor
 * length (both are hashed, then the digests compared with CRYPTO_memcmp).
 * For the legacy leafd.admin.token.
 */
int auth_secret_equal(const char *a, size_t alen, const char *b, size_t blen);

#endif
