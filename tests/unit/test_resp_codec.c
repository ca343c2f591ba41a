/*
 * The Redis protocol module (src/resp): the request parser, fed whole, cut at
 * every byte and byte by byte, must give the same commands and the same
 * error; the reply writer's bytes for RESP2 and RESP3.
 */
#include <stdlib.h>
#include <string.h>

#include "resp_codec.h"
#include "unit.h"

/* A string literal that may hold NUL bytes, with its length. */
#define S(lit) (lit), (sizeof(lit) - 1)

/* ---- the trace: what a parse produced, as one comparable string ---------- */

/* Printable bytes as they are; others, and the trace's own marks, as \xHH. */
static void trace_arg(struct sbuf *t, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c > 0x7e || c == '\\' || c == ',' || c == '[' || c == ']') {
            sbuf_printf(t, "\\x%02x", c);
        } else {
            sbuf_putc(t, (char)c);
        }
    }
}

static void trace_cmd(struct sbuf *t, const struct resp_cmd *c) {
    CHECK(c->argc >= 1 && c->argc <= RESP_MAX_ARGS);
    sbuf_putc(t, '[');
    for (int i = 0; i < c->argc; i++) {
        CHECK(c->argvlen[i] <= RESP_MAX_BULK);
        CHECK(c->argv[i][c->argvlen[i]] == '\0');
        if (i > 0) {
            sbuf_putc(t, ',');
        }
        trace_arg(t, c->argv[i], c->argvlen[i]);
    }
    sbuf_putc(t, ']');
}

/* Parses one chunk to its end; -1 once there is an error (traced as E:msg). */
static int trace_chunk(struct resp_parser *p, const char *d, size_t n, struct sbuf *t) {
    size_t off = 0;
    for (;;) {
        size_t used = (size_t)-1;
        struct resp_cmd c;
        const char *err = NULL;
        leaf_status_t rc = resp_parse(p, d + off, n - off, &used, &c, &err);
        CHECK(used <= n - off);
        off += used;
        if (rc == LEAF_OK) {
            CHECK(used > 0);
            trace_cmd(t, &c);
        } else if (rc == LEAF_EAGAIN) {
            CHECK_EQ_INT(off, n);
            return 0;
        } else {
            CHECK(err != NULL);
            sbuf_printf(t, "E:%s", err ? err : "?");
            return -1;
        }
    }
}

/*
 * Feeds in[0..n): first in[0..cut), then chunks of step bytes (0: the rest
 * at once). A command left half-received ends the trace with '+'.
 */
static void trace(const char *in, size_t n, size_t cut, size_t step, struct sbuf *t) {
    struct resp_parser p;
    resp_parser_init(&p);
    sbuf_reset(t);
    sbuf_puts(t, "");
    int failed = trace_chunk(&p, in, cut, t);
    for (size_t pos = cut; pos < n && !failed;) {
        size_t k = step == 0 || n - pos < step ? n - pos : step;
        failed = trace_chunk(&p, in + pos, k, t);
        pos += k;
    }
    if (!failed && resp_parser_in_command(&p)) {
        sbuf_putc(t, '+');
    }
    resp_parser_free(&p);
}

/* The trace of in, whole, must be expect; cut anywhere, it must not change. */
static void check_parse(const char *in, size_t n, const char *expect) {
    struct sbuf whole = SBUF_INIT, t = SBUF_INIT;
    trace(in, n, n, 0, &whole);
    CHECK_EQ_STR(whole.data, expect);
    /* Every cut and small chunks on inputs up to 2 KiB. Above, about 100 cuts, the last few
     * bytes one by one, and chunks of 1 KiB and more: every cut of the 1,024-argument line, or a
     * 64 KiB line fed a byte at a time (scanned again from its start on every byte, as Redis
     * does), is quadratic in its length and took 15 s under the sanitizers; the small inputs
     * cover the byte-level edges. */
    int big = n > 2048;
    size_t stride = big ? n / 97 : 1;
    for (size_t k = 0; k <= n; k += stride) {
        trace(in, n, k, 0, &t);
        if (strcmp(t.data, whole.data) != 0) {
            fprintf(stderr, "cut at %zu: %.200s\n", k, t.data);
            CHECK(0);
            break;
        }
    }
    for (size_t k = big ? n - 3 : n + 1; k < n; k++) {
        trace(in, n, k, 1, &t);
        if (strcmp(t.data, whole.data) != 0) {
            fprintf(stderr, "cut at %zu, then bytes: %.200s\n", k, t.data);
            CHECK(0);
            break;
        }
    }
    static const size_t steps[] = {1, 2, 3, 7, 1024, 4096};
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        if (big && steps[i] < 1024) {
            continue;
        }
        trace(in, n, 0, steps[i], &t);
        if (strcmp(t.data, whole.data) != 0) {
            fprintf(stderr, "chunks of %zu: %.200s\n", steps[i], t.data);
            CHECK(0);
        }
    }
    sbuf_free(&whole);
    sbuf_free(&t);
}

