#include "resp_codec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num.h"

/*
 * Where the parser is. A multibulk command is "*N\r\n" followed by N
 * elements "$L\r\n" + L bytes + "\r\n"; anything not starting with '*' is an
 * inline command, one line split on blanks.
 */
enum resp_state {
    RESP_START,     /* between commands: nothing buffered */
    RESP_COUNT,     /* the N of "*N\r\n" */
    RESP_BULK_TYPE, /* the '$' of an element */
    RESP_BULK_LEN,  /* the L of "$L\r\n" */
    RESP_BULK_DATA, /* the L payload bytes */
    RESP_BULK_CR,   /* the CRLF after them */
    RESP_BULK_LF,
    RESP_INLINE, /* an inline line, up to its LF */
    RESP_ERROR   /* a protocol error was returned; sticky */
};

/* The error texts are Redis's (networking.c), where Redis has one. */
#define RESP_ERR_MBULK "Protocol error: invalid multibulk length"
#define RESP_ERR_BULK "Protocol error: invalid bulk length"
#define RESP_ERR_INLINE "Protocol error: too big inline request"
#define RESP_ERR_QUOTES "Protocol error: unbalanced quotes in request"
/* Redis skips the two bytes after a payload unchecked; a wrong pair means a
 * length that does not match its payload, so it is refused here. */
#define RESP_ERR_CRLF "Protocol error: expected CRLF after bulk string"
#define RESP_ERR_NOMEM "out of memory reading the request"
#define RESP_ERR_BIG "Protocol error: command too large"

/* Storage above these sizes is freed when the next command starts, so one
 * large command does not pin its memory for the life of the connection. */
#define RESP_KEEP_BYTES (16u << 10)
#define RESP_KEEP_ARGS 64

/* ---- storage ------------------------------------------------------------- */

static void resp_storage_free(struct resp_parser *p) {
    free(p->buf);
    free(p->argv);
    free(p->argvlen);
    p->buf = NULL;
    p->argv = NULL;
    p->argvlen = NULL;
    p->len = p->cap = 0;
    p->argc = p->args_cap = 0;
}

/* Room for extra more bytes after p->len. */
static leaf_status_t resp_buf_reserve(struct resp_parser *p, size_t extra) {
    size_t need = p->len + extra;
    if (need <= p->cap) {
        return LEAF_OK;
    }
    size_t cap = p->cap ? p->cap : 256;
    while (cap < need) {
        cap *= 2;
    }
    char *buf = realloc(p->buf, cap);
    if (buf == NULL) {
        return LEAF_ENOMEM;
    }
    p->buf = buf;
    p->cap = cap;
    return LEAF_OK;
}

/* Room for n arguments (n <= RESP_MAX_ARGS). */
static leaf_status_t resp_args_reserve(struct resp_parser *p, int n) {
    if (n <= p->args_cap) {
        return LEAF_OK;
    }
    int cap = p->args_cap ? p->args_cap : 8;
    while (cap < n) {
        cap *= 2;
    }
    const char **argv = realloc(p->argv, (size_t)cap * sizeof(*argv));
    if (argv == NULL) {
        return LEAF_ENOMEM;
    }
    p->argv = argv;
    size_t *argvlen = realloc(p->argvlen, (size_t)cap * sizeof(*argvlen));
    if (argvlen == NULL) {
        return LEAF_ENOMEM;
    }
    p->argvlen = argvlen;
    p->args_cap = cap;
    return LEAF_OK;
}

void resp_parser_init(struct resp_parser *p) {
    memset(p, 0, sizeof(*p));
    p->state = RESP_START;
}

void resp_parser_free(struct resp_parser *p) {
    resp_storage_free(p);
    resp_parser_init(p);
}

void resp_parser_release_idle(struct resp_parser *p) {
    if (!resp_parser_in_command(p)) {
        resp_storage_free(p);
    }
}

int resp_parser_in_command(const struct resp_parser *p) {
    return p->state != RESP_START && p->state != RESP_ERROR;
}

/* ---- parser -------------------------------------------------------------- */

static leaf_status_t resp_fail(struct resp_parser *p, leaf_status_t rc, const char *msg) {
    p->state = RESP_ERROR;
    p->err_status = rc;
    p->err = msg;
    return rc;
}

