/*
 * GET /cluster: the cluster at a glance. A verdict first (healthy, or the
 * list of what is wrong), then every live node with its worker ID, clock
 * offset from this node, age of its last report, modes and version (from
 * the survey, src/node/node_survey.c, which runs on its own thread: the
 * page never waits for it), the sequence primary, and the segment tags
 * with the least runway on this node. ?format=json: the same nodes as JSON,
 * with this node's version and revision.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "door_http.h"
#include "door_ready.h"
#include "page.h"
#include "pages.h"
#include "version.h"

#define CLUSTER_REPORT_STALE_MS 10000 /* reports are written every 3 s */
#define CLUSTER_LOW_TAGS 10

static int64_t abs64(int64_t x) {
    return x < 0 ? -x : x;
}

/* Appends one problem to the verdict list, id escaped (it comes from ZooKeeper); returns 1. */
static int cluster_problem(struct sbuf *v, const char *fmt, const char *id, int64_t n) {
    struct sbuf safe = SBUF_INIT;
    sbuf_html(&safe, id, strlen(id));
    sbuf_puts(v, "<li>");
    sbuf_printf(v, fmt, safe.data != NULL ? safe.data : "", n);
    sbuf_puts(v, "</li>");
    sbuf_free(&safe);
    return 1;
}

/* A peer's text (from ZooKeeper or its /ready), escaped for an element or an attribute. */
static void cluster_text(struct sbuf *p, const char *s) {
    sbuf_html(p, s, strlen(s));
}

/* The peer's identity, a link to its /cluster only when it is an ip:port. */
static void cluster_link(struct sbuf *p, const char *id) {
    char ip[16];
    int port = 0;
    if (validate_ipv4_port(id, strlen(id), ip, &port) != LEAF_OK) {
        cluster_text(p, id);
        return;
    }
    sbuf_printf(p, "<a href=\"http://%s:%d/cluster\">%s:%d</a>", ip, port, ip, port);
}

/*
 * With leafd.zk.auth, while the trees are open: who holds closing back
 * (docs/reference/zookeeper.md, "ACLs"). A stage of a rollout, not a fault.
 */
static void cluster_zk_acl(struct sbuf *p, const struct door_ctx *ctx) {
    if (ctx->zk == NULL || ctx->node_zk == NULL || ctx->cfg->zk_auth[0] == '\0' ||
        zk_session_acl_is_closed(ctx->zk)) {
        return;
    }
    char held[512];
    node_zk_held_back(ctx->node_zk, held, sizeof(held));
    sbuf_puts(p, "<p class=\"warn\">ZooKeeper trees open (leafd.zk.auth set): closing is held "
                 "back by ");
    cluster_text(p, held[0] ? held : "nobody yet (next check within 3 s)");
    sbuf_puts(p, " &mdash; <code>leafctl acl status</code></p>\n");
}

/* The verdict: healthy, or what is wrong, in the order an operator acts on it. */
static void cluster_verdict(struct sbuf *p, const struct door_ctx *ctx,
                            const struct cluster_snapshot *s) {
    struct sbuf v = SBUF_INIT;
    int bad = 0;
    int64_t limit = ctx->cfg->peer_max_offset_ms / 2;
    if (s->error[0] != '\0') {
        bad += cluster_problem(&v, "%s", s->error, 0);
    }
    for (int i = 0; i < s->npeers; i++) {
        const struct cluster_peer *n = &s->peers[i];
        if (!n->reachable) {
            bad += cluster_problem(&v, "%s does not answer over HTTP", n->id, 0);
            continue;
        }
        if (!n->ready) {
            bad += cluster_problem(&v, "%s is not ready (see its /ready)", n->id, 0);
        }
        if (abs64(n->offset_ms) > limit) {
            bad += cluster_problem(&v, "%s: clock %" PRId64 " ms off this node's", n->id,
                                   n->offset_ms);
        }
        if (n->report_age_ms > CLUSTER_REPORT_STALE_MS) {
            bad += cluster_problem(&v, "%s: last report to ZooKeeper %" PRId64 " ms ago", n->id,
                                   n->report_age_ms);
        }
        for (int j = 0; j < i; j++) {
            if (n->worker_id >= 0 && s->peers[j].worker_id == n->worker_id &&
                s->peers[j].reachable) {
                bad += cluster_problem(&v, "%s shares worker ID %" PRId64 " with another node",
                                       n->id, n->worker_id);
            }
        }
    }
    if (s->taken_ms == 0 && s->error[0] == '\0') {
        sbuf_puts(p, "<p class=\"warn\">surveying the cluster&hellip; the table fills in within "
                     "seconds (refresh)</p>\n");
    } else if (bad == 0) {
        sbuf_printf(p,
                    "<p class=\"ok\" style=\"font-size:120%%\">&#10004; healthy: %d live "
                    "node%s, all ready, clocks within %" PRId64 " ms</p>\n",
                    s->npeers, s->npeers == 1 ? "" : "s", limit);
    } else {
        sbuf_printf(p, "<p class=\"bad\" style=\"font-size:120%%\">&#10008; %d problem%s</p><ul>",
                    bad, bad == 1 ? "" : "s");
        sbuf_append(p, v.data, v.len);
        sbuf_puts(p, "</ul>\n");
    }
    sbuf_free(&v);
}

