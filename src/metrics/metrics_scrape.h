#ifndef LEAF_METRICS_SCRAPE_H
#define LEAF_METRICS_SCRAPE_H

/*
 * A scrape: every family leafd exports, in the order of the table in
 * metrics_scrape.c (one row a family: its writer, name, type and help),
 * rendered into a growable buffer, so a scrape is never cut. Runs on the
 * scraping request's loop thread.
 */
#include <stdio.h>

#include "sbuf.h"

struct api_ctx;

/* Renders every family (Prometheus text format 0.0.4) into b. */
void metrics_scrape(const struct api_ctx *ctx, struct sbuf *b);

/* Writes the families (name, type, help) as a Markdown table: leafd --print-reference metrics. */
void metrics_print_reference(FILE *out);

#endif