/* Redis's wording; the byte is shown as it came, except those a line cannot hold. */
static leaf_status_t resp_fail_type(struct resp_parser *p, char c) {
    if (c == '\0' || c == '\r' || c == '\n') {
        c = ' ';
    }
    snprintf(p->err_buf, sizeof(p->err_buf), "Protocol error: expected '$', got '%c'", c);
    return resp_fail(p, LEAF_EINVAL, p->err_buf);
}

/*
 * A length as Redis's string2ll reads it: "0", or an optional '-' and digits
 * without a leading zero; no '+', no spaces, no "-0", and it must fit in
 * int64_t. "$04" is an error in Redis, so it is one here.
 */
static leaf_status_t resp_parse_len(const char *s, int n, int64_t *out) {
    int neg = n > 0 && s[0] == '-';
    if (n == 1 && s[0] == '0') {
        *out = 0;
        return LEAF_OK;
    }
    if (n <= neg || s[neg] < '1' || s[neg] > '9') {
        return LEAF_EINVAL;
    }
    return num_parse_i64(s, (size_t)n, out);
}

/*
 * One byte of a length line. LEAF_OK when the line is complete, LEAF_EAGAIN
 * for more, LEAF_EINVAL when it can no longer become a valid line: too long
 * for any number, or ended by a bare LF or by a CR not followed by LF.
 */
static leaf_status_t resp_line_byte(struct resp_parser *p, char c) {
    if (p->line_cr) {
        p->line_cr = 0;
        return c == '\n' ? LEAF_OK : LEAF_EINVAL;
    }
    if (c == '\r') {
        p->line_cr = 1;
        return LEAF_EAGAIN;
    }
    if (c == '\n' || p->line_len == RESP_LINE_MAX) {
        return LEAF_EINVAL;
    }
    p->line[p->line_len++] = c;
    return LEAF_EAGAIN;
}

static void resp_line_start(struct resp_parser *p, enum resp_state next) {
    p->line_len = 0;
    p->line_cr = 0;
    p->state = next;
}

void resp_parser_set_max(struct resp_parser *p, size_t max) {
    p->max_command = max;
}

/* 1 when a command of args arguments holding bytes bytes is over the set limit. */
static int resp_too_big(const struct resp_parser *p, size_t args, size_t bytes) {
    return p->max_command != 0 &&
           (args > p->max_command / RESP_ARG_COST || bytes > p->max_command - args * RESP_ARG_COST);
}

/* "*N\r\n" is complete. N <= 0 is skipped, as Redis skips "*-1\r\n" and "*0\r\n". */
static leaf_status_t resp_count_done(struct resp_parser *p) {
    int64_t n;
    if (resp_parse_len(p->line, p->line_len, &n) != LEAF_OK || n > RESP_MAX_ARGS) {
        return resp_fail(p, LEAF_EINVAL, RESP_ERR_MBULK);
    }
    if (n <= 0) {
        p->state = RESP_START;
        return LEAF_EAGAIN;
    }
    if (resp_too_big(p, (size_t)n, 0)) {
        return resp_fail(p, LEAF_EINVAL, RESP_ERR_BIG);
    }
    if (resp_args_reserve(p, (int)n) != LEAF_OK) {
        return resp_fail(p, LEAF_ENOMEM, RESP_ERR_NOMEM);
    }
    p->args_left = (int)n;
    p->state = RESP_BULK_TYPE;
    return LEAF_EAGAIN;
}

/* "$L\r\n" is complete: the length is checked before any payload arrives. */
static leaf_status_t resp_bulk_len_done(struct resp_parser *p) {
    int64_t n;
    if (resp_parse_len(p->line, p->line_len, &n) != LEAF_OK || n < 0 || n > RESP_MAX_BULK) {
        return resp_fail(p, LEAF_EINVAL, RESP_ERR_BULK);
    }
    if (resp_too_big(p, (size_t)p->argc + (size_t)p->args_left, p->len + (size_t)n + 1)) {
        return resp_fail(p, LEAF_EINVAL, RESP_ERR_BIG);
    }
    if (resp_buf_reserve(p, (size_t)n + 1) != LEAF_OK) {
        return resp_fail(p, LEAF_ENOMEM, RESP_ERR_NOMEM);
    }
    p->argvlen[p->argc] = (size_t)n;
    p->bulk_left = (size_t)n;
    p->state = n > 0 ? RESP_BULK_DATA : RESP_BULK_CR;
    return LEAF_EAGAIN;
}

