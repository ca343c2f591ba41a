#ifndef LEAF_DOOR_CTX_H
#define LEAF_DOOR_CTX_H

/*
 * What every request of either protocol reaches the node through: a
 * struct door_ctx that main() builds before the loops start and never
 * changes afterwards (so any loop thread may read it). It sits below the
 * doors that take it: the HTTP handlers (src/api), the RESP commands
 * (src/commands), the ID path and the checks of who may ask (src/door), the
 * pages (src/pages) and the metrics (src/metrics). It includes the services
 * below it and names no door: the metrics it holds only as an opaque pointer.
 */
#include <stdatomic.h>
#include <stdint.h>

#include "auth_limit.h"
#include "config.h"
#include "http_conn.h"
#include "node_survey.h"
#include "node_zk.h"
#include "region_service.h"
#include "segment_service.h"
#include "sequence_service.h"
#include "snowflake_service.h"
#include "user_service.h"
#include "zk_session.h"

struct metrics;

/* The protocols, as the metrics' protocol label and the connection counts know them. */
enum door_proto { DOOR_PROTO_HTTP, DOOR_PROTO_RESP, DOOR_NPROTOS };

struct door_ctx {
    const struct leaf_config *cfg;
    struct snowflake_service *snowflake;
    struct segment_service *segment;
    struct sequence_service *sequence;
    struct user_service *users;
    struct region_service *region; /* this node's region claim (always ready with one region) */
    struct metrics *metrics;
    /* Opaque IDs: one cipher context per event loop (indexed by the loop),
     * each used by its loop's thread only; NULL when leafd.opaque.key is empty. */
    struct segment_opaque *opaque;
    int opaque_loops;
    int64_t started_ms; /* wall clock at start */
    long pid;
    /* Open connections of a protocol's listener (the server's count). */
    uint64_t (*connections)(void *arg, enum door_proto proto);
    /* Connections closed because their client left its replies unread (conn_arg too). */
    uint64_t (*closed_unread)(void *arg);
    void *conn_arg;
    struct node_survey *cluster;   /* the /cluster page's survey of the live nodes */
    struct zk_session *zk;         /* the process's one ZooKeeper session; NULL without it */
    struct node_zk *node_zk;       /* its owner: the trees' ACL stage (node_zk_held_back) */
    struct auth_limit *auth_limit; /* failed authentications per client address (thread-safe) */
    /* 1 once a stop began (the SIGTERM delay of leafd.stop.delay.ms, then the drain): /ready
     * answers 503 from then on. Written by the control thread, read by any; NULL: never. */
    const atomic_int *stopping;
};

static inline const struct door_ctx *door_ctx(const struct http_request *req) {
    return (const struct door_ctx *)req->ctx;
}

#endif
