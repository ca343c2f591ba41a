#include "zk_marker.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define MARKER_JSON_MAX 9000000000000000LL

static int marker_id_ok(const char *id) {
    size_t n = 0;
    for (; id[n] != '\0'; n++) {
        if (!((id[n] >= '0' && id[n] <= '9') || (id[n] >= 'a' && id[n] <= 'f'))) {
            return 0;
        }
    }
    return n > 0 && n < ZK_MARKER_ID_MAX;
}

size_t zk_marker_format(const struct zk_marker *m, char *buf, size_t cap) {
    if (!marker_id_ok(m->id) || m->generation < 1) {
        return 0;
    }
    int n = snprintf(buf, cap, "{\"id\":\"%s\",\"generation\":%" PRId64 "}", m->id, m->generation);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

leaf_status_t zk_marker_parse(const char *buf, size_t len, struct zk_marker *m) {
    memset(m, 0, sizeof(*m));
    cJSON *root = cJSON_ParseWithLength(buf, len);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(root, "id");
    const cJSON *gen = cJSON_GetObjectItemCaseSensitive(root, "generation");
    leaf_status_t st = LEAF_EINVAL;
    if (cJSON_IsString(id) && marker_id_ok(id->valuestring) && cJSON_IsNumber(gen) &&
        gen->valuedouble >= 1 && gen->valuedouble < (double)MARKER_JSON_MAX &&
        gen->valuedouble == (double)(int64_t)gen->valuedouble) {
        snprintf(m->id, sizeof(m->id), "%s", id->valuestring);
        m->generation = (int64_t)gen->valuedouble;
        st = LEAF_OK;
    }
    cJSON_Delete(root);
    return st;
}

void zk_marker_new_id(uint64_t r, char id[ZK_MARKER_ID_MAX]) {
    snprintf(id, ZK_MARKER_ID_MAX, "%016" PRIx64, r);
}

struct zk_marker_decision zk_marker_decide(const struct zk_marker *zk,
                                           const struct zk_marker *local, const char *fresh_id) {
    struct zk_marker_decision d;
    memset(&d, 0, sizeof(d));
    int have_local = local != NULL && local->id[0] != '\0';
    if (zk == NULL) {
        d.verdict = have_local ? ZK_MARKER_LOST : ZK_MARKER_CREATE;
        if (!have_local) {
            snprintf(d.write.id, sizeof(d.write.id), "%s", fresh_id);
            d.write.generation = 1;
        }
        return d;
    }
    if (have_local && strcmp(zk->id, local->id) != 0) {
        d.verdict = ZK_MARKER_LOST;
        return d;
    }
    if (have_local && zk->generation < local->generation) {
        d.verdict = ZK_MARKER_BEHIND;
        return d;
    }
    d.verdict = have_local ? ZK_MARKER_OK : ZK_MARKER_ADOPT;
    d.write = *zk;
    d.write.generation = zk->generation + 1;
    return d;
}

size_t zk_marker_message(const struct zk_marker_decision *d, const struct zk_marker *zk,
                         const struct zk_marker *local, const char *marker_path,
                         const char *data_dir, char *buf, size_t cap) {
    char zk_state[ZK_MARKER_MESSAGE_MAX];
    if (zk == NULL) {
        snprintf(zk_state, sizeof(zk_state), "%s is missing", marker_path);
    } else {
        snprintf(zk_state, sizeof(zk_state), "%s holds marker %s generation %" PRId64, marker_path,
                 zk->id, zk->generation);
    }
    const char *what = d->verdict == ZK_MARKER_BEHIND ? "ZooKeeper went back to an older state"
                                                      : "ZooKeeper lost the cluster's tree";
    int n =
        snprintf(buf, cap,
                 "%s: %s but this node's data dir %s records marker %s generation %" PRId64
                 "; refusing to issue IDs that may repeat; recovery: docs/OPERATIONS.md, "
                 "\"ZooKeeper lost or restored\" (stop every node, wait "
                 "leafd.snowflake.reserve.ms, clear marker= and generation= in each node's "
                 "cache)",
                 what, zk_state, data_dir, local ? local->id : "", local ? local->generation : 0);
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap ? cap - 1 : 0;
}