static void cluster_modes(struct sbuf *p, const struct cluster_peer *n) {
    sbuf_printf(p, "%s%s", n->snowflake ? "snowflake " : "", n->segment ? "segment " : "");
    if (n->sequence) {
        sbuf_puts(p, "sequence (");
        cluster_text(p, n->role[0] ? n->role : "?");
        sbuf_putc(p, ')');
    }
}

static void cluster_nodes(struct sbuf *p, const struct door_ctx *ctx,
                          const struct cluster_snapshot *s) {
    char self[64];
    snprintf(self, sizeof(self), "%s:%d", ctx->cfg->advertise_ip, ctx->cfg->identity_port);
    if (s->taken_ms == 0 && s->error[0] == '\0') {
        /* No survey yet: "Live nodes (0)" would say the cluster is empty. */
        sbuf_puts(p, "<h3>Live nodes (surveying&hellip;)</h3>\n<p class=\"dim\">the first survey "
                     "runs now; this page reloads when it is done</p>\n");
        return;
    }
    sbuf_printf(p,
                "<h3>Live nodes (%d)</h3>\n<table><tr><th>node</th><th class=\"n\">worker ID"
                "</th><th class=\"n\">clock offset</th><th class=\"n\">round trip</th><th "
                "class=\"n\">ID lead</th><th class=\"n\">last "
                "report</th><th>modes</th><th>version</th><th>ready</th>"
                "<th>registered under</th></tr>\n",
                s->npeers);
    for (int i = 0; i < s->npeers; i++) {
        const struct cluster_peer *n = &s->peers[i];
        sbuf_puts(p, "<tr><td>");
        if (n->name[0] != '\0') { /* a named identity first, its address after it */
            cluster_text(p, n->name);
            sbuf_putc(p, ' ');
        }
        cluster_link(p, n->id);
        sbuf_printf(p, "%s</td>", strcmp(n->id, self) == 0 ? " <b>(this node)</b>" : "");
        if (!n->reachable) {
            sbuf_puts(p, "<td colspan=\"8\" class=\"bad\">no answer: ");
            sbuf_html(p, n->error, strlen(n->error));
            sbuf_puts(p, "</td>");
        } else {
            int64_t limit = ctx->cfg->peer_max_offset_ms / 2;
            sbuf_puts(p, n->worker_id >= 0 ? "<td class=\"n\">" : "<td class=\"n dim\">");
            if (n->worker_id >= 0) {
                sbuf_printf(p, "%d</td>", n->worker_id);
            } else {
                sbuf_puts(p, "none</td>");
            }
            sbuf_printf(p,
                        "<td class=\"n%s\">%+" PRId64 " ms</td><td class=\"n\">%" PRId64 " ms</td>",
                        abs64(n->offset_ms) > limit ? " bad" : "", n->offset_ms, n->rtt_ms);
            /* the bounded lead (README): IDs' time ahead of the node's own clock */
            if (n->lead_ms >= 0) {
                sbuf_printf(p, "<td class=\"n%s\">%" PRId64 " ms</td>",
                            n->lead_ms > 1000 ? " bad" : "", n->lead_ms);
            } else {
                sbuf_puts(p, "<td class=\"n dim\">&ndash;</td>");
            }
            if (n->report_age_ms >= 0) {
                sbuf_printf(p, "<td class=\"n%s\">%.1f s ago</td>",
                            n->report_age_ms > CLUSTER_REPORT_STALE_MS ? " bad" : "",
                            (double)n->report_age_ms / 1000.0);
            } else {
                sbuf_puts(p, "<td class=\"n dim\">&ndash;</td>");
            }
            sbuf_puts(p, "<td>");
            cluster_modes(p, n);
            sbuf_puts(p, "</td><td>");
            cluster_text(p, n->version[0] ? n->version : "?");
            sbuf_printf(p, "</td><td class=\"%s\">%s</td>", n->ready ? "ok" : "bad",
                        n->ready ? "ready" : "NOT READY");
        }
        sbuf_printf(p, "<td>%s%s%s</td></tr>\n", n->temporary ? "leaf_temporary" : "",
                    n->temporary && n->in_line ? ", " : "", n->in_line ? "election line" : "");
    }
    sbuf_puts(p, "</table>\n");
    if (s->taken_ms > 0) {
        sbuf_printf(p,
                    "<p class=\"dim\">surveyed %.1f s ago in %" PRId64 " ms (every %d s while "
                    "this page is open; offsets are the other node's clock minus this "
                    "node's)</p>\n",
                    (double)(clock_wall_ms() - s->taken_ms) / 1000.0, s->took_ms,
                    CLUSTER_SURVEY_EVERY_MS / 1000);
    }
}

