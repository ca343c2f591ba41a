/*
 * One identity, one node (docs/IDENTITY.md): the start-up checks of a
 * snowflake node with ZooKeeper, in the order docs/IDENTITY.md gives, with
 * the decisions of the pure cores in zk/ (zk_identity, zk_marker, zk_shape,
 * zk_compat, the clock witness):
 *   - whose the worker-ID cache is (a copied data dir never serves);
 *   - the cluster marker (a ZooKeeper that lost the tree or went back in
 *     time is refused), the cluster's ID shape, Meituan Leaf's own layout;
 *   - the clock against the live peers' median and ZooKeeper's own clock,
 *     at every start;
 *   - the identity lock: the EPHEMERAL leaf_temporary node of another live
 *     session is waited for (at most the session timeout + 2 s, /ready 503),
 *     then refused; our own previous incarnation's is taken over at once.
 * Threads: the control thread; the synchronous ZooKeeper calls run at
 * start-up (and, while an identity is waited for, on the control loop,
 * where no request is served).
 * Layer: the node (src/node/snowflake), below snowflake_service.c: this node's
 * identity (ip:port and worker ID), not an ID's bit layout
 * (snowflake/snowflake_id.c) nor the pure identity rules (zk/zk_identity.c).
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "clock.h"
#include "log.h"
#include "snowflake_service_state.h"
#include "zk_cache.h"
#include "zk_clock.h"
#include "zk_compat.h"
#include "zk_identity.h"
#include "zk_marker.h"
#include "zk_register.h"
#include "zk_shape.h"

/* This node's configured ID shape, as the cluster records it. */
static void identity_shape(const struct snowflake_service *n, struct zk_shape *s) {
    memset(s, 0, sizeof(*s));
    snowflake_layout_format(&n->gen.layout, s->layout, sizeof(s->layout));
    s->epoch = n->cfg->epoch;
    s->unit_ms = n->gen.layout.unit_ms;
}

/* The owner fields every cache write from now on carries. */
static void identity_owner_init(struct snowflake_service *n) {
    struct zk_cache_owner *o = &n->owner;
    struct zk_shape mine;
    identity_shape(n, &mine);
    snprintf(o->identity, sizeof(o->identity), "%s", n->layout.identity);
    snprintf(o->cluster, sizeof(o->cluster), "%s", n->cfg->name);
    snprintf(o->layout, sizeof(o->layout), "%s", mine.layout);
    o->epoch = mine.epoch;
    o->unit_ms = mine.unit_ms;
}

leaf_status_t snowflake_service_identity_cache(struct snowflake_service *n, struct zk_cache_data *c,
                                               int *have) {
    struct zk_cache_owner o;
    memset(&o, 0, sizeof(o));
    *c = (struct zk_cache_data){-1, -1};
    *have = 0;
    n->cache_written_ms = -1;
    n->cache_worker_id = -1;
    identity_owner_init(n);
    struct stat sb;
    if (stat(n->cache_path, &sb) == 0) {
        n->cache_written_ms = (int64_t)sb.st_mtim.tv_sec * 1000 + sb.st_mtim.tv_nsec / 1000000;
    }
    leaf_status_t st = zk_cache_load_owned(n->cache_path, c, &o);
    if (st == LEAF_ENOTFOUND) {
        return LEAF_OK;
    }
    if (st != LEAF_OK) {
        return st; /* logged naming the file */
    }
    n->cache_use = zk_identity_cache_use(c, &o, n->layout.identity, n->cfg->name);
    n->cache_worker_id = c->worker_id;
    if (n->cache_use == ZK_CACHE_FOREIGN) {
        char msg[ZK_IDENTITY_MESSAGE_MAX];
        zk_identity_cache_message(&o, n->cache_path, n->layout.identity, n->cfg->name, msg,
                                  sizeof(msg));
        log_warn("snowflake", "%s", msg);
        *c = (struct zk_cache_data){-1, -1};
        return LEAF_OK;
    }
    if (n->cache_use == ZK_CACHE_OWN) {
        /* Kept in every write until this node holds the identity with a session
         * of its own: a start that never reaches ZooKeeper must not forget it.
         * Not for a named identity: its data dir may be a volume another host
         * still has mounted (a force-deleted pod), where this process's lock on
         * it proves nothing, so its previous session is waited out like a
         * twin's (docs/IDENTITY.md, "Named identity"). */
        n->recorded_session = n->named ? 0 : o.session_id;
        n->owner.session_id = n->recorded_session;
        snprintf(n->local_marker.id, sizeof(n->local_marker.id), "%s", o.marker);
        n->local_marker.generation = o.generation;
        struct zk_shape old = {{0}, o.epoch, o.unit_ms}, mine;
        snprintf(old.layout, sizeof(old.layout), "%s", o.layout);
        identity_shape(n, &mine);
        if (o.layout[0] != '\0' && !zk_shape_equal(&old, &mine)) {
            /* The node's own history was issued in another shape: its floor, in this one. */
            n->shape_changed = 1;
            n->old_shape = old;
            c->timestamp = zk_shape_floor_ms(&old, c->timestamp, &mine);
        }
    }
    *have = n->cache_use != ZK_CACHE_NONE;
    return LEAF_OK;
}

