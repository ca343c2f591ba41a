#include "segment_request.h"

#include "num.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQ_EXACT_DOUBLE_MAX 9007199254740992.0 /* 2^53 */

/* Reads an integer member given as a JSON number or a decimal string. */
static int req_integer(const cJSON *v, int64_t min, int64_t max, int64_t *out) {
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        /* Range first: converting a double outside int64_t (1e300, inf) is
         * undefined, so the integer test may only run on values in range. */
        if (!(d >= (double)min && d <= (double)max && d < REQ_EXACT_DOUBLE_MAX) ||
            d != (double)(int64_t)d) {
            return -1;
        }
        *out = (int64_t)d;
        return 0;
    }
    if (!cJSON_IsString(v) || v->valuestring[0] == '\0' || strlen(v->valuestring) > 19) {
        return -1;
    }
    int64_t n;
    if (v->valuestring[0] == '-' ||
        num_parse_range(v->valuestring, strlen(v->valuestring), min, max, &n) != LEAF_OK) {
        return -1;
    }
    *out = n;
    return 0;
}

/* Counts UTF-8 characters; -1 when the bytes are not valid UTF-8. */
static long req_utf8_chars(const char *s) {
    long n = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int extra = *p < 0x80                  ? 0
                    : *p >= 0xC2 && *p <= 0xDF ? 1
                    : *p >= 0xE0 && *p <= 0xEF ? 2
                    : *p >= 0xF0 && *p <= 0xF4 ? 3
                                               : -1;
        if (extra < 0) {
            return -1;
        }
        /* second-byte limits that rule out overlong forms, surrogates and > U+10FFFF */
        unsigned lo = *p == 0xE0 ? 0xA0 : *p == 0xF0 ? 0x90 : 0x80;
        unsigned hi = *p == 0xED ? 0x9F : *p == 0xF4 ? 0x8F : 0xBF;
        for (int i = 1; i <= extra; i++) {
            unsigned c = p[i];
            if (c < (i == 1 ? lo : 0x80) || c > (i == 1 ? hi : 0xBF)) {
                return -1;
            }
        }
        p += 1 + extra;
        n++;
    }
    return n;
}

/*
 * 1 when the body holds a NUL byte, raw or escaped as \u0000: cJSON would end
 * that string there and drop the rest silently ({"biz_tag":"a\u0000b"} would
 * act on tag "a"). Escapes are skipped in pairs, so "\\u0000" is text.
 */
static int req_has_nul(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\0' || (s[i] == '\\' && i + 5 < n && memcmp(s + i + 1, "u0000", 5) == 0)) {
            return 1;
        }
        i += s[i] == '\\';
    }
    return 0;
}

static leaf_status_t req_fail(const char **code, const char *c, char *msg, size_t msglen,
                              const char *m) {
    *code = c;
    snprintf(msg, msglen, "%s", m);
    return LEAF_EINVAL;
}

/* The fields of POST /api/leaf; "descprition" is the Go service's documented spelling. */
static const char *const req_create_fields[] = {"biz_tag", "max_id", "step", "description",
                                                "descprition"};

/*
 * POST /api/leaf refuses a field it does not know rather than drop it: a
 * client that spells max_id "maxId" would otherwise create a tag at 1.
 */
static leaf_status_t req_known_fields(const cJSON *root, const char **code, char *msg,
                                      size_t msglen) {
    for (const cJSON *f = root->child; f != NULL; f = f->next) {
        size_t i = 0;
        while (i < sizeof(req_create_fields) / sizeof(req_create_fields[0]) &&
               strcmp(f->string, req_create_fields[i]) != 0) {
            i++;
        }
        if (i == sizeof(req_create_fields) / sizeof(req_create_fields[0])) {
            char name[65];
            size_t n = 0;
            for (const char *c = f->string; *c != '\0' && n + 1 < sizeof(name); c++) {
                name[n++] = (char)(*c >= ' ' && *c <= '~' ? *c : '?');
            }
            name[n] = '\0';
            *code = "unknown_field";
            snprintf(msg, msglen,
                     "unknown field '%s': the body takes biz_tag, max_id, step and description",
                     name);
            return LEAF_EINVAL;
        }
    }
    return LEAF_OK;
}

