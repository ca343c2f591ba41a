#ifndef CLIENT_REPLY_H
#define CLIENT_REPLY_H

/*
 * What leafd's ID endpoints answer, read without a JSON library: an ID has up
 * to 63 bits and a JSON number is a double, so the digits are read here, as
 * integers. Pure (unit-tested).
 */
#include <stddef.h>
#include <stdint.h>

/* {"biz_tag":T,"start":"<id>","end":"<id>"} of /api/segment/range: 0, or -1 when malformed. */
int client_reply_range(const char *body, size_t len, int64_t *start, int64_t *end);

/* IDs one per line (/api/snowflake/get/{key}?count=N): how many were read into ids (at most
 * max), or -1 when a line is not an ID. */
int64_t client_reply_list(const char *body, size_t len, int64_t *ids, int64_t max);

/* The "code" of an error answer ({"code":"unknown_tag",...}) into out; "" when none. */
void client_reply_code(const char *body, size_t len, char *out, size_t outlen);

#endif