/* The sequences the primary serves, from the survey (a standby holds none itself); -1 unknown. */
static int64_t cluster_primary_sequences(const struct cluster_snapshot *s) {
    for (int i = 0; i < s->npeers; i++) {
        if (s->peers[i].reachable && strcmp(s->peers[i].role, "primary") == 0) {
            return s->peers[i].sequences;
        }
    }
    return -1;
}

static void cluster_sequence(struct sbuf *p, const struct door_ctx *ctx,
                             const struct cluster_snapshot *s) {
    if (!ctx->cfg->sequence_enable) {
        sbuf_puts(p, "<h3>Sequences</h3><p class=\"dim\">off on this node</p>\n");
        return;
    }
    struct sequence_service_stats st;
    sequence_service_stats(ctx->sequence, &st);
    sbuf_puts(p, "<h3>Sequences</h3><p>primary: ");
    if (st.where.known) {
        sbuf_puts(p, "<b>");
        cluster_link(p, st.where.http);
        sbuf_printf(p, "</b>%s", st.primary ? " (this node)" : "");
    } else {
        sbuf_puts(p, "<span class=\"bad\">none elected</span>");
    }
    int64_t n = st.primary ? (int64_t)st.sequences : cluster_primary_sequences(s);
    if (n >= 0) {
        sbuf_printf(p, " &middot; %" PRId64 " sequences%s", n,
                    st.primary ? "" : " (the primary's count; a standby loads them at a takeover)");
    } else {
        sbuf_puts(p, " &middot; sequences: counted by the primary (not surveyed yet)");
    }
    sbuf_printf(p, " &middot; %" PRIu64 " elections seen</p>\n", st.elections);
    if (st.sharding_conf && (!st.sharded || st.sharding_held[0] != '\0')) {
        /* docs/UPGRADING.md, "Sequence sharding in a mixed cluster" */
        sbuf_printf(p, "<p class=\"warn\">leafd.sequence.sharding set: %s by ",
                    st.sharded ? "sharding on; given no slots" : "sharding off, held back");
        cluster_text(p,
                     st.sharding_held[0] ? st.sharding_held : "nobody yet (next check within 1 s)");
        sbuf_puts(p, "</p>\n");
    }
}

/* The tags with the least runway on this node. */
struct low_tag {
    char name[VALIDATE_TAG_MAX + 1];
    int64_t available;
    double rate, runway;
};

struct low_tags {
    struct low_tag t[CLUSTER_LOW_TAGS];
    int n;
    size_t total;
    int64_t now_ms;
};

static int low_before(const struct low_tag *a, const struct low_tag *b) {
    return a->runway < b->runway || (a->runway == b->runway && a->available < b->available);
}

static void low_collect(const struct segment_tag_view *v, void *arg) {
    struct low_tags *l = arg;
    struct low_tag x;
    l->total++;
    memcpy(x.name, v->name, sizeof(x.name));
    x.available = v->buf.available;
    x.rate = segment_buffer_rate(&v->buf, l->now_ms);
    x.runway = x.rate > 0.0 ? (double)x.available / x.rate : INFINITY;
    int i = l->n < CLUSTER_LOW_TAGS ? l->n++ : CLUSTER_LOW_TAGS;
    if (i == CLUSTER_LOW_TAGS && !low_before(&x, &l->t[CLUSTER_LOW_TAGS - 1])) {
        return;
    }
    if (i == CLUSTER_LOW_TAGS) {
        i = CLUSTER_LOW_TAGS - 1;
    }
    while (i > 0 && low_before(&x, &l->t[i - 1])) { /* insertion into the sorted ten */
        l->t[i] = l->t[i - 1];
        i--;
    }
    l->t[i] = x;
}

