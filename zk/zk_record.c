#include "zk_record.h"

#include "num.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Integers read from JSON are taken in [0, RECORD_JSON_MAX), numbers and
 * strings alike, so that whatever is read is written back the same. */
#define RECORD_JSON_MAX 9000000000000000LL

/* Escapes '"', '\\' and control bytes, so any ip the reader returned is
 * written back as valid JSON that reads the same. out: 6 * sizeof(ip) bytes. */
static void record_escape(const char *s, size_t cap, char *out) {
    for (size_t i = 0; i < cap && s[i] != '\0'; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') {
            *out++ = '\\';
            *out++ = (char)ch;
        } else if (ch < 0x20) {
            out += snprintf(out, 7, "\\u%04x", ch); /* 6 bytes and the NUL */
        } else {
            *out++ = (char)ch;
        }
    }
    *out = '\0';
}

size_t zk_record_format_node(const struct zk_node_data *d, char *buf, size_t cap) {
    char ip[6 * sizeof(d->ip)];
    record_escape(d->ip, sizeof(d->ip) - 1, ip);
    int n = snprintf(buf, cap, "{\"ip\":\"%s\",\"port\":\"%d\",\"timestamp\":%" PRId64 "}", ip,
                     d->port, d->timestamp);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* Strict decimal int64 (optional leading '-'); 0 on success. */
static int64_t json_i64(const cJSON *item) {
    int64_t v;
    if (cJSON_IsString(item) &&
        num_parse_i64(item->valuestring, strlen(item->valuestring), &v) == LEAF_OK) {
        return v >= 0 && v < RECORD_JSON_MAX ? v : -1;
    }
    if (cJSON_IsNumber(item) && item->valuedouble >= 0 &&
        item->valuedouble < (double)RECORD_JSON_MAX) {
        return (int64_t)item->valuedouble;
    }
    return -1;
}

leaf_status_t zk_record_parse_node(const char *buf, size_t len, struct zk_node_data *d) {
    memset(d, 0, sizeof(*d));
    d->timestamp = -1;
    cJSON *root = cJSON_ParseWithLength(buf, len);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return LEAF_EINVAL;
    }
    const cJSON *ip = cJSON_GetObjectItemCaseSensitive(root, "ip");
    if (cJSON_IsString(ip)) {
        snprintf(d->ip, sizeof(d->ip), "%s", ip->valuestring);
    }
    int64_t port = json_i64(cJSON_GetObjectItemCaseSensitive(root, "port"));
    d->port = port > 0 && port <= 65535 ? (int)port : 0;
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(root, "timestamp");
    /* A JSON number holds ms timestamps exactly (well below 2^53). */
    d->timestamp = json_i64(ts);
    cJSON_Delete(root);
    return LEAF_OK;
}

size_t zk_record_format_cache(const struct zk_cache_data *c, char *buf, size_t cap) {
    int n = snprintf(buf, cap,
                     "# leafd worker-ID cache; timestamp is the reserved time (ms): no ID above\n"
                     "# it was issued, and none at or below it will be after a restart\n"
                     "workerID=%" PRId64 "\ntimestamp=%" PRId64 "\n",
                     c->worker_id, c->timestamp);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

static const char *trim(const char *s, const char *end, const char **out_end) {
    while (s < end && (*s == ' ' || *s == '\t')) {
        s++;
    }
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r')) {
        end--;
    }
    *out_end = end;
    return s;
}

/* Handles one "key=value" line; LEAF_EINVAL on a bad value of a known key. */
static leaf_status_t cache_line(const char *p, const char *eol, struct zk_cache_data *c) {
    const char *end;
    p = trim(p, eol, &end);
    if (p == end || *p == '#' || *p == '!') {
        return LEAF_OK;
    }
    const char *eq = memchr(p, '=', (size_t)(end - p));
    if (eq == NULL) {
        eq = memchr(p, ':', (size_t)(end - p));
    }
    if (eq == NULL) {
        return LEAF_OK;
    }
    const char *kend, *vend;
    const char *k = trim(p, eq, &kend), *v = trim(eq + 1, end, &vend);
    int64_t *field = NULL;
    if ((size_t)(kend - k) == 8 && memcmp(k, "workerID", 8) == 0) {
        field = &c->worker_id;
    } else if ((size_t)(kend - k) == 9 && memcmp(k, "timestamp", 9) == 0) {
        field = &c->timestamp;
    } else {
        return LEAF_OK;
    }
    if (num_parse_i64(v, (size_t)(vend - v), field) != LEAF_OK || *field < 0) {
        *field = -1;
        return LEAF_EINVAL;
    }
    return LEAF_OK;
}

leaf_status_t zk_record_parse_cache(const char *text, size_t len, struct zk_cache_data *c) {
    c->worker_id = -1;
    c->timestamp = -1;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (eol == NULL) {
            eol = end;
        }
        if (cache_line(p, eol, c) != LEAF_OK) {
            return LEAF_EINVAL;
        }
        p = eol + 1;
    }
    return LEAF_OK;
}
