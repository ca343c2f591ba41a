#include "sequence_numbering.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "num.h"
#include "tzdata.h"
#include "validate.h"

struct named {
    const char *text;
    int fine;
};

static const struct named dates[] = {
#define NUMBERING_DATE_ROW(e, text, fine) [e] = {text, fine},
    SEQUENCE_NUMBERING_DATES(NUMBERING_DATE_ROW)
#undef NUMBERING_DATE_ROW
};

static const struct named periods[] = {
#define NUMBERING_PERIOD_ROW(e, text, fine) [e] = {text, fine},
    SEQUENCE_NUMBERING_PERIODS(NUMBERING_PERIOD_ROW)
#undef NUMBERING_PERIOD_ROW
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int lookup(const struct named *t, int n, const char *s, size_t len) {
    for (int i = 0; i < n; i++) {
        if (strlen(t[i].text) == len && memcmp(t[i].text, s, len) == 0) {
            return i;
        }
    }
    return -1;
}

leaf_status_t sequence_numbering_parse_date(const char *s, size_t n,
                                            enum sequence_numbering_date *out) {
    int i = lookup(dates, COUNT(dates), s, n);
    if (i < 0) {
        return LEAF_EINVAL;
    }
    *out = (enum sequence_numbering_date)i;
    return LEAF_OK;
}

leaf_status_t sequence_numbering_parse_period(const char *s, size_t n,
                                              enum sequence_numbering_period *out) {
    int i = lookup(periods, COUNT(periods), s, n);
    if (i < 0) {
        return LEAF_EINVAL;
    }
    *out = (enum sequence_numbering_period)i;
    return LEAF_OK;
}

/* A zone name: words of [A-Za-z0-9_+-] separated by single '/', none starting with '.'. */
static int zone_name_ok(const char *z) {
    size_t n = strlen(z), word = 0;
    if (n == 0 || n >= SEQUENCE_NUMBERING_TZ_MAX) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        char c = z[i];
        if (c == '/') {
            if (word == 0) {
                return 0;
            }
            word = 0;
            continue;
        }
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '+' || c == '-';
        if (!ok) {
            return 0;
        }
        word++;
    }
    if (word == 0) {
        return 0;
    }
    /* files of the zone directory that are no zone of their own: the host's zone, the POSIX
     * rules' template, the "unknown zone" placeholder, leap-second variants */
    static const char *const not_zones[] = {"localtime", "posixrules", "Factory", "right/",
                                            "posix/"};
    for (size_t i = 0; i < sizeof(not_zones) / sizeof(not_zones[0]); i++) {
        size_t k = strlen(not_zones[i]);
        if (not_zones[i][k - 1] == '/' ? strncmp(z, not_zones[i], k) == 0
                                       : strcmp(z, not_zones[i]) == 0) {
            return 0;
        }
    }
    return 1;
}

leaf_status_t sequence_numbering_check(const struct sequence_numbering *d, char *why, size_t cap) {
    size_t nlen = strlen(d->name);
    if (nlen > SEQUENCE_NUMBERING_NAME_MAX || !validate_sequence_name(d->name, nlen)) {
        snprintf(why, cap, "name: 1 to %d bytes of [A-Za-z0-9._:-], not . or ..",
                 SEQUENCE_NUMBERING_NAME_MAX);
        return LEAF_EINVAL;
    }
    for (const char *p = d->prefix; *p; p++) {
        if (*p <= ' ' || *p > '~' || *p == '"' || *p == '\\') {
            snprintf(why, cap, "prefix: printable ASCII without spaces, \" or \\");
            return LEAF_EINVAL;
        }
    }
    if (d->width < 1 || d->width > SEQUENCE_NUMBERING_MAX_WIDTH) {
        snprintf(why, cap, "width %d: 1..%d digits", d->width, SEQUENCE_NUMBERING_MAX_WIDTH);
        return LEAF_EINVAL;
    }
    if (!zone_name_ok(d->time_zone)) {
        snprintf(why, cap, "time_zone \"%s\": an IANA name such as Asia/Shanghai", d->time_zone);
        return LEAF_EINVAL;
    }
    int date_fine = dates[d->date].fine, period_fine = periods[d->period].fine;
    if (period_fine != periods[NUMBERING_PERIOD_NEVER].fine &&
        (date_fine == 0 || date_fine > period_fine)) {
        snprintf(why, cap,
                 "period %s restarts the counter but date \"%s\" does not change with it: the "
                 "same number would come again (use a date at least as fine, or period never)",
                 periods[d->period].text, dates[d->date].text);
        return LEAF_EINVAL;
    }
    return LEAF_OK;
}

