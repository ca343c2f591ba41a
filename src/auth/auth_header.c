/*
 * The Authorization header. The base64 decoder is written out here rather
 * than borrowed from libcrypto so that the pure core stays free of crypto
 * headers, and because libcrypto's EVP_DecodeBlock is lenient (it skips
 * spaces and does not check padding), which is not what a gate wants.
 */
#include "auth_header.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

static int header_b64(unsigned char c) {
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Strict base64 of s (n bytes) into out (room n / 4 * 3); the length, or -1. */
static long header_b64_decode(const char *s, size_t n, unsigned char *out) {
    size_t pad = 0, o = 0;
    if (n == 0 || n % 4 != 0) {
        return -1;
    }
    pad = s[n - 1] == '=' ? (s[n - 2] == '=' ? 2 : 1) : 0;
    for (size_t i = 0; i < n; i += 4) {
        size_t data = i + 4 == n ? 4 - pad : 4; /* the last quantum ends in pad '=' */
        uint32_t w = 0;
        for (size_t k = 0; k < 4; k++) {
            int v = k < data ? header_b64((unsigned char)s[i + k]) : 0;
            if (v < 0) {
                return -1; /* a bad character, or '=' before the end */
            }
            w = w << 6 | (uint32_t)v;
        }
        /* The bits after the last whole byte must be zero, so each input
         * has exactly one encoding. */
        if ((pad == 1 && i + 4 == n && (w & 0xFF) != 0) ||
            (pad == 2 && i + 4 == n && (w & 0xFFFF) != 0)) {
            return -1;
        }
        out[o++] = (unsigned char)(w >> 16);
        if (data > 2) {
            out[o++] = (unsigned char)(w >> 8);
        }
        if (data > 3) {
            out[o++] = (unsigned char)w;
        }
    }
    return (long)o;
}

static enum auth_scheme header_invalid(struct auth_header *out, const char *why) {
    out->scheme = AUTH_SCHEME_INVALID;
    out->why = why;
    return out->scheme;
}

static int header_has_ctl(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
            return 1;
        }
    }
    return 0;
}

static enum auth_scheme header_basic(const char *cred, size_t n, struct auth_header *out) {
    long dlen = header_b64_decode(cred, n, (unsigned char *)out->decoded);
    if (dlen < 0) {
        return header_invalid(out, "Basic credentials are not valid base64");
    }
    out->decoded[dlen] = '\0';
    const char *colon = memchr(out->decoded, ':', (size_t)dlen);
    if (colon == NULL) {
        return header_invalid(out, "Basic credentials hold no colon (user:secret)");
    }
    out->user = out->decoded;
    out->user_len = (size_t)(colon - out->decoded);
    out->secret = colon + 1;
    out->secret_len = (size_t)dlen - out->user_len - 1;
    if (out->user_len == 0 || out->secret_len == 0) {
        return header_invalid(out, "Basic credentials have an empty user or secret");
    }
    if (header_has_ctl(out->decoded, (size_t)dlen)) {
        return header_invalid(out, "Basic credentials hold a control character");
    }
    out->scheme = AUTH_SCHEME_BASIC;
    return out->scheme;
}

enum auth_scheme auth_header_parse(const char *value, size_t len, struct auth_header *out) {
    memset(out, 0, offsetof(struct auth_header, decoded));
    out->decoded[0] = '\0';
    if (value == NULL) {
        len = 0;
    }
    while (len > 0 && (value[0] == ' ' || value[0] == '\t')) {
        value++, len--;
    }
    while (len > 0 && (value[len - 1] == ' ' || value[len - 1] == '\t')) {
        len--;
    }
    if (len == 0) {
        out->scheme = AUTH_SCHEME_NONE;
        return out->scheme;
    }
    if (len > AUTH_HEADER_MAX) {
        return header_invalid(out, "the Authorization header is longer than 1 KiB");
    }
    const char *sp = memchr(value, ' ', len);
    size_t slen = sp != NULL ? (size_t)(sp - value) : len;
    size_t rest = slen;
    while (rest < len && value[rest] == ' ') {
        rest++;
    }
    if (rest == len || rest == slen) {
        return header_invalid(out, "the Authorization header has no credentials after the scheme");
    }
    if (slen == 6 && strncasecmp(value, "Bearer", 6) == 0) {
        out->secret = value + rest;
        out->secret_len = len - rest;
        out->scheme = AUTH_SCHEME_BEARER;
        return out->scheme;
    }
    if (slen != 5 || strncasecmp(value, "Basic", 5) != 0) {
        return header_invalid(out, "the Authorization scheme is neither Basic nor Bearer");
    }
    return header_basic(value + rest, len - rest, out);
}

void auth_header_clear(struct auth_header *h) {
    explicit_bzero(h, sizeof(*h));
}
