#ifndef CLIENT_KIND_H
#define CLIENT_KIND_H

/*
 * The kinds of key the library serves, one row each of CLIENT_KINDS: the daemon's ID mode the
 * key names (src/ids/ids_mode.h: its "<mode>:" prefix and its key rule, compiled into the
 * library so that it accepts exactly the keys a node accepts), how the library serves it, and
 * the path its IDs are asked at.
 *
 * Served by prefetch (segment, snowflake): ranges or batches fetched ahead by the refill thread
 * (client_refill.c). Served strictly (sequence, keyed): nothing ahead; every ID is asked for by
 * a call and issued by the key's primary after the call began (client_strict.c; the guarantee:
 * docs/reference/guarantees.md, "The client library"). Pure: no I/O.
 */
#include <stddef.h>
#include <stdint.h>

#include "ids_mode.h"

enum client_serve {
    CLIENT_SERVE_RANGE, /* segment ranges, refilled ahead */
    CLIENT_SERVE_LIST,  /* batches of listed IDs, refilled ahead */
    CLIENT_SERVE_STRICT /* asked for by the calls, batched, nothing ahead */
};

/* kind, the daemon's mode, how it is served, the path of its IDs (the key's tail follows). */
#define CLIENT_KINDS(X)                                                                            \
    X(CLIENT_SEGMENT, IDS_SEGMENT, CLIENT_SERVE_RANGE, "/api/segment/range/")                      \
    X(CLIENT_SNOWFLAKE, IDS_SNOWFLAKE, CLIENT_SERVE_LIST, "/api/snowflake/get/")                   \
    X(CLIENT_SEQUENCE, IDS_SEQUENCE, CLIENT_SERVE_STRICT, "/api/sequence/get/")                    \
    X(CLIENT_KEYED, IDS_KEYED, CLIENT_SERVE_STRICT, "/api/keyed/get/")

enum client_kind {
#define CLIENT_KIND_ENUM(kind, mode, serve, path) kind,
    CLIENT_KINDS(CLIENT_KIND_ENUM)
#undef CLIENT_KIND_ENUM
        CLIENT_KIND_COUNT
};

/* The longest key: "keyed:" and a spaced key (64 + ':' + 200 bytes), and a NUL. */
#define CLIENT_KEY_MAX (sizeof("keyed:") + IDS_MODE_HTTP_KEY_MAX)

/* A row of CLIENT_KINDS. */
struct client_kind_info {
    enum ids_mode mode;
    enum client_serve serve;
    const char *path;
};

const struct client_kind_info *client_kind_info(enum client_kind kind);

/* The kind of key ("<mode>:<key>"), its key valid by the mode's rule: 0 with *kind and *prefix
 * (the bytes of "<mode>:"), or -1. */
int client_kind_parse(const char *key, enum client_kind *kind, size_t *prefix);

/* The path that asks for count IDs of the key whose tail (after "<mode>:") is tail: the row's
 * path, the tail (a spaced key as "{space}/{key}", the key percent-encoded), "?count=N". The
 * length written, or 0 when it does not fit cap. */
size_t client_kind_path(enum client_kind kind, const char *tail, int64_t count, char *out,
                        size_t cap);

#endif
