#include "metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "clock.h"
#include "log.h"
#include "resp_api.h"
#include "segment_tags.h"
#include "zk_session.h"

/* ---- request counters, one slot per loop ----------------------------------- */

enum {
#define METRICS_STATUS_ENUM(code) METRICS_S_##code,
    METRICS_STATUSES(METRICS_STATUS_ENUM)
#undef METRICS_STATUS_ENUM
        METRICS_S_OTHER,
    METRICS_NSTATUS
};

static const int metrics_status_codes[METRICS_NSTATUS] = {
#define METRICS_STATUS_CODE(code) code,
    METRICS_STATUSES(METRICS_STATUS_CODE)
#undef METRICS_STATUS_CODE
        0,
};

/* Latency buckets, upper bounds in ns (and the le label written for each). */
/* clang-format off */
#define METRICS_LATENCY_BUCKETS(X) \
    X(50000, "5e-05") X(100000, "0.0001") X(250000, "0.00025") X(500000, "0.0005") \
    X(1000000, "0.001") X(2500000, "0.0025") X(5000000, "0.005") X(10000000, "0.01") \
    X(50000000, "0.05") X(100000000, "0.1") X(500000000, "0.5") X(1000000000, "1")
/* clang-format on */

static const int64_t metrics_bucket_ns[] = {
#define METRICS_BUCKET_NS(ns, le) ns,
    METRICS_LATENCY_BUCKETS(METRICS_BUCKET_NS)
#undef METRICS_BUCKET_NS
};
static const char *const metrics_bucket_le[] = {
#define METRICS_BUCKET_LE(ns, le) le,
    METRICS_LATENCY_BUCKETS(METRICS_BUCKET_LE)
#undef METRICS_BUCKET_LE
};
#define METRICS_NBUCKETS ((int)(sizeof(metrics_bucket_ns) / sizeof(metrics_bucket_ns[0])))
#define METRICS_MAX_ROUTES 32
#define METRICS_MAX_COMMANDS 24
#define METRICS_MAX_OUTCOMES 32

/* One slot per loop, each on its own cache lines. */
struct metrics_slot {
    uint64_t requests[METRICS_MAX_ROUTES][METRICS_NSTATUS];
    uint64_t latency[METRICS_MAX_ROUTES][METRICS_NBUCKETS + 1]; /* last = +Inf */
    uint64_t latency_sum_ns[METRICS_MAX_ROUTES];
    uint64_t commands[METRICS_MAX_COMMANDS][METRICS_MAX_OUTCOMES];
    uint64_t cmd_latency[METRICS_MAX_COMMANDS][METRICS_NBUCKETS + 1]; /* last = +Inf */
    uint64_t cmd_latency_sum_ns[METRICS_MAX_COMMANDS];
    uint64_t ids[METRICS_NMODES];
} __attribute__((aligned(64)));

struct metrics {
    int nroutes, ncommands, noutcomes;
    struct metrics_slot slots[METRICS_MAX_LOOPS];
};

static int clamp(int n, int max) {
    return n < 0 ? 0 : n > max ? max : n;
}

leaf_status_t metrics_create(struct metrics **out, int nroutes, int ncommands, int noutcomes) {
    struct metrics *m = aligned_alloc(64, sizeof(*m));
    if (m == NULL) {
        log_error("metrics", "allocating the metrics registry failed");
        return LEAF_ENOMEM;
    }
    memset(m, 0, sizeof(*m));
    m->nroutes = clamp(nroutes, METRICS_MAX_ROUTES);
    m->ncommands = clamp(ncommands, METRICS_MAX_COMMANDS);
    m->noutcomes = clamp(noutcomes, METRICS_MAX_OUTCOMES);
    *out = m;
    return LEAF_OK;
}

void metrics_free(struct metrics *m) {
    free(m);
}

static int metrics_status_index(int status) {
    switch (status) {
#define METRICS_STATUS_CASE(code)                                                                  \
    case code: return METRICS_S_##code;
        METRICS_STATUSES(METRICS_STATUS_CASE)
#undef METRICS_STATUS_CASE
    default: return METRICS_S_OTHER;
    }
}

