/*
 * The monitor pages' shared parts: the table view's query, the head with
 * navigation, identity, filter and refresh control, sortable headers, the
 * pager and the foot. See page.h.
 */
#include "page.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "clock.h"
#include "door_http.h"
#include "num.h"
#include "validate.h"
#include "version.h"

static const char page_style[] =
    "<style>body{font:14px system-ui,sans-serif;margin:1em;color:#222}"
    "nav a{margin-right:1.2em}h2{margin:.4em 0}.id{color:#555;margin:.3em 0 .8em}"
    "table{border-collapse:collapse;margin:.5em 0}th,td{padding:3px 8px;border:1px solid #ccc;"
    "text-align:left;vertical-align:top}th{background:#f3f3f3}th a{color:inherit}"
    ".n{text-align:right;font-variant-numeric:tabular-nums}.bad{color:#b00;font-weight:bold}"
    ".ok{color:#070}.warn{color:#a60}.dim{color:#888}form{margin:.4em 0}"
    ".pager a,.pager span{margin-right:1em}</style>\n";

/* Decodes %XX into out (the tag alphabet only); anything else empties the filter. */
static void page_decode_tag(const char *v, size_t n, char *out, size_t cap) {
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < cap; i++) {
        char ch = v[i];
        unsigned hi, lo;
        if (ch == '%' && i + 2 < n && sscanf(v + i + 1, "%1x%1x", &hi, &lo) == 2) {
            ch = (char)(hi * 16 + lo);
            i += 2;
        } else if (ch == '+') {
            ch = ' ';
        }
        out[o++] = ch;
    }
    out[o] = '\0';
    if (o > 0 && !validate_tag(out, o)) {
        out[0] = '\0'; /* not a possible tag: no filter (the form shows it empty) */
    }
}

static int64_t page_query_int(const struct http_request *req, const char *name, int64_t def,
                              int64_t lo, int64_t hi) {
    const char *v;
    size_t n;
    int64_t x;
    if (!door_http_query(req, name, &v, &n) || num_parse_i64(v, n, &x) != LEAF_OK) {
        return def;
    }
    return x < lo ? lo : (x > hi ? hi : x);
}

void page_query_parse(const struct http_request *req, const struct page_column *cols, int ncols,
                      struct page_query *q) {
    const char *v;
    size_t n;
    memset(q, 0, sizeof(*q));
    if (door_http_query(req, "tag", &v, &n)) {
        page_decode_tag(v, n, q->tag, sizeof(q->tag));
    }
    if (door_http_query(req, "sort", &v, &n)) {
        for (int i = 0; i < ncols; i++) {
            if (cols[i].key != NULL && strlen(cols[i].key) == n && memcmp(cols[i].key, v, n) == 0) {
                q->sort = i;
            }
        }
    }
    q->sort_key = ncols > 0 ? cols[q->sort].key : NULL;
    q->desc = (int)page_query_int(req, "desc", 0, 0, 1);
    q->page = page_query_int(req, "page", 1, 1, INT64_MAX / 2);
    q->per = page_query_int(req, "per", PAGE_PER_DEFAULT, 1, PAGE_PER_MAX);
    q->refresh = (int)page_query_int(req, "refresh", 0, 0, 3600);
}

int page_tag_matches(const struct page_query *q, const char *name) {
    size_t fl = strlen(q->tag), nl = strlen(name);
    if (fl == 0) {
        return 1;
    }
    for (size_t i = 0; i + fl <= nl; i++) {
        if (strncasecmp(name + i, q->tag, fl) == 0) {
            return 1;
        }
    }
    return 0;
}