/* An element is complete; LEAF_OK when it was the command's last. */
static leaf_status_t resp_arg_done(struct resp_parser *p) {
    size_t n = p->argvlen[p->argc];
    p->buf[p->len + n] = '\0';
    p->len += n + 1;
    p->argc++;
    if (--p->args_left > 0) {
        p->state = RESP_BULK_TYPE;
        return LEAF_EAGAIN;
    }
    p->state = RESP_START;
    return LEAF_OK;
}

/* One byte of the multibulk framing (everything but the payloads). */
static leaf_status_t resp_frame_byte(struct resp_parser *p, char c) {
    leaf_status_t rc;
    switch (p->state) {
    case RESP_COUNT:
        rc = resp_line_byte(p, c);
        if (rc == LEAF_EINVAL) {
            return resp_fail(p, LEAF_EINVAL, RESP_ERR_MBULK);
        }
        return rc == LEAF_OK ? resp_count_done(p) : LEAF_EAGAIN;
    case RESP_BULK_TYPE:
        if (c != '$') {
            return resp_fail_type(p, c); /* nested arrays, integers, ... */
        }
        resp_line_start(p, RESP_BULK_LEN);
        return LEAF_EAGAIN;
    case RESP_BULK_LEN:
        rc = resp_line_byte(p, c);
        if (rc == LEAF_EINVAL) {
            return resp_fail(p, LEAF_EINVAL, RESP_ERR_BULK);
        }
        return rc == LEAF_OK ? resp_bulk_len_done(p) : LEAF_EAGAIN;
    case RESP_BULK_CR:
        if (c != '\r') {
            return resp_fail(p, LEAF_EINVAL, RESP_ERR_CRLF);
        }
        p->state = RESP_BULK_LF;
        return LEAF_EAGAIN;
    case RESP_BULK_LF:
        if (c != '\n') {
            return resp_fail(p, LEAF_EINVAL, RESP_ERR_CRLF);
        }
        return resp_arg_done(p);
    default: return resp_fail(p, LEAF_EINVAL, "Protocol error: parser state");
    }
}

static void resp_bulk_data(struct resp_parser *p, const char *data, size_t len, size_t *pos) {
    size_t take = len - *pos < p->bulk_left ? len - *pos : p->bulk_left;
    size_t at = p->len + (p->argvlen[p->argc] - p->bulk_left);
    memcpy(p->buf + at, data + *pos, take);
    *pos += take;
    p->bulk_left -= take;
    if (p->bulk_left == 0) {
        p->state = RESP_BULK_CR;
    }
}

/* ---- inline commands ----------------------------------------------------- */

/* isspace() in the C locale, which Redis's sdssplitargs uses between arguments. */
static int resp_is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static int resp_hex(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') {
        return (c | 0x20) - 'a' + 10;
    }
    return -1;
}

static char resp_unescape(char c) {
    switch (c) {
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'b': return '\b';
    case 'a': return '\a';
    default: return c; /* \\ \" \' and any other byte stand for themselves */
    }
}

/*
 * Byte i of the line, or NUL past its end. Redis splits the line as a C
 * string, so a NUL byte ends it there; reading through this gives the same.
 */
#define RESP_AT(s, n, i) ((i) < (n) ? (s)[i] : '\0')

/*
 * Copies the argument at s[*r] to s[*w] with quotes removed and escapes
 * decoded, by Redis's rules (sdssplitargs): "..." takes \n \r \t \b \a \xHH
 * and \<any byte>, '...' takes \', and a closing quote must be followed by a
 * blank or the end. In place: every byte written consumed at least one, so
 * the writer never passes the reader. 0, or -1 for unbalanced quotes.
 */
static int resp_inline_arg(char *s, size_t n, size_t *r, size_t *w) {
    char quote = 0;
    for (;;) {
        char c = RESP_AT(s, n, *r), next = RESP_AT(s, n, *r + 1);
        if (quote == 0) {
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\0') {
                *r += c != '\0';
                return 0;
            }
            if (c == '"' || c == '\'') {
                quote = c; /* a quote opens even inside a word, as in Redis */
            } else {
                s[(*w)++] = c;
            }
            (*r)++;
        } else if (c == '\0') {
            return -1;
        } else if (c == quote) {
            if (next != '\0' && !resp_is_blank(next)) {
                return -1;
            }
            (*r)++;
            return 0;
        } else if (quote == '"' && c == '\\' && next == 'x' &&
                   resp_hex(RESP_AT(s, n, *r + 2)) >= 0 && resp_hex(RESP_AT(s, n, *r + 3)) >= 0) {
            s[(*w)++] = (char)(resp_hex(s[*r + 2]) * 16 + resp_hex(s[*r + 3]));
            *r += 4;
        } else if (c == '\\' &&
                   ((quote == '"' && next != '\0') || (quote == '\'' && next == '\''))) {
            s[(*w)++] = resp_unescape(next); /* in '...' next is \' */
            *r += 2;
        } else {
            s[(*w)++] = c;
            (*r)++;
        }
    }
}

