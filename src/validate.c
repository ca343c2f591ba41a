/*
 * Request-input validation. The tag alphabet is what Leaf's tags use in
 * practice and what is safe in a URL path, a log line and a metric label
 * without escaping, so a tag never needs quoting anywhere downstream.
 */
#include "src/validate.h"

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

/* Ten digits bound the work and cannot overflow the accumulator below. */
#define VALIDATE_COUNT_DIGITS 10

leaf_status_t validate_count(const char *s, size_t len, int *out) {
    long long v = 0;
    size_t i;

    if (s == NULL || len == 0 || len > VALIDATE_COUNT_DIGITS) {
        return LEAF_EINVAL;
    }
    for (i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return LEAF_EINVAL;
        }
        v = v * 10 + (s[i] - '0');
    }
    if (v < 1 || v > VALIDATE_COUNT_MAX) {
        return LEAF_EINVAL;
    }
    *out = (int)v;
    return LEAF_OK;
}
