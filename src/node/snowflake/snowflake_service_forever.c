/*
 * Forever mode at run time (docs/reference/zookeeper.md): keeps ZooKeeper's record of
 * this node's worker ID up to date (its leaf_forever node's timestamp, the
 * EPHEMERAL leaf_temporary node), finds its node again after a start from
 * the local cache, and stops issuing when ZooKeeper lost the record.
 * Threads: the control thread only.
 * Layer: the node (src/node/snowflake), below snowflake_service.c; the record
 * formats are zk/zk_record.c.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>

#include "clock.h"
#include "log.h"
#include "snowflake_service_state.h"
#include "zk_layout.h"

static void node_zk_call(struct snowflake_service *n, int op, leaf_status_t st) {
    n->busy[op] = st == LEAF_OK;
}

/*
 * ZooKeeper expires a session no sooner than its timeout after the last
 * request it received from it (its expiry queue rounds up, to the next tick),
 * and a request it answered was received after it was sent: until then no
 * other session can hold this identity. A margin of a tenth (at most 1 s)
 * covers the two machines' clock rates and the server's tick.
 */
void snowflake_service_fence_answered(struct snowflake_service *n, int64_t sent_mono_ms) {
    int64_t timeout = zk_session_negotiated_timeout_ms(n->zk);
    if (!n->named || timeout <= 0) {
        return;
    }
    int64_t margin = timeout / 10 < 1000 ? timeout / 10 : 1000;
    int64_t until = sent_mono_ms + timeout - margin;
    if (until > atomic_load(&n->fence_mono_ms)) {
        atomic_store(&n->fence_mono_ms, until);
    }
}

/* Sends what ZooKeeper should hold now; each kind of call at most once in flight. */
void snowflake_service_forever_report(struct snowflake_service *n, int64_t reserved) {
    if (!n->use_zk || n->cfg->lease_mode || atomic_load(&n->stats.identity_wait) ||
        atomic_load(&n->stats.zk_wait)) {
        return; /* waiting for the identity: nothing is this node's to report yet */
    }
    char data[256];
    size_t len = snowflake_service_forever_json(n, reserved, data, sizeof(data));
    if (zk_session_state(n->zk) != ZK_STATE_CONNECTED || len == 0) {
        return;
    }
    if (n->registered == 0 && !n->busy[OP_FIND]) {
        node_zk_call(n, OP_FIND, zk_session_achildren(&n->zsub, OP_FIND, n->layout.forever));
    }
    if (n->registered == 1 && !n->busy[OP_SET_FOREVER] && !n->forever_fenced &&
        n->forever_version >= 0) {
        /* Conditional on the version this node last wrote: a refusal means
         * someone else wrote the node's time. */
        n->forever_sent_ms = reserved;
        node_zk_call(n, OP_SET_FOREVER,
                     zk_session_aset_version(&n->zsub, OP_SET_FOREVER, 0, n->forever_path, data,
                                             len, n->forever_version));
    } else if (n->registered == 1 && n->forever_version < 0 && !n->busy[OP_REREAD_FOREVER]) {
        node_zk_call(n, OP_REREAD_FOREVER,
                     zk_session_aget(&n->zsub, OP_REREAD_FOREVER, 0, n->forever_path));
    }
    if (n->registered != 1) {
        return; /* the ephemeral node advertises a registered worker only */
    }
    if (!n->forever_watched && !n->busy[OP_WATCH_FOREVER]) {
        snowflake_service_forever_watched(n);
    }
    if (n->ephemeral_ok && !n->busy[OP_SET_EPHEMERAL]) {
        node_zk_call(n, OP_SET_EPHEMERAL,
                     zk_session_aset(&n->zsub, OP_SET_EPHEMERAL, n->layout.ephemeral, data, len));
    } else if (!n->ephemeral_ok && !n->busy[OP_CREATE_EPHEMERAL] && !n->busy[OP_MINE_EPHEMERAL] &&
               !n->busy[OP_TAKE_EPHEMERAL]) {
        node_zk_call(n, OP_CREATE_EPHEMERAL,
                     zk_session_acreate(&n->zsub, OP_CREATE_EPHEMERAL, n->layout.ephemeral, data,
                                        len, ZK_MODE_EPHEMERAL));
    }
}

/*
 * ZooKeeper no longer records this node's worker ID (its data was lost or the
 * node deleted). Another node may be handed the same ID, so this one stops
 * issuing snowflake IDs (/ready turns 503) until an operator restarts it; a
 * restart registers afresh, still above the stored time.
 */
