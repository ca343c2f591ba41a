/*
 * The families of the node's services on /metrics: connections, snowflake,
 * ZooKeeper, segment (with the bounded per-tag set: the tags with the least
 * runway first), sequence and users. Every view is read once per scrape into
 * a struct metrics_snap, which every family's writer reads; each family is a
 * row of PAGE_METRICS_NODE_FAMILIES below (its writer, name, type and help).
 */
#include "page_metrics_node.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "metrics_text.h"
#include "page_metrics_snap.h"
#include "segment_tags.h"
#include "sequence_keyed.h"
#include "snowflake_id.h"
#include "validate.h"
#include "zk_lease.h"
#include "zk_session.h"

/* A family's writer: a row of PAGE_METRICS_NODE_FAMILIES. */
typedef void (*metrics_family_fn)(struct metrics_out *o, const struct metrics_snap *s);

/* ---- connections ---- */

static void f_http_connections(struct metrics_out *o, const struct metrics_snap *s) {
    const struct door_ctx *c = s->ctx;
    metrics_sample_u(o, "", "protocol=\"http\"",
                     c->connections ? c->connections(c->conn_arg, DOOR_PROTO_HTTP) : 0);
    if (c->cfg->resp_port != 0) {
        metrics_sample_u(o, "", "protocol=\"resp\"",
                         c->connections ? c->connections(c->conn_arg, DOOR_PROTO_RESP) : 0);
    }
}

static void f_http_closed_unread(struct metrics_out *o, const struct metrics_snap *s) {
    const struct door_ctx *c = s->ctx;
    metrics_sample_u(o, "", NULL, c->closed_unread ? c->closed_unread(c->conn_arg) : 0);
}

/* ---- snowflake families ---- */

static void f_clock_backwards(struct metrics_out *o, const struct metrics_snap *s) {
    metrics_sample_u(o, "", "outcome=\"waited\"", s->sf.backwards_waits);
    metrics_sample_u(o, "", "outcome=\"refused\"", s->sf.backwards_errors);
    metrics_sample_u(o, "", "outcome=\"lead\"", s->sf.lead_issues);
}

static void f_clock_lead(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->sf.started) {
        metrics_sample_d(o, NULL, (double)s->sf.clock_lead_ms / 1000.0);
    }
}

static void f_clock_lead_max(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->sf.started) {
        metrics_sample_d(o, NULL, (double)s->sf.max_lead_ms / 1000.0);
    }
}

static void f_seq_exhausted(struct metrics_out *o, const struct metrics_snap *s) {
    metrics_sample_u(o, "", NULL, s->sf.exhaustions);
}

static void f_worker_id(struct metrics_out *o, const struct metrics_snap *s) {
    metrics_sample_i(o, NULL, s->sf.worker_id);
}

static void f_years_left(struct metrics_out *o, const struct metrics_snap *s) {
    metrics_sample_d(o, NULL, s->sf.years_left);
}

/* The snowflake registration's families exist only when it registered through ZooKeeper. */
static int zk_on(const struct metrics_snap *s) {
    return s->sf.started && s->sf.use_zk;
}

static double age_s(int64_t ms) {
    return ms < 0 ? -1.0 : (double)ms / 1000.0;
}

/* The session's families: whenever the process has its one session (any mode). */
static void f_zk_connected(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->zk.on) {
        metrics_sample_d(o, NULL, s->zk.state == ZK_STATE_CONNECTED);
    }
}

static void f_zk_reconnects(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->zk.on) {
        metrics_sample_d(o, NULL, (double)(s->zk.connects > 1 ? s->zk.connects - 1 : 0));
    }
}

static void f_zk_expirations(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->zk.on) {
        metrics_sample_d(o, NULL, (double)s->zk.expirations);
    }
}

static void f_zk_ephemeral(struct metrics_out *o, const struct metrics_snap *s) {
    if (zk_on(s)) {
        metrics_sample_d(o, NULL, s->sf.ephemeral);
    }
}

