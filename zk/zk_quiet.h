#ifndef LEAF_ZK_QUIET_H
#define LEAF_ZK_QUIET_H

/*
 * Quieting the ZooKeeper C client's own log. While a server is down the
 * client writes a warning or error several times a second (about 430,000
 * lines a day) for an outage leafd rides out. The policy: the first line of
 * an outage passes (it names the cause); later ones are counted, and a
 * summary is written at most once every ZK_QUIET_SUMMARY_MS while they go on;
 * when the session connects again, what was counted since the last summary
 * is reported once and the next outage starts afresh. leafd logs the state
 * changes themselves (connection lost, session established, expired).
 *
 * Pure code with an injected clock (unit-tested in test_zk_core.c). The
 * caller serialises calls (the client's threads share one instance).
 */
#include <stddef.h>
#include <stdint.h>

#define ZK_QUIET_SUMMARY_MS 30000

struct zk_quiet {
    int in_outage;     /* a line passed since the last reset */
    int64_t window_ms; /* when the current summary window began */
    uint64_t counted;  /* lines held back since the window began */
    char last[256];    /* the last line held back */
};

enum zk_quiet_action {
    ZK_QUIET_PASS,    /* log this line */
    ZK_QUIET_HOLD,    /* count it, log nothing */
    ZK_QUIET_SUMMARY, /* log a summary: *n lines (this one included), the last in q->last */
};

/* One warning/error line of the client at now_ms. */
enum zk_quiet_action zk_quiet_line(struct zk_quiet *q, int64_t now_ms, const char *line,
                                   uint64_t *n);

/* The session connected: the lines held back since the last summary (0 = none), then a reset. */
uint64_t zk_quiet_reset(struct zk_quiet *q);

#endif
