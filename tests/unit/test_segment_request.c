/*
 * Unit tests of segment/segment_request.c: the admin API's JSON bodies,
 * including SQL-looking tags and numbers cJSON would round.
 */
#include "segment_request.h"
#include "unit.h"

static const char *code;
static char msg[160];
static struct segment_request r;

static leaf_status_t parse(enum segment_request_kind k, const char *body) {
    code = "";
    return segment_request_parse(k, body, strlen(body), &r, &code, msg, sizeof(msg));
}

static void test_create_defaults(void) {
    CHECK_EQ_INT(parse(SEGMENT_REQ_CREATE, "{\"biz_tag\":\"order\"}"), LEAF_OK);
    CHECK_EQ_STR(r.biz_tag, "order");
    CHECK_EQ_INT(r.max_id, 1);
    CHECK_EQ_INT(r.step, 2000);
    CHECK_EQ_INT(r.has_description, 0);
    CHECK_EQ_INT(parse(SEGMENT_REQ_CREATE, "{\"biz_tag\":\"o\",\"max_id\":\"4611686018427387904\","
                                           "\"step\":1000000,\"description\":\"d \\\"q\\\"\"}"),
                 LEAF_OK);
    CHECK_EQ_INT(r.max_id, 4611686018427387904LL);
    CHECK_EQ_INT(r.step, 1000000);
    CHECK_EQ_STR(r.description, "d \"q\"");
    CHECK_EQ_INT(
        parse(SEGMENT_REQ_CREATE, "{\"biz_tag\":\"o\",\"step\":\"5\",\"description\":null}"),
        LEAF_OK);
    CHECK_EQ_INT(r.step, 5);
    /* The Go service's spelling is the description; any other unknown field is refused. */
    CHECK_EQ_INT(parse(SEGMENT_REQ_CREATE, "{\"biz_tag\":\"o\",\"descprition\":\"go\"}"), LEAF_OK);
    CHECK_EQ_STR(r.description, "go");
    CHECK_EQ_INT(r.has_description, 1);
    CHECK_EQ_INT(parse(SEGMENT_REQ_CREATE,
                       "{\"biz_tag\":\"o\",\"descprition\":\"a\",\"description\":\"b\"}"),
                 LEAF_EINVAL);
    CHECK_EQ_STR(code, "bad_description");
    CHECK_EQ_INT(parse(SEGMENT_REQ_CREATE, "{\"biz_tag\":\"o\",\"maxId\":5000}"), LEAF_EINVAL);
    CHECK_EQ_STR(code, "unknown_field");
    CHECK(strstr(msg, "'maxId'") != NULL);
    /* The other bodies keep their fields only. */
    CHECK_EQ_INT(parse(SEGMENT_REQ_STEP, "{\"biz_tag\":\"o\",\"step\":5,\"x\":1}"), LEAF_OK);
}

static void test_bad_tags(void) {
    const char *bodies[] = {
        "{\"biz_tag\":\"x' OR '1'='1\"}",
        "{\"biz_tag\":\"a;DROP TABLE leaf_alloc\"}",
        "{\"biz_tag\":\"\"}",
        "{\"biz_tag\":12}",
        "{}",
        "{\"biz_tag\":\"a b\"}",
        "{\"biz_tag\":\"a/b\"}",
        "{\"biz_tag\":\"caf\\u00e9\"}",
    };
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        CHECK_EQ_INT(parse(SEGMENT_REQ_CREATE, bodies[i]), LEAF_EINVAL);
        CHECK_EQ_STR(code, "bad_tag");
    }
    char big[300];
    snprintf(big, sizeof(big), "{\"biz_tag\":\"%0129d\"}", 0);
    CHECK_EQ_INT(parse(SEGMENT_REQ_TAG, big), LEAF_EINVAL);
}

