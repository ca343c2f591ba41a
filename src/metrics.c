#include "metrics.h"

#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "http.h"
#include "router.h"

#define METRICS_MAX_ROUTES 32

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
#define METRICS_LATENCY_BUCKETS(X) \
    X(50000, "5e-05") X(100000, "0.0001") X(250000, "0.00025") X(500000, "0.0005") \
    X(1000000, "0.001") X(2500000, "0.0025") X(5000000, "0.005") X(10000000, "0.01") \
    X(50000000, "0.05") X(100000000, "0.1") X(500000000, "0.5") X(1000000000, "1")

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

/* One slot per loop, each padded to its own cache lines. */
struct metrics_slot {
    uint64_t requests[METRICS_MAX_ROUTES][METRICS_NSTATUS];
    uint64_t latency[METRICS_MAX_ROUTES][METRICS_NBUCKETS + 1]; /* last = +Inf */
    uint64_t latency_sum_ns[METRICS_MAX_ROUTES];
    uint64_t ids[METRICS_NMODES];
} __attribute__((aligned(64)));

static struct metrics_slot metrics_slots[HTTP_MAX_LOOPS];

static int metrics_status_index(int status) {
    switch (status) {
#define METRICS_STATUS_CASE(code) case code: return METRICS_S_##code;
        METRICS_STATUSES(METRICS_STATUS_CASE)
#undef METRICS_STATUS_CASE
    default: return METRICS_S_OTHER;
    }
}

/* Only the owning loop writes a slot: a relaxed load+store is a plain add. */
static void slot_add(uint64_t *p, uint64_t v) {
    __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

static uint64_t slots_sum(size_t offset) {
    uint64_t sum = 0;
    for (int l = 0; l < HTTP_MAX_LOOPS; l++) {
        const uint64_t *p = (const uint64_t *)(const void *)((const char *)&metrics_slots[l] + offset);
        sum += __atomic_load_n(p, __ATOMIC_RELAXED);
    }
    return sum;
}

int64_t metrics_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void metrics_observe_latency(int loop, int route, int64_t ns) {
    if (loop < 0 || loop >= HTTP_MAX_LOOPS || route < 0 || route >= METRICS_MAX_ROUTES) {
        return;
    }
    int b = 0;
    while (b < METRICS_NBUCKETS && ns > metrics_bucket_ns[b]) {
        b++;
    }
    slot_add(&metrics_slots[loop].latency[route][b], 1);
    slot_add(&metrics_slots[loop].latency_sum_ns[route], ns > 0 ? (uint64_t)ns : 0);
}

void metrics_count_ids(int loop, int mode, int n) {
    if (loop >= 0 && loop < HTTP_MAX_LOOPS && mode >= 0 && mode < METRICS_NMODES && n > 0) {
        slot_add(&metrics_slots[loop].ids[mode], (uint64_t)n);
    }
}

uint64_t metrics_ids_total(int mode) {
    return mode >= 0 && mode < METRICS_NMODES ? slots_sum(offsetof(struct metrics_slot, ids[mode]))
                                               : 0;
}

void metrics_count_request(int loop, int route, int status) {
    if (loop < 0 || loop >= HTTP_MAX_LOOPS || route < 0 || route >= METRICS_MAX_ROUTES) {
        return;
    }
    slot_add(&metrics_slots[loop].requests[route][metrics_status_index(status)], 1);
}

static size_t render_counts(char *buf, size_t cap, int nroutes) {
    size_t pos = (size_t)snprintf(buf, cap,
                                  "# HELP leafd_http_requests_total HTTP requests answered, by route and status.\n"
                                  "# TYPE leafd_http_requests_total counter\n");
    for (int r = 0; r < nroutes; r++) {
        for (int s = 0; s < METRICS_NSTATUS && pos < cap; s++) {
            uint64_t sum = slots_sum(offsetof(struct metrics_slot, requests[r][s]));
            if (sum == 0) {
                continue;
            }
            char code[8];
            snprintf(code, sizeof(code), "%d", metrics_status_codes[s]);
            pos += (size_t)snprintf(buf + pos, cap - pos,
                                    "leafd_http_requests_total{route=\"%s\",status=\"%s\"} %llu\n",
                                    router_name(r), metrics_status_codes[s] ? code : "other",
                                    (unsigned long long)sum);
        }
    }
    return pos;
}

static size_t render_latency(char *buf, size_t cap, int nroutes) {
    size_t pos = (size_t)snprintf(buf, cap,
                                  "# HELP leafd_http_request_duration_seconds Time from a request's "
                                  "head to its answer, by route.\n"
                                  "# TYPE leafd_http_request_duration_seconds histogram\n");
    for (int r = 0; r < nroutes && pos < cap; r++) {
        uint64_t cum = 0, counts[METRICS_NBUCKETS + 1];
        for (int b = 0; b <= METRICS_NBUCKETS; b++) {
            counts[b] = slots_sum(offsetof(struct metrics_slot, latency[r][b]));
            cum += counts[b];
        }
        if (cum == 0) {
            continue; /* a route never answered has no series */
        }
        uint64_t total = cum;
        cum = 0;
        for (int b = 0; b < METRICS_NBUCKETS && pos < cap; b++) {
            cum += counts[b];
            pos += (size_t)snprintf(buf + pos, cap - pos,
                                    "leafd_http_request_duration_seconds_bucket{route=\"%s\",le=\"%s\"} %llu\n",
                                    router_name(r), metrics_bucket_le[b], (unsigned long long)cum);
        }
        double sum_s = (double)slots_sum(offsetof(struct metrics_slot, latency_sum_ns[r])) / 1e9;
        if (pos < cap) {
            pos += (size_t)snprintf(buf + pos, cap - pos,
                                    "leafd_http_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %llu\n"
                                    "leafd_http_request_duration_seconds_sum{route=\"%s\"} %.9f\n"
                                    "leafd_http_request_duration_seconds_count{route=\"%s\"} %llu\n",
                                    router_name(r), (unsigned long long)total, router_name(r), sum_s,
                                    router_name(r), (unsigned long long)total);
        }
    }
    return pos;
}

size_t metrics_render_requests(char *buf, size_t cap) {
    int nroutes = router_count() < METRICS_MAX_ROUTES ? router_count() : METRICS_MAX_ROUTES;
    size_t pos = render_counts(buf, cap, nroutes);
    if (pos < cap) {
        pos += render_latency(buf + pos, cap - pos, nroutes);
    }
    return pos < cap ? pos : cap;
}
