#ifndef LEAF_SNOWFLAKE_SERVICE_CLAIM_H
#define LEAF_SNOWFLAKE_SERVICE_CLAIM_H

/*
 * Lease mode's claims, private to src/node/snowflake: the calls of
 * snowflake_service_claim.c, made only by snowflake_service_lease.c, which drives
 * them. The state they change is in snowflake_service_lease_types.h (the floor).
 * Layer: the node (src/node/snowflake), below snowflake_service_lease.c and over
 * snowflake_service_cache.c; the pure rules are zk/zk_lease.c.
 */
#include <stddef.h>
#include <stdint.h>

#include "snowflake_service_lease_types.h"
#include "zk_lease.h"
#include "zk_session.h"

struct snowflake_service;

/* snowflake_service_claim.c: claiming a slot (control thread) */
void snowflake_service_claim_list(struct snowflake_service *n, enum lease_purpose purpose);
void snowflake_service_claim_candidates(struct snowflake_service *n);
void snowflake_service_claim_try(struct snowflake_service *n);
void snowflake_service_claim_reply(struct snowflake_service *n, const struct zk_event *ev);
size_t snowflake_service_claim_data(struct snowflake_service *n, int64_t reserved, uint64_t token,
                                    char *buf, size_t cap);
int64_t snowflake_service_claim_high(struct snowflake_service *n);
enum zk_lease_write_rc snowflake_service_claim_write_rc(enum zk_result r);
void snowflake_service_claim_free(struct snowflake_service *n);
void snowflake_service_claim_publish(struct snowflake_service *n);
void snowflake_service_claim_store_cache(struct snowflake_service *n);

#endif