static void cluster_runway(struct sbuf *p, const struct door_ctx *ctx) {
    sbuf_puts(p, "<h3>Segment tags with the least runway (this node's buffers)</h3>\n");
    if (!ctx->cfg->segment_enable) {
        sbuf_puts(p, "<p class=\"dim\">segment mode is off on this node</p>\n");
        return;
    }
    struct low_tags *l = calloc(1, sizeof(*l));
    if (l == NULL) {
        return;
    }
    l->now_ms = clock_mono_ms();
    segment_service_each(ctx->segment, low_collect, l);
    sbuf_printf(p, "<table><tr><th>biz_tag</th><th class=\"n\">IDs buffered</th><th class=\"n\">"
                   "IDs/s</th><th class=\"n\">runway</th></tr>\n");
    for (int i = 0; i < l->n; i++) {
        const struct low_tag *t = &l->t[i];
        sbuf_printf(p,
                    "<tr><td><a href=\"/cache?tag=%s\">%s</a></td><td class=\"n%s\">%" PRId64
                    "</td><td class=\"n\">%.1f</td>",
                    t->name, t->name, t->available == 0 ? " bad" : "", t->available, t->rate);
        if (isinf(t->runway)) {
            sbuf_puts(p, "<td class=\"n dim\">idle</td></tr>\n");
        } else {
            sbuf_printf(p, "<td class=\"n%s\">%.0f s</td></tr>\n",
                        t->runway < 60.0 ? " bad" : (t->runway < 900.0 ? " warn" : ""), t->runway);
        }
    }
    sbuf_printf(p,
                "</table><p class=\"dim\">%zu tags in this node's memory (the ones it has "
                "served); all of them on <a href=\"/cache?sort=available\">/cache</a></p>\n",
                l->total);
    free(l);
}

/* With several regions (docs/regions.md): the region this node serves and its claim. */
static void cluster_region(struct sbuf *p, const struct door_ctx *ctx) {
    struct region_service_view v;
    region_service_view(ctx->region, &v);
    if (!v.enabled) {
        return;
    }
    sbuf_puts(p, "<h3>Region</h3><p>");
    cluster_text(p, v.name);
    sbuf_printf(p, " (region ID %" PRId64 " of %" PRId64 ") &middot; claim: <span class=\"%s\">%s",
                v.id, v.count, v.ready ? "ok" : "bad",
                !v.ready                         ? "NOT CONFIRMED"
                : strcmp(v.source, "cache") == 0 ? "confirmed earlier (registry unreachable)"
                                                 : "confirmed by the registry");
    sbuf_puts(p, "</span>");
    if (!v.ready) {
        sbuf_puts(p, ": ");
        cluster_text(p, v.reason);
    }
    sbuf_puts(p, "</p>\n");
}

