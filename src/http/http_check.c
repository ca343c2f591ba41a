#include "http_check.h"

#include <string.h>
#include <strings.h>

static int is_blank(char c) {
    return c == ' ' || c == '\t';
}

/* Narrows [*v, *v + *len) to its content without the blanks (OWS) around it. */
static void trim(const char **v, size_t *len) {
    while (*len > 0 && is_blank(**v)) {
        (*v)++;
        (*len)--;
    }
    while (*len > 0 && is_blank((*v)[*len - 1])) {
        (*len)--;
    }
}

/* One pass, no library call: header names are short, and every request has a few. */
int http_check_name_has_blank(const char *name, size_t len) {
    for (size_t i = 0; i < len; i++) {
        if (is_blank(name[i])) {
            return 1;
        }
    }
    return 0;
}

/* RFC 3986 reg-name, IP-literal and port characters: unreserved, sub-delims, '%', ':', '[', ']'.
 * A table rather than strchr() over the list: checked for every byte of every Host. */
static const unsigned char host_chars[256] = {
    ['a' ... 'z'] = 1, ['A' ... 'Z'] = 1, ['0' ... '9'] = 1, ['-'] = 1, ['.'] = 1,  ['_'] = 1,
    ['~'] = 1,         ['!'] = 1,         ['$'] = 1,         ['&'] = 1, ['\''] = 1, ['('] = 1,
    [')'] = 1,         ['*'] = 1,         ['+'] = 1,         [','] = 1, [';'] = 1,  ['='] = 1,
    ['%'] = 1,         [':'] = 1,         ['['] = 1,         [']'] = 1,
};

static int is_host_char(unsigned char c) {
    return host_chars[c];
}

int http_check_host(const char *value, size_t len) {
    trim(&value, &len);
    for (size_t i = 0; i < len; i++) {
        if (!is_host_char((unsigned char)value[i])) {
            return 0;
        }
    }
    return 1;
}

int http_check_te_chunked_only(const char *value, size_t len) {
    size_t i = 0;
    while (i <= len) {
        const char *comma = memchr(value + i, ',', len - i);
        size_t end = comma ? (size_t)(comma - value) : len;
        const char *tok = value + i;
        size_t n = end - i;
        trim(&tok, &n);
        /* Empty list elements are allowed (RFC 9110 5.6.1); parameters are not for chunked. */
        if (n > 0 && !(n == 7 && strncasecmp(tok, "chunked", 7) == 0)) {
            return 0;
        }
        i = end + 1;
    }
    return 1;
}

int http_check_expect_continue(const char *value, size_t len) {
    trim(&value, &len);
    return len == 12 && strncasecmp(value, "100-continue", 12) == 0;
}

int http_check_folded(const char *at, const char *start, int tail_nl) {
    const char *p = at;
    while (p > start && is_blank(p[-1])) {
        p--;
    }
    return p > start ? p[-1] == '\n' : tail_nl;
}

int http_check_tail_nl(const char *data, size_t len, int tail_nl) {
    while (len > 0 && is_blank(data[len - 1])) {
        len--;
    }
    return len > 0 ? data[len - 1] == '\n' : tail_nl;
}

int http_check_json_type(const char *value, size_t len) {
    static const char json[] = "application/json";
    size_t n = sizeof(json) - 1;
    trim(&value, &len);
    if (len < n || strncasecmp(value, json, n) != 0) {
        return 0;
    }
    return len == n || is_blank(value[n]) || value[n] == ';';
}

int http_check_cross_site(const char *value, size_t len) {
    static const char cross[] = "cross-site";
    trim(&value, &len);
    return len == sizeof(cross) - 1 && strncasecmp(value, cross, len) == 0;
}

/* Splits "host[:port]" or "[v6]:port"; the port defaults to dflt. 0 when malformed. */
static int split_authority(const char *a, size_t len, const char **host, size_t *host_len,
                           long *port, long dflt) {
    const char *colon = NULL;
    if (len > 0 && a[0] == '[') {
        const char *end = memchr(a, ']', len);
        if (end == NULL) {
            return 0;
        }
        colon = end + 1 < a + len ? end + 1 : NULL;
        if (colon != NULL && *colon != ':') {
            return 0;
        }
    } else {
        for (size_t i = len; i > 0; i--) {
            if (a[i - 1] == ':') {
                colon = a + i - 1;
                break;
            }
        }
    }
    *host = a;
    *host_len = colon != NULL ? (size_t)(colon - a) : len;
    *port = dflt;
    if (colon != NULL) {
        const char *d = colon + 1, *end = a + len;
        if (d == end || end - d > 5) {
            return 0;
        }
        *port = 0;
        for (; d < end; d++) {
            if (*d < '0' || *d > '9') {
                return 0;
            }
            *port = *port * 10 + (*d - '0');
        }
    }
    return *host_len > 0 && *port > 0 && *port <= 65535;
}

int http_check_same_origin(const char *origin, size_t olen, const char *authority, size_t alen) {
    long dflt;
    trim(&origin, &olen);
    trim(&authority, &alen);
    if (olen > 7 && strncasecmp(origin, "http://", 7) == 0) {
        dflt = 80;
        origin += 7;
        olen -= 7;
    } else if (olen > 8 && strncasecmp(origin, "https://", 8) == 0) {
        dflt = 443;
        origin += 8;
        olen -= 8;
    } else {
        return 0; /* "null" (a sandboxed or file: page), or another scheme */
    }
    const char *oh, *ah;
    size_t ohl, ahl;
    long op, ap;
    if (memchr(origin, '/', olen) != NULL || memchr(origin, '@', olen) != NULL ||
        !split_authority(origin, olen, &oh, &ohl, &op, dflt) ||
        !split_authority(authority, alen, &ah, &ahl, &ap, dflt)) {
        return 0;
    }
    return ohl == ahl && strncasecmp(oh, ah, ohl) == 0 && op == ap;
}