int64_t sequence_numbering_period_of(const struct sequence_numbering *d, int64_t local_day) {
    int64_t y;
    int m, day;
    tzdata_civil_from_days(local_day, &y, &m, &day);
    switch (d->period) {
    case NUMBERING_PERIOD_DAY: return local_day;
    case NUMBERING_PERIOD_MONTH: return (y - 1970) * 12 + (m - 1);
    case NUMBERING_PERIOD_YEAR: return y - 1970;
    default: return 0;
    }
}

static int64_t pow10_of(int width) {
    int64_t p = 1;
    for (int i = 0; i < width; i++) {
        p *= 10;
    }
    return p;
}

int64_t sequence_numbering_room(const struct sequence_numbering *d) {
    return pow10_of(d->width);
}

int64_t sequence_numbering_end(const struct sequence_numbering *d, int64_t last, int64_t period) {
    int64_t mod = pow10_of(d->width);
    int64_t p = last / mod - 1 > period ? last / mod - 1 : period;
    return (p + 1) * mod + mod - 1;
}

/* The period index of a sequence value, and its counter. */
static int64_t value_period(const struct sequence_numbering *d, int64_t value) {
    return value / pow10_of(d->width) - 1;
}

static int64_t value_counter(const struct sequence_numbering *d, int64_t value) {
    return value % pow10_of(d->width);
}

leaf_status_t sequence_numbering_range(const struct sequence_numbering *d, int64_t last,
                                       int64_t period, int64_t n, int64_t *first) {
    int64_t mod = pow10_of(d->width);
    if (n < 1) {
        return LEAF_EINVAL;
    }
    int64_t start = (period + 1) * mod + 1; /* the clock's period, counter 1 */
    if (last >= start) {
        start = last + 1; /* the same period or a later one (a clock behind): go on */
    }
    /* counter 0 means the previous period's counter ran out: no wrap into the next */
    if (start % mod == 0 || n > mod - start % mod) {
        return LEAF_ERANGE;
    }
    *first = start;
    return LEAF_OK;
}

/* The first day of period p. */
static int64_t period_first_day(const struct sequence_numbering *d, int64_t p) {
    switch (d->period) {
    case NUMBERING_PERIOD_DAY: return p;
    case NUMBERING_PERIOD_MONTH: return tzdata_days_from_civil(1970 + p / 12, (int)(p % 12) + 1, 1);
    case NUMBERING_PERIOD_YEAR: return tzdata_days_from_civil(1970 + p, 1, 1);
    default: return INT64_MIN;
    }
}