static void f_zk_report_age(struct metrics_out *o, const struct metrics_snap *s) {
    if (zk_on(s)) {
        metrics_sample_d(o, NULL, age_s(s->sf.zk_report_age_ms));
    }
}

static void f_local_report_age(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->sf.started) {
        metrics_sample_d(o, NULL, age_s(s->sf.local_report_age_ms));
    }
}

static void f_reserved_ahead(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->sf.started) {
        metrics_sample_d(o, NULL, (double)s->sf.reserved_ahead_ms / 1000.0);
    }
}

/* Lease families exist only in lease mode. */
static void f_lease_slot(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->sf.lease) {
        metrics_sample_i(o, NULL, s->sf.lease_slot);
    }
}

static void f_lease_held(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->sf.lease) {
        int held =
            strcmp(s->sf.lease_state, "held") == 0 || strcmp(s->sf.lease_state, "resync") == 0;
        metrics_sample_i(o, NULL, held);
    }
}

static void f_lease_claims(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->sf.lease) {
        metrics_sample_u(o, "", NULL, (uint64_t)s->sf.lease_claims);
    }
}

static void f_lease_claims_lost(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->sf.lease) {
        metrics_sample_u(o, "", NULL, (uint64_t)s->sf.lease_claims_lost);
    }
}

static void f_lease_switches(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->sf.lease) {
        metrics_sample_u(o, "", "outcome=\"switched\"", (uint64_t)s->sf.lease_switches);
        metrics_sample_u(o, "", "outcome=\"no_slot\"", (uint64_t)s->sf.lease_switch_failures);
    }
}

static void f_lease_fence_failures(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->sf.lease) {
        metrics_sample_u(o, "", NULL, (uint64_t)s->sf.lease_fence_failures);
    }
}

/* The slots a lease-mode node can claim: the layout's worker IDs (snowflake_service_lease_init).
 * The fleet's free slots are this minus the nodes holding one (conf/leafd-alerts.yml). */
static void f_lease_slots(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->sf.lease) {
        int bits = snowflake_service_layout(s->ctx->snowflake)->bits[SNOWFLAKE_WORKER];
        metrics_sample_i(o, NULL, bits >= 16 ? ZK_LEASE_MAX_SLOTS : INT64_C(1) << bits);
    }
}

static void f_lease_seen_held(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->sf.lease) {
        metrics_sample_i(o, NULL, s->sf.lease_seen_held);
    }
}

/* ---- segment families ---- */

static void tag_sample(struct metrics_out *o, const struct metrics_tag *t, int64_t v) {
    char labels[VALIDATE_TAG_MAX + 16];
    snprintf(labels, sizeof(labels), "tag=\"%s\"", t->name);
    metrics_sample_i(o, labels, v);
}

#define SEG_TAG_FAMILY(fn, field)                                                                  \
    static void fn(struct metrics_out *o, const struct metrics_snap *s) {                          \
        if (!s->seg.enabled) {                                                                     \
            return;                                                                                \
        }                                                                                          \
        metrics_header(o);                                                                         \
        for (size_t i = 0; i < s->ntags; i++) {                                                    \
            tag_sample(o, &s->tags[i], s->tags[i].field);                                          \
        }                                                                                          \
    }
SEG_TAG_FAMILY(f_seg_remaining, remaining)
SEG_TAG_FAMILY(f_seg_step, step)
SEG_TAG_FAMILY(f_seg_issued, issued)
SEG_TAG_FAMILY(f_seg_fetches, fetches)
SEG_TAG_FAMILY(f_seg_fetch_errors, fetch_errors)
#undef SEG_TAG_FAMILY

static void f_seg_runway(struct metrics_out *o, const struct metrics_snap *s) {
    if (!s->seg.enabled) {
        return;
    }
    metrics_header(o);
    for (size_t i = 0; i < s->ntags; i++) {
        char labels[VALIDATE_TAG_MAX + 16];
        snprintf(labels, sizeof(labels), "tag=\"%s\"", s->tags[i].name);
        metrics_sample_d(o, labels, s->tags[i].runway);
    }
}