static void node_drop_worker(struct snowflake_service *n, const char *why) {
    pthread_mutex_lock(&n->lock);
    snowflake_gen_set_worker(&n->gen, -1);
    pthread_mutex_unlock(&n->lock);
    log_error("snowflake",
              "%s: stopped issuing snowflake IDs with worker ID %" PRId64
              " (another node may be given it); restart this node to register again",
              why, n->worker_id);
}

/* The lookup of the forever node after a start from the cache. */
static void node_found(struct snowflake_service *n, char **names, int nnames) {
    int i = names == NULL
                ? -1
                : zk_layout_find_own((const char *const *)names, nnames, n->layout.identity);
    int64_t id = -1;
    if (i >= 0) {
        zk_layout_worker_id(names[i], &id);
    }
    if (i < 0 || id != n->worker_id) {
        log_error("snowflake",
                  "ZooKeeper has %s for %s under %s, but this node runs as worker ID "
                  "%" PRId64 " from its local cache; not re-registering (was ZooKeeper's data "
                  "lost?)",
                  i < 0 ? "no node" : names[i], n->layout.identity, n->layout.forever,
                  n->worker_id);
        n->registered = -1;
        node_drop_worker(n, "worker ID not confirmed by ZooKeeper");
        return;
    }
    int w =
        snprintf(n->forever_path, sizeof(n->forever_path), "%s/%s", n->layout.forever, names[i]);
    if (w < 0 || (size_t)w >= sizeof(n->forever_path)) {
        n->registered = -1;
        return;
    }
    n->registered = 1;
    n->forever_version = -1; /* read before the first conditional write */
    atomic_store(&n->stats.registered, 1);
    log_info("snowflake", "ZooKeeper is back: %s confirms worker ID %" PRId64, n->forever_path,
             n->worker_id);
    snowflake_service_forever_report(n, n->reserved_ms);
}

/* The own leaf_forever node changed or vanished (a watch), or is to be watched. */
void snowflake_service_forever_watched(struct snowflake_service *n) {
    n->forever_watched = 0;
    if (n->registered == 1 && !n->busy[OP_WATCH_FOREVER] &&
        zk_session_state(n->zk) == ZK_STATE_CONNECTED) {
        node_zk_call(n, OP_WATCH_FOREVER,
                     zk_session_aexists_watch(&n->zsub, OP_WATCH_FOREVER, 0, n->forever_path));
        n->forever_watched = n->busy[OP_WATCH_FOREVER];
    }
}

/*
 * The identity's EPHEMERAL node is another session's: whose? This process's
 * own earlier session's, or its data dir's previous process's (the cache
 * records that session, and this process holds the data dir's lock, so that
 * process is gone): taken over at once, as at a start with ZooKeeper up
 * (docs/IDENTITY.md). Waiting for that session to expire instead would let a
 * twin waiting for the same expiry create the node first while this node
 * serves from its cache: two issuers of one worker ID. The delete is
 * conditional on the version just read; a node re-created in between by a
 * twin (the old session expired in those milliseconds) has version 0 too,
 * which only the next look tells apart: then this node stops, as below.
 */
static void node_ephemeral_foreign(struct snowflake_service *n, int64_t owner, int32_t version) {
    if (owner != 0 && (owner == n->recorded_session || owner == n->owner.session_id)) {
        log_info("snowflake",
                 "%s belongs to this node's previous session 0x%" PRIx64
                 " (this process holds the data dir's lock, so that session's process is gone): "
                 "taking it over",
                 n->layout.ephemeral, (uint64_t)owner);
        node_zk_call(
            n, OP_TAKE_EPHEMERAL,
            zk_session_adelete(&n->zsub, OP_TAKE_EPHEMERAL, 0, n->layout.ephemeral, version));
        return;
    }
    log_error("snowflake",
              "identity %s is held by ZooKeeper session 0x%" PRIx64
              " (%s), not this node's: another live node has this identity (check %s); "
              "stopping",
              n->layout.identity, (uint64_t)owner, n->layout.ephemeral,
              n->named ? "leafd.snowflake.identity"
                       : "leafd.snowflake.advertise.ip and leaf.snowflake.port");
    n->registered = -1;
    node_drop_worker(n, "identity held by another live node");
    if (n->fail != NULL) {
        n->fail(n->fail_arg);
    }
}

