#include "sequence_record.h"

#include <stdio.h>
#include <string.h>

#include "num.h"

static int record_is_ws(char ch) {
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

static int record_is_digit(char ch) {
    return ch >= '0' && ch <= '9';
}

static size_t record_skip_ws(const char *buf, size_t len, size_t i) {
    while (i < len && record_is_ws(buf[i])) {
        i++;
    }
    return i;
}

/* Matches the literal lit at buf[i]; returns the index after it, or 0 when absent. */
static size_t record_expect(const char *buf, size_t len, size_t i, const char *lit) {
    size_t n = strlen(lit);
    if (len - i < n || memcmp(buf + i, lit, n) != 0) {
        return 0;
    }
    return i + n;
}

size_t sequence_record_format_int(char *buf, size_t cap, const char *key, int64_t v) {
    char digits[24];
    if (v < 0) {
        return 0;
    }
    size_t n = num_format_i64(digits, v);
    int len = snprintf(buf, cap, "{\"%s\":%.*s}", key, (int)n, digits);
    return (len < 0 || (size_t)len >= cap) ? 0 : (size_t)len;
}

size_t sequence_record_format_max(char *buf, size_t cap, int64_t max) {
    return sequence_record_format_int(buf, cap, "max", max);
}

/* Matches "key" (quoted) at buf[i]; returns the index after it, or 0 when absent. */
static size_t record_expect_key(const char *buf, size_t len, size_t i, const char *key) {
    if ((i = record_expect(buf, len, i, "\"")) == 0 || (i = record_expect(buf, len, i, key)) == 0) {
        return 0;
    }
    return record_expect(buf, len, i, "\"");
}

leaf_status_t sequence_record_parse_int(const char *buf, size_t len, const char *key, int64_t *v) {
    size_t i = record_skip_ws(buf, len, 0);
    if ((i = record_expect(buf, len, i, "{")) == 0) {
        return LEAF_EINVAL;
    }
    i = record_skip_ws(buf, len, i);
    if ((i = record_expect_key(buf, len, i, key)) == 0) {
        return LEAF_EINVAL;
    }
    i = record_skip_ws(buf, len, i);
    if ((i = record_expect(buf, len, i, ":")) == 0) {
        return LEAF_EINVAL;
    }
    i = record_skip_ws(buf, len, i);
    size_t start = i;
    while (i < len && record_is_digit(buf[i])) {
        i++;
    }
    /* JSON forbids leading zeros; "-", "+", "." and "e" stop the digits and fail below. */
    if (i == start || (buf[start] == '0' && i - start > 1)) {
        return LEAF_EINVAL;
    }
    size_t end = record_skip_ws(buf, len, i);
    if ((end = record_expect(buf, len, end, "}")) == 0 || record_skip_ws(buf, len, end) != len) {
        return LEAF_EINVAL;
    }
    int64_t parsed;
    leaf_status_t rc = num_parse_i64(buf + start, i - start, &parsed);
    if (rc != LEAF_OK) {
        return rc;
    }
    *v = parsed;
    return LEAF_OK;
}

leaf_status_t sequence_record_parse_max(const char *buf, size_t len, int64_t *max) {
    return sequence_record_parse_int(buf, len, "max", max);
}

/* host:port, printable without spaces, port 1..65535, shorter than SEQUENCE_ADDR_MAX. */
static int record_addr_valid(const char *s, size_t n) {
    if (n == 0 || n >= SEQUENCE_ADDR_MAX) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] <= ' ' || s[i] > '~') {
            return 0;
        }
    }
    const char *colon = NULL;
    for (size_t i = n; i > 0; i--) {
        if (s[i - 1] == ':') {
            colon = s + i - 1;
            break;
        }
    }
    if (colon == NULL || colon == s) {
        return 0;
    }
    int64_t port;
    size_t plen = (size_t)(s + n - colon - 1);
    return plen > 0 && plen <= 5 && num_parse_range(colon + 1, plen, 1, 65535, &port) == LEAF_OK;
}

size_t sequence_record_format_node(char *buf, size_t cap, const char *http, const char *resp) {
    if (http == NULL || !record_addr_valid(http, strlen(http))) {
        return 0;
    }
    int has_resp = resp != NULL && resp[0] != '\0';
    if (has_resp && !record_addr_valid(resp, strlen(resp))) {
        return 0;
    }
    int len = has_resp ? snprintf(buf, cap, "http=%s resp=%s", http, resp)
                       : snprintf(buf, cap, "http=%s", http);
    return (len < 0 || (size_t)len >= cap) ? 0 : (size_t)len;
}

/* Stores one key=value field of the node data; unknown keys are skipped. */
static leaf_status_t record_node_field(const char *f, size_t n, struct sequence_node_addr *a) {
    const char *eq = memchr(f, '=', n);
    if (eq == NULL) {
        return LEAF_EINVAL;
    }
    size_t klen = (size_t)(eq - f), vlen = n - klen - 1;
    char *dst = NULL;
    if (klen == 4 && memcmp(f, "http", 4) == 0) {
        dst = a->http;
    } else if (klen == 4 && memcmp(f, "resp", 4) == 0) {
        dst = a->resp;
    } else {
        return LEAF_OK;
    }
    if (dst[0] != '\0' || !record_addr_valid(eq + 1, vlen)) {
        return LEAF_EINVAL;
    }
    memcpy(dst, eq + 1, vlen);
    dst[vlen] = '\0';
    return LEAF_OK;
}

leaf_status_t sequence_record_parse_node(const char *buf, size_t len,
                                         struct sequence_node_addr *a) {
    struct sequence_node_addr tmp = {{0}, {0}};
    size_t i = 0;
    while (i < len) {
        const char *sp = memchr(buf + i, ' ', len - i);
        size_t end = sp ? (size_t)(sp - buf) : len;
        if (end == i || (sp != NULL && end + 1 == len)) {
            return LEAF_EINVAL; /* empty field: double or trailing space */
        }
        if (record_node_field(buf + i, end - i, &tmp) != LEAF_OK) {
            return LEAF_EINVAL;
        }
        i = end + 1;
    }
    if (tmp.http[0] == '\0') {
        return LEAF_EINVAL;
    }
    *a = tmp;
    return LEAF_OK;
}
