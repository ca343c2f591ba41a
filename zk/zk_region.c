/* Region claims, the pure part: zk_region.h. */
#include "zk_region.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "num.h"

leaf_status_t zk_region_dir(char *buf, size_t cap, const char *leaf_name) {
    int n = snprintf(buf, cap, ZK_REGION_ROOT "/%s", leaf_name);
    return n > 0 && (size_t)n < cap ? LEAF_OK : LEAF_EINVAL;
}

leaf_status_t zk_region_path(char *buf, size_t cap, const char *leaf_name, int64_t id) {
    int n = snprintf(buf, cap, ZK_REGION_ROOT "/%s/%" PRId64, leaf_name, id);
    return n > 0 && (size_t)n < cap ? LEAF_OK : LEAF_EINVAL;
}

static size_t trimmed(const char *s, size_t len) {
    while (len > 0 &&
           (s[len - 1] == ' ' || s[len - 1] == '\n' || s[len - 1] == '\r' || s[len - 1] == '\t')) {
        len--;
    }
    return len;
}

int zk_region_name_ok(const char *s, size_t len) {
    if (len == 0 || len >= ZK_REGION_NAME_MAX) {
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-')) {
            return 0;
        }
    }
    return 1;
}

enum zk_region_claim zk_region_judge(const char *data, size_t len, const char *ours) {
    len = trimmed(data, len);
    return len == strlen(ours) && memcmp(data, ours, len) == 0 ? ZK_REGION_OURS : ZK_REGION_OTHER;
}

enum zk_region_verdict zk_region_decide(enum zk_region_claim claim,
                                        const struct zk_region_cache *cache, const char *ours,
                                        int64_t id, int64_t count) {
    if (claim == ZK_REGION_OURS) {
        return ZK_REGION_SERVE;
    }
    if (claim == ZK_REGION_OTHER || claim == ZK_REGION_COUNT) {
        return ZK_REGION_REFUSE; /* the registry is the truth; a cache only stands in for it */
    }
    if (cache != NULL && cache->id == id && cache->count == count &&
        strcmp(cache->name, ours) == 0) {
        return ZK_REGION_SERVE;
    }
    return ZK_REGION_WAIT;
}

size_t zk_region_count_format(int64_t count, char *buf, size_t cap) {
    int n = snprintf(buf, cap, "count=%" PRId64, count);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

leaf_status_t zk_region_count_parse(const char *data, size_t len, int64_t *count) {
    len = trimmed(data, len);
    if (len <= 6 || memcmp(data, "count=", 6) != 0) {
        return LEAF_EINVAL;
    }
    return num_parse_range(data + 6, len - 6, 1, INT64_MAX, count) == LEAF_OK ? LEAF_OK
                                                                              : LEAF_EINVAL;
}

size_t zk_region_cache_format(const struct zk_region_cache *c, char *buf, size_t cap) {
    int n =
        snprintf(buf, cap, "region=%s\nid=%" PRId64 "\ncount=%" PRId64 "\nconfirmed=%" PRId64 "\n",
                 c->name, c->id, c->count, c->confirmed_ms);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* One "key=value" line's value into c; 1 when the key is one of the file's. */
static int cache_line(const char *line, size_t n, struct zk_region_cache *c, int *seen) {
    const char *eq = memchr(line, '=', n);
    if (eq == NULL) {
        return 0;
    }
    size_t klen = (size_t)(eq - line), vlen = trimmed(eq + 1, n - klen - 1);
    const char *v = eq + 1;
    if (klen == 6 && memcmp(line, "region", 6) == 0 && vlen > 0 && vlen < sizeof(c->name)) {
        memcpy(c->name, v, vlen);
        c->name[vlen] = '\0';
        seen[0] = 1;
    } else if (klen == 2 && memcmp(line, "id", 2) == 0 &&
               num_parse_range(v, vlen, 0, INT64_MAX, &c->id) == LEAF_OK) {
        seen[1] = 1;
    } else if (klen == 9 && memcmp(line, "confirmed", 9) == 0 &&
               num_parse_range(v, vlen, 0, INT64_MAX, &c->confirmed_ms) == LEAF_OK) {
        seen[2] = 1;
    } else if (klen == 5 && memcmp(line, "count", 5) == 0 &&
               num_parse_range(v, vlen, 1, INT64_MAX, &c->count) == LEAF_OK) {
        seen[3] = 1;
    } else {
        return 0;
    }
    return 1;
}

leaf_status_t zk_region_cache_parse(const char *text, size_t len, struct zk_region_cache *c) {
    int seen[4] = {0, 0, 0, 0};
    memset(c, 0, sizeof(*c));
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (text + i)) : len - i;
        if (n > 0 && text[i] != '#' && !cache_line(text + i, n, c, seen)) {
            return LEAF_EINVAL;
        }
        i += n + 1;
    }
    return seen[0] && seen[1] && seen[2] && seen[3] ? LEAF_OK : LEAF_EINVAL;
}

/* ---- homes ------------------------------------------------------------------ */

static const char *const kind_names[ZK_REGION_KINDS] = {
    [ZK_REGION_SEQUENCE] = "sequence",
    [ZK_REGION_KEYED] = "keyed",
    [ZK_REGION_NUMBERING] = "numbering",
};

