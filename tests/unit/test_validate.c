/*
 * Unit tests of src/base/validate.c: tag alphabet and length, and ?count=
 * boundaries.
 */
#include <stdlib.h>

#include "unit.h"
#include "validate.h"

static int tag(const char *s) {
    return validate_tag(s, strlen(s));
}

static leaf_status_t count(const char *s, int *out) {
    return validate_count(s, strlen(s), out);
}

static void test_tag_alphabet(void) {
    CHECK_EQ_INT(tag("leaf-segment-test"), 1);
    CHECK_EQ_INT(tag("a"), 1);
    CHECK_EQ_INT(tag("AZaz09"), 1);
    CHECK_EQ_INT(tag("a.b"), 1);
    CHECK_EQ_INT(tag("a_b"), 1);
    CHECK_EQ_INT(tag("a:b"), 1);
    CHECK_EQ_INT(tag("a-b"), 1);
    CHECK_EQ_INT(tag(".:_-"), 1);
    CHECK_EQ_INT(tag("a/b"), 0);
    CHECK_EQ_INT(tag("a%2Fb"), 0);
    CHECK_EQ_INT(tag("a b"), 0);
    CHECK_EQ_INT(tag(" a"), 0);
    CHECK_EQ_INT(tag("a\t"), 0);
    CHECK_EQ_INT(tag("a?b"), 0);
    CHECK_EQ_INT(tag("a\"b"), 0);
    CHECK_EQ_INT(tag("a\\b"), 0);
    CHECK_EQ_INT(tag("caf\xc3\xa9"), 0);
    CHECK_EQ_INT(tag("\x80"), 0);
    CHECK_EQ_INT(tag("\xff"), 0);
    CHECK_EQ_INT(validate_tag("a\0b", 3), 0);
}

static void test_tag_length(void) {
    char buf[130];

    memset(buf, 'x', sizeof(buf));
    CHECK_EQ_INT(validate_tag(buf, 0), 0);
    CHECK_EQ_INT(validate_tag(NULL, 0), 0);
    CHECK_EQ_INT(validate_tag(buf, 1), 1);
    CHECK_EQ_INT(validate_tag(buf, 128), 1);
    CHECK_EQ_INT(validate_tag(buf, 129), 0);
    CHECK_EQ_INT(validate_tag(buf, 130), 0);
    /* Only len bytes are looked at: a bad byte just past the span is fine. */
    buf[3] = '/';
    CHECK_EQ_INT(validate_tag(buf, 3), 1);
    CHECK_EQ_INT(validate_tag(buf, 4), 0);
}

static void test_count_good(void) {
    int n = -1;

    CHECK_EQ_INT(count("1", &n), LEAF_OK);
    CHECK_EQ_INT(n, 1);
    CHECK_EQ_INT(count("10000", &n), LEAF_OK);
    CHECK_EQ_INT(n, 10000);
    CHECK_EQ_INT(count("9999", &n), LEAF_OK);
    CHECK_EQ_INT(n, 9999);
    CHECK_EQ_INT(count("007", &n), LEAF_OK);
    CHECK_EQ_INT(n, 7);
    CHECK_EQ_INT(count("0000010000", &n), LEAF_OK); /* ten characters */
    CHECK_EQ_INT(n, 10000);
    /* Only len bytes are looked at. */
    CHECK_EQ_INT(validate_count("12x", 2, &n), LEAF_OK);
    CHECK_EQ_INT(n, 12);
}

static void test_count_bad(void) {
    const char *bad[] = {"0",       "00",  "10001", "99999",       "",
                         "-1",      "+1",  "1x",    " 1",          "1 ",
                         "1.0",     "1e3", "0x10",  "00000000001", "99999999999999999999",
                         "\xd9\xa1"};
    size_t i;
    int n = 42;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_EQ_INT(count(bad[i], &n), LEAF_EINVAL);
    }
    CHECK_EQ_INT(validate_count(NULL, 0, &n), LEAF_EINVAL);
    CHECK_EQ_INT(validate_count("1\0", 2, &n), LEAF_EINVAL);
    CHECK_EQ_INT(n, 42); /* untouched on error */
}

int main(void) {
    TEST(test_tag_alphabet);
    TEST(test_tag_length);
    TEST(test_count_good);
    TEST(test_count_bad);
    return unit_done();
}
