#include "log_quiet.h"

#include <stdio.h>
#include <string.h>

static void quiet_keep(struct log_quiet *q, const char *line) {
    snprintf(q->last, sizeof(q->last), "%.*s", (int)strcspn(line, "\n"), line);
}

enum log_quiet_action log_quiet_line(struct log_quiet *q, int64_t now_ms, const char *line,
                                     uint64_t *n) {
    *n = 0;
    if (!q->in_outage) {
        q->in_outage = 1;
        q->window_ms = now_ms;
        q->counted = 0;
        return LOG_QUIET_PASS;
    }
    quiet_keep(q, line);
    q->counted++;
    /* A clock step backwards only shortens nothing: the window restarts. */
    if (now_ms < q->window_ms) {
        q->window_ms = now_ms;
    }
    if (now_ms - q->window_ms < LOG_QUIET_SUMMARY_MS) {
        return LOG_QUIET_HOLD;
    }
    *n = q->counted;
    q->counted = 0;
    q->window_ms = now_ms;
    return LOG_QUIET_SUMMARY;
}

uint64_t log_quiet_reset(struct log_quiet *q) {
    uint64_t n = q->counted;
    q->in_outage = 0;
    q->counted = 0;
    return n;
}