/* Creates path if missing (its parent exists). */
static leaf_status_t identity_ensure(struct snowflake_service *n, const char *path) {
    leaf_status_t st = zk_session_create(n->zk, path, "", 0, ZK_MODE_PERSISTENT, NULL, 0);
    return st == LEAF_EEXIST ? LEAF_OK : st;
}

/* Reads the marker and writes the next generation; records ZooKeeper's clock of the write. */
static leaf_status_t identity_marker(struct snowflake_service *n) {
    char path[ZK_PATH_MAX + 16], buf[256], data[128], msg[ZK_MARKER_MESSAGE_MAX];
    snprintf(path, sizeof(path), "%s/%s", n->layout.root, ZK_MARKER_NODE);
    for (int attempt = 0; attempt < 8; attempt++) {
        struct zk_stat stat;
        struct zk_marker zk, *zkp = &zk;
        size_t len = 0;
        leaf_status_t st = zk_session_get_stat(n->zk, path, buf, sizeof(buf), &len, &stat);
        if (st == LEAF_ENOTFOUND) {
            zkp = NULL;
        } else if (st != LEAF_OK) {
            return st;
        } else if (zk_marker_parse(buf, len, &zk) != LEAF_OK) {
            log_error("snowflake", "refusing to start: %s holds no cluster marker ('%.*s')", path,
                      (int)len, buf);
            return LEAF_EINVAL;
        }
        uint64_t r = 0;
        if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
            r = (uint64_t)clock_mono_ns() ^ ((uint64_t)clock_wall_ms() << 17);
        }
        char fresh[ZK_MARKER_ID_MAX];
        zk_marker_new_id(r, fresh);
        struct zk_marker_decision d = zk_marker_decide(zkp, &n->local_marker, fresh);
        if (d.verdict == ZK_MARKER_BEHIND || d.verdict == ZK_MARKER_LOST) {
            zk_marker_message(&d, zkp, &n->local_marker, path, n->cache_path, msg, sizeof(msg));
            log_error("snowflake", "%s", msg);
            return LEAF_EINVAL;
        }
        size_t dlen = zk_marker_format(&d.write, data, sizeof(data));
        int64_t sent = clock_wall_ms();
        st = d.verdict == ZK_MARKER_CREATE
                 ? zk_session_create_stat(n->zk, path, data, dlen, ZK_MODE_PERSISTENT, &stat)
                 : zk_session_set_stat(n->zk, path, data, dlen, stat.version, &stat);
        int64_t acked = clock_wall_ms();
        if (st == LEAF_OK) {
            n->owner.generation = d.write.generation;
            snprintf(n->owner.marker, sizeof(n->owner.marker), "%s", d.write.id);
            n->zk_offset_ms = zk_clock_offset(sent, stat.mtime, acked);
            n->zk_offset_known = 1;
            return LEAF_OK;
        }
        if (st != LEAF_EEXIST && st != LEAF_ERR) {
            return st; /* unavailable: the caller starts from its own cache */
        }
        /* Another node wrote it since (bad version, or created it first): read again. */
    }
    log_error("snowflake", "cannot update the cluster marker %s: it keeps changing", path);
    return LEAF_ERR;
}

