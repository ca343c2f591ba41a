/*
 * libFuzzer harness for the pure auth core (src/auth, linked alone as
 * leaf_auth_core): the user-record parser (what ZooKeeper hands over) and the
 * HTTP Authorization header decoder. The first byte picks which, the rest is
 * the input.
 *
 * Checked, besides crashes and sanitizer reports:
 *   record  a refusal is LEAF_EINVAL with a non-empty, terminated message,
 *           also into a tiny buffer; an accepted record has a valid name,
 *           at most 256 grants, each with known rights, and survives
 *           serialise -> parse -> serialise unchanged; a table built from it
 *           finds it by name.
 *   header  Basic: user and secret non-empty, inside the decoded buffer, the
 *           user without a colon, no control character, and base64 of
 *           "user:secret" is exactly the credentials given (one encoding per
 *           input); Bearer: a non-empty span inside the input; nothing over
 *           1 KiB is accepted; an invalid header says why.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth_header.h"
#include "auth_table.h"
#include "auth_user.h"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Standard padded base64 of s (n bytes) into out; returns its length. */
static size_t encode(const unsigned char *s, size_t n, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t w = (uint32_t)s[i] << 16;
        w |= i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0;
        w |= i + 2 < n ? s[i + 2] : 0;
        out[o++] = b64[w >> 18 & 63];
        out[o++] = b64[w >> 12 & 63];
        out[o++] = i + 1 < n ? b64[w >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? b64[w & 63] : '=';
    }
    return o;
}

static void fuzz_record_accepted(const struct auth_user *u, const char *json, size_t len) {
    if (!auth_user_name_valid(u->name, strlen(u->name)) || u->ngrants > AUTH_GRANTS_MAX ||
        u->created_ms < 0) {
        __builtin_trap();
    }
    for (size_t i = 0; i < u->ngrants; i++) {
        unsigned r = u->grants[i].rights;
        if (r == 0 || (r & ~(unsigned)AUTH_RIGHT_ALL) != 0) {
            __builtin_trap();
        }
    }
    struct sbuf b = SBUF_INIT, b2 = SBUF_INIT;
    struct auth_user back;
    char msg[256];
    auth_user_format(u, &b);
    if (b.failed || auth_user_parse(b.data, b.len, u->name, &back, msg, sizeof(msg)) != LEAF_OK) {
        __builtin_trap();
    }
    auth_user_format(&back, &b2);
    if (b2.failed || b2.len != b.len || memcmp(b.data, b2.data, b.len) != 0) {
        __builtin_trap();
    }
    auth_user_free(&back);
    sbuf_free(&b);
    sbuf_free(&b2);
    struct auth_record rec = {NULL, json, len};
    struct auth_table *t = NULL;
    if (auth_table_build(&rec, 1, NULL, NULL, &t) != LEAF_OK ||
        auth_table_find(t, u->name, strlen(u->name)) == NULL) {
        __builtin_trap();
    }
    auth_table_free(t);
}

static void fuzz_record(const char *json, size_t len, size_t small) {
    struct auth_user u;
    char msg[256];
    leaf_status_t rc = auth_user_parse(json, len, NULL, &u, msg, sizeof(msg));
    if (rc == LEAF_OK) {
        fuzz_record_accepted(&u, json, len);
        auth_user_free(&u);
        return;
    }
    if (rc != LEAF_EINVAL || msg[0] == '\0' || memchr(msg, '\0', sizeof(msg)) == NULL ||
        u.grants != NULL) {
        __builtin_trap();
    }
    char *tiny = malloc(small);
    if (auth_user_parse(json, len, NULL, &u, tiny, small) != rc ||
        memchr(tiny, '\0', small) == NULL) {
        __builtin_trap();
    }
    free(tiny);
}

static int inside(const char *p, size_t n, const char *lo, size_t lo_len) {
    return p >= lo && n <= lo_len && (size_t)(p - lo) <= lo_len - n;
}

static void fuzz_basic(const struct auth_header *h, const char *value, size_t len) {
    if (h->user_len == 0 || h->secret_len == 0 || h->user + h->user_len + 1 != h->secret ||
        !inside(h->user, h->user_len + 1 + h->secret_len, h->decoded, AUTH_HEADER_DECODED_MAX) ||
        memchr(h->user, ':', h->user_len) != NULL) {
        __builtin_trap();
    }
    size_t n = h->user_len + 1 + h->secret_len;
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)h->user[i] < 0x20 || h->user[i] == 0x7f) {
            __builtin_trap();
        }
    }
    /* The credentials are the last token of the (trimmed) value. */
    while (len > 0 && (value[len - 1] == ' ' || value[len - 1] == '\t')) {
        len--;
    }
    char enc[AUTH_HEADER_MAX + 4];
    size_t elen = encode((const unsigned char *)h->user, n, enc);
    if (elen >= len || memcmp(value + len - elen, enc, elen) != 0 || value[len - elen - 1] != ' ') {
        __builtin_trap();
    }
}

static void fuzz_header(const char *value, size_t len) {
    struct auth_header h;
    enum auth_scheme s = auth_header_parse(value, len, &h);
    if (s != h.scheme) {
        __builtin_trap();
    }
    switch (s) {
    case AUTH_SCHEME_NONE:
        for (size_t i = 0; i < len; i++) {
            if (value[i] != ' ' && value[i] != '\t') {
                __builtin_trap();
            }
        }
        break;
    case AUTH_SCHEME_INVALID:
        if (h.why == NULL || h.why[0] == '\0') {
            __builtin_trap();
        }
        break;
    case AUTH_SCHEME_BEARER:
        if (h.secret_len == 0 || !inside(h.secret, h.secret_len, value, len) ||
            h.secret_len > AUTH_HEADER_MAX) {
            __builtin_trap();
        }
        break;
    case AUTH_SCHEME_BASIC: fuzz_basic(&h, value, len); break;
    default: __builtin_trap();
    }
    auth_header_clear(&h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) {
        return 0;
    }
    const char *in = (const char *)data + 1;
    size_t len = size - 1;
    if (data[0] & 1) {
        fuzz_header(in, len);
    } else {
        fuzz_record(in, len, 1 + data[0] % 16);
    }
    return 0;
}