/* ---- multibulk ----------------------------------------------------------- */

static void test_multibulk(void) {
    check_parse(S("*1\r\n$4\r\nPING\r\n"), "[PING]");
    check_parse(S("*3\r\n$3\r\nSET\r\n$1\r\na\r\n$0\r\n\r\n"), "[SET,a,]");
    check_parse(S("*2\r\n$4\r\nECHO\r\n$6\r\na\0\r\n\xff*\r\n"), "[ECHO,a\\x00\\x0d\\x0a\\xff*]");
    check_parse(S("*2\r\n$4\r\nECHO\r\n$3\r\nab"), "+");
    check_parse(S("*2\r\n$4\r\nECHO\r\n"), "+");
    check_parse(S("*"), "+");
    /* The largest lengths Redis's number reader takes, then a refused one. */
    check_parse(S("*1\r\n$9223372036854775807\r\n"), "E:Protocol error: invalid bulk length");
}

static void test_multibulk_skipped(void) {
    /* "*0" and negative counts are skipped as Redis skips them. */
    check_parse(S("*0\r\n*-1\r\n*-10\r\n*1\r\n$4\r\nPING\r\n"), "[PING]");
    check_parse(S("*0\r\n"), "");
    check_parse(S("*-1\r\n"), "");
}

static void test_pipelined(void) {
    const char in[] = "*2\r\n$4\r\nINCR\r\n$1\r\nx\r\n"
                      "*2\r\n$4\r\nINCR\r\n$2\r\nyy\r\n"
                      "INCR z\r\n"
                      "*2\r\n$4\r\nINCR\r\n$1\r\nw\r\n";
    check_parse(S(in), "[INCR,x][INCR,yy][INCR,z][INCR,w]");

    /* used advances one command at a time. */
    static const size_t lens[] = {21, 22, 8, 21};
    struct resp_parser p;
    resp_parser_init(&p);
    size_t off = 0, used;
    struct resp_cmd c;
    const char *err = NULL;
    for (int i = 0; i < 4; i++) {
        CHECK_EQ_INT(resp_parse(&p, in + off, sizeof(in) - 1 - off, &used, &c, &err), LEAF_OK);
        CHECK_EQ_INT(used, lens[i]);
        CHECK_EQ_INT(c.argc, 2);
        CHECK(resp_arg_is(&c, 0, "incr"));
        off += used;
    }
    CHECK_EQ_INT(off, sizeof(in) - 1);
    CHECK_EQ_INT(resp_parse(&p, in + off, 0, &used, &c, &err), LEAF_EAGAIN);
    CHECK_EQ_INT(used, 0);
    resp_parser_free(&p);
}

