#ifndef LEAF_PAGE_METRICS_SNAP_H
#define LEAF_PAGE_METRICS_SNAP_H

/*
 * What one /metrics scrape reports of the node, read once at its start
 * (page_metrics_snap.c) and handed to every family's writer
 * (page_metrics_node.c). Lives on the scraping request's loop thread for the
 * length of the scrape; every source is read through its thread-safe view.
 */
#include <stddef.h>
#include <stdint.h>

#include "door_ctx.h"
#include "validate.h"

/* One exported tag: the per-tag families' values. */
struct metrics_tag {
    char name[VALIDATE_TAG_MAX + 1];
    double runway; /* seconds; INFINITY when idle */
    int64_t remaining, step, issued, fetches, fetch_errors;
};

struct metrics_snap {
    const struct door_ctx *ctx;
    struct snowflake_service_view sf;
    struct segment_service_stats seg;
    struct sequence_service_stats seq;
    struct user_service_stats users;
    struct {
        int on, state; /* a session exists; its enum zk_state */
        long long connects, expirations;
    } zk;                     /* the process's one ZooKeeper session, whichever services use it */
    struct metrics_tag *tags; /* the exported tags, sorted by name */
    size_t ntags, tags_cap;
    struct sequence_keyed_view *keyed; /* the keyed spaces this node holds (at most
                                        * leafd.metrics.tags.max), NULL when none */
    size_t nkeyed;
    size_t active;     /* active tags in all */
    double runway_min; /* over every active tag */
};

/* Reads every view into *s; the per-tag set keeps the leafd.metrics.tags.max tags with the least
 * runway, sorted by name. */
void page_metrics_snap_read(const struct door_ctx *ctx, struct metrics_snap *s);
/* Frees what page_metrics_snap_read allocated. */
void page_metrics_snap_free(struct metrics_snap *s);

#endif
