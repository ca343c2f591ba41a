#ifndef LEAF_METRICS_H
#define LEAF_METRICS_H

/*
 * Request counters. Each event loop writes only its own slot (no lock and no
 * shared cache line on the request path); a scrape sums the slots. Slots are
 * read and written with relaxed atomics so the reads from the scraping thread
 * are well-defined.
 */
#include <stddef.h>
#include <stdint.h>

/* The statuses leafd answers with; anything else is counted as "other". */
#define METRICS_STATUSES(X) \
    X(200) X(201) X(400) X(401) X(403) X(404) X(405) X(408) X(409) X(413) X(414) X(431) \
    X(500) X(503)

void metrics_count_request(int loop, int route, int status);

/* IDs handed out, by mode (snowflake counts come from the generator). */
enum { METRICS_MODE_SEGMENT = 0, METRICS_NMODES };
void metrics_count_ids(int loop, int mode, int n);
uint64_t metrics_ids_total(int mode);

/* Records how long a request took (from its head to its answer), in ns. */
void metrics_observe_latency(int loop, int route, int64_t ns);

/* Monotonic ns for latency measurement. */
int64_t metrics_now_ns(void);

/* Appends the request counters and the latency histogram in Prometheus text
 * format; returns bytes written. */
size_t metrics_render_requests(char *buf, size_t cap);

#endif
