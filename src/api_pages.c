/*
 * The HTML monitor pages, as Leaf's: GET /cache (every tag's buffers, from
 * memory) and GET /db (the leaf_alloc rows; an admin endpoint, one database
 * round trip, same waiting scheme as src/api_admin.c). Pages are cut short
 * with a note when they would outgrow the loop's scratch buffer.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "leafd.h"
#include "segment_service.h"

#define PAGE_RETRY_MS 1
#define PAGE_EXTRA_WAIT_MS 1000
#define PAGE_RESERVE 512 /* room kept for the page's end */

struct page {
    char *buf;
    size_t cap, len;
    int cut; /* rows left out */
};

static void page_printf(struct page *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void page_printf(struct page *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(p->buf + p->len, p->cap - p->len, fmt, ap);
    va_end(ap);
    if (n > 0) {
        p->len = p->len + (size_t)n >= p->cap ? p->cap - 1 : p->len + (size_t)n;
    }
}

static void page_escape(struct page *p, const char *s) {
    for (; *s && p->len + 8 < p->cap; s++) {
        switch (*s) {
        case '<': page_printf(p, "&lt;"); break;
        case '>': page_printf(p, "&gt;"); break;
        case '&': page_printf(p, "&amp;"); break;
        case '"': page_printf(p, "&quot;"); break;
        case '\'': page_printf(p, "&#39;"); break;
        default: p->buf[p->len++] = *s; break;
        }
    }
    p->buf[p->len] = '\0';
}

static int page_room(struct page *p) {
    if (p->len + PAGE_RESERVE + 1024 > p->cap) {
        p->cut++;
        return 0;
    }
    return 1;
}

static void page_begin(struct page *p, struct http_request *req, const char *title,
                       const char *head) {
    p->buf = http_loop_scratch(req->loop);
    p->cap = HTTP_SCRATCH;
    p->len = 0;
    p->cut = 0;
    page_printf(p, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>"
                   "<style>td,th{padding:2px 8px;text-align:right}</style></head><body>"
                   "<h2>%s</h2><table border=\"1\"><tr>%s</tr>\n", title, title, head);
}

static void page_end(struct page *p, struct http_request *req) {
    page_printf(p, "</table>");
    if (p->cut) {
        page_printf(p, "<p>%d more rows not shown</p>", p->cut);
    }
    page_printf(p, "</body></html>\n");
    http_respond(req, 200, "text/html; charset=utf-8", p->buf, p->len);
}

static const char *const state_names[] = {"pending", "active", "absent"};

static void cache_row(const struct segment_tag_view *v, void *arg) {
    struct page *p = arg;
    if (!page_room(p)) {
        return;
    }
    const struct segment_buffer *b = &v->buf;
    struct segment_range cur;
    int has = segment_buffer_current(b, &cur);
    page_printf(p, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%" PRId64 "</td><td>%" PRId64
                   "</td><td>%" PRId64 "</td><td>%" PRId64 "</td><td>%" PRId64 "</td><td>%d</td>"
                   "<td>%s</td><td>%s</td><td>%" PRId64 "</td><td>%" PRIu64 "</td></tr>\n",
                v->name, state_names[v->state], has ? "true" : "false", cur.start, cur.next,
                cur.end, b->step, b->min_step, b->nranges, b->nranges > 1 ? "true" : "false",
                b->fetching ? "true" : "false", b->available, b->fetches);
}

leaf_status_t api_cache_page(struct http_request *req) {
    struct page p;
    page_begin(&p, req, "leafd segment cache",
               "<th>key</th><th>state</th><th>init ok</th><th>value (first)</th><th>pos (next)"
               "</th><th>max (end)</th><th>step</th><th>min step</th><th>ranges</th>"
               "<th>next ready</th><th>fetching</th><th>remaining</th><th>fetches</th>");
    if (!leafd.cfg.segment_enable) {
        page_printf(&p, "<tr><td colspan=\"13\">segment mode is disabled</td></tr>");
    }
    segment_service_each(cache_row, &p);
    page_end(&p, req);
    return LEAF_OK;
}

static void db_page(struct http_request *req, struct segment_db_job *job) {
    if (job->rc != LEAF_OK) {
        http_respond_error(req, 503, "database_unavailable", "the database is unavailable");
        return;
    }
    struct page p;
    page_begin(&p, req, "leafd leaf_alloc",
               "<th>biz_tag</th><th>max_id</th><th>step</th><th>description</th>"
               "<th>update_time</th>");
    for (size_t i = 0; i < job->nrows; i++) {
        const struct segment_db_row *r = &job->rows[i];
        if (!page_room(&p)) {
            continue;
        }
        page_printf(&p, "<tr><td>");
        page_escape(&p, r->biz_tag);
        page_printf(&p, "</td><td>%" PRId64 "</td><td>%" PRId64 "</td><td>", r->max_id, r->step);
        page_escape(&p, r->description);
        page_printf(&p, "</td><td>%s</td></tr>\n", r->update_time);
    }
    page_end(&p, req);
}

leaf_status_t api_db_page(struct http_request *req) {
    struct segment_db_job *job = NULL;
    if (req->retries == 0) {
        if (!api_admin_allowed(req)) {
            return LEAF_OK;
        }
        if (!leafd.cfg.segment_enable) {
            http_respond_error(req, 503, "segment_disabled", "segment mode is disabled on this node");
            return LEAF_OK;
        }
        job = segment_db_job_new(SEGMENT_DB_LIST, NULL, 0);
        if (job == NULL || segment_service_admin_begin(req, job) != LEAF_OK) {
            segment_db_job_free(job);
            http_respond_error(req, 503, "busy", "too many admin requests in flight");
            return LEAF_OK;
        }
        req->retry_ms = PAGE_RETRY_MS;
        return LEAF_EAGAIN;
    }
    leaf_status_t rc = segment_service_admin_poll(req, &job);
    if (rc == LEAF_OK) {
        db_page(req, job);
        segment_db_job_free(job);
        return LEAF_OK;
    }
    if (rc == LEAF_EAGAIN &&
        http_loop_now(req->loop) - req->first_seen_ms < leafd.cfg.db_timeout_ms + PAGE_EXTRA_WAIT_MS) {
        req->retry_ms = PAGE_RETRY_MS;
        return LEAF_EAGAIN;
    }
    segment_service_admin_abandon(req);
    http_respond_error(req, 503, "database_unavailable", "the database did not answer in time");
    return LEAF_OK;
}