/* Only the owning loop writes a slot: a relaxed load+store is a plain add. */
static void slot_add(uint64_t *p, uint64_t v) {
    __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

static uint64_t slots_sum(const struct metrics *m, size_t offset) {
    uint64_t sum = 0;
    for (int l = 0; l < METRICS_MAX_LOOPS; l++) {
        const uint64_t *p = (const uint64_t *)(const void *)((const char *)&m->slots[l] + offset);
        sum += __atomic_load_n(p, __ATOMIC_RELAXED);
    }
    return sum;
}

static int slot_ok(const struct metrics *m, int loop, int route) {
    return loop >= 0 && loop < METRICS_MAX_LOOPS && route >= 0 && route < m->nroutes;
}

static int bucket_of(int64_t ns) {
    int b = 0;
    while (b < METRICS_NBUCKETS && ns > metrics_bucket_ns[b]) {
        b++;
    }
    return b;
}

void metrics_observe_latency(struct metrics *m, int loop, int route, int64_t ns) {
    if (!slot_ok(m, loop, route)) {
        return;
    }
    slot_add(&m->slots[loop].latency[route][bucket_of(ns)], 1);
    slot_add(&m->slots[loop].latency_sum_ns[route], ns > 0 ? (uint64_t)ns : 0);
}

static int command_ok(const struct metrics *m, int loop, int command) {
    return loop >= 0 && loop < METRICS_MAX_LOOPS && command >= 0 && command < m->ncommands;
}

void metrics_count_command(struct metrics *m, int loop, int command, int outcome) {
    if (command_ok(m, loop, command) && outcome >= 0 && outcome < m->noutcomes) {
        slot_add(&m->slots[loop].commands[command][outcome], 1);
    }
}

void metrics_observe_command_latency(struct metrics *m, int loop, int command, int64_t ns) {
    if (!command_ok(m, loop, command)) {
        return;
    }
    slot_add(&m->slots[loop].cmd_latency[command][bucket_of(ns)], 1);
    slot_add(&m->slots[loop].cmd_latency_sum_ns[command], ns > 0 ? (uint64_t)ns : 0);
}

void metrics_count_ids(struct metrics *m, int loop, int mode, int n) {
    if (loop >= 0 && loop < METRICS_MAX_LOOPS && mode >= 0 && mode < METRICS_NMODES && n > 0) {
        slot_add(&m->slots[loop].ids[mode], (uint64_t)n);
    }
}

void metrics_count_request(struct metrics *m, int loop, int route, int status) {
    if (slot_ok(m, loop, route)) {
        slot_add(&m->slots[loop].requests[route][metrics_status_index(status)], 1);
    }
}

/* ---- rendering --------------------------------------------------------------- */

/* One exported tag: the per-tag families' values. */
struct tag_rec {
    char name[VALIDATE_TAG_MAX + 1];
    double runway; /* seconds; INFINITY when idle */
    int64_t remaining, step, issued, fetches, fetch_errors;
};

/* Everything a scrape reports, read once. */
struct snap {
    const struct api_ctx *ctx;
    struct snowflake_node_view sf;
    struct segment_service_stats seg;
    struct sequence_service_stats seq;
    struct tag_rec *tags; /* the exported tags, sorted by name */
    size_t ntags, tags_cap;
    size_t active;     /* active tags in all */
    double runway_min; /* over every active tag */
};

/* The family being written; its header goes out with its first sample. */
struct out {
    struct sbuf *b;
    const char *name, *type, *help;
    int header_done;
};

static void header(struct out *o) {
    if (!o->header_done) {
        sbuf_printf(o->b, "# HELP %s %s\n# TYPE %s %s\n", o->name, o->help, o->name, o->type);
        o->header_done = 1;
    }
}

/* name{labels} value, for a counter or integer gauge. */
static void sample_u(struct out *o, const char *suffix, const char *labels, uint64_t v) {
    header(o);
    sbuf_printf(o->b, "%s%s%s%s%s %" PRIu64 "\n", o->name, suffix, labels ? "{" : "",
                labels ? labels : "", labels ? "}" : "", v);
}

static void sample_i(struct out *o, const char *labels, int64_t v) {
    header(o);
    sbuf_printf(o->b, "%s%s%s%s %" PRId64 "\n", o->name, labels ? "{" : "", labels ? labels : "",
                labels ? "}" : "", v);
}

static void sample_d(struct out *o, const char *labels, double v) {
    header(o);
    if (isinf(v)) {
        sbuf_printf(o->b, "%s%s%s%s %s\n", o->name, labels ? "{" : "", labels ? labels : "",
                    labels ? "}" : "", v > 0 ? "+Inf" : "-Inf");
    } else {
        sbuf_printf(o->b, "%s%s%s%s %.3f\n", o->name, labels ? "{" : "", labels ? labels : "",
                    labels ? "}" : "", v);
    }
}

/* ---- request families ---- */

static void f_http_requests(struct out *o, const struct snap *s) {
    const struct metrics *m = s->ctx->metrics;
    header(o); /* always present, even before the first request */
    char labels[200];
    for (int r = 0; r < m->nroutes; r++) {
        for (int st = 0; st < METRICS_NSTATUS; st++) {
            uint64_t sum = slots_sum(m, offsetof(struct metrics_slot, requests[r][st]));
            if (sum == 0) {
                continue;
            }
            if (metrics_status_codes[st]) {
                snprintf(labels, sizeof(labels), "protocol=\"http\",route=\"%s\",status=\"%d\"",
                         router_name(r), metrics_status_codes[st]);
            } else {
                snprintf(labels, sizeof(labels), "protocol=\"http\",route=\"%s\",status=\"other\"",
                         router_name(r));
            }
            sample_u(o, "", labels, sum);
        }
    }
    for (int c = 0; c < m->ncommands; c++) {
        for (int oc = 0; oc < m->noutcomes; oc++) {
            uint64_t sum = slots_sum(m, offsetof(struct metrics_slot, commands[c][oc]));
            if (sum != 0) {
                snprintf(labels, sizeof(labels), "protocol=\"resp\",route=\"%s\",status=\"%s\"",
                         resp_api_command_name(c), resp_api_outcome_name(oc));
                sample_u(o, "", labels, sum);
            }
        }
    }
}

/* One histogram series; counts[] per bucket (not cumulative), the last +Inf. */
static void histogram(struct out *o, const char *proto, const char *route, const uint64_t *counts,
                      uint64_t sum_ns) {
    uint64_t cum = 0;
    char labels[200];
    for (int b = 0; b < METRICS_NBUCKETS; b++) {
        cum += counts[b];
        snprintf(labels, sizeof(labels), "protocol=\"%s\",route=\"%s\",le=\"%s\"", proto, route,
                 metrics_bucket_le[b]);
        sample_u(o, "_bucket", labels, cum);
    }
    cum += counts[METRICS_NBUCKETS];
    snprintf(labels, sizeof(labels), "protocol=\"%s\",route=\"%s\",le=\"+Inf\"", proto, route);
    sample_u(o, "_bucket", labels, cum);
    sbuf_printf(o->b, "%s_sum{protocol=\"%s\",route=\"%s\"} %.9f\n", o->name, proto, route,
                (double)sum_ns / 1e9);
    snprintf(labels, sizeof(labels), "protocol=\"%s\",route=\"%s\"", proto, route);
    sample_u(o, "_count", labels, cum);
}

static void f_http_duration(struct out *o, const struct snap *s) {
    const struct metrics *m = s->ctx->metrics;
    header(o);
    uint64_t counts[METRICS_NBUCKETS + 1];
    for (int r = 0; r < m->nroutes; r++) {
        uint64_t total = 0;
        for (int b = 0; b <= METRICS_NBUCKETS; b++) {
            counts[b] = slots_sum(m, offsetof(struct metrics_slot, latency[r][b]));
            total += counts[b];
        }
        if (total != 0) { /* a route never answered has no series */
            histogram(o, "http", router_name(r), counts,
                      slots_sum(m, offsetof(struct metrics_slot, latency_sum_ns[r])));
        }
    }
    for (int c = 0; c < m->ncommands; c++) {
        uint64_t total = 0;
        for (int b = 0; b <= METRICS_NBUCKETS; b++) {
            counts[b] = slots_sum(m, offsetof(struct metrics_slot, cmd_latency[c][b]));
            total += counts[b];
        }
        if (total != 0) {
            histogram(o, "resp", resp_api_command_name(c), counts,
                      slots_sum(m, offsetof(struct metrics_slot, cmd_latency_sum_ns[c])));
        }
    }
}

static void f_http_connections(struct out *o, const struct snap *s) {
    const struct api_ctx *c = s->ctx;
    sample_u(o, "", "protocol=\"http\"",
             c->connections ? c->connections(c->conn_arg, API_PROTO_HTTP) : 0);
    if (c->cfg->resp_port != 0) {
        sample_u(o, "", "protocol=\"resp\"",
                 c->connections ? c->connections(c->conn_arg, API_PROTO_RESP) : 0);
    }
}

static void f_ids_issued(struct out *o, const struct snap *s) {
    sample_u(o, "", "mode=\"snowflake\"", s->sf.issued);
    sample_u(o, "", "mode=\"segment\"",
             slots_sum(s->ctx->metrics, offsetof(struct metrics_slot, ids[METRICS_MODE_SEGMENT])));
}

/* ---- snowflake families ---- */

static void f_clock_backwards(struct out *o, const struct snap *s) {
    sample_u(o, "", "outcome=\"waited\"", s->sf.backwards_waits);
    sample_u(o, "", "outcome=\"refused\"", s->sf.backwards_errors);
}

static void f_seq_exhausted(struct out *o, const struct snap *s) {
    sample_u(o, "", NULL, s->sf.exhaustions);
}

static void f_worker_id(struct out *o, const struct snap *s) {
    sample_i(o, NULL, s->sf.worker_id);
}

static void f_years_left(struct out *o, const struct snap *s) {
    sample_d(o, NULL, s->sf.years_left);
}

/* ZooKeeper families exist only when the node registered through ZooKeeper. */
static int zk_on(const struct snap *s) {
    return s->sf.started && s->sf.use_zk;
}

static double age_s(int64_t ms) {
    return ms < 0 ? -1.0 : (double)ms / 1000.0;
}

static void f_zk_connected(struct out *o, const struct snap *s) {
    if (zk_on(s)) {
        sample_d(o, NULL, s->sf.zk_state == ZK_STATE_CONNECTED);
    }
}

static void f_zk_reconnects(struct out *o, const struct snap *s) {
    if (zk_on(s)) {
        sample_d(o, NULL, (double)(s->sf.connects > 1 ? s->sf.connects - 1 : 0));
    }
}

static void f_zk_expirations(struct out *o, const struct snap *s) {
    if (zk_on(s)) {
        sample_d(o, NULL, (double)s->sf.expirations);
    }
}

static void f_zk_ephemeral(struct out *o, const struct snap *s) {
    if (zk_on(s)) {
        sample_d(o, NULL, s->sf.ephemeral);
    }
}

static void f_zk_report_age(struct out *o, const struct snap *s) {
    if (zk_on(s)) {
        sample_d(o, NULL, age_s(s->sf.zk_report_age_ms));
    }
}

static void f_local_report_age(struct out *o, const struct snap *s) {
    if (s->sf.started) {
        sample_d(o, NULL, age_s(s->sf.local_report_age_ms));
    }
}

static void f_reserved_ahead(struct out *o, const struct snap *s) {
    if (s->sf.started) {
        sample_d(o, NULL, (double)s->sf.reserved_ahead_ms / 1000.0);
    }
}

/* ---- segment families ---- */

static void tag_sample(struct out *o, const struct tag_rec *t, int64_t v) {
    char labels[VALIDATE_TAG_MAX + 16];
    snprintf(labels, sizeof(labels), "tag=\"%s\"", t->name);
    sample_i(o, labels, v);
}

#define SEG_TAG_FAMILY(fn, field)                                                                  \
    static void fn(struct out *o, const struct snap *s) {                                          \
        if (!s->seg.enabled) {                                                                     \
            return;                                                                                \
        }                                                                                          \
        header(o);                                                                                 \
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

static void f_seg_runway(struct out *o, const struct snap *s) {
    if (!s->seg.enabled) {
        return;
    }
    header(o);
    for (size_t i = 0; i < s->ntags; i++) {
        char labels[VALIDATE_TAG_MAX + 16];
        snprintf(labels, sizeof(labels), "tag=\"%s\"", s->tags[i].name);
        sample_d(o, labels, s->tags[i].runway);
    }
}

static void f_seg_runway_min(struct out *o, const struct snap *s) {
    if (s->seg.enabled) {
        sample_d(o, NULL, s->runway_min);
    }
}

static void f_seg_tags(struct out *o, const struct snap *s) {
    if (!s->seg.enabled) {
        return;
    }
    sample_u(o, "", "state=\"pending\"", s->seg.tags_by_state[SEGMENT_TAG_PENDING]);
    sample_u(o, "", "state=\"active\"", s->seg.tags_by_state[SEGMENT_TAG_ACTIVE]);
    sample_u(o, "", "state=\"absent\"", s->seg.tags_by_state[SEGMENT_TAG_ABSENT]);
}

static void f_seg_tags_exported(struct out *o, const struct snap *s) {
    if (s->seg.enabled) {
        sample_u(o, "", NULL, s->ntags);
    }
}

static void f_seg_latency(struct out *o, const struct snap *s) {
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
        sample_u(o, "_bucket", labels, cum);
    }
    sbuf_printf(o->b, "%s_sum %.6f\n", o->name, (double)s->seg.latency_sum_us / 1e6);
    sample_u(o, "_count", NULL, cum);
}

static void f_seg_db_errors(struct out *o, const struct snap *s) {
    if (s->seg.enabled) {
        sample_u(o, "", NULL, s->seg.db_errors);
    }
}

static void f_seg_db_up(struct out *o, const struct snap *s) {
    if (s->seg.enabled) {
        sample_i(o, NULL, s->seg.db_up);
    }
}

static void f_seg_lookups(struct out *o, const struct snap *s) {
    if (s->seg.enabled) {
        sample_u(o, "", NULL, s->seg.lookups);
    }
}

/*
 * The registry: one row per family, X(function, name, type, help). The
 * order of the rows is the order of the scrape.
 */
#define METRICS_FAMILIES(X)                                                                        \
    X(f_http_requests, "leafd_http_requests_total", "counter",                                     \
      "Requests answered, by protocol (http, resp), route (RESP: command) and status (RESP: "      \
      "outcome).")                                                                                 \
    X(f_http_duration, "leafd_http_request_duration_seconds", "histogram",                         \
      "Time from a request's arrival to its answer, by protocol and route (RESP: command).")       \
    X(f_ids_issued, "leafd_ids_issued_total", "counter", "IDs issued, by mode.")                   \
    X(f_clock_backwards, "leafd_snowflake_clock_backwards_total", "counter",                       \
      "Clock steps back seen, by outcome.")                                                        \
    X(f_seq_exhausted, "leafd_snowflake_sequence_exhausted_total", "counter",                      \
      "Milliseconds whose sequence ran out.")                                                      \
    X(f_worker_id, "leafd_snowflake_worker_id", "gauge", "The worker ID held (-1 = none).")        \
    X(f_years_left, "leafd_snowflake_timestamp_years_left", "gauge",                               \
      "Years before the 41-bit timestamp runs out.")                                               \
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
    X(f_seg_lookups, "leafd_segment_lookups_total", "counter",                                     \
      "Tag lookups sent to the database.")                                                         \
    X(f_seq_primary, "leafd_sequence_primary", "gauge",                                            \
      "1 while this node is the sequence primary.")                                                \
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
      "Persisted headroom per sequence on the primary (at most leafd.metrics.tags.max series).")