size_t sequence_numbering_format(const struct sequence_numbering *d, int64_t value,
                                 int64_t clock_day, char *out) {
    int64_t p = value_period(d, value);
    int64_t from = period_first_day(d, p);
    /* a date no finer than the period: the period's own; a finer one: the clock's, clamped */
    int64_t day =
        dates[d->date].fine >= periods[d->period].fine || clock_day < from ? from : clock_day;
    int64_t y = 0;
    int m = 0, dd = 0;
    if (day != INT64_MIN) {
        tzdata_civil_from_days(day, &y, &m, &dd);
    }
    char date[16] = "";
    switch (d->date) {
    case NUMBERING_DATE_YYYYMMDD:
        snprintf(date, sizeof(date), "%04" PRId64 "%02d%02d", y, m, dd);
        break;
    case NUMBERING_DATE_YYMMDD:
        snprintf(date, sizeof(date), "%02d%02d%02d", (int)(y % 100), m, dd);
        break;
    case NUMBERING_DATE_YYYYMM: snprintf(date, sizeof(date), "%04" PRId64 "%02d", y, m); break;
    case NUMBERING_DATE_YYYY: snprintf(date, sizeof(date), "%04" PRId64, y); break;
    default: break;
    }
    int len = snprintf(out, SEQUENCE_NUMBERING_TEXT_MAX, "%s%s%0*" PRId64, d->prefix, date,
                       d->width, value_counter(d, value));
    return len > 0 ? (size_t)len : 0;
}

const char *sequence_numbering_date_name(enum sequence_numbering_date d) {
    return dates[d].text;
}

const char *sequence_numbering_period_name(enum sequence_numbering_period p) {
    return periods[p].text;
}

size_t sequence_numbering_format_line(const struct sequence_numbering *d, char *out, size_t cap) {
    int n =
        snprintf(out, cap, "name=%s prefix=%s date=%s width=%d period=%s time_zone=%s\n", d->name,
                 d->prefix, dates[d->date].text, d->width, periods[d->period].text, d->time_zone);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* Copies the value of key=value into out (cap bytes): 1, or 0 when it does not fit. */
static int copy_value(const char *v, size_t n, char *out, size_t cap) {
    if (n >= cap) {
        return 0;
    }
    memcpy(out, v, n);
    out[n] = '\0';
    return 1;
}

/* One field key=value into d; seen counts the fields. */
static int line_field(const char *f, size_t n, struct sequence_numbering *d, int *seen) {
    const char *eq = memchr(f, '=', n);
    if (eq == NULL) {
        return 0;
    }
    size_t k = (size_t)(eq - f), vn = n - k - 1;
    const char *v = eq + 1;
    int64_t w;
#define KEY(s) (k == sizeof(s) - 1 && memcmp(f, s, k) == 0)
    if (KEY("name")) {
        seen[0]++;
        return copy_value(v, vn, d->name, sizeof(d->name));
    }
    if (KEY("prefix")) {
        seen[1]++;
        return copy_value(v, vn, d->prefix, sizeof(d->prefix));
    }
    if (KEY("date")) {
        seen[2]++;
        return sequence_numbering_parse_date(v, vn, &d->date) == LEAF_OK;
    }
    if (KEY("width")) {
        seen[3]++;
        d->width = num_parse_i64(v, vn, &w) == LEAF_OK && w > 0 && w < 100 ? (int)w : 0;
        return d->width > 0;
    }
    if (KEY("period")) {
        seen[4]++;
        return sequence_numbering_parse_period(v, vn, &d->period) == LEAF_OK;
    }
    if (KEY("time_zone")) {
        seen[5]++;
        return copy_value(v, vn, d->time_zone, sizeof(d->time_zone));
    }
#undef KEY
    return 1; /* a field a newer node wrote: skipped */
}

leaf_status_t sequence_numbering_parse_line(const char *s, size_t len,
                                            struct sequence_numbering *d) {
    int seen[6] = {0};
    char why[160];
    memset(d, 0, sizeof(*d));
    for (size_t i = 0; i < len;) {
        const char *sp = memchr(s + i, ' ', len - i);
        size_t n = sp ? (size_t)(sp - (s + i)) : len - i;
        if (!line_field(s + i, n, d, seen)) {
            return LEAF_EINVAL;
        }
        i += n + 1;
    }
    for (int k = 0; k < 6; k++) {
        if (seen[k] != 1) {
            return LEAF_EINVAL;
        }
    }
    return sequence_numbering_check(d, why, sizeof(why));
}
