#ifndef LEAF_SNOWFLAKE_ID_H
#define LEAF_SNOWFLAKE_ID_H

/*
 * The snowflake bit layout. Pure code: no I/O, no clock (the time is passed in).
 *
 * The default is Leaf's and Twitter's layout:
 *   1 sign bit (0) | 41 bits ms since the epoch | 10 bits worker | 12 bits sequence
 * and the SNOWFLAKE_* constants and snowflake_id_make/decode/years_left below
 * keep describing it, bit for bit.
 *
 * Any other layout is a struct snowflake_layout parsed from the text of
 * `leafd.snowflake.layout` ("time:41,worker:10,sequence:12": the three
 * fields from the most significant bit down, widths summing to at most 63,
 * the bits above them 0) and the time unit `leafd.snowflake.time.unit.ms`:
 * the time field counts ticks of unit_ms milliseconds since the epoch.
 * Layouts this continues:
 *   Sonyflake       time:39,sequence:8,worker:16   unit 10
 *   Baidu uid-gen   time:28,worker:22,sequence:13  unit 1000 (28 bits of
 *                   seconds last 8.5 years: the horizon check refuses it;
 *                   Baidu's own longer variant time:31,worker:23,sequence:9
 *                   lasts 68 years)
 *   Twitter 5+5     time:41,datacenter:5,worker:5,sequence:12  unit 1: the
 *                   datacenter field holds a fixed value of the node's
 *                   configuration (snowflake_layout_set_datacenter); the
 *                   worker ID (static, forever or lease) fits the worker
 *                   field only.
 *   JavaScript-safe any layout summing to <= 53, e.g. time:41,worker:4,sequence:8
 *
 * The named layouts (SNOWFLAKE_NAMED_LAYOUTS) are names for field lists of
 * this table, each with its time unit: twitter, sonyflake, uid-generator
 * (its 68-year variant) and js-safe.
 *
 * Rules a layout must meet (snowflake_layout_parse): each of time, worker
 * and sequence exactly once, datacenter at most once; widths 1..63, the
 * others at most 31; a sum of at most 63; time above sequence, or a node's
 * IDs would not increase when a tick ends. The worker may sit anywhere;
 * above time, IDs of different nodes no longer sort by time.
 * snowflake_layout_check_horizon() adds: the time field must last a year
 * from now (a warning at start below 10 years).
 *
 * Ownership: a layout is a value, written once at start-up and then only
 * read, by any thread.
 */
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define SNOWFLAKE_TIMESTAMP_BITS 41
#define SNOWFLAKE_WORKER_BITS 10
#define SNOWFLAKE_SEQUENCE_BITS 12
#define SNOWFLAKE_MAX_TIMESTAMP ((INT64_C(1) << SNOWFLAKE_TIMESTAMP_BITS) - 1)
#define SNOWFLAKE_MAX_WORKER ((1 << SNOWFLAKE_WORKER_BITS) - 1)
#define SNOWFLAKE_MAX_SEQUENCE ((1 << SNOWFLAKE_SEQUENCE_BITS) - 1)
#define SNOWFLAKE_DEFAULT_EPOCH INT64_C(1288834974657)

#define SNOWFLAKE_DEFAULT_LAYOUT "time:41,worker:10,sequence:12"
#define SNOWFLAKE_MAX_ID_BITS 63                /* the sign bit stays 0 */
#define SNOWFLAKE_MAX_FIELD_BITS 31             /* worker and sequence are held in an int */
#define SNOWFLAKE_MAX_UNIT_MS INT64_C(86400000) /* one tick per day at most */
#define SNOWFLAKE_HORIZON_YEARS 10              /* less than this from now: a warning at start */
#define SNOWFLAKE_HORIZON_MIN_YEARS 1           /* a layout must last this long from now */
#define SNOWFLAKE_REASON_MAX 160                /* room enough for every reason written here */

/* The datacenter is optional (width 0 when the layout has none); the other three are required. */
enum snowflake_field {
    SNOWFLAKE_TIME,
    SNOWFLAKE_WORKER,
    SNOWFLAKE_SEQUENCE,
    SNOWFLAKE_DATACENTER,
    SNOWFLAKE_FIELDS
};

/*
 * X(name, fields, unit ms): the names leafd.snowflake.layout takes besides a
 * field list (docs/id-shapes.md, "Named layouts"). The unit applies unless
 * leafd.snowflake.time.unit.ms says otherwise.
 */
#define SNOWFLAKE_NAMED_LAYOUTS(X)                                                                 \
    X("twitter", "time:41,datacenter:5,worker:5,sequence:12", 1)                                   \
    X("sonyflake", "time:39,sequence:8,worker:16", 10)                                             \
    X("uid-generator", "time:31,worker:23,sequence:9", 1000)                                       \
    X("js-safe", "time:41,worker:4,sequence:8", 1)

