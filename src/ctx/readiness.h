#ifndef LEAF_READINESS_H
#define LEAF_READINESS_H

/*
 * Readiness in one place, for those who need it as a value rather than as
 * /ready's JSON: the leafd_ready gauge (metrics_process.c) and the systemd
 * notification (notify_ready.c). A component is ready under the same rule
 * as its member of /ready (api.c): snowflake when its view says so, segment
 * when the database is up or a tag has a buffered range, sequence while the
 * node takes part (a ZooKeeper session), auth once a user table is in use.
 * A disabled component is not counted; "all" is 1 when every enabled one
 * is ready, exactly when /ready answers 200.
 *
 * Reads the services' thread-safe views: any thread may call it.
 */
#include <stddef.h>

struct api_ctx;

/* X(enum, label): the component label of leafd_ready, in /ready's order. */
#define READINESS_COMPONENTS(X)                                                                    \
    X(READINESS_SNOWFLAKE, "snowflake")                                                            \
    X(READINESS_SEGMENT, "segment")                                                                \
    X(READINESS_SEQUENCE, "sequence")                                                              \
    X(READINESS_AUTH, "auth")

enum readiness_component {
#define READINESS_ENUM(e, label) e,
    READINESS_COMPONENTS(READINESS_ENUM)
#undef READINESS_ENUM
        READINESS_COUNT
};

struct readiness {
    int enabled[READINESS_COUNT];
    int ready[READINESS_COUNT];
    const char *reason[READINESS_COUNT]; /* why not ready (static text or the view's); "" */
    int all;                             /* every enabled component is ready */
};

void readiness_eval(const struct api_ctx *ctx, struct readiness *r);

/* The component's label ("snowflake"), or NULL when out of range. */
const char *readiness_name(enum readiness_component c);

/*
 * One line for a human: "ready", or "not ready: snowflake: <reason>;
 * segment: <reason>" naming every enabled component that is not. Cut at
 * cap - 1 bytes; returns the length.
 */
size_t readiness_text(const struct readiness *r, char *buf, size_t cap);

#endif
