#ifndef LEAF_SEQUENCE_NUMBERING_H
#define LEAF_SEQUENCE_NUMBERING_H

/*
 * Business numbers (order and invoice numbers: ORD20261128000042) built on a
 * sequence, pure code (libc and src/base only). A numbering is
 *   prefix + date + counter (zero-padded to width)
 * whose counter restarts at 1 when its period (day, month, year, never)
 * changes by the primary's clock in the numbering's time zone.
 *
 * The period is kept IN the sequence's values, so that it is decided once,
 * by the primary, and recorded in ZooKeeper with the sequence's max: a value
 * is (period + 1) * 10^width + counter, with period the index of the period
 * in the time zone (days, months or years since 1970; 0 for never). The
 * sequence only goes up (sequence_state.h), so a later primary, or one whose
 * clock is behind, can never issue in an earlier period than any number
 * issued before; a new period starts with a skip of the sequence up to
 * (period + 1) * 10^width + 1 (sequence_numbering_range), a gap that the
 * sequence's max records before a number of it is issued. A counter that
 * would pass 10^width - 1 is refused (LEAF_ERANGE: numbering_exhausted),
 * never carried into the next period's values.
 *
 * Ownership: values only; any thread.
 */
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define SEQUENCE_NUMBERING_MAX_WIDTH 12 /* (period + 1) * 10^12 stays far below 2^63 */
#define SEQUENCE_NUMBERING_PREFIX_MAX 32
#define SEQUENCE_NUMBERING_TZ_MAX 64
#define SEQUENCE_NUMBERING_NAME_MAX 120 /* its sequence "@" + name fits VALIDATE_TAG_MAX */
#define SEQUENCE_NUMBERING_LINE_MAX 320 /* one definition of the table, newline included */
#define SEQUENCE_NUMBERING_TEXT_MAX                                                                \
    (SEQUENCE_NUMBERING_PREFIX_MAX + 8 + SEQUENCE_NUMBERING_MAX_WIDTH + 1)

/* X(enum, text, days per unit: how fine the date is; 0 none) */
#define SEQUENCE_NUMBERING_DATES(X)                                                                \
    X(NUMBERING_DATE_NONE, "", 0)                                                                  \
    X(NUMBERING_DATE_YYYYMMDD, "yyyyMMdd", 1)                                                      \
    X(NUMBERING_DATE_YYMMDD, "yyMMdd", 1)                                                          \
    X(NUMBERING_DATE_YYYYMM, "yyyyMM", 2)                                                          \
    X(NUMBERING_DATE_YYYY, "yyyy", 3)

/* X(enum, text, fineness: 1 day, 2 month, 3 year, 4 never) */
#define SEQUENCE_NUMBERING_PERIODS(X)                                                              \
    X(NUMBERING_PERIOD_DAY, "day", 1)                                                              \
    X(NUMBERING_PERIOD_MONTH, "month", 2)                                                          \
    X(NUMBERING_PERIOD_YEAR, "year", 3)                                                            \
    X(NUMBERING_PERIOD_NEVER, "never", 4)

enum sequence_numbering_date {
#define NUMBERING_DATE_ENUM(e, text, fine) e,
    SEQUENCE_NUMBERING_DATES(NUMBERING_DATE_ENUM)
#undef NUMBERING_DATE_ENUM
};

enum sequence_numbering_period {
#define NUMBERING_PERIOD_ENUM(e, text, fine) e,
    SEQUENCE_NUMBERING_PERIODS(NUMBERING_PERIOD_ENUM)
#undef NUMBERING_PERIOD_ENUM
};

struct sequence_numbering {
    char name[SEQUENCE_NUMBERING_NAME_MAX + 1]; /* the tag rule (validate.h), not . or .. */
    char prefix[SEQUENCE_NUMBERING_PREFIX_MAX + 1];
    enum sequence_numbering_date date;
    int width; /* 1..SEQUENCE_NUMBERING_MAX_WIDTH digits */
    enum sequence_numbering_period period;
    char time_zone[SEQUENCE_NUMBERING_TZ_MAX]; /* IANA name: Asia/Shanghai */
};

/* The date and period names, parsed (exact): LEAF_OK or LEAF_EINVAL. */
leaf_status_t sequence_numbering_parse_date(const char *s, size_t n,
                                            enum sequence_numbering_date *out);
leaf_status_t sequence_numbering_parse_period(const char *s, size_t n,
                                              enum sequence_numbering_period *out);

/*
 * LEAF_OK when the numbering can never repeat a number, else LEAF_EINVAL and
 * a reason: the prefix is printable ASCII without spaces; the width fits;
 * the time zone is a path below the zone directory ([A-Za-z0-9_+-] words
 * separated by '/', no "..") ; and a period finer than the date is refused
 * (period day with date yyyyMM would print the same number on two days).
 */
leaf_status_t sequence_numbering_check(const struct sequence_numbering *d, char *why, size_t cap);

/* The period index of a local civil day (days since 1970-01-01 in the zone). */
int64_t sequence_numbering_period_of(const struct sequence_numbering *d, int64_t local_day);

/*
 * Where n numbers start, after the sequence's last value `last` (0 when
 * none) at the clock's period `period`: in the later of the two periods,
 * the first counter after `last` in its own period or 1 in a newer one.
 * LEAF_OK with *first (the values *first .. *first + n - 1); LEAF_ERANGE
 * when they would pass 10^width - 1 (numbering_exhausted); LEAF_EINVAL for
 * n < 1.
 */
leaf_status_t sequence_numbering_range(const struct sequence_numbering *d, int64_t last,
                                       int64_t period, int64_t n, int64_t *first);

/* 10^width: the values of one period (sequence_state_set_room()). */
int64_t sequence_numbering_room(const struct sequence_numbering *d);

/*
 * The last value of the period sequence_numbering_range() issues in after
 * `last` at the clock's period `period` (the later of the two): what the
 * sequence may reserve up to (sequence_state_set_room()).
 */
int64_t sequence_numbering_end(const struct sequence_numbering *d, int64_t last, int64_t period);

/*
 * The text of value (NUL-terminated; out holds SEQUENCE_NUMBERING_TEXT_MAX):
 * prefix, the date, the counter padded to width. The date is the value's
 * period's when the date is no finer than the period; a finer date (yyyyMMdd
 * in a month period, any date with period never) is the clock's local day
 * clock_day, but never before the value's period's first day. Returns the
 * length.
 */
size_t sequence_numbering_format(const struct sequence_numbering *d, int64_t value,
                                 int64_t clock_day, char *out);

/*
 * The table of definitions, the data of /leafd/{leaf.name}/numberings: one
 * line per numbering, fields key=value separated by single spaces:
 *   name=orders prefix=ORD date=yyyyMMdd width=6 period=day time_zone=Asia/Shanghai
 * format_line writes one (NUL-terminated, SEQUENCE_NUMBERING_LINE_MAX bytes
 * are enough) and returns its length; parse_line reads one (len bytes, no
 * newline) and checks it (sequence_numbering_check): LEAF_OK or LEAF_EINVAL.
 * The date's and period's names are those of the HTTP API.
 */
size_t sequence_numbering_format_line(const struct sequence_numbering *d, char *out, size_t cap);
leaf_status_t sequence_numbering_parse_line(const char *s, size_t len,
                                            struct sequence_numbering *d);
const char *sequence_numbering_date_name(enum sequence_numbering_date d);
const char *sequence_numbering_period_name(enum sequence_numbering_period p);

#endif
