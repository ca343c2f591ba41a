#ifndef LEAF_DOOR_ERRORS_H
#define LEAF_DOOR_ERRORS_H

/*
 * Every error a client can be answered, in one table: the refusals of ID
 * requests in both protocols (IDS_ERRORS), then the errors of the HTTP admin
 * API, the user routes and the pages (HTTP_ERRORS), then those the HTTP layer
 * answers itself before any route (HTTP_CONN_ERRORS, src/http/http_conn.h,
 * which knows nothing above it; DOOR_HTTP_E_* here, for the reference). A handler names a row and
 * never types a code or a status; each protocol has one writer that spells a
 * row its way: door_http_error() (src/door/door_http.h: the JSON
 * {"code","message"} with the row's status) and command_outcome_ids_error()
 * (src/commands/command_outcome.h: "-<RESP> <message>"). Every row is in
 * leafd --print-reference errors and so in docs/reference/errors.md. The
 * code is stable, clients act on it; a code on several rows is one condition
 * reached in several ways. Pure data: any thread.
 *
 * X(enum, HTTP status, code, RESP error, message). The code is HTTP's JSON
 * "code" and the RESP status label; the RESP error's first word is the code
 * in upper case, except where Redis Cluster clients act on Redis's own words:
 * -MOVED <slot> <host:port> (-TRYAGAIN while the primary has no RESP
 * address) and -TRYAGAIN. An ID row's message is the one on the wire unless
 * the caller gives a sharper one (which key, which limit).
 */
#include "http_conn.h"