static leaf_status_t req_fields(enum segment_request_kind kind, const cJSON *root,
                                struct segment_request *out, const char **code, char *msg,
                                size_t msglen) {
    const cJSON *step = cJSON_GetObjectItemCaseSensitive(root, "step");
    const cJSON *max_id = cJSON_GetObjectItemCaseSensitive(root, "max_id");
    const cJSON *desc = cJSON_GetObjectItemCaseSensitive(root, "description");
    const cJSON *typo = cJSON_GetObjectItemCaseSensitive(root, "descprition");
    if (kind == SEGMENT_REQ_CREATE && req_known_fields(root, code, msg, msglen) != LEAF_OK) {
        return LEAF_EINVAL;
    }
    if (kind == SEGMENT_REQ_CREATE && typo != NULL) {
        if (desc != NULL) {
            return req_fail(code, "bad_description", msg, msglen,
                            "give description or descprition (its other spelling), not both");
        }
        desc = typo;
    }
    int want_step = kind == SEGMENT_REQ_STEP ||
                    (kind == SEGMENT_REQ_CREATE && step != NULL && !cJSON_IsNull(step));
    if (want_step && req_integer(step, 1, SEGMENT_REQ_STEP_MAX, &out->step) != 0) {
        return req_fail(code, "bad_step", msg, msglen, "step must be an integer from 1 to 1000000");
    }
    if (kind != SEGMENT_REQ_CREATE) {
        return LEAF_OK;
    }
    if (max_id != NULL && !cJSON_IsNull(max_id) &&
        req_integer(max_id, 1, SEGMENT_REQ_MAX_ID_MAX, &out->max_id) != 0) {
        return req_fail(code, "bad_max_id", msg, msglen,
                        "max_id must be an integer from 1 to 2^62 (above 2^53 as a string)");
    }
    if (desc != NULL && !cJSON_IsNull(desc)) {
        long chars = cJSON_IsString(desc) ? req_utf8_chars(desc->valuestring) : -1;
        if (chars < 0 || chars > SEGMENT_REQ_DESC_CHARS ||
            strlen(desc->valuestring) >= sizeof(out->description)) {
            return req_fail(code, "bad_description", msg, msglen,
                            "description must be a UTF-8 string of at most 256 characters");
        }
        snprintf(out->description, sizeof(out->description), "%s", desc->valuestring);
        out->has_description = 1;
    }
    return LEAF_OK;
}

leaf_status_t segment_request_parse(enum segment_request_kind kind, const char *body, size_t len,
                                    struct segment_request *out, const char **code, char *msg,
                                    size_t msglen) {
    memset(out, 0, sizeof(*out));
    out->max_id = 1;
    out->step = 2000;
    if (req_has_nul(body, len)) {
        return req_fail(code, "bad_json", msg, msglen, "the body must not contain NUL characters");
    }
    /* The object must be the whole body: cJSON alone would stop after it and
     * ignore the rest (a second object, say) without a word. */
    const char *end = body;
    cJSON *root = cJSON_ParseWithLengthOpts(body, len, &end, 0);
    while (root != NULL && end < body + len &&
           (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')) {
        end++;
    }
    if (root == NULL || !cJSON_IsObject(root) || end != body + len) {
        cJSON_Delete(root);
        return req_fail(code, "bad_json", msg, msglen, "the body must be a JSON object");
    }
    const cJSON *tag = cJSON_GetObjectItemCaseSensitive(root, "biz_tag");
    leaf_status_t rc;
    if (!cJSON_IsString(tag) || !validate_tag(tag->valuestring, strlen(tag->valuestring))) {
        rc = req_fail(code, "bad_tag", msg, msglen,
                      "biz_tag must be 1 to 128 bytes of [A-Za-z0-9._:-]");
    } else {
        snprintf(out->biz_tag, sizeof(out->biz_tag), "%s", tag->valuestring);
        rc = req_fields(kind, root, out, code, msg, msglen);
    }
    cJSON_Delete(root);
    return rc;
}
