/*
 * The RESP protocol module (src/resp/resp_conn.c) and the command table
 * behind it (src/tables/table_resp.c), on a real API context
 * (tests/support/api_fixture.c: static-worker snowflake, segment off),
 * without sockets: pipelined replies in order however the bytes are cut,
 * inline and multibulk forms, Redis's wording of unknown commands and
 * arity, the stable codes of ID errors, protocol errors closing only their
 * connection, QUIT, HELLO 3, COMMAND DOCS, and idle connections giving their
 * memory back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_fixture.h"
#include "resp_conn.h"
#include "table_resp.h"
#include "unit.h"

static char out[1 << 16];

/* Feeds text in chunks of `chunk` bytes to a new connection; returns its output. */
static const char *feed_chunked(const char *text, size_t len, size_t chunk, int *closed) {
    struct session *s = api_fixture_resp_conn(1);
    s->now_ms = 1;
    size_t pos = 0;
    while (pos < len && !s->close_after) {
        size_t n = len - pos < chunk ? len - pos : chunk;
        size_t used = 0;
        while (used < n && !s->close_after) {
            used += resp_proto_ops.input(s, text + pos + used, n - used);
        }
        pos += n;
    }
    size_t olen = s->out.len < sizeof(out) - 1 ? s->out.len : sizeof(out) - 1;
    memcpy(out, s->out.data ? s->out.data : "", olen);
    out[olen] = '\0';
    if (closed != NULL) {
        *closed = s->close_after;
    }
    api_fixture_resp_close(s);
    return out;
}

static const char *feed(const char *text) {
    return feed_chunked(text, strlen(text), 1 << 20, NULL);
}

/* The reply with the IDs blanked (they differ between runs). */
static void shape(const char *in, char *dst, size_t cap) {
    size_t o = 0;
    for (const char *p = in; *p && o + 1 < cap; p++) {
        if (*p == ':' && (p == in || p[-1] == '\n')) {
            dst[o++] = ':';
            while (p[1] >= '0' && p[1] <= '9') {
                p++;
            }
        } else {
            dst[o++] = *p;
        }
    }
    dst[o] = '\0';
}

static void test_pipelined_in_order_any_cut(void) {
    const char *req = "PING\r\n"
                      "*2\r\n$4\r\nINCR\r\n$11\r\nsnowflake:a\r\n"
                      "*2\r\n$4\r\nECHO\r\n$5\r\nhe\r\no\r\n"
                      "LEAF.IDS snowflake:a 2\r\n"
                      "nope\r\n";
    char first[1024], again[1024];
    shape(feed(req), first, sizeof(first));
    CHECK_EQ_STR(first, "+PONG\r\n:\r\n$5\r\nhe\r\no\r\n*2\r\n:\r\n:\r\n"
                        "-ERR unknown command 'nope', with args beginning with: \r\n");
    for (size_t chunk = 1; chunk <= 7; chunk++) {
        shape(feed_chunked(req, strlen(req), chunk, NULL), again, sizeof(again));
        CHECK_EQ_STR(again, first);
    }
}

static void test_ids_ascend(void) {
    const char *o = feed("LEAF.IDS snowflake:k 5\r\n");
    CHECK(strncmp(o, "*5\r\n", 4) == 0);
    long long prev = 0;
    const char *p = o + 4;
    for (int i = 0; i < 5; i++) {
        CHECK(*p == ':');
        long long v = strtoll(p + 1, (char **)&p, 10);
        CHECK(v > prev);
        prev = v;
        p += 2;
    }
}