#define IDS_ERRORS(X)                                                                              \
    X(IDS_E_NONE, 200, "ok", "", "")                                                               \
    X(IDS_E_BAD_TAG, 400, "bad_tag", "BAD_TAG", "key must be 1 to 128 bytes of [A-Za-z0-9._:-]")   \
    X(IDS_E_BAD_SEQUENCE_NAME, 400, "bad_tag", "BAD_TAG",                                          \
      "a sequence name must be 1 to 128 bytes of [A-Za-z0-9._:-], not . or ..")                    \
    X(IDS_E_BAD_COUNT, 400, "bad_count", "BAD_COUNT", "count must be an integer from 1 to 10000")  \
    X(IDS_E_SNOWFLAKE_DISABLED, 503, "snowflake_disabled", "SNOWFLAKE_DISABLED",                   \
      "snowflake mode is disabled on this node")                                                   \
    X(IDS_E_SEGMENT_DISABLED, 503, "segment_disabled", "SEGMENT_DISABLED",                         \
      "segment mode is disabled on this node")                                                     \
    X(IDS_E_UNKNOWN_TAG, 404, "unknown_tag", "UNKNOWN_TAG", "no such biz_tag in leaf_alloc")       \
    X(IDS_E_TOO_MANY_TAGS, 503, "too_many_tags", "TOO_MANY_TAGS",                                  \
      "too many tags are being looked up")                                                         \
    X(IDS_E_DATABASE_UNAVAILABLE, 503, "database_unavailable", "DATABASE_UNAVAILABLE",             \
      "the database is unavailable and no IDs are buffered for this tag")                          \
    X(IDS_E_CLOCK_BACKWARDS, 503, "clock_backwards", "CLOCK_BACKWARDS",                            \
      "the clock moved backwards; refusing until it catches up")                                   \
    X(IDS_E_OVERLOADED, 503, "overloaded", "OVERLOADED",                                           \
      "the generator stayed busy or the clock behind for a whole second")                          \
    X(IDS_E_CLOCK_OUT_OF_RANGE, 503, "clock_out_of_range", "CLOCK_OUT_OF_RANGE",                   \
      "the clock is before the epoch or past the time field's horizon")                            \
    X(IDS_E_NOT_READY, 503, "not_ready", "NOT_READY",                                              \
      "no worker ID held or reservation not persisted")                                            \
    X(IDS_E_OUT_OF_MEMORY, 503, "out_of_memory", "OUT_OF_MEMORY", "out of memory")                 \
    X(IDS_E_SEQUENCE_DISABLED, 503, "sequence_disabled", "SEQUENCE_DISABLED",                      \
      "sequence mode is disabled on this node")                                                    \
    X(IDS_E_NOT_PRIMARY, 307, "not_primary", "MOVED",                                              \
      "this node is a standby; ask the sequence primary")                                          \
    X(IDS_E_NO_PRIMARY, 503, "no_primary", "TRYAGAIN",                                             \
      "no sequence primary can issue now; retry shortly")                                          \
    X(IDS_E_UNKNOWN_SEQUENCE, 404, "unknown_sequence", "UNKNOWN_SEQUENCE",                         \
      "no such sequence (create it with POST /api/sequence)")                                      \
    X(IDS_E_SEQUENCE_EXHAUSTED, 503, "sequence_exhausted", "SEQUENCE_EXHAUSTED",                   \
      "the sequence would pass 2^63-1")                                                            \
    X(IDS_E_BAD_RANGE_COUNT, 400, "bad_count", "BAD_COUNT",                                        \
      "count must be an integer from 1 to 1000000")                                                \
    X(IDS_E_OPAQUE_DISABLED, 503, "opaque_disabled", "OPAQUE_DISABLED",                            \
      "opaque IDs are off on this node (leafd.opaque.key is empty)")                               \
    X(IDS_E_OPAQUE_FAILED, 503, "opaque_failed", "OPAQUE_FAILED",                                  \
      "the opaque ID cipher failed; see the node's log")                                           \
    X(IDS_E_NOT_CONSECUTIVE, 400, "not_consecutive", "WRONG_MODE",                                 \
      "segment IDs of a region (leafd.region.count > 1) are one in every count, never a block: "   \
      "ask for a list (?count=, LEAF.IDS)")                                                        \
    X(IDS_E_REGION_UNCLAIMED, 503, "region_unclaimed", "REGION_UNCLAIMED",                         \
      "this node's region ID is not confirmed by the registry and no earlier claim is cached, "    \
      "or another region holds it (see /ready)")                                                   \
    X(IDS_E_SEGMENT_EXHAUSTED, 503, "segment_exhausted", "SEGMENT_EXHAUSTED",                      \
      "the tag's max_id times leafd.region.count passes the largest 64-bit ID")                    \
    X(IDS_E_BATCH_TOO_LARGE, 400, "bad_count", "BAD_COUNT",                                        \
      "count is above what leafd.snowflake.layout issues at once (its sequence width and time "    \
      "unit; the node logs the limit at start); ask for fewer")                                    \
    X(IDS_E_LOOKUPS_OVERLOADED, 503, "overloaded", "OVERLOADED",                                   \
      "too many unknown tags looked up this second; retry shortly")                                \
    X(IDS_E_RANDOM_FAILED, 503, "random_failed", "RANDOM_FAILED",                                  \
      "the system's random source (getrandom) failed; see the node's log")                         \
    X(IDS_E_UNKNOWN_NUMBERING, 404, "unknown_numbering", "UNKNOWN_NUMBERING",                      \
      "no such numbering (create it with POST /api/numbering)")                                    \
    X(IDS_E_NUMBERING_EXHAUSTED, 503, "numbering_exhausted", "NUMBERING_EXHAUSTED",                \
      "the numbering's counter would pass its width in this period; it restarts with the next")    \
    X(IDS_E_NUMBERING_ZONE, 503, "time_zone_unavailable", "TIME_ZONE_UNAVAILABLE",                 \
      "the numbering's time zone has no readable tzdata file on this node; see its log")           \
    X(IDS_E_BAD_KEYED_KEY, 400, "bad_tag", "BAD_TAG",                                              \
      "a keyed key is <space>:<key>: a space of 1 to 64 bytes of [A-Za-z0-9._-], a key of 1 to "   \
      "200 bytes ({space}/{key} in HTTP, the key percent-encoded)")                                \
    X(IDS_E_NO_SUCH_SPACE, 404, "no_such_space", "NO_SUCH_SPACE",                                  \
      "no such keyed space (create it with POST /api/keyed)")                                      \
    X(IDS_E_HOME_REGION_UNREACHABLE, 503, "home_region_unreachable", "HOME_REGION_UNREACHABLE",    \
      "the sequence, keyed space or numbering is homed in another region, which this region "      \
      "cannot reach now (leafd.region.peers), or the registry has not confirmed a new one's "      \
      "home; "                                                                                     \
      "retry shortly")

