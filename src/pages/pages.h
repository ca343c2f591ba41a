#ifndef LEAF_PAGES_H
#define LEAF_PAGES_H

/*
 * The HTML monitor pages, the route table's handlers (src/app/router.c):
 * GET /cache and GET /db (page_segment.c), GET /cluster (page_cluster.c)
 * and GET / (page_index.c). What they share is page.h's.
 */
#include "http_proto.h"
#include "status.h"

leaf_status_t page_cache(struct http_request *req);
leaf_status_t page_db(struct http_request *req);
leaf_status_t page_cluster(struct http_request *req);
/* GET /: the index page linking the pages. */
leaf_status_t page_index(struct http_request *req);

#endif
