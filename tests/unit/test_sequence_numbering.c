/*
 * Business numbers' pure core: time zones read from Debian's tzdata files
 * (src/base/tzdata.h) against the C library's localtime_r over many
 * instants, the midnight of Asia/Shanghai and the daylight-saving changes of
 * Europe/Berlin; and the numbering rules (sequence/sequence_numbering.h):
 * the checks, the period kept in the sequence's values, the skip to a new
 * period, a clock behind, exhaustion and the text.
 */
#include <stdlib.h>
#include <time.h>

#include "sequence_numbering.h"
#include "tzdata.h"
#include "unit.h"

#define ZONEINFO "/usr/share/zoneinfo/"

static struct tzdata *load(const char *zone) {
    char path[256];
    snprintf(path, sizeof(path), ZONEINFO "%s", zone);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (f == NULL) {
        exit(1);
    }
    static uint8_t buf[1 << 16];
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    struct tzdata *tz = malloc(sizeof(*tz));
    CHECK_EQ_INT(tzdata_parse(tz, buf, n), LEAF_OK);
    return tz;
}

/* 2026-11-28T16:00:00Z is midnight in Shanghai (UTC+8, no daylight saving). */
#define SHANGHAI_MIDNIGHT INT64_C(1795881600000)
/* Berlin: summer time from 2026-03-29T01:00Z, winter time from 2026-10-25T01:00Z. */
#define BERLIN_SPRING INT64_C(1774746000000)
#define BERLIN_AUTUMN INT64_C(1792890000000)

static void test_zones_against_libc(void) {
    const char *zones[] = {"Asia/Shanghai", "Europe/Berlin", "America/New_York", "Australia/Sydney",
                           "Asia/Kolkata",  "UTC",           "America/Sao_Paulo"};
    uint64_t r = 88172645463325252ULL;
    for (size_t z = 0; z < sizeof(zones) / sizeof(zones[0]); z++) {
        struct tzdata *tz = load(zones[z]);
        setenv("TZ", zones[z], 1);
        tzset();
        int bad = 0;
        for (int i = 0; i < 20000; i++) {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            /* 1971 .. 2099: transitions, then the footer's rule past 2037 */
            time_t t = (time_t)(31536000 + (int64_t)(r % UINT64_C(4070000000)));
            struct tm tm;
            localtime_r(&t, &tm);
            bad += tzdata_offset(tz, (int64_t)t) != tm.tm_gmtoff;
        }
        if (bad) {
            fprintf(stderr, "%s: %d offsets differ from localtime_r\n", zones[z], bad);
        }
        CHECK_EQ_INT(bad, 0);
        free(tz);
    }
    unsetenv("TZ");
    tzset();
}

static void test_shanghai_midnight_and_berlin_dst(void) {
    struct tzdata *sh = load("Asia/Shanghai"), *be = load("Europe/Berlin");
    int64_t y;
    int m, d;
    int64_t before = tzdata_local_day(sh, SHANGHAI_MIDNIGHT - 1);
    int64_t after = tzdata_local_day(sh, SHANGHAI_MIDNIGHT);
    CHECK_EQ_INT(after, before + 1);
    tzdata_civil_from_days(after, &y, &m, &d);
    CHECK(y == 2026 && m == 11 && d == 29);
    CHECK_EQ_INT(tzdata_offset(be, BERLIN_SPRING / 1000 - 1), 3600);
    CHECK_EQ_INT(tzdata_offset(be, BERLIN_SPRING / 1000), 7200);
    CHECK_EQ_INT(tzdata_offset(be, BERLIN_AUTUMN / 1000 - 1), 7200);
    CHECK_EQ_INT(tzdata_offset(be, BERLIN_AUTUMN / 1000), 3600);
    /* Berlin's midnight moves with daylight saving: 22:00Z in summer, 23:00Z in winter */
    int64_t summer_midnight = INT64_C(1783202400000); /* 2026-07-04T22:00Z */
    CHECK_EQ_INT(tzdata_local_day(be, summer_midnight) - tzdata_local_day(be, summer_midnight - 1),
                 1);
    int64_t winter_midnight = INT64_C(1796079600000); /* 2026-11-30T23:00Z */
    CHECK_EQ_INT(tzdata_local_day(be, winter_midnight) - tzdata_local_day(be, winter_midnight - 1),
                 1);
    free(sh);
    free(be);
    /* a version 1 file or garbage is refused */
    struct tzdata *t = malloc(sizeof(*t));
    CHECK_EQ_INT(tzdata_parse(t, (const uint8_t *)"TZif1", 5), LEAF_EINVAL);
    CHECK_EQ_INT(tzdata_parse(t, (const uint8_t *)"nope", 4), LEAF_EINVAL);
    free(t);
}

static struct sequence_numbering orders(enum sequence_numbering_period p) {
    struct sequence_numbering d = {"orders", "ORD", NUMBERING_DATE_YYYYMMDD, 6, p, "Asia/Shanghai"};
    return d;
}