static void node_ephemeral_done(struct snowflake_service *n, const struct zk_event *ev) {
    int op = ev->op;
    leaf_status_t rc = ev->rc;
    if (op == OP_TAKE_EPHEMERAL) {
        /* Deleted, or gone already, or changed since (looked at again): create it now. */
        n->ephemeral_ok = 0;
        snowflake_service_forever_report(n, n->reserved_ms);
    } else if (op == OP_SET_EPHEMERAL && rc == LEAF_ENOTFOUND) {
        log_warn("snowflake", "%s vanished; re-creating it", n->layout.ephemeral);
        n->ephemeral_ok = 0;
    } else if (op == OP_CREATE_EPHEMERAL && rc == LEAF_OK) {
        log_info("snowflake", "created ephemeral node %s", n->layout.ephemeral);
        n->ephemeral_ok = 1;
        n->owner.session_id = zk_session_id(n->zk); /* the next cache write records it */
        if (n->forever_fenced && !n->busy[OP_REREAD_FOREVER]) {
            node_zk_call(n, OP_REREAD_FOREVER,
                         zk_session_aget(&n->zsub, OP_REREAD_FOREVER, 0, n->forever_path));
        }
    } else if (op == OP_CREATE_EPHEMERAL && rc == LEAF_EEXIST) {
        /* Ours from before a lost reply, or a previous session's that
         * vanishes when that session expires: ask whose it is. */
        node_zk_call(n, OP_MINE_EPHEMERAL,
                     zk_session_amine(&n->zsub, OP_MINE_EPHEMERAL, n->layout.ephemeral));
    } else if (op == OP_MINE_EPHEMERAL && rc == LEAF_ENOTFOUND) {
        n->ephemeral_ok = 0; /* gone: the next report creates it (and confirms a fenced write) */
    } else if (op == OP_MINE_EPHEMERAL && rc == LEAF_OK) {
        n->ephemeral_ok = ev->mine;
        if (!ev->mine) {
            node_ephemeral_foreign(n, ev->owner, ev->version);
        } else if (n->forever_fenced && !n->busy[OP_REREAD_FOREVER]) { /* ours: confirmed */
            node_zk_call(n, OP_REREAD_FOREVER,
                         zk_session_aget(&n->zsub, OP_REREAD_FOREVER, 0, n->forever_path));
        }
    }
    atomic_store(&n->stats.ephemeral, n->ephemeral_ok);
}

/*
 * The node's time write was refused: someone else wrote it since. Nothing
 * above what ZooKeeper acknowledged is issued until the identity is
 * confirmed this node's (its ephemeral node is this session's); then the
 * version is read again. Another session's: the node stops (ephemeral_foreign).
 */
static void node_forever_refused(struct snowflake_service *n) {
    log_error("snowflake",
              "%s was written by someone else since this node's last write: issuing nothing "
              "above %" PRId64 " (acknowledged) while it checks that the identity is still its own",
              n->forever_path, n->forever_acked_ms);
    n->forever_fenced = 1;
    pthread_mutex_lock(&n->lock);
    if (n->gen.ceiling_ms > n->forever_acked_ms) {
        snowflake_gen_set_ceiling(&n->gen, n->forever_acked_ms);
    }
    pthread_mutex_unlock(&n->lock);
    if (!n->busy[OP_MINE_EPHEMERAL]) {
        node_zk_call(n, OP_MINE_EPHEMERAL,
                     zk_session_amine(&n->zsub, OP_MINE_EPHEMERAL, n->layout.ephemeral));
    }
}

/*
 * The version read again: after a start from the cache, after a refused
 * write (is the node's time one this node sent, whose answer was lost?), or
 * once the identity is confirmed after a real refusal.
 */
static void node_forever_reread(struct snowflake_service *n, const struct zk_event *ev) {
    if (ev->result != ZK_RESULT_OK) {
        n->forever_checking = 0;
        return; /* the report tries again; a deleted node is the watch's to report */
    }
    if (n->forever_checking) {
        struct zk_node_data d;
        n->forever_checking = 0;
        if (ev->data == NULL || zk_record_parse_node(ev->data, ev->len, &d) != LEAF_OK ||
            (d.timestamp != n->forever_maybe_ms && d.timestamp != n->forever_sent_ms)) {
            node_forever_refused(n); /* not this node's write: someone else's */
            return;
        }
        /* A write whose answer was lost (connection loss) had landed. */
        n->forever_acked_ms = d.timestamp;
    }
    n->forever_version = ev->version;
    if (n->forever_fenced) {
        n->forever_fenced = 0;
        log_warn("snowflake",
                 "%s: the identity is this node's; writing its time again (version %d)",
                 n->forever_path, (int)ev->version);
        /* Now, not at the next report: the ceiling is held at what ZooKeeper acknowledged,
         * at most report_ms + the reservation ahead of it, and the next report could come
         * after the clock passed it (requests answered 503 not_ready in between). */
        n->reserve_now(n);
    }
}

