#ifndef LEAF_SNOWFLAKE_NODE_LEASE_H
#define LEAF_SNOWFLAKE_NODE_LEASE_H

/*
 * Lease mode's calls, private to src/node/snowflake: snowflake_node_lease.c
 * holds a slot and drives the claims that snowflake_node_claim.c makes
 * (never the other way round); snowflake_node.c calls the
 * snowflake_node_lease_* functions. The state is in
 * snowflake_node_lease_types.h (the floor), the claims' calls in
 * snowflake_node_claim.h. The decisions are the pure rules of zk/zk_lease.c.
 * Layer: the node (src/node/snowflake), below snowflake_node.c and over
 * snowflake_node_claim.c.
 */
#include <stdint.h>

#include "status.h"

struct snowflake_node;
struct zk_cache_data;
struct zk_event;

/* snowflake_node_lease.c: lease mode, driven by snowflake_node.c (control thread,
 * except snowflake_node_lease_want_switch: any event loop) */
void snowflake_node_lease_init(struct snowflake_node *n);
leaf_status_t snowflake_node_lease_start(struct snowflake_node *n,
                                         const struct zk_cache_data *cache);
void snowflake_node_lease_cron(struct snowflake_node *n);
void snowflake_node_lease_event(struct snowflake_node *n, const struct zk_event *ev);
void snowflake_node_lease_state(struct snowflake_node *n, int state);
void snowflake_node_lease_poke(struct snowflake_node *n);
void snowflake_node_lease_want_switch(struct snowflake_node *n, int64_t wait_ms);
void snowflake_node_lease_stop(struct snowflake_node *n, int64_t final_ms);
void snowflake_node_lease_close(struct snowflake_node *n);
void snowflake_node_lease_free(struct snowflake_node *n);

#endif