static void test_checks(void) {
    char why[200];
    struct sequence_numbering d = orders(NUMBERING_PERIOD_DAY);
    CHECK_EQ_INT(sequence_numbering_check(&d, why, sizeof(why)), LEAF_OK);
    d.date = NUMBERING_DATE_YYYYMM; /* a day period with a month date would repeat */
    CHECK_EQ_INT(sequence_numbering_check(&d, why, sizeof(why)), LEAF_EINVAL);
    CHECK(strstr(why, "same number would come again") != NULL);
    d.date = NUMBERING_DATE_NONE;
    d.period = NUMBERING_PERIOD_NEVER; /* no date: only a counter that never restarts */
    CHECK_EQ_INT(sequence_numbering_check(&d, why, sizeof(why)), LEAF_OK);
    d.period = NUMBERING_PERIOD_YEAR;
    CHECK_EQ_INT(sequence_numbering_check(&d, why, sizeof(why)), LEAF_EINVAL);
    d = orders(NUMBERING_PERIOD_DAY);
    d.width = 13;
    CHECK_EQ_INT(sequence_numbering_check(&d, why, sizeof(why)), LEAF_EINVAL);
    d = orders(NUMBERING_PERIOD_DAY);
    snprintf(d.time_zone, sizeof(d.time_zone), "../etc/passwd");
    CHECK_EQ_INT(sequence_numbering_check(&d, why, sizeof(why)), LEAF_EINVAL);
    d = orders(NUMBERING_PERIOD_DAY);
    snprintf(d.prefix, sizeof(d.prefix), "OR D");
    CHECK_EQ_INT(sequence_numbering_check(&d, why, sizeof(why)), LEAF_EINVAL);
    enum sequence_numbering_date dt;
    enum sequence_numbering_period pd;
    CHECK_EQ_INT(sequence_numbering_parse_date("yyMMdd", 6, &dt), LEAF_OK);
    CHECK_EQ_INT(dt, NUMBERING_DATE_YYMMDD);
    CHECK_EQ_INT(sequence_numbering_parse_date("", 0, &dt), LEAF_OK);
    CHECK_EQ_INT(dt, NUMBERING_DATE_NONE);
    CHECK_EQ_INT(sequence_numbering_parse_period("week", 4, &pd), LEAF_EINVAL);
}

/* What a definition may hold: a prefix that stays one JSON string (no " or \), a name whose
 * sequence ("@" + name) fits a sequence name, zones that are zones (not the host's localtime,
 * posixrules, Factory, right/ or posix/). */
static void test_checks_refuse(void) {
    char why[200];
    const char *prefixes[] = {"A\"B", "A\\B", "\""};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        struct sequence_numbering d = orders(NUMBERING_PERIOD_DAY);
        snprintf(d.prefix, sizeof(d.prefix), "%s", prefixes[i]);
        CHECK_EQ_INT(sequence_numbering_check(&d, why, sizeof(why)), LEAF_EINVAL);
        CHECK(strstr(why, "prefix") != NULL);
    }
    const char *zones[] = {"localtime", "posixrules", "Factory", "right/Asia/Shanghai",
                           "posix/Europe/Berlin"};
    for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++) {
        struct sequence_numbering d = orders(NUMBERING_PERIOD_DAY);
        snprintf(d.time_zone, sizeof(d.time_zone), "%s", zones[i]);
        CHECK_EQ_INT(sequence_numbering_check(&d, why, sizeof(why)), LEAF_EINVAL);
    }
    struct sequence_numbering d = orders(NUMBERING_PERIOD_DAY);
    snprintf(d.time_zone, sizeof(d.time_zone), "Etc/UTC");
    CHECK_EQ_INT(sequence_numbering_check(&d, why, sizeof(why)), LEAF_OK);
    memset(d.name, 'n', 120);
    d.name[120] = '\0';
    CHECK_EQ_INT(sequence_numbering_check(&d, why, sizeof(why)), LEAF_OK);
    CHECK_EQ_INT(SEQUENCE_NUMBERING_NAME_MAX, 120); /* a longer one does not fit d.name */
}

