#include "log.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int log_level = LEAF_LOG_INFO;
static int log_json; /* leafd.log.format = json */
static const char *const log_level_names[] = {"debug", "info", "warn", "error"};
/* The calling thread's last error line (its msg), for main's last line at a refusal. */
static _Thread_local char log_last[2048];

void log_set_level(int level) {
    log_level = level;
}

void log_set_format(int json) {
    log_json = json;
}

int log_enabled(int level) {
    return level >= log_level;
}

/*
 * Appends s to buf as the inside of a quoted value, logfmt's or JSON's: the
 * two agree on \" and \\; line breaks and tabs become spaces and other
 * control bytes '?', so a line stays one line in both.
 */
static size_t log_escape(char *buf, size_t pos, size_t cap, const char *s) {
    for (; *s && pos + 2 < cap; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') {
            buf[pos++] = '\\';
            buf[pos++] = (char)ch;
        } else if (ch == '\n' || ch == '\r' || ch == '\t') {
            buf[pos++] = ' ';
        } else if (ch < 0x20) {
            buf[pos++] = '?';
        } else {
            buf[pos++] = (char)ch;
        }
    }
    return pos;
}

static void log_vwrite(int level, const char *component, const char *fmt, va_list ap) {
    if (!log_enabled(level)) {
        return;
    }
    char msg[2048], line[4400];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    if (level == LEAF_LOG_ERROR) {
        memcpy(log_last, msg, strlen(msg) + 1);
    }

    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char when[32];
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
    /* The same fields in both formats; a component is a plain word, never escaped. */
    size_t pos = (size_t)snprintf(line, sizeof(line),
                                  log_json ? "{\"time\":\"%s.%03ldZ\",\"level\":\"%s\","
                                             "\"component\":\"%s\",\"msg\":\""
                                           : "time=%s.%03ldZ level=%s component=%s msg=\"",
                                  when, ts.tv_nsec / 1000000, log_level_names[level], component);
    pos = log_escape(line, pos, sizeof(line) - 3, msg);
    line[pos++] = '"';
    if (log_json) {
        line[pos++] = '}';
    }
    line[pos++] = '\n';
    /* One write per line: lines from threads never interleave. */
    ssize_t rc = write(STDERR_FILENO, line, pos);
    (void)rc;
}

void log_write(int level, const char *component, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    log_vwrite(level, component, fmt, ap);
    va_end(ap);
}

const char *log_last_error(void) {
    return log_last;
}

size_t log_safe(const char *s, size_t n, char *dst, size_t cap) {
    size_t k = 0;
    for (size_t i = 0; s != NULL && i < n && k + 1 < cap; i++) {
        unsigned char ch = (unsigned char)s[i];
        int keep = ch >= '!' && ch <= '~' && ch != '\'' && ch != '"';
        dst[k++] = (char)(keep ? ch : '?');
    }
    if (cap > 0) {
        dst[k] = '\0';
    }
    return k;
}

/* ---- quieting a client library's log (log.h) ---- */

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
