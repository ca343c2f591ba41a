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
