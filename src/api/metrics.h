#ifndef LEAF_METRICS_H
#define LEAF_METRICS_H

/*
 * The metrics registry. Every family leafd exports is one row of the table
 * in metrics.c (name, type, help, and the function that writes its
 * samples), rendered into a growable buffer, so a scrape is never cut.
 *
 * Request counters: each event loop writes only its own slot (no lock and no
 * shared cache line on the request path); a scrape sums the slots. Slots
 * are read and written with relaxed atomics so the scraping thread's reads
 * are well-defined. Per-tag families are bounded: up to
 * leafd.metrics.tags.max tags are exported (the ones with the least runway
 * first when there are more), plus aggregates over all tags.
 *
 * Ownership: main() creates the registry before the loops start; any thread
 * may count and render.
 */
#include <stddef.h>
#include <stdint.h>

#include "sbuf.h"
#include "status.h"

#define METRICS_MAX_LOOPS 64

/* The statuses leafd answers with; anything else is counted as "other". */
/* clang-format off */
#define METRICS_STATUSES(X) \
    X(200) X(201) X(307) X(400) X(401) X(403) X(404) X(405) X(408) X(409) X(413) X(414) X(417) \
    X(431) X(500) X(501) X(503) X(505)
/* clang-format on */

enum { METRICS_MODE_SEGMENT = 0, METRICS_NMODES };

struct metrics;
struct api_ctx;

/* nroutes HTTP routes; ncommands RESP commands with noutcomes outcomes each. */
leaf_status_t metrics_create(struct metrics **out, int nroutes, int ncommands, int noutcomes);
void metrics_free(struct metrics *m);

void metrics_count_request(struct metrics *m, int loop, int route, int status);
/* Records how long a request took (from its head to its answer), in ns. */
void metrics_observe_latency(struct metrics *m, int loop, int route, int64_t ns);
/* A RESP command answered, by its table row and outcome; and its latency in ns. */
void metrics_count_command(struct metrics *m, int loop, int command, int outcome);
void metrics_observe_command_latency(struct metrics *m, int loop, int command, int64_t ns);
/* IDs handed out, by mode (snowflake counts come from the generator). */
void metrics_count_ids(struct metrics *m, int loop, int mode, int n);

/* Renders every family (Prometheus text format 0.0.4) into b. */
void metrics_render(const struct api_ctx *ctx, struct sbuf *b);

#endif
