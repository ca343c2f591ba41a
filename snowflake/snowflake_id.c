#include "snowflake_id.h"

#include <stdio.h>
#include <string.h>

#include "num.h"

#define SNOWFLAKE_MS_PER_YEAR (365.25 * 24 * 3600 * 1000.0)

static const char *const field_names[SNOWFLAKE_FIELDS] = {
    [SNOWFLAKE_TIME] = "time",
    [SNOWFLAKE_WORKER] = "worker",
    [SNOWFLAKE_SEQUENCE] = "sequence",
    [SNOWFLAKE_DATACENTER] = "datacenter",
};

#define SNOWFLAKE_FIELD_LIST "time, datacenter, worker, sequence"

struct named_layout {
    const char *name;
    const char *fields;
    int64_t unit_ms;
};

static const struct named_layout named_layouts[] = {
#define SNOWFLAKE_NAMED_ROW(name, fields, unit) {name, fields, unit},
    SNOWFLAKE_NAMED_LAYOUTS(SNOWFLAKE_NAMED_ROW)
#undef SNOWFLAKE_NAMED_ROW
};

/* Fills shift[] from bits[] and order[]: the last field listed sits at bit 0. */
static void layout_place(struct snowflake_layout *l) {
    int shift = 0;
    for (int i = l->nfields - 1; i >= 0; i--) {
        l->shift[l->order[i]] = shift;
        shift += l->bits[l->order[i]];
    }
}

void snowflake_layout_default(struct snowflake_layout *l) {
    *l = (struct snowflake_layout){
        .bits = {[SNOWFLAKE_TIME] = SNOWFLAKE_TIMESTAMP_BITS,
                 [SNOWFLAKE_WORKER] = SNOWFLAKE_WORKER_BITS,
                 [SNOWFLAKE_SEQUENCE] = SNOWFLAKE_SEQUENCE_BITS},
        .order = {SNOWFLAKE_TIME, SNOWFLAKE_WORKER, SNOWFLAKE_SEQUENCE},
        .nfields = 3,
        .unit_ms = 1,
    };
    layout_place(l);
}

static void trim(const char **s, size_t *n) {
    while (*n > 0 && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n > 0 && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t')) {
        (*n)--;
    }
}

static int field_lookup(const char *name, size_t n) {
    for (int f = 0; f < SNOWFLAKE_FIELDS; f++) {
        if (strlen(field_names[f]) == n && memcmp(field_names[f], name, n) == 0) {
            return f;
        }
    }
    return -1;
}

/*
 * Parses one "name:width" item into l (field f at position pos). LEAF_OK or
 * LEAF_EINVAL and a reason. seen[] tells repeated fields apart.
 */
static leaf_status_t layout_item(struct snowflake_layout *l, int pos, int *seen, const char *s,
                                 size_t n, char *reason, size_t cap) {
    const char *colon = memchr(s, ':', n);
    trim(&s, &n);
    if (colon == NULL) {
        snprintf(reason, cap, "\"%.*s\": expected name:width, e.g. %s", (int)n, s,
                 SNOWFLAKE_DEFAULT_LAYOUT);
        return LEAF_EINVAL;
    }
    const char *name = s, *width = colon + 1;
    size_t name_len = (size_t)(colon - s), width_len = n - name_len - 1;
    trim(&name, &name_len);
    trim(&width, &width_len);
    int f = field_lookup(name, name_len);
    if (f < 0) {
        snprintf(reason, cap,
                 "unknown field \"%.*s\" (the fields are " SNOWFLAKE_FIELD_LIST
                 "; or a name: twitter, sonyflake, uid-generator, js-safe)",
                 (int)name_len, name);
        return LEAF_EINVAL;
    }
    if (seen[f]) {
        snprintf(reason, cap, "field %s listed twice", field_names[f]);
        return LEAF_EINVAL;
    }
    int64_t bits;
    if (num_parse_i64(width, width_len, &bits) != LEAF_OK) {
        snprintf(reason, cap, "field %s: width \"%.*s\" is not a whole number", field_names[f],
                 (int)width_len, width);
        return LEAF_EINVAL;
    }
    int64_t max_bits = f == SNOWFLAKE_TIME ? SNOWFLAKE_MAX_ID_BITS : SNOWFLAKE_MAX_FIELD_BITS;
    if (bits < 1 || bits > max_bits) {
        snprintf(reason, cap, "field %s: width %lld is out of range (1..%lld bits)", field_names[f],
                 (long long)bits, (long long)max_bits);
        return LEAF_EINVAL;
    }
    seen[f] = 1;
    l->bits[f] = (int)bits;
    l->order[pos] = f;
    return LEAF_OK;
}