static void test_bad_json_and_numbers(void) {
    CHECK_EQ_INT(parse(SEGMENT_REQ_CREATE, "not json"), LEAF_EINVAL);
    CHECK_EQ_STR(code, "bad_json");
    CHECK_EQ_INT(parse(SEGMENT_REQ_CREATE, "[1]"), LEAF_EINVAL);
    CHECK_EQ_STR(code, "bad_json");
    const char *steps[] = {"0", "-1", "1000001", "1.5", "\"12a\"", "\"\"", "true", "1e7"};
    char body[128];
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        snprintf(body, sizeof(body), "{\"biz_tag\":\"t\",\"step\":%s}", steps[i]);
        CHECK_EQ_INT(parse(SEGMENT_REQ_STEP, body), LEAF_EINVAL);
        CHECK_EQ_STR(code, "bad_step");
    }
    CHECK_EQ_INT(parse(SEGMENT_REQ_STEP, "{\"biz_tag\":\"t\"}"), LEAF_EINVAL); /* step required */
    CHECK_EQ_INT(parse(SEGMENT_REQ_STEP, "{\"biz_tag\":\"t\",\"step\":1}"), LEAF_OK);
    /* a JSON number above 2^53 would be rounded by cJSON: refused */
    CHECK_EQ_INT(parse(SEGMENT_REQ_CREATE, "{\"biz_tag\":\"t\",\"max_id\":9007199254740993}"),
                 LEAF_EINVAL);
    CHECK_EQ_STR(code, "bad_max_id");
    CHECK_EQ_INT(parse(SEGMENT_REQ_CREATE, "{\"biz_tag\":\"t\",\"max_id\":0}"), LEAF_EINVAL);
    CHECK_EQ_INT(
        parse(SEGMENT_REQ_CREATE, "{\"biz_tag\":\"t\",\"max_id\":\"4611686018427387905\"}"),
        LEAF_EINVAL);
    CHECK_EQ_INT(parse(SEGMENT_REQ_CREATE, "{\"biz_tag\":\"t\",\"description\":7}"), LEAF_EINVAL);
    CHECK_EQ_STR(code, "bad_description");
}

/* Found by fuzz_admin: each must be refused, never half-read. */
static void test_fuzz_findings(void) {
    const char *bad[] = {
        "{\"biz_tag\":\"t\",\"max_id\":1e300}",                 /* out of int64: was UB */
        "{\"biz_tag\":\"a\\u0000b\"}",                          /* NUL would cut the tag to "a" */
        "{\"biz_tag\":\"t\",\"description\":\"x\\u0000y\"}",    /* NUL would cut the text */
        "{\"biz_tag\":\"t\"} {\"biz_tag\":\"u\",\"max_id\":5}", /* trailing object */
        "{\"biz_tag\":\"t\",\"description\":\"\xff\xfe\"}",     /* not UTF-8 */
        "{\"biz_tag\":\"t\",\"description\":\"\xc0\xaf\"}",     /* overlong '/' */
        "{\"biz_tag\":\"t\",\"description\":\"\xed\xa0\x80\"}", /* surrogate */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK(parse(SEGMENT_REQ_CREATE, bad[i]) != LEAF_OK);
    }
    const char raw_nul[] = "{\"biz_tag\":\"a\0b\"}";
    code = "";
    CHECK(segment_request_parse(SEGMENT_REQ_CREATE, raw_nul, sizeof(raw_nul) - 1, &r, &code, msg,
                                sizeof(msg)) != LEAF_OK);
    CHECK_EQ_INT(parse(SEGMENT_REQ_CREATE,
                       "{\"biz_tag\":\"t\",\"description\":\"caf\xc3\xa9 \xe2\x82\xac\"}"),
                 LEAF_OK); /* valid UTF-8 is fine */
    CHECK_EQ_INT(parse(SEGMENT_REQ_CREATE, "{\"biz_tag\":\"t\"}  \n"), LEAF_OK);
}

int main(void) {
    TEST(test_create_defaults);
    TEST(test_bad_tags);
    TEST(test_bad_json_and_numbers);
    TEST(test_fuzz_findings);
    return unit_done();
}