/*
 * X(enum, HTTP status, code, RESP error, meaning): HTTP only (no RESP error).
 * The meaning is the reference's line; the handler always writes its own
 * message, naming what was wrong and what is expected (docs/reference/http.md
 * lists them route by route). The codes of a segment tag's body
 * (segment/segment_request.c hands back a code of its own) are rows here
 * too: door_error_by_code() finds them.
 */
#define HTTP_ERRORS(X)                                                                             \
    X(DOOR_E_BAD_REQUEST, 400, "bad_request", NULL,                                                \
      "the body, path or query is malformed; the message says what is expected")                   \
    X(DOOR_E_BAD_JSON, 400, "bad_json", NULL, "a segment tag's body is not one JSON object")       \
    X(DOOR_E_UNKNOWN_FIELD, 400, "unknown_field", NULL,                                            \
      "a segment tag's body names a field the route does not take")                                \
    X(DOOR_E_BAD_STEP, 400, "bad_step", NULL, "step is not an integer from 1 to 1000000")          \
    X(DOOR_E_BAD_MAX_ID, 400, "bad_max_id", NULL, "max_id is not a non-negative 64-bit integer")   \
    X(DOOR_E_BAD_DESCRIPTION, 400, "bad_description", NULL,                                        \
      "description is not a string, or leaf_alloc cannot store it")                                \
    X(DOOR_E_BAD_SNOWFLAKE_ID, 400, "bad_snowflake_id", NULL,                                      \
      "/decodeSnowflakeId: not an ID that fits leafd.snowflake.layout")                            \
    X(DOOR_E_BAD_UUID, 400, "bad_uuid", NULL, "/decodeUuid: not a UUID of version 7")              \
    X(DOOR_E_BAD_OPAQUE_ID, 400, "bad_opaque_id", NULL, "/decodeOpaqueId: not an opaque ID")       \
    X(DOOR_E_BAD_MODE, 400, "bad_mode", NULL, "/ready?mode= names an unknown component")           \
    X(DOOR_E_BAD_USER_NAME, 400, "bad_user_name", NULL, "a user's name breaks the name rule")      \
    X(DOOR_E_BAD_GRANT, 400, "bad_grant", NULL,                                                    \
      "a grant is not \"PATTERN:RIGHTS\" with a known mode and rights")                            \
    X(DOOR_E_BAD_CHANGE, 400, "bad_change", NULL,                                                  \
      "a user change would pass 256 grants, or the stored record is malformed")                    \
    X(DOOR_E_UNAUTHORIZED, 401, "unauthorized", NULL,                                              \
      "no or wrong credentials: an admin endpoint without its Bearer token (leafd.admin.token), "  \
      "or, with users on, no or a wrong Authorization: Basic")                                     \
    X(DOOR_E_FORBIDDEN, 403, "forbidden", NULL,                                                    \
      "an admin endpoint from a remote client with no leafd.admin.token, or a wrong token")        \
    X(DOOR_E_HOST_NOT_ALLOWED, 403, "host_not_allowed", NULL,                                      \
      "a state change whose Host names no name of this node (leafd.http.allowed.hosts)")           \
    X(DOOR_E_CROSS_ORIGIN, 403, "cross_origin", NULL,                                              \
      "a state change from another origin (Origin or Sec-Fetch-Site)")                             \
    X(DOOR_E_NOT_FOUND, 404, "not_found", NULL, "no such endpoint")                                \
    X(DOOR_E_METHOD_NOT_ALLOWED, 405, "method_not_allowed", NULL,                                  \
      "the path takes other methods (the Allow header lists them; HEAD is refused where GET "      \
      "issues IDs)")                                                                               \
    X(DOOR_E_UNKNOWN_USER, 404, "unknown_user", NULL, "no such user")                              \
    X(DOOR_E_TAG_EXISTS, 409, "tag_exists", NULL, "the biz_tag already exists in leaf_alloc")      \
    X(DOOR_E_TAG_CONFLICT, 409, "tag_conflict", NULL,                                              \
      "leaf_alloc's biz_tag collation ignores case and matches another tag")                       \
    X(DOOR_E_SEQUENCE_EXISTS, 409, "sequence_exists", NULL, "a sequence of that name exists")      \
    X(DOOR_E_NUMBERING_EXISTS, 409, "numbering_exists", NULL, "a numbering of that name exists")   \
    X(DOOR_E_NUMBERING_LIMIT, 409, "numbering_limit", NULL,                                        \
      "the cluster holds 256 numberings, the most")                                                \
    X(DOOR_E_SPACE_EXISTS, 409, "space_exists", NULL, "a keyed space of that name exists")         \
    X(DOOR_E_SPACE_LIMIT, 409, "space_limit", NULL,                                                \
      "the cluster holds 1024 keyed spaces, the most")                                             \
    X(DOOR_E_HOME_ELSEWHERE, 409, "home_elsewhere", NULL,                                          \
      "a home move names a region that is not the sequence's home (the message names it)")         \
    X(DOOR_E_HOME_MOVING, 409, "home_moving", NULL,                                                \
      "the sequence's home moves, or moved, to another region than the one named")                 \
    X(DOOR_E_USER_EXISTS, 409, "user_exists", NULL, "a user of that name exists")                  \
    X(DOOR_E_TOO_MANY_FAILED_AUTHENTICATIONS, 429, "too_many_failed_authentications", NULL,        \
      "repeated failed authentications from this address: refused unchecked for a while "          \
      "(Retry-After)")                                                                             \
    X(DOOR_E_UNSUPPORTED_MEDIA_TYPE, 415, "unsupported_media_type", NULL,                          \
      "a state change without 'Content-Type: application/json'")                                   \
    X(DOOR_E_OUT_OF_MEMORY, 500, "out_of_memory", NULL,                                            \
      "out of memory building an admin answer or a page")                                          \
    X(DOOR_E_DATABASE_ERROR, 500, "database_error", NULL,                                          \
      "the database refused a tag's create or change")                                             \
    X(DOOR_E_SECRET_FAILED, 500, "secret_failed", NULL, "a user's secret could not be generated")  \
    X(DOOR_E_BUSY, 503, "busy", NULL,                                                              \
      "too many admin requests, creates or user changes in flight; retry shortly")                 \
    X(DOOR_E_ZOOKEEPER_UNAVAILABLE, 503, "zookeeper_unavailable", NULL,                            \
      "ZooKeeper could not be reached or did not answer in time (the change may or may not "       \
      "apply)")                                                                                    \
    X(DOOR_E_AUTH_DISABLED, 503, "auth_disabled", NULL,                                            \
      "the user routes, with users and permissions off (leafd.auth.enable)")

