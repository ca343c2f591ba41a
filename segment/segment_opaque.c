#include "segment_opaque.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <string.h>

/* The 63-bit block: A is the high 31 bits, B the low 32 (FF1's u and v). */
#define OPAQUE_BITS 63
#define OPAQUE_U 31
#define OPAQUE_V 32
#define OPAQUE_BLOCK 16
#define OPAQUE_CHUNK 64      /* IDs per AES call */
#define OPAQUE_VERSION 1     /* the tag-less permutation of before 0.2 (decode only) */
#define OPAQUE_VERSION_TAG 2 /* the per-tag permutation: the tag's tweak in the block */

static int hex_value(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

leaf_status_t segment_opaque_key_parse(struct segment_opaque_key *out, const char *text, size_t len,
                                       char *reason, size_t cap) {
    struct segment_opaque_key k;
    if (len != SEGMENT_OPAQUE_KEY_HEX) {
        snprintf(reason, cap, "must be %d hex digits (128 bits), not %zu characters",
                 SEGMENT_OPAQUE_KEY_HEX, len);
        return LEAF_EINVAL;
    }
    for (size_t i = 0; i < SEGMENT_OPAQUE_KEY_BYTES; i++) {
        int hi = hex_value(text[2 * i]), lo = hex_value(text[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            snprintf(reason, cap, "character %zu is not a hex digit (0-9, a-f)",
                     hi < 0 ? 2 * i + 1 : 2 * i + 2);
            OPENSSL_cleanse(&k, sizeof(k));
            return LEAF_EINVAL;
        }
        k.bytes[i] = (uint8_t)(hi << 4 | lo);
    }
    *out = k;
    OPENSSL_cleanse(&k, sizeof(k));
    return LEAF_OK;
}

static uint64_t width_mask(int bits) {
    return (UINT64_C(1) << bits) - 1;
}

/*
 * The PRF input of round `round` for half value h: a fixed header, the tag's
 * tweak (bytes 4..11; zero and version 1 for the tag-less permutation), then
 * h big-endian. Distinct tweaks make AES_K distinct PRFs, so each tag gets its
 * own Feistel permutation, as a key per tag would (FF1 takes its tweak the
 * same way), without a cipher context per tag.
 */
static void round_block(uint8_t *blk, int round, uint64_t h, const uint8_t *tweak) {
    memset(blk, 0, OPAQUE_BLOCK);
    blk[0] = 'L';
    blk[1] = tweak != NULL ? OPAQUE_VERSION_TAG : OPAQUE_VERSION;
    blk[2] = (uint8_t)OPAQUE_BITS;
    blk[3] = (uint8_t)round;
    if (tweak != NULL) {
        memcpy(blk + 4, tweak, SEGMENT_OPAQUE_TWEAK_BYTES);
    }
    for (int i = 0; i < 4; i++) {
        blk[OPAQUE_BLOCK - 1 - i] = (uint8_t)(h >> (8 * i));
    }
}

static uint64_t block_value(const uint8_t *blk) {
    uint64_t y = 0;
    for (int i = 0; i < 8; i++) {
        y = y << 8 | blk[i];
    }
    return y;
}

/* AES-128 over n blocks in place: one EVP call for the whole chunk. */
static int aes_blocks(struct segment_opaque *o, uint8_t *blks, int n) {
    int outl = 0;
    return EVP_EncryptUpdate(o->aes, blks, &outl, blks, n * OPAQUE_BLOCK) == 1 &&
           outl == n * OPAQUE_BLOCK;
}

/*
 * The Feistel network F (dir > 0) or F^-1 (dir < 0) over n <= OPAQUE_CHUNK
 * values of [0, 2^63), in place. Round i adds the PRF of B (width 32 on even
 * rounds, 31 on odd ones) to A modulo 2^width(A), then swaps; the inverse
 * runs the rounds backwards and subtracts.
 */
static leaf_status_t feistel(struct segment_opaque *o, const uint8_t *tweak, uint64_t *v, int n,
                             int dir) {
    uint64_t a[OPAQUE_CHUNK], b[OPAQUE_CHUNK];
    uint8_t blks[OPAQUE_CHUNK * OPAQUE_BLOCK];
    for (int j = 0; j < n; j++) {
        a[j] = v[j] >> OPAQUE_V;
        b[j] = v[j] & width_mask(OPAQUE_V);
    }
    for (int k = 0; k < SEGMENT_OPAQUE_ROUNDS; k++) {
        int round = dir > 0 ? k : SEGMENT_OPAQUE_ROUNDS - 1 - k;
        uint64_t m = width_mask(round % 2 == 0 ? OPAQUE_U : OPAQUE_V);
        for (int j = 0; j < n; j++) {
            /* forward: the PRF of B; backward: B of the round was moved to A */
            round_block(blks + (size_t)j * OPAQUE_BLOCK, round, dir > 0 ? b[j] : a[j], tweak);
        }
        if (!aes_blocks(o, blks, n)) {
            return LEAF_ERR;
        }
        for (int j = 0; j < n; j++) {
            uint64_t y = block_value(blks + (size_t)j * OPAQUE_BLOCK);
            if (dir > 0) {
                uint64_t c = (a[j] + y) & m;
                a[j] = b[j];
                b[j] = c;
            } else {
                uint64_t prev_b = a[j];
                a[j] = (b[j] - y) & m;
                b[j] = prev_b;
            }
        }
    }
    for (int j = 0; j < n; j++) {
        v[j] = a[j] << OPAQUE_V | b[j];
    }
    return LEAF_OK;
}

/* E or E^-1 over the domain [1, 2^63): the Feistel network, cycle-walked past 0. */
static leaf_status_t permute_many(struct segment_opaque *o, const struct segment_opaque_tag *t,
                                  const int64_t *in, int64_t *out, int n, int dir) {
    for (int i = 0; i < n; i++) {
        if (in[i] < 1) {
            return LEAF_ERANGE;
        }
    }
    const uint8_t *tweak = t != NULL ? t->tweak : NULL;
    int64_t past_zero =
        t != NULL ? (dir > 0 ? t->f_zero : t->f_inv_zero) : (dir > 0 ? o->f_zero : o->f_inv_zero);
    for (int i = 0; i < n; i += OPAQUE_CHUNK) {
        uint64_t v[OPAQUE_CHUNK];
        int c = n - i < OPAQUE_CHUNK ? n - i : OPAQUE_CHUNK;
        for (int j = 0; j < c; j++) {
            v[j] = (uint64_t)in[i + j];
        }
        if (feistel(o, tweak, v, c, dir) != LEAF_OK) {
            return LEAF_ERR;
        }
        for (int j = 0; j < c; j++) {
            out[i + j] = v[j] == 0 ? past_zero : (int64_t)v[j];
        }
    }
    return LEAF_OK;
}

leaf_status_t segment_opaque_init(struct segment_opaque *o, const struct segment_opaque_key *key) {
    memset(o, 0, sizeof(*o));
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) {
        return LEAF_ENOMEM;
    }
    if (EVP_EncryptInit_ex(ctx, EVP_aes_128_ecb(), NULL, key->bytes, NULL) != 1 ||
        EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) {
        EVP_CIPHER_CTX_free(ctx);
        return LEAF_ERR;
    }
    o->aes = ctx;
    memcpy(o->key, key->bytes, sizeof(o->key));
    uint64_t zero[2] = {0, 0};
    if (feistel(o, NULL, &zero[0], 1, 1) != LEAF_OK ||
        feistel(o, NULL, &zero[1], 1, -1) != LEAF_OK) {
        segment_opaque_close(o);
        return LEAF_ERR;
    }
    o->f_zero = (int64_t)zero[0];
    o->f_inv_zero = (int64_t)zero[1];
    return LEAF_OK;
}

void segment_opaque_close(struct segment_opaque *o) {
    EVP_CIPHER_CTX_free(o->aes); /* wipes the key schedule; NULL is fine */
    OPENSSL_cleanse(o, sizeof(*o));
}

/* FNV-1a: which cache slot a tag takes. */
static size_t tag_slot(const char *tag, size_t len) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ (uint8_t)tag[i]) * 16777619u;
    }
    return h % SEGMENT_OPAQUE_TAG_CACHE;
}

