/*
 * libFuzzer harness for the admin API's JSON bodies (segment/segment_request.c,
 * pure code, linked alone as leaf_segment_request): POST /api/leaf,
 * PUT /api/leaf/init/cache and PUT /api/leaf/step. The first byte picks the
 * request kind, the rest is the body.
 *
 * Checked, besides crashes and sanitizer reports: a failure names one of the
 * documented codes and a terminated message whatever the buffer size; an
 * accepted request is in range (a valid tag, step 1..1000000, max_id
 * 1..2^62, description at most 256 characters); a number is never silently
 * rounded (a value given as a JSON number is exactly what cJSON read, and
 * below 2^53); no string is cut short at a NUL (raw, or escaped as \u0000);
 * and nothing after the object is ignored.
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "segment_request.h"

static const char *const codes[] = {"bad_json",   "bad_tag",         "bad_step",
                                    "bad_max_id", "bad_description", "unknown_field"};

static int known_code(const char *code) {
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        if (code != NULL && strcmp(code, codes[i]) == 0) {
            return 1;
        }
    }
    return 0;
}

/* 1 when a JSON text holds a NUL byte or the escape \u0000 (escapes are skipped pairwise). */
static int has_nul_escape(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\0') {
            return 1;
        }
        if (s[i] == '\\' && i + 1 < n) {
            if (s[i + 1] == 'u' && i + 5 < n && memcmp(s + i + 2, "0000", 4) == 0) {
                return 1;
            }
            i++;
        }
    }
    return 0;
}

/* An integer given as a JSON number must be exactly what cJSON read, below 2^53. */
static void check_number(const cJSON *root, const char *name, int64_t got) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, name);
    if (cJSON_IsNumber(v) && (v->valuedouble != (double)got || got >= (1LL << 53))) {
        __builtin_trap();
    }
}

static long utf8_chars(const char *s) {
    long n = 0;
    for (; *s; s++) {
        n += ((unsigned char)*s & 0xC0) != 0x80;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct segment_request r;
    const char *code = NULL;
    char msg[256];
    if (size < 1) {
        return 0;
    }
    enum segment_request_kind kind = (enum segment_request_kind)(data[0] % 3);
    const char *body = (const char *)data + 1;
    size_t len = size - 1;

    leaf_status_t rc = segment_request_parse(kind, body, len, &r, &code, msg, sizeof(msg));
    if (rc != LEAF_OK) {
        if (rc != LEAF_EINVAL || !known_code(code) || memchr(msg, '\0', sizeof(msg)) == NULL) {
            __builtin_trap();
        }
        /* The message buffer may be tiny: exact-size on the heap. */
        size_t small = 1 + data[0] % 16;
        char *tiny = malloc(small);
        const char *code2 = NULL;
        if (segment_request_parse(kind, body, len, &r, &code2, tiny, small) != rc ||
            code2 != code || memchr(tiny, '\0', small) == NULL) {
            __builtin_trap();
        }
        free(tiny);
        return 0;
    }
    if (!validate_tag(r.biz_tag, strlen(r.biz_tag)) || r.step < 1 ||
        r.step > SEGMENT_REQ_STEP_MAX || r.max_id < 1 || r.max_id > SEGMENT_REQ_MAX_ID_MAX ||
        memchr(r.description, '\0', sizeof(r.description)) == NULL ||
        utf8_chars(r.description) > SEGMENT_REQ_DESC_CHARS ||
        (!r.has_description && r.description[0] != '\0')) {
        __builtin_trap();
    }
    if (has_nul_escape(body, len)) {
        __builtin_trap(); /* a string was cut at the NUL and the rest dropped silently */
    }
    const char *end = body;
    cJSON *root = cJSON_ParseWithLengthOpts(body, len, &end, 0);
    if (root == NULL) {
        __builtin_trap(); /* accepted, so it parsed */
    }
    for (; end < body + len; end++) {
        if (memchr(" \t\r\n", *end, 4) == NULL) {
            __builtin_trap(); /* accepted with something after the object, ignored */
        }
    }
    if (kind != SEGMENT_REQ_TAG) {
        check_number(root, "step", r.step);
    }
    if (kind == SEGMENT_REQ_CREATE) {
        check_number(root, "max_id", r.max_id);
    }
    cJSON_Delete(root);
    return 0;
}
