#include "tzdata.h"

#include <string.h>

#define TZ_HEADER 44

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const uint8_t *p) {
    return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

int64_t tzdata_days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void tzdata_civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

/* ---- the footer: a POSIX TZ string ------------------------------------------------------ */

struct cursor {
    const char *p, *end;
};

static int more(const struct cursor *c) {
    return c->p < c->end;
}

/* A zone abbreviation: letters, or <...> of anything but '>'. */
static int skip_name(struct cursor *c) {
    if (more(c) && *c->p == '<') {
        while (more(c) && *c->p != '>') {
            c->p++;
        }
        return more(c) ? (c->p++, 1) : 0;
    }
    const char *start = c->p;
    while (more(c) && ((*c->p >= 'A' && *c->p <= 'Z') || (*c->p >= 'a' && *c->p <= 'z'))) {
        c->p++;
    }
    return c->p - start >= 3;
}

static int read_uint(struct cursor *c, int max, int *out) {
    int v = 0, digits = 0;
    while (more(c) && *c->p >= '0' && *c->p <= '9' && digits < 6) {
        v = v * 10 + (*c->p++ - '0');
        digits++;
    }
    *out = v;
    return digits > 0 && v <= max;
}

/* [+-]hh[:mm[:ss]] as seconds (POSIX's sign: positive west of Greenwich). */
static int read_time(struct cursor *c, int32_t *out) {
    int sign = 1, h, m = 0, s = 0;
    if (more(c) && (*c->p == '+' || *c->p == '-')) {
        sign = *c->p++ == '-' ? -1 : 1;
    }
    if (!read_uint(c, 167, &h)) {
        return 0;
    }
    if (more(c) && *c->p == ':' && (c->p++, !read_uint(c, 59, &m))) {
        return 0;
    }
    if (more(c) && *c->p == ':' && (c->p++, !read_uint(c, 59, &s))) {
        return 0;
    }
    *out = sign * (h * 3600 + m * 60 + s);
    return 1;
}

/* ,Mm.w.d[/time] */
static int read_switch(struct cursor *c, int *month, int *week, int *day, int32_t *time) {
    *time = 7200;
    if (!more(c) || *c->p++ != ',' || !more(c) || *c->p++ != 'M' || !read_uint(c, 12, month) ||
        *month < 1 || !more(c) || *c->p++ != '.' || !read_uint(c, 5, week) || *week < 1 ||
        !more(c) || *c->p++ != '.' || !read_uint(c, 6, day)) {
        return 0;
    }
    return !(more(c) && *c->p == '/' && (c->p++, !read_time(c, time)));
}

static leaf_status_t parse_rule(struct tzdata_rule *r, const char *s, size_t n) {
    struct cursor c = {s, s + n};
    int32_t std_west, dst_west;
    memset(r, 0, sizeof(*r));
    if (!skip_name(&c) || !read_time(&c, &std_west)) {
        return LEAF_EINVAL;
    }
    r->std_off = -std_west;
    if (!more(&c)) {
        return LEAF_OK;
    }
    if (!skip_name(&c)) {
        return LEAF_EINVAL;
    }
    dst_west = std_west - 3600;
    if (more(&c) && *c.p != ',' && !read_time(&c, &dst_west)) {
        return LEAF_EINVAL;
    }
    r->has_dst = 1;
    r->dst_off = -dst_west;
    if (!read_switch(&c, &r->start_month, &r->start_week, &r->start_day, &r->start_time) ||
        !read_switch(&c, &r->end_month, &r->end_week, &r->end_day, &r->end_time) || more(&c)) {
        return LEAF_EINVAL;
    }
    return LEAF_OK;
}

/* The day (days since 1970) of Mm.w.d in year y: week 5 is the last such weekday. */
static int64_t rule_day(int64_t y, int month, int week, int day) {
    int64_t first = tzdata_days_from_civil(y, month, 1);
    int wday_first = (int)(((first + 4) % 7 + 7) % 7); /* 1970-01-01 was a Thursday (4) */
    int64_t d = first + (day - wday_first + 7) % 7 + 7 * (int64_t)(week - 1);
    int64_t y2;
    int m2, d2;
    tzdata_civil_from_days(d, &y2, &m2, &d2);
    return m2 != month ? d - 7 : d;
}

static int32_t rule_offset(const struct tzdata_rule *r, int64_t utc_s) {
    if (!r->has_dst) {
        return r->std_off;
    }
    int64_t y;
    int m, d;
    tzdata_civil_from_days((utc_s + r->std_off) / 86400 - ((utc_s + r->std_off) % 86400 < 0), &y,
                           &m, &d);
    /* the switches of that year, in UTC: start in standard time, end in daylight time */
    int64_t start = rule_day(y, r->start_month, r->start_week, r->start_day) * 86400 +
                    r->start_time - r->std_off;
    int64_t end =
        rule_day(y, r->end_month, r->end_week, r->end_day) * 86400 + r->end_time - r->dst_off;
    int in_dst = start < end ? (utc_s >= start && utc_s < end) : (utc_s >= start || utc_s < end);
    return in_dst ? r->dst_off : r->std_off;
}

/* ---- the TZif file ---------------------------------------------------------------------- */

struct tzif_counts {
    uint32_t isut, isstd, leap, time, type, chars;
};

static int read_header(const uint8_t *p, size_t left, struct tzif_counts *k) {
    if (left < TZ_HEADER || memcmp(p, "TZif", 4) != 0) {
        return 0;
    }
    k->isut = be32(p + 20);
    k->isstd = be32(p + 24);
    k->leap = be32(p + 28);
    k->time = be32(p + 32);
    k->type = be32(p + 36);
    k->chars = be32(p + 40);
    return k->type >= 1 && k->type <= 256 && k->time <= 100000 && k->chars <= 100000 &&
           k->leap <= 100000 && k->isut <= 256 && k->isstd <= 256;
}

static size_t block_len(const struct tzif_counts *k, size_t time_size) {
    return (size_t)k->time * time_size + k->time + (size_t)k->type * 6 + k->chars +
           (size_t)k->leap * (time_size + 4) + k->isstd + k->isut;
}

leaf_status_t tzdata_parse(struct tzdata *tz, const uint8_t *data, size_t len) {
    struct tzif_counts k;
    if (!read_header(data, len, &k) || data[4] < '2') {
        return LEAF_EINVAL; /* version 1 has no 64-bit block and no footer */
    }
    size_t v1 = TZ_HEADER + block_len(&k, 4);
    if (v1 > len || !read_header(data + v1, len - v1, &k) || k.time > TZDATA_MAX_TRANSITIONS) {
        return LEAF_EINVAL;
    }
    const uint8_t *b = data + v1 + TZ_HEADER;
    size_t need = block_len(&k, 8);
    if (v1 + TZ_HEADER + need > len) {
        return LEAF_EINVAL;
    }
    const uint8_t *times = b, *idx = b + (size_t)k.time * 8, *types = idx + k.time;
    tz->n = (int)k.time;
    for (uint32_t i = 0; i < k.time; i++) {
        if (idx[i] >= k.type) {
            return LEAF_EINVAL;
        }
        tz->at[i] = be64(times + (size_t)8 * i);
        tz->off[i] = (int32_t)be32(types + (size_t)6 * idx[i]);
    }
    tz->first_off = (int32_t)be32(types); /* type 0: the time before the first transition */
    /* the footer: \n<TZ string>\n */
    const uint8_t *f = b + need, *end = data + len;
    if (f >= end || *f != '\n') {
        return LEAF_EINVAL;
    }
    const uint8_t *nl = memchr(f + 1, '\n', (size_t)(end - f - 1));
    if (nl == NULL) {
        return LEAF_EINVAL;
    }
    if (nl == f + 1) { /* an empty footer: the last transition's offset holds */
        memset(&tz->rule, 0, sizeof(tz->rule));
        tz->rule.std_off = tz->n ? tz->off[tz->n - 1] : tz->first_off;
        return LEAF_OK;
    }
    return parse_rule(&tz->rule, (const char *)f + 1, (size_t)(nl - f - 1));
}

int32_t tzdata_offset(const struct tzdata *tz, int64_t utc_s) {
    if (tz->n == 0 || utc_s >= tz->at[tz->n - 1]) {
        /* from the last transition on the footer's rule says (RFC 8536 section 3.3) */
        return rule_offset(&tz->rule, utc_s);
    }
    if (utc_s < tz->at[0]) {
        return tz->first_off;
    }
    int lo = 0, hi = tz->n - 1; /* at[lo] <= utc_s < at[hi] */
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (tz->at[mid] <= utc_s) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return tz->off[lo];
}

int64_t tzdata_local_day(const struct tzdata *tz, int64_t utc_ms) {
    int64_t s = utc_ms / 1000 - (utc_ms % 1000 < 0);
    int64_t local = s + tzdata_offset(tz, s);
    return local / 86400 - (local % 86400 < 0);
}
