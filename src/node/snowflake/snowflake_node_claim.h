#ifndef LEAF_SNOWFLAKE_NODE_CLAIM_H
#define LEAF_SNOWFLAKE_NODE_CLAIM_H

/*
 * Lease mode's claims, private to src/node/snowflake: the calls of
 * snowflake_node_claim.c, made only by snowflake_node_lease.c, which drives
 * them. The state they change is in snowflake_node_lease_types.h (the floor).
 * Layer: the node (src/node/snowflake), below snowflake_node_lease.c and over
 * snowflake_node_cache.c; the pure rules are zk/zk_lease.c.
 */
#include <stddef.h>
#include <stdint.h>

#include "snowflake_node_lease_types.h"
#include "zk_lease.h"
#include "zk_session.h"

struct snowflake_node;

/* snowflake_node_claim.c: claiming a slot (control thread) */
void snowflake_node_claim_list(struct snowflake_node *n, enum lease_purpose purpose);
void snowflake_node_claim_candidates(struct snowflake_node *n);
void snowflake_node_claim_try(struct snowflake_node *n);
void snowflake_node_claim_reply(struct snowflake_node *n, const struct zk_event *ev);
size_t snowflake_node_claim_data(struct snowflake_node *n, int64_t reserved, uint64_t token,
                                 char *buf, size_t cap);
int64_t snowflake_node_claim_high(struct snowflake_node *n);
enum zk_lease_write_rc snowflake_node_claim_write_rc(enum zk_result r);
void snowflake_node_claim_free(struct snowflake_node *n);
void snowflake_node_claim_publish(struct snowflake_node *n);
void snowflake_node_claim_store_cache(struct snowflake_node *n);

#endif