static void f_seg_runway_min(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->seg.enabled) {
        metrics_sample_d(o, NULL, s->runway_min);
    }
}

static void f_seg_tags(struct metrics_out *o, const struct metrics_snap *s) {
    if (!s->seg.enabled) {
        return;
    }
    metrics_sample_u(o, "", "state=\"pending\"", s->seg.tags_by_state[SEGMENT_TAG_PENDING]);
    metrics_sample_u(o, "", "state=\"active\"", s->seg.tags_by_state[SEGMENT_TAG_ACTIVE]);
    metrics_sample_u(o, "", "state=\"absent\"", s->seg.tags_by_state[SEGMENT_TAG_ABSENT]);
}

static void f_seg_tags_exported(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->seg.enabled) {
        metrics_sample_u(o, "", NULL, s->ntags);
    }
}

static void f_seg_latency(struct metrics_out *o, const struct metrics_snap *s) {
    if (!s->seg.enabled) {
        return;
    }
    uint64_t cum = 0;
    for (int i = 0; i <= SEGMENT_LATENCY_BUCKETS; i++) {
        cum += s->seg.latency_buckets[i];
        char labels[48];
        if (i < SEGMENT_LATENCY_BUCKETS) {
            snprintf(labels, sizeof(labels), "le=\"%g\"",
                     (double)s->seg.latency_bounds_ms[i] / 1000.0);
        } else {
            snprintf(labels, sizeof(labels), "le=\"+Inf\"");
        }
        metrics_sample_u(o, "_bucket", labels, cum);
    }
    sbuf_printf(o->b, "%s_sum %.6f\n", o->name, (double)s->seg.latency_sum_us / 1e6);
    metrics_sample_u(o, "_count", NULL, cum);
}

static void f_seg_db_errors(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->seg.enabled) {
        metrics_sample_u(o, "", NULL, s->seg.db_errors);
    }
}

static void f_seg_db_up(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->seg.enabled) {
        metrics_sample_i(o, NULL, s->seg.db_up);
    }
}

/* One sample per host of leaf.jdbc.url, labelled host="name:port" and state. */
static void seg_host_samples(struct metrics_out *o, const struct metrics_snap *s, int in_use) {
    const struct segment_hosts *h = &s->seg.db_hosts;
    if (!s->seg.enabled) {
        return;
    }
    for (int i = 0; i < h->n; i++) {
        char labels[320];
        snprintf(labels, sizeof(labels), "host=\"%s:%d\"", h->host[i].name, h->host[i].port);
        int v = in_use ? i == h->current : h->host[i].state == SEGMENT_HOST_UP;
        metrics_sample_i(o, labels, v);
    }
}

static void f_seg_db_host_up(struct metrics_out *o, const struct metrics_snap *s) {
    seg_host_samples(o, s, 0);
}

static void f_seg_db_host_in_use(struct metrics_out *o, const struct metrics_snap *s) {
    seg_host_samples(o, s, 1);
}

static void f_seg_db_host_moves(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->seg.enabled) {
        metrics_sample_u(o, "", NULL, s->seg.db_hosts.moves);
    }
}

static void f_seg_lookups(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->seg.enabled) {
        metrics_sample_u(o, "", NULL, s->seg.lookups);
    }
}

static void f_seg_lookups_refused(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->seg.enabled) {
        metrics_sample_u(o, "", NULL, s->seg.lookups_refused);
    }
}

/* ---- sequence families ---- */

#define SEQ_FAMILY(fn, expr)                                                                       \
    static void fn(struct metrics_out *o, const struct metrics_snap *s) {                          \
        if (s->seq.enabled) {                                                                      \
            metrics_sample_u(o, "", NULL, (uint64_t)(expr));                                       \
        }                                                                                          \
    }
