/*
 * Unit tests of src/ids/ids_mode.c, and the proof of what a new ID mode costs: this file adds
 * one test-only row (IDS_TEST, through LEAF_IDS_MODES_EXTRA) and nothing else, and every
 * lookup the layers make of a mode (its name, key space, HTTP prefix, text command, the GET
 * route the route table expands, the issue and text functions door_ids.c binds) answers for it.
 */
#include <string.h>

#include "unit.h"
#include "validate.h"

#define LEAF_IDS_MODES_EXTRA(X)                                                                    \
    X(IDS_TEST, "test", "/api/test/get/", "thing", IDS_KEY_TAG, 1, 0, "test", "LEAF.TEST",         \
      "test IDs", issue_test, text_test, 0)

#include "ids_mode.c" /* the table, built with the extra row */

/* Stand-ins for src/door/door_ids.c's functions, bound as door_ids.c binds them. */
static int issue_snowflake(void) {
    return 1;
}
static int issue_segment(void) {
    return 2;
}
static int issue_sequence(void) {
    return 3;
}
static int issue_opaque(void) {
    return 4;
}
static int issue_number(void) {
    return 6;
}
static int issue_keyed(void) {
    return 8;
}
static int issue_test(void) {
    return 7;
}
static int text_uuid(void) {
    return 50;
}
static int text_number(void) {
    return 60;
}
static int text_test(void) {
    return 70;
}
static int prepare_keyed(void) {
    return 80;
}

static const struct {
    int (*issue)(void);
    int (*text)(void);
    int (*prepare)(void);
} fns[IDS_MODE_COUNT] = {
#define FNS(e, name, http, key, rule, dense, batch, metric, textcmd, what, issue, text, prepare)   \
    [e] = {issue, text, prepare},
    IDS_MODES(FNS)
#undef FNS
};

/* What src/tables/table_http.c expands for the GET routes: the metric label and the line. */
static const struct {
    const char *name;
    const char *what;
} routes[] = {
#define ROUTE(e, name, http, key, rule, dense, batch, metric, textcmd, what, issue, text, prepare) \
    {name "_get", what},
    IDS_MODES(ROUTE)
#undef ROUTE
};

static void test_modes(void) {
    CHECK_EQ_INT(IDS_MODE_COUNT, 8);
    CHECK_EQ_INT(ids_mode_find("segment", 7), IDS_SEGMENT);
    CHECK_EQ_INT(ids_mode_find("segmen", 6), IDS_MODE_NONE);
    CHECK_EQ_INT(ids_mode_find("Segment", 7), IDS_MODE_NONE);
    CHECK_EQ_INT(ids_mode_find_text_command("leaf.uuid", 9), IDS_UUID);
    CHECK_EQ_INT(ids_mode_find_text_command("LEAF.IDS", 8), IDS_MODE_NONE);
    CHECK(ids_mode_info(IDS_MODE_COUNT) == NULL);
    CHECK(ids_mode_name((enum ids_mode) - 1) == NULL);
    CHECK_EQ_INT(IDS_MODE_NAME_MAX, 9); /* "snowflake" */
    CHECK_EQ_INT(ids_mode_info(IDS_SEQUENCE)->text, 0);
    CHECK_EQ_INT(ids_mode_info(IDS_NUMBER)->text, 1);
}

static void test_new_mode_is_one_row(void) {
    CHECK_EQ_INT(ids_mode_find("test", 4), IDS_TEST);
    const struct ids_mode_info *t = ids_mode_info(IDS_TEST);
    CHECK(strcmp(t->key_prefix, "test:") == 0);
    CHECK_EQ_INT(t->key_prefix_len, 5);
    CHECK(strcmp(t->http_prefix, "/api/test/get/") == 0);
    CHECK_EQ_INT(t->http_prefix_len, strlen("/api/test/get/"));
    CHECK(strcmp(t->key_word, "thing") == 0);
    CHECK_EQ_INT(t->dense, 1);
    CHECK_EQ_INT(t->text, 1);
    CHECK_EQ_INT(ids_mode_find_text_command("leaf.test", 9), IDS_TEST);
    CHECK(strcmp(routes[IDS_TEST].name, "test_get") == 0);
    CHECK(strcmp(routes[IDS_TEST].what, "test IDs") == 0);
    CHECK_EQ_INT(fns[IDS_TEST].issue(), 7);
    CHECK_EQ_INT(fns[IDS_TEST].text(), 70);
    CHECK_EQ_INT(fns[IDS_UUID].issue(), 1); /* UUIDs are snowflake IDs */
    CHECK(fns[IDS_SEGMENT].text == NULL);
    /* only keyed sequences get ready for the keys of pipelined INCRs (door_ids_prepare) */
    CHECK_EQ_INT(fns[IDS_KEYED].prepare(), 80);
    CHECK(fns[IDS_SEQUENCE].prepare == NULL && fns[IDS_TEST].prepare == NULL);
    CHECK_EQ_INT(fns[IDS_SEGMENT].issue() + fns[IDS_SEQUENCE].issue() + fns[IDS_OPAQUE].issue() +
                     fns[IDS_NUMBER].issue() + fns[IDS_NUMBER].text() + fns[IDS_UUID].text(),
                 2 + 3 + 4 + 6 + 60 + 50);
}

