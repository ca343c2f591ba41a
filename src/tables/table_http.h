#ifndef LEAF_TABLE_HTTP_H
#define LEAF_TABLE_HTTP_H

/*
 * The HTTP route table (table_http.c): one row per endpoint, with its method,
 * path, handler (src/api, src/pages; called with the row's mode), the right it
 * needs, whether it issues IDs and a one-line description. Beside it is the
 * RESP command table (table_resp.h); src/tables holds both protocols'
 * tables. Its dispatch is the HTTP protocol's handler
 * (http_conn_config.handler) and its completion hook
 * (http_conn_config.done) does the per-route accounting.
 */
#include <stdio.h>

#include "http_conn.h"
#include "status.h"

/* The dispatch: hands a request to its handler (http_conn_config.handler). */
leaf_status_t table_http_dispatch(struct http_request *req);
/* The completion hook (http_conn_config.done): per-route accounting. */
void table_http_done(const struct http_request *req);
/*
 * The routes' metric labels by index, then the pseudo-routes not_found and
 * bad_request: writes up to cap names, returns how many there are.
 */
int table_http_names(const char **names, int cap);
/* ids[i] = 1 when route i hands out IDs (its issues column), in table_http_names' order. */
void table_http_kinds(unsigned char *ids, int cap);
/* Writes the route table as a Markdown table (leafd --print-reference routes). */
void table_http_print_reference(FILE *out);

#endif