/* Splits the n-byte line in p->buf into arguments, in place. */
static leaf_status_t resp_inline_split(struct resp_parser *p, size_t n) {
    char *s = p->buf;
    size_t r = 0, w = 0;
    for (;;) {
        while (r < n && s[r] != '\0' && resp_is_blank(s[r])) {
            r++;
        }
        if (RESP_AT(s, n, r) == '\0') {
            break;
        }
        if (p->argc == RESP_MAX_ARGS) {
            return resp_fail(p, LEAF_EINVAL, RESP_ERR_INLINE);
        }
        if (resp_args_reserve(p, p->argc + 1) != LEAF_OK) {
            return resp_fail(p, LEAF_ENOMEM, RESP_ERR_NOMEM);
        }
        size_t start = w;
        if (resp_inline_arg(s, n, &r, &w) != 0) {
            return resp_fail(p, LEAF_EINVAL, RESP_ERR_QUOTES);
        }
        p->argvlen[p->argc++] = w - start;
        s[w++] = '\0'; /* w <= n here, and the buffer holds n + 1 bytes */
    }
    p->len = w;
    p->state = RESP_START;
    return p->argc > 0 ? LEAF_OK : LEAF_EAGAIN; /* a blank line is skipped */
}

/*
 * Buffers the line up to its LF (CRLF or a bare LF ends it, as in Redis),
 * then splits it. The limit counts the line without its CR, and is enforced
 * as soon as the buffered part is over it, LF or not.
 */
static leaf_status_t resp_inline(struct resp_parser *p, const char *data, size_t len, size_t *pos) {
    const char *s = data + *pos;
    const char *lf = memchr(s, '\n', len - *pos);
    size_t take = lf != NULL ? (size_t)(lf - s) : len - *pos;
    size_t line = p->len + take;
    int cr_last = take > 0 ? s[take - 1] == '\r' : p->len > 0 && p->buf[p->len - 1] == '\r';
    size_t content = line - (size_t)cr_last;

    if (content > RESP_MAX_INLINE) {
        return resp_fail(p, LEAF_EINVAL, RESP_ERR_INLINE);
    }
    if (resp_too_big(p, 1, content)) {
        return resp_fail(p, LEAF_EINVAL, RESP_ERR_BIG);
    }
    if (resp_buf_reserve(p, take + 1) != LEAF_OK) {
        return resp_fail(p, LEAF_ENOMEM, RESP_ERR_NOMEM);
    }
    memcpy(p->buf + p->len, s, take);
    p->len = line;
    *pos += take;
    if (lf == NULL) {
        return LEAF_EAGAIN;
    }
    (*pos)++;
    return resp_inline_split(p, content);
}

/* ---- the entry point ----------------------------------------------------- */

/* The first byte of a command: '*' starts a multibulk one, anything else an inline one. */
static void resp_begin(struct resp_parser *p, const char *data, size_t *pos) {
    if (p->cap > RESP_KEEP_BYTES || p->args_cap > RESP_KEEP_ARGS) {
        resp_storage_free(p);
    }
    p->len = 0;
    p->argc = 0;
    if (data[*pos] == '*') {
        (*pos)++;
        resp_line_start(p, RESP_COUNT);
    } else {
        p->state = RESP_INLINE;
    }
}

/*
 * A length of at most max_digits digits, the whole line "[1-9][0-9]*\r\n" or
 * "0\r\n", read from s[0..n). Returns the bytes of the line, or 0 when the
 * line is anything else: incomplete, negative, too long, malformed (the byte
 * machine then reads it, and words any error).
 */
static size_t resp_fast_len(const char *s, size_t n, size_t max_digits, size_t *out) {
    size_t v = 0, d = 0;
    if (n < 3 || n - 2 < max_digits) {
        max_digits = n < 3 ? 0 : n - 2; /* room for the digits and the CRLF */
    }
    for (; d < max_digits && (unsigned char)(s[d] - '0') <= 9; d++) {
        v = v * 10 + (size_t)(s[d] - '0');
    }
    if (d == 0 || (s[0] == '0' && d > 1) || s[d] != '\r' || s[d + 1] != '\n') {
        return 0;
    }
    *out = v;
    return d + 2;
}