static void test_errors(void) {
    CHECK_EQ_STR(feed("INCR\r\n"), "-ERR wrong number of arguments for 'incr' command\r\n");
    CHECK_EQ_STR(feed("incrby segment:a 1 2\r\n"),
                 "-ERR wrong number of arguments for 'incrby' command\r\n");
    CHECK(strncmp(feed("INCR orders\r\n"), "-BAD_KEY ", 9) == 0);
    CHECK(strncmp(feed("INCR snowflake:\r\n"), "-BAD_TAG ", 9) == 0);
    CHECK(strncmp(feed("INCR segment:a/b\r\n"), "-BAD_TAG ", 9) == 0);
    CHECK(strncmp(feed("LEAF.IDS snowflake:a 0\r\n"), "-BAD_COUNT ", 11) == 0);
    CHECK(strncmp(feed("LEAF.IDS snowflake:a 10001\r\n"), "-BAD_COUNT ", 11) == 0);
    CHECK(strncmp(feed("INCRBY segment:a x\r\n"), "-BAD_COUNT ", 11) == 0);
    CHECK(strncmp(feed("INCRBY snowflake:a 5\r\n"), "-WRONG_MODE ", 12) == 0);
    CHECK(strstr(out, "LEAF.IDS") != NULL);
    CHECK(strncmp(feed("INCRBY snowflake:a 1\r\n"), ":", 1) == 0); /* redis-py's incr() */
    CHECK(strncmp(feed("INCR segment:a\r\n"), "-SEGMENT_DISABLED ", 18) == 0);
    CHECK(strncmp(feed("INCR sequence:a\r\n"), "-SEQUENCE_DISABLED ", 19) == 0);
    CHECK(strncmp(feed("GET snowflake:a\r\n"), "-WRONG_MODE ", 12) == 0);
    CHECK_EQ_STR(feed("SELECT 1\r\n"), "-ERR DB index is out of range\r\n");
    CHECK_EQ_STR(feed("SELECT 0\r\n"), "+OK\r\n");
    CHECK_EQ_STR(feed("foo a b\r\n"),
                 "-ERR unknown command 'foo', with args beginning with: 'a' 'b' \r\n");
    /* an error in one command does not end the connection */
    CHECK_EQ_STR(feed("foo\r\nPING\r\n"),
                 "-ERR unknown command 'foo', with args beginning with: \r\n+PONG\r\n");
}

/* MULTI / EXEC / DISCARD (docs/reference/resp.md): redis-py's default pipeline(). */
/*
 * The reference says what GET does (docs/reference/resp.md is generated from
 * the table): the last ID of a sequence, nil before the first, WRONG_MODE on
 * any other key; it issues nothing.
 */
static void test_get_as_documented(void) {
    CHECK(strncmp(feed("GET snowflake:a\r\n"), "-WRONG_MODE ", 12) == 0);
    CHECK(strncmp(feed("GET opaque:a\r\n"), "-", 1) == 0);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f != NULL);
    table_resp_print_reference(f);
    fclose(f);
    const char *row = strstr(text, "| `get` |");
    CHECK(row != NULL);
    const char *end = row != NULL ? strchr(row, '\n') : NULL;
    CHECK(end != NULL);
    char line[512] = "";
    if (row != NULL && end != NULL && (size_t)(end - row) < sizeof(line)) {
        memcpy(line, row, (size_t)(end - row));
    }
    CHECK(strstr(line, "sequence keys only") != NULL);
    CHECK(strstr(line, "WRONG_MODE") != NULL);
    CHECK(strstr(line, "one ID") == NULL);
    free(text);
}

