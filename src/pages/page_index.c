/*
 * GET /: the index page. A newcomer who opens the node in a browser finds
 * every page and the ID endpoints of the modes this node serves, each a
 * link, with a line on what it shows.
 */
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "page.h"
#include "pages.h"

/* The pages and endpoints, one row each; mode: -1 any node, else served with that mode only. */
struct index_link {
    const char *href;
    const char *what;
    int mode;
};

static const struct index_link index_links[] = {
    {"/cluster", "the live nodes: worker IDs, clock offsets, readiness; sequences; runway", -1},
    {"/cache", "segment buffers of every tag in memory (Leaf's page)", IDS_SEGMENT},
    {"/db", "the leaf_alloc rows (an admin page)", IDS_SEGMENT},
    {"/ready",
     "200 when every enabled mode (or ?mode=segment,...) can issue IDs now, else 503 with the "
     "reasons",
     -1},
    {"/health", "200 while the process serves", -1},
    {"/metrics", "Prometheus text format", -1},
    {"/api/snowflake/get/example?count=5", "five snowflake IDs", IDS_SNOWFLAKE},
    {"/api/snowflake/time", "this node's clock and its snowflake time", IDS_SNOWFLAKE},
    {"/api/segment/get/leaf-segment-test", "a segment ID of the tag leaf-segment-test",
     IDS_SEGMENT},
};

static int index_mode_on(const struct door_ctx *ctx, int mode) {
    switch (mode) {
    case IDS_SNOWFLAKE: return ctx->cfg->snowflake_enable;
    case IDS_SEGMENT: return ctx->cfg->segment_enable;
    default: return 1;
    }
}

leaf_status_t page_index(struct http_request *req, enum ids_mode mode) {
    const struct door_ctx *ctx = door_ctx(req);
    int64_t t0 = clock_mono_ns();
    struct page_query q;
    page_query_parse(req, NULL, 0, &q);
    struct sbuf p = SBUF_INIT;
    page_head(&p, ctx, "/", "leafd", &q, 0);
    sbuf_printf(
        &p, "<p>Modes on this node: %s%s%s</p>\n", ctx->cfg->snowflake_enable ? "snowflake " : "",
        ctx->cfg->segment_enable ? "segment " : "", ctx->cfg->sequence_enable ? "sequence " : "");
    if (ctx->cfg->resp_port) {
        sbuf_printf(&p,
                    "<p>Redis protocol on %s:%d, e.g. <code>redis-cli -h %s -p %d INCR "
                    "snowflake:example</code></p>\n",
                    ctx->cfg->resp_host, ctx->cfg->resp_port, ctx->cfg->resp_host,
                    ctx->cfg->resp_port);
    }
    sbuf_puts(&p, "<table><tr><th>page</th><th>what it shows</th></tr>\n");
    for (size_t i = 0; i < sizeof(index_links) / sizeof(index_links[0]); i++) {
        const struct index_link *l = &index_links[i];
        if (!index_mode_on(ctx, l->mode)) {
            continue;
        }
        sbuf_printf(&p, "<tr><td><a href=\"%s\">%s</a></td><td>%s</td></tr>\n", l->href, l->href,
                    l->what);
    }
    sbuf_puts(&p, "</table>\n");
    page_finish(&p, req, t0);
    sbuf_free(&p);
    return LEAF_OK;
}
