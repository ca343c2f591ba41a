#ifndef CLIENT_HEAD_H
#define CLIENT_HEAD_H

/*
 * The head of an HTTP/1.x answer as the library reads it (client_http.c): its status, its
 * Content-Length, whether the node closes the connection after it, and where a redirect points.
 * Pure: the unit tests and the fuzz harness (tests/fuzz/fuzz_client_reply.c) drive it with any
 * bytes.
 *
 * A length is what the answer's bytes say, never more than the caller can hold: digits only (no
 * sign, no blank inside, at most 19), at most max_body, the same in every Content-Length line.
 * An answer without one, or with Transfer-Encoding (leafd never sends it), is refused.
 */
#include <stddef.h>

struct client_head {
    int status;      /* 100..599 */
    size_t body_len; /* the Content-Length, at most the caller's max_body */
    int close_after; /* HTTP/1.0, or Connection: close */
    /* The Location line's value (a redirect to the primary or the slot's owner), blanks
     * trimmed, as an offset into the head and a length; length 0 when there is none. */
    size_t location_off, location_len;
};

/* Reads head[0..len) (the status line and the header lines, up to the blank line): 0, or -1 when
 * it is malformed or announces a body over max_body. Reads nothing past head + len. */
int client_head_parse(const char *head, size_t len, size_t max_body, struct client_head *h);

#endif
