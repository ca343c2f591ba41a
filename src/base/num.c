#include "num.h"

#include <string.h>

static int num_is_digit(char ch) {
    return ch >= '0' && ch <= '9';
}

leaf_status_t num_parse_i64(const char *s, size_t n, int64_t *out) {
    const uint64_t limit = (uint64_t)INT64_MAX + 1; /* magnitude of INT64_MIN */
    size_t i = (n > 0 && s[0] == '-') ? 1 : 0, first = i;
    uint64_t acc = 0;
    int neg = (first == 1);

    if (s == NULL || i == n) {
        return LEAF_EINVAL;
    }
    for (; i < n; i++) {
        if (!num_is_digit(s[i])) {
            return LEAF_EINVAL;
        }
    }
    for (i = first; i < n; i++) {
        if (acc > limit / 10) {
            acc = limit + 1; /* too big either way; stop before wrapping */
            break;
        }
        acc = acc * 10 + (uint64_t)(s[i] - '0');
    }
    if (acc > limit || (!neg && acc == limit)) {
        return LEAF_ERANGE;
    }
    *out = (neg && acc > 0) ? -(int64_t)(acc - 1) - 1 : (neg ? 0 : (int64_t)acc);
    return LEAF_OK;
}

leaf_status_t num_parse_range(const char *s, size_t n, int64_t min, int64_t max, int64_t *out) {
    int64_t v;
    leaf_status_t rc = num_parse_i64(s, n, &v);
    if (rc != LEAF_OK) {
        return rc;
    }
    if (v < min || v > max) {
        return LEAF_ERANGE;
    }
    *out = v;
    return LEAF_OK;
}

/* Two decimal digits at a time: IDs are formatted on every request. */
static const char num_digits[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

size_t num_format_i64(char *dst, int64_t v) {
    char tmp[24];
    size_t n = sizeof(tmp), len = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    while (u >= 100) {
        unsigned d = (unsigned)(u % 100) * 2;
        u /= 100;
        tmp[--n] = num_digits[d + 1];
        tmp[--n] = num_digits[d];
    }
    if (u >= 10) {
        tmp[--n] = num_digits[u * 2 + 1];
        tmp[--n] = num_digits[u * 2];
    } else {
        tmp[--n] = (char)('0' + u);
    }
    if (v < 0) {
        dst[len++] = '-';
    }
    memcpy(dst + len, tmp + n, sizeof(tmp) - n);
    return len + sizeof(tmp) - n;
}