static void test_multi_exec(void) {
    char got[1024];
    shape(feed("MULTI\r\nINCR snowflake:a\r\nLEAF.IDS snowflake:a 2\r\nPING\r\nEXEC\r\n"), got,
          sizeof(got));
    CHECK_EQ_STR(got,
                 "+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n:\r\n*2\r\n:\r\n:\r\n+PONG\r\n");
    CHECK_EQ_STR(feed("MULTI\r\nEXEC\r\n"), "+OK\r\n*0\r\n");
    CHECK_EQ_STR(feed("EXEC\r\n"), "-ERR EXEC without MULTI\r\n");
    CHECK_EQ_STR(feed("DISCARD\r\n"), "-ERR DISCARD without MULTI\r\n");
    CHECK_EQ_STR(feed("MULTI\r\nMULTI\r\nDISCARD\r\nPING\r\n"),
                 "+OK\r\n-ERR MULTI calls can not be nested\r\n+OK\r\n+PONG\r\n");
    CHECK_EQ_STR(feed("MULTI\r\nINCR snowflake:a\r\nDISCARD\r\nEXEC\r\n"),
                 "+OK\r\n+QUEUED\r\n+OK\r\n-ERR EXEC without MULTI\r\n");
    /* A command refused when sent aborts the transaction: nothing runs, no ID is issued. */
    const char *o = feed("MULTI\r\nINCR snowflake:a\r\nINCR orders\r\nEXEC\r\nPING\r\n");
    CHECK(strncmp(o, "+OK\r\n+QUEUED\r\n-BAD_KEY ", 23) == 0);
    CHECK(
        strstr(o, "\r\n-EXECABORT Transaction discarded because of previous errors.\r\n+PONG\r\n"));
    o = feed("MULTI\r\nLEAF.IDS snowflake:a 0\r\nEXEC\r\n");
    CHECK(strstr(o, "-BAD_COUNT ") && strstr(o, "-EXECABORT "));
    o = feed("MULTI\r\nCLIENT ID\r\nEXEC\r\n");
    CHECK(strstr(o, "cannot be queued") && strstr(o, "-EXECABORT "));
    o = feed("MULTI\r\nnope\r\nINCR\r\nEXEC\r\n");
    CHECK(strstr(o, "unknown command") && strstr(o, "-EXECABORT "));
    /* A runtime error is an element of EXEC's array, as Redis answers. */
    o = feed("MULTI\r\nINCR segment:a\r\nEXEC\r\n");
    CHECK(strstr(o, "*1\r\n-SEGMENT_DISABLED ") != NULL);
    /* RESET forgets the transaction; a connection closed inside one leaks nothing. */
    CHECK_EQ_STR(feed("MULTI\r\nRESET\r\nEXEC\r\n"),
                 "+OK\r\n+RESET\r\n-ERR EXEC without MULTI\r\n");
    feed("MULTI\r\nINCR snowflake:a\r\n");
}

static void test_protocol_error_closes(void) {
    int closed = 0;
    const char *req = "PING\r\n*x\r\nPING\r\n";
    const char *o = feed_chunked(req, strlen(req), 100, &closed);
    CHECK(closed);
    CHECK_EQ_STR(o, "+PONG\r\n-ERR Protocol error: invalid multibulk length\r\n");
    char big[80];
    snprintf(big, sizeof(big), "*1\r\n$%u\r\n", (unsigned)RESP_MAX_BULK + 1);
    o = feed_chunked(big, strlen(big), 100, &closed);
    CHECK(closed && strncmp(o, "-ERR Protocol error", 19) == 0);
    o = feed_chunked("QUIT\r\nPING\r\n", 12, 100, &closed);
    CHECK(closed);
    CHECK_EQ_STR(o, "+OK\r\n");
}

