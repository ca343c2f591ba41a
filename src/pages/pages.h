#ifndef LEAF_PAGES_H
#define LEAF_PAGES_H

/*
 * What the node shows of itself, the route table's handlers (src/tables/table_http.c):
 * the HTML monitor pages GET /cache and GET /db (page_segment.c), GET /cluster
 * (page_cluster.c) and GET / (page_index.c), and GET /metrics
 * (page_metrics.c). What the HTML pages share is page.h's.
 */
#include <stdio.h>

#include "http_conn.h"
#include "ids_mode.h"
#include "status.h"

leaf_status_t page_cache(struct http_request *req, enum ids_mode mode);
leaf_status_t page_db(struct http_request *req, enum ids_mode mode);
leaf_status_t page_cluster(struct http_request *req, enum ids_mode mode);
/* GET /: the index page linking the pages. */
leaf_status_t page_index(struct http_request *req, enum ids_mode mode);
/* GET /metrics: every family, Prometheus text format (page_metrics.c). */
leaf_status_t page_metrics(struct http_request *req, enum ids_mode mode);
/* Writes the families (name, type, help) as a Markdown table: leafd --print-reference metrics. */
void page_metrics_print_reference(FILE *out);

#endif
