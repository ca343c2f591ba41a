#include "zk_identity.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct zk_identity_decision zk_identity_decide(const struct zk_identity_input *in) {
    struct zk_identity_decision d = {ZK_IDENTITY_CREATE, 0, -1};
    if (!in->exists) {
        return d;
    }
    if (in->owner_session != 0 && in->owner_session == in->own_session) {
        d.verdict = ZK_IDENTITY_HELD;
        return d;
    }
    if (in->owner_session != 0 && in->owner_session == in->recorded_session) {
        d.verdict = ZK_IDENTITY_TAKEOVER;
        return d;
    }
    if (in->owner_session != 0 && in->recorded_session == 0 && in->dir_locked && in->cache_ours &&
        in->cache_written_ms >= 0 && in->owner_created_ms >= 0 &&
        in->owner_created_ms + ZK_IDENTITY_CREATED_MARGIN_MS < in->cache_written_ms) {
        d.verdict = ZK_IDENTITY_TAKEOVER; /* an older leafd's previous process of this data dir */
        return d;
    }
    int64_t started = in->wait_started_ms >= 0 ? in->wait_started_ms : in->now_ms;
    d.deadline_ms = started + (in->max_wait_ms > 0 ? in->max_wait_ms
                                                   : in->session_timeout_ms + ZK_IDENTITY_GRACE_MS);
    if (in->now_ms >= d.deadline_ms) {
        d.verdict = ZK_IDENTITY_REFUSE;
        return d;
    }
    d.verdict = ZK_IDENTITY_WAIT;
    d.wait_ms = d.deadline_ms - in->now_ms;
    return d;
}

size_t zk_identity_message(const char *identity, const char *path, int64_t owner_session,
                           int64_t waited_ms, char *buf, size_t cap) {
    int n = snprintf(buf, cap,
                     "identity %s is held by another live node (ZooKeeper session 0x%" PRIx64
                     " owns %s after waiting %" PRId64
                     " ms); two nodes with one identity would issue the same IDs: give this node "
                     "%s",
                     identity, (uint64_t)owner_session, path, waited_ms,
                     strchr(identity, ':') != NULL
                         ? "another leafd.snowflake.advertise.ip or leaf.snowflake.port"
                         : "another leafd.snowflake.identity (a name is one node's; is the "
                           "pod that had it still running?)");
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap ? cap - 1 : 0;
}

enum zk_cache_use zk_identity_cache_use(const struct zk_cache_data *c,
                                        const struct zk_cache_owner *o, const char *identity,
                                        const char *cluster) {
    if (c->worker_id < 0) {
        return ZK_CACHE_NONE;
    }
    if ((o->identity[0] != '\0' && strcmp(o->identity, identity) != 0) ||
        (o->cluster[0] != '\0' && strcmp(o->cluster, cluster) != 0)) {
        return ZK_CACHE_FOREIGN;
    }
    return o->identity[0] != '\0' && o->cluster[0] != '\0' ? ZK_CACHE_OWN : ZK_CACHE_UNKNOWN;
}

size_t zk_identity_cache_message(const struct zk_cache_owner *o, const char *path,
                                 const char *identity, const char *cluster, char *buf, size_t cap) {
    int n = snprintf(buf, cap,
                     "worker-ID cache %s belongs to identity %s of cluster %s, not this node's %s "
                     "of cluster %s; not using it (registering through ZooKeeper)",
                     path, o->identity[0] ? o->identity : "(unknown)",
                     o->cluster[0] ? o->cluster : "(unknown)", identity, cluster);
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap ? cap - 1 : 0;
}