static void test_periods_in_values(void) {
    struct sequence_numbering d = orders(NUMBERING_PERIOD_DAY);
    struct tzdata *sh = load("Asia/Shanghai");
    char text[SEQUENCE_NUMBERING_TEXT_MAX];
    int64_t day1 = tzdata_local_day(sh, SHANGHAI_MIDNIGHT - 2000); /* 2026-11-28 */
    int64_t day2 = day1 + 1;
    int64_t p1 = sequence_numbering_period_of(&d, day1),
            p2 = sequence_numbering_period_of(&d, day2);
    int64_t first, last = 0;
    /* a fresh sequence: counter 1 of today */
    CHECK_EQ_INT(sequence_numbering_range(&d, last, p1, 3, &first), LEAF_OK);
    CHECK(first == (p1 + 1) * 1000000 + 1);
    sequence_numbering_format(&d, first, day1, text);
    CHECK_EQ_STR(text, "ORD20261128000001");
    last = first + 2;
    CHECK_EQ_INT(sequence_numbering_range(&d, last, p1, 1, &first), LEAF_OK);
    sequence_numbering_format(&d, first, day1, text);
    CHECK_EQ_STR(text, "ORD20261128000004");
    last = first;
    /* midnight: the counter restarts at 1 of the new day */
    CHECK_EQ_INT(sequence_numbering_range(&d, last, p2, 1, &first), LEAF_OK);
    sequence_numbering_format(&d, first, day2, text);
    CHECK_EQ_STR(text, "ORD20261129000001");
    last = first;
    /* a primary whose clock is still on the old day goes on in the new one, never back */
    CHECK_EQ_INT(sequence_numbering_range(&d, last, p1, 1, &first), LEAF_OK);
    sequence_numbering_format(&d, first, day1, text);
    CHECK_EQ_STR(text, "ORD20261129000002");
    /* the counter's end: refused, never carried into the next day's values */
    last = (p2 + 1) * 1000000 + 999998;
    CHECK_EQ_INT(sequence_numbering_range(&d, last, p2, 1, &first), LEAF_OK);
    CHECK_EQ_INT(sequence_numbering_range(&d, last, p2, 2, &first), LEAF_ERANGE);
    last += 1;
    CHECK_EQ_INT(sequence_numbering_range(&d, last, p2, 1, &first), LEAF_ERANGE);
    /* ... until the next day starts at 1 again */
    CHECK_EQ_INT(sequence_numbering_range(&d, last, p2 + 1, 1, &first), LEAF_OK);
    CHECK_EQ_INT(first % 1000000, 1);
    CHECK_EQ_INT(sequence_numbering_range(&d, last, p2, 0, &first), LEAF_EINVAL);

    /* a month period with a day date: the day is the clock's, never before the month */
    struct sequence_numbering mo = {
        "inv", "INV-", NUMBERING_DATE_YYYYMMDD, 4, NUMBERING_PERIOD_MONTH, "Asia/Shanghai"};
    int64_t pm = sequence_numbering_period_of(&mo, day2);
    CHECK_EQ_INT(sequence_numbering_range(&mo, 0, pm, 1, &first), LEAF_OK);
    sequence_numbering_format(&mo, first, day2, text);
    CHECK_EQ_STR(text, "INV-202611290001");
    sequence_numbering_format(&mo, first, day2 - 40, text); /* a clock far behind */
    CHECK_EQ_STR(text, "INV-202611010001");
    /* year period, yyyy date; never, no date */
    struct sequence_numbering yr = {"y", "Y", NUMBERING_DATE_YYYY, 3, NUMBERING_PERIOD_YEAR, "UTC"};
    CHECK_EQ_INT(
        sequence_numbering_range(&yr, 0, sequence_numbering_period_of(&yr, day2), 1, &first),
        LEAF_OK);
    sequence_numbering_format(&yr, first, day2, text);
    CHECK_EQ_STR(text, "Y2026001");
    struct sequence_numbering nv = {"n",  "N", NUMBERING_DATE_NONE, 8, NUMBERING_PERIOD_NEVER,
                                    "UTC"};
    CHECK_EQ_INT(sequence_numbering_range(&nv, 0, 0, 1, &first), LEAF_OK);
    sequence_numbering_format(&nv, first, day2, text);
    CHECK_EQ_STR(text, "N00000001");
    free(sh);
}

static void test_table_lines(void) {
    struct sequence_numbering d = orders(NUMBERING_PERIOD_DAY), back;
    char line[SEQUENCE_NUMBERING_LINE_MAX];
    size_t n = sequence_numbering_format_line(&d, line, sizeof(line));
    CHECK_EQ_STR(
        line, "name=orders prefix=ORD date=yyyyMMdd width=6 period=day time_zone=Asia/Shanghai\n");
    CHECK_EQ_INT(sequence_numbering_parse_line(line, n - 1, &back), LEAF_OK);
    CHECK_EQ_STR(back.name, d.name);
    CHECK_EQ_STR(back.prefix, d.prefix);
    CHECK_EQ_STR(back.time_zone, d.time_zone);
    CHECK(back.date == d.date && back.period == d.period && back.width == d.width);
    const char *empty = "name=n prefix= date= width=3 period=never time_zone=UTC future=1";
    CHECK_EQ_INT(sequence_numbering_parse_line(empty, strlen(empty), &back), LEAF_OK);
    CHECK_EQ_STR(back.prefix, "");
    const char *bad[] = {"name=n prefix= date= width=3 period=day time_zone=UTC",
                         "name=n prefix= date= width=3 time_zone=UTC",
                         "name=n name=m prefix= date= width=3 period=never time_zone=UTC",
                         "name=n prefix= date= width=x period=never time_zone=UTC"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_EQ_INT(sequence_numbering_parse_line(bad[i], strlen(bad[i]), &back), LEAF_EINVAL);
    }
}

int main(void) {
    TEST(test_table_lines);
    TEST(test_zones_against_libc);
    TEST(test_shanghai_midnight_and_berlin_dst);
    TEST(test_checks);
    TEST(test_checks_refuse);
    TEST(test_periods_in_values);
    return unit_done();
}
