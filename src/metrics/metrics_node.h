#ifndef LEAF_METRICS_NODE_H
#define LEAF_METRICS_NODE_H

/*
 * The node's families (metrics_node.c): what the services' views say, read
 * once per scrape into a struct metrics_snap. The request families are
 * metrics.c's; the table of all of them is metrics_scrape.c's.
 */
#include "metrics_snap.h"

/* Reads every view of the node into s (the exported tags: the least runway first). */
void metrics_node_snap(const struct api_ctx *ctx, struct metrics_snap *s);
void metrics_node_snap_free(struct metrics_snap *s);

/* Rows of METRICS_FAMILIES. */
void f_clock_backwards(struct metrics_out *o, const struct metrics_snap *s);
void f_seq_exhausted(struct metrics_out *o, const struct metrics_snap *s);
void f_worker_id(struct metrics_out *o, const struct metrics_snap *s);
void f_years_left(struct metrics_out *o, const struct metrics_snap *s);
void f_clock_lead(struct metrics_out *o, const struct metrics_snap *s);
void f_clock_lead_max(struct metrics_out *o, const struct metrics_snap *s);
void f_http_connections(struct metrics_out *o, const struct metrics_snap *s);
void f_zk_connected(struct metrics_out *o, const struct metrics_snap *s);
void f_zk_reconnects(struct metrics_out *o, const struct metrics_snap *s);
void f_zk_expirations(struct metrics_out *o, const struct metrics_snap *s);
void f_zk_ephemeral(struct metrics_out *o, const struct metrics_snap *s);
void f_zk_report_age(struct metrics_out *o, const struct metrics_snap *s);
void f_local_report_age(struct metrics_out *o, const struct metrics_snap *s);
void f_reserved_ahead(struct metrics_out *o, const struct metrics_snap *s);
void f_lease_slot(struct metrics_out *o, const struct metrics_snap *s);
void f_lease_held(struct metrics_out *o, const struct metrics_snap *s);
void f_lease_claims(struct metrics_out *o, const struct metrics_snap *s);
void f_lease_claims_lost(struct metrics_out *o, const struct metrics_snap *s);
void f_lease_switches(struct metrics_out *o, const struct metrics_snap *s);
void f_lease_fence_failures(struct metrics_out *o, const struct metrics_snap *s);
void f_lease_slots(struct metrics_out *o, const struct metrics_snap *s);
void f_lease_seen_held(struct metrics_out *o, const struct metrics_snap *s);
void f_seg_remaining(struct metrics_out *o, const struct metrics_snap *s);
void f_seg_step(struct metrics_out *o, const struct metrics_snap *s);
void f_seg_issued(struct metrics_out *o, const struct metrics_snap *s);
void f_seg_fetches(struct metrics_out *o, const struct metrics_snap *s);
void f_seg_fetch_errors(struct metrics_out *o, const struct metrics_snap *s);
void f_seg_runway(struct metrics_out *o, const struct metrics_snap *s);
void f_seg_runway_min(struct metrics_out *o, const struct metrics_snap *s);
void f_seg_tags(struct metrics_out *o, const struct metrics_snap *s);
void f_seg_tags_exported(struct metrics_out *o, const struct metrics_snap *s);
void f_seg_latency(struct metrics_out *o, const struct metrics_snap *s);
void f_seg_db_errors(struct metrics_out *o, const struct metrics_snap *s);
void f_seg_db_up(struct metrics_out *o, const struct metrics_snap *s);
void f_seg_db_host_up(struct metrics_out *o, const struct metrics_snap *s);
void f_seg_db_host_in_use(struct metrics_out *o, const struct metrics_snap *s);
void f_seg_db_host_moves(struct metrics_out *o, const struct metrics_snap *s);
void f_seg_lookups(struct metrics_out *o, const struct metrics_snap *s);
void f_seg_lookups_refused(struct metrics_out *o, const struct metrics_snap *s);
void f_seq_primary(struct metrics_out *o, const struct metrics_snap *s);
void f_seq_slots(struct metrics_out *o, const struct metrics_snap *s);
void f_seq_slot_moves(struct metrics_out *o, const struct metrics_snap *s);
void f_seq_issuing(struct metrics_out *o, const struct metrics_snap *s);
void f_seq_elections(struct metrics_out *o, const struct metrics_snap *s);
void f_seq_demotions(struct metrics_out *o, const struct metrics_snap *s);
void f_seq_fences(struct metrics_out *o, const struct metrics_snap *s);
void f_seq_writes(struct metrics_out *o, const struct metrics_snap *s);
void f_seq_write_failures(struct metrics_out *o, const struct metrics_snap *s);
void f_seq_issued(struct metrics_out *o, const struct metrics_snap *s);
void f_seq_headroom(struct metrics_out *o, const struct metrics_snap *s);
void f_seq_headroom_each(struct metrics_out *o, const struct metrics_snap *s);
void f_auth_failures(struct metrics_out *o, const struct metrics_snap *s);
void f_auth_denied(struct metrics_out *o, const struct metrics_snap *s);
void f_auth_users(struct metrics_out *o, const struct metrics_snap *s);
void f_auth_rejected(struct metrics_out *o, const struct metrics_snap *s);
void f_auth_reloads(struct metrics_out *o, const struct metrics_snap *s);
void f_auth_age(struct metrics_out *o, const struct metrics_snap *s);

#endif
