#ifndef LEAF_PAGE_H
#define LEAF_PAGE_H

/*
 * What the HTML monitor pages share (page.c): the query of a table view
 * (?tag= filter, ?sort= and ?desc=, ?page= and ?per=, ?refresh=), the page's
 * head (title, navigation between the pages, this node's identity, the
 * filter form and the refresh control), column headers that sort, the
 * pager, and the foot with the render time. Plain HTML, a few lines of
 * inline JavaScript, no external resources. Runs on an event-loop thread.
 */
#include <stddef.h>
#include <stdint.h>

#include "door_ctx.h"
#include "door_http.h"
#include "sbuf.h"
#include "validate.h"

#define PAGE_PER_DEFAULT 100
#define PAGE_PER_MAX 1000

struct page_query {
    char tag[VALIDATE_TAG_MAX + 1]; /* substring filter, case-insensitive ("" = all) */
    int sort;                       /* index into the page's column list */
    const char *sort_key;           /* its ?sort= name */
    int desc;
    int64_t page; /* 1-based */
    int64_t per;
    int refresh; /* seconds, 0 = off */
};

/* A sortable column: its query name and its header text. */
struct page_column {
    const char *key;   /* ?sort= value; NULL = not sortable */
    const char *title; /* header */
    int numeric;       /* right-aligned */
};

void page_query_parse(const struct http_request *req, const struct page_column *cols, int ncols,
                      struct page_query *q);

/* 1 when name contains the filter (case-insensitive), or the filter is empty. */
int page_tag_matches(const struct page_query *q, const char *name);

/* DOCTYPE .. the identity line, and the form (with the tag filter when filterable). */
void page_head(struct sbuf *p, const struct door_ctx *ctx, const char *path, const char *title,
               const struct page_query *q, int filterable);

/* "<table><tr>" with a link per sortable column; then the caller writes rows. */
void page_table_begin(struct sbuf *p, const char *path, const struct page_query *q,
                      const struct page_column *cols, int ncols);

/* "</table>" and the pager: rows [first, first + shown) of total (of all before filtering). */
void page_table_end(struct sbuf *p, const char *path, const struct page_query *q, size_t total,
                    size_t unfiltered);

/* The page's first row index for q, clamped to total. */
size_t page_first(const struct page_query *q, size_t total);

/* The foot (render time since started_ns) and the 200 answer. */
void page_finish(struct sbuf *p, struct http_request *req, int64_t started_ns);

#endif
