/*
 * The HTML monitor pages, as Leaf's, made usable at 100,000 tags: GET /cache
 * (every tag's two buffers, from memory) and GET /db (the leaf_alloc rows; an
 * admin endpoint, one database round trip, same waiting scheme as
 * the admin API: src/door/door_http_job.c). Both filter (?tag=), sort (?sort=, ?desc=) and page
 * (?page=, ?per=); the shared head, form and pager are in page.c. Rows are collected, filtered and
 * sorted in memory, then one page is written.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "door_http.h"
#include "door_http_job.h"
#include "page.h"
#include "pages.h"
#include "segment_tags.h"

/* ---- /cache --------------------------------------------------------------- */

/* One tag as the page shows it: a copy taken under the tag's lock. */
struct cache_row {
    char name[VALIDATE_TAG_MAX + 1];
    int state;
    int ranges; /* buffered ranges: 0, 1 (current) or 2 (current and next) */
    int fetching;
    struct segment_range cur, next;
    int64_t available, step, min_step;
    uint64_t fetches, errors, issued;
};

struct cache_rows {
    struct cache_row *rows;
    size_t n, cap, unfiltered;
    const struct page_query *q;
    int oom;
};

static const char *const state_names[] = {"pending", "active", "absent"};

static void cache_collect(const struct segment_tag_view *v, void *arg) {
    struct cache_rows *c = arg;
    c->unfiltered++;
    if (c->oom || !page_tag_matches(c->q, v->name)) {
        return;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 256;
        struct cache_row *rows = realloc(c->rows, cap * sizeof(*rows));
        if (rows == NULL) {
            c->oom = 1;
            return;
        }
        c->rows = rows;
        c->cap = cap;
    }
    const struct segment_buffer *b = &v->buf;
    struct cache_row *r = &c->rows[c->n++];
    memset(r, 0, sizeof(*r));
    memcpy(r->name, v->name, sizeof(r->name));
    r->state = v->state >= 0 && v->state <= 2 ? v->state : 0;
    r->ranges = b->nranges;
    r->fetching = b->fetching;
    if (b->nranges > 0) {
        r->cur = b->ranges[b->head];
    }
    if (b->nranges > 1) {
        r->next = b->ranges[(b->head + 1) % SEGMENT_MAX_RANGES];
    }
    r->available = b->available;
    r->step = b->step;
    r->min_step = b->min_step;
    r->fetches = b->fetches;
    r->errors = v->fetch_errors;
    r->issued = b->issued;
}

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b))

/* The rows are sorted through pointers: moving 100,000 rows of 250 bytes is what took time. */
typedef const struct cache_row *cache_ptr;

static int cache_by_tag(const void *x, const void *y) {
    return strcmp((*(const cache_ptr *)x)->name, (*(const cache_ptr *)y)->name);
}
/* Numeric columns break ties by tag, so a page never shuffles between renders. */
#define CACHE_CMP_FN(fname, expr)                                                                  \
    static int fname(const void *x, const void *y) {                                               \
        const struct cache_row *a = *(const cache_ptr *)x, *b = *(const cache_ptr *)y;             \
        int c = (expr);                                                                            \
        return c != 0 ? c : strcmp(a->name, b->name);                                              \
    }
CACHE_CMP_FN(cache_by_left, CMP(a->cur.end - a->cur.next, b->cur.end - b->cur.next))
CACHE_CMP_FN(cache_by_available, CMP(a->available, b->available))
CACHE_CMP_FN(cache_by_step, CMP(a->step, b->step))
CACHE_CMP_FN(cache_by_fetches, CMP(a->fetches, b->fetches))
CACHE_CMP_FN(cache_by_errors, CMP(a->errors, b->errors))
CACHE_CMP_FN(cache_by_issued, CMP(a->issued, b->issued))

static const struct page_column cache_cols[] = {
    {"tag", "biz_tag", 0},          {NULL, "state", 0},
    {NULL, "current range", 0},     {NULL, "next ID", 1},
    {"left", "left in current", 1}, {NULL, "next range (second buffer)", 0},
    {"available", "available", 1},  {"step", "step", 1},
    {NULL, "table step", 1},        {"fetches", "fetches", 1},
    {"errors", "fetch errors", 1},  {"issued", "issued", 1},
};
#define CACHE_NCOLS ((int)(sizeof(cache_cols) / sizeof(cache_cols[0])))
static int (*const cache_cmp[CACHE_NCOLS])(const void *, const void *) = {
    cache_by_tag,
    NULL,
    NULL,
    NULL,
    cache_by_left,
    NULL,
    cache_by_available,
    cache_by_step,
    NULL,
    cache_by_fetches,
    cache_by_errors,
    cache_by_issued,
};

