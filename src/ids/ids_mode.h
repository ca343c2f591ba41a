#ifndef LEAF_IDS_MODE_H
#define LEAF_IDS_MODE_H

/*
 * The ID modes, each one row of IDS_MODES, and the row is the whole truth:
 * every layer that knows a mode expands this table and none keeps a list of
 * its own. The HTTP route table takes each mode's GET <prefix>{key} route
 * from it (src/tables/table_http.c); the RESP commands their key spaces
 * ("<name>:<key>"), the BAD_KEY message, INCRBY's dense check, the batching
 * of pipelined INCRs and the text-only refusals (src/commands/command_ids.c);
 * the grant model its mode words (src/auth/auth_grant.h); the metrics the
 * mode label of leafd_ids_issued_total (src/metrics/metrics.c). The issue
 * and text functions the rows name are bound in src/door/door_ids.c, the one
 * place they live, so the rooms below the doors expand the same rows for
 * their names only. It is a room of its own just above src/base because
 * src/auth and src/config, below the doors, need it too (docs/design.md).
 *
 * X(enum, name, HTTP prefix, key word, key rule, dense, batch, metric,
 *   text command, route, issue, text, prepare)
 *   name    the mode's word: the RESP key prefix is name + ':', and a grant
 *           names the mode by it (auth_grant.h)
 *   HTTP    the path of GET <prefix>{key}[?count=N]
 *   key     what the key names, in the RESP BAD_KEY message
 *   rule    what a key may hold (enum ids_key_rule, below): a tag, or a keyed
 *           space's "<space>:<key>" (docs/keyed-sequences.md), which HTTP
 *           writes "{space}/{key}" with the key percent-encoded; every
 *           protocol and the grants ask ids_mode_key_ok(), none has a rule
 *           of its own
 *   dense   1: count IDs are consecutive, so INCRBY can answer a block
 *   batch   1: identical INCRs pipelined in one read take their IDs in one
 *           call, the first for all (src/commands/command_ids.c, stash_fill):
 *           one lock and one clock reading per batch instead of per ID.
 *           0 for sequences: each ID goes through the primary's fence.
 *   metric  the mode label of leafd_ids_issued_total counting its IDs
 *           (opaque IDs are segment IDs); NULL: counted in a family of its
 *           own (leafd_sequence_issued_total)
 *   text command  NULL: the IDs are integers. Else the IDs are answered as
 *           text, never as integers (UUIDv7s made from the node's snowflake
 *           IDs, business numbers from a numbering's sequence), and this is
 *           the RESP command that answers them: INCR, INCRBY and LEAF.IDS
 *           refuse the key space and name it
 *   route   the GET route's line in the route reference (leafd
 *           --print-reference routes); its metric label is name + "_get"
 *   issue   the function of src/door/door_ids.c that issues the mode's IDs
 *   text    the function of src/door/door_ids.c that turns issued IDs into
 *           their text; 0 for an integer mode
 *   prepare the function of src/door/door_ids.c that gets ready for an issue
 *           of a key soon, for the keys of INCRs pipelined behind one
 *           (door_ids_prepare: keyed sequences prefetch the key's place in
 *           their table); 0 when a mode has nothing to get ready
 *
 * The files a new mode touches (counted when UUIDv7s and business numbers
 * had touched 17 to 19; keyed sequences, the first mode built on the row,
 * touched these three and nothing else of the doors, once its key rule was
 * a column):
 *   src/ids/ids_mode.h        its row here;
 *   src/door/door_ids.c       its issue function (and text function);
 *   src/door/door_errors.h    the errors of its own (an unknown name), if any;
 *   docs/id-shapes.md and docs/reference/: the words (the route, command and
 *                             error references are generated);
 * and, only for a text mode, which RESP answers with a command of its own:
 *   src/tables/table_resp.c   its LEAF.<NAME> row, whose handler is
 *                             command_ids_leaf_text (src/commands/command_ids.c).
 * One more only if the mode may be leafd.resp.default.mode: its line in the
 * table of served modes of src/config/config.c (config_default_mode); until
 * then the key refuses it as a mode the node does not serve.
 * Derived with no edit: its HTTP GET route and its metric label, the RESP key
 * space and the BAD_KEY message, the key rule in HTTP, RESP and the grants, INCRBY's dense check
 * and INCR's batching, the text-only refusals, the grant mode (auth_grant.c), the
 * leafd.resp.default.mode value and the leafd_ids_issued_total series (door_ids.c counts every
 * mode). tests/unit/test_ids_mode.c adds a test-only row (LEAF_IDS_MODES_EXTRA) to show it.
 */
#include <stddef.h>

/*
 * What a key may hold, a column of IDS_MODES. IDS_KEY_TAG: a tag, 1-128 bytes of
 * [A-Za-z0-9._:-] (as validate_tag). IDS_KEY_SPACED: "<space>:<key>", a space of 1-64 bytes of
 * [A-Za-z0-9._-], not . or .. (ids_space_ok; sequence_keyed_name_ok's rule), and a key of
 * 1-200 bytes, any byte; in an HTTP path "{space}/{key}", the key percent-encoded
 * (ids_mode_http_key).
 */