/*
 * ZooKeeper refuses the node's time write: the cluster's trees were closed
 * with credentials this node lacks (an older leafd closes them at once).
 * What it issues could no longer be recorded, so it issues nothing above the
 * time ZooKeeper acknowledged and is not ready until a write lands again.
 */
static void node_forever_noauth(struct snowflake_service *n) {
    if (!atomic_exchange(&n->stats.zk_refused, 1)) {
        log_error("snowflake",
                  "ZooKeeper refuses this node's time writes to %s (not authenticated: the "
                  "cluster's trees were closed with leafd.zk.auth credentials this node lacks): "
                  "issuing nothing above %" PRId64 " (acknowledged), not ready; set leafd.zk.auth "
                  "to the cluster's credentials, or reopen the trees (leafctl acl open)",
                  n->forever_path, n->forever_acked_ms);
    }
    pthread_mutex_lock(&n->lock);
    if (n->gen.ceiling_ms > n->forever_acked_ms) {
        snowflake_gen_set_ceiling(&n->gen, n->forever_acked_ms);
    }
    pthread_mutex_unlock(&n->lock);
}

void snowflake_service_forever_done(struct snowflake_service *n, const struct zk_event *ev) {
    n->busy[ev->op] = 0;
    if (ev->answered_sent_mono_ms >= 0 && n->ephemeral_ok) {
        snowflake_service_fence_answered(n, ev->answered_sent_mono_ms);
    }
    if (ev->op == OP_SET_FOREVER && ev->rc == LEAF_OK) {
        n->forever_version = ev->version;
        n->forever_acked_ms = n->forever_sent_ms;
        atomic_store(&n->stats.last_zk_report_ms, clock_wall_ms());
        if (n->named && n->ephemeral_ok && !n->forever_fenced) {
            snowflake_service_cache_stored(n,
                                           n->forever_acked_ms); /* the ceiling follows ZooKeeper */
        }
        if (atomic_exchange(&n->stats.zk_refused, 0)) {
            log_info("snowflake", "%s: ZooKeeper accepts this node's time writes again",
                     n->forever_path);
        }
    } else if (ev->op == OP_SET_FOREVER && ev->result == ZK_RESULT_NOAUTH) {
        node_forever_noauth(n);
    } else if (ev->op == OP_SET_FOREVER && ev->result == ZK_RESULT_BADVERSION) {
        /* First see whether the node holds a write of this node's whose answer was lost. */
        n->forever_checking = 1;
        node_zk_call(n, OP_REREAD_FOREVER,
                     zk_session_aget(&n->zsub, OP_REREAD_FOREVER, 0, n->forever_path));
        if (!n->busy[OP_REREAD_FOREVER]) {
            n->forever_checking = 0;
            node_forever_refused(n);
        }
    } else if (ev->op == OP_SET_FOREVER && ev->result == ZK_RESULT_UNKNOWN) {
        n->forever_maybe_ms = n->forever_sent_ms; /* may have landed: the next one will tell */
    } else if (ev->op == OP_REREAD_FOREVER) {
        node_forever_reread(n, ev);
    } else if (ev->op == OP_SET_FOREVER && ev->rc == LEAF_ENOTFOUND) {
        log_error("snowflake", "%s was deleted while this node holds worker ID %" PRId64,
                  n->forever_path, n->worker_id);
        node_drop_worker(n, "worker node deleted from ZooKeeper");
    } else if (ev->op == OP_FIND && ev->rc == LEAF_OK) {
        node_found(n, ev->names, ev->nnames);
    } else if (ev->op == OP_FIND && ev->rc == LEAF_ENOTFOUND) {
        node_found(n, NULL, 0);
    } else if (ev->op == OP_WATCH_FOREVER) {
        n->forever_watched = ev->rc == LEAF_OK;
        if (ev->result == ZK_RESULT_NONODE && n->registered == 1) {
            /* Watched, not waited for: the next 3 s report would be too late. */
            n->registered = -1;
            node_drop_worker(n, "this node's leaf_forever node vanished from ZooKeeper (the "
                                "cluster's tree deleted or lost?)");
        }
    } else {
        node_ephemeral_done(n, ev);
    }
}

size_t snowflake_service_forever_json(struct snowflake_service *n, int64_t timestamp, char *buf,
                                      size_t cap) {
    struct zk_node_data d = n->self;
    d.timestamp = timestamp;
    return zk_record_format_node(&d, buf, cap);
}
