#include "sequence_floor.h"

#include <stdio.h>
#include <string.h>

#include "num.h"
#include "validate.h"

#define FLOOR_HEADER "# leafd sequence floors 1 cluster="

size_t sequence_floor_header(char *buf, size_t cap, const char *cluster) {
    int n = snprintf(buf, cap, "%s%s\n", FLOOR_HEADER, cluster);
    return (n < 0 || (size_t)n >= cap) ? 0 : (size_t)n;
}

int sequence_floor_header_ok(const char *line, size_t len, const char *cluster) {
    size_t h = strlen(FLOOR_HEADER), c = strlen(cluster);
    return len == h + c && memcmp(line, FLOOR_HEADER, h) == 0 && memcmp(line + h, cluster, c) == 0;
}

size_t sequence_floor_format(char *buf, size_t cap, const char *name, size_t nlen, int64_t floor) {
    char digits[24];
    if (floor < 0 || nlen > VALIDATE_TAG_MAX || !validate_stored_sequence_name(name, nlen)) {
        return 0;
    }
    size_t d = num_format_i64(digits, floor);
    int n = snprintf(buf, cap, "%.*s %.*s\n", (int)nlen, name, (int)d, digits);
    return (n < 0 || (size_t)n >= cap) ? 0 : (size_t)n;
}

leaf_status_t sequence_floor_parse(const char *line, size_t len, char *name, size_t *nlen,
                                   int64_t *floor) {
    const char *sp = memchr(line, ' ', len);
    if (sp == NULL) {
        return LEAF_EINVAL;
    }
    size_t n = (size_t)(sp - line), d = len - n - 1;
    int64_t v;
    if (n == 0 || n > VALIDATE_TAG_MAX || !validate_stored_sequence_name(line, n) || d == 0 ||
        d > 19 || num_parse_i64(sp + 1, d, &v) != LEAF_OK || v < 0) {
        return LEAF_EINVAL;
    }
    memcpy(name, line, n);
    name[n] = '\0';
    *nlen = n;
    *floor = v;
    return LEAF_OK;
}

int sequence_floor_should_compact(uint64_t lines, size_t live) {
    return lines > 2 * (uint64_t)live + SEQUENCE_FLOOR_SLACK;
}
