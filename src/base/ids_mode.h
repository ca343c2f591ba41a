#ifndef LEAF_IDS_MODE_H
#define LEAF_IDS_MODE_H

/*
 * The ID modes, each written once. Every layer that knows a mode derives it
 * from this table: the HTTP route table (the routes' mode column and the
 * GET .../get/{key} prefix, src/tables/table_http.c), the RESP key spaces
 * ("<name>:<key>", src/commands/command_ids.c), the grant model (a key or
 * pattern "<name>:...", src/auth/auth_grant.h), and the mode label of
 * leafd_ids_issued_total (src/metrics/metrics.c). It lives in src/base, the
 * lowest layer, because src/auth (below the doors) needs it too.
 *
 * X(enum, name, HTTP prefix, key word, dense, batch, metric label, text)
 *   name    the mode's word: the RESP key prefix is name + ':', and a grant
 *           names the mode by it (auth_grant.h)
 *   HTTP    the path of GET <prefix>{key}[?count=N]
 *   key     what the key names, in the RESP BAD_KEY message
 *   dense   1: count IDs are consecutive, so INCRBY can answer a block
 *   batch   1: identical INCRs pipelined in one read take their IDs in one
 *           call, the first for all (src/commands/command_ids.c, stash_fill):
 *           one lock and one clock reading per batch instead of per ID.
 *           0 for sequences: each ID goes through the primary's fence.
 *   metric  the mode label of leafd_ids_issued_total counting its IDs
 *           (opaque IDs are segment IDs); NULL: counted in a family of its
 *           own (leafd_sequence_issued_total)
 *   text    1: the IDs are answered as text, never as integers: UUIDv7s,
 *           made from the node's snowflake IDs, and business numbers, made
 *           from a numbering's sequence (src/door/door_ids.c). INCR, INCRBY
 *           and LEAF.IDS refuse the key space; LEAF.UUID and LEAF.NUMBER
 *           answer it
 *
 * The files a new mode touches:
 *   src/base/ids_mode.h      its row here;
 *   src/door/door_ids.c           how it issues: issue_<mode> and its case in issue_mode;
 *   src/tables/table_http.c         its GET route row (path NULL: the prefix is this row's; issues
 * 1); src/api/api.h, api.c     its one-line GET handler, api_<mode>_get; docs/reference/, docs/ the
 * words (the route table is generated). Derived with no edit: the RESP key space and the BAD_KEY
 * message (command_ids.c), INCRBY's dense check, the grant mode (auth_grant.c), and the
 * leafd_ids_issued_total label and count (src/door/door_ids.c counts every mode,
 * metrics.c sums by label).
 */
#include <stddef.h>

#include "status.h"

#define IDS_MODES(X)                                                                               \
    X(IDS_SNOWFLAKE, "snowflake", "/api/snowflake/get/", "key", 0, 1, "snowflake", 0)              \
    X(IDS_SEGMENT, "segment", "/api/segment/get/", "biz_tag", 1, 1, "segment", 0)                  \
    X(IDS_SEQUENCE, "sequence", "/api/sequence/get/", "name", 1, 0, NULL, 0)                       \
    X(IDS_OPAQUE, "opaque", "/api/opaque/get/", "biz_tag", 0, 1, "segment", 0)                     \
    X(IDS_UUID, "uuid", "/api/uuid/get/", "key", 0, 0, "uuid", 1)                                  \
    X(IDS_NUMBER, "number", "/api/number/get/", "name", 0, 0, "number", 1)

enum ids_mode {
#define IDS_MODE_ENUM(e, name, http, key, dense, batch, metric, text) e,
    IDS_MODES(IDS_MODE_ENUM)
#undef IDS_MODE_ENUM
        IDS_MODE_COUNT
};

/* The longest mode name ("snowflake"), in bytes, as a constant expression. */
union ids_mode_name_room {
#define IDS_MODE_ROOM(e, name, http, key, dense, batch, metric, text) char e[sizeof(name)];
    IDS_MODES(IDS_MODE_ROOM)
#undef IDS_MODE_ROOM
};
#define IDS_MODE_NAME_MAX (sizeof(union ids_mode_name_room) - 1)

/* A row of IDS_MODES. */
struct ids_mode_info {
    const char *name;
    const char *key_prefix; /* name + ':' */
    size_t key_prefix_len;
    const char *http_prefix;
    size_t http_prefix_len;
    const char *key_word;
    int dense;
    int batch;
    const char *metric; /* NULL: not a series of leafd_ids_issued_total */
    int text;           /* answered as text (UUIDs), not integers */
};

/* The row of mode, or NULL when out of range. */
const struct ids_mode_info *ids_mode_info(enum ids_mode mode);

/* The mode's name ("segment"), or NULL when out of range. */
const char *ids_mode_name(enum ids_mode mode);

/* The mode named by s (n bytes, exact, case-sensitive): LEAF_OK, or LEAF_EINVAL. */
leaf_status_t ids_mode_parse(const char *s, size_t n, enum ids_mode *out);

#endif
