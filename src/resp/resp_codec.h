#ifndef LEAF_RESP_CODEC_H
#define LEAF_RESP_CODEC_H

/*
 * RESP's codec: the Redis protocol (RESP) without any I/O: bytes go in and
 * commands come out (resp_parse), replies are appended to a growable buffer
 * (resp_reply_*). The connection module over it is resp_conn.c, as
 * http_conn.c is HTTP's over llhttp.
 * libc and src/base only, so it is unit-tested and fuzzed alone; the server
 * layer owns the sockets and the command table.
 *
 * The parser takes both request forms Redis takes: multibulk arrays of bulk
 * strings, as every client library sends them, and inline commands, as typed
 * in telnet. It is incremental: a frame may be cut anywhere, and the result is
 * the same as if it had arrived in one piece. Argument bytes are copied into
 * the parser's own storage, so the caller may reuse its read buffer at once.
 *
 * It follows Redis's networking.c, with these differences, all stricter and
 * all errors Redis would report too or frames Redis would misread:
 * - multibulk length lines must end in CRLF. Redis looks for the CR only, so
 *   "*1\n..." fails there too (the LF becomes part of the number), but the
 *   byte after the CR goes unchecked; here it must be LF. Lines that can no
 *   longer be a number are refused on the spot, not after 64 KiB.
 * - the two bytes after a bulk payload must be CRLF (Redis skips them).
 * - limits: RESP_MAX_BULK (Redis: 512 MB), RESP_MAX_ARGS (Redis: INT_MAX),
 *   also for inline commands, and RESP_MAX_INLINE counted on the line itself
 *   (Redis counts only while no LF has arrived).
 *
 * Ownership: the connection that embeds a struct resp_parser; one thread.
 */
#include <stddef.h>
#include <stdint.h>

#include "sbuf.h"
#include "status.h"

#define RESP_MAX_BULK (64u << 10)   /* a bulk string over 64 KiB is refused */
#define RESP_MAX_ARGS 1024          /* more arguments are refused */
#define RESP_MAX_INLINE (64u << 10) /* an inline command line longer than this is refused */
/*
 * What a whole command may hold, when the caller sets a limit
 * (resp_parser_set_max): its bytes plus RESP_ARG_COST per declared argument,
 * checked on each length line, before the payload is stored.
 */
#define RESP_ARG_COST 16

/*
 * One command. Valid until the next resp_parse(), resp_parser_release_idle()
 * or resp_parser_free() on the same parser.
 * argv[i] has argvlen[i] bytes (any bytes, NUL included) and is followed by a
 * NUL that is not counted, so a text argument can be used as a C string.
 */
struct resp_cmd {
    int argc;
    const char *const *argv;
    const size_t *argvlen;
};

/* The longest length line that can be valid ("-9223372036854775808"). */
#define RESP_LINE_MAX 20

struct resp_parser {
    int state;        /* enum resp_state in resp_codec.c */
    int line_len;     /* bytes of the length line (after '*' or '$') so far */
    int line_cr;      /* the length line's CR has been seen */
    int args_left;    /* elements of the multibulk command still to come */
    size_t bulk_left; /* payload bytes of the current element still to come */
    char line[RESP_LINE_MAX];

    /*
     * Storage for the command being received, allocated on its first byte
     * and kept for the next command until resp_parser_release_idle(): the
     * arguments packed one after another, each followed by a NUL (an inline
     * line is kept here raw and split in place).
     */
    char *buf;
    size_t len, cap;
    const char **argv;
    size_t *argvlen;
    int argc, args_cap;

    size_t max_command; /* 0: only the limits above; else see resp_parser_set_max */
    const char *err;    /* the protocol error, once there is one (sticky) */
    leaf_status_t err_status;
    char err_buf[48]; /* for the error that names a byte */
};

void resp_parser_init(struct resp_parser *p);
void resp_parser_free(struct resp_parser *p);

/*
 * Frees the storage when no command is half-received (call when the
 * connection goes idle: idle connections must cost almost nothing). The
 * parser stays usable; it allocates again on the next command's first byte.
 */
void resp_parser_release_idle(struct resp_parser *p);

/*
 * Limits each command from the next length line on to max bytes in all
 * (RESP_ARG_COST per argument included); 0 lifts it. A command over it is a
 * protocol error ("Protocol error: command too large"), found before its
 * payload is stored.
 */
void resp_parser_set_max(struct resp_parser *p, size_t max);

/* 1 while a command is partly received (for request timeouts). */
int resp_parser_in_command(const struct resp_parser *p);

/*
 * Consumes bytes from data[0..len) and stops after one complete command.
 * LEAF_OK: *used bytes consumed, *cmd is the command (argc >= 1; an empty
 *   inline line or "*0\r\n" is skipped, not returned).
 * LEAF_EAGAIN: all len bytes consumed (*used == len) and buffered; more are
 *   needed.
 * LEAF_EINVAL: protocol error; *err is a message worded as Redis words it
 *   (e.g. "Protocol error: invalid multibulk length"), valid while the parser
 *   lives. The caller replies "-ERR <err>" and closes the connection. The
 *   error is sticky: later calls return it again.
 * LEAF_ENOMEM: storage for the command could not be allocated; *err says so.
 *   Handle it as LEAF_EINVAL.
 * *used is set in every case (on an error: the bytes up to the bad one).
 */
leaf_status_t resp_parse(struct resp_parser *p, const char *data, size_t len, size_t *used,
                         struct resp_cmd *cmd, const char **err);

/*
 * Looks at the command data[0..len) starts with, without a parser and
 * without copying, for a caller that wants to get ready for a command before
 * its turn (the keys of pipelined commands): the bytes it takes when it is a
 * whole multibulk command of 1 to max arguments, each as clean as the parser
 * would want it, with argv[i] / argvlen[i] pointing into data (not
 * NUL-terminated) and *argc set; 0 otherwise (incomplete, inline, too many
 * arguments, anything odd). resp_parse() still parses every command on its
 * turn: this answer is a hint only.
 */
size_t resp_peek(const char *data, size_t len, const char **argv, size_t *argvlen, int max,
                 int *argc);

/* 1 when argument i exists and equals lower (ASCII lower case) ignoring case. */
int resp_arg_is(const struct resp_cmd *c, int i, const char *lower);

/*
 * The reply writer appends to b; allocation failures are sticky in b (see
 * sbuf.h). resp3 selects the RESP3 forms where they differ from RESP2.
 * Texts of simple strings and errors must not hold CR or LF: they are
 * replaced by spaces, as Redis does.
 */
void resp_reply_simple(struct sbuf *b, const char *s);  /* +s\r\n */
void resp_reply_error(struct sbuf *b, const char *msg); /* -msg\r\n; msg starts with ERR, MOVED.. */
void resp_reply_errorf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void resp_reply_int(struct sbuf *b, int64_t v);                /* :v\r\n */
void resp_reply_bulk(struct sbuf *b, const char *s, size_t n); /* $n\r\n...\r\n */
void resp_reply_null(struct sbuf *b, int resp3);               /* $-1\r\n or _\r\n */
void resp_reply_array(struct sbuf *b, size_t n);               /* *n\r\n */
void resp_reply_map(struct sbuf *b, size_t npairs, int resp3); /* %n\r\n or *2n\r\n */
void resp_reply_set(struct sbuf *b, size_t n, int resp3);      /* ~n\r\n or *n\r\n */
/* =N\r\ntxt:...\r\n (N = n + 4) or a bulk string */
void resp_reply_verbatim(struct sbuf *b, const char *s, size_t n, int resp3);

#endif