struct snowflake_layout {
    int bits[SNOWFLAKE_FIELDS];  /* width of each field (the datacenter's 0 when absent) */
    int shift[SNOWFLAKE_FIELDS]; /* position of each field's lowest bit */
    int order[SNOWFLAKE_FIELDS]; /* the fields from the most significant down */
    int nfields;                 /* how many of order[] are used: 3, or 4 with a datacenter */
    int64_t unit_ms;             /* milliseconds per tick of the time field, >= 1 */
    int64_t datacenter_id;       /* the datacenter field's fixed value (0 without one) */
};

struct snowflake_parts {
    int64_t timestamp_ms; /* absolute: ms since 1970 (epoch added back), start of the tick */
    int worker_id;
    int sequence;
    int datacenter_id; /* 0 when the layout has no datacenter field */
    int64_t ticks;     /* the raw time field: ticks since the epoch */
};

/* Builds an ID of the default layout from a timestamp relative to the epoch (0..2^41-1). */
static inline int64_t snowflake_id_make(int64_t rel_ms, int worker_id, int sequence) {
    return (rel_ms << (SNOWFLAKE_WORKER_BITS + SNOWFLAKE_SEQUENCE_BITS)) |
           ((int64_t)worker_id << SNOWFLAKE_SEQUENCE_BITS) | (int64_t)sequence;
}

/* The default layout, unit 1 ms. */
void snowflake_layout_default(struct snowflake_layout *l);

/*
 * Parses the text of leafd.snowflake.layout (len bytes, need not be
 * NUL-terminated; spaces around names and widths are allowed), a field list
 * or a name of SNOWFLAKE_NAMED_LAYOUTS, into *out with unit 1 ms (a name: its
 * unit) and datacenter ID 0. LEAF_OK, or LEAF_EINVAL with *out untouched and a one-line
 * reason in reason[cap] (SNOWFLAKE_REASON_MAX is enough), without the key
 * name: the config layer prefixes "file:line: key:".
 */
leaf_status_t snowflake_layout_parse(struct snowflake_layout *out, const char *text, size_t len,
                                     char *reason, size_t cap);

/* Sets the time unit (1..SNOWFLAKE_MAX_UNIT_MS ms): LEAF_OK, or LEAF_EINVAL and a reason. */
leaf_status_t snowflake_layout_set_unit(struct snowflake_layout *l, int64_t unit_ms, char *reason,
                                        size_t cap);

/*
 * Sets the datacenter field's value (leafd.snowflake.datacenter.id): LEAF_OK,
 * or LEAF_EINVAL and a reason when it does not fit the field, or is not 0
 * for a layout without one.
 */
leaf_status_t snowflake_layout_set_datacenter(struct snowflake_layout *l, int64_t id, char *reason,
                                              size_t cap);

/*
 * LEAF_OK when the time field, counted from epoch, still has
 * SNOWFLAKE_HORIZON_MIN_YEARS to run at now_ms; else LEAF_EINVAL and a reason
 * giving the years it has and how to get more. Any layout that lasts a year is
 * taken (uid-generator's own 28 bits of seconds last 8.5 years from a recent
 * epoch); the node warns at start below SNOWFLAKE_HORIZON_YEARS.
 */
leaf_status_t snowflake_layout_check_horizon(const struct snowflake_layout *l, int64_t epoch,
                                             int64_t now_ms, char *reason, size_t cap);

/* Writes "time:41,worker:10,sequence:12" (NUL-terminated, cut to cap) for logs and pages; a
 * named layout is written as its field list. */
void snowflake_layout_format(const struct snowflake_layout *l, char *buf, size_t cap);

/* The largest value a field holds: 2^bits - 1. */
static inline int64_t snowflake_layout_max(const struct snowflake_layout *l,
                                           enum snowflake_field f) {
    return (INT64_C(1) << l->bits[f]) - 1;
}

/* How many worker IDs the layout has room for (2^worker bits): also the number of lease slots. */
static inline int64_t snowflake_layout_workers(const struct snowflake_layout *l) {
    return INT64_C(1) << l->bits[SNOWFLAKE_WORKER];
}

/* Builds an ID from ticks since the epoch, a worker ID and a sequence, each within its width;
 * the datacenter field (if any) holds the layout's datacenter ID. */
static inline int64_t snowflake_layout_make(const struct snowflake_layout *l, int64_t ticks,
                                            int64_t worker_id, int64_t sequence) {
    return (ticks << l->shift[SNOWFLAKE_TIME]) | (worker_id << l->shift[SNOWFLAKE_WORKER]) |
           (sequence << l->shift[SNOWFLAKE_SEQUENCE]) |
           (l->datacenter_id << l->shift[SNOWFLAKE_DATACENTER]);
}

/*
 * Splits an ID: LEAF_OK, or LEAF_ERANGE for an ID this layout never issues
 * (negative, or bits set above the layout's width).
 */
leaf_status_t snowflake_layout_decode(const struct snowflake_layout *l, int64_t id, int64_t epoch,
                                      struct snowflake_parts *out);

/* Years left before the time field runs out, at clock now_ms (negative once past). */
double snowflake_layout_years_left(const struct snowflake_layout *l, int64_t epoch, int64_t now_ms);

#endif
