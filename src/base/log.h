#ifndef LEAF_LOG_H
#define LEAF_LOG_H

/*
 * Logging: one line per event in logfmt,
 *   time=2026-11-22T08:00:00.123Z level=info component=http msg="..."
 * or, with leafd.log.format = json, a JSON object with the same fields,
 *   {"time":"2026-11-22T08:00:00.123Z","level":"info","component":"http","msg":"..."}
 * written with a single write(2) so lines from different threads never
 * interleave. Any thread may call it; the level and format are set once at
 * start, before any other thread runs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

enum log_level_e { LEAF_LOG_DEBUG = 0, LEAF_LOG_INFO, LEAF_LOG_WARN, LEAF_LOG_ERROR };

void log_set_level(int level);
/* 1: JSON lines; 0: logfmt (the default). */
void log_set_format(int json);
int log_enabled(int level);
void log_write(int level, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/*
 * The msg of the last error line the calling thread wrote ("" if none). A node
 * that exits non-zero repeats it as its last line, after whatever the shutdown
 * logged, so that the last line names the cause (docs/OPERATIONS.md, "When a
 * node refuses to start").
 */
const char *log_last_error(void);
/*
 * Copies n bytes of a client's or a store's text into dst (room: cap) so it
 * can go into a log line: printable ASCII except quotes kept, anything else
 * '?', cut at cap - 1 bytes, NUL-terminated. Returns the length.
 */
size_t log_safe(const char *s, size_t n, char *dst, size_t cap);

#define log_debug(comp, ...)                                                                       \
    do {                                                                                           \
        if (log_enabled(LEAF_LOG_DEBUG))                                                           \
            log_write(LEAF_LOG_DEBUG, comp, __VA_ARGS__);                                          \
    } while (0)
#define log_info(comp, ...) log_write(LEAF_LOG_INFO, comp, __VA_ARGS__)
#define log_warn(comp, ...) log_write(LEAF_LOG_WARN, comp, __VA_ARGS__)
#define log_error(comp, ...) log_write(LEAF_LOG_ERROR, comp, __VA_ARGS__)

/*
 * Quieting a client library's own log: the ZooKeeper C client's
 * (zk/zk_session.c) and the database threads' (segment/segment_db_conn.c). While a server is down
 * the client writes a warning or error several times a second (about 430,000 lines a day) for an
 * outage leafd rides out. The policy: the first line of an outage passes (it names the cause);
 * later ones are counted, and a summary is written at most once every LOG_QUIET_SUMMARY_MS while
 * they go on; when the session connects again, what was counted since the last summary is reported
 * once and the next outage starts afresh. leafd logs the state changes themselves (connection lost,
 * session established, expired).
 *
 * Pure code with an injected clock (unit-tested in tests/unit/test_zk_core.c). The
 * caller serialises calls (the client's threads share one instance).
 */
#define LOG_QUIET_SUMMARY_MS 30000

struct log_quiet {
    int in_outage;     /* a line passed since the last reset */
    int64_t window_ms; /* when the current summary window began */
    uint64_t counted;  /* lines held back since the window began */
    char last[256];    /* the last line held back */
};

enum log_quiet_action {
    LOG_QUIET_PASS,    /* log this line */
    LOG_QUIET_HOLD,    /* count it, log nothing */
    LOG_QUIET_SUMMARY, /* log a summary: *n lines (this one included), the last in q->last */
};

/* One warning/error line of the client at now_ms. */
enum log_quiet_action log_quiet_line(struct log_quiet *q, int64_t now_ms, const char *line,
                                     uint64_t *n);

/* The session connected: the lines held back since the last summary (0 = none), then a reset. */
uint64_t log_quiet_reset(struct log_quiet *q);

#endif
