#ifndef LEAF_REGION_HOME_H
#define LEAF_REGION_HOME_H

/*
 * The homes of sequences, keyed spaces and numberings across regions
 * (docs/regions.md, "Homes"): the table of homes read from the registry, the
 * claims this region asks for, and the other regions' addresses
 * (leafd.region.peers) with whether each answers. The region service's thread
 * does the registry's I/O (region_home_tick, blocking calls on the registry
 * session); the peers are probed by a thread of their own (region_home_start),
 * so a registry that does not answer, which holds a blocking call for 2/3 of
 * its session timeout, never delays seeing a cut between the regions or its
 * end. An ID request only reads the table.
 *
 * Threads: created, started, stopped and freed by the control thread; the
 * table and the queue of claims are guarded by the home's mutex, the peers'
 * "up" flags are atomics; any thread may call region_home_find().
 */
#include <stddef.h>

#include "config.h"
#include "region_service.h"
#include "status.h"
#include "zk_region.h"

#define REGION_HOME_MAX 4096          /* homes the table holds */
#define REGION_HOME_PROBE_MS 1000     /* a peer is asked whether it answers this often */
#define REGION_HOME_PROBE_WAIT_MS 400 /* and given this long to answer */
#define REGION_HOME_READ_MS 1000      /* the table is read from the registry this often */

struct zk_session;
struct region_home;

/* LEAF_EINVAL (logged, naming the key) when leafd.region.peers is malformed. */
leaf_status_t region_home_create(struct region_home **out, const struct leaf_config *cfg);
void region_home_free(struct region_home *h);

/* Starts the thread that probes the peers every REGION_HOME_PROBE_MS (none without peers);
 * LEAF_ERR (logged) when it cannot. region_home_stop() ends it (and does nothing without it). */
leaf_status_t region_home_start(struct region_home *h);
void region_home_stop(struct region_home *h);

/* The region thread, with the registry session: the claims asked for and the table read, each
 * when due. */
void region_home_tick(struct region_home *h, struct zk_session *s);

/* Any thread: where the home of (k, name) is (region_service_home). */
enum region_service_where region_home_find(struct region_home *h, enum zk_region_kind k,
                                           const char *name, size_t len, int claim,
                                           struct region_service_home *out);

/*
 * Any thread: asks the region thread to switch the home of (k, name) from region `from` to this
 * region in the registry (region_service_switch). LEAF_EAGAIN: asked, ask again shortly;
 * LEAF_OK: the registry names this region; LEAF_EEXIST: it names a third region (in holder);
 * LEAF_ENOTFOUND: the name has no home; LEAF_EBUSY: another switch is under way.
 */
leaf_status_t region_home_switch(struct region_home *h, enum zk_region_kind k, const char *name,
                                 size_t len, const char *from, char *holder, size_t cap);

/* Any thread: the homes known and the peers' state into v (region_service_view). */
void region_home_view(struct region_home *h, struct region_service_view *v);

/* Any thread: 1 and out filled when leafd.region.peers names region, else 0. */
int region_home_peer(struct region_home *h, const char *region, struct region_service_home *out);

#endif