static void test_multibulk_refused(void) {
    /* Nested arrays and any element that is not a bulk string. */
    check_parse(S("*1\r\n*1\r\n$4\r\nPING\r\n"), "E:Protocol error: expected '$', got '*'");
    check_parse(S("*1\r\n:1\r\n"), "E:Protocol error: expected '$', got ':'");
    check_parse(S("*2\r\n$4\r\nECHO\r\n+x\r\n"), "E:Protocol error: expected '$', got '+'");
    check_parse(S("*1\r\n\r\n"), "E:Protocol error: expected '$', got ' '");
    check_parse(S("*3\r\n$3\r\nSET\r\n$1\r\nx\r\nfooz\r\n"),
                "E:Protocol error: expected '$', got 'f'");

    /* Lengths: huge, negative, not digits, Redis's number rules. */
    static const char *bad_count[] = {
        "*99999\r\n", "*1025\r\n", "*x\r\n",  "*\r\n",   "*1x\r\n", "*01\r\n",
        "*+1\r\n",    "*-0\r\n",   "* 1\r\n", "*1 \r\n", "*-\r\n",  "*99999999999999999999999\r\n",
        "*1\n",       "*1\rX",     "*1\r\r"};
    for (size_t i = 0; i < sizeof(bad_count) / sizeof(bad_count[0]); i++) {
        check_parse(bad_count[i], strlen(bad_count[i]),
                    "E:Protocol error: invalid multibulk length");
    }
    static const char *bad_bulk[] = {"*1\r\n$-1\r\n",
                                     "*1\r\n$-5\r\n",
                                     "*1\r\n$99999999999\r\n",
                                     "*1\r\n$65537\r\n",
                                     "*1\r\n$\r\n",
                                     "*1\r\n$x\r\n",
                                     "*1\r\n$01\r\n",
                                     "*1\r\n$+1\r\n",
                                     "*1\r\n$1 \r\n",
                                     "*1\r\n$4\nPING\r\n",
                                     "*1\r\n$4\rPING",
                                     "*1\r\n$-0\r\n",
                                     "*1\r\n$99999999999999999999999999"};
    for (size_t i = 0; i < sizeof(bad_bulk) / sizeof(bad_bulk[0]); i++) {
        check_parse(bad_bulk[i], strlen(bad_bulk[i]), "E:Protocol error: invalid bulk length");
    }

    /* The payload must be followed by CRLF. */
    const char *crlf = "E:Protocol error: expected CRLF after bulk string";
    check_parse(S("*1\r\n$4\r\nPINGxx"), crlf);
    check_parse(S("*1\r\n$4\r\nPING\rx"), crlf);
    check_parse(S("*1\r\n$4\r\nPING\n"), crlf);
    check_parse(S("*1\r\n$3\r\nPING\r\n"), crlf);
    check_parse(S("*2\r\n$4\r\nECHO\r\n$0\r\nx"),
                "E:Protocol error: expected CRLF after bulk string");
    /* A command before the bad frame is still returned. */
    check_parse(S("*1\r\n$4\r\nPING\r\n*1\r\n*"), "[PING]E:Protocol error: expected '$', got '*'");
}

static void test_multibulk_limits(void) {
    struct sbuf in = SBUF_INIT, expect = SBUF_INIT;

    /* 1024 arguments are taken, 1025 refused. */
    sbuf_puts(&in, "*1024\r\n");
    sbuf_putc(&expect, '[');
    for (int i = 0; i < 1024; i++) {
        sbuf_printf(&in, "$%d\r\n%d\r\n", i < 10 ? 1 : i < 100 ? 2 : i < 1000 ? 3 : 4, i);
        sbuf_printf(&expect, "%s%d", i ? "," : "", i);
    }
    sbuf_putc(&expect, ']');
    check_parse(in.data, in.len, expect.data);
    check_parse(S("*1025\r\n$1\r\nx\r\n"), "E:Protocol error: invalid multibulk length");

    /* A 64 KiB bulk string is taken; one byte more is refused at its header. */
    sbuf_reset(&in);
    sbuf_reset(&expect);
    sbuf_puts(&in, "*2\r\n$4\r\nECHO\r\n$65536\r\n");
    sbuf_puts(&expect, "[ECHO,");
    for (size_t i = 0; i < RESP_MAX_BULK; i++) {
        sbuf_putc(&in, (char)('a' + i % 26));
        sbuf_putc(&expect, (char)('a' + i % 26));
    }
    sbuf_puts(&in, "\r\n");
    sbuf_putc(&expect, ']');
    check_parse(in.data, in.len, expect.data);
    check_parse(S("*2\r\n$4\r\nECHO\r\n$65537\r\n"), "E:Protocol error: invalid bulk length");
    sbuf_free(&in);
    sbuf_free(&expect);
}

