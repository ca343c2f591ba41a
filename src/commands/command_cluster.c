/*
 * CLUSTER for cluster-aware Redis clients (redis-py's RedisCluster, ioredis'
 * Cluster): with sequences on, the cluster is one shard. The sequence
 * primary owns all 16384 slots and the standbys in line are its replicas, so
 * a client sends every command to the primary by itself and follows -MOVED
 * after a failover. Node IDs are 40 hex digits derived from the node's HTTP
 * address, stable across restarts. Without sequences, CLUSTER answers as a
 * Redis without cluster support.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command_cluster.h"

#include "door_ctx.h"
#include "sequence_keyslot.h"

static void node_id(const char *addr, char out[41]) {
    uint64_t h = 1469598103934665603ULL;
    char hex[3 * 16 + 1];
    for (int part = 0; part < 3; part++) {
        for (const char *p = addr; *p; p++) {
            h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        }
        h = (h ^ (uint64_t)part) * 1099511628211ULL;
        snprintf(hex + (size_t)part * 16, 17, "%016" PRIx64, h);
    }
    memcpy(out, hex, 40);
    out[40] = '\0';
}

/* "ip:port" split; 0 when the address has no port. */
static int split_addr(const char *addr, char *ip, size_t cap, long *port) {
    const char *colon = strrchr(addr, ':');
    if (colon == NULL || (size_t)(colon - addr) >= cap) {
        return 0;
    }
    memcpy(ip, addr, (size_t)(colon - addr));
    ip[colon - addr] = '\0';
    *port = strtol(colon + 1, NULL, 10);
    return *port > 0;
}

/* The nodes that speak RESP, primary first. */
static size_t resp_peers(const struct door_ctx *ctx, struct sequence_peer *p, size_t cap) {
    struct sequence_peer all[SEQUENCE_MAX_PEERS];
    size_t n = sequence_service_peers(ctx->sequence, all, SEQUENCE_MAX_PEERS), k = 0;
    for (size_t i = 0; i < n && k < cap; i++) {
        if (all[i].resp[0] != '\0') {
            p[k++] = all[i];
        }
    }
    return k;
}

static void node_triple(struct sbuf *out, const struct sequence_peer *p) {
    char ip[SEQUENCE_PEER_ADDR], id[41];
    long port = 0;
    split_addr(p->resp, ip, sizeof(ip), &port);
    node_id(p->http, id);
    resp_reply_array(out, 3);
    resp_reply_bulk(out, ip, strlen(ip));
    resp_reply_int(out, port);
    resp_reply_bulk(out, id, 40);
}

static void cluster_slots(struct resp_request *req, const struct sequence_peer *p, size_t n) {
    if (n == 0 || !p[0].primary) {
        resp_reply_array(req->out, 0); /* no primary yet: no slot is served */
        return;
    }
    resp_reply_array(req->out, 1);
    resp_reply_array(req->out, 2 + n);
    resp_reply_int(req->out, 0);
    resp_reply_int(req->out, SEQUENCE_KEYSLOTS - 1);
    for (size_t i = 0; i < n; i++) {
        node_triple(req->out, &p[i]);
    }
}

static void shard_node(struct sbuf *out, const struct sequence_peer *p, int resp3) {
    char ip[SEQUENCE_PEER_ADDR], id[41];
    long port = 0;
    split_addr(p->resp, ip, sizeof(ip), &port);
    node_id(p->http, id);
    resp_reply_map(out, 7, resp3);
    resp_reply_bulk(out, "id", 2);
    resp_reply_bulk(out, id, 40);
    resp_reply_bulk(out, "port", 4);
    resp_reply_int(out, port);
    resp_reply_bulk(out, "ip", 2);
    resp_reply_bulk(out, ip, strlen(ip));
    resp_reply_bulk(out, "endpoint", 8);
    resp_reply_bulk(out, ip, strlen(ip));
    resp_reply_bulk(out, "role", 4);
    resp_reply_bulk(out, p->primary ? "master" : "replica", p->primary ? 6 : 7);
    resp_reply_bulk(out, "replication-offset", 18);
    resp_reply_int(out, 0);
    resp_reply_bulk(out, "health", 6);
    resp_reply_bulk(out, "online", 6);
}

static void cluster_shards(struct resp_request *req, const struct sequence_peer *p, size_t n) {
    int r3 = req->client->resp3;
    if (n == 0 || !p[0].primary) {
        resp_reply_array(req->out, 0);
        return;
    }
    resp_reply_array(req->out, 1);
    resp_reply_map(req->out, 2, r3);
    resp_reply_bulk(req->out, "slots", 5);
    resp_reply_array(req->out, 2);
    resp_reply_int(req->out, 0);
    resp_reply_int(req->out, SEQUENCE_KEYSLOTS - 1);
    resp_reply_bulk(req->out, "nodes", 5);
    resp_reply_array(req->out, n);
    for (size_t i = 0; i < n; i++) {
        shard_node(req->out, &p[i], r3);
    }
}