static void cache_row_html(struct sbuf *p, const struct cache_row *r) {
    sbuf_printf(p, "<tr><td>%s</td><td%s>%s</td>", r->name, r->state == 1 ? "" : " class=\"warn\"",
                state_names[r->state]);
    if (r->ranges > 0) {
        sbuf_printf(p,
                    "<td>%" PRId64 " &ndash; %" PRId64 "</td><td class=\"n\">%" PRId64
                    "</td><td class=\"n\">%" PRId64 "</td>",
                    r->cur.start, r->cur.end - 1, r->cur.next, r->cur.end - r->cur.next);
    } else {
        sbuf_puts(p, "<td class=\"bad\">empty</td><td></td><td class=\"n\">0</td>");
    }
    if (r->ranges > 1) {
        sbuf_printf(p, "<td class=\"ok\">ready: %" PRId64 " &ndash; %" PRId64 "</td>",
                    r->next.start, r->next.end - 1);
    } else {
        sbuf_printf(p, "<td class=\"dim\">%s</td>", r->fetching ? "fetching" : "not yet");
    }
    sbuf_printf(p,
                "<td class=\"n\">%" PRId64 "</td><td class=\"n\">%" PRId64
                "</td><td class=\"n\">%" PRId64 "</td><td class=\"n\">%" PRIu64
                "</td><td class=\"n%s\">%" PRIu64 "</td><td class=\"n\">%" PRIu64 "</td></tr>\n",
                r->available, r->step, r->min_step, r->fetches, r->errors ? " bad" : "", r->errors,
                r->issued);
}

/* Reverses n pointers (a descending view of an ascending sort). */
static void ptrs_reverse(const void **a, size_t n) {
    for (size_t i = 0; i < n / 2; i++) {
        const void *t = a[i];
        a[i] = a[n - 1 - i];
        a[n - 1 - i] = t;
    }
}

leaf_status_t page_cache(struct http_request *req, enum ids_mode mode) {
    const struct door_ctx *ctx = door_ctx(req);
    int64_t t0 = clock_mono_ns();
    struct page_query q;
    page_query_parse(req, cache_cols, CACHE_NCOLS, &q);
    struct cache_rows c = {.q = &q};
    segment_service_each(ctx->segment, cache_collect, &c);
    cache_ptr *order = malloc((c.n ? c.n : 1) * sizeof(cache_ptr));
    if (order == NULL) {
        free(c.rows);
        door_http_error(req, DOOR_E_OUT_OF_MEMORY, "out of memory");
        return LEAF_OK;
    }
    for (size_t i = 0; i < c.n; i++) {
        order[i] = &c.rows[i];
    }
    qsort(order, c.n, sizeof(cache_ptr), cache_cmp[q.sort] ? cache_cmp[q.sort] : cache_by_tag);
    if (q.desc) {
        ptrs_reverse((const void **)order, c.n);
    }
    struct sbuf p = SBUF_INIT;
    page_head(&p, ctx, "/cache", "leafd segment cache", &q, 1);
    if (!ctx->cfg->segment_enable) {
        sbuf_puts(&p, "<p>segment mode is disabled on this node</p>\n");
    }
    if (c.oom) {
        sbuf_puts(&p, "<p class=\"bad\">out of memory: some tags are not shown</p>\n");
    }
    if (ctx->cfg->segment_enable) {
        sbuf_printf(&p,
                    "<p>%zu tags in leaf_alloc at the last refresh; a tag is shown here once "
                    "asked for (it gets its buffers on its first request)</p>\n",
                    segment_service_known(ctx->segment));
    }
    page_table_begin(&p, "/cache", &q, cache_cols, CACHE_NCOLS);
    size_t first = page_first(&q, c.n);
    for (size_t i = first; i < c.n && i < first + (size_t)q.per; i++) {
        cache_row_html(&p, order[i]);
    }
    page_table_end(&p, "/cache", &q, c.n, c.unfiltered);
    free(order);
    free(c.rows);
    page_finish(&p, req, t0);
    sbuf_free(&p);
    return LEAF_OK;
}

/* ---- /db ------------------------------------------------------------------ */

static const struct page_column db_cols[] = {
    {"tag", "biz_tag", 0},    {"max_id", "max_id", 1},           {"step", "step", 1},
    {NULL, "description", 0}, {"update_time", "update_time", 0},
};
#define DB_NCOLS ((int)(sizeof(db_cols) / sizeof(db_cols[0])))
#define DB_PAGE_EXTRA_WAIT_MS 15000