/* ---- inline -------------------------------------------------------------- */

static void test_inline(void) {
    check_parse(S("PING\r\n"), "[PING]");
    check_parse(S("PING\n"), "[PING]");
    check_parse(S("PING"), "+");
    check_parse(S("PING\r"), "+");
    check_parse(S("  set  a   b \t\r\n"), "[set,a,b]");
    check_parse(S("\r\n\n  \t \r\nPING\r\n"), "[PING]");
    check_parse(S("\r\n"), "");
    check_parse(S("\v\fPING A\vB\n"), "[PING,A\\x0bB]");
    check_parse(S("ECHO a\rb\r\n"), "[ECHO,a,b]");
    /* Redis splits the line as a C string: a NUL ends it. */
    check_parse(S("ECHO a\0b c\r\nPING\r\n"), "[ECHO,a][PING]");
    /* Inline and multibulk commands may follow each other. */
    check_parse(S("PING\r\n*1\r\n$4\r\nPING\r\nPING x\n"), "[PING][PING][PING,x]");
}

static void test_inline_quotes(void) {
    check_parse(S("SET \"a b\" 'c d'\r\n"), "[SET,a b,c d]");
    check_parse(S("ECHO \"\\x41\\x4a\\n\\t\\\\\\\"\\r\\b\\a\\z\"\r\n"),
                "[ECHO,AJ\\x0a\\x09\\x5c\"\\x0d\\x08\\x07z]");
    check_parse(S("ECHO 'it\\'s' 'a\\nb'\r\n"), "[ECHO,it's,a\\x5cnb]");
    check_parse(S("ECHO \"\"\r\n"), "[ECHO,]");
    check_parse(S("ECHO '' x\r\n"), "[ECHO,,x]");
    check_parse(S("ab\"c d\"\r\n"), "[abc d]"); /* a quote opens inside a word */
    check_parse(S("ECHO \"\\xZZ\" \"\\x4\"\r\n"), "[ECHO,xZZ,x4]");
    check_parse(S("ECHO \"a\"\r\n"), "[ECHO,a]");
    check_parse(S("ECHO \"a\"\rb\r\n"), "[ECHO,a,b]");
    check_parse(S("ECHO \"a\\\"b\"\n"), "[ECHO,a\"b]");
    check_parse(S("ECHO \"\\x00\"\n"), "[ECHO,\\x00]");
    check_parse(S("ECHO \"\\"), "+");

    const char *bad = "E:Protocol error: unbalanced quotes in request";
    check_parse(S("ECHO \"abc\r\n"), bad);
    check_parse(S("ECHO 'abc\n"), bad);
    check_parse(S("ECHO \"a\"b\r\n"), bad);
    check_parse(S("ECHO 'a'b\r\n"), bad);
    check_parse(S("ECHO \"a\\\"\r\n"), bad);
    check_parse(S("ECHO \"a\0\"\r\n"), bad);
    check_parse(S("PING\r\nECHO \"a\n"), "[PING]E:Protocol error: unbalanced quotes in request");
}

static void test_inline_limits(void) {
    struct sbuf in = SBUF_INIT, expect = SBUF_INIT;
    const char *big = "E:Protocol error: too big inline request";

    for (size_t i = 0; i < RESP_MAX_INLINE; i++) {
        sbuf_putc(&in, 'a');
    }
    sbuf_printf(&expect, "[%s]", in.data);
    sbuf_puts(&in, "\r\n");
    check_parse(in.data, in.len, expect.data);
    in.data[in.len - 2] = '\n';
    check_parse(in.data, in.len - 1, expect.data);
    check_parse(in.data, in.len - 2, "+");
    in.data[in.len - 2] = '\r';
    check_parse(in.data, in.len - 1, "+"); /* the CR may be the line's end */
    in.data[in.len - 2] = 'a';
    check_parse(in.data, in.len, big);
    check_parse(in.data, in.len - 1, big); /* refused before its LF */

    /* 1024 arguments are taken, 1025 refused. */
    sbuf_reset(&in);
    sbuf_reset(&expect);
    sbuf_putc(&expect, '[');
    for (int i = 0; i < 1024; i++) {
        sbuf_printf(&in, "%s%d", i ? " " : "", i);
        sbuf_printf(&expect, "%s%d", i ? "," : "", i);
    }
    sbuf_putc(&expect, ']');
    sbuf_puts(&in, "\r\n");
    check_parse(in.data, in.len, expect.data);
    in.len -= 2;
    sbuf_puts(&in, " x\r\n");
    check_parse(in.data, in.len, big);
    sbuf_free(&in);
    sbuf_free(&expect);
}

