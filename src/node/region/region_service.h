#ifndef LEAF_REGION_SERVICE_H
#define LEAF_REGION_SERVICE_H

/*
 * This node's region claim (docs/regions.md, "Region claims"): with
 * leafd.region.count > 1 the region's ID is claimed once in the registry
 * ZooKeeper (leafd.region.registry.zk.address) as
 * /leafd-regions/{leaf.name}/{leafd.region.id} holding leafd.region, and the
 * claim, once confirmed, is copied to {leafd.data.dir}/{leaf.name}/region.properties.
 * The rules are zk/zk_region.h's; this file does the I/O.
 *
 * At start: an ID claimed by another region name refuses the start (naming
 * both); confirmed now, or confirmed earlier (the copy) while the registry
 * cannot be reached, the node serves; neither, it starts not ready and says
 * why, and serves once the registry confirms the claim.
 *
 * Off the ID path: the registry has a session of its own (not the region's
 * ZooKeeper), owned by the start and then by the service's thread, which keeps
 * confirming (every REGION_SERVICE_RETRY_MS until confirmed, then every
 * REGION_SERVICE_RECHECK_MS) with blocking calls. An ID request reads one
 * atomic flag (region_service_ready) and never waits on the registry.
 *
 * Threads: created, started, stopped and freed by the control thread. The
 * thread owns the registry session after the start (it dispatches the
 * session's events, so an expired session is replaced). The view (state, reason,
 * the names of the regions read from the registry) is guarded by the
 * service's mutex; any thread may read it through the functions below.
 * With one region (the default) the service does nothing and is always ready.
 */
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "status.h"
#include "zk_region.h"

#define REGION_SERVICE_RETRY_MS 1000      /* a claim not confirmed yet: the next try */
#define REGION_SERVICE_RECHECK_MS 30000   /* a confirmed claim is read again this often */
#define REGION_SERVICE_START_WAIT_MS 3000 /* the start waits this long for the registry */
#define REGION_SERVICE_TICK_MS 500        /* the thread's longest wait: a stop is seen this soon */

struct uv_loop_s;
struct region_service;

/* What /ready, /cluster and the metrics show of the region. */
struct region_service_view {
    int enabled; /* leafd.region.count > 1 */
    int ready;   /* the claim is confirmed (now or, the registry away, earlier) */
    char name[64];
    int64_t id, count;
    const char *source;   /* "registry", "cache" (the copy stands in) or "none" */
    int registry_up;      /* the registry session is connected */
    int64_t confirmed_ms; /* wall clock of the last confirmation (0: none) */
    char reason[512];     /* why not ready ("" when ready) */
    int homes;            /* the names whose home this node knows (docs/regions.md, "Homes") */
    int npeers;           /* leafd.region.peers, and whether each answered its last probe */
    struct {
        char name[ZK_REGION_NAME_MAX];
        char http[ZK_REGION_PEER_ADDR];
        int answers;
    } peers[ZK_REGION_PEERS_MAX];
};

leaf_status_t region_service_create(struct region_service **out, const struct leaf_config *cfg,
                                    struct uv_loop_s *control_loop);
/*
 * With regions: reads the copy, opens the registry session, waits up to
 * REGION_SERVICE_START_WAIT_MS for the claim and decides (zk_region_decide).
 * LEAF_EINVAL (logged, naming both regions) when another region holds the
 * ID; else LEAF_OK, ready or not, and the thread keeps confirming.
 */
leaf_status_t region_service_start(struct region_service *rs);
/* Stops the thread and closes the registry session (the claim stays: it is persistent). */
void region_service_stop(struct region_service *rs);
void region_service_free(struct region_service *rs);

/* Any thread, on the ID path: 1 when IDs may be issued (always with one region, or rs NULL). */
int region_service_ready(const struct region_service *rs);

/* Any thread: a copy of the view (rs NULL: one region, disabled). */
void region_service_view(struct region_service *rs, struct region_service_view *v);

/* Any thread: the name claimed for region ID id, as last read from the registry (or this node's
 * own); 1 and buf filled when known, else 0. */
int region_service_name_of(struct region_service *rs, int64_t id, char *buf, size_t cap);

/*
 * Homes (docs/regions.md, "Homes"): a sequence, keyed space or numbering is
 * issued only in its home region. Where the home of (k, name) is, from the
 * table read from the registry (never waited on):
 * - REGION_HOME_HERE: this region, or none known and claim is 0 (served as
 *   with one region);
 * - REGION_HOME_AWAY: another region that answers: out names it and where its
 *   nodes are (leafd.region.peers);
 * - REGION_HOME_UNREACHABLE: another region that does not answer now, or
 *   that leafd.region.peers does not name (out->region names it);
 * - REGION_HOME_PENDING: none known and claim is 1: a claim for this region
 *   is asked of the registry; ask again shortly.
 * With one region (or rs NULL) always REGION_HOME_HERE.
 */
enum region_service_where {
    REGION_HOME_HERE,
    REGION_HOME_AWAY,
    REGION_HOME_UNREACHABLE,
    REGION_HOME_PENDING
};
struct region_service_home {
    char region[ZK_REGION_NAME_MAX];
    char http[ZK_REGION_PEER_ADDR];
    char resp[ZK_REGION_PEER_ADDR]; /* "" when leafd.region.peers gives none */
};
enum region_service_where region_service_home(struct region_service *rs, enum zk_region_kind k,
                                              const char *name, size_t len, int claim,
                                              struct region_service_home *out);

/*
 * Moving a home here (POST /api/region/adopt, docs/regions.md, "Moving a home"): the registry's
 * home of (k, name) is switched from region `from` to this node's region with a conditional
 * write, and every node reads its homes again. Never waited on: LEAF_EAGAIN while the region
 * thread works on it (ask again); LEAF_OK once the registry names this region; LEAF_EEXIST
 * when it names a third region (holder); LEAF_ENOTFOUND when the name has no home; LEAF_EBUSY
 * while another switch is under way; LEAF_EUNAVAIL with one region.
 */
leaf_status_t region_service_switch(struct region_service *rs, enum zk_region_kind k,
                                    const char *name, size_t len, const char *from, char *holder,
                                    size_t cap);

/* 1 when region names another region of leafd.region.peers (out filled), 0 when not. */
int region_service_peer(struct region_service *rs, const char *region,
                        struct region_service_home *out);

#endif