/* Rows are large (a 1 KB description buffer each): sort pointers to them. */
static int db_by_tag(const void *x, const void *y) {
    const struct segment_db_row *a = *(const struct segment_db_row *const *)x;
    const struct segment_db_row *b = *(const struct segment_db_row *const *)y;
    return strcmp(a->biz_tag, b->biz_tag);
}
#define DB_CMP_FN(fname, expr)                                                                     \
    static int fname(const void *x, const void *y) {                                               \
        const struct segment_db_row *a = *(const struct segment_db_row *const *)x;                 \
        const struct segment_db_row *b = *(const struct segment_db_row *const *)y;                 \
        int c = (expr);                                                                            \
        return c != 0 ? c : strcmp(a->biz_tag, b->biz_tag);                                        \
    }
DB_CMP_FN(db_by_max_id, CMP(a->max_id, b->max_id))
DB_CMP_FN(db_by_step, CMP(a->step, b->step))
DB_CMP_FN(db_by_time, strcmp(a->update_time, b->update_time))
static int (*const db_cmp[DB_NCOLS])(const void *, const void *) = {
    db_by_tag, db_by_max_id, db_by_step, NULL, db_by_time,
};

/* The database hosts above the rows: which one ranges are reserved on, and each one's state. */
static void db_hosts_html(struct sbuf *p, const struct door_ctx *ctx) {
    struct segment_service_stats st;
    segment_service_stats(ctx->segment, &st);
    const struct segment_hosts *h = &st.db_hosts;
    sbuf_printf(
        p, "<p>database hosts (leaf.jdbc.url order), %llu move(s):", (unsigned long long)h->moves);
    for (int i = 0; i < h->n; i++) {
        sbuf_puts(p, i ? ", " : " ");
        sbuf_html(p, h->host[i].name, strlen(h->host[i].name));
        sbuf_printf(p, ":%d %s%s", h->host[i].port, segment_host_state_name(h->host[i].state),
                    i == h->current ? " <b>(in use)</b>" : "");
    }
    sbuf_puts(p, "</p>\n");
}

static void db_page(struct http_request *req, struct segment_db_job *job) {
    int64_t t0 = clock_mono_ns();
    if (job->rc != LEAF_OK) {
        door_http_error(req, IDS_E_DATABASE_UNAVAILABLE, "the database is unavailable");
        return;
    }
    struct page_query q;
    page_query_parse(req, db_cols, DB_NCOLS, &q);
    typedef const struct segment_db_row *row_ptr;
    row_ptr *rows = malloc((job->nrows ? job->nrows : 1) * sizeof(row_ptr));
    if (rows == NULL) {
        door_http_error(req, DOOR_E_OUT_OF_MEMORY, "out of memory");
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < job->nrows; i++) {
        if (page_tag_matches(&q, job->rows[i].biz_tag)) {
            rows[n++] = &job->rows[i];
        }
    }
    qsort(rows, n, sizeof(row_ptr), db_cmp[q.sort] ? db_cmp[q.sort] : db_by_tag);
    if (q.desc) {
        ptrs_reverse((const void **)rows, n);
    }
    struct sbuf p = SBUF_INIT;
    page_head(&p, door_ctx(req), "/db", "leafd leaf_alloc", &q, 1);
    db_hosts_html(&p, door_ctx(req));
    if (job->nrows >= SEGMENT_DB_MAX_ROWS) {
        sbuf_printf(&p,
                    "<p class=\"warn\">%d rows read, the most one query reads: a larger "
                    "table is cut there (in biz_tag order)</p>\n",
                    SEGMENT_DB_MAX_ROWS);
    }
    page_table_begin(&p, "/db", &q, db_cols, DB_NCOLS);
    size_t first = page_first(&q, n);
    for (size_t i = first; i < n && i < first + (size_t)q.per; i++) {
        const struct segment_db_row *r = rows[i];
        sbuf_puts(&p, "<tr><td>");
        sbuf_html(&p, r->biz_tag, strlen(r->biz_tag));
        sbuf_printf(&p, "</td><td class=\"n\">%" PRId64 "</td><td class=\"n\">%" PRId64 "</td><td>",
                    r->max_id, r->step);
        sbuf_html(&p, r->description, strlen(r->description));
        sbuf_printf(&p, "</td><td>%s</td></tr>\n", r->update_time);
    }
    page_table_end(&p, "/db", &q, n, job->nrows);
    free(rows);
    page_finish(&p, req, t0);
    sbuf_free(&p);
}

leaf_status_t page_db(struct http_request *req, enum ids_mode mode) {
    if (req->retries > 0) {
        /* Reading 100,000 rows takes a second or more on a busy server. */
        return door_http_job_wait(req, db_page, DB_PAGE_EXTRA_WAIT_MS);
    }
    if (!door_ctx(req)->cfg->segment_enable) {
        door_http_error(req, IDS_E_SEGMENT_DISABLED, "segment mode is disabled on this node");
        return LEAF_OK;
    }
    return door_http_job_start(req, segment_db_job_new(SEGMENT_DB_LIST, NULL, 0));
}
