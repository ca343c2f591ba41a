/*
 * The HTML monitor pages, as Leaf's: GET /cache (every tag's buffers, from
 * memory) and GET /db (the leaf_alloc rows; an admin endpoint, one database
 * round trip, same waiting scheme as api_admin.c). Pages are built in a
 * growable buffer.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "segment_tags.h"

static void page_begin(struct sbuf *p, const char *title, const char *head) {
    sbuf_printf(p,
                "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>"
                "<style>td,th{padding:2px 8px;text-align:right}</style></head><body>"
                "<h2>%s</h2><table border=\"1\"><tr>%s</tr>\n",
                title, title, head);
}

static void page_end(struct sbuf *p, struct http_request *req) {
    sbuf_puts(p, "</table></body></html>\n");
    api_respond_sbuf(req, 200, "text/html; charset=utf-8", p);
}

static const char *const state_names[] = {"pending", "active", "absent"};

static void cache_row(const struct segment_tag_view *v, void *arg) {
    struct sbuf *p = arg;
    const struct segment_buffer *b = &v->buf;
    struct segment_range cur;
    int has = segment_buffer_current(b, &cur);
    sbuf_printf(p,
                "<tr><td>%s</td><td>%s</td><td>%s</td><td>%" PRId64 "</td><td>%" PRId64
                "</td><td>%" PRId64 "</td><td>%" PRId64 "</td><td>%" PRId64 "</td><td>%d</td>"
                "<td>%s</td><td>%s</td><td>%" PRId64 "</td><td>%" PRIu64 "</td></tr>\n",
                v->name, state_names[v->state], has ? "true" : "false", cur.start, cur.next,
                cur.end, b->step, b->min_step, b->nranges, b->nranges > 1 ? "true" : "false",
                b->fetching ? "true" : "false", b->available, b->fetches);
}

leaf_status_t api_cache_page(struct http_request *req) {
    const struct api_ctx *ctx = api_ctx(req);
    struct sbuf p = SBUF_INIT;
    page_begin(&p, "leafd segment cache",
               "<th>key</th><th>state</th><th>init ok</th><th>value (first)</th><th>pos (next)"
               "</th><th>max (end)</th><th>step</th><th>min step</th><th>ranges</th>"
               "<th>next ready</th><th>fetching</th><th>remaining</th><th>fetches</th>");
    if (!ctx->cfg->segment_enable) {
        sbuf_puts(&p, "<tr><td colspan=\"13\">segment mode is disabled</td></tr>");
    }
    segment_service_each(ctx->segment, cache_row, &p);
    page_end(&p, req);
    sbuf_free(&p);
    return LEAF_OK;
}

static void db_page(struct http_request *req, struct segment_db_job *job) {
    if (job->rc != LEAF_OK) {
        http_respond_error(req, 503, "database_unavailable", "the database is unavailable");
        return;
    }
    struct sbuf p = SBUF_INIT;
    page_begin(&p, "leafd leaf_alloc",
               "<th>biz_tag</th><th>max_id</th><th>step</th><th>description</th>"
               "<th>update_time</th>");
    for (size_t i = 0; i < job->nrows; i++) {
        const struct segment_db_row *r = &job->rows[i];
        sbuf_puts(&p, "<tr><td>");
        sbuf_html(&p, r->biz_tag, strlen(r->biz_tag));
        sbuf_printf(&p, "</td><td>%" PRId64 "</td><td>%" PRId64 "</td><td>", r->max_id, r->step);
        sbuf_html(&p, r->description, strlen(r->description));
        sbuf_printf(&p, "</td><td>%s</td></tr>\n", r->update_time);
    }
    page_end(&p, req);
    sbuf_free(&p);
}

leaf_status_t api_db_page(struct http_request *req) {
    if (req->retries > 0) {
        return api_admin_wait(req, db_page);
    }
    if (!api_ctx(req)->cfg->segment_enable) {
        http_respond_error(req, 503, "segment_disabled", "segment mode is disabled on this node");
        return LEAF_OK;
    }
    return api_admin_start(req, segment_db_job_new(SEGMENT_DB_LIST, NULL, 0));
}
