#include "metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

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

/* One slot per loop, each on its own cache lines. */
struct metrics_slot {
    uint64_t requests[METRICS_MAX_ROUTES][METRICS_NSTATUS];
    uint64_t latency[METRICS_MAX_ROUTES][METRICS_NBUCKETS + 1]; /* last = +Inf */
    uint64_t latency_sum_ns[METRICS_MAX_ROUTES];
    uint64_t commands[METRICS_MAX_COMMANDS][METRICS_MAX_OUTCOMES];
    uint64_t cmd_latency[METRICS_MAX_COMMANDS][METRICS_NBUCKETS + 1]; /* last = +Inf */
    uint64_t cmd_latency_sum_ns[METRICS_MAX_COMMANDS];
    uint64_t ids[IDS_MODE_COUNT];
} __attribute__((aligned(64)));

struct metrics {
    int nroutes, ncommands, noutcomes;
    char routes[METRICS_MAX_ROUTES][METRICS_NAME_MAX + 1];
    char commands[METRICS_MAX_COMMANDS][METRICS_NAME_MAX + 1];
    char outcomes[METRICS_MAX_OUTCOMES][METRICS_NAME_MAX + 1];
    unsigned char route_ids[METRICS_MAX_ROUTES], command_ids[METRICS_MAX_COMMANDS];
    void *block; /* what calloc returned (the struct is aligned inside it) */
    struct metrics_slot slots[METRICS_MAX_LOOPS];
};

static int clamp(int n, int max) {
    return n < 0 ? 0 : n > max ? max : n;
}

/* Copies n names (capped at max) into rows; returns how many. */
static int copy_names(char (*rows)[METRICS_NAME_MAX + 1], const char *const *names, int n,
                      int max) {
    n = clamp(n, max);
    for (int i = 0; i < n; i++) {
        snprintf(rows[i], METRICS_NAME_MAX + 1, "%s", names[i] ? names[i] : "unknown");
    }
    return n;
}

leaf_status_t metrics_create(struct metrics **out, const struct metrics_names *names) {
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
    m->nroutes = copy_names(m->routes, names->routes, names->nroutes, METRICS_MAX_ROUTES);
    m->ncommands = copy_names(m->commands, names->commands, names->ncommands, METRICS_MAX_COMMANDS);
    m->noutcomes = copy_names(m->outcomes, names->outcomes, names->noutcomes, METRICS_MAX_OUTCOMES);
    memcpy(m->route_ids, names->route_ids, sizeof(m->route_ids));
    memcpy(m->command_ids, names->command_ids, sizeof(m->command_ids));
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

void metrics_count_ids(struct metrics *m, int loop, enum ids_mode mode, int n) {
    if (loop >= 0 && loop < METRICS_MAX_LOOPS && (int)mode >= 0 && mode < IDS_MODE_COUNT && n > 0) {
        slot_add(&m->slots[loop].ids[mode], (uint64_t)n);
    }
}

void metrics_count_request(struct metrics *m, int loop, int route, int status) {
    if (slot_ok(m, loop, route)) {
        slot_add(&m->slots[loop].requests[route][metrics_status_index(status)], 1);
    }
}

/* ---- the families written from the counters --------------------------------- */

static void write_requests(struct metrics_out *o, const struct metrics *m) {
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
                         m->routes[r], metrics_status_codes[st]);
            } else {
                snprintf(labels, sizeof(labels), "protocol=\"http\",route=\"%s\",status=\"other\"",
                         m->routes[r]);
            }
            metrics_sample_u(o, "", labels, sum);
        }
    }
    for (int c = 0; c < m->ncommands; c++) {
        for (int oc = 0; oc < m->noutcomes; oc++) {
            uint64_t sum = slots_sum(m, offsetof(struct metrics_slot, commands[c][oc]));
            if (sum != 0) {
                snprintf(labels, sizeof(labels), "protocol=\"resp\",route=\"%s\",status=\"%s\"",
                         m->commands[c], m->outcomes[oc]);
                metrics_sample_u(o, "", labels, sum);
            }
        }
    }
}

