#ifndef LEAF_METRICS_SNAP_H
#define LEAF_METRICS_SNAP_H

/*
 * Everything one scrape reports, read once at its start (metrics_scrape.c)
 * and handed to every family's writer. Lives on the scraping request's loop
 * thread for the length of the scrape; every source is read through its
 * thread-safe view.
 */
#include <stddef.h>
#include <stdint.h>

#include "metrics_text.h"
#include "segment_service.h"
#include "sequence_service.h"
#include "snowflake_node.h"
#include "user_service.h"
#include "validate.h"

struct api_ctx;
struct metrics;

/* One exported tag: the per-tag families' values. */
struct metrics_tag {
    char name[VALIDATE_TAG_MAX + 1];
    double runway; /* seconds; INFINITY when idle */
    int64_t remaining, step, issued, fetches, fetch_errors;
};

struct metrics_snap {
    const struct api_ctx *ctx;
    const struct metrics *metrics; /* the request counters */
    struct snowflake_node_view sf;
    struct segment_service_stats seg;
    struct sequence_service_stats seq;
    struct user_service_stats users;
    struct {
        int on, state; /* a session exists; its enum zk_state */
        long long connects, expirations;
    } zk;                     /* the process's one ZooKeeper session, whichever services use it */
    struct metrics_tag *tags; /* the exported tags, sorted by name */
    size_t ntags, tags_cap;
    size_t active;     /* active tags in all */
    double runway_min; /* over every active tag */
};

/* A family's writer: a row of METRICS_FAMILIES (metrics_scrape.c). */
typedef void (*metrics_family_fn)(struct metrics_out *o, const struct metrics_snap *s);

#endif
