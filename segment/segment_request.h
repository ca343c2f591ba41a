#ifndef LEAF_SEGMENT_REQUEST_H
#define LEAF_SEGMENT_REQUEST_H

/*
 * Parsing and checking the JSON bodies of the admin API: POST /api/leaf, PUT /api/leaf/init/cache,
 * PUT /api/leaf/step. Pure code (cJSON only), unit-tested in tests/unit/test_segment_request.c.
 *
 * Numbers: step is an integer 1..1000000; max_id an integer 1..2^62 (so
 * that max_id + any step stays far from overflow). Both may be JSON numbers
 * or decimal strings; a JSON number at or above 2^53 is refused, because cJSON
 * holds numbers as doubles and would round it (use a string). The body must
 * be one JSON object and nothing else, without NUL characters (raw or \u0000,
 * at which cJSON would cut a string short): anything else is bad_json.
 */
#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "validate.h"

#define SEGMENT_REQ_STEP_MAX 1000000
#define SEGMENT_REQ_MAX_ID_MAX (1LL << 62)
#define SEGMENT_REQ_DESC_CHARS 256

enum segment_request_kind {
    SEGMENT_REQ_CREATE, /* biz_tag; optional max_id (1), step (2000), description (or the Go
                           service's "descprition"); any other field is unknown_field */
    SEGMENT_REQ_TAG,    /* biz_tag */
    SEGMENT_REQ_STEP,   /* biz_tag, step */
};

struct segment_request {
    char biz_tag[VALIDATE_TAG_MAX + 1];
    int64_t max_id;
    int64_t step;
    char description[SEGMENT_REQ_DESC_CHARS * 4 + 1];
    int has_description;
};

/*
 * Parses body. LEAF_OK, or LEAF_EINVAL with a stable error code in *code
 * ("bad_json", "bad_tag", "bad_step", "bad_max_id", "bad_description",
 * "unknown_field") and a
 * message in msg.
 */
leaf_status_t segment_request_parse(enum segment_request_kind kind, const char *body, size_t len,
                                    struct segment_request *out, const char **code, char *msg,
                                    size_t msglen);

#endif
