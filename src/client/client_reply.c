/* Reading leafd's answers (client_reply.h). */
#include "client_reply.h"

#include <string.h>

/* A decimal ID of 1 to 19 digits, at most INT64_MAX. */
static int parse_id(const char *s, size_t len, int64_t *out) {
    uint64_t v = 0;
    if (len == 0 || len > 19) {
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return -1;
        }
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > (uint64_t)INT64_MAX) {
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

/* The string value of "name":"..." in body, as a pointer and length; -1 when absent. */
static int json_string(const char *body, size_t len, const char *name, const char **v,
                       size_t *vlen) {
    size_t nlen = strlen(name);
    for (size_t i = 0; i + nlen + 3 <= len; i++) {
        if (body[i] != '"' || memcmp(body + i + 1, name, nlen) != 0 || body[i + 1 + nlen] != '"') {
            continue;
        }
        size_t p = i + nlen + 2;
        while (p < len && (body[p] == ' ' || body[p] == ':')) {
            p++;
        }
        if (p >= len || body[p] != '"') {
            return -1;
        }
        const char *s = body + p + 1, *e = memchr(s, '"', len - p - 1);
        if (e == NULL) {
            return -1;
        }
        *v = s;
        *vlen = (size_t)(e - s);
        return 0;
    }
    return -1;
}

/* body, blanks at its ends aside, is one JSON object: "{...}". */
static int json_object(const char *body, size_t len) {
    size_t i = 0;
    while (i < len && (body[i] == ' ' || body[i] == '\r' || body[i] == '\n')) {
        i++;
    }
    while (len > i && (body[len - 1] == ' ' || body[len - 1] == '\r' || body[len - 1] == '\n')) {
        len--;
    }
    return len - i >= 2 && body[i] == '{' && body[len - 1] == '}' ? 0 : -1;
}

int client_reply_range(const char *body, size_t len, int64_t want, int64_t *start, int64_t *end) {
    const char *v;
    size_t vlen;
    if (json_object(body, len) != 0) {
        return -1;
    }
    if (json_string(body, len, "start", &v, &vlen) != 0 || parse_id(v, vlen, start) != 0) {
        return -1;
    }
    if (json_string(body, len, "end", &v, &vlen) != 0 || parse_id(v, vlen, end) != 0) {
        return -1;
    }
    /* IDs are positive; a range is never larger than asked (end - start cannot wrap: both are
     * at most INT64_MAX and end >= start). */
    return *start >= 1 && *end >= *start && *end - *start < want ? 0 : -1;
}

int64_t client_reply_list(const char *body, size_t len, int64_t *ids, int64_t want) {
    int64_t n = 0;
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(body + i, '\n', len - i);
        size_t e = nl ? (size_t)(nl - body) : len;
        size_t le = e > i && body[e - 1] == '\r' ? e - 1 : e;
        /* One ID a line, no empty line, at most want, each above the one before (a batch of
         * one node ascends): a cut answer or another's bytes are refused, never IDs. */
        if (n == want || parse_id(body + i, le - i, &ids[n]) != 0 || ids[n] < 1 ||
            (n > 0 && ids[n] <= ids[n - 1])) {
            return -1;
        }
        n++;
        i = e + 1;
    }
    return n > 0 ? n : -1;
}

void client_reply_code(const char *body, size_t len, char *out, size_t outlen) {
    const char *v;
    size_t vlen;
    out[0] = '\0';
    if (json_string(body, len, "code", &v, &vlen) != 0 || vlen >= outlen) {
        return;
    }
    memcpy(out, v, vlen);
    out[vlen] = '\0';
}
