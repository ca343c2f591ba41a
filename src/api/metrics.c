#include "metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "clock.h"
#include "log.h"
#include "metrics_impl.h"
#include "resp_api.h"

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
    void *block; /* what calloc returned (the struct is aligned inside it) */
    struct metrics_slot slots[METRICS_MAX_LOOPS];
};

static int clamp(int n, int max) {
    return n < 0 ? 0 : n > max ? max : n;
}

leaf_status_t metrics_create(struct metrics **out, int nroutes, int ncommands, int noutcomes) {
    /* calloc, aligned by hand: a fresh block of this size (about 1 MB) comes
     * zeroed from the kernel, so a start touches only the pages it uses
     * (aligned_alloc + memset wrote all of it, on every short-lived start). */
    void *block = calloc(1, sizeof(struct metrics) + 63);
    if (block == NULL) {
        log_error("metrics", "allocating the metrics registry failed");
        return LEAF_ENOMEM;
    }
    char *at = block;
    at += (64 - (uintptr_t)at % 64) % 64;
    struct metrics *m = (struct metrics *)(void *)at;
    m->block = block;
    m->nroutes = clamp(nroutes, METRICS_MAX_ROUTES);
    m->ncommands = clamp(ncommands, METRICS_MAX_COMMANDS);
    m->noutcomes = clamp(noutcomes, METRICS_MAX_OUTCOMES);
    *out = m;
    return LEAF_OK;
}

void metrics_free(struct metrics *m) {
    if (m != NULL) {
        free(m->block);
    }
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

void metrics_header(struct out *o) {
    if (!o->header_done) {
        sbuf_printf(o->b, "# HELP %s %s\n# TYPE %s %s\n", o->name, o->help, o->name, o->type);
        o->header_done = 1;
    }
}

/* name{labels} value, for a counter or integer gauge. */
void metrics_sample_u(struct out *o, const char *suffix, const char *labels, uint64_t v) {
    metrics_header(o);
    sbuf_printf(o->b, "%s%s%s%s%s %" PRIu64 "\n", o->name, suffix, labels ? "{" : "",
                labels ? labels : "", labels ? "}" : "", v);
}

void metrics_sample_i(struct out *o, const char *labels, int64_t v) {
    metrics_header(o);
    sbuf_printf(o->b, "%s%s%s%s %" PRId64 "\n", o->name, labels ? "{" : "", labels ? labels : "",
                labels ? "}" : "", v);
}

void metrics_sample_d(struct out *o, const char *labels, double v) {
    metrics_header(o);
    if (isinf(v)) {
        sbuf_printf(o->b, "%s%s%s%s %s\n", o->name, labels ? "{" : "", labels ? labels : "",
                    labels ? "}" : "", v > 0 ? "+Inf" : "-Inf");
    } else {
        sbuf_printf(o->b, "%s%s%s%s %.3f\n", o->name, labels ? "{" : "", labels ? labels : "",
                    labels ? "}" : "", v);
    }
}

/* ---- request families ---- */

void f_http_requests(struct out *o, const struct snap *s) {
    const struct metrics *m = s->ctx->metrics;
    metrics_header(o); /* always present, even before the first request */
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
            metrics_sample_u(o, "", labels, sum);
        }
    }
    for (int c = 0; c < m->ncommands; c++) {
        for (int oc = 0; oc < m->noutcomes; oc++) {
            uint64_t sum = slots_sum(m, offsetof(struct metrics_slot, commands[c][oc]));
            if (sum != 0) {
                snprintf(labels, sizeof(labels), "protocol=\"resp\",route=\"%s\",status=\"%s\"",
                         resp_api_command_name(c), resp_api_outcome_name(oc));
                metrics_sample_u(o, "", labels, sum);
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
        metrics_sample_u(o, "_bucket", labels, cum);
    }
    cum += counts[METRICS_NBUCKETS];
    snprintf(labels, sizeof(labels), "protocol=\"%s\",route=\"%s\",le=\"+Inf\"", proto, route);
    metrics_sample_u(o, "_bucket", labels, cum);
    sbuf_printf(o->b, "%s_sum{protocol=\"%s\",route=\"%s\"} %.9f\n", o->name, proto, route,
                (double)sum_ns / 1e9);
    snprintf(labels, sizeof(labels), "protocol=\"%s\",route=\"%s\"", proto, route);
    metrics_sample_u(o, "_count", labels, cum);
}

void f_http_duration(struct out *o, const struct snap *s) {
    const struct metrics *m = s->ctx->metrics;
    metrics_header(o);
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

void f_http_connections(struct out *o, const struct snap *s) {
    const struct api_ctx *c = s->ctx;
    metrics_sample_u(o, "", "protocol=\"http\"",
                     c->connections ? c->connections(c->conn_arg, API_PROTO_HTTP) : 0);
    if (c->cfg->resp_port != 0) {
        metrics_sample_u(o, "", "protocol=\"resp\"",
                         c->connections ? c->connections(c->conn_arg, API_PROTO_RESP) : 0);
    }
}

void f_ids_issued(struct out *o, const struct snap *s) {
    metrics_sample_u(o, "", "mode=\"snowflake\"", s->sf.issued);
    metrics_sample_u(
        o, "", "mode=\"segment\"",
        slots_sum(s->ctx->metrics, offsetof(struct metrics_slot, ids[METRICS_MODE_SEGMENT])));
}

void metrics_render(const struct api_ctx *ctx, struct sbuf *b) {
    struct snap s = {.ctx = ctx};
    snowflake_node_view(ctx->snowflake, &s.sf);
    segment_service_stats(ctx->segment, &s.seg);
    sequence_service_stats(ctx->sequence, &s.seq);
    user_service_stats(ctx->users, &s.users);
    metrics_snap_tags(&s);
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
