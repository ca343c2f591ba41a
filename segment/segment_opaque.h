#ifndef LEAF_SEGMENT_OPAQUE_H
#define LEAF_SEGMENT_OPAQUE_H

/*
 * Opaque IDs: a keyed permutation of [1, 2^63), so segment IDs can be shown
 * without showing how many were issued or in which order.
 *
 * What it hides: the count and the order. Consecutive segment IDs come out
 * as unrelated-looking numbers spread over [1, 2^63), so a competitor cannot
 * count a day's orders from two IDs, and a scraper cannot walk the URLs by
 * adding one. Without the key, an output says nothing useful about its input.
 *
 * What it does not do:
 * - It is not authentication or a signature: anyone can send any number,
 *   and decrypting it gives some ID; check that the ID exists.
 * - It is not secret from whoever has the key: anyone holding the key
 *   decodes every ID (as /decodeOpaqueId does).
 * - It is deterministic: equal inputs of one tag give equal outputs.
 * - Changing the key changes every opaque ID; old ones decode to garbage.
 *
 * Tenants stay apart (docs/SECURITY.md): the IDs are issued through a
 * permutation of their tag (segment_opaque_*_tag), a tweak derived from the
 * key and the tag selecting it, so one tag's IDs, or a lookup table of them,
 * say nothing about another's. The tag-less permutation is what leafd
 * issued before 0.2: kept to decode those IDs (segment_opaque_decrypt()).
 *
 * The construction, after NIST SP 800-38G's FF1 (which is what a
 * format-preserving cipher on a small domain should look like): a Feistel
 * network on 63-bit blocks split 31 | 32, alternating the halves, with
 * SEGMENT_OPAQUE_ROUNDS rounds. Round i adds AES-128_K(i, width, other
 * half), cut to the half's width, to one half modulo 2^width. AES comes
 * from OpenSSL's EVP (hardware AES where the CPU has it). Ten rounds as
 * FF1: Luby-Rackoff's 3-4 rounds only hold to about 2^16 queries on 32-bit
 * halves, Patarin's bounds for 5 or more rounds approach 2^32, and FF1's 10
 * leave a margin against the generic and small-domain attacks that broke
 * 8-round FF3 (Durak-Vaudenay 2017), for one AES block per round.
 *
 * The Feistel network F permutes [0, 2^63); 0 must never be produced, so
 * the permutation is cycle-walked onto [1, 2^63): E(x) = F(x), except the
 * one x whose F(x) is 0, which walks one step further to F(0). No other x
 * maps to F(0) (F is a bijection and F(0) != 0 whenever some x != 0 maps to
 * 0), so E is a bijection of [1, 2^63), one step at most. The inverse does
 * the same with F^-1. F(0) and F^-1(0) are computed once per key.
 *
 * Threads: an OpenSSL cipher context must not be used by two threads at
 * once, so a struct segment_opaque belongs to one thread (one per event
 * loop), made from the parsed key with segment_opaque_init() and released
 * with segment_opaque_close(). A struct segment_opaque_key is a plain value
 * that may be copied to every thread.
 */
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define SEGMENT_OPAQUE_KEY_BYTES 16 /* AES-128 */
#define SEGMENT_OPAQUE_KEY_HEX 32
#define SEGMENT_OPAQUE_ROUNDS 10
#define SEGMENT_OPAQUE_REASON_MAX 96

struct evp_cipher_ctx_st; /* OpenSSL's EVP_CIPHER_CTX */

struct segment_opaque_key {
    uint8_t bytes[SEGMENT_OPAQUE_KEY_BYTES];
};

#define SEGMENT_OPAQUE_TWEAK_BYTES 8
#define SEGMENT_OPAQUE_TAG_MAX 128  /* a tag's longest name (validate.h) */
#define SEGMENT_OPAQUE_TAG_CACHE 64 /* tags whose permutation a thread keeps at hand */

/* One tag's permutation: its tweak and its cycle walk past 0 (len 0: an empty slot). */
struct segment_opaque_tag {
    size_t len;
    char name[SEGMENT_OPAQUE_TAG_MAX];
    uint8_t tweak[SEGMENT_OPAQUE_TWEAK_BYTES];
    int64_t f_zero, f_inv_zero;
};

/* Owned by one thread: see above. */
struct segment_opaque {
    struct evp_cipher_ctx_st *aes; /* AES-128-ECB, no padding, keyed */
    int64_t f_zero;                /* F(0) of the tag-less permutation: where F(x) = 0 goes */
    int64_t f_inv_zero;            /* F^-1(0): the x that went there */
    uint8_t key[SEGMENT_OPAQUE_KEY_BYTES]; /* for the tags' tweaks (HMAC-SHA256) */
    struct segment_opaque_tag tags[SEGMENT_OPAQUE_TAG_CACHE]; /* by hash of the name */
};

/*
 * Parses the text of leafd.opaque.key: exactly 32 hex digits (either case),
 * len bytes, need not be NUL-terminated. LEAF_OK, or LEAF_EINVAL and a
 * reason (without the key name, and never echoing the text: it is a secret).
 */
leaf_status_t segment_opaque_key_parse(struct segment_opaque_key *out, const char *text, size_t len,
                                       char *reason, size_t cap);

/* LEAF_OK, or LEAF_ENOMEM / LEAF_ERR when OpenSSL cannot set up AES-128 (nothing to close). */
leaf_status_t segment_opaque_init(struct segment_opaque *o, const struct segment_opaque_key *key);

/* Releases the cipher context; o may be zeroed or closed already. */
void segment_opaque_close(struct segment_opaque *o);

/*
 * The per-tag permutation of the n IDs (what leafd issues): tag is len bytes
 * (1..128); in and out may be the same array. Batches share each round's AES
 * call, which makes them several times cheaper per ID than one at a time.
 * LEAF_OK, LEAF_ERANGE when an input is 0 or negative (nothing written),
 * LEAF_ERR if OpenSSL fails or tag is empty.
 */
leaf_status_t segment_opaque_encrypt_tag(struct segment_opaque *o, const char *tag, size_t len,
                                         const int64_t *in, int64_t *out, int n);
leaf_status_t segment_opaque_decrypt_tag(struct segment_opaque *o, const char *tag, size_t len,
                                         const int64_t *in, int64_t *out, int n);

/* One ID back through the tag-less permutation (IDs issued before 0.2); as above. */
leaf_status_t segment_opaque_decrypt(struct segment_opaque *o, int64_t opaque, int64_t *out);

#endif
