#ifndef LEAFD_CLIENT_H
#define LEAFD_CLIENT_H

/*
 * libleafd-client: leafd's IDs in-process. The library keeps ranges of IDs
 * fetched ahead from the listed leafd nodes (a background thread refills
 * them, with a prefetch distance that follows the rate of the callers), so a
 * call served from the buffer is one atomic step: no lock shared with the
 * refill, no system call, no allocation. Sequences and keyed sequences are
 * served strictly instead: nothing ahead, every ID issued after its call
 * began, concurrent calls for one key sharing one round trip. The manual page
 * is leafd_client(3); the guarantees are in docs/reference/guarantees.md ("The
 * client library").
 *
 * Every function returns 0 or a negative LEAFD_CLIENT_E* code below;
 * leafd_client_strerror() names it. A handle is shared by any number of
 * threads; leafd_client_close() must not race with calls on the same handle.
 */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The error codes, one row each, as libuv's UV_ERRNO_MAP: XX(name, value, text). The values are
 * stable (the ABI: a code keeps its number for ever; a new code takes the next one down), the text
 * is leafd_client_strerror()'s. The Python binding (src/client/python/leafd/__init__.py) and the
 * manual page (docs/man/leafd_client.3) list the same rows, which tests/unit/test_client_codes.c
 * checks against this table.
 *   EINVAL        a bad argument: key, count, handle
 *   EUNAVAILABLE  buffer empty and no node served in time (a strict key: within timeout.ms)
 *   EAUTH         the nodes refused the credentials (401/403)
 *   ENOTFOUND     the nodes do not know the key (404 unknown_tag)
 *   ENOMEM        out of memory, or more keys than keys.max
 *   EREFUSED      the nodes refused the request (another 4xx)
 *   EORDER        a strict key: a node answered an ID not above the last one the handle handed
 *                 out for the key; refused, never returned (docs/reference/guarantees.md)
 */
#define LEAFD_CLIENT_ERRNO_MAP(XX)                                                                 \
    XX(EINVAL, -1, "invalid argument")                                                             \
    XX(EUNAVAILABLE, -2, "no node available and the buffer is empty")                              \
    XX(EAUTH, -3, "credentials refused")                                                           \
    XX(ENOTFOUND, -4, "unknown key")                                                               \
    XX(ENOMEM, -5, "out of memory or too many keys")                                               \
    XX(EREFUSED, -6, "refused by the nodes")                                                       \
    XX(EORDER, -7, "a node answered an ID out of order; refused")

typedef enum {
#define LEAFD_CLIENT_ERRNO_ENUM(name, value, text) LEAFD_CLIENT_##name = (value),
    LEAFD_CLIENT_ERRNO_MAP(LEAFD_CLIENT_ERRNO_ENUM)
#undef LEAFD_CLIENT_ERRNO_ENUM
} leafd_client_errno_t;

/* The most IDs of one leafd_client_next_many() call (the largest range a node hands out in one
 * request, /api/segment/range's count); a larger n is refused with LEAFD_CLIENT_EINVAL. */
#define LEAFD_CLIENT_MANY_MAX 1000000

typedef struct leafd_client leafd_client;

/* The library exports these functions only. */
#if defined(__GNUC__)
#define LEAFD_CLIENT_API __attribute__((visibility("default")))
#else
#define LEAFD_CLIENT_API
#endif

/*
 * Opens a handle on the nodes of endpoints ("http://10.0.0.5:8080,https://..."),
 * with options "key=value;..." (NULL or "" for none; the keys are in
 * leafd_client(3)). Starts the refill thread; fetches nothing before the
 * first call. NULL on failure, with the reason in err (errlen bytes).
 */
LEAFD_CLIENT_API leafd_client *leafd_client_open(const char *endpoints, const char *options,
                                                 char *err, size_t errlen);

/* One ID of key ("segment:<tag>", "snowflake:<key>", or strictly "sequence:<name>" or
 * "keyed:<space>:<key>") into *id. Each thread remembers the last key it named on a handle: a
 * loop on one key costs one strcmp() more than a key handle's call. */
LEAFD_CLIENT_API int leafd_client_next(leafd_client *c, const char *key, int64_t *id);

/* n IDs of key into ids[0..n-1], 1 <= n <= LEAFD_CLIENT_MANY_MAX; segment IDs ascending. All n
 * or none. A strict key's n (at most 10000) are consecutive IDs of one round trip. */
LEAFD_CLIENT_API int leafd_client_next_many(leafd_client *c, const char *key, int64_t *ids,
                                            size_t n);

/*
 * A key looked up once: *out is valid until leafd_client_close(). The calls on it are those
 * above without the key's lookup (the fastest path: one atomic step); the same IDs, the same
 * guarantees. 0, or LEAFD_CLIENT_EINVAL (a malformed key), LEAFD_CLIENT_ENOMEM (keys.max).
 */
typedef struct leafd_client_key leafd_client_key;
LEAFD_CLIENT_API int leafd_client_key_get(leafd_client *c, const char *key, leafd_client_key **out);
LEAFD_CLIENT_API int leafd_client_key_next(leafd_client_key *k, int64_t *id);
LEAFD_CLIENT_API int leafd_client_key_next_many(leafd_client_key *k, int64_t *ids, size_t n);

/*
 * The calls on the key (by name or through k, from any thread) that found its buffer empty and
 * waited for the refill thread, that is for the network, since the key's first use. A call
 * served from the buffer never adds to it; at a steady rate with a node up it stays still
 * (docs/BENCHMARKS.md, "IDs in-process"). For a strict key (no buffer): its round trips, so the
 * calls divided by it is the average batch. Read without a lock, from any thread.
 */
LEAFD_CLIENT_API uint64_t leafd_client_key_waits(const leafd_client_key *k);

/*
 * The text of the calling thread's last failed call on c, as libpq's PQerrorMessage(): the key,
 * the code's text and what the nodes said ("segment:order: no node available and the buffer is
 * empty: connect(127.0.0.1:8080) failed: Connection refused; skipping 127.0.0.1:8080 for a
 * while"); "" when none. Valid until the thread's next call on the library. Never holds a
 * secret.
 */
LEAFD_CLIENT_API const char *leafd_client_error(const leafd_client *c);

/*
 * Where the refill thread's lines go (a node fails or serves again, a key is refused): fn(arg,
 * line) from the refill thread, instead of standard error (log=0: nowhere). fn NULL: standard
 * error again. fn must not call the library on c.
 */
typedef void (*leafd_client_log_fn)(void *arg, const char *line);
LEAFD_CLIENT_API void leafd_client_set_log(leafd_client *c, leafd_client_log_fn fn, void *arg);

/* Stops the refill thread and frees the handle; its unused IDs are a gap. */
LEAFD_CLIENT_API void leafd_client_close(leafd_client *c);

/* The text of an error code ("no node available", ...). */
LEAFD_CLIENT_API const char *leafd_client_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif
