#ifndef LEAF_DOOR_READY_H
#define LEAF_DOOR_READY_H

/*
 * Readiness in one place, for those who need it as a value rather than as
 * /ready's JSON: the leafd_ready gauge (src/pages/page_metrics.c) and the systemd
 * notification (src/notify_ready.c). A component is ready under the same rule
 * as its member of /ready (src/api/api.c): snowflake when its view says so, segment
 * when the database is up or a tag has a buffered range, sequence while the
 * node takes part (a ZooKeeper session), auth once a user table is in use.
 * A disabled component is not counted; "all" is 1 when every enabled one
 * is ready, exactly when /ready answers 200.
 *
 * Reads the services' thread-safe views: any thread may call it.
 */
#include <stddef.h>

struct door_ctx;

/* X(enum, label): the component label of leafd_ready, in /ready's order. */
#define DOOR_READY_COMPONENTS(X)                                                                   \
    X(DOOR_READY_SNOWFLAKE, "snowflake")                                                           \
    X(DOOR_READY_SEGMENT, "segment")                                                               \
    X(DOOR_READY_SEQUENCE, "sequence")                                                             \
    X(DOOR_READY_AUTH, "auth")

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
    int all;                              /* every enabled component is ready */
};

void door_ready_eval(const struct door_ctx *ctx, struct door_ready *r);

/* The component's label ("snowflake"), or NULL when out of range. */
const char *door_ready_name(enum door_ready_component c);

/*
 * One line for a human: "ready", or "not ready: snowflake: <reason>;
 * segment: <reason>" naming every enabled component that is not. Cut at
 * cap - 1 bytes; returns the length.
 */
size_t door_ready_text(const struct door_ready *r, char *buf, size_t cap);

#endif