enum door_error {
#define DOOR_ERROR_ENUM(e, status, code, resp, msg) e,
    IDS_ERRORS(DOOR_ERROR_ENUM)
#undef DOOR_ERROR_ENUM
        IDS_E_COUNT, /* the ID errors end here: RESP's outcomes count them (RESP_O_IDS + e) */
#define DOOR_ERROR_ENUM(e, status, code, resp, msg) e,
    HTTP_ERRORS(DOOR_ERROR_ENUM)
#undef DOOR_ERROR_ENUM
#define DOOR_PROTO_ERROR_ENUM(e, status, code, meaning) DOOR_##e,
        HTTP_CONN_ERRORS(DOOR_PROTO_ERROR_ENUM)
#undef DOOR_PROTO_ERROR_ENUM
            DOOR_E_COUNT
};

struct door_error_info {
    int http_status;
    const char *code;
    const char *resp;    /* the RESP error's first word; NULL: HTTP only */
    const char *message; /* an ID row's message on the wire; an HTTP row's meaning */
};

/* The row of e; IDS_E_NONE's when e is no row. */
const struct door_error_info *door_error(enum door_error e);

/* The first row whose code is code (a code handed back by a pure library): LEAF_OK, or
 * LEAF_ENOTFOUND. */
int door_error_by_code(const char *code, enum door_error *out);

#endif