/* The cluster's ID shape: recorded at its first start, the same at every start. */
static leaf_status_t identity_shape_check(struct snowflake_service *n) {
    char path[ZK_PATH_MAX + 16], buf[512], msg[ZK_SHAPE_MESSAGE_MAX];
    struct zk_shape mine, stored;
    identity_shape(n, &mine);
    snprintf(path, sizeof(path), "%s/%s", n->layout.root, ZK_SHAPE_NODE);
    size_t len = 0;
    leaf_status_t st = zk_session_get(n->zk, path, buf, sizeof(buf), &len);
    if (st == LEAF_ENOTFOUND) {
        len = zk_shape_format(&mine, buf, sizeof(buf));
        st = zk_session_create(n->zk, path, buf, len, ZK_MODE_PERSISTENT, NULL, 0);
        if (st == LEAF_OK) {
            log_info("snowflake", "recorded the cluster's ID shape in %s: %.*s", path, (int)len,
                     buf);
            return LEAF_OK;
        }
        if (st != LEAF_EEXIST) {
            return st;
        }
        st = zk_session_get(n->zk, path, buf, sizeof(buf), &len); /* another node was first */
    }
    if (st != LEAF_OK) {
        return st;
    }
    if (zk_shape_parse(buf, len, &stored) != LEAF_OK) {
        log_error("snowflake", "refusing to start: %s does not hold an ID shape ('%.*s')", path,
                  (int)len, buf);
        return LEAF_EINVAL;
    }
    if (!zk_shape_equal(&stored, &mine)) {
        zk_shape_mismatch(&stored, &mine, path, msg, sizeof(msg));
        log_error("snowflake", "refusing to start: %s", msg);
        return LEAF_EINVAL;
    }
    return LEAF_OK;
}

static int identity_count(struct snowflake_service *n, const char *path) {
    char **names = NULL;
    int count = 0;
    if (zk_session_children(n->zk, path, &names, &count) != LEAF_OK) {
        return 0;
    }
    zk_names_free(names, count);
    return count;
}

/* Meituan Leaf's own parent: refused, or (leafd.snowflake.leaf.compat) registered under. */
static leaf_status_t identity_compat(struct snowflake_service *n) {
    char leaf_parent[ZK_PATH_MAX], msg[ZK_COMPAT_MESSAGE_MAX];
    if (zk_compat_parent(&n->layout, leaf_parent, sizeof(leaf_parent)) != LEAF_OK) {
        return LEAF_EINVAL;
    }
    int leaf_n = identity_count(n, leaf_parent);
    int leafd_n = n->cfg->leaf_compat ? identity_count(n, n->layout.forever) : 0;
    enum zk_compat_verdict v = zk_compat_decide(leaf_n, leafd_n, n->cfg->leaf_compat);
    if (v == ZK_COMPAT_REFUSE_LEAF || v == ZK_COMPAT_REFUSE_MIXED) {
        zk_compat_message(v, leaf_parent, n->layout.forever, leaf_n, msg, sizeof(msg));
        log_error("snowflake", "refusing to start: %s", msg);
        return LEAF_EINVAL;
    }
    if (v == ZK_COMPAT_LEAF) {
        n->leaf_compat = 1;
        log_info("snowflake", "Leaf compatibility: registering under %s as Meituan Leaf does",
                 leaf_parent);
        return zk_compat_layout(&n->layout);
    }
    return LEAF_OK;
}