/* One histogram series; counts[] per bucket (not cumulative), the last +Inf. */
static void histogram(struct metrics_out *o, const char *proto, const char *route,
                      const uint64_t *counts, uint64_t sum_ns) {
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

static void write_duration(struct metrics_out *o, const struct metrics *m) {
    metrics_header(o);
    uint64_t counts[METRICS_NBUCKETS + 1];
    for (int r = 0; r < m->nroutes; r++) {
        uint64_t total = 0;
        for (int b = 0; b <= METRICS_NBUCKETS; b++) {
            counts[b] = slots_sum(m, offsetof(struct metrics_slot, latency[r][b]));
            total += counts[b];
        }
        if (total != 0) { /* a route never answered has no series */
            histogram(o, "http", m->routes[r], counts,
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
            histogram(o, "resp", m->commands[c], counts,
                      slots_sum(m, offsetof(struct metrics_slot, cmd_latency_sum_ns[c])));
        }
    }
}

static const char *ids_label(int mode) {
    return ids_mode_info((enum ids_mode)mode)->metric;
}

/* 1 when a mode before this one has its metric label (the series is written already). */
static int ids_label_written(int mode) {
    for (int j = 0; j < mode; j++) {
        if (ids_label(j) != NULL && strcmp(ids_label(j), ids_label(mode)) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The IDs issued by every mode counted under label. */
static uint64_t ids_label_sum(const struct metrics *m, const char *label) {
    uint64_t sum = 0;
    for (int j = 0; j < IDS_MODE_COUNT; j++) {
        if (ids_label(j) != NULL && strcmp(ids_label(j), label) == 0) {
            sum += slots_sum(m, offsetof(struct metrics_slot, ids[j]));
        }
    }
    return sum;
}

/* One series per metric label of IDS_MODES, in the table's order. */
static void write_ids_issued(struct metrics_out *o, const struct metrics *m) {
    char labels[64];
    for (int i = 0; i < IDS_MODE_COUNT; i++) {
        if (ids_label(i) == NULL || ids_label_written(i)) {
            continue;
        }
        snprintf(labels, sizeof(labels), "mode=\"%s\"", ids_label(i));
        metrics_sample_u(o, "", labels, ids_label_sum(m, ids_label(i)));
    }
}

/*
 * What kind each route and command is: kind="ids" for those that hand out
 * IDs. One series per route, value 1, so a query selects every ID route by
 * a label, new ones included:
 *   rate(leafd_http_requests_total[5m])
 *     * on (job, instance, protocol, route) group_left leafd_route_info{kind="ids"}
 */
static void write_route_info(struct metrics_out *o, const struct metrics *m) {
    char labels[128];
    for (int r = 0; r < m->nroutes; r++) {
        snprintf(labels, sizeof(labels), "protocol=\"http\",route=\"%s\",kind=\"%s\"", m->routes[r],
                 m->route_ids[r] ? "ids" : "other");
        metrics_sample_u(o, "", labels, 1);
    }
    for (int c = 0; c < m->ncommands; c++) {
        snprintf(labels, sizeof(labels), "protocol=\"resp\",route=\"%s\",kind=\"%s\"",
                 m->commands[c], m->command_ids[c] ? "ids" : "other");
        metrics_sample_u(o, "", labels, 1);
    }
}

/*
 * The families written from the counters, X(writer, name, type, help), in the
 * order of the scrape; the node's and the process's are the pages' (src/pages).
 */
#define METRICS_FAMILIES(X)                                                                        \
    X(write_requests, "leafd_http_requests_total", "counter",                                      \
      "Requests answered, by protocol (http, resp), route (RESP: command) and status (RESP: "      \
      "outcome).")                                                                                 \
    X(write_duration, "leafd_http_request_duration_seconds", "histogram",                          \
      "Time from a request's arrival to its answer, by protocol and route (RESP: command).")       \
    X(write_ids_issued, "leafd_ids_issued_total", "counter", "IDs issued, by mode.")               \
    X(write_route_info, "leafd_route_info", "gauge",                                               \
      "Always 1: the kind of each route (RESP: command), kind=\"ids\" for those that hand out "    \
      "IDs.")

static const struct {
    void (*write)(struct metrics_out *o, const struct metrics *m);
    const char *name, *type, *help;
} metrics_families[] = {
#define METRICS_ROW(fn, fname, ftype, fhelp) {fn, fname, ftype, fhelp},
    METRICS_FAMILIES(METRICS_ROW)
#undef METRICS_ROW
};
#define METRICS_NFAMILIES (sizeof(metrics_families) / sizeof(metrics_families[0]))

void metrics_write(const struct metrics *m, struct sbuf *b) {
    for (size_t i = 0; i < METRICS_NFAMILIES; i++) {
        struct metrics_out o = {b, metrics_families[i].name, metrics_families[i].type,
                                metrics_families[i].help, 0};
        metrics_families[i].write(&o, m);
    }
}

void metrics_print_reference(FILE *out) {
    for (size_t i = 0; i < METRICS_NFAMILIES; i++) {
        metrics_reference_row(out, metrics_families[i].name, metrics_families[i].type,
                              metrics_families[i].help);
    }
}