SEQ_FAMILY(f_seq_primary, s->seq.primary)
SEQ_FAMILY(f_seq_issuing, s->seq.live)
SEQ_FAMILY(f_seq_elections, s->seq.elections)
SEQ_FAMILY(f_seq_demotions, s->seq.demotions)
SEQ_FAMILY(f_seq_fences, s->seq.fence_failures)
SEQ_FAMILY(f_seq_writes, s->seq.writes)
SEQ_FAMILY(f_seq_write_failures, s->seq.write_failures)
SEQ_FAMILY(f_seq_issued, s->seq.issued)
#undef SEQ_FAMILY

/*
 * Nodes with leafd.sequence.sharding: the slots this node issues, and slots
 * taken and given away; 0 while sharding is held back (docs/UPGRADING.md), so
 * the series exist from the start.
 */
static void f_seq_slots(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->seq.enabled && (s->seq.sharded || s->seq.sharding_conf)) {
        metrics_sample_u(o, "", NULL, (uint64_t)s->seq.slots);
    }
}

static void f_seq_slot_moves(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->seq.enabled && (s->seq.sharded || s->seq.sharding_conf)) {
        metrics_sample_u(o, "", "direction=\"in\"", s->seq.slots_in);
        metrics_sample_u(o, "", "direction=\"out\"", s->seq.slots_out);
    }
}

static void f_seq_headroom(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->seq.enabled && s->seq.min_headroom >= 0) {
        metrics_sample_i(o, NULL, s->seq.min_headroom);
    }
}

struct seq_each {
    struct metrics_out *o;
    size_t left; /* leafd.metrics.tags.max bounds the per-sequence series too */
};

static void seq_one(const char *name, int64_t acked_max, int64_t last, int64_t headroom,
                    const char *phase, void *arg) {
    struct seq_each *e = arg;
    if (e->left == 0) {
        return;
    }
    e->left--;
    char labels[VALIDATE_TAG_MAX + 48];
    snprintf(labels, sizeof(labels), "sequence=\"%s\",phase=\"%s\"", name, phase);
    metrics_sample_i(e->o, labels, headroom);
}

static void f_seq_headroom_each(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->seq.enabled && s->seq.primary) {
        struct seq_each e = {o, (size_t)s->ctx->cfg->metrics_tags_max};
        sequence_service_each(s->ctx->sequence, seq_one, &e);
    }
}

/* ---- keyed sequences: one series per space (docs/keyed-sequences.md) ---- */

#define KEYED_FAMILY(fn, field)                                                                    \
    static void fn(struct metrics_out *o, const struct metrics_snap *s) {                          \
        for (size_t i = 0; i < s->nkeyed; i++) {                                                   \
            char labels[SEQUENCE_KEYED_NAME_MAX + 16];                                             \
            snprintf(labels, sizeof(labels), "space=\"%s\"", s->keyed[i].name);                    \
            metrics_sample_u(o, "", labels, s->keyed[i].field);                                    \
        }                                                                                          \
    }
KEYED_FAMILY(f_keyed_issued, issued)
KEYED_FAMILY(f_keyed_resident, resident)
KEYED_FAMILY(f_keyed_writes, writes)
KEYED_FAMILY(f_keyed_evictions, evictions)
#undef KEYED_FAMILY

/* ---- users and permissions ---- */

static void f_auth_failures(struct metrics_out *o, const struct metrics_snap *s) {
    for (int i = 0; s->users.enabled && i < USER_FAIL_COUNT; i++) {
        char labels[64];
        snprintf(labels, sizeof(labels), "reason=\"%s\"", user_failure_name((enum user_failure)i));
        metrics_sample_u(o, "", labels, s->users.failures[i]);
    }
}

static void f_auth_denied(struct metrics_out *o, const struct metrics_snap *s) {
    static const char *const rights[3] = {"ids", "create", "admin"};
    for (int i = 0; s->users.enabled && i < 3; i++) {
        char labels[32];
        snprintf(labels, sizeof(labels), "right=\"%s\"", rights[i]);
        metrics_sample_u(o, "", labels, s->users.denied[i]);
    }
}