leaf_status_t snowflake_service_identity_cluster(struct snowflake_service *n) {
    leaf_status_t st;
    if ((st = identity_ensure(n, "/snowflake")) != LEAF_OK ||
        (st = identity_ensure(n, n->layout.root)) != LEAF_OK ||
        (st = identity_marker(n)) != LEAF_OK || (st = identity_shape_check(n)) != LEAF_OK) {
        return st;
    }
    return n->cfg->lease_mode ? LEAF_OK : identity_compat(n);
}

leaf_status_t snowflake_service_identity_clock(struct snowflake_service *n) {
    int64_t *offsets = NULL;
    int asked = 0, live = 0;
    leaf_status_t st = zk_register_peer_offsets(n->zk, &n->layout, &offsets, &asked, &live);
    if (st != LEAF_OK) {
        return st;
    }
    struct zk_clock_witnesses w = {offsets, asked, n->zk_offset_known, n->zk_offset_ms,
                                   n->cfg->peer_max_offset_ms};
    struct zk_clock_witness_decision d = zk_clock_witness(&w);
    char msg[512];
    zk_clock_witness_message(&d, &w, n->layout.temporary, msg, sizeof(msg));
    free(offsets);
    if (d.verdict != ZK_CLOCK_OK) {
        log_error("snowflake", "%s", msg);
        return LEAF_ECLOCK;
    }
    log_info("snowflake", "%s (%d of %d live peer(s) answered)", msg, asked, live);
    return LEAF_OK;
}

/*
 * How long a held identity is waited for: an ip:port identity the session timeout + 2 s
 * (zk_identity's default, 0); a named one leafd.snowflake.identity.wait.ms, by default twice
 * the session timeout + 2 s: a replaced pod may still run (and hold its session) when the new
 * one first looks, and its session ends a session timeout after it does (docs/IDENTITY.md,
 * "Taking a name over").
 */
static int64_t identity_max_wait(const struct snowflake_service *n) {
    int64_t timeout = zk_session_negotiated_timeout_ms(n->zk);
    if (!n->named) {
        return 0;
    }
    return n->cfg->identity_wait_ms > 0 ? n->cfg->identity_wait_ms
                                        : 2 * timeout + ZK_IDENTITY_GRACE_MS;
}

/* While waiting: a line every IDENTITY_WAIT_LOG_MS saying how long is left. */
#define IDENTITY_WAIT_LOG_MS 5000
static void identity_wait_progress(struct snowflake_service *n, int64_t now, int64_t deadline) {
    if (now - n->idwait_logged_ms < IDENTITY_WAIT_LOG_MS) {
        return;
    }
    n->idwait_logged_ms = now;
    log_info("snowflake",
             "still waiting for identity %s: held by ZooKeeper session 0x%" PRIx64 " for %" PRId64
             " ms; giving up (exit 1) in %" PRId64 " ms",
             n->layout.identity, (uint64_t)n->idwait_owner, now - n->idwait_started_ms,
             deadline - now);
}