enum ids_key_rule { IDS_KEY_TAG, IDS_KEY_SPACED };
#define IDS_TAG_MAX 128
#define IDS_SPACE_MAX 64
#define IDS_SPACED_KEY_MAX 200

#define IDS_MODES(X)                                                                               \
    X(IDS_SNOWFLAKE, "snowflake", "/api/snowflake/get/", "key", IDS_KEY_TAG, 0, 1, "snowflake",    \
      NULL, "snowflake IDs of the key (?count=)", issue_snowflake, 0, 0)                           \
    X(IDS_SEGMENT, "segment", "/api/segment/get/", "biz_tag", IDS_KEY_TAG, 1, 1, "segment", NULL,  \
      "segment IDs of the tag (?count=)", issue_segment, 0, 0)                                     \
    X(IDS_SEQUENCE, "sequence", "/api/sequence/get/", "name", IDS_KEY_TAG, 1, 0, NULL, NULL,       \
      "sequence IDs of the key (?count=)", issue_sequence, 0, 0)                                   \
    X(IDS_OPAQUE, "opaque", "/api/opaque/get/", "biz_tag", IDS_KEY_TAG, 0, 1, "segment", NULL,     \
      "opaque IDs of the key (?count=)", issue_opaque, 0, 0)                                       \
    X(IDS_UUID, "uuid", "/api/uuid/get/", "key", IDS_KEY_TAG, 0, 0, "uuid", "LEAF.UUID",           \
      "UUIDv7s of the key (?count=), one per line", issue_snowflake, text_uuid, 0)                 \
    X(IDS_NUMBER, "number", "/api/number/get/", "name", IDS_KEY_TAG, 0, 0, "number",               \
      "LEAF.NUMBER", "business numbers of the numbering (?count=), one per line", issue_number,    \
      text_number, 0)                                                                              \
    X(IDS_KEYED, "keyed", "/api/keyed/get/", "space>:<key", IDS_KEY_SPACED, 1, 0, NULL, NULL,      \
      "keyed sequence IDs of {space}/{key} (?count=)", issue_keyed, 0, prepare_keyed)              \
    LEAF_IDS_MODES_EXTRA(X)

/* Rows a unit test adds (tests/unit/test_ids_mode.c); none in the daemon. */
#ifndef LEAF_IDS_MODES_EXTRA
#define LEAF_IDS_MODES_EXTRA(X)
#endif

enum ids_mode {
    IDS_MODE_NONE = -1, /* what a lookup answers for no mode */
#define IDS_MODE_ENUM(e, name, http, key, rule, dense, batch, metric, textcmd, what, issue, text,  \
                      prepare)                                                                     \
    e,
    IDS_MODES(IDS_MODE_ENUM)
#undef IDS_MODE_ENUM
        IDS_MODE_COUNT
};

/* The longest mode name ("snowflake"), in bytes, as a constant expression. */
union ids_mode_name_room {
#define IDS_MODE_ROOM(e, name, http, key, rule, dense, batch, metric, textcmd, what, issue, text,  \
                      prepare)                                                                     \
    char e[sizeof(name)];
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
    enum ids_key_rule rule;
    int dense;
    int batch;
    const char *metric;       /* NULL: not a series of leafd_ids_issued_total */
    int text;                 /* answered as text (UUIDs, business numbers), not integers */
    const char *text_command; /* text: the RESP command that answers it ("LEAF.UUID"); NULL */
};

/* The row of mode, or NULL when out of range. */
const struct ids_mode_info *ids_mode_info(enum ids_mode mode);

/* The mode's name ("segment"), or NULL when out of range. */
const char *ids_mode_name(enum ids_mode mode);

/*
 * Lookups, answering IDS_MODE_NONE for no mode (as config_find answers -1): src/ids includes
 * nothing but libc, so it stands on the ground floor beside src/base and every room may read it.
 */
/* The mode named by s (n bytes, exact, case-sensitive). */
enum ids_mode ids_mode_find(const char *s, size_t n);

/* 1 when s (n bytes) is a key of mode by its row's rule (enum ids_key_rule), else 0. */
int ids_mode_key_ok(enum ids_mode mode, const char *s, size_t n);

/* 1 when s (n bytes) names a keyed space: the space of IDS_KEY_SPACED. */
int ids_space_ok(const char *s, size_t n);

/* What a key of mode may hold, in words ("1 to 128 bytes of [A-Za-z0-9._:-]"). */
const char *ids_mode_key_rule_text(enum ids_mode mode);

/*
 * The key of mode that an HTTP path's tail (raw, n bytes, after the mode's prefix) names, in
 * buf (cap bytes): the tail itself for a tag; for IDS_KEY_SPACED "{space}/{key}" becomes
 * "<space>:<key>", the key's %XX escapes decoded. *key and *len point at the key (into raw or
 * buf). 1 when it is a key of mode (ids_mode_key_ok), else 0.
 */
int ids_mode_http_key(enum ids_mode mode, const char *raw, size_t n, char *buf, size_t cap,
                      const char **key, size_t *len);
#define IDS_MODE_HTTP_KEY_MAX 266 /* a spaced key: 64 + ':' + 200 bytes, and a NUL */

/* The text mode whose RESP command is s (n bytes, any case: "leaf.uuid"). */
enum ids_mode ids_mode_find_text_command(const char *s, size_t n);

#endif
