#include "metrics_scrape.h"

#include <stdio.h>

#include "metrics.h"
#include "metrics_node.h"
#include "metrics_process.h"

/*
 * The registry: one row per family, X(writer, name, type, help). The order
 * of the rows is the order of the scrape. The writers are metrics.c's (the
 * request counters), metrics_node.c's (the node's views) and
 * metrics_process.c's (readiness, build, process_*).
 */
#define METRICS_FAMILIES(X)                                                                        \
    X(f_ready, "leafd_ready", "gauge",                                                             \
      "1 while a component can issue IDs (as /ready), by component; \"all\": /ready answers 200.") \
    X(f_build_info, "leafd_build_info", "gauge",                                                   \
      "Always 1; the labels say which leafd runs (version, git revision).")                        \
    X(f_process_cpu, "process_cpu_seconds_total", "counter",                                       \
      "User and system CPU time spent, in seconds.")                                               \
    X(f_process_rss, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.")   \
    X(f_process_open_fds, "process_open_fds", "gauge", "Open file descriptors.")                   \
    X(f_process_max_fds, "process_max_fds", "gauge", "The limit of open file descriptors.")        \
    X(f_process_start, "process_start_time_seconds", "gauge",                                      \
      "When the process started, in seconds since 1970.")                                          \
    X(f_http_requests, "leafd_http_requests_total", "counter",                                     \
      "Requests answered, by protocol (http, resp), route (RESP: command) and status (RESP: "      \
      "outcome).")                                                                                 \
    X(f_http_duration, "leafd_http_request_duration_seconds", "histogram",                         \
      "Time from a request's arrival to its answer, by protocol and route (RESP: command).")       \
    X(f_ids_issued, "leafd_ids_issued_total", "counter", "IDs issued, by mode.")                   \
    X(f_route_info, "leafd_route_info", "gauge",                                                   \
      "Always 1: the kind of each route (RESP: command), kind=\"ids\" for those that hand out "    \
      "IDs.")                                                                                      \
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

void metrics_scrape(const struct api_ctx *ctx, struct sbuf *b) {
    static const struct {
        metrics_family_fn fn;
        const char *name, *type, *help;
    } families[] = {
#define METRICS_ROW(fn, fname, ftype, fhelp) {fn, fname, ftype, fhelp},
        METRICS_FAMILIES(METRICS_ROW)
#undef METRICS_ROW
    };
    struct metrics_snap s;
    metrics_node_snap(ctx, &s);
    for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
        struct metrics_out o = {b, families[i].name, families[i].type, families[i].help, 0};
        families[i].fn(&o, &s);
    }
    metrics_node_snap_free(&s);
}

void metrics_print_reference(FILE *out) {
    static const struct {
        const char *name, *type, *help;
    } families[] = {
#define METRICS_REF_ROW(fn, fname, ftype, fhelp) {fname, ftype, fhelp},
        METRICS_FAMILIES(METRICS_REF_ROW)
#undef METRICS_REF_ROW
    };
    fputs("| name | type | help |\n|---|---|---|\n", out);
    for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
        fprintf(out, "| `%s` | %s | ", families[i].name, families[i].type);
        for (const char *c = families[i].help; *c != '\0'; c++) {
            if (*c == '<' || *c == '>') {
                fputs(*c == '<' ? "&lt;" : "&gt;", out);
                continue;
            }
            if (*c == '|') {
                fputc('\\', out);
            }
            fputc(*c, out);
        }
        fputs(" |\n", out);
    }
}