/* The whole-layout rules, once every item parsed: the required fields, the sum, time above
 * sequence. */
static leaf_status_t layout_check(const struct snowflake_layout *l, const int *seen, char *reason,
                                  size_t cap) {
    int sum = 0, time_pos = -1, seq_pos = -1;
    for (int f = 0; f < SNOWFLAKE_FIELDS; f++) {
        if (!seen[f] && f != SNOWFLAKE_DATACENTER) {
            snprintf(reason, cap,
                     "field %s is missing (time, worker and sequence are all required)",
                     field_names[f]);
            return LEAF_EINVAL;
        }
        sum += l->bits[f];
    }
    if (sum > SNOWFLAKE_MAX_ID_BITS) {
        snprintf(reason, cap, "widths sum to %d bits; at most %d (the sign bit stays 0)", sum,
                 SNOWFLAKE_MAX_ID_BITS);
        return LEAF_EINVAL;
    }
    for (int i = 0; i < l->nfields; i++) {
        time_pos = l->order[i] == SNOWFLAKE_TIME ? i : time_pos;
        seq_pos = l->order[i] == SNOWFLAKE_SEQUENCE ? i : seq_pos;
    }
    if (seq_pos < time_pos) {
        snprintf(reason, cap,
                 "sequence is listed above time: a node's IDs would go down "
                 "each time a tick ends");
        return LEAF_EINVAL;
    }
    return LEAF_OK;
}

static leaf_status_t layout_parse_fields(struct snowflake_layout *out, const char *text, size_t len,
                                         char *reason, size_t cap) {
    struct snowflake_layout l = {.unit_ms = 1};
    int seen[SNOWFLAKE_FIELDS] = {0}, items = 0;
    const char *p = text, *end = text + len;
    const char *all = text;
    size_t all_len = len;
    trim(&all, &all_len);
    if (all_len == 0) {
        snprintf(reason, cap, "empty; expected e.g. %s", SNOWFLAKE_DEFAULT_LAYOUT);
        return LEAF_EINVAL;
    }
    for (int more = 1; more;) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *item_end = comma ? comma : end, *item = p;
        size_t item_len = (size_t)(item_end - p);
        more = comma != NULL;
        trim(&item, &item_len);
        if (item_len == 0) {
            snprintf(reason, cap, "an empty field (a stray comma?); expected e.g. %s",
                     SNOWFLAKE_DEFAULT_LAYOUT);
            return LEAF_EINVAL;
        }
        if (items == SNOWFLAKE_FIELDS) {
            snprintf(reason, cap, "more than %d fields (the fields are " SNOWFLAKE_FIELD_LIST ")",
                     SNOWFLAKE_FIELDS);
            return LEAF_EINVAL;
        }
        leaf_status_t rc = layout_item(&l, items, seen, p, (size_t)(item_end - p), reason, cap);
        if (rc != LEAF_OK) {
            return rc;
        }
        items++;
        p = more ? item_end + 1 : end;
    }
    l.nfields = items;
    if (layout_check(&l, seen, reason, cap) != LEAF_OK) {
        return LEAF_EINVAL;
    }
    layout_place(&l);
    *out = l;
    return LEAF_OK;
}

leaf_status_t snowflake_layout_parse(struct snowflake_layout *out, const char *text, size_t len,
                                     char *reason, size_t cap) {
    const char *name = text;
    size_t name_len = len;
    trim(&name, &name_len);
    for (size_t i = 0; i < sizeof(named_layouts) / sizeof(named_layouts[0]); i++) {
        const struct named_layout *n = &named_layouts[i];
        if (strlen(n->name) == name_len && memcmp(n->name, name, name_len) == 0) {
            struct snowflake_layout l;
            if (layout_parse_fields(&l, n->fields, strlen(n->fields), reason, cap) != LEAF_OK) {
                return LEAF_EINVAL; /* unreachable: the table's rows are valid (unit-tested) */
            }
            l.unit_ms = n->unit_ms;
            *out = l;
            return LEAF_OK;
        }
    }
    return layout_parse_fields(out, text, len, reason, cap);
}

leaf_status_t snowflake_layout_set_datacenter(struct snowflake_layout *l, int64_t id, char *reason,
                                              size_t cap) {
    int bits = l->bits[SNOWFLAKE_DATACENTER];
    if (bits == 0 && id != 0) {
        snprintf(reason, cap,
                 "%lld needs a layout with a datacenter field (e.g. twitter: "
                 "time:41,datacenter:5,worker:5,sequence:12)",
                 (long long)id);
        return LEAF_EINVAL;
    }
    if (id < 0 || (bits > 0 && id > snowflake_layout_max(l, SNOWFLAKE_DATACENTER))) {
        snprintf(reason, cap,
                 "%lld does not fit the layout's datacenter field (datacenter:%d "
                 "holds 0..%lld)",
                 (long long)id, bits, (long long)snowflake_layout_max(l, SNOWFLAKE_DATACENTER));
        return LEAF_EINVAL;
    }
    l->datacenter_id = id;
    return LEAF_OK;
}