/* ?format=json: this node (version, revision) and the survey's nodes, for scripts. */
static void cluster_json(struct http_request *req, const struct door_ctx *ctx,
                         const struct cluster_snapshot *s) {
    struct sbuf b = SBUF_INIT;
    char self[64];
    snprintf(self, sizeof(self), "%s:%d", ctx->cfg->advertise_ip, ctx->cfg->identity_port);
    sbuf_puts(&b, "{\"node\":{\"identity\":");
    sbuf_json_str(&b, self, strlen(self));
    sbuf_puts(&b, ",\"name\":");
    sbuf_json_str(&b, ctx->cfg->snowflake_identity, strlen(ctx->cfg->snowflake_identity));
    sbuf_printf(&b, ",\"version\":\"%s\",\"revision\":\"%s\"", leafd_version(), leafd_revision());
    struct door_ready r;
    door_ready_eval(ctx, &r);
    door_ready_region_json(ctx, &r, &b);
    sbuf_printf(&b, "},\"surveyed_ms\":%" PRId64 ",\"error\":", s->taken_ms);
    sbuf_json_str(&b, s->error, strlen(s->error));
    if (ctx->zk != NULL && ctx->node_zk != NULL && ctx->cfg->zk_auth[0] != '\0') {
        char held[512];
        node_zk_held_back(ctx->node_zk, held, sizeof(held));
        sbuf_printf(&b, ",\"zk_acl\":{\"closed\":%s,\"held_back\":",
                    zk_session_acl_is_closed(ctx->zk) ? "true" : "false");
        sbuf_json_str(&b, held, strlen(held));
        sbuf_putc(&b, '}');
    }
    if (ctx->cfg->sequence_enable && ctx->cfg->sequence_sharding) {
        struct sequence_service_stats st;
        sequence_service_stats(ctx->sequence, &st);
        sbuf_printf(
            &b, ",\"sequence_sharding\":{\"on\":%s,\"held_back\":", st.sharded ? "true" : "false");
        sbuf_json_str(&b, st.sharding_held, strlen(st.sharding_held));
        sbuf_putc(&b, '}');
    }
    sbuf_puts(&b, ",\"nodes\":[");
    for (int i = 0; i < s->npeers; i++) {
        const struct cluster_peer *n = &s->peers[i];
        sbuf_puts(&b, i ? ",{\"identity\":" : "{\"identity\":");
        sbuf_json_str(&b, n->id, strlen(n->id));
        sbuf_puts(&b, ",\"name\":");
        sbuf_json_str(&b, n->name, strlen(n->name));
        sbuf_printf(&b, ",\"reachable\":%s", n->reachable ? "true" : "false");
        if (!n->reachable) {
            sbuf_puts(&b, ",\"error\":");
            sbuf_json_str(&b, n->error, strlen(n->error));
        } else {
            sbuf_printf(&b,
                        ",\"ready\":%s,\"worker_id\":%d,\"offset_ms\":%" PRId64
                        ",\"rtt_ms\":%" PRId64 ",\"lead_ms\":%" PRId64 ",\"report_age_ms\":%" PRId64
                        ",\"snowflake\":%s,\"segment\":%s,"
                        "\"sequence\":%s,\"role\":",
                        n->ready ? "true" : "false", n->worker_id, n->offset_ms, n->rtt_ms,
                        n->lead_ms, n->report_age_ms, n->snowflake ? "true" : "false",
                        n->segment ? "true" : "false", n->sequence ? "true" : "false");
            sbuf_json_str(&b, n->role, strlen(n->role));
            sbuf_puts(&b, ",\"version\":");
            sbuf_json_str(&b, n->version, strlen(n->version)); /* "" when it does not say */
        }
        sbuf_putc(&b, '}');
    }
    sbuf_puts(&b, "]}");
    door_http_respond_sbuf(req, 200, "application/json", &b);
    sbuf_free(&b);
}

leaf_status_t page_cluster(struct http_request *req, enum ids_mode mode) {
    const struct door_ctx *ctx = door_ctx(req);
    int64_t t0 = clock_mono_ns();
    struct page_query q;
    page_query_parse(req, NULL, 0, &q);
    struct cluster_snapshot *s = malloc(sizeof(*s));
    if (s == NULL) {
        door_http_error(req, DOOR_E_OUT_OF_MEMORY, "out of memory");
        return LEAF_OK;
    }
    if (ctx->cluster != NULL) {
        node_survey_snapshot(ctx->cluster, s);
    } else { /* an API context without a survey (the unit tests' fixture) */
        memset(s, 0, sizeof(*s));
        snprintf(s->error, sizeof(s->error), "no cluster survey in this process");
    }
    const char *format;
    size_t format_len;
    if (door_http_query(req, "format", &format, &format_len) && format_len == 4 &&
        memcmp(format, "json", 4) == 0) {
        cluster_json(req, ctx, s);
        free(s);
        return LEAF_OK;
    }
    struct sbuf p = SBUF_INIT;
    if (s->taken_ms == 0 && s->error[0] == '\0' && q.refresh == 0) {
        q.refresh = 1; /* the first survey is on its way: reload once it is there */
    }
    page_head(&p, ctx, "/cluster", "leafd cluster", &q, 0);
    cluster_verdict(&p, ctx, s);
    cluster_zk_acl(&p, ctx);
    cluster_region(&p, ctx);
    cluster_nodes(&p, ctx, s);
    cluster_sequence(&p, ctx, s);
    cluster_runway(&p, ctx);
    free(s);
    page_finish(&p, req, t0);
    sbuf_free(&p);
    return LEAF_OK;
}