/*
 * The common case in one pass: a whole multibulk command of well-formed
 * elements already in data[*pos..len). Takes it as the byte machine would,
 * into the same storage, and returns LEAF_OK; returns LEAF_EAGAIN, having
 * consumed nothing, for anything else (a cut frame, an inline command, any
 * error), which the byte machine then reads from the same first byte. So the
 * result of resp_parse() does not depend on which path took a command.
 */
static leaf_status_t resp_fast(struct resp_parser *p, const char *data, size_t len, size_t *pos) {
    const char *s = data + *pos;
    size_t n = len - *pos, at, count, used;
    if (n < 4 || s[0] != '*' || (used = resp_fast_len(s + 1, n - 1, 4, &count)) == 0 ||
        count == 0 || count > RESP_MAX_ARGS || resp_too_big(p, count, 0)) {
        return LEAF_EAGAIN;
    }
    at = 1 + used;
    if (p->cap > RESP_KEEP_BYTES || p->args_cap > RESP_KEEP_ARGS) {
        resp_storage_free(p);
    }
    p->len = 0;
    p->argc = 0;
    if (resp_args_reserve(p, (int)count) != LEAF_OK) {
        return LEAF_EAGAIN;
    }
    for (size_t i = 0; i < count; i++) {
        size_t blen;
        if (at >= n || s[at] != '$' ||
            (used = resp_fast_len(s + at + 1, n - at - 1, 5, &blen)) == 0 || blen > RESP_MAX_BULK ||
            n - at - 1 - used < blen + 2 || resp_too_big(p, count, p->len + blen + 1)) {
            goto slow;
        }
        at += 1 + used;
        if (s[at + blen] != '\r' || s[at + blen + 1] != '\n' ||
            resp_buf_reserve(p, blen + 1) != LEAF_OK) {
            goto slow;
        }
        memcpy(p->buf + p->len, s + at, blen);
        p->buf[p->len + blen] = '\0';
        p->argvlen[p->argc++] = blen;
        p->len += blen + 1;
        at += blen + 2;
    }
    *pos += at;
    p->state = RESP_START;
    return LEAF_OK;
slow:
    p->len = 0;
    p->argc = 0;
    return LEAF_EAGAIN;
}

static void resp_cmd_fill(struct resp_parser *p, struct resp_cmd *cmd) {
    size_t off = 0;
    for (int i = 0; i < p->argc; i++) {
        p->argv[i] = p->buf + off;
        off += p->argvlen[i] + 1;
    }
    cmd->argc = p->argc;
    cmd->argv = p->argv;
    cmd->argvlen = p->argvlen;
}

leaf_status_t resp_parse(struct resp_parser *p, const char *data, size_t len, size_t *used,
                         struct resp_cmd *cmd, const char **err) {
    size_t pos = 0;
    leaf_status_t rc = LEAF_EAGAIN;

    while (pos < len && rc == LEAF_EAGAIN && p->state != RESP_ERROR) {
        switch (p->state) {
        case RESP_START:
            rc = resp_fast(p, data, len, &pos);
            if (rc == LEAF_EAGAIN) {
                resp_begin(p, data, &pos);
            }
            break;
        case RESP_INLINE: rc = resp_inline(p, data, len, &pos); break;
        case RESP_BULK_DATA: resp_bulk_data(p, data, len, &pos); break;
        default: rc = resp_frame_byte(p, data[pos++]); break;
        }
    }
    *used = pos;
    if (p->state == RESP_ERROR) {
        *err = p->err;
        return p->err_status;
    }
    if (rc == LEAF_OK) {
        resp_cmd_fill(p, cmd);
    }
    return rc;
}

/* A length line "<c><digits>\r\n" at data[*at..len), its value in *n (at most max); 0 when
 * it is not one. */
static int peek_line(const char *data, size_t len, size_t *at, char c, size_t max, size_t *n) {
    size_t i = *at, v = 0;
    if (i >= len || data[i] != c) {
        return 0;
    }
    for (i++; i < len && data[i] >= '0' && data[i] <= '9' && i - *at <= 9; i++) {
        v = v * 10 + (size_t)(data[i] - '0');
    }
    if (i == *at + 1 || (data[*at + 1] == '0' && i > *at + 2) || i + 1 >= len || data[i] != '\r' ||
        data[i + 1] != '\n' || v > max) {
        return 0; /* no digits, a leading zero (refused by resp_parse_len), no CRLF, too big */
    }
    *at = i + 2;
    *n = v;
    return 1;
}