/* ---- the parser's life --------------------------------------------------- */

static leaf_status_t parse_all(struct resp_parser *p, const char *in, size_t n,
                               struct resp_cmd *c) {
    size_t used;
    const char *err;
    return resp_parse(p, in, n, &used, c, &err);
}

/* Bytes of heap the parser holds: its buffer and argument arrays. */
static size_t parser_memory(const struct resp_parser *p) {
    return p->cap + (size_t)p->args_cap * (sizeof(*p->argv) + sizeof(*p->argvlen));
}

static void test_release_idle(void) {
    struct resp_parser p;
    struct resp_cmd c;
    resp_parser_init(&p);
    CHECK_EQ_INT(parser_memory(&p), 0); /* nothing until the first byte */
    CHECK_EQ_INT(parse_all(&p, S("*0\r\n"), &c), LEAF_EAGAIN);
    CHECK_EQ_INT(parser_memory(&p), 0);

    CHECK_EQ_INT(parse_all(&p, S("*1\r\n$4\r\nPING\r\n"), &c), LEAF_OK);
    CHECK(parser_memory(&p) > 0);
    resp_parser_release_idle(&p);
    CHECK_EQ_INT(parser_memory(&p), 0);
    CHECK(p.buf == NULL && p.argv == NULL && p.argvlen == NULL);

    /* Works after; a half-received command keeps its memory. */
    CHECK_EQ_INT(parse_all(&p, S("*2\r\n$4\r\nECHO\r\n$2\r\nh"), &c), LEAF_EAGAIN);
    CHECK(resp_parser_in_command(&p));
    size_t held = parser_memory(&p);
    resp_parser_release_idle(&p);
    CHECK_EQ_INT(parser_memory(&p), held);
    CHECK_EQ_INT(parse_all(&p, S("i\r\n"), &c), LEAF_OK);
    CHECK_EQ_INT(c.argc, 2);
    CHECK(c.argvlen[1] == 2 && memcmp(c.argv[1], "hi", 2) == 0);
    resp_parser_release_idle(&p);
    CHECK_EQ_INT(parser_memory(&p), 0);

    CHECK_EQ_INT(parse_all(&p, S("ECHO \"a b\"\r\n"), &c), LEAF_OK);
    CHECK(c.argvlen[1] == 3 && strcmp(c.argv[1], "a b") == 0);
    resp_parser_free(&p);
    CHECK_EQ_INT(parser_memory(&p), 0);
}

static void test_large_storage_dropped(void) {
    struct resp_parser p;
    struct resp_cmd c;
    struct sbuf in = SBUF_INIT;
    resp_parser_init(&p);
    sbuf_puts(&in, "*1\r\n$60000\r\n");
    for (int i = 0; i < 60000; i++) {
        sbuf_putc(&in, 'x');
    }
    sbuf_puts(&in, "\r\n");
    CHECK_EQ_INT(parse_all(&p, in.data, in.len, &c), LEAF_OK);
    CHECK(parser_memory(&p) > 60000);
    /* The next command starts with fresh, small storage. */
    CHECK_EQ_INT(parse_all(&p, S("*1\r\n$4\r\nPING\r\n"), &c), LEAF_OK);
    CHECK(parser_memory(&p) < 4096);
    resp_parser_free(&p);
    sbuf_free(&in);
}

