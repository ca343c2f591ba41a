#ifndef LEAF_TZDATA_H
#define LEAF_TZDATA_H

/*
 * A time zone of the IANA database, read from the bytes of its TZif file
 * (RFC 8536; Debian's tzdata installs them under /usr/share/zoneinfo), and
 * the UTC offset it gives at any instant. Pure code: the caller reads the
 * file; nothing here touches the process's TZ or localtime's shared state,
 * so any number of zones are used from any threads at once (localtime_r()
 * would need setenv("TZ"), which is process-wide and not thread-safe).
 *
 * What is read: the version 2+ data block (64-bit transition times) and its
 * footer, a POSIX TZ string ("CET-1CEST,M3.5.0,M10.5.0/3") that gives the
 * offsets after the last transition, with its daylight-saving rule in the
 * M (month.week.day) form every current zone uses. A version 1 file, or a
 * footer rule in another form, is refused (LEAF_EINVAL).
 *
 * Ownership: a struct tzdata is a value, filled once and then only read.
 */
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define TZDATA_MAX_TRANSITIONS 2000

/* A POSIX TZ rule: std offset, and when dst is on, its offset and the two M-form switches. */
struct tzdata_rule {
    int32_t std_off; /* seconds east of UTC */
    int has_dst;
    int32_t dst_off;
    int start_month, start_week, start_day; /* Mm.w.d: month 1..12, week 1..5, day 0..6 */
    int32_t start_time;                     /* local (standard) seconds after midnight */
    int end_month, end_week, end_day;
    int32_t end_time; /* local (daylight) seconds after midnight */
};

struct tzdata {
    int n;                               /* transitions */
    int64_t at[TZDATA_MAX_TRANSITIONS];  /* UTC seconds, ascending */
    int32_t off[TZDATA_MAX_TRANSITIONS]; /* the offset from at[i] on */
    int32_t first_off;                   /* before the first transition */
    struct tzdata_rule rule;             /* after the last one */
};

/* Parses a TZif file's bytes into *tz: LEAF_OK or LEAF_EINVAL (malformed or unsupported). */
leaf_status_t tzdata_parse(struct tzdata *tz, const uint8_t *data, size_t len);

/* Seconds east of UTC at the UTC instant utc_s. */
int32_t tzdata_offset(const struct tzdata *tz, int64_t utc_s);

/* The local civil day (days since 1970-01-01 in the zone) of the UTC instant utc_ms. */
int64_t tzdata_local_day(const struct tzdata *tz, int64_t utc_ms);

/* Days since 1970-01-01 of a civil date, and back (proleptic Gregorian). */
int64_t tzdata_days_from_civil(int64_t y, int m, int d);
void tzdata_civil_from_days(int64_t days, int64_t *y, int *m, int *d);

#endif
