/*
 * libFuzzer harness for the Redis protocol module (src/resp, pure code,
 * linked alone as leaf_resp): the request parser and the reply writer.
 *
 * The first input byte seeds the chunk sizes; the rest is what a client
 * sent. Checked, besides crashes and sanitizer reports:
 * - cut into random chunks (and with resp_parser_release_idle() between
 *   them) the stream gives the same commands, the same error and the same
 *   half-received state as when it arrives whole;
 * - every command is within the limits: 1 <= argc <= RESP_MAX_ARGS, each
 *   argument at most RESP_MAX_BULK bytes and followed by a NUL; LEAF_OK
 *   consumed at least one byte, LEAF_EAGAIN all of them;
 * - every command, written back as a multibulk array with the reply writer,
 *   parses to the same command (round trip);
 * - an error or simple-string reply built from an argument holds no CR or
 *   LF before its final CRLF;
 * - resp_peek(), when it answers, answers what resp_parse() does: the same
 *   bytes and the same arguments.
 */
#include <stdint.h>
#include <string.h>

#include "resp_codec.h"

struct outcome {
    struct sbuf cmds; /* every command, encoded as a multibulk array */
    const char *err;  /* the protocol error, or NULL */
    int in_command;   /* a command was left half-received */
};

static uint32_t rng_next(uint32_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static void check_line_reply(const char *arg) {
    struct sbuf b = SBUF_INIT;
    resp_reply_error(&b, arg);
    resp_reply_simple(&b, arg);
    for (size_t i = 0, lines = 0; i < b.len; i++) {
        if ((b.data[i] == '\r') != (i + 1 < b.len && b.data[i + 1] == '\n')) {
            __builtin_trap(); /* a CR not starting the CRLF, or a bare LF */
        }
        lines += b.data[i] == '\n';
        if (lines > 2) {
            __builtin_trap();
        }
    }
    sbuf_free(&b);
}

static void encode(struct sbuf *out, const struct resp_cmd *c) {
    if (c->argc < 1 || c->argc > RESP_MAX_ARGS) {
        __builtin_trap();
    }
    resp_reply_array(out, (size_t)c->argc);
    for (int i = 0; i < c->argc; i++) {
        if (c->argvlen[i] > RESP_MAX_BULK || c->argv[i][c->argvlen[i]] != '\0') {
            __builtin_trap();
        }
        resp_reply_bulk(out, c->argv[i], c->argvlen[i]);
    }
    check_line_reply(c->argv[0]);
}

/* Parses one chunk to its end; 0 to go on, -1 after an error. */
static int feed(struct resp_parser *p, const char *d, size_t n, struct outcome *o) {
    size_t off = 0;
    for (;;) {
        size_t used;
        struct resp_cmd c;
        leaf_status_t rc = resp_parse(p, d + off, n - off, &used, &c, &o->err);
        if (used > n - off) {
            __builtin_trap();
        }
        off += used;
        if (rc == LEAF_OK) {
            if (used == 0) {
                __builtin_trap();
            }
            encode(&o->cmds, &c);
        } else if (rc == LEAF_EAGAIN) {
            if (off != n) {
                __builtin_trap();
            }
            return 0;
        } else {
            if (o->err == NULL || (rc != LEAF_EINVAL && rc != LEAF_ENOMEM)) {
                __builtin_trap();
            }
            return -1;
        }
    }
}

/* seed 0: the whole stream at once; else random chunks of 1..max bytes. */
static void run(struct resp_parser *p, const char *d, size_t n, uint32_t seed, size_t max,
                struct outcome *o) {
    resp_parser_init(p);
    sbuf_init(&o->cmds, 0);
    o->err = NULL;
    size_t pos = 0;
    int failed = 0;
    while (pos < n && !failed) {
        size_t k = seed == 0 ? n : rng_next(&seed) % max + 1;
        k = k < n - pos ? k : n - pos;
        failed = feed(p, d + pos, k, o);
        pos += k;
        if (seed != 0 && (rng_next(&seed) & 3) == 0) {
            resp_parser_release_idle(p);
        }
    }
    o->in_command = resp_parser_in_command(p);
}

static void round_trip(const struct sbuf *cmds) {
    struct resp_parser p;
    struct outcome back;
    run(&p, cmds->data, cmds->len, 0, 0, &back);
    if (back.err != NULL || back.in_command || back.cmds.len != cmds->len ||
        memcmp(back.cmds.data, cmds->data, cmds->len) != 0) {
        __builtin_trap();
    }
    resp_parser_free(&p);
    sbuf_free(&back.cmds);
}

/* resp_peek() of the stream's start, when it answers, against a parser's first command. */
static void peek_agrees(const char *in, size_t n) {
    const char *argv[8];
    size_t argvlen[8];
    int argc = 0;
    size_t used = resp_peek(in, n, argv, argvlen, 8, &argc);
    if (used == 0) {
        return;
    }
    struct resp_parser p;
    struct resp_cmd c;
    const char *err = NULL;
    size_t got = 0;
    resp_parser_init(&p);
    if (resp_parse(&p, in, n, &got, &c, &err) != LEAF_OK || got != used || c.argc != argc) {
        __builtin_trap(); /* peek answered where the parser does not agree */
    }
    for (int i = 0; i < argc; i++) {
        if (c.argvlen[i] != argvlen[i] || memcmp(c.argv[i], argv[i], argvlen[i]) != 0) {
            __builtin_trap();
        }
    }
    resp_parser_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) {
        return 0;
    }
    uint32_t seed = (uint32_t)data[0] * 2654435761u | 1;
    size_t max = (size_t)(data[0] & 15) * 4 + 1;
    const char *in = (const char *)data + 1;
    size_t n = size - 1;

    struct resp_parser whole_p, cut_p;
    struct outcome whole, cut;
    run(&whole_p, in, n, 0, 0, &whole);
    run(&cut_p, in, n, seed, max, &cut);
    if (whole.cmds.len != cut.cmds.len ||
        (cut.cmds.len > 0 && memcmp(whole.cmds.data, cut.cmds.data, cut.cmds.len) != 0) ||
        (whole.err == NULL) != (cut.err == NULL) ||
        (whole.err != NULL && strcmp(whole.err, cut.err) != 0) ||
        whole.in_command != cut.in_command) {
        __builtin_trap(); /* the result depends on where the stream was cut */
    }
    if (whole.cmds.failed) {
        __builtin_trap();
    }
    if (whole.cmds.len > 0) {
        round_trip(&whole.cmds);
    }
    peek_agrees(in, n);
    resp_parser_free(&whole_p);
    resp_parser_free(&cut_p);
    sbuf_free(&whole.cmds);
    sbuf_free(&cut.cmds);
    return 0;
}