size_t resp_peek(const char *data, size_t len, const char **argv, size_t *argvlen, int max,
                 int *argc) {
    size_t at = 0, n = 0;
    if (max < 1 || !peek_line(data, len, &at, '*', (size_t)max, &n) || n < 1) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        size_t a;
        if (!peek_line(data, len, &at, '$', len, &a) || a + 2 > len - at || data[at + a] != '\r' ||
            data[at + a + 1] != '\n') {
            return 0;
        }
        argv[i] = data + at;
        argvlen[i] = a;
        at += a + 2;
    }
    *argc = (int)n;
    return at;
}

int resp_arg_is(const struct resp_cmd *c, int i, const char *lower) {
    if (i < 0 || i >= c->argc || c->argvlen[i] != strlen(lower)) {
        return 0;
    }
    for (size_t j = 0; j < c->argvlen[i]; j++) {
        char ch = c->argv[i][j];
        if (ch >= 'A' && ch <= 'Z') {
            ch = (char)(ch + ('a' - 'A'));
        }
        if (ch != lower[j]) {
            return 0;
        }
    }
    return 1;
}

/* ---- reply writer -------------------------------------------------------- */

/* prefix, v in decimal and CRLF in one append: the shape of every header. */
static void resp_put_header(struct sbuf *b, char prefix, int64_t v) {
    char tmp[32];
    size_t n = 0;
    tmp[n++] = prefix;
    n += num_format_i64(tmp + n, v);
    tmp[n++] = '\r';
    tmp[n++] = '\n';
    sbuf_append(b, tmp, n);
}

/* A line cannot hold CR or LF; Redis turns them into spaces too. */
static void resp_blank_crlf(struct sbuf *b, size_t from) {
    for (size_t i = from; i < b->len; i++) {
        if (b->data[i] == '\r' || b->data[i] == '\n') {
            b->data[i] = ' ';
        }
    }
}

static void resp_put_line(struct sbuf *b, char prefix, const char *s) {
    size_t from = b->len + 1;
    sbuf_putc(b, prefix);
    sbuf_puts(b, s);
    resp_blank_crlf(b, from);
    sbuf_append(b, "\r\n", 2);
}

void resp_reply_simple(struct sbuf *b, const char *s) {
    resp_put_line(b, '+', s);
}

void resp_reply_error(struct sbuf *b, const char *msg) {
    resp_put_line(b, '-', msg);
}

void resp_reply_errorf(struct sbuf *b, const char *fmt, ...) {
    size_t from = b->len + 1;
    va_list ap;
    sbuf_putc(b, '-');
    va_start(ap, fmt);
    sbuf_vprintf(b, fmt, ap);
    va_end(ap);
    resp_blank_crlf(b, from);
    sbuf_append(b, "\r\n", 2);
}

void resp_reply_int(struct sbuf *b, int64_t v) {
    resp_put_header(b, ':', v);
}

void resp_reply_bulk(struct sbuf *b, const char *s, size_t n) {
    resp_put_header(b, '$', (int64_t)n);
    sbuf_append(b, s, n);
    sbuf_append(b, "\r\n", 2);
}

void resp_reply_null(struct sbuf *b, int resp3) {
    if (resp3) {
        sbuf_append(b, "_\r\n", 3);
    } else {
        sbuf_append(b, "$-1\r\n", 5);
    }
}

void resp_reply_array(struct sbuf *b, size_t n) {
    resp_put_header(b, '*', (int64_t)n);
}

void resp_reply_map(struct sbuf *b, size_t npairs, int resp3) {
    if (resp3) {
        resp_put_header(b, '%', (int64_t)npairs);
    } else {
        resp_put_header(b, '*', (int64_t)npairs * 2);
    }
}

void resp_reply_set(struct sbuf *b, size_t n, int resp3) {
    resp_put_header(b, resp3 ? '~' : '*', (int64_t)n);
}

void resp_reply_verbatim(struct sbuf *b, const char *s, size_t n, int resp3) {
    if (!resp3) {
        resp_reply_bulk(b, s, n);
        return;
    }
    resp_put_header(b, '=', (int64_t)n + 4);
    sbuf_append(b, "txt:", 4);
    sbuf_append(b, s, n);
    sbuf_append(b, "\r\n", 2);
}
