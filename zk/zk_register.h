#ifndef LEAF_ZK_REGISTER_H
#define LEAF_ZK_REGISTER_H

/*
 * Start-up registration under leaf_forever and leaf_temporary, with the blocking calls of
 * zk_session; run once by the main thread before the event loops start.
 *
 * 1. Create /snowflake/{name}/leaf_forever and leaf_temporary as needed.
 * 2. Find this ip:port among the leaf_forever children and reuse its worker
 *    ID and stored timestamp; or else (first registration)
 * 3. create {ip}:{port}- PERSISTENT_SEQUENTIAL and take the worker ID from
 *    the path actually created (Leaf left it at 0: defect 2).
 * The clock check against the live peers runs at every start, before the
 * registration (zk_register_peer_offsets, src/node/snowflake/snowflake_service_identity.c).
 */
#include <stdint.h>

#include "status.h"
#include "zk_layout.h"
#include "zk_record.h"
#include "zk_session.h"

#define ZK_PEER_TIMEOUT_MS 1000

struct zk_registration {
    int64_t worker_id;
    int64_t zk_timestamp; /* stored in the leaf_forever node; -1 when none */
    int created;          /* 1 when this start created the node */
    int32_t version;      /* the node's data version (the fence of the node's time writes) */
    char forever_path[ZK_PATH_MAX];
};

/*
 * Returns LEAF_OK; LEAF_EUNAVAIL when ZooKeeper could not be used (the
 * caller may start from the local cache); LEAF_ERANGE for a worker ID over
 * l->max_worker_id (1023 in the default layout); LEAF_ERR otherwise. Every
 * refusal is logged with its reason.
 */
leaf_status_t zk_register(struct zk_session *s, const struct zk_layout *l,
                          const struct zk_node_data *self, int64_t (*wall_ms)(void),
                          struct zk_registration *out);

/*
 * Asks every live peer under leaf_temporary (but this identity) for its
 * time: *offsets (malloc'd, free it) holds *asked offsets (peer minus own,
 * zk_clock_offset); *live counts the peers listed. No peer: LEAF_OK, 0.
 */
leaf_status_t zk_register_peer_offsets(struct zk_session *s, const struct zk_layout *l,
                                       int64_t **offsets, int *asked, int *live);

#endif