static void cluster_nodes(struct resp_request *req, const struct sequence_peer *p, size_t n) {
    struct sbuf b = SBUF_INIT;
    char primary_id[41] = "-";
    if (n > 0 && p[0].primary) {
        node_id(p[0].http, primary_id);
    }
    for (size_t i = 0; i < n; i++) {
        char ip[SEQUENCE_PEER_ADDR], id[41];
        long port = 0;
        split_addr(p[i].resp, ip, sizeof(ip), &port);
        node_id(p[i].http, id);
        sbuf_printf(&b, "%s %s:%ld@%ld %s%s %s 0 0 1 connected%s\n", id, ip, port, port + 10000,
                    p[i].self ? "myself," : "", p[i].primary ? "master" : "slave",
                    p[i].primary ? "-" : primary_id, p[i].primary ? " 0-16383" : "");
    }
    resp_reply_verbatim(req->out, b.data ? b.data : "", b.len, req->client->resp3);
    sbuf_free(&b);
}

static void cluster_info(struct resp_request *req, const struct sequence_peer *p, size_t n) {
    int ok = n > 0 && p[0].primary;
    char text[512];
    int len =
        snprintf(text, sizeof(text),
                 "cluster_enabled:1\r\ncluster_state:%s\r\ncluster_slots_assigned:%d\r\n"
                 "cluster_slots_ok:%d\r\ncluster_slots_pfail:0\r\ncluster_slots_fail:0\r\n"
                 "cluster_known_nodes:%zu\r\ncluster_size:%d\r\ncluster_current_epoch:1\r\n"
                 "cluster_my_epoch:1\r\n",
                 ok ? "ok" : "fail", ok ? SEQUENCE_KEYSLOTS : 0, ok ? SEQUENCE_KEYSLOTS : 0, n, ok);
    resp_reply_verbatim(req->out, text, (size_t)len, req->client->resp3);
}

/* ---- sharded sequences (leafd.sequence.sharding): a shard per owner -------------- */

struct shard_view {
    struct sequence_peer peers[SEQUENCE_MAX_PEERS];
    size_t npeers;
    struct sequence_shard_view r[SEQUENCE_SHARD_VIEW_MAX];
    size_t n;
};

/* The map with owners that speak RESP; ranges without one are left out (not served). */
static void shard_view_get(const struct door_ctx *ctx, struct shard_view *v) {
    v->n =
        sequence_service_shards(ctx->sequence, v->peers, &v->npeers, v->r, SEQUENCE_SHARD_VIEW_MAX);
    size_t k = 0;
    for (size_t i = 0; i < v->n; i++) {
        if (v->r[i].owner >= 0 && v->peers[v->r[i].owner].resp[0] != '\0') {
            v->r[k++] = v->r[i];
        }
    }
    v->n = k;
}

static size_t shard_resp_peers(const struct shard_view *v) {
    size_t k = 0;
    for (size_t i = 0; i < v->npeers; i++) {
        k += v->peers[i].resp[0] != '\0';
    }
    return k;
}

/* Every range: [start, end, owner, the other nodes as its replicas]. */
static void sharded_slots(struct resp_request *req, const struct shard_view *v) {
    size_t others = shard_resp_peers(v) - 1;
    resp_reply_array(req->out, v->n);
    for (size_t i = 0; i < v->n; i++) {
        int o = v->r[i].owner;
        resp_reply_array(req->out, 3 + others);
        resp_reply_int(req->out, v->r[i].start);
        resp_reply_int(req->out, v->r[i].end);
        node_triple(req->out, &v->peers[o]);
        for (size_t k = 0; k < v->npeers; k++) {
            if ((int)k != o && v->peers[k].resp[0] != '\0') {
                node_triple(req->out, &v->peers[k]);
            }
        }
    }
}

static size_t shard_ranges_of(const struct shard_view *v, int owner) {
    size_t k = 0;
    for (size_t i = 0; i < v->n; i++) {
        k += v->r[i].owner == owner;
    }
    return k;
}

static void sharded_shards(struct resp_request *req, const struct shard_view *v) {
    int r3 = req->client->resp3;
    size_t owners = 0;
    for (size_t k = 0; k < v->npeers; k++) {
        owners += shard_ranges_of(v, (int)k) > 0;
    }
    resp_reply_array(req->out, owners);
    for (size_t k = 0; k < v->npeers; k++) {
        size_t nr = shard_ranges_of(v, (int)k);
        if (nr == 0) {
            continue;
        }
        resp_reply_map(req->out, 2, r3);
        resp_reply_bulk(req->out, "slots", 5);
        resp_reply_array(req->out, 2 * nr);
        for (size_t i = 0; i < v->n; i++) {
            if (v->r[i].owner == (int)k) {
                resp_reply_int(req->out, v->r[i].start);
                resp_reply_int(req->out, v->r[i].end);
            }
        }
        resp_reply_bulk(req->out, "nodes", 5);
        resp_reply_array(req->out, shard_resp_peers(v));
        struct sequence_peer p = v->peers[k];
        p.primary = 1;
        shard_node(req->out, &p, r3);
        for (size_t j = 0; j < v->npeers; j++) {
            if (j != k && v->peers[j].resp[0] != '\0') {
                p = v->peers[j];
                p.primary = 0;
                shard_node(req->out, &p, r3);
            }
        }
    }
}

