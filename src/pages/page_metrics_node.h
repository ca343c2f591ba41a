#ifndef LEAF_PAGE_METRICS_NODE_H
#define LEAF_PAGE_METRICS_NODE_H

/*
 * The node's families on /metrics (page_metrics_node.c): what the services'
 * views say, read once per scrape. The request counters' families are
 * src/metrics'; the process's, and the scrape that writes them all in order,
 * page_metrics.c's. Runs on the scraping request's loop thread.
 */
#include <stdio.h>

#include "door_ctx.h"
#include "sbuf.h"

/* Writes every family of the node (Prometheus text format 0.0.4) into b. */
void page_metrics_node_write(const struct door_ctx *ctx, struct sbuf *b);
/* Writes their rows of the reference table (leafd --print-reference metrics). */
void page_metrics_node_print_reference(FILE *out);

#endif
