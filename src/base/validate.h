#ifndef LEAF_VALIDATE_H
#define LEAF_VALIDATE_H

/*
 * Validation of request input shared by the HTTP handlers: business tags
 * ({key}, biz_tag) and the ?count= parameter. Pure code, unit-tested in
 * tests/unit/test_validate.c. Inputs are spans (not NUL-terminated), as the
 * HTTP parser hands them over.
 */
#include <stddef.h>

#include "status.h"

#define VALIDATE_TAG_MAX 128 /* leaf_alloc.biz_tag is varchar(128) */
#define VALIDATE_COUNT_MAX 10000

/* 1 when s is 1..128 bytes of [A-Za-z0-9._:-], else 0. */
int validate_tag(const char *s, size_t len);

/*
 * 1 when s is a tag that can name a sequence: a sequence is a ZooKeeper node,
 * /leafd/{leaf.name}/sequences/{name}, so . and .. (which name no node) are not.
 */
int validate_sequence_name(const char *s, size_t len);

/*
 * A business numbering's counter is a sequence named VALIDATE_NUMBERING_MARK +
 * the numbering's name (docs/id-shapes.md, "Business numbers"): a name that
 * validate_sequence_name() refuses, so no sequence route, RESP command or
 * admin call can name, move or pre-create it.
 */
#define VALIDATE_NUMBERING_MARK '@'

/* 1 when s names a stored sequence: a sequence name, or the mark and a sequence name. */
int validate_stored_sequence_name(const char *s, size_t len);

/*
 * Parses a count: decimal digits only (no sign, no spaces), at most 10 of
 * them (leading zeros allowed), value 1..10000. LEAF_OK and *out set, or
 * LEAF_EINVAL and *out untouched.
 */
leaf_status_t validate_count(const char *s, size_t len, int *out);

/*
 * Parses "a.b.c.d:port" (a dotted-quad IPv4 address, port 1..65535, nothing
 * else): what a node registers as its identity in ZooKeeper. LEAF_OK with
 * the address in ip (NUL-terminated, >= 16 bytes) and *port set, or
 * LEAF_EINVAL. Text read from ZooKeeper or a peer is used as an address
 * or in a link only when it passes.
 */
leaf_status_t validate_ipv4_port(const char *s, size_t len, char *ip, int *port);

#endif