const char *zk_region_kind_name(enum zk_region_kind k) {
    return (int)k >= 0 && k < ZK_REGION_KINDS ? kind_names[k] : "?";
}

leaf_status_t zk_region_homes_dir(char *buf, size_t cap, const char *leaf_name) {
    int n = snprintf(buf, cap, "%s/%s", ZK_REGION_HOMES_ROOT, leaf_name);
    return n > 0 && (size_t)n < cap && leaf_name[0] != '\0' ? LEAF_OK : LEAF_EINVAL;
}

leaf_status_t zk_region_home_child(char *buf, size_t cap, enum zk_region_kind k, const char *name,
                                   size_t len) {
    if ((int)k < 0 || k >= ZK_REGION_KINDS || len == 0 || len > INT32_MAX) {
        return LEAF_EINVAL;
    }
    int n = snprintf(buf, cap, "%s:%.*s", kind_names[k], (int)len, name);
    return n > 0 && (size_t)n < cap ? LEAF_OK : LEAF_EINVAL;
}

leaf_status_t zk_region_home_parse(const char *child, enum zk_region_kind *k, const char **name,
                                   size_t *len) {
    const char *colon = strchr(child, ':');
    if (colon == NULL || colon[1] == '\0') {
        return LEAF_EINVAL;
    }
    for (int i = 0; i < ZK_REGION_KINDS; i++) {
        size_t klen = strlen(kind_names[i]);
        if ((size_t)(colon - child) == klen && memcmp(child, kind_names[i], klen) == 0) {
            *k = (enum zk_region_kind)i;
            *name = colon + 1;
            *len = strlen(colon + 1);
            return LEAF_OK;
        }
    }
    return LEAF_EINVAL;
}

/* host:port with a port of 1..65535 and a host of no white space, comma, slash or '='. */
static int peer_addr_ok(const char *s, size_t len) {
    const char *colon = NULL;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ':') {
            colon = s + i;
        } else if (s[i] <= ' ' || s[i] == ',' || s[i] == '/' || s[i] == '=') {
            return 0;
        }
    }
    if (colon == NULL || colon == s || len >= ZK_REGION_PEER_ADDR) {
        return 0;
    }
    int64_t port;
    return num_parse_range(colon + 1, (size_t)(s + len - colon - 1), 1, 65535, &port) == LEAF_OK;
}

/* One entry "name=host:port[/host:port]" (len bytes, trimmed) into p; 0 when malformed. */
static int peer_parse(const char *s, size_t len, struct zk_region_peer *p) {
    const char *eq = memchr(s, '=', len);
    if (eq == NULL || !zk_region_name_ok(s, (size_t)(eq - s))) {
        return 0;
    }
    const char *addr = eq + 1, *end = s + len;
    const char *slash = memchr(addr, '/', (size_t)(end - addr));
    const char *http_end = slash != NULL ? slash : end;
    if (!peer_addr_ok(addr, (size_t)(http_end - addr)) ||
        (slash != NULL && !peer_addr_ok(slash + 1, (size_t)(end - slash - 1)))) {
        return 0;
    }
    memset(p, 0, sizeof(*p));
    memcpy(p->name, s, (size_t)(eq - s));
    memcpy(p->http, addr, (size_t)(http_end - addr));
    if (slash != NULL) {
        memcpy(p->resp, slash + 1, (size_t)(end - slash - 1));
    }
    return 1;
}

leaf_status_t zk_region_peers_parse(const char *text, const char *ours, struct zk_region_peer *out,
                                    int *n, char *err, size_t errlen) {
    *n = 0;
    const char *s = text;
    while (*s == ' ' || *s == '\t') {
        s++;
    }
    while (*s != '\0') {
        const char *comma = strchr(s, ',');
        const char *end = comma != NULL ? comma : s + strlen(s);
        const char *a = s, *b = end;
        while (a < b && (*a == ' ' || *a == '\t')) {
            a++;
        }
        while (b > a && (b[-1] == ' ' || b[-1] == '\t')) {
            b--;
        }
        if (*n == ZK_REGION_PEERS_MAX) {
            snprintf(err, errlen, "more than %d peers", ZK_REGION_PEERS_MAX);
            return LEAF_EINVAL;
        }
        if (!peer_parse(a, (size_t)(b - a), &out[*n])) {
            snprintf(err, errlen,
                     "'%.*s' is not name=host:port[/resp-host:port] (a region name of 1-63 "
                     "[A-Za-z0-9._-])",
                     (int)(b - a), a);
            return LEAF_EINVAL;
        }
        if (strcmp(out[*n].name, ours) == 0) {
            snprintf(err, errlen, "names this node's own region %s", ours);
            return LEAF_EINVAL;
        }
        for (int i = 0; i < *n; i++) {
            if (strcmp(out[i].name, out[*n].name) == 0) {
                snprintf(err, errlen, "names region %s twice", out[i].name);
                return LEAF_EINVAL;
            }
        }
        (*n)++;
        if (comma == NULL) {
            break;
        }
        s = comma + 1; /* an entry follows: "a=h:1," is malformed */
        if (*s == '\0') {
            snprintf(err, errlen, "ends with a comma");
            return LEAF_EINVAL;
        }
    }
    return LEAF_OK;
}
