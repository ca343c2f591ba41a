#ifndef LEAF_SNOWFLAKE_SERVICE_LEASE_H
#define LEAF_SNOWFLAKE_SERVICE_LEASE_H

/*
 * Lease mode's calls, private to src/node/snowflake: snowflake_service_lease.c
 * holds a slot and drives the claims that snowflake_service_claim.c makes
 * (never the other way round); snowflake_service.c calls the
 * snowflake_service_lease_* functions. The state is in
 * snowflake_service_lease_types.h (the floor), the claims' calls in
 * snowflake_service_claim.h. The decisions are the pure rules of zk/zk_lease.c.
 * Layer: the node (src/node/snowflake), below snowflake_service.c and over
 * snowflake_service_claim.c.
 */
#include <stdint.h>

#include "status.h"

struct snowflake_service;
struct zk_cache_data;
struct zk_event;

/* snowflake_service_lease.c: lease mode, driven by snowflake_service.c (control thread,
 * except snowflake_service_lease_want_switch: any event loop) */
void snowflake_service_lease_init(struct snowflake_service *n);
leaf_status_t snowflake_service_lease_start(struct snowflake_service *n,
                                            const struct zk_cache_data *cache);
void snowflake_service_lease_cron(struct snowflake_service *n);
void snowflake_service_lease_event(struct snowflake_service *n, const struct zk_event *ev);
void snowflake_service_lease_state(struct snowflake_service *n, int state);
void snowflake_service_lease_poke(struct snowflake_service *n);
void snowflake_service_lease_want_switch(struct snowflake_service *n, int64_t wait_ms);
void snowflake_service_lease_stop(struct snowflake_service *n, int64_t final_ms);
void snowflake_service_lease_close(struct snowflake_service *n);
void snowflake_service_lease_free(struct snowflake_service *n);

#endif