static void test_tooling_commands(void) {
    const char *o = feed("HELLO 3 SETNAME app\r\nCLIENT GETNAME\r\n");
    CHECK(strncmp(o, "%7\r\n", 4) == 0);
    CHECK(strstr(o, "$5\r\nproto\r\n:3\r\n") != NULL);
    CHECK(strstr(o, "$3\r\napp\r\n") != NULL);
    CHECK_EQ_STR(feed("HELLO 4\r\n"), "-NOPROTO unsupported protocol version\r\n");
    o = feed("INFO\r\n");
    CHECK(strstr(o, "loading:0\r\n") != NULL && strstr(o, "# Leafd\r\n") != NULL);
    o = feed("INFO persistence\r\n");
    CHECK(strstr(o, "loading:0") != NULL && strstr(o, "# Server") == NULL);
    CHECK_EQ_STR(feed("CONFIG GET save\r\n"), "*0\r\n");
    CHECK_EQ_STR(feed("CLIENT SETINFO lib-name redis-py\r\n"), "+OK\r\n");
    CHECK(strncmp(feed("CLIENT SETNAME a b\r\n"), "-ERR unknown subcommand", 23) == 0);
    CHECK(strncmp(feed("COMMAND COUNT\r\n"), ":", 1) == 0);
    CHECK(strstr(feed("COMMAND INFO incr nope\r\n"), "$4\r\nincr\r\n:2\r\n") != NULL);
    CHECK(strstr(out, "$-1\r\n") != NULL);
    CHECK_EQ_STR(feed("RESET\r\n"), "+RESET\r\n");
    CHECK_EQ_STR(feed("AUTH someone secret\r\nPING hi\r\n"), "+OK\r\n$2\r\nhi\r\n");
}

/* COMMAND DOCS as Redis 7 answers it: a map of name to summary, since, group, complexity, args. */
static void test_command_docs(void) {
    CHECK_EQ_STR(feed("COMMAND DOCS incrby nope\r\n"),
                 "*2\r\n$6\r\nincrby\r\n*10\r\n"
                 "$7\r\nsummary\r\n$43\r\ncount IDs of the key; the reply is the last\r\n"
                 "$5\r\nsince\r\n$5\r\n1.0.0\r\n$5\r\ngroup\r\n$6\r\nstring\r\n"
                 "$10\r\ncomplexity\r\n$4\r\nO(1)\r\n$9\r\narguments\r\n*2\r\n"
                 "*8\r\n$4\r\nname\r\n$3\r\nkey\r\n$4\r\ntype\r\n$3\r\nkey\r\n"
                 "$12\r\ndisplay_text\r\n$3\r\nkey\r\n$14\r\nkey_spec_index\r\n:0\r\n"
                 "*6\r\n$4\r\nname\r\n$5\r\ncount\r\n$4\r\ntype\r\n$7\r\ninteger\r\n"
                 "$12\r\ndisplay_text\r\n$5\r\ncount\r\n");
    CHECK_EQ_STR(feed("COMMAND DOCS nope\r\n"), "*0\r\n");
    /* RESP3: maps and sets; HELLO's nested block, a token and the optional flag. */
    const char *o = feed("HELLO 3\r\nCOMMAND DOCS hello\r\n");
    o = strstr(o, "%1\r\n$5\r\nhello\r\n%5\r\n");
    CHECK(o != NULL);
    CHECK(o != NULL && strstr(o, "$5\r\ntoken\r\n$4\r\nAUTH\r\n") != NULL &&
          strstr(o, "$5\r\nflags\r\n~1\r\n+optional\r\n") != NULL);
    /* LEAF.IDS is leafd's own: the module names it. Every command has a document. */
    CHECK(strstr(feed("COMMAND DOCS leaf.ids\r\n"), "$6\r\nmodule\r\n$5\r\nleafd\r\n") != NULL);
    o = feed("COMMAND COUNT\r\nCOMMAND DOCS\r\n");
    char count[32];
    snprintf(count, sizeof(count), "*%ld\r\n", 2 * strtol(o + 1, NULL, 10)); /* RESP2: pairs */
    CHECK(strstr(o, "\r\n") != NULL && strncmp(strstr(o, "\r\n") + 2, count, strlen(count)) == 0);
}

/*
 * What a connection may make the node hold (docs/reference/resp.md, "Memory per connection"):
 * a transaction's queue stops at 160,000 bytes of arguments, with an error that names the
 * limit, and is dropped at once (EXEC aborts); AUTH with authentication off checks nobody, so
 * the 4 KiB command limit stays.
 */