static void sharded_nodes(struct resp_request *req, const struct shard_view *v) {
    struct sbuf b = SBUF_INIT;
    for (size_t k = 0; k < v->npeers; k++) {
        const struct sequence_peer *p = &v->peers[k];
        char ip[SEQUENCE_PEER_ADDR], id[41];
        long port = 0;
        if (p->resp[0] == '\0') {
            continue;
        }
        split_addr(p->resp, ip, sizeof(ip), &port);
        node_id(p->http, id);
        sbuf_printf(&b, "%s %s:%ld@%ld %smaster - 0 0 1 connected", id, ip, port, port + 10000,
                    p->self ? "myself," : "");
        for (size_t i = 0; i < v->n; i++) {
            if (v->r[i].owner == (int)k) {
                sbuf_printf(&b, " %d-%d", v->r[i].start, v->r[i].end);
            }
        }
        sbuf_putc(&b, '\n');
    }
    resp_reply_verbatim(req->out, b.data ? b.data : "", b.len, req->client->resp3);
    sbuf_free(&b);
}

static void sharded_info(struct resp_request *req, const struct shard_view *v) {
    int slots = 0;
    size_t owners = 0;
    for (size_t i = 0; i < v->n; i++) {
        slots += v->r[i].end - v->r[i].start + 1;
    }
    for (size_t k = 0; k < v->npeers; k++) {
        owners += shard_ranges_of(v, (int)k) > 0;
    }
    char text[512];
    int len = snprintf(text, sizeof(text),
                       "cluster_enabled:1\r\ncluster_state:%s\r\ncluster_slots_assigned:%d\r\n"
                       "cluster_slots_ok:%d\r\ncluster_slots_pfail:0\r\ncluster_slots_fail:0\r\n"
                       "cluster_known_nodes:%zu\r\ncluster_size:%zu\r\ncluster_current_epoch:1\r\n"
                       "cluster_my_epoch:1\r\n",
                       slots == SEQUENCE_KEYSLOTS ? "ok" : "fail", slots, slots,
                       shard_resp_peers(v), owners);
    resp_reply_verbatim(req->out, text, (size_t)len, req->client->resp3);
}

/* CLUSTER SLOTS|SHARDS|NODES|INFO of a sharded cluster; 0 when sub is none of them. */
static int cluster_sharded(struct resp_request *req) {
    static const char *const subs[] = {"slots", "shards", "nodes", "info"};
    int which = -1;
    for (int i = 0; i < 4; i++) {
        which = which < 0 && resp_arg_is(&req->cmd, 1, subs[i]) ? i : which;
    }
    if (which < 0) {
        return 0;
    }
    struct shard_view *v = malloc(sizeof(*v));
    if (v == NULL) {
        resp_reply_error(req->out, "ERR out of memory");
        return 1;
    }
    shard_view_get(req->ctx, v);
    if (which == 0) {
        sharded_slots(req, v);
    } else if (which == 1) {
        sharded_shards(req, v);
    } else if (which == 2) {
        sharded_nodes(req, v);
    } else {
        sharded_info(req, v);
    }
    free(v);
    return 1;
}

leaf_status_t command_cluster(struct resp_request *req) {
    const struct door_ctx *ctx = req->ctx;
    const struct resp_cmd *c = &req->cmd;
    if (!sequence_service_enabled(ctx->sequence)) {
        resp_reply_error(req->out, "ERR This instance has cluster support disabled");
        return LEAF_OK;
    }
    if (sequence_service_sharded(ctx->sequence) && cluster_sharded(req)) {
        return LEAF_OK;
    }
    struct sequence_peer p[SEQUENCE_MAX_PEERS];
    size_t n = resp_peers(ctx, p, SEQUENCE_MAX_PEERS);
    if (resp_arg_is(c, 1, "slots")) {
        cluster_slots(req, p, n);
    } else if (resp_arg_is(c, 1, "shards")) {
        cluster_shards(req, p, n);
    } else if (resp_arg_is(c, 1, "nodes")) {
        cluster_nodes(req, p, n);
    } else if (resp_arg_is(c, 1, "info")) {
        cluster_info(req, p, n);
    } else if (resp_arg_is(c, 1, "myid")) {
        char id[41];
        size_t i = 0;
        while (i < n && !p[i].self) {
            i++;
        }
        node_id(i < n ? p[i].http : "", id);
        resp_reply_bulk(req->out, id, 40);
    } else if (resp_arg_is(c, 1, "keyslot") && c->argc == 3) {
        resp_reply_int(req->out, sequence_keyslot(c->argv[2], c->argvlen[2]));
    } else {
        resp_reply_errorf(req->out, "ERR unknown subcommand '%.64s'. Try CLUSTER HELP.",
                          c->argv[1]);
    }
    return LEAF_OK;
}
