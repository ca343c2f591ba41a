/* The head of an HTTP/1.x answer (client_head.h). */
#include "client_head.h"

#include <string.h>
#include <strings.h>

/* A Content-Length value: blanks around 1 to 19 digits, at most max: 0, or -1. */
static int head_length(const char *s, size_t n, size_t max, size_t *out) {
    size_t i = 0, v = 0, digits = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t')) {
        i++;
    }
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits++) {
        /* Compared before it grows (v * 10 + d <= max), so no arithmetic here can wrap. */
        size_t d = (size_t)(s[i] - '0');
        if (digits == 19 || d > max || v > (max - d) / 10) {
            return -1;
        }
        v = v * 10 + d;
    }
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) {
        i++;
    }
    if (digits == 0 || i != n) {
        return -1;
    }
    *out = v;
    return 0;
}

/* The status line "HTTP/1.x NNN ...": 0, or -1. */
static int head_status(const char *s, size_t n, struct client_head *h) {
    if (n < 12 || memcmp(s, "HTTP/1.", 7) != 0 || (s[7] != '0' && s[7] != '1') || s[8] != ' ') {
        return -1;
    }
    int v = 0;
    for (int i = 9; i < 12; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return -1;
        }
        v = v * 10 + (s[i] - '0');
    }
    if (v < 100 || v > 599 || (n > 12 && s[12] != ' ' && s[12] != '\r')) {
        return -1;
    }
    h->status = v;
    h->close_after = s[7] == '0';
    return 0;
}

/* The Location value v (n bytes, at offset off of the head), blanks and a CR trimmed. */
static void head_location(const char *v, size_t n, size_t off, struct client_head *h) {
    while (n > 0 && (*v == ' ' || *v == '\t')) {
        v++;
        off++;
        n--;
    }
    while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r')) {
        n--;
    }
    h->location_off = off;
    h->location_len = n;
}

int client_head_parse(const char *head, size_t len, size_t max_body, struct client_head *h) {
    const char *end = head + len, *eol = memchr(head, '\n', len);
    if (eol == NULL || head_status(head, (size_t)(eol - head), h) != 0) {
        return -1;
    }
    int have_len = 0;
    h->location_off = h->location_len = 0;
    for (const char *p = eol + 1; p < end; p = eol + 1) {
        eol = memchr(p, '\n', (size_t)(end - p));
        size_t n = (size_t)((eol ? eol : end) - p);
        size_t v;
        if (n >= 15 && strncasecmp(p, "Content-Length:", 15) == 0) {
            if (head_length(p + 15, n - 15, max_body, &v) != 0 || (have_len && v != h->body_len)) {
                return -1;
            }
            h->body_len = v;
            have_len = 1;
        } else if (n >= 18 && strncasecmp(p, "Transfer-Encoding:", 18) == 0) {
            return -1;
        } else if (n > 11 && strncasecmp(p, "Connection:", 11) == 0 && memmem(p, n, "close", 5)) {
            h->close_after = 1;
        } else if (n > 9 && strncasecmp(p, "Location:", 9) == 0) {
            head_location(p + 9, n - 9, (size_t)(p + 9 - head), h);
        }
        if (eol == NULL) {
            break;
        }
    }
    return have_len ? 0 : -1;
}
