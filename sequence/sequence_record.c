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

/* The end of a non-negative JSON integer's digits that start at buf[i], or 0. */
static size_t record_digits(const char *buf, size_t len, size_t i) {
    size_t start = i;
    while (i < len && record_is_digit(buf[i])) {
        i++;
    }
    /* JSON forbids leading zeros; "-", "+", "." and "e" stop the digits and fail later. */
    if (i == start || (buf[start] == '0' && i - start > 1)) {
        return 0;
    }
    return i;
}

/* `{ "key" : ` with whitespace between; the index after the colon's whitespace, or 0. */
static size_t record_open(const char *buf, size_t len, const char *key) {
    size_t i = record_skip_ws(buf, len, 0);
    if ((i = record_expect(buf, len, i, "{")) == 0) {
        return 0;
    }
    i = record_skip_ws(buf, len, i);
    if ((i = record_expect_key(buf, len, i, key)) == 0) {
        return 0;
    }
    i = record_skip_ws(buf, len, i);
    if ((i = record_expect(buf, len, i, ":")) == 0) {
        return 0;
    }
    return record_skip_ws(buf, len, i);
}

/* `}` and nothing but whitespace after it, from buf[i]. */
static int record_close(const char *buf, size_t len, size_t i) {
    size_t end = record_skip_ws(buf, len, i);
    return (end = record_expect(buf, len, end, "}")) != 0 && record_skip_ws(buf, len, end) == len;
}

leaf_status_t sequence_record_parse_int(const char *buf, size_t len, const char *key, int64_t *v) {
    size_t start = record_open(buf, len, key), end;
    if (start == 0 || (end = record_digits(buf, len, start)) == 0 || !record_close(buf, len, end)) {
        return LEAF_EINVAL;
    }
    int64_t parsed;
    leaf_status_t rc = num_parse_i64(buf + start, end - start, &parsed);
    if (rc == LEAF_OK) {
        *v = parsed;
    }
    return rc;
}

leaf_status_t sequence_record_parse_max(const char *buf, size_t len, int64_t *max) {
    return sequence_record_parse_int(buf, len, "max", max);
}

static int record_is_name_char(char ch) {
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || record_is_digit(ch) ||
           ch == '.' || ch == '_' || ch == '-';
}

/* `, "moved" : "name" ` from buf[i]: the index after the closing quote, or 0; the name into
 * moved. */
static size_t record_moved(const char *buf, size_t len, size_t i, char moved[SEQUENCE_MOVED_MAX]) {
    i = record_skip_ws(buf, len, i);
    if ((i = record_expect(buf, len, i, ",")) == 0) {
        return 0;
    }
    i = record_skip_ws(buf, len, i);
    if ((i = record_expect_key(buf, len, i, "moved")) == 0) {
        return 0;
    }
    i = record_skip_ws(buf, len, i);
    if ((i = record_expect(buf, len, i, ":")) == 0) {
        return 0;
    }
    i = record_skip_ws(buf, len, i);
    if ((i = record_expect(buf, len, i, "\"")) == 0) {
        return 0;
    }
    size_t start = i;
    while (i < len && record_is_name_char(buf[i])) {
        i++;
    }
    if (i == start || i - start >= SEQUENCE_MOVED_MAX || record_expect(buf, len, i, "\"") == 0) {
        return 0;
    }
    memcpy(moved, buf + start, i - start);
    moved[i - start] = '\0';
    return i + 1;
}

size_t sequence_record_format_moved(char *buf, size_t cap, int64_t max, const char *region) {
    char digits[24];
    size_t rlen = strlen(region);
    if (max < 0 || rlen == 0 || rlen >= SEQUENCE_MOVED_MAX) {
        return 0;
    }
    for (size_t i = 0; i < rlen; i++) {
        if (!record_is_name_char(region[i])) {
            return 0;
        }
    }
    size_t n = num_format_i64(digits, max);
    int len = snprintf(buf, cap, "{\"max\":%.*s,\"moved\":\"%s\"}", (int)n, digits, region);
    return (len < 0 || (size_t)len >= cap) ? 0 : (size_t)len;
}

leaf_status_t sequence_record_parse_seq(const char *buf, size_t len, int64_t *max,
                                        char moved[SEQUENCE_MOVED_MAX]) {
    char name[SEQUENCE_MOVED_MAX] = "";
    size_t start = record_open(buf, len, "max"), end;
    if (start == 0 || (end = record_digits(buf, len, start)) == 0) {
        return LEAF_EINVAL;
    }
    size_t after = end;
    if (!record_close(buf, len, after) &&
        ((after = record_moved(buf, len, end, name)) == 0 || !record_close(buf, len, after))) {
        return LEAF_EINVAL;
    }
    int64_t parsed;
    leaf_status_t rc = num_parse_i64(buf + start, end - start, &parsed);
    if (rc == LEAF_OK) {
        *max = parsed;
        memcpy(moved, name, sizeof(name));
    }
    return rc;
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
