#ifndef LEAF_SBUF_H
#define LEAF_SBUF_H

/*
 * A growable byte buffer, as Redis's sds: every response, page and scrape is
 * built in one, so text never gets cut at a fixed size. (libc only, pure.)
 *
 * Errors are sticky: when an allocation fails (or max would be exceeded),
 * b->failed is set, later appends do nothing, and the builder checks once at
 * the end. The contents are always a valid prefix of what was appended; a
 * NUL is kept after the last byte, so b->data is a C string once non-empty.
 *
 * Ownership: whoever embeds the struct; not thread-safe.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

struct sbuf {
    char *data;
    size_t len, cap;
    size_t max; /* 0 = no limit; else appends that would pass it fail, and cap stays <= max + 1 */
    int failed; /* an append failed (out of memory or over max) */
};

#define SBUF_INIT                                                                                  \
    { NULL, 0, 0, 0, 0 }

void sbuf_init(struct sbuf *b, size_t max);
void sbuf_free(struct sbuf *b);

/* Empties the buffer, keeping its memory; clears failed. */
void sbuf_reset(struct sbuf *b);

/* Makes room for extra more bytes. LEAF_OK, or LEAF_ENOMEM (and failed set). */
leaf_status_t sbuf_reserve(struct sbuf *b, size_t extra);

void sbuf_append(struct sbuf *b, const void *p, size_t n);
void sbuf_puts(struct sbuf *b, const char *s);
void sbuf_putc(struct sbuf *b, char ch);
void sbuf_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sbuf_vprintf(struct sbuf *b, const char *fmt, va_list ap);
void sbuf_put_i64(struct sbuf *b, int64_t v);

/* s (n bytes) as a quoted JSON string: quotes, backslashes and control bytes escaped. */
void sbuf_json_str(struct sbuf *b, const char *s, size_t n);

/* s (n bytes) escaped for HTML text and attribute values (< > & " '). */
void sbuf_html(struct sbuf *b, const char *s, size_t n);

#endif
