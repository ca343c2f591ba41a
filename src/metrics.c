#include "src/metrics.h"

#include <stdio.h>

#include "src/http.h"
#include "src/router.h"

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

/* One slot per loop, each padded to its own cache lines. */
struct metrics_slot {
    uint64_t requests[METRICS_MAX_ROUTES][METRICS_NSTATUS];
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

void metrics_count_request(int loop, int route, int status) {
    if (loop < 0 || loop >= HTTP_MAX_LOOPS || route < 0 || route >= METRICS_MAX_ROUTES) {
        return;
    }
    uint64_t *p = &metrics_slots[loop].requests[route][metrics_status_index(status)];
    /* Only this loop writes the slot: a relaxed load+store is a plain add. */
    __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

size_t metrics_render_requests(char *buf, size_t cap) {
    size_t pos = 0;
    pos += (size_t)snprintf(buf + pos, cap - pos,
                            "# HELP leafd_http_requests_total HTTP requests answered, by route and status.\n"
                            "# TYPE leafd_http_requests_total counter\n");
    int nroutes = router_count();
    for (int r = 0; r < nroutes && r < METRICS_MAX_ROUTES; r++) {
        for (int s = 0; s < METRICS_NSTATUS; s++) {
            uint64_t sum = 0;
            for (int l = 0; l < HTTP_MAX_LOOPS; l++) {
                sum += __atomic_load_n(&metrics_slots[l].requests[r][s], __ATOMIC_RELAXED);
            }
            if (sum == 0 || pos >= cap) {
                continue;
            }
            char code[8];
            if (metrics_status_codes[s]) {
                snprintf(code, sizeof(code), "%d", metrics_status_codes[s]);
            } else {
                snprintf(code, sizeof(code), "other");
            }
            pos += (size_t)snprintf(buf + pos, cap - pos,
                                    "leafd_http_requests_total{route=\"%s\",status=\"%s\"} %llu\n",
                                    router_name(r), code, (unsigned long long)sum);
        }
    }
    return pos < cap ? pos : cap;
}
