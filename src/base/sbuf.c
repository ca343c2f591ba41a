#include "sbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"

#define SBUF_FIRST_CAP 256

void sbuf_init(struct sbuf *b, size_t max) {
    *b = (struct sbuf){NULL, 0, 0, max, 0};
}

void sbuf_free(struct sbuf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = 0;
}

void sbuf_reset(struct sbuf *b) {
    b->len = 0;
    b->failed = 0;
    if (b->data != NULL) {
        b->data[0] = '\0';
    }
}

leaf_status_t sbuf_reserve(struct sbuf *b, size_t extra) {
    if (b->failed) {
        return LEAF_ENOMEM;
    }
    size_t need = b->len + extra + 1; /* + the NUL */
    if (need < b->len || (b->max > 0 && b->len + extra > b->max)) {
        b->failed = 1;
        return LEAF_ENOMEM;
    }
    if (need <= b->cap) {
        return LEAF_OK;
    }
    size_t cap = b->cap ? b->cap : SBUF_FIRST_CAP;
    while (cap < need) {
        cap *= 2;
    }
    if (b->max > 0 && cap > b->max + 1) {
        cap = b->max + 1; /* need fits: len + extra <= max */
    }
    char *p = realloc(b->data, cap);
    if (p == NULL) {
        b->failed = 1;
        return LEAF_ENOMEM;
    }
    b->data = p;
    b->cap = cap;
    return LEAF_OK;
}

void sbuf_append(struct sbuf *b, const void *p, size_t n) {
    if (sbuf_reserve(b, n) != LEAF_OK) {
        return;
    }
    if (n > 0) {
        memcpy(b->data + b->len, p, n);
    }
    b->len += n;
    b->data[b->len] = '\0';
}

void sbuf_puts(struct sbuf *b, const char *s) {
    sbuf_append(b, s, strlen(s));
}

void sbuf_putc(struct sbuf *b, char ch) {
    sbuf_append(b, &ch, 1);
}

void sbuf_vprintf(struct sbuf *b, const char *fmt, va_list ap) {
    va_list again;
    va_copy(again, ap);
    size_t room = b->cap > b->len ? b->cap - b->len : 0;
    int n = vsnprintf(room ? b->data + b->len : NULL, room, fmt, ap);
    if (n < 0) {
        b->failed = 1;
    } else if ((size_t)n < room) {
        if (b->max > 0 && b->len + (size_t)n > b->max) {
            b->data[b->len] = '\0';
            b->failed = 1;
        } else {
            b->len += (size_t)n;
        }
    } else if (sbuf_reserve(b, (size_t)n) == LEAF_OK) {
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, again);
        b->len += (size_t)n;
    }
    va_end(again);
}

void sbuf_printf(struct sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    sbuf_vprintf(b, fmt, ap);
    va_end(ap);
}

void sbuf_put_i64(struct sbuf *b, int64_t v) {
    char tmp[24];
    sbuf_append(b, tmp, num_format_i64(tmp, v));
}

void sbuf_json_str(struct sbuf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    sbuf_putc(b, '"');
    size_t run = 0; /* bytes that need no escaping, appended together */
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch != '"' && ch != '\\') {
            continue;
        }
        sbuf_append(b, s + run, i - run);
        run = i + 1;
        if (ch == '"' || ch == '\\') {
            char esc[2] = {'\\', (char)ch};
            sbuf_append(b, esc, 2);
        } else {
            char esc[6] = {'\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15]};
            sbuf_append(b, esc, 6);
        }
    }
    sbuf_append(b, s + run, n - run);
    sbuf_putc(b, '"');
}

void sbuf_html(struct sbuf *b, const char *s, size_t n) {
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        const char *rep = NULL;
        switch (s[i]) {
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '&': rep = "&amp;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default: continue;
        }
        sbuf_append(b, s + run, i - run);
        sbuf_puts(b, rep);
        run = i + 1;
    }
    sbuf_append(b, s + run, n - run);
}