/* An href to path with q's view, changed by sort_key (NULL = keep), desc and page (-1 = keep). */
static void page_href(struct sbuf *p, const char *path, const struct page_query *q,
                      const char *sort_key, int desc, int64_t page) {
    sbuf_printf(p, "%s?", path);
    if (q->tag[0] != '\0') {
        sbuf_printf(p, "tag=%s&amp;", q->tag); /* the tag alphabet needs no escaping */
    }
    sort_key = sort_key != NULL ? sort_key : q->sort_key;
    if (sort_key != NULL) {
        sbuf_printf(p, "sort=%s&amp;", sort_key);
    }
    sbuf_printf(p, "desc=%d&amp;page=%" PRId64 "&amp;per=%" PRId64 "&amp;refresh=%d",
                desc >= 0 ? desc : q->desc, page >= 0 ? page : q->page, q->per, q->refresh);
}

static void page_identity(struct sbuf *p, const struct door_ctx *ctx) {
    const struct leaf_config *c = ctx->cfg;
    sbuf_puts(p, "<div class=\"id\">node <b>");
    if (c->advertise_ip[0] != '\0') {
        sbuf_printf(p, "%s:%d", c->advertise_ip, c->identity_port);
    } else {
        sbuf_puts(p, c->listen);
    }
    sbuf_printf(p, "</b> (listens on %s)", c->listen);
    if (c->snowflake_enable) {
        struct snowflake_service_view v;
        snowflake_service_view(ctx->snowflake, &v);
        sbuf_printf(p, " &middot; worker ID <b>%d</b> (%s)", v.worker_id,
                    v.is_static ? "static, not coordinated" : "ZooKeeper");
    }
    sbuf_printf(p, " &middot; modes:%s%s%s", c->snowflake_enable ? " snowflake" : "",
                c->segment_enable ? " segment" : "", c->sequence_enable ? " sequence" : "");
    if (c->sequence_enable) {
        struct sequence_service_stats st;
        sequence_service_stats(ctx->sequence, &st);
        sbuf_printf(p, " (%s)", st.primary ? "primary" : "standby");
    }
    char when[32];
    time_t now = (time_t)(clock_wall_ms() / 1000);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
    sbuf_printf(p, " &middot; leafd %s, pid %ld, up %" PRId64 " s &middot; rendered %s</div>\n",
                leafd_version(), ctx->pid, (clock_wall_ms() - ctx->started_ms) / 1000, when);
}

static void page_form(struct sbuf *p, const char *path, const struct page_query *q,
                      int filterable) {
    static const int refresh_choices[] = {0, 5, 10, 30, 60};
    sbuf_printf(p, "<form method=\"get\" action=\"%s\">", path);
    if (filterable) {
        sbuf_puts(p, "tag contains <input id=\"tag\" name=\"tag\" size=\"24\" value=\"");
        sbuf_html(p, q->tag, strlen(q->tag));
        sbuf_printf(p,
                    "\" placeholder=\"tag\"> rows per page <input name=\"per\" "
                    "size=\"4\" value=\"%" PRId64 "\"> <button>show</button> ",
                    q->per);
    }
    sbuf_puts(p, "refresh <select name=\"refresh\">");
    for (size_t i = 0; i < sizeof(refresh_choices) / sizeof(refresh_choices[0]); i++) {
        int r = refresh_choices[i];
        sbuf_printf(p, "<option value=\"%d\"%s>%s%.0d%s</option>", r,
                    r == q->refresh ? " selected" : "", r ? "every " : "off", r, r ? " s" : "");
    }
    /* No script: the pages' Content-Security-Policy allows none. */
    sbuf_printf(p, "</select> %s<a href=\"\">refresh now</a></form>\n",
                filterable ? "" : "<button>apply</button> ");
}

void page_head(struct sbuf *p, const struct door_ctx *ctx, const char *path, const char *title,
               const struct page_query *q, int filterable) {
    sbuf_printf(p, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>\n",
                title);
    if (q->refresh > 0) {
        sbuf_printf(p, "<meta http-equiv=\"refresh\" content=\"%d\">\n", q->refresh);
    }
    sbuf_puts(p, page_style);
    sbuf_puts(p, "</head><body>\n<nav><a href=\"/\">leafd</a><a href=\"/cluster\">cluster</a><a "
                 "href=\"/cache\">"
                 "segment cache</a><a href=\"/db\">leaf_alloc (db)</a><a href=\"/ready\">/ready"
                 "</a><a href=\"/metrics\">/metrics</a></nav>\n");
    sbuf_printf(p, "<h2>%s</h2>\n", title);
    page_identity(p, ctx);
    page_form(p, path, q, filterable);
}

