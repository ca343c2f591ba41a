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

#endif