/*
 * The tag's permutation: its tweak, HMAC-SHA256(key, "leafd opaque tag\0" tag)
 * cut to 8 bytes, and where its cycle walk goes past 0; cached per tag (the
 * HMAC and the 20 AES blocks are paid once per tag and slot).
 */
static const struct segment_opaque_tag *tag_of(struct segment_opaque *o, const char *tag,
                                               size_t len) {
    if (len == 0 || len > SEGMENT_OPAQUE_TAG_MAX) {
        return NULL;
    }
    struct segment_opaque_tag *t = &o->tags[tag_slot(tag, len)];
    if (t->len == len && memcmp(t->name, tag, len) == 0) {
        return t;
    }
    static const char label[] = "leafd opaque tag"; /* with its NUL: no tag is a prefix */
    uint8_t msg[sizeof(label) + SEGMENT_OPAQUE_TAG_MAX], mac[EVP_MAX_MD_SIZE];
    unsigned int mac_len = 0;
    memcpy(msg, label, sizeof(label));
    memcpy(msg + sizeof(label), tag, len);
    if (HMAC(EVP_sha256(), o->key, (int)sizeof(o->key), msg, sizeof(label) + len, mac, &mac_len) ==
            NULL ||
        mac_len < SEGMENT_OPAQUE_TWEAK_BYTES) {
        return NULL;
    }
    t->len = 0; /* not valid until filled */
    memcpy(t->tweak, mac, SEGMENT_OPAQUE_TWEAK_BYTES);
    OPENSSL_cleanse(mac, sizeof(mac));
    uint64_t zero[2] = {0, 0};
    if (feistel(o, t->tweak, &zero[0], 1, 1) != LEAF_OK ||
        feistel(o, t->tweak, &zero[1], 1, -1) != LEAF_OK) {
        return NULL;
    }
    t->f_zero = (int64_t)zero[0];
    t->f_inv_zero = (int64_t)zero[1];
    memcpy(t->name, tag, len);
    t->len = len;
    return t;
}

leaf_status_t segment_opaque_encrypt_tag(struct segment_opaque *o, const char *tag, size_t len,
                                         const int64_t *in, int64_t *out, int n) {
    const struct segment_opaque_tag *t = tag_of(o, tag, len);
    return t == NULL ? LEAF_ERR : permute_many(o, t, in, out, n, 1);
}

leaf_status_t segment_opaque_decrypt_tag(struct segment_opaque *o, const char *tag, size_t len,
                                         const int64_t *in, int64_t *out, int n) {
    const struct segment_opaque_tag *t = tag_of(o, tag, len);
    return t == NULL ? LEAF_ERR : permute_many(o, t, in, out, n, -1);
}

leaf_status_t segment_opaque_decrypt(struct segment_opaque *o, int64_t opaque, int64_t *out) {
    return permute_many(o, NULL, &opaque, out, 1, -1);
}
