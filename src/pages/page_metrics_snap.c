/*
 * The node's views, read once per /metrics scrape (page_metrics_snap.h), and
 * the bounded per-tag set: a max-heap on runway keeps the
 * leafd.metrics.tags.max tags with the least runway.
 */
#include "page_metrics_snap.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "segment_tags.h"
#include "sequence_keyed.h"
#include "zk_session.h"

/* ---- the bounded per-tag set: the least runway first --------------------- */

static double tag_runway(const struct segment_tag_view *v, int64_t now) {
    double rate = segment_buffer_rate(&v->buf, now);
    return rate <= 0.0 ? INFINITY : (double)v->buf.available / rate;
}

/* Max-heap on runway over s->tags[0..ntags): the root is the one to drop first. */
static void heap_down(struct metrics_tag *h, size_t n, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && h[l].runway > h[m].runway) {
            m = l;
        }
        if (r < n && h[r].runway > h[m].runway) {
            m = r;
        }
        if (m == i) {
            return;
        }
        struct metrics_tag t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void heap_up(struct metrics_tag *h, size_t i) {
    while (i > 0 && h[(i - 1) / 2].runway < h[i].runway) {
        struct metrics_tag t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static void collect_tag(const struct segment_tag_view *v, void *arg) {
    struct metrics_snap *s = arg;
    if (v->state != SEGMENT_TAG_ACTIVE) {
        return;
    }
    struct metrics_tag r;
    memcpy(r.name, v->name, sizeof(r.name));
    r.runway = tag_runway(v, segment_service_now_ms());
    r.remaining = v->buf.available;
    r.step = v->buf.step;
    r.issued = (int64_t)v->buf.issued;
    r.fetches = (int64_t)v->buf.fetches;
    r.fetch_errors = (int64_t)v->fetch_errors;
    s->active++;
    if (r.runway < s->runway_min) {
        s->runway_min = r.runway;
    }
    if (s->tags_cap == 0) {
        return;
    }
    if (s->ntags < s->tags_cap) {
        s->tags[s->ntags] = r;
        heap_up(s->tags, s->ntags++);
    } else if (r.runway < s->tags[0].runway) {
        s->tags[0] = r;
        heap_down(s->tags, s->ntags, 0);
    }
}

static int tag_cmp(const void *a, const void *b) {
    return strcmp(((const struct metrics_tag *)a)->name, ((const struct metrics_tag *)b)->name);
}

static void snap_tags(struct metrics_snap *s) {
    s->runway_min = INFINITY;
    if (!s->seg.enabled) {
        return;
    }
    size_t cap = (size_t)s->ctx->cfg->metrics_tags_max;
    s->tags = cap ? malloc(cap * sizeof(*s->tags)) : NULL;
    s->tags_cap = s->tags ? cap : 0;
    if (cap && s->tags == NULL) {
        log_error("metrics", "out of memory collecting per-tag metrics; only aggregates exported");
    }
    segment_service_each(s->ctx->segment, collect_tag, s);
    qsort(s->tags, s->ntags, sizeof(*s->tags), tag_cmp);
}

/* The keyed spaces' counters (docs/keyed-sequences.md), bounded as the per-tag set is. */
static void snap_keyed(struct metrics_snap *s) {
    size_t cap = (size_t)s->ctx->cfg->metrics_tags_max;
    cap = cap < SEQUENCE_KEYED_MAX_SPACES ? cap : SEQUENCE_KEYED_MAX_SPACES;
    if (!s->seq.enabled || cap == 0) {
        return;
    }
    s->keyed = malloc(cap * sizeof(*s->keyed));
    if (s->keyed == NULL) {
        log_error("metrics", "out of memory collecting the keyed spaces' metrics");
        return;
    }
    int n = sequence_service_keyed_views(s->ctx->sequence, s->keyed, (int)cap);
    s->nkeyed = n > 0 ? (size_t)n : 0;
}

void page_metrics_snap_read(const struct door_ctx *ctx, struct metrics_snap *s) {
    *s = (struct metrics_snap){.ctx = ctx};
    snowflake_service_view(ctx->snowflake, &s->sf);
    segment_service_stats(ctx->segment, &s->seg);
    sequence_service_stats(ctx->sequence, &s->seq);
    user_service_stats(ctx->users, &s->users);
    if (ctx->zk != NULL) {
        s->zk.on = 1;
        s->zk.state = zk_session_state(ctx->zk);
        s->zk.connects = atomic_load(&ctx->zk->connects);
        s->zk.expirations = atomic_load(&ctx->zk->expirations);
    }
    snap_tags(s);
    snap_keyed(s);
}

void page_metrics_snap_free(struct metrics_snap *s) {
    free(s->tags);
    s->tags = NULL;
    free(s->keyed);
    s->keyed = NULL;
}