static void test_memory_limits(void) {
    static char x[5000];
    memset(x, 'x', sizeof(x));
    struct sbuf req = SBUF_INIT;
    sbuf_puts(&req, "MULTI\r\n");
    for (int i = 0; i < 41; i++) { /* 39 fit: "ECHO", 4000 bytes and the NULs are 4006 */
        sbuf_puts(&req, "ECHO ");
        sbuf_append(&req, x, 4000);
        sbuf_puts(&req, "\r\n");
    }
    sbuf_puts(&req, "EXEC\r\n");
    const char *o = feed_chunked(req.data, req.len, 1 << 20, NULL);
    const char *err = strstr(o, "-ERR transaction too large: at most 1000 commands, 100000 IDs and "
                                "160000 bytes of arguments\r\n");
    CHECK(err != NULL && (size_t)(err - o) == 5 + 39 * 9);
    CHECK(err != NULL && strcmp(strchr(err, '\n') + 1,
                                "+QUEUED\r\n-EXECABORT Transaction discarded because of previous "
                                "errors.\r\n") == 0);
    sbuf_free(&req);

    int closed = 0;
    sbuf_puts(&req, "AUTH someone secret\r\nECHO ");
    sbuf_append(&req, x, 4500);
    sbuf_puts(&req, "\r\n");
    o = feed_chunked(req.data, req.len, 1 << 20, &closed);
    CHECK_EQ_STR(o, "+OK\r\n-ERR Protocol error: command too large\r\n");
    CHECK(closed);
    sbuf_free(&req);
}

/*
 * The output budget before AUTH (docs/OPERATIONS.md, "Clients that do not read"): 30 pipelined
 * COMMAND DOCS (6 KB of reply each) stop being parsed once 16 KiB of replies wait, and the rest
 * of the input is left for later; without the budget all 30 are answered (180 KB, under the
 * output limit).
 */
static void test_anonymous_output_budget(void) {
    static char in[30 * 14 + 1];
    for (int i = 0; i < 30; i++) {
        memcpy(in + i * 14, "COMMAND DOCS\r\n", 14);
    }
    api_fixture_resp_anonymous_out(16u << 10);
    struct session *s = api_fixture_resp_conn(1);
    size_t used = resp_proto_ops.input(s, in, 30 * 14);
    CHECK(used < 30 * 14 && used % 14 == 0);
    CHECK(s->out.len >= (16u << 10) && s->out.len < (16u << 10) + 7000);
    api_fixture_resp_close(s);
    api_fixture_resp_anonymous_out(0);
    s = api_fixture_resp_conn(1);
    CHECK_EQ_INT(resp_proto_ops.input(s, in, 30 * 14), 30 * 14);
    CHECK(s->out.len > 30 * 6000);
    api_fixture_resp_close(s);
}

static void test_idle_gives_memory_back(void) {
    struct session *s = api_fixture_resp_conn(1);
    s->now_ms = 1;
    resp_proto_ops.input(s, "*2\r\n$4\r\nPING\r\n", 14); /* half a command */
    CHECK(s->head_started_ms == 1);
    resp_proto_ops.idle(s);
    resp_proto_ops.input(s, "$2\r\nhi\r\n", 8);
    CHECK(s->head_started_ms == 0);
    CHECK(s->out.len == 8 && memcmp(s->out.data, "$2\r\nhi\r\n", 8) == 0);
    resp_proto_ops.idle(s);
    api_fixture_resp_close(s);
}

int main(void) {
    api_fixture_init();
    TEST(test_pipelined_in_order_any_cut);
    TEST(test_ids_ascend);
    TEST(test_errors);
    TEST(test_get_as_documented);
    TEST(test_multi_exec);
    TEST(test_protocol_error_closes);
    TEST(test_tooling_commands);
    TEST(test_anonymous_output_budget);
    TEST(test_command_docs);
    TEST(test_memory_limits);
    TEST(test_idle_gives_memory_back);
    api_fixture_done();
    return unit_done();
}