static void f_auth_users(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->users.enabled) {
        metrics_sample_u(o, "", NULL, s->users.users);
    }
}

static void f_auth_rejected(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->users.enabled) {
        metrics_sample_u(o, "", NULL, s->users.rejected);
    }
}

static void f_auth_reloads(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->users.enabled) {
        metrics_sample_u(o, "", "outcome=\"ok\"", s->users.reloads);
        metrics_sample_u(o, "", "outcome=\"failed\"", s->users.reload_failures);
    }
}

static void f_auth_age(struct metrics_out *o, const struct metrics_snap *s) {
    if (s->users.enabled && s->users.loaded_ms > 0) {
        metrics_sample_d(o, NULL, (double)(clock_wall_ms() - s->users.loaded_ms) / 1000.0);
    }
}

/* The node's families, X(writer, name, type, help), in the order of the scrape. */
#define PAGE_METRICS_NODE_FAMILIES(X)                                                              \
    X(f_clock_backwards, "leafd_snowflake_clock_backwards_total", "counter",                       \
      "Clock steps back seen, by outcome (lead: answered from the bounded lead).")                 \
    X(f_clock_lead, "leafd_snowflake_clock_lead_seconds", "gauge",                                 \
      "How far IDs' time runs ahead of the clock (bounded by leafd.snowflake.max.lead.ms).")       \
    X(f_clock_lead_max, "leafd_snowflake_clock_lead_max_seconds", "gauge",                         \
      "The bound of the lead: leafd.snowflake.max.lead.ms (0 = wait for the clock).")              \
    X(f_seq_exhausted, "leafd_snowflake_sequence_exhausted_total", "counter",                      \
      "Milliseconds whose sequence ran out.")                                                      \
    X(f_worker_id, "leafd_snowflake_worker_id", "gauge", "The worker ID held (-1 = none).")        \
    X(f_years_left, "leafd_snowflake_timestamp_years_left", "gauge",                               \
      "Years before the time field of leafd.snowflake.layout runs out.")                           \
    X(f_http_connections, "leafd_http_connections", "gauge", "Open connections, by protocol.")     \
    X(f_http_closed_unread, "leafd_http_connections_closed_unread_total", "counter",               \
      "Connections closed because their client left its replies unread.")                          \
    X(f_zk_connected, "leafd_zk_session_connected", "gauge",                                       \
      "1 while the ZooKeeper session is connected.")                                               \
    X(f_zk_reconnects, "leafd_zk_session_reconnects_total", "counter",                             \
      "ZooKeeper (re)connections after the first.")                                                \
    X(f_zk_expirations, "leafd_zk_session_expirations_total", "counter",                           \
      "ZooKeeper sessions that expired.")                                                          \
    X(f_zk_ephemeral, "leafd_zk_ephemeral_registered", "gauge",                                    \
      "1 while leaf_temporary/{ip}:{port} exists.")                                                \
    X(f_zk_report_age, "leafd_zk_last_report_age_seconds", "gauge",                                \
      "Seconds since the timestamp was last written to ZooKeeper (-1 = never).")                   \
    X(f_local_report_age, "leafd_snowflake_local_report_age_seconds", "gauge",                     \
      "Seconds since the reservation was last written to the local cache (-1 = never).")           \
    X(f_reserved_ahead, "leafd_snowflake_reserved_ahead_seconds", "gauge",                         \
      "How far the persisted reservation is ahead of the clock.")                                  \
    X(f_lease_slot, "leafd_snowflake_lease_slot", "gauge",                                         \
      "Lease mode: the slot (worker ID) held, -1 none.")                                           \
    X(f_lease_held, "leafd_snowflake_lease_held", "gauge",                                         \
      "Lease mode: 1 while the slot's reservation can be extended.")                               \
    X(f_lease_claims, "leafd_snowflake_lease_claims_total", "counter",                             \
      "Lease mode: slots claimed (start, re-claims, switches).")                                   \
    X(f_lease_claims_lost, "leafd_snowflake_lease_claims_lost_total", "counter",                   \
      "Lease mode: slots lost (session expired or fenced).")                                       \
    X(f_lease_switches, "leafd_snowflake_lease_switches_total", "counter",                         \
      "Lease mode: moves to another slot on a clock step back, by outcome.")                       \
    X(f_lease_fence_failures, "leafd_snowflake_lease_fence_failures_total", "counter",             \
      "Lease mode: reservations refused because someone else wrote the slot.")                     \
    X(f_lease_slots, "leafd_snowflake_lease_slots", "gauge",                                       \
      "Lease mode: the slots there are (the layout's worker IDs) for the cluster's nodes.")        \
    X(f_lease_seen_held, "leafd_snowflake_lease_slots_seen_held", "gauge",                         \
      "Lease mode: slots held by other nodes when this node last found none free (0 once held).")  \
    X(f_seg_remaining, "leafd_segment_remaining_ids", "gauge",                                     \
      "IDs buffered in memory for the tag.")                                                       \
    X(f_seg_step, "leafd_segment_step", "gauge", "Step of the tag's last range (dynamic).")        \
    X(f_seg_issued, "leafd_segment_issued_total", "counter", "Segment IDs issued for the tag.")    \
    X(f_seg_fetches, "leafd_segment_range_fetches_total", "counter",                               \
      "Ranges reserved from leaf_alloc.")                                                          \
    X(f_seg_fetch_errors, "leafd_segment_fetch_errors_total", "counter",                           \
      "Range fetches that failed for want of the database.")                                       \
    X(f_seg_runway, "leafd_segment_runway_seconds", "gauge",                                       \
      "Seconds the buffered IDs last at the tag's recent rate.")                                   \
    X(f_seg_runway_min, "leafd_segment_runway_min_seconds", "gauge",                               \
      "The least runway of any active tag, exported or not.")                                      \
    X(f_seg_tags, "leafd_segment_tags", "gauge", "Tags known to this node, by state.")             \
    X(f_seg_tags_exported, "leafd_segment_tags_exported", "gauge",                                 \
      "Tags with per-tag series in this scrape (leafd.metrics.tags.max).")                         \
    X(f_seg_latency, "leafd_segment_fetch_latency_seconds", "histogram",                           \
      "Time a range reservation took on the database.")                                            \
    X(f_seg_db_errors, "leafd_segment_db_errors_total", "counter",                                 \
      "Database errors (connects and statements).")                                                \
    X(f_seg_db_up, "leafd_segment_db_up", "gauge", "Whether the database connection is up.")       \
    X(f_seg_db_host_up, "leafd_segment_db_host_up", "gauge",                                       \
      "Per host of leaf.jdbc.url: 1 when it last answered healthy (writable, Galera primary).")    \
    X(f_seg_db_host_in_use, "leafd_segment_db_host_in_use", "gauge",                               \
      "Per host of leaf.jdbc.url: 1 for the host ranges are reserved on.")                         \
    X(f_seg_db_host_moves, "leafd_segment_db_host_moves_total", "counter",                         \
      "Times the range connection moved to another host (fail-overs and fail-backs).")             \
    X(f_seg_lookups, "leafd_segment_lookups_total", "counter",                                     \
      "Tag lookups sent to the database.")                                                         \
    X(f_seg_lookups_refused, "leafd_segment_lookups_refused_total", "counter",                     \
      "Unknown tags answered without a lookup, beyond the lookup budget (404 or 503).")            \
    X(f_seq_primary, "leafd_sequence_primary", "gauge",                                            \
      "1 while this node is the sequence primary.")                                                \
    X(f_seq_slots, "leafd_sequence_slots", "gauge",                                                \
      "Sharded sequences: the slots this node issues.")                                            \
    X(f_seq_slot_moves, "leafd_sequence_slot_moves_total", "counter",                              \
      "Sharded sequences: slots this node took over (in) and gave away (out).")                    \
    X(f_seq_issuing, "leafd_sequence_issuing", "gauge",                                            \
      "1 while the primary's lease lets it issue (2/3 of the session timeout).")                   \
    X(f_seq_elections, "leafd_sequence_elections_total", "counter", "Elections this node won.")    \
    X(f_seq_demotions, "leafd_sequence_demotions_total", "counter", "Demotions of this node.")     \
    X(f_seq_fences, "leafd_sequence_fence_failures_total", "counter",                              \
      "Writes refused because another primary wrote since (bad version).")                         \
    X(f_seq_writes, "leafd_sequence_writes_total", "counter",                                      \
      "Sequence high-water marks persisted to ZooKeeper.")                                         \
    X(f_seq_write_failures, "leafd_sequence_write_failures_total", "counter",                      \
      "Sequence writes that failed or whose outcome was unknown.")                                 \
    X(f_seq_issued, "leafd_sequence_issued_total", "counter", "Sequence IDs issued by this node.") \
    X(f_seq_headroom, "leafd_sequence_headroom_min", "gauge",                                      \
      "The least persisted headroom of any serving sequence (IDs issuable without a write).")      \
    X(f_seq_headroom_each, "leafd_sequence_headroom", "gauge",                                     \
      "Persisted headroom per sequence on the primary (at most leafd.metrics.tags.max series).")   \
    X(f_keyed_issued, "leafd_keyed_issued_total", "counter",                                       \
      "Keyed sequence IDs issued by this node, per space.")                                        \
    X(f_keyed_resident, "leafd_keyed_resident_keys", "gauge",                                      \
      "Keys of a keyed space held in this node's memory (bounded by leafd.keyed.max.keys).")       \
    X(f_keyed_writes, "leafd_keyed_section_writes_total", "counter",                               \
      "Writes of a keyed space's section maxima to ZooKeeper by this node, per space.")            \
    X(f_keyed_evictions, "leafd_keyed_evictions_total", "counter",                                 \
      "Cold keys of a keyed space that left this node's memory, per space.")                       \
    X(f_auth_failures, "leafd_auth_failures_total", "counter",                                     \
      "Failed authentications, by reason (never the secret).")                                     \
    X(f_auth_denied, "leafd_auth_denied_total", "counter",                                         \
      "Requests of an authenticated user refused for want of a right, by right.")                  \
    X(f_auth_users, "leafd_auth_users", "gauge", "Users this node applies.")                       \
    X(f_auth_rejected, "leafd_auth_records_ignored", "gauge",                                      \
      "User records in ZooKeeper ignored as malformed at the last load.")                          \
    X(f_auth_reloads, "leafd_auth_reloads_total", "counter",                                       \
      "Loads of the users from ZooKeeper, by outcome.")                                            \
    X(f_auth_age, "leafd_auth_users_age_seconds", "gauge",                                         \
      "Seconds since the users in use were loaded (from ZooKeeper or the local copy).")

static const struct {
    metrics_family_fn write;
    const char *name, *type, *help;
} node_families[] = {
#define NODE_ROW(fn, fname, ftype, fhelp) {fn, fname, ftype, fhelp},
    PAGE_METRICS_NODE_FAMILIES(NODE_ROW)
#undef NODE_ROW
};
#define NODE_NFAMILIES (sizeof(node_families) / sizeof(node_families[0]))

void page_metrics_node_write(const struct door_ctx *ctx, struct sbuf *b) {
    struct metrics_snap s;
    page_metrics_snap_read(ctx, &s);
    for (size_t i = 0; i < NODE_NFAMILIES; i++) {
        struct metrics_out o = {b, node_families[i].name, node_families[i].type,
                                node_families[i].help, 0};
        node_families[i].write(&o, &s);
    }
    page_metrics_snap_free(&s);
}

void page_metrics_node_print_reference(FILE *out) {
    for (size_t i = 0; i < NODE_NFAMILIES; i++) {
        metrics_reference_row(out, node_families[i].name, node_families[i].type,
                              node_families[i].help);
    }
}
