/* The kinds of key the library serves (client_kind.h). */
#include "client_kind.h"

#include <stdio.h>
#include <string.h>

static const struct client_kind_info client_kinds[CLIENT_KIND_COUNT] = {
#define CLIENT_KIND_ROW(kind, mode, serve, path) [kind] = {mode, serve, path},
    CLIENT_KINDS(CLIENT_KIND_ROW)
#undef CLIENT_KIND_ROW
};

const struct client_kind_info *client_kind_info(enum client_kind kind) {
    return (int)kind >= 0 && kind < CLIENT_KIND_COUNT ? &client_kinds[kind] : NULL;
}

int client_kind_parse(const char *key, enum client_kind *kind, size_t *prefix) {
    size_t len = strlen(key);
    for (int k = 0; k < CLIENT_KIND_COUNT; k++) {
        const struct ids_mode_info *m = ids_mode_info(client_kinds[k].mode);
        size_t p = m->key_prefix_len;
        if (len >= p && memcmp(key, m->key_prefix, p) == 0) {
            if (len >= CLIENT_KEY_MAX || !ids_mode_key_ok(client_kinds[k].mode, key + p, len - p)) {
                return -1;
            }
            *kind = (enum client_kind)k;
            *prefix = p;
            return 0;
        }
    }
    return -1;
}

/* A byte a path may hold as it is (RFC 3986's unreserved); every other is %XX. */
static int unreserved(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

size_t client_kind_path(enum client_kind kind, const char *tail, int64_t count, char *out,
                        size_t cap) {
    const struct client_kind_info *info = client_kind_info(kind);
    if (info == NULL || cap == 0) {
        return 0;
    }
    int n = snprintf(out, cap, "%s", info->path);
    size_t len = n > 0 ? (size_t)n : 0;
    const char *colon =
        ids_mode_info(info->mode)->rule == IDS_KEY_SPACED ? strchr(tail, ':') : NULL;
    for (const char *p = tail; *p != '\0'; p++) {
        unsigned char c = (unsigned char)*p;
        if (len + 4 >= cap) {
            return 0;
        }
        if (p == colon) {
            out[len++] = '/';
        } else if (colon == NULL || p < colon || unreserved(c)) {
            out[len++] = (char)c;
        } else {
            len += (size_t)snprintf(out + len, cap - len, "%%%02X", c);
        }
    }
    n = snprintf(out + len, cap > len ? cap - len : 0, "?count=%lld", (long long)count);
    if (n < 0 || len + (size_t)n >= cap) {
        return 0;
    }
    return len + (size_t)n;
}
