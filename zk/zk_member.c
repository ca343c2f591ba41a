/*
 * A node's membership record: see zk_member.h.
 */
#include "zk_member.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t zk_member_format(const struct zk_member *m, char *buf, size_t cap) {
    int n = snprintf(buf, cap, "{\"version\":\"%s\",\"auth\":%s,\"http\":\"%s\",\"sharding\":%s}",
                     m->version, m->auth ? "true" : "false", m->http,
                     m->sharding > 0 ? "true" : "false");
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

static void copy_string(const cJSON *o, const char *key, char *out, size_t cap) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsString(v)) {
        snprintf(out, cap, "%s", v->valuestring);
    }
}

leaf_status_t zk_member_parse(const char *buf, size_t len, struct zk_member *m) {
    memset(m, 0, sizeof(*m));
    cJSON *o = buf != NULL ? cJSON_ParseWithLength(buf, len) : NULL;
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return LEAF_EINVAL;
    }
    copy_string(o, "version", m->version, sizeof(m->version));
    copy_string(o, "http", m->http, sizeof(m->http));
    m->auth = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "auth"));
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(o, "sharding");
    m->sharding = cJSON_IsBool(sh) ? cJSON_IsTrue(sh) : -1;
    cJSON_Delete(o);
    return m->version[0] != '\0' ? LEAF_OK : LEAF_EINVAL;
}

int zk_member_version_cmp(const char *a, const char *b) {
    if (a[0] == '\0' || b[0] == '\0') {
        return (a[0] != '\0') - (b[0] != '\0');
    }
    for (int i = 0; i < 3; i++) {
        char *ea, *eb;
        long x = strtol(a, &ea, 10), y = strtol(b, &eb, 10);
        if (x != y) {
            return x < y ? -1 : 1;
        }
        a = *ea == '.' ? ea + 1 : ea;
        b = *eb == '.' ? eb + 1 : eb;
    }
    return 0;
}