/* The key rule is a column: a tag for most modes, "<space>:<key>" for keyed spaces. */
static void test_key_rules(void) {
    CHECK(ids_mode_key_ok(IDS_SEGMENT, "a:b", 3));
    CHECK(!ids_mode_key_ok(IDS_SEGMENT, "a b", 3));
    CHECK(ids_mode_key_ok(IDS_KEYED, "chat:a b\0/\xff", 11));
    CHECK(!ids_mode_key_ok(IDS_KEYED, "chat", 4));
    CHECK(!ids_mode_key_ok(IDS_KEYED, "chat:", 5));
    CHECK(!ids_mode_key_ok(IDS_KEYED, ":k", 2));
    CHECK(!ids_mode_key_ok(IDS_KEYED, "..:k", 4));
    CHECK(!ids_mode_key_ok(IDS_KEYED, "c h:k", 5));
    char big[300];
    memset(big, 'k', sizeof(big));
    memcpy(big, "chat:", 5);
    CHECK(ids_mode_key_ok(IDS_KEYED, big, 205));
    CHECK(!ids_mode_key_ok(IDS_KEYED, big, 206));
    memset(big, 's', 65);
    big[65] = ':';
    CHECK(!ids_mode_key_ok(IDS_KEYED, big, 67));
    CHECK(ids_mode_key_ok(IDS_KEYED, big + 1, 66));
    /* the tag rule is validate_tag's, byte for byte */
    for (int c = 0; c < 256; c++) {
        char one = (char)c;
        CHECK_EQ_INT(ids_mode_key_ok(IDS_SEGMENT, &one, 1), validate_tag(&one, 1));
    }
    CHECK_EQ_INT(ids_mode_key_ok(IDS_SEGMENT, big, 128), validate_tag(big, 128));
    CHECK_EQ_INT(ids_mode_key_ok(IDS_SEGMENT, big, 129), validate_tag(big, 129));
    CHECK(ids_space_ok("chat.v1", 7) && !ids_space_ok(".", 1) && !ids_space_ok("a:b", 3));
    CHECK(strstr(ids_mode_key_rule_text(IDS_KEYED), "200") != NULL);
    CHECK(strstr(ids_mode_key_rule_text(IDS_UUID), "128") != NULL);
}

static void test_http_keys(void) {
    char buf[IDS_MODE_HTTP_KEY_MAX];
    const char *k;
    size_t n;
    const char *raw = "chat/conv%2F42%20%00x";
    CHECK(ids_mode_http_key(IDS_KEYED, raw, strlen(raw), buf, sizeof(buf), &k, &n));
    CHECK_EQ_INT(n, 15);
    CHECK(memcmp(k, "chat:conv/42 \0x", 15) == 0);
    CHECK(!ids_mode_http_key(IDS_KEYED, "chat/a/b", 8, buf, sizeof(buf), &k, &n));
    CHECK(!ids_mode_http_key(IDS_KEYED, "chat/a%2", 8, buf, sizeof(buf), &k, &n));
    CHECK(!ids_mode_http_key(IDS_KEYED, "chat/a%zz", 9, buf, sizeof(buf), &k, &n));
    CHECK(!ids_mode_http_key(IDS_KEYED, "chat", 4, buf, sizeof(buf), &k, &n));
    CHECK(!ids_mode_http_key(IDS_KEYED, "chat/", 5, buf, sizeof(buf), &k, &n));
    CHECK(!ids_mode_http_key(IDS_KEYED, "chat/ab", 7, buf, 4, &k, &n));
    /* A tag mode takes the tail as it is: no escapes. */
    CHECK(ids_mode_http_key(IDS_SEGMENT, "a.b", 3, buf, sizeof(buf), &k, &n));
    CHECK(k == NULL || n == 3);
    CHECK(!ids_mode_http_key(IDS_SEGMENT, "a%41", 4, buf, sizeof(buf), &k, &n));
}

int main(void) {
    TEST(test_modes);
    TEST(test_key_rules);
    TEST(test_http_keys);
    TEST(test_new_mode_is_one_row);
    return unit_done();
}
