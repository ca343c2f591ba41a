#ifndef LEAF_LOG_QUIET_H
#define LEAF_LOG_QUIET_H

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
#include <stddef.h>
#include <stdint.h>

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