leaf_status_t snowflake_service_identity_lock(struct snowflake_service *n, const char *data,
                                              size_t len) {
    const char *path = n->layout.ephemeral;
    for (int attempt = 0; attempt < 4; attempt++) {
        struct zk_stat stat;
        leaf_status_t st = zk_session_stat(n->zk, path, &stat);
        if (st != LEAF_OK && st != LEAF_ENOTFOUND) {
            return st;
        }
        int64_t now = clock_mono_ms();
        struct zk_identity_input in = {
            .exists = st == LEAF_OK,
            .owner_session = stat.owner,
            .own_session = zk_session_id(n->zk),
            .recorded_session = n->recorded_session,
            .now_ms = now,
            .wait_started_ms = n->idwait_started_ms,
            .session_timeout_ms = zk_session_negotiated_timeout_ms(n->zk),
            /* main() holds the data dir's lock before any service starts (daemon_start) */
            .dir_locked = 1,
            /* only an older leafd's cache (no identity=, no session=): a cache that names its
             * identity but no session was never written by a holder (static mode, say) */
            .cache_ours = n->cache_use == ZK_CACHE_UNKNOWN && n->registered == 1 &&
                          n->cache_worker_id == n->worker_id,
            .cache_written_ms = n->cache_written_ms,
            .owner_created_ms = st == LEAF_OK && n->zk_offset_known && stat.ctime > 0
                                    ? stat.ctime - n->zk_offset_ms
                                    : -1,
            .max_wait_ms = identity_max_wait(n),
        };
        struct zk_identity_decision d = zk_identity_decide(&in);
        if (d.verdict == ZK_IDENTITY_HELD) {
            return LEAF_OK;
        }
        if (d.verdict == ZK_IDENTITY_WAIT) {
            if (n->idwait_started_ms < 0) {
                n->idwait_started_ms = now;
                n->idwait_logged_ms = now;
                n->idwait_owner = stat.owner;
                log_warn("snowflake",
                         "identity %s is held by ZooKeeper session 0x%" PRIx64
                         " (%s), not this node's: issuing nothing while waiting up to %" PRId64
                         " ms for that session to end",
                         n->layout.identity, (uint64_t)stat.owner, path, d.wait_ms);
            }
            identity_wait_progress(n, now, d.deadline_ms);
            return LEAF_EAGAIN;
        }
        if (d.verdict == ZK_IDENTITY_REFUSE) {
            char msg[ZK_IDENTITY_MESSAGE_MAX];
            zk_identity_message(n->layout.identity, path, stat.owner, now - n->idwait_started_ms,
                                msg, sizeof(msg));
            log_error("snowflake", "refusing to serve: %s", msg);
            return LEAF_EEXIST;
        }
        if (d.verdict == ZK_IDENTITY_TAKEOVER && stat.owner != n->recorded_session) {
            log_info("snowflake",
                     "%s belongs to session 0x%" PRIx64 ", which the local cache %s (written by "
                     "an older leafd) does not record; it was created before that cache's last "
                     "write and this process holds the data dir's lock, so it is this node's "
                     "previous process's (killed): taking it over",
                     path, (uint64_t)stat.owner, n->cache_path);
            (void)zk_session_delete(n->zk, path, stat.version);
        } else if (d.verdict == ZK_IDENTITY_TAKEOVER) {
            log_info("snowflake",
                     "%s belongs to this node's previous session 0x%" PRIx64 " (killed): taking "
                     "it over",
                     path, (uint64_t)stat.owner);
            (void)zk_session_delete(n->zk, path, stat.version);
        }
        st = zk_session_create(n->zk, path, data, len, ZK_MODE_EPHEMERAL, NULL, 0);
        if (st == LEAF_OK) {
            n->owner.session_id = zk_session_id(n->zk);
            return LEAF_OK;
        }
        if (st != LEAF_EEXIST) {
            return st;
        }
        /* Created by someone else meanwhile: look again. */
    }
    return LEAF_EUNAVAIL;
}

leaf_status_t snowflake_service_identity_reread(struct snowflake_service *n, int64_t *stored_ms) {
    char buf[512];
    size_t len = 0;
    struct zk_stat stat;
    struct zk_node_data d;
    *stored_ms = -1;
    leaf_status_t st = zk_session_get_stat(n->zk, n->forever_path, buf, sizeof(buf), &len, &stat);
    if (st != LEAF_OK) {
        log_error("snowflake", "reading %s again after the wait for identity %s failed: %s",
                  n->forever_path, n->layout.identity, leaf_strstatus(st));
        return st;
    }
    n->forever_version = stat.version;
    if (zk_record_parse_node(buf, len, &d) == LEAF_OK) {
        *stored_ms = d.timestamp;
    }
    return LEAF_OK;
}
