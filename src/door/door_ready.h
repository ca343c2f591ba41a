#ifndef LEAF_DOOR_READY_H
#define LEAF_DOOR_READY_H

/*
 * Readiness in one place: /ready (src/api/api.c), the leafd_ready gauge
 * (src/pages/page_metrics.c) and the systemd notification (src/daemon/daemon_notify.c)
 * all take their verdict, and the reason of a component that is not ready,
 * from door_ready_eval; none decides or words it again. A component is ready when its
 * mode can issue now: snowflake when its view says so, segment when the
 * database is up or a tag has a buffered range, sequence while the node takes
 * part (a ZooKeeper session), auth once a user table is in use, region (only
 * with leafd.region.count > 1) once its claim is confirmed. A disabled
 * component is not counted; "all" is 1 when every enabled one is ready and the
 * node is not stopping, exactly when a plain /ready answers 200. A probe may ask
 * for some modes only (door_ready_ok): segment stays ready while ZooKeeper is
 * gone (docs/kubernetes.md, "Probes").
 *
 * Reads the services' thread-safe views: any thread may call it.
 */
#include <stddef.h>

struct door_ctx;
struct sbuf;

/* X(enum, label): the component label of leafd_ready, in /ready's order. */
#define DOOR_READY_COMPONENTS(X)                                                                   \
    X(DOOR_READY_SNOWFLAKE, "snowflake")                                                           \
    X(DOOR_READY_SEGMENT, "segment")                                                               \
    X(DOOR_READY_SEQUENCE, "sequence")                                                             \
    X(DOOR_READY_AUTH, "auth")                                                                     \
    X(DOOR_READY_REGION, "region")

enum door_ready_component {
#define DOOR_READY_ENUM(e, label) e,
    DOOR_READY_COMPONENTS(DOOR_READY_ENUM)
#undef DOOR_READY_ENUM
        DOOR_READY_COUNT
};

struct door_ready {
    int enabled[DOOR_READY_COUNT];
    int ready[DOOR_READY_COUNT];
    const char *reason[DOOR_READY_COUNT]; /* why not ready (static text or the view's); "" */
    char region_reason[512];              /* the region's reason, which reason[] points at */
    int all;                              /* every enabled component is ready */
    int stopping; /* a stop began: the drain's delay (leafd.stop.delay.ms) or the drain */
};

void door_ready_eval(const struct door_ctx *ctx, struct door_ready *r);

/*
 * What a probe asks for (/ready?mode=, docs/kubernetes.md, "Probes"): a set of components,
 * one bit each (1u << component), or DOOR_READY_ANY, or 0 for every enabled component (plain
 * /ready). A Service that needs segment IDs only keeps a pod whose ZooKeeper session is gone.
 */
#define DOOR_READY_ANY (1u << DOOR_READY_COUNT)

/*
 * Parses a comma-separated list of component labels or "any" ("segment", "snowflake,segment")
 * into *mask. LEAF_EINVAL for an empty list or an unknown name, copied into bad (cut at
 * badlen - 1 bytes). Pure: any thread.
 */
int door_ready_parse(const char *s, size_t n, unsigned *mask, char *bad, size_t badlen);

/*
 * 1 when the probe's set can issue now: 0 asks for r->all; DOOR_READY_ANY for one enabled
 * component at least; otherwise every component named, which must be enabled (a disabled one
 * cannot issue). Always 0 while the node stops (r->stopping).
 */
int door_ready_ok(const struct door_ready *r, unsigned mask);

/*
 * With several regions (docs/regions.md): appends ,"region":{name, id, count, ready, claim
 * (registry | cache | none), registry (connected | disconnected), confirmed_ms[, reason]} to b,
 * the member /ready and /cluster?format=json share; nothing with one region.
 */
void door_ready_region_json(const struct door_ctx *ctx, const struct door_ready *r, struct sbuf *b);

/* The component's label ("snowflake"), or NULL when out of range. */
const char *door_ready_name(enum door_ready_component c);

/*
 * One line for a human: "ready", or "not ready: snowflake: <reason>;
 * segment: <reason>" naming every enabled component that is not. Cut at
 * cap - 1 bytes; returns the length.
 */
size_t door_ready_text(const struct door_ready *r, char *buf, size_t cap);

/* The same for a probe's set (door_ready_ok's mask): names the asked components that are not
 * ready, "disabled" for one that is off. */
size_t door_ready_text_for(const struct door_ready *r, unsigned mask, char *buf, size_t cap);

#endif