leaf_status_t snowflake_layout_set_unit(struct snowflake_layout *l, int64_t unit_ms, char *reason,
                                        size_t cap) {
    if (unit_ms < 1 || unit_ms > SNOWFLAKE_MAX_UNIT_MS) {
        snprintf(reason, cap, "time unit %lld ms is out of range (1..%lld)", (long long)unit_ms,
                 (long long)SNOWFLAKE_MAX_UNIT_MS);
        return LEAF_EINVAL;
    }
    l->unit_ms = unit_ms;
    return LEAF_OK;
}

/*
 * The last millisecond whose tick the time field still holds: epoch + the
 * largest tick's end - 1 (saturating at INT64_MAX).
 */
static int64_t layout_last_ms(const struct snowflake_layout *l, int64_t epoch) {
    /* (max ticks + 1) * unit can pass 2^63 for wide time fields: saturate. */
    int64_t ticks = snowflake_layout_max(l, SNOWFLAKE_TIME) + 1, span, last;
    if (__builtin_mul_overflow(ticks, l->unit_ms, &span) ||
        __builtin_add_overflow(epoch, span - 1, &last)) {
        return INT64_MAX;
    }
    return last;
}

double snowflake_layout_years_left(const struct snowflake_layout *l, int64_t epoch,
                                   int64_t now_ms) {
    return ((double)layout_last_ms(l, epoch) - (double)now_ms) / SNOWFLAKE_MS_PER_YEAR;
}

leaf_status_t snowflake_layout_check_horizon(const struct snowflake_layout *l, int64_t epoch,
                                             int64_t now_ms, char *reason, size_t cap) {
    double years = snowflake_layout_years_left(l, epoch, now_ms);
    if (years >= SNOWFLAKE_HORIZON_MIN_YEARS) {
        return LEAF_OK;
    }
    snprintf(reason, cap,
             "time:%d at %lld ms per tick runs out %.1f years from now (epoch %lld); at least %d "
             "year is required: widen time, raise the unit or move the epoch later",
             l->bits[SNOWFLAKE_TIME], (long long)l->unit_ms, years, (long long)epoch,
             SNOWFLAKE_HORIZON_MIN_YEARS);
    return LEAF_EINVAL;
}

void snowflake_layout_format(const struct snowflake_layout *l, char *buf, size_t cap) {
    size_t used = 0;
    if (cap > 0) {
        buf[0] = '\0';
    }
    for (int i = 0; i < l->nfields && used < cap; i++) {
        int n = snprintf(buf + used, cap - used, "%s%s:%d", i ? "," : "", field_names[l->order[i]],
                         l->bits[l->order[i]]);
        used += n > 0 ? (size_t)n : 0;
    }
}

leaf_status_t snowflake_layout_decode(const struct snowflake_layout *l, int64_t id, int64_t epoch,
                                      struct snowflake_parts *out) {
    int width = l->bits[SNOWFLAKE_TIME] + l->bits[SNOWFLAKE_WORKER] + l->bits[SNOWFLAKE_SEQUENCE] +
                l->bits[SNOWFLAKE_DATACENTER];
    if (id < 0 || (width < SNOWFLAKE_MAX_ID_BITS && (id >> width) != 0)) {
        return LEAF_ERANGE;
    }
    int64_t ticks = (id >> l->shift[SNOWFLAKE_TIME]) & snowflake_layout_max(l, SNOWFLAKE_TIME);
    out->ticks = ticks;
    int64_t rel;
    if (__builtin_mul_overflow(ticks, l->unit_ms, &rel) ||
        __builtin_add_overflow(epoch, rel, &out->timestamp_ms)) {
        out->timestamp_ms = INT64_MAX; /* past any clock: only a hand-made ID gets here */
    }
    out->worker_id =
        (int)((id >> l->shift[SNOWFLAKE_WORKER]) & snowflake_layout_max(l, SNOWFLAKE_WORKER));
    out->sequence =
        (int)((id >> l->shift[SNOWFLAKE_SEQUENCE]) & snowflake_layout_max(l, SNOWFLAKE_SEQUENCE));
    out->datacenter_id = (int)((id >> l->shift[SNOWFLAKE_DATACENTER]) &
                               snowflake_layout_max(l, SNOWFLAKE_DATACENTER));
    return LEAF_OK;
}
