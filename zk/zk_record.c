#include "zk_record.h"

#include "num.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
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

/* The character sets of the cache's text fields; each is a single line without spaces. */
enum cache_charset { CACHE_IDENTITY, CACHE_NAME, CACHE_HEX, CACHE_LAYOUT };

static int cache_char_ok(enum cache_charset set, unsigned char ch) {
    int alnum = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
    switch (set) {
    case CACHE_IDENTITY: return alnum || ch == '.' || ch == ':' || ch == '-' || ch == '_';
    case CACHE_NAME: return alnum || ch == '.' || ch == '_' || ch == '-';
    case CACHE_HEX: return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
    case CACHE_LAYOUT:
        return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || ch == ':' || ch == ',';
    }
    return 0;
}

/* 1 when s (len bytes) is non-empty, shorter than cap and all of its set. */
static int cache_text_ok(enum cache_charset set, const char *s, size_t len, size_t cap) {
    if (len == 0 || len >= cap) {
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        if (!cache_char_ok(set, (unsigned char)s[i])) {
            return 0;
        }
    }
    return 1;
}

/* Appends "key=value\n" for a known text field; 0 when the value is not of its set. */
static int cache_put_text(char *buf, size_t cap, size_t *off, const char *key, const char *v,
                          size_t vcap, enum cache_charset set) {
    if (v[0] == '\0') {
        return 1;
    }
    size_t len = strnlen(v, vcap);
    if (!cache_text_ok(set, v, len, vcap)) {
        return 0;
    }
    int n = snprintf(buf + *off, *off < cap ? cap - *off : 0, "%s=%s\n", key, v);
    *off += n > 0 ? (size_t)n : 0;
    return n > 0;
}

static int cache_put_i64(char *buf, size_t cap, size_t *off, const char *fmt, int64_t v) {
    int n = snprintf(buf + *off, *off < cap ? cap - *off : 0, fmt, v);
    *off += n > 0 ? (size_t)n : 0;
    return n > 0;
}