void page_table_begin(struct sbuf *p, const char *path, const struct page_query *q,
                      const struct page_column *cols, int ncols) {
    sbuf_puts(p, "<table><tr>");
    for (int i = 0; i < ncols; i++) {
        sbuf_printf(p, "<th%s>", cols[i].numeric ? " class=\"n\"" : "");
        if (cols[i].key == NULL) {
            sbuf_printf(p, "%s</th>", cols[i].title);
            continue;
        }
        /* A click sorts by the column; a second click reverses it. */
        int desc = i == q->sort ? !q->desc : cols[i].numeric;
        sbuf_puts(p, "<a href=\"");
        page_href(p, path, q, cols[i].key, desc, 1);
        sbuf_printf(p, "\">%s</a>%s</th>", cols[i].title,
                    i == q->sort ? (q->desc ? " &#9660;" : " &#9650;") : "");
    }
    sbuf_puts(p, "</tr>\n");
}

size_t page_first(const struct page_query *q, size_t total) {
    uint64_t first = (uint64_t)(q->page - 1) * (uint64_t)q->per;
    return first > total ? total : (size_t)first;
}

void page_table_end(struct sbuf *p, const char *path, const struct page_query *q, size_t total,
                    size_t unfiltered) {
    size_t first = page_first(q, total);
    size_t last = first + (size_t)q->per < total ? first + (size_t)q->per : total;
    int64_t pages = total == 0 ? 1 : (int64_t)((total + (size_t)q->per - 1) / (size_t)q->per);
    sbuf_puts(p, "</table>\n<div class=\"pager\">");
    if (q->page > 1) {
        sbuf_puts(p, "<a href=\"");
        page_href(p, path, q, NULL, -1, 1);
        sbuf_puts(p, "\">&laquo; first</a><a rel=\"prev\" href=\"");
        page_href(p, path, q, NULL, -1, q->page - 1);
        sbuf_puts(p, "\">&lsaquo; previous</a>");
    }
    sbuf_printf(p, "<span>rows %zu&ndash;%zu of %zu", total ? first + 1 : 0, last, total);
    if (q->tag[0] != '\0') {
        sbuf_printf(p, " matching &laquo;%s&raquo; (of %zu)", q->tag, unfiltered);
    }
    sbuf_printf(p, ", page %" PRId64 " of %" PRId64 "</span>", q->page, pages);
    if (q->page < pages) {
        sbuf_puts(p, "<a rel=\"next\" href=\"");
        page_href(p, path, q, NULL, -1, q->page + 1);
        sbuf_puts(p, "\">next &rsaquo;</a><a href=\"");
        page_href(p, path, q, NULL, -1, pages);
        sbuf_puts(p, "\">last &raquo;</a>");
    }
    sbuf_puts(p, "</div>\n");
}

void page_finish(struct sbuf *p, struct http_request *req, int64_t started_ns) {
    sbuf_printf(p, "<p class=\"dim\">rendered in %.1f ms</p></body></html>\n",
                (double)(clock_mono_ns() - started_ns) / 1e6);
    /* No script, frame or resource from anywhere: what a page shows stays text. */
    static const char security[] =
        "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'\r\n"
        "X-Frame-Options: DENY\r\nX-Content-Type-Options: nosniff\r\n" DOOR_HTTP_NO_STORE;
    if (p->failed) {
        door_http_error(req, DOOR_E_OUT_OF_MEMORY, "out of memory building the answer");
        return;
    }
    http_respond_ex(req, 200, "text/html; charset=utf-8", security, p->data ? p->data : "", p->len);
}