/* ---- sequence families ---- */

#define SEQ_FAMILY(fn, expr)                                                                       \
    static void fn(struct out *o, const struct snap *s) {                                          \
        if (s->seq.enabled) {                                                                      \
            sample_u(o, "", NULL, (uint64_t)(expr));                                               \
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

static void f_seq_headroom(struct out *o, const struct snap *s) {
    if (s->seq.enabled && s->seq.min_headroom >= 0) {
        sample_i(o, NULL, s->seq.min_headroom);
    }
}

struct seq_each {
    struct out *o;
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
    sample_i(e->o, labels, headroom);
}

static void f_seq_headroom_each(struct out *o, const struct snap *s) {
    if (s->seq.enabled && s->seq.primary) {
        struct seq_each e = {o, (size_t)s->ctx->cfg->metrics_tags_max};
        sequence_service_each(s->ctx->sequence, seq_one, &e);
    }
}

/* ---- the bounded per-tag set: the least runway first --------------------- */

static double tag_runway(const struct segment_tag_view *v, int64_t now) {
    double rate = segment_buffer_rate(&v->buf, now);
    return rate <= 0.0 ? INFINITY : (double)v->buf.available / rate;
}

/* Max-heap on runway over s->tags[0..ntags): the root is the one to drop first. */
static void heap_down(struct tag_rec *h, size_t n, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && h[l].runway > h[m].runway) {
            m = l;
        }
        if (r < n && h[r].runway > h[m].runway) {
            m = r;
        }
        if (m == i) {
            return;
        }
        struct tag_rec t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void heap_up(struct tag_rec *h, size_t i) {
    while (i > 0 && h[(i - 1) / 2].runway < h[i].runway) {
        struct tag_rec t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static void collect_tag(const struct segment_tag_view *v, void *arg) {
    struct snap *s = arg;
    if (v->state != SEGMENT_TAG_ACTIVE) {
        return;
    }
    struct tag_rec r;
    memcpy(r.name, v->name, sizeof(r.name));
    r.runway = tag_runway(v, segment_service_now_ms());
    r.remaining = v->buf.available;
    r.step = v->buf.step;
    r.issued = (int64_t)v->buf.issued;
    r.fetches = (int64_t)v->buf.fetches;
    r.fetch_errors = (int64_t)v->fetch_errors;
    s->active++;
    if (r.runway < s->runway_min) {
        s->runway_min = r.runway;
    }
    if (s->tags_cap == 0) {
        return;
    }
    if (s->ntags < s->tags_cap) {
        s->tags[s->ntags] = r;
        heap_up(s->tags, s->ntags++);
    } else if (r.runway < s->tags[0].runway) {
        s->tags[0] = r;
        heap_down(s->tags, s->ntags, 0);
    }
}

static int tag_rec_cmp(const void *a, const void *b) {
    return strcmp(((const struct tag_rec *)a)->name, ((const struct tag_rec *)b)->name);
}

static void snap_tags(struct snap *s) {
    s->runway_min = INFINITY;
    if (!s->seg.enabled) {
        return;
    }
    size_t cap = (size_t)s->ctx->cfg->metrics_tags_max;
    s->tags = cap ? malloc(cap * sizeof(*s->tags)) : NULL;
    s->tags_cap = s->tags ? cap : 0;
    if (cap && s->tags == NULL) {
        log_error("metrics", "out of memory collecting per-tag metrics; only aggregates exported");
    }
    segment_service_each(s->ctx->segment, collect_tag, s);
    qsort(s->tags, s->ntags, sizeof(*s->tags), tag_rec_cmp);
}

void metrics_render(const struct api_ctx *ctx, struct sbuf *b) {
    struct snap s = {.ctx = ctx};
    snowflake_node_view(ctx->snowflake, &s.sf);
    segment_service_stats(ctx->segment, &s.seg);
    sequence_service_stats(ctx->sequence, &s.seq);
    snap_tags(&s);
    struct out o = {.b = b};
#define METRICS_RENDER(fn, fname, ftype, fhelp)                                                    \
    o.name = fname;                                                                                \
    o.type = ftype;                                                                                \
    o.help = fhelp;                                                                                \
    o.header_done = 0;                                                                             \
    fn(&o, &s);
    METRICS_FAMILIES(METRICS_RENDER)
#undef METRICS_RENDER
    free(s.tags);
}