size_t zk_record_format_cache_owned(const struct zk_cache_data *c, const struct zk_cache_owner *o,
                                    char *buf, size_t cap) {
    size_t off = 0;
    int ok =
        cache_put_i64(buf, cap, &off,
                      "# leafd worker-ID cache; timestamp is the reserved time (ms): no ID "
                      "above\n# it was issued, and none at or below it will be after a "
                      "restart\nworkerID=%" PRId64 "\n",
                      c->worker_id) &&
        cache_put_i64(buf, cap, &off, "timestamp=%" PRId64 "\n", c->timestamp) &&
        cache_put_text(buf, cap, &off, "identity", o->identity, sizeof(o->identity),
                       CACHE_IDENTITY) &&
        cache_put_text(buf, cap, &off, "cluster", o->cluster, sizeof(o->cluster), CACHE_NAME) &&
        (o->session_id == 0 ||
         cache_put_i64(buf, cap, &off, "session=0x%" PRIx64 "\n", o->session_id)) &&
        cache_put_text(buf, cap, &off, "marker", o->marker, sizeof(o->marker), CACHE_HEX) &&
        (o->generation == 0 ||
         (o->generation > 0 &&
          cache_put_i64(buf, cap, &off, "generation=%" PRId64 "\n", o->generation))) &&
        cache_put_text(buf, cap, &off, "layout", o->layout, sizeof(o->layout), CACHE_LAYOUT) &&
        (o->layout[0] == '\0' ||
         (o->epoch >= 0 && o->unit_ms >= 1 &&
          cache_put_i64(buf, cap, &off, "epoch=%" PRId64 "\n", o->epoch) &&
          cache_put_i64(buf, cap, &off, "time.unit.ms=%" PRId64 "\n", o->unit_ms)));
    return ok && off < cap ? off : 0;
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

/* The cache's keys: a number (min is the least value allowed) or a text field of a set, in
 * struct zk_cache_data (owner 0) or struct zk_cache_owner (owner 1). */
struct cache_key {
    const char *name;
    size_t num_off;  /* offsetof the int64_t, or SIZE_MAX for a text field */
    int64_t min;     /* numbers */
    size_t text_off; /* offsetof the char array */
    size_t text_cap;
    int owner;
    enum cache_charset set;
};

#define CACHE_ID(key, field)                                                                       \
    { key, offsetof(struct zk_cache_data, field), 0, 0, 0, 0, CACHE_HEX }
#define CACHE_NUM(key, field, least)                                                               \
    { key, offsetof(struct zk_cache_owner, field), least, 0, 0, 1, CACHE_HEX }
#define CACHE_TEXT(key, field, cs)                                                                 \
    {                                                                                              \
        key, SIZE_MAX, 0, offsetof(struct zk_cache_owner, field),                                  \
            sizeof(((struct zk_cache_owner *)0)->field), 1, cs                                     \
    }

static const struct cache_key cache_keys[] = {
    CACHE_ID("workerID", worker_id),
    CACHE_ID("timestamp", timestamp),
    CACHE_TEXT("identity", identity, CACHE_IDENTITY),
    CACHE_TEXT("cluster", cluster, CACHE_NAME),
    CACHE_NUM("session", session_id, 1), /* parsed as 0x-hex below */
    CACHE_TEXT("marker", marker, CACHE_HEX),
    CACHE_NUM("generation", generation, 1),
    CACHE_TEXT("layout", layout, CACHE_LAYOUT),
    CACHE_NUM("epoch", epoch, 0),
    CACHE_NUM("time.unit.ms", unit_ms, 1),
};

/* Parses "0x<1..16 hex digits>" into a non-zero session id. */
static leaf_status_t cache_session(const char *v, size_t len, int64_t *out) {
    uint64_t x = 0;
    if (len < 3 || len > 18 || v[0] != '0' || (v[1] != 'x' && v[1] != 'X')) {
        return LEAF_EINVAL;
    }
    for (size_t i = 2; i < len; i++) {
        char ch = v[i];
        int d = ch >= '0' && ch <= '9'   ? ch - '0'
                : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                         : -1;
        if (d < 0) {
            return LEAF_EINVAL;
        }
        x = x << 4 | (uint64_t)d;
    }
    *out = (int64_t)x;
    return x != 0 ? LEAF_OK : LEAF_EINVAL;
}

static leaf_status_t cache_value(const struct cache_key *k, const char *v, size_t len,
                                 struct zk_cache_data *c, struct zk_cache_owner *o) {
    char *base = k->owner ? (char *)o : (char *)c;
    if (k->num_off == SIZE_MAX) {
        char *dst = base + k->text_off;
        if (!cache_text_ok(k->set, v, len, k->text_cap)) {
            return LEAF_EINVAL;
        }
        memcpy(dst, v, len);
        dst[len] = '\0';
        return LEAF_OK;
    }
    int64_t *field = (int64_t *)(void *)(base + k->num_off);
    if (strcmp(k->name, "session") == 0) {
        return cache_session(v, len, field);
    }
    if (num_parse_i64(v, len, field) != LEAF_OK || *field < k->min) {
        *field = k->min > 0 ? 0 : -1;
        return LEAF_EINVAL;
    }
    return LEAF_OK;
}

/* Handles one "key=value" line; LEAF_EINVAL on a bad value of a known key. */
static leaf_status_t cache_line(const char *p, const char *eol, struct zk_cache_data *c,
                                struct zk_cache_owner *o) {
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
    size_t klen = (size_t)(kend - k);
    for (size_t i = 0; i < sizeof(cache_keys) / sizeof(cache_keys[0]); i++) {
        if (strlen(cache_keys[i].name) == klen && memcmp(k, cache_keys[i].name, klen) == 0) {
            return cache_value(&cache_keys[i], v, (size_t)(vend - v), c, o);
        }
    }
    return LEAF_OK;
}

leaf_status_t zk_record_parse_cache_owned(const char *text, size_t len, struct zk_cache_data *c,
                                          struct zk_cache_owner *owner) {
    struct zk_cache_owner scratch, *o = owner != NULL ? owner : &scratch;
    memset(o, 0, sizeof(*o));
    c->worker_id = -1;
    c->timestamp = -1;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (eol == NULL) {
            eol = end;
        }
        if (cache_line(p, eol, c, o) != LEAF_OK) {
            return LEAF_EINVAL;
        }
        p = eol + 1;
    }
    return LEAF_OK;
}