static void test_in_command_and_errors(void) {
    struct resp_parser p;
    struct resp_cmd c;
    size_t used;
    const char *err = NULL;
    resp_parser_init(&p);
    CHECK(!resp_parser_in_command(&p));
    CHECK_EQ_INT(parse_all(&p, S("*"), &c), LEAF_EAGAIN);
    CHECK(resp_parser_in_command(&p));
    CHECK_EQ_INT(parse_all(&p, S("1\r\n$4\r\nPING\r\n"), &c), LEAF_OK);
    CHECK(!resp_parser_in_command(&p));
    CHECK_EQ_INT(parse_all(&p, S("PI"), &c), LEAF_EAGAIN);
    CHECK(resp_parser_in_command(&p));

    CHECK_EQ_INT(parse_all(&p, S("NG\r\n"), &c), LEAF_OK);
    CHECK(c.argc == 1 && strcmp(c.argv[0], "PING") == 0);

    /* An error is sticky (the connection is closed after it). */
    CHECK_EQ_INT(resp_parse(&p, S("*1\r\n$x\r\n"), &used, &c, &err), LEAF_EINVAL);
    CHECK_EQ_INT(used, 8); /* through the line found invalid */
    CHECK_EQ_STR(err, "Protocol error: invalid bulk length");
    CHECK(!resp_parser_in_command(&p));
    err = NULL;
    CHECK_EQ_INT(resp_parse(&p, S("PING\r\n"), &used, &c, &err), LEAF_EINVAL);
    CHECK_EQ_INT(used, 0);
    CHECK_EQ_STR(err, "Protocol error: invalid bulk length");
    resp_parser_free(&p);
}

static void test_arg_is(void) {
    struct resp_parser p;
    struct resp_cmd c;
    resp_parser_init(&p);
    CHECK_EQ_INT(parse_all(&p, S("*3\r\n$5\r\nHeLLo\r\n$1\r\n3\r\n$4\r\nA\0TH\r\n"), &c), LEAF_OK);
    CHECK(resp_arg_is(&c, 0, "hello"));
    CHECK(!resp_arg_is(&c, 0, "hell"));
    CHECK(!resp_arg_is(&c, 0, "helloo"));
    CHECK(resp_arg_is(&c, 1, "3"));
    CHECK(!resp_arg_is(&c, 2, "a")); /* the NUL is part of the argument */
    CHECK(!resp_arg_is(&c, 3, "x"));
    CHECK(!resp_arg_is(&c, -1, "x"));
    resp_parser_free(&p);
}

/* resp_peek: a whole multibulk command, without a parser; 0 for anything else. */
static void test_peek(void) {
    const char *argv[3];
    size_t argvlen[3];
    int argc = 0;
    const char two[] = "*2\r\n$4\r\nINCR\r\n$5\r\nkey:a\r\n*1\r\n";
    CHECK_EQ_INT(resp_peek(two, sizeof(two) - 1, argv, argvlen, 3, &argc), sizeof(two) - 1 - 4);
    CHECK_EQ_INT(argc, 2);
    CHECK(argvlen[0] == 4 && memcmp(argv[0], "INCR", 4) == 0);
    CHECK(argvlen[1] == 5 && memcmp(argv[1], "key:a", 5) == 0);
    /* every cut short of the whole command is 0 */
    for (size_t n = 0; n < sizeof(two) - 1 - 4; n++) {
        CHECK_EQ_INT(resp_peek(two, n, argv, argvlen, 3, &argc), 0);
    }
    CHECK_EQ_INT(resp_peek(two, sizeof(two) - 1, argv, argvlen, 1, &argc), 0); /* over max */
    CHECK_EQ_INT(resp_peek(S("INCR a\r\n"), argv, argvlen, 3, &argc), 0);      /* inline */
    CHECK_EQ_INT(resp_peek(S("*0\r\n"), argv, argvlen, 3, &argc), 0);
    CHECK_EQ_INT(resp_peek(S("*1\r\n$-1\r\n"), argv, argvlen, 3, &argc), 0);
    CHECK_EQ_INT(resp_peek(S("*1\r\n$2\r\nabc\r\n"), argv, argvlen, 3, &argc), 0);
    CHECK_EQ_INT(resp_peek(S("*1\r\n$99999999999\r\nab\r\n"), argv, argvlen, 3, &argc), 0);
    CHECK_EQ_INT(resp_peek(S("*1\n$1\r\na\r\n"), argv, argvlen, 3, &argc), 0);
    CHECK_EQ_INT(resp_peek(S("*1\r\n$01\r\na\r\n"), argv, argvlen, 3, &argc), 0);
    CHECK_EQ_INT(resp_peek(S("*01\r\n$1\r\na\r\n"), argv, argvlen, 3, &argc), 0);
    CHECK_EQ_INT(resp_peek(S("*1\r\n$0\r\n\r\n"), argv, argvlen, 3, &argc), 10);
    CHECK_EQ_INT(argvlen[0], 0);
}

