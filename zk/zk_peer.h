#ifndef LEAF_ZK_PEER_H
#define LEAF_ZK_PEER_H

/*
 * Asks a peer for its time: GET /api/snowflake/time on ip:port, answered as
 * {"timestamp":<ms>}. Blocking with a deadline; used only at start-up, before
 * the event loops run. Plain sockets, no ZooKeeper or libuv header.
 */
#include <stdint.h>

#include "status.h"

/*
 * On LEAF_OK, *sent_ms / *recv_ms are the own wall clock just before the
 * request and just after the answer, *peer_ms the peer's time. Any failure
 * (connect, timeout, bad answer) is LEAF_EUNAVAIL, logged as a warning
 * naming the peer.
 */
leaf_status_t zk_peer_time(const char *ip, int port, int timeout_ms, int64_t *sent_ms,
                           int64_t *peer_ms, int64_t *recv_ms);

#endif
