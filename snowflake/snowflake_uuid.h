#ifndef LEAF_SNOWFLAKE_UUID_H
#define LEAF_SNOWFLAKE_UUID_H

/*
 * UUIDv7 (RFC 9562 section 5.7) made from snowflake IDs. Pure code: no I/O,
 * no clock, no randomness of its own (the caller passes the random bits in).
 *
 * RFC 9562's field layout, from the most significant bit:
 *   unix_ts_ms:48 | ver:4 (0111) | rand_a:12 | var:2 (10) | rand_b:62
 * leafd fills the random fields with the snowflake ID's parts (the
 * generator, snowflake_gen.h, issued it, so the bounded lead, the floor and
 * the reservation all hold for it):
 *   unix_ts_ms  the ID's time (the start of its tick), Unix milliseconds;
 *   counter     the ID's sequence, right-aligned in max(12, sequence bits)
 *               bits: rand_a, then the leftmost bits of rand_b (RFC 9562
 *               section 6.2, method 1, "fixed bit-length dedicated counter");
 *   node        datacenter << worker bits | worker (the layout's widths), next
 *               in rand_b: two nodes of a cluster never share a worker ID, so
 *               their UUIDs never collide, by construction;
 *   random      the rest of rand_b, from the caller's CSPRNG.
 * So a node's UUIDs ascend as its snowflake IDs do: by time, then counter.
 * When the counter of a millisecond is used up, the generator borrows the
 * next millisecond (the timestamp runs ahead, within the bounded lead), so a
 * UUID never repeats and never goes back. docs/id-shapes.md, "UUIDv7".
 *
 * Ownership: values only; any thread.
 */
#include <stddef.h>
#include <stdint.h>

#include "snowflake_id.h"
#include "status.h"

#define SNOWFLAKE_UUID_TEXT 36   /* 8-4-4-4-12 hex digits and hyphens, without the NUL */
#define SNOWFLAKE_UUID_RAND_A 12 /* the bits of rand_a */
#define SNOWFLAKE_UUID_RAND_B 62 /* the bits of rand_b */
#define SNOWFLAKE_UUID_MAX_MS ((INT64_C(1) << 48) - 1)

/* Where the parts sit in rand_a and rand_b, for a snowflake layout. */
struct snowflake_uuid_shape {
    int counter_bits; /* max(12, the layout's sequence bits): rand_a and the top of rand_b */
    int node_bits;    /* datacenter + worker bits, below the counter in rand_b */
    int worker_bits;  /* the node's low bits: the worker ID; above them the datacenter ID */
    int random_bits;  /* what is left of rand_b, at its bottom */
};

/* What a UUID of this shape says. */
struct snowflake_uuid_parts {
    int64_t unix_ms;
    int64_t counter;
    int64_t worker_id;
    int64_t datacenter_id; /* 0 without a datacenter field */
    uint64_t random;       /* the random bits, right-aligned */
};

/* The shape of UUIDs made from IDs of layout l. */
void snowflake_uuid_shape(const struct snowflake_layout *l, struct snowflake_uuid_shape *s);

/*
 * The UUID of snowflake ID id (layout l, epoch), random's low random_bits bits in its random
 * field: LEAF_OK, or LEAF_ERANGE for an ID l never issues or a time past 2^48 ms.
 */
leaf_status_t snowflake_uuid_from_id(const struct snowflake_layout *l, int64_t epoch, int64_t id,
                                     uint64_t random, uint8_t out[16]);

/* The canonical lowercase text, 36 characters, NUL-terminated (out holds 37). */
void snowflake_uuid_format(const uint8_t u[16], char *out);

/* Parses 36 characters of 8-4-4-4-12 hex digits (either case): LEAF_OK or LEAF_EINVAL. */
leaf_status_t snowflake_uuid_parse(const char *text, size_t len, uint8_t out[16]);

/*
 * Splits a UUID of shape s: LEAF_OK, or LEAF_EINVAL when it is not version 7
 * of RFC 9562's variant.
 */
leaf_status_t snowflake_uuid_decode(const struct snowflake_uuid_shape *s, const uint8_t u[16],
                                    struct snowflake_uuid_parts *out);

/*
 * NULL when the parts could be those of a UUID leafd made with layout l (its epoch, unit,
 * sequence width and datacenter), seen at now_ms with the bounded lead max_lead_ms; else why it
 * cannot be one of leafd's (a static string). A UUIDv7 from another generator decodes as well,
 * and passes this check by chance only where its bits happen to fit (docs/id-shapes.md,
 * "Decoding a UUID").
 */
const char *snowflake_uuid_foreign(const struct snowflake_layout *l,
                                   const struct snowflake_uuid_parts *p, int64_t epoch,
                                   int64_t now_ms, int64_t max_lead_ms);

#endif
