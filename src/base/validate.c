/*
 * Request-input validation. The tag alphabet is what Leaf's tags use in
 * practice and what is safe in a URL path, a log line and a metric label
 * without escaping, so a tag never needs quoting anywhere downstream.
 */
#include "validate.h"

#include <string.h>

#include "num.h"

static int validate_tag_char(unsigned char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '_' || ch == ':' || ch == '-';
}

int validate_tag(const char *s, size_t len) {
    size_t i;

    if (s == NULL || len == 0 || len > VALIDATE_TAG_MAX) {
        return 0;
    }
    for (i = 0; i < len; i++) {
        if (!validate_tag_char((unsigned char)s[i])) {
            return 0;
        }
    }
    return 1;
}

int validate_sequence_name(const char *s, size_t len) {
    return validate_tag(s, len) && !(len <= 2 && memcmp(s, "..", len) == 0);
}

int validate_stored_sequence_name(const char *s, size_t len) {
    if (len > 1 && s[0] == VALIDATE_NUMBERING_MARK) {
        s++;
        len--;
    }
    return validate_sequence_name(s, len);
}

/* Ten digits bound the work; leading zeros are allowed. */
#define VALIDATE_COUNT_DIGITS 10

leaf_status_t validate_count(const char *s, size_t len, int *out) {
    int64_t v;
    if (s == NULL || len == 0 || len > VALIDATE_COUNT_DIGITS || s[0] == '-' ||
        num_parse_range(s, len, 1, VALIDATE_COUNT_MAX, &v) != LEAF_OK) {
        return LEAF_EINVAL;
    }
    *out = (int)v;
    return LEAF_OK;
}

leaf_status_t validate_ipv4_port(const char *s, size_t len, char *ip, int *port) {
    size_t i = 0;
    for (int part = 0; part < 4; part++) {
        int v = 0, digits = 0;
        while (i < len && s[i] >= '0' && s[i] <= '9' && digits < 4) {
            v = v * 10 + (s[i++] - '0');
            digits++;
        }
        if (digits == 0 || digits > 3 || v > 255 || i >= len || s[i] != (part < 3 ? '.' : ':')) {
            return LEAF_EINVAL;
        }
        i++;
    }
    size_t ip_len = i - 1;
    int p = 0, digits = 0;
    for (; i < len; i++, digits++) {
        if (s[i] < '0' || s[i] > '9' || digits >= 5) {
            return LEAF_EINVAL;
        }
        p = p * 10 + (s[i] - '0');
    }
    if (digits == 0 || p < 1 || p > 65535) {
        return LEAF_EINVAL;
    }
    memcpy(ip, s, ip_len);
    ip[ip_len] = '\0';
    *port = p;
    return LEAF_OK;
}