/* ---- reply writer -------------------------------------------------------- */

#define CHECK_OUT(b, lit)                                                                          \
    do {                                                                                           \
        CHECK_EQ_INT((b)->len, sizeof(lit) - 1);                                                   \
        CHECK((b)->len == sizeof(lit) - 1 && memcmp((b)->data, lit, sizeof(lit) - 1) == 0);        \
        sbuf_reset(b);                                                                             \
    } while (0)

static void test_reply_resp2(void) {
    struct sbuf b = SBUF_INIT;
    resp_reply_simple(&b, "OK");
    CHECK_OUT(&b, "+OK\r\n");
    resp_reply_simple(&b, "a\r\nb");
    CHECK_OUT(&b, "+a  b\r\n");
    resp_reply_error(&b, "ERR unknown command 'x'");
    CHECK_OUT(&b, "-ERR unknown command 'x'\r\n");
    resp_reply_error(&b, "ERR bad\r\nthing\n");
    CHECK_OUT(&b, "-ERR bad  thing \r\n");
    resp_reply_errorf(&b, "MOVED %d %s:%d", 866, "127.0.0.1", 6380);
    CHECK_OUT(&b, "-MOVED 866 127.0.0.1:6380\r\n");
    resp_reply_errorf(&b, "ERR %s", "x\ny");
    CHECK_OUT(&b, "-ERR x y\r\n");
    resp_reply_int(&b, 0);
    CHECK_OUT(&b, ":0\r\n");
    resp_reply_int(&b, INT64_MAX);
    CHECK_OUT(&b, ":9223372036854775807\r\n");
    resp_reply_int(&b, INT64_MIN);
    CHECK_OUT(&b, ":-9223372036854775808\r\n");
    resp_reply_bulk(&b, S("a\0\r\n"));
    CHECK_OUT(&b, "$4\r\na\0\r\n\r\n");
    resp_reply_bulk(&b, "", 0);
    CHECK_OUT(&b, "$0\r\n\r\n");
    resp_reply_null(&b, 0);
    CHECK_OUT(&b, "$-1\r\n");
    resp_reply_array(&b, 3);
    CHECK_OUT(&b, "*3\r\n");
    resp_reply_array(&b, 0);
    CHECK_OUT(&b, "*0\r\n");
    resp_reply_map(&b, 2, 0);
    CHECK_OUT(&b, "*4\r\n");
    resp_reply_set(&b, 5, 0);
    CHECK_OUT(&b, "*5\r\n");
    resp_reply_verbatim(&b, S("a:1\r\n"), 0);
    CHECK_OUT(&b, "$5\r\na:1\r\n\r\n");
    sbuf_free(&b);
}

static void test_reply_resp3(void) {
    struct sbuf b = SBUF_INIT;
    resp_reply_null(&b, 1);
    CHECK_OUT(&b, "_\r\n");
    resp_reply_map(&b, 2, 1);
    CHECK_OUT(&b, "%2\r\n");
    resp_reply_map(&b, 0, 1);
    CHECK_OUT(&b, "%0\r\n");
    resp_reply_set(&b, 5, 1);
    CHECK_OUT(&b, "~5\r\n");
    resp_reply_verbatim(&b, S("a:1\r\n"), 1);
    CHECK_OUT(&b, "=9\r\ntxt:a:1\r\n\r\n");
    resp_reply_verbatim(&b, "", 0, 1);
    CHECK_OUT(&b, "=4\r\ntxt:\r\n");

    /* A HELLO 3 answer, as the command layer will build it. */
    resp_reply_map(&b, 2, 1);
    resp_reply_bulk(&b, S("server"));
    resp_reply_bulk(&b, S("leafd"));
    resp_reply_bulk(&b, S("proto"));
    resp_reply_int(&b, 3);
    CHECK_OUT(&b, "%2\r\n$6\r\nserver\r\n$5\r\nleafd\r\n$5\r\nproto\r\n:3\r\n");
    sbuf_free(&b);
}

