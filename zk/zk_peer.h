#ifndef LEAF_ZK_PEER_H
#define LEAF_ZK_PEER_H

/*
 * Asks a peer over HTTP: its time (GET /api/snowflake/time, answered as
 * {"timestamp":<ms>}) at start-up, before the event loops run, and any page
 * for the cluster survey (src/node/node_survey.c, its own thread).
 * Blocking with a deadline. Plain sockets, no ZooKeeper or libuv header.
 */
#include <stdint.h>

#include "status.h"

/*
 * On LEAF_OK, *sent_ms / *recv_ms are the own wall clock just before the
 * request and just after the answer, *peer_ms the peer's time. Any failure
 * (connect, timeout, bad answer) is LEAF_EUNAVAIL, logged as a warning
 * naming the peer.
 */
/* One answer of zk_peer_get(): the whole response, the status and where its body starts. */
struct zk_peer_answer {
    char buf[8192];
    int status;
    const char *body; /* inside buf */
    int64_t sent_ms, recv_ms;
    char error[128]; /* why it failed */
};

/*
 * GET path from ip:port (Connection: close), blocking until timeout_ms.
 * LEAF_OK with any HTTP status; LEAF_EUNAVAIL (not logged) with a->error.
 */
leaf_status_t zk_peer_get(const char *ip, int port, const char *path, int timeout_ms,
                          struct zk_peer_answer *a);

leaf_status_t zk_peer_time(const char *ip, int port, int timeout_ms, int64_t *sent_ms,
                           int64_t *peer_ms, int64_t *recv_ms);

#endif
