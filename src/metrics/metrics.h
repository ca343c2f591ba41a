#ifndef LEAF_METRICS_H
#define LEAF_METRICS_H

/*
 * The metrics registry: the request counters and the families written
 * from them (requests, latency, IDs issued, the routes' kinds), on the
 * ground floor: it includes src/base alone, so every door may count. The
 * node's and the process's families, and the /metrics handler that writes
 * them all, stand beside the pages (src/pages/page_metrics.c).
 *
 * The registry copies the names of the routes, commands and outcomes when
 * it is created (as twemproxy's stats copy a pool's name), so a scrape
 * never asks the route table or the command table for them.
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
#include <stdio.h>

#include "ids_mode.h"
#include "metrics_text.h"
#include "sbuf.h"
#include "status.h"

#define METRICS_MAX_LOOPS 64

/* The statuses leafd answers with; anything else is counted as "other". */
/* clang-format off */
#define METRICS_STATUSES(X) \
    X(200) X(201) X(307) X(400) X(401) X(403) X(404) X(405) X(408) X(409) X(413) X(414) X(417) \
    X(431) X(500) X(501) X(503) X(505)
/* clang-format on */

#define METRICS_MAX_ROUTES 48
#define METRICS_MAX_COMMANDS 32
#define METRICS_MAX_OUTCOMES 32
#define METRICS_NAME_MAX 31 /* a route, command or outcome label */

/*
 * The labels the counters are kept under, by index: the HTTP routes (the
 * route label), the RESP commands (the route label of protocol "resp") and
 * the RESP outcomes (their status label). Copied by metrics_create; the
 * counts are capped at the METRICS_MAX_* and a name at METRICS_NAME_MAX.
 */
struct metrics_names {
    const char *routes[METRICS_MAX_ROUTES];
    int nroutes;
    const char *commands[METRICS_MAX_COMMANDS];
    int ncommands;
    /* 1: the route (command) hands out IDs, its need is the ids right (kind="ids" of
     * leafd_route_info, which alerts and dashboards join on); 0: kind="other". */
    unsigned char route_ids[METRICS_MAX_ROUTES];
    unsigned char command_ids[METRICS_MAX_COMMANDS];
    const char *outcomes[METRICS_MAX_OUTCOMES];
    int noutcomes;
};

struct metrics;

leaf_status_t metrics_create(struct metrics **out, const struct metrics_names *names);
void metrics_free(struct metrics *m);

void metrics_count_request(struct metrics *m, int loop, int route, int status);
/* Records how long a request took (from its head to its answer), in ns. */
void metrics_observe_latency(struct metrics *m, int loop, int route, int64_t ns);
/* A RESP command answered, by its table row and outcome; and its latency in ns. */
void metrics_count_command(struct metrics *m, int loop, int command, int outcome);
void metrics_observe_command_latency(struct metrics *m, int loop, int command, int64_t ns);
/* IDs handed out, by mode (leafd_ids_issued_total sums them by the mode's metric label). */
void metrics_count_ids(struct metrics *m, int loop, enum ids_mode mode, int n);

/* Writes the families of the counters (Prometheus text format 0.0.4) into b. */
void metrics_write(const struct metrics *m, struct sbuf *b);
/* Writes their rows of the reference table (leafd --print-reference metrics). */
void metrics_print_reference(FILE *out);

#endif