static void test_reply_sticky_failure(void) {
    struct sbuf b;
    sbuf_init(&b, 8);
    resp_reply_bulk(&b, S("0123456789"));
    CHECK(b.failed);
    CHECK(b.len <= 8);
    resp_reply_error(&b, "ERR x");
    resp_reply_errorf(&b, "ERR %d", 1);
    CHECK(b.failed && b.len <= 8);
    sbuf_free(&b);
}

/* A parser after a protocol error: a new one (the connection's is closed), limited to max. */
static void limited(struct resp_parser *p, size_t max) {
    resp_parser_free(p);
    resp_parser_set_max(p, max);
}

/* resp_parser_set_max: a whole command over the limit is refused before its payload is stored. */
static void test_command_limit(void) {
    struct resp_parser p;
    struct resp_cmd cmd;
    const char *err = NULL;
    size_t used = 0;
    const char *small = "*2\r\n$4\r\nECHO\r\n$3\r\nabc\r\n";
    resp_parser_init(&p);
    resp_parser_set_max(&p, 4096);
    CHECK_EQ_INT(resp_parse(&p, small, strlen(small), &used, &cmd, &err), LEAF_OK);
    CHECK_EQ_INT(cmd.argc, 2);
    /* A bulk length over what is left: refused on its length line. */
    const char *big = "*2\r\n$4\r\nECHO\r\n$5000\r\n";
    CHECK_EQ_INT(resp_parse(&p, big, strlen(big), &used, &cmd, &err), LEAF_EINVAL);
    CHECK(err != NULL && strcmp(err, "Protocol error: command too large") == 0);
    CHECK(parser_memory(&p) < 4096);
    /* Too many declared arguments (16 bytes each). */
    limited(&p, 4096);
    CHECK_EQ_INT(resp_parse(&p, "*300\r\n", 6, &used, &cmd, &err), LEAF_EINVAL);
    /* Many small arguments that add up, whole in one read (the fast path). */
    limited(&p, 4096);
    struct sbuf b;
    sbuf_init(&b, 0);
    sbuf_append(&b, "*3\r\n$4\r\nECHO\r\n$3000\r\n", 21);
    for (int i = 0; i < 3000; i++)
        sbuf_append(&b, "x", 1);
    sbuf_append(&b, "\r\n$3000\r\n", 9);
    for (int i = 0; i < 3000; i++)
        sbuf_append(&b, "y", 1);
    sbuf_append(&b, "\r\n", 2);
    CHECK_EQ_INT(resp_parse(&p, b.data, b.len, &used, &cmd, &err), LEAF_EINVAL);
    CHECK(err != NULL && strcmp(err, "Protocol error: command too large") == 0);
    /* An inline line over it. */
    limited(&p, 4096);
    char line[5000];
    memset(line, 'a', sizeof(line));
    CHECK_EQ_INT(resp_parse(&p, line, sizeof(line), &used, &cmd, &err), LEAF_EINVAL);
    /* Lifted: the same command goes through. */
    limited(&p, 0);
    CHECK_EQ_INT(resp_parse(&p, b.data, b.len, &used, &cmd, &err), LEAF_OK);
    CHECK_EQ_INT(cmd.argc, 3);
    sbuf_free(&b);
    resp_parser_free(&p);
}

int main(void) {
    TEST(test_command_limit);
    TEST(test_multibulk);
    TEST(test_multibulk_skipped);
    TEST(test_pipelined);
    TEST(test_multibulk_refused);
    TEST(test_multibulk_limits);
    TEST(test_inline);
    TEST(test_inline_quotes);
    TEST(test_inline_limits);
    TEST(test_release_idle);
    TEST(test_large_storage_dropped);
    TEST(test_in_command_and_errors);
    TEST(test_arg_is);
    TEST(test_peek);
    TEST(test_reply_resp2);
    TEST(test_reply_resp3);
    TEST(test_reply_sticky_failure);
    return unit_done();
}
