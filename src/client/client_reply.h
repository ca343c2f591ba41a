#ifndef CLIENT_REPLY_H
#define CLIENT_REPLY_H

/*
 * What leafd's ID endpoints answer, read without a JSON library: an ID has up
 * to 63 bits and a JSON number is a double, so the digits are read here, as
 * integers. Pure (unit-tested).
 */
#include <stddef.h>
#include <stdint.h>

/*
 * An answer is checked whole before any of its IDs is used: one not from a node (a cut body,
 * another server's bytes) is refused, never handed out.
 */

/* {"biz_tag":T,"start":"<id>","end":"<id>"} of /api/segment/range?count=want: 0 with
 * 1 <= start <= end and at most want IDs, or -1 when malformed. */
int client_reply_range(const char *body, size_t len, int64_t want, int64_t *start, int64_t *end);

/* IDs one per line (/api/snowflake/get/{key}?count=want, '\n' between them): how many were
 * read into ids, 1 to want, each positive and above the one before; -1 when a line is not such
 * an ID, or there are more than want. */
int64_t client_reply_list(const char *body, size_t len, int64_t *ids, int64_t want);

/* The "code" of an error answer ({"code":"unknown_tag",...}) into out; "" when none. */
void client_reply_code(const char *body, size_t len, char *out, size_t outlen);

#endif
