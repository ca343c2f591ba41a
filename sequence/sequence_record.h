#ifndef LEAF_SEQUENCE_RECORD_H
#define LEAF_SEQUENCE_RECORD_H

/*
 * The two znode payloads of sequences, formatted and parsed as pure code
 * (libc and src/base only; no cJSON, so a 64-bit value never passes through
 * a double):
 *
 * - /leafd/{leaf.name}/sequences/{name}: the persisted high-water mark,
 *     {"max":9223372036854775807}
 *   Every ID ever issued of that sequence is <= max. The parser accepts JSON
 *   whitespace around the tokens and nothing else: one key "max", a
 *   non-negative integer without sign, fraction, exponent or leading zero.
 *   Anything else is refused, so the primary stops instead of guessing.
 *   A sequence whose home moved to another region carries a mark beside it,
 *     {"max":N,"moved":"eu-west"}
 *   (docs/regions.md, "Moving a home"): every ID this region ever issued of it
 *   is <= N, and this region never issues it again. Only
 *   sequence_record_parse_seq() reads the mark; the plain parser refuses it.
 *
 * - /leafd/{leaf.name}/primary/n_NNNNNNNNNN (EPHEMERAL_SEQUENTIAL): where the
 *   node that created it answers, for redirects:
 *     http=192.0.2.7:8080 resp=192.0.2.7:6380
 *   Fields are separated by single spaces; "http" is required, "resp" is
 *   absent when the node has no RESP port; unknown fields are skipped, so a
 *   newer node may add some. An address is host:port (host may be [v6]),
 *   printable, no spaces, port 1..65535.
 */
#include <stddef.h>
#include <stdint.h>

#include "status.h"

/* Bytes of a region's name in a moved mark, NUL included (zk/zk_region.h's names: 1-63 bytes
 * of [A-Za-z0-9._-]). */
#define SEQUENCE_MOVED_MAX 64

/* Room for {"max":<19 digits>,"moved":"<63 bytes>"} (or {"step":...}) and a NUL. */
#define SEQUENCE_RECORD_MAX_LEN 112

/* Writes {"max":N} (NUL-terminated); returns its length, 0 when N < 0 or cap is short. */
size_t sequence_record_format_max(char *buf, size_t cap, int64_t max);

/* LEAF_EINVAL when malformed, LEAF_ERANGE when the number exceeds INT64_MAX. */
leaf_status_t sequence_record_parse_max(const char *buf, size_t len, int64_t *max);

/* Writes {"max":N,"moved":"region"}; 0 when N < 0, region is not a name or cap is short. */
size_t sequence_record_format_moved(char *buf, size_t cap, int64_t max, const char *region);

/*
 * A sequence's record, with or without the moved mark: *max, and the region it
 * moved to in moved[0..SEQUENCE_MOVED_MAX) ("" when unmarked). The same
 * whitespace rules as sequence_record_parse_max(); "moved" must follow "max"
 * and hold a region's name. LEAF_EINVAL when malformed, LEAF_ERANGE as above.
 */
leaf_status_t sequence_record_parse_seq(const char *buf, size_t len, int64_t *max,
                                        char moved[SEQUENCE_MOVED_MAX]);

/*
 * The same shape with another key (1-16 bytes of [a-z]): a keyed space's
 * definition, /leafd/{leaf.name}/keyed/{space}, is {"step":N}
 * (docs/keyed-sequences.md). format_int: 0 when v < 0 or cap is short.
 */
size_t sequence_record_format_int(char *buf, size_t cap, const char *key, int64_t v);
leaf_status_t sequence_record_parse_int(const char *buf, size_t len, const char *key, int64_t *v);

#define SEQUENCE_ADDR_MAX 64 /* bytes of an address, NUL included */

struct sequence_node_addr {
    char http[SEQUENCE_ADDR_MAX]; /* "host:port" */
    char resp[SEQUENCE_ADDR_MAX]; /* "host:port", or "" when the node has no RESP port */
};

/*
 * Writes the election node's data (NUL-terminated); resp may be NULL or "".
 * Returns its length, 0 when an address is invalid or cap is short.
 */
size_t sequence_record_format_node(char *buf, size_t cap, const char *http, const char *resp);

/* LEAF_EINVAL when "http" is missing, a field is repeated or an address is invalid. */
leaf_status_t sequence_record_parse_node(const char *buf, size_t len, struct sequence_node_addr *a);

/* Where nodes of the election answer: what an election node records (the
 * primary's for redirects, every node's for CLUSTER SLOTS and zk-inspect). */
#define SEQUENCE_PEER_ADDR 64
#define SEQUENCE_MAX_PEERS 16

/* Where the primary answers, for redirects; known = 0 while none is elected. */
struct sequence_where {
    int known;
    char http[SEQUENCE_PEER_ADDR];
    char resp[SEQUENCE_PEER_ADDR]; /* "" when the primary has no RESP port */
};

/* One node in line for the election (CLUSTER SLOTS, zk-inspect). */
struct sequence_peer {
    long long seq; /* the counter of its election node */
    int primary;   /* the lowest: the primary */
    int self;      /* this node */
    char http[SEQUENCE_PEER_ADDR];
    char resp[SEQUENCE_PEER_ADDR];
};

#endif
