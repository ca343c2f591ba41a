/*
 * Unit tests of src/auth/: key patterns, rights, the user record, the user
 * table, the decision, the Authorization header, the secrets and the limit of one log line a
 * second per client address (auth_ratelimit).
 */
#include <stdio.h>
#include <stdlib.h>

#include "auth_decide.h"
#include "auth_grant.h"
#include "auth_header.h"
#include "auth_ratelimit.h"
#include "auth_secret.h"
#include "auth_table.h"
#include "auth_user.h"
#include "unit.h"

#define HASH_A                                                                                     \
    "sha256:"                                                                                      \
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char msg[256];

/* "sha256:<hex>", the text form a record holds, into dst (room: AUTH_HASH_TEXT_LEN + 1). */
static void hash_text(const uint8_t hash[AUTH_HASH_LEN], char *dst) {
    int n = snprintf(dst, AUTH_HASH_TEXT_LEN + 1, "%s", AUTH_HASH_PREFIX);
    for (size_t i = 0; i < AUTH_HASH_LEN; i++) {
        n += snprintf(dst + n, AUTH_HASH_TEXT_LEN + 1 - (size_t)n, "%02x", hash[i]);
    }
}

/* A table of one user, name, whose secret hashes to hash (no grants). */
static struct auth_table *one_user(const char *name, const uint8_t hash[AUTH_HASH_LEN]) {
    char rec[256], text[AUTH_HASH_TEXT_LEN + 1];
    hash_text(hash, text);
    snprintf(rec, sizeof(rec), "{\"name\":\"%s\",\"secret_hash\":\"%s\",\"grants\":[]}", name,
             text);
    struct auth_record r = {NULL, rec, strlen(rec)};
    struct auth_table *t = NULL;
    CHECK_EQ_INT(auth_table_build(&r, 1, NULL, NULL, &t), LEAF_OK);
    CHECK_EQ_INT(auth_table_count(t), 1);
    return t;
}

static int pattern_ok(const char *p) {
    struct auth_grant g;
    return auth_pattern_parse(p, strlen(p), &g, msg, sizeof(msg)) == LEAF_OK;
}

/* 1 when pattern p covers key k (both valid). */
static int covers(const char *p, const char *k) {
    struct auth_grant g;
    struct auth_key key;
    if (auth_pattern_parse(p, strlen(p), &g, msg, sizeof(msg)) != LEAF_OK ||
        auth_key_parse(k, strlen(k), &key) != LEAF_OK) {
        fprintf(stderr, "bad pattern %s or key %s\n", p, k);
        return -1;
    }
    return auth_grant_matches(&g, &key);
}

static void test_patterns(void) {
    CHECK_EQ_INT(covers("sequence:pay", "sequence:pay"), 1);
    CHECK_EQ_INT(covers("sequence:pay", "sequence:pay2"), 0);
    CHECK_EQ_INT(covers("sequence:pay", "sequence:pa"), 0);
    CHECK_EQ_INT(covers("sequence:pay", "segment:pay"), 0);
    CHECK_EQ_INT(covers("segment:orders.*", "segment:orders.eu"), 1);
    CHECK_EQ_INT(covers("segment:orders.*", "segment:orders."), 1);
    CHECK_EQ_INT(covers("segment:orders.*", "segment:orders"), 0);
    CHECK_EQ_INT(covers("segment:orders.*", "segment:ordersX"), 0);
    CHECK_EQ_INT(covers("segment:orders.*", "opaque:orders.eu"), 0);
    CHECK_EQ_INT(covers("segment:orders*", "segment:orders"), 1);
    CHECK_EQ_INT(covers("segment:orders*", "segment:orders-eu"), 1);
    CHECK_EQ_INT(covers("snowflake:*", "snowflake:a"), 1);
    CHECK_EQ_INT(covers("snowflake:*", "segment:a"), 0);
    CHECK_EQ_INT(covers("*", "snowflake:x"), 1);
    CHECK_EQ_INT(covers("*", "segment:x"), 1);
    CHECK_EQ_INT(covers("*", "sequence:x"), 1);
    CHECK_EQ_INT(covers("*", "opaque:x"), 1);
    /* names holding '.', ':' and '-': the mode ends at the first colon */
    CHECK_EQ_INT(covers("segment:a.b:c-d", "segment:a.b:c-d"), 1);
    CHECK_EQ_INT(covers("segment:a:*", "segment:a:b"), 1);
    CHECK_EQ_INT(covers("segment:a:*", "segment:a-b"), 0);
    CHECK_EQ_INT(covers("segment:a-b.*", "segment:a-b.c:d"), 1);
    CHECK_EQ_INT(covers("opaque:x-1", "opaque:x-1"), 1);
    /* keyed spaces: "keyed:<space>:*" covers every key of the space, whatever its bytes */
    CHECK_EQ_INT(covers("keyed:chat:*", "keyed:chat:{conv42}"), 1);
    CHECK_EQ_INT(covers("keyed:chat:*", "keyed:chat:a b/\xff*"), 1);
    CHECK_EQ_INT(covers("keyed:chat:*", "keyed:chats:a"), 0);
    CHECK_EQ_INT(covers("keyed:chat:*", "sequence:chat:a"), 0);
    CHECK_EQ_INT(covers("keyed:*", "keyed:chat:a"), 1);
    CHECK_EQ_INT(covers("keyed:chat:conv42", "keyed:chat:conv42"), 1);
    CHECK_EQ_INT(covers("keyed:chat:conv42", "keyed:chat:conv421"), 0);
    CHECK_EQ_INT(covers("*", "keyed:chat:x"), 1);
}

static void test_bad_patterns(void) {
    const char *bad[] = {"",
                         "**",
                         "seg*",
                         "segment",
                         "segment:",
                         "segment:*.eu",
                         "*:orders",
                         "segment:a*b",
                         "segment:**",
                         "Segment:a",
                         "foo:a",
                         "segment:a b",
                         "segment:a/b",
                         "segment:caf\xc3\xa9",
                         ":a",
                         "segment :a"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        msg[0] = '\0';
        if (pattern_ok(bad[i])) {
            fprintf(stderr, "pattern accepted: \"%s\"\n", bad[i]);
            CHECK(0);
        }
        CHECK(msg[0] != '\0');
    }
    char p[200];
    snprintf(p, sizeof(p), "segment:%0128d", 0);
    CHECK(pattern_ok(p)); /* a whole tag */
    snprintf(p, sizeof(p), "segment:%0129d", 0);
    CHECK(!pattern_ok(p));
    snprintf(p, sizeof(p), "segment:%0127d*", 0);
    CHECK(pattern_ok(p));
    snprintf(p, sizeof(p), "segment:%0128d*", 0);
    CHECK(!pattern_ok(p)); /* would match nothing but a 129-byte tag */
    /* a pattern round-trips through its text */
    const char *good[] = {"*",           "segment:*",   "segment:orders.*", "sequence:pay",
                          "opaque:a:b*", "keyed:chat:*"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        struct auth_grant g;
        char back[AUTH_PATTERN_MAX + 1];
        CHECK_EQ_INT(auth_pattern_parse(good[i], strlen(good[i]), &g, msg, sizeof(msg)), LEAF_OK);
        auth_pattern_format(&g, back);
        CHECK_EQ_STR(back, good[i]);
    }
}

static void test_keys(void) {
    struct auth_key k;
    CHECK_EQ_INT(auth_key_parse("segment:a", 9, &k), LEAF_OK);
    CHECK_EQ_INT(k.mode, IDS_SEGMENT);
    CHECK_EQ_INT(k.len, 1);
    CHECK_EQ_INT(auth_key_parse("segment:", 8, &k), LEAF_EINVAL);
    CHECK_EQ_INT(auth_key_parse("segment", 7, &k), LEAF_EINVAL);
    CHECK_EQ_INT(auth_key_parse("bogus:a", 7, &k), LEAF_EINVAL);
    CHECK_EQ_INT(auth_key_parse("segment:a*", 10, &k), LEAF_EINVAL);
    CHECK_EQ_INT(auth_key_parse(NULL, 0, &k), LEAF_EINVAL);
    /* a keyed key follows its mode's rule (ids_mode_key_ok): <space>:<key>, the key any byte */
    CHECK_EQ_INT(auth_key_parse("keyed:chat:a b", 14, &k), LEAF_OK);
    CHECK_EQ_INT(k.mode, IDS_KEYED);
    CHECK_EQ_INT(k.len, 8);
    CHECK_EQ_INT(auth_key_parse("keyed:chat", 10, &k), LEAF_EINVAL);
    CHECK_EQ_INT(auth_key_parse("keyed:c h:a", 11, &k), LEAF_EINVAL);
}

static leaf_status_t parse(const char *json, struct auth_user *u) {
    msg[0] = '\0';
    return auth_user_parse(json, strlen(json), NULL, u, msg, sizeof(msg));
}

static const char *rec_team_a =
    "{\"name\":\"team-a\",\"secret_hash\":\"" HASH_A "\",\"admin\":false,"
    "\"grants\":[{\"pattern\":\"segment:orders.*\",\"rights\":[\"ids\",\"create\"]},"
    "{\"pattern\":\"sequence:pay\",\"rights\":[\"ids\"]}],\"created_ms\":\"1718000000000\"}";

static void test_record_parse(void) {
    struct auth_user u;
    CHECK_EQ_INT(parse(rec_team_a, &u), LEAF_OK);
    CHECK_EQ_STR(u.name, "team-a");
    CHECK_EQ_INT(u.admin, 0);
    CHECK_EQ_INT(u.ngrants, 2);
    CHECK_EQ_INT(u.created_ms, 1718000000000LL);
    CHECK_EQ_INT(u.secret_hash[0], 0x01);
    CHECK_EQ_INT(u.secret_hash[31], 0xef);
    CHECK_EQ_INT(u.grants[0].rights, AUTH_RIGHT_IDS | AUTH_RIGHT_CREATE);
    CHECK_EQ_INT(u.grants[1].rights, AUTH_RIGHT_IDS);
    auth_user_free(&u);
    /* minimal: admin and created_ms optional, no grants, unknown members ignored */
    CHECK_EQ_INT(parse("{\"name\":\"ops\",\"secret_hash\":\"" HASH_A "\",\"grants\":[],"
                       "\"admin\":true,\"comment\":\"x\",\"created_ms\":17}",
                       &u),
                 LEAF_OK);
    CHECK_EQ_INT(u.admin, 1);
    CHECK_EQ_INT(u.ngrants, 0);
    CHECK_EQ_INT(u.created_ms, 17);
    auth_user_free(&u);
    /* above 2^53 as a string */
    CHECK_EQ_INT(parse("{\"name\":\"a\",\"secret_hash\":\"" HASH_A "\",\"grants\":[],"
                       "\"created_ms\":\"9007199254740993\"}",
                       &u),
                 LEAF_OK);
    CHECK_EQ_INT(u.created_ms, 9007199254740993LL);
    auth_user_free(&u);
    /* the node's name must be the record's */
    CHECK_EQ_INT(auth_user_parse(rec_team_a, strlen(rec_team_a), "team-a", &u, msg, sizeof(msg)),
                 LEAF_OK);
    auth_user_free(&u);
    CHECK_EQ_INT(auth_user_parse(rec_team_a, strlen(rec_team_a), "team-b", &u, msg, sizeof(msg)),
                 LEAF_EINVAL);
    CHECK(strstr(msg, "name") != NULL);
}

/* Each malformed record is refused, with a message naming what is wrong. */
static void test_record_malformed(void) {
    static const struct {
        const char *json, *expect;
    } cases[] = {
        {"not json", "JSON object"},
        {"[]", "JSON object"},
        {"{\"name\":\"a\",\"secret_hash\":\"" HASH_A "\",\"grants\":[]} {}", "JSON object"},
        {"{\"secret_hash\":\"" HASH_A "\",\"grants\":[]}", "name"},
        {"{\"name\":7,\"secret_hash\":\"" HASH_A "\",\"grants\":[]}", "name"},
        {"{\"name\":\"a b\",\"secret_hash\":\"" HASH_A "\",\"grants\":[]}", "name"},
        {"{\"name\":\"a:b\",\"secret_hash\":\"" HASH_A "\",\"grants\":[]}", "name"},
        {"{\"name\":\"a\",\"name\":\"b\",\"secret_hash\":\"" HASH_A "\",\"grants\":[]}", "twice"},
        {"{\"name\":\"a\",\"grants\":[]}", "secret_hash"},
        {"{\"name\":\"a\",\"secret_hash\":\"md5:00\",\"grants\":[]}", "secret_hash"},
        {"{\"name\":\"a\",\"secret_hash\":\"sha256:0123\",\"grants\":[]}", "secret_hash"},
        {"{\"name\":\"a\",\"secret_hash\":\"sha256:"
         "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef\",\"grants\":[]}",
         "secret_hash"},
        {"{\"name\":\"a\",\"secret_hash\":\"sha256:"
         "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg\",\"grants\":[]}",
         "secret_hash"},
        {"{\"name\":\"a\",\"secret_hash\":\"" HASH_A "\"}", "grants"},
        {"{\"name\":\"a\",\"secret_hash\":\"" HASH_A "\",\"grants\":{}}", "grants"},
        {"{\"name\":\"a\",\"secret_hash\":\"" HASH_A "\",\"grants\":[],\"admin\":\"yes\"}",
         "admin"},
        {"{\"name\":\"a\",\"secret_hash\":\"" HASH_A "\",\"grants\":[],\"created_ms\":-1}",
         "created_ms"},
        {"{\"name\":\"a\",\"secret_hash\":\"" HASH_A "\",\"grants\":[],\"created_ms\":1.5}",
         "created_ms"},
        {"{\"name\":\"a\",\"secret_hash\":\"" HASH_A "\",\"grants\":[],\"created_ms\":\"x\"}",
         "created_ms"},
        {"{\"name\":\"a\",\"secret_hash\":\"" HASH_A "\",\"grants\":[7]}", "grants[0]"},
        {"{\"name\":\"a\",\"secret_hash\":\"" HASH_A "\",\"grants\":[{\"rights\":[\"ids\"]}]}",
         "grants[0].pattern"},
        {"{\"name\":\"a\",\"secret_hash\":\"" HASH_A "\",\"grants\":[{\"pattern\":\"*\","
         "\"rights\":[\"ids\"]},{\"pattern\":\"seg*\",\"rights\":[\"ids\"]}]}",
         "grants[1].pattern"},
        {"{\"name\":\"a\",\"secret_hash\":\"" HASH_A "\",\"grants\":[{\"pattern\":\"*\","
         "\"rights\":[\"ids\",\"delete\"]}]}",
         "grants[0].rights: unknown right"},
        {"{\"name\":\"a\",\"secret_hash\":\"" HASH_A "\",\"grants\":[{\"pattern\":\"*\","
         "\"rights\":[]}]}",
         "grants[0].rights"},
        {"{\"name\":\"a\",\"secret_hash\":\"" HASH_A "\",\"grants\":[{\"pattern\":\"*\","
         "\"rights\":\"ids\"}]}",
         "grants[0].rights"},
        {"{\"name\":\"a\",\"secret_hash\":\"" HASH_A "\",\"grants\":[{\"pattern\":\"*\","
         "\"rights\":[\"admin\"]}]}",
         "unknown right"},
        {"{\"name\":\"a\",\"secret_hash\":\"" HASH_A "\",\"grants\":[{\"pattern\":\"*\\u0000x\","
         "\"rights\":[\"ids\"]}]}",
         "NUL"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct auth_user u;
        leaf_status_t rc = parse(cases[i].json, &u);
        if (rc != LEAF_EINVAL || strstr(msg, cases[i].expect) == NULL) {
            fprintf(stderr, "case %zu: rc %d, msg \"%s\", expected \"%s\"\n", i, rc, msg,
                    cases[i].expect);
            CHECK(0);
        }
        CHECK(u.grants == NULL && u.ngrants == 0); /* nothing left to free */
    }
    /* a raw NUL, and a record over 64 KiB */
    struct auth_user u;
    char nul[] = "{\"name\":\"a\0\"}";
    CHECK_EQ_INT(auth_user_parse(nul, sizeof(nul) - 1, NULL, &u, msg, sizeof(msg)), LEAF_EINVAL);
    char *big = malloc(AUTH_RECORD_MAX + 2);
    memset(big, ' ', AUTH_RECORD_MAX + 1);
    big[0] = '{';
    big[AUTH_RECORD_MAX] = '}';
    CHECK_EQ_INT(auth_user_parse(big, AUTH_RECORD_MAX + 1, NULL, &u, msg, sizeof(msg)),
                 LEAF_EINVAL);
    CHECK(strstr(msg, "64 KiB") != NULL);
    free(big);
    /* a message is cut to fit any buffer, even none */
    char tiny[4];
    CHECK_EQ_INT(auth_user_parse("x", 1, NULL, &u, tiny, sizeof(tiny)), LEAF_EINVAL);
    CHECK_EQ_STR(tiny, "the");
    CHECK_EQ_INT(auth_user_parse("x", 1, NULL, &u, NULL, 0), LEAF_EINVAL);
}

static void test_record_round_trip(void) {
    struct auth_user u, back;
    struct sbuf b = SBUF_INIT;
    CHECK_EQ_INT(parse(rec_team_a, &u), LEAF_OK);
    u.admin = 1;
    auth_user_format(&u, &b);
    CHECK(!b.failed);
    CHECK_EQ_INT(auth_user_parse(b.data, b.len, "team-a", &back, msg, sizeof(msg)), LEAF_OK);
    CHECK_EQ_STR(back.name, u.name);
    CHECK(memcmp(back.secret_hash, u.secret_hash, AUTH_HASH_LEN) == 0);
    CHECK_EQ_INT(back.admin, 1);
    CHECK_EQ_INT(back.created_ms, u.created_ms);
    CHECK_EQ_INT(back.ngrants, u.ngrants);
    for (size_t i = 0; i < u.ngrants && i < back.ngrants; i++) {
        CHECK(memcmp(&back.grants[i], &u.grants[i], sizeof(u.grants[i])) == 0);
    }
    CHECK(strstr(b.data, "\"created_ms\":\"1718000000000\"") != NULL);
    CHECK(strstr(b.data, "\"rights\":[\"ids\",\"create\"]") != NULL);
    /* a second trip gives the same text */
    struct sbuf b2 = SBUF_INIT;
    auth_user_format(&back, &b2);
    CHECK_EQ_STR(b2.data, b.data);
    sbuf_free(&b);
    sbuf_free(&b2);
    auth_user_free(&u);
    auth_user_free(&back);
}

static int rejected;
static char rejected_name[80];

static void on_reject(void *arg, const char *node_name, const char *m) {
    (void)arg;
    rejected++;
    snprintf(rejected_name, sizeof(rejected_name), "%s", node_name ? node_name : "");
    CHECK(m != NULL && m[0] != '\0');
}

static void test_table_one_bad_record(void) {
    char good_b[512];
    snprintf(good_b, sizeof(good_b),
             "{\"name\":\"b\",\"secret_hash\":\"%s\",\"grants\":[],\"admin\":true}", HASH_A);
    struct auth_record recs[] = {
        {"team-a", rec_team_a, strlen(rec_team_a)},
        {"broken", "{\"name\":\"broken\",\"grants\":[", 27},
        {"b", good_b, strlen(good_b)},
    };
    struct auth_table *t = NULL;
    rejected = 0;
    CHECK_EQ_INT(auth_table_build(recs, 3, on_reject, NULL, &t), LEAF_OK);
    CHECK_EQ_INT(rejected, 1);
    CHECK_EQ_STR(rejected_name, "broken");
    CHECK_EQ_INT(auth_table_count(t), 2);
    CHECK(auth_table_find(t, "team-a", 6) != NULL);
    CHECK(auth_table_find(t, "b", 1) != NULL);
    CHECK(auth_table_find(t, "broken", 6) == NULL);
    CHECK(auth_table_find(t, "team-", 5) == NULL);
    CHECK(auth_table_find(t, "team-ab", 7) == NULL);
    CHECK(auth_table_find(t, "team-a\0", 7) == NULL);
    CHECK_EQ_STR(auth_table_at(t, 0)->name, "b");
    auth_table_free(t);
    /* a name twice: both left out, the rest kept */
    struct auth_record dup[] = {
        {NULL, rec_team_a, strlen(rec_team_a)},
        {NULL, good_b, strlen(good_b)},
        {NULL, rec_team_a, strlen(rec_team_a)},
    };
    rejected = 0;
    CHECK_EQ_INT(auth_table_build(dup, 3, on_reject, NULL, &t), LEAF_OK);
    CHECK_EQ_INT(rejected, 2);
    CHECK_EQ_INT(auth_table_count(t), 1);
    CHECK(auth_table_find(t, "team-a", 6) == NULL);
    auth_table_free(t);
    /* no records, and no table */
    CHECK_EQ_INT(auth_table_build(NULL, 0, NULL, NULL, &t), LEAF_OK);
    CHECK_EQ_INT(auth_table_count(t), 0);
    CHECK(auth_table_find(t, "a", 1) == NULL);
    auth_table_free(t);
    CHECK(auth_table_find(NULL, "a", 1) == NULL);
}

/* Thousands of users: every one found by bisection. */
static void test_table_large(void) {
    enum { N = 5000 };
    enum { REC = 160 };
    struct auth_record *recs = calloc(N, sizeof(*recs));
    char *text = calloc(N, REC);
    for (int i = 0; i < N; i++) {
        char *rec = text + (size_t)i * REC;
        int n = snprintf(rec, REC,
                         "{\"name\":\"user-%d\",\"secret_hash\":\"" HASH_A
                         "\",\"grants\":[],\"created_ms\":%d}",
                         (i * 7919) % N, (i * 7919) % N);
        recs[i] = (struct auth_record){NULL, rec, (size_t)n};
    }
    struct auth_table *t = NULL;
    CHECK_EQ_INT(auth_table_build(recs, N, NULL, NULL, &t), LEAF_OK);
    free(recs);
    free(text);
    CHECK_EQ_INT(auth_table_count(t), N);
    int found = 0;
    for (int i = 0; i < N; i++) {
        char name[32];
        int n = snprintf(name, sizeof(name), "user-%d", i);
        const struct auth_user *u = auth_table_find(t, name, (size_t)n);
        found += u != NULL && u->created_ms == i;
    }
    CHECK_EQ_INT(found, N);
    CHECK(auth_table_find(t, "user-5000", 9) == NULL);
    CHECK(auth_table_find(t, "user", 4) == NULL);
    auth_table_free(t);
}

static struct auth_key key(const char *k) {
    struct auth_key out = {IDS_SEGMENT, "", 0};
    CHECK_EQ_INT(auth_key_parse(k, strlen(k), &out), LEAF_OK);
    return out;
}

/* Every right against a matching and a non-matching key, and admin. */
static void test_decide(void) {
    struct auth_user u;
    CHECK_EQ_INT(parse(rec_team_a, &u), LEAF_OK);
    struct auth_key eu = key("segment:orders.eu"), other = key("segment:billing");
    struct auth_key pay = key("sequence:pay"), snow = key("snowflake:orders.eu");

    CHECK_EQ_INT(auth_decide(AUTH_CRED_OK, &u, AUTH_NEED_IDS, &eu), AUTH_ALLOW);
    CHECK_EQ_INT(auth_decide(AUTH_CRED_OK, &u, AUTH_NEED_CREATE, &eu), AUTH_ALLOW);
    CHECK_EQ_INT(auth_decide(AUTH_CRED_OK, &u, AUTH_NEED_IDS, &other), AUTH_FORBIDDEN);
    CHECK_EQ_INT(auth_decide(AUTH_CRED_OK, &u, AUTH_NEED_CREATE, &other), AUTH_FORBIDDEN);
    CHECK_EQ_INT(auth_decide(AUTH_CRED_OK, &u, AUTH_NEED_IDS, &pay), AUTH_ALLOW);
    CHECK_EQ_INT(auth_decide(AUTH_CRED_OK, &u, AUTH_NEED_CREATE, &pay), AUTH_FORBIDDEN);
    CHECK_EQ_INT(auth_decide(AUTH_CRED_OK, &u, AUTH_NEED_IDS, &snow), AUTH_FORBIDDEN);
    CHECK_EQ_INT(auth_decide(AUTH_CRED_OK, &u, AUTH_NEED_ADMIN, NULL), AUTH_FORBIDDEN);
    CHECK_EQ_INT(auth_decide(AUTH_CRED_OK, &u, AUTH_NEED_IDS, NULL), AUTH_FORBIDDEN);
    CHECK_EQ_INT(auth_decide(AUTH_CRED_OK, &u, AUTH_NEED_NONE, NULL), AUTH_ALLOW);
    u.admin = 1;
    CHECK_EQ_INT(auth_decide(AUTH_CRED_OK, &u, AUTH_NEED_ADMIN, NULL), AUTH_ALLOW);
    CHECK_EQ_INT(auth_decide(AUTH_CRED_OK, &u, AUTH_NEED_IDS, &other), AUTH_FORBIDDEN);
    /* who is asking comes first */
    CHECK_EQ_INT(auth_decide(AUTH_CRED_NONE, NULL, AUTH_NEED_IDS, &eu), AUTH_NOAUTH);
    CHECK_EQ_INT(auth_decide(AUTH_CRED_BAD, NULL, AUTH_NEED_IDS, &eu), AUTH_WRONGPASS);
    CHECK_EQ_INT(auth_decide(AUTH_CRED_OK, NULL, AUTH_NEED_ADMIN, NULL), AUTH_WRONGPASS);
    CHECK_EQ_INT(auth_decide(AUTH_CRED_NONE, NULL, AUTH_NEED_NONE, NULL), AUTH_ALLOW);
    CHECK_EQ_INT(auth_decide(AUTH_CRED_BAD, NULL, AUTH_NEED_NONE, NULL), AUTH_ALLOW);
    auth_user_free(&u);
    /* the legacy admin token: admin and create, never ids */
    const struct auth_user *root = auth_user_root();
    CHECK_EQ_INT(auth_decide(AUTH_CRED_OK, root, AUTH_NEED_ADMIN, NULL), AUTH_ALLOW);
    CHECK_EQ_INT(auth_decide(AUTH_CRED_OK, root, AUTH_NEED_CREATE, &other), AUTH_ALLOW);
    CHECK_EQ_INT(auth_decide(AUTH_CRED_OK, root, AUTH_NEED_IDS, &other), AUTH_FORBIDDEN);
    /* the answers */
    CHECK(strncmp(auth_verdict_resp(AUTH_NOAUTH), "NOAUTH ", 7) == 0);
    CHECK(strncmp(auth_verdict_resp(AUTH_WRONGPASS), "WRONGPASS ", 10) == 0);
    CHECK(strncmp(auth_verdict_resp(AUTH_FORBIDDEN), "NOPERM ", 7) == 0);
    CHECK(auth_verdict_resp((enum auth_verdict)99) == NULL);
}

static enum auth_scheme header(const char *v, struct auth_header *h) {
    return auth_header_parse(v, v != NULL ? strlen(v) : 0, h);
}

static int span_is(const char *p, size_t n, const char *want) {
    return p != NULL && n == strlen(want) && memcmp(p, want, n) == 0;
}

static void test_header_basic(void) {
    struct auth_header h;
    /* "team-a:lfd_s3cr:et" (a colon in the secret is the secret's) */
    CHECK_EQ_INT(header("Basic dGVhbS1hOmxmZF9zM2NyOmV0", &h), AUTH_SCHEME_BASIC);
    CHECK(span_is(h.user, h.user_len, "team-a"));
    CHECK(span_is(h.secret, h.secret_len, "lfd_s3cr:et"));
    auth_header_clear(&h);
    CHECK(h.decoded[0] == '\0');
    /* any case, several spaces, padding of one and two */
    CHECK_EQ_INT(header("  basic   YTpiYw==\t", &h), AUTH_SCHEME_BASIC); /* a:bc */
    CHECK(span_is(h.user, h.user_len, "a") && span_is(h.secret, h.secret_len, "bc"));
    CHECK_EQ_INT(header("BASIC YWI6Y2Q=", &h), AUTH_SCHEME_BASIC); /* ab:cd */
    CHECK(span_is(h.user, h.user_len, "ab") && span_is(h.secret, h.secret_len, "cd"));
    CHECK_EQ_INT(header(NULL, &h), AUTH_SCHEME_NONE);
    CHECK_EQ_INT(header("", &h), AUTH_SCHEME_NONE);
    CHECK_EQ_INT(header("   ", &h), AUTH_SCHEME_NONE);
}

static void test_header_bad(void) {
    const char *bad[] = {
        "Basic",                  /* no credentials */
        "Basic ",                 /* the same after trimming */
        "Basic !!!!",             /* not base64 */
        "Basic YTpiYw",           /* padding missing */
        "Basic YTpiYw=",          /* padding short */
        "Basic YTpi=Yw=",         /* '=' inside */
        "Basic YTpiYx==",         /* unused bits set */
        "Basic YWI6Y2R=",         /* unused bits set (one '=') */
        "Basic YTpi Yw==",        /* a space inside */
        "Basic YWJj",             /* "abc": no colon */
        "Basic OmFiYw==",         /* ":abc": empty user */
        "Basic YWJjOg==",         /* "abc:": empty secret */
        "Basic YQphOmI=",         /* "a\na:b": a control character */
        "Basic YTpiAA==",         /* "a:b\0": a NUL */
        "Basic YTpiYw==YTpiYw==", /* two blocks, '=' inside */
        "Digest YTpiYw==",        /* another scheme */
        "BasicYTpiYw==",          /* no space */
        "Basic\tYTpiYw==",        /* a tab is not the separator */
        "Basic_ YTpiYw==",
    };
    struct auth_header h;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (header(bad[i], &h) != AUTH_SCHEME_INVALID || h.why == NULL) {
            fprintf(stderr, "accepted: \"%s\"\n", bad[i]);
            CHECK(0);
        }
    }
    /* 10 KB, valid base64 throughout: refused for its length alone */
    size_t n = 10 * 1024;
    char *big = malloc(n + 1);
    memcpy(big, "Basic ", 6);
    for (size_t i = 6; i < n; i++) {
        big[i] = "YTpi"[(i - 6) % 4];
    }
    big[n - (n - 6) % 4] = '\0';
    CHECK_EQ_INT(header(big, &h), AUTH_SCHEME_INVALID);
    CHECK(strstr(h.why, "1 KiB") != NULL);
    /* the longest allowed value decodes */
    size_t max = AUTH_HEADER_MAX - 6;
    max -= max % 4;
    big[6 + max] = '\0';
    CHECK_EQ_INT(header(big, &h), AUTH_SCHEME_BASIC);
    CHECK_EQ_INT(h.user_len, 1);
    free(big);
}

static void test_header_bearer(void) {
    struct auth_header h;
    CHECK_EQ_INT(header("Bearer s3cret-token", &h), AUTH_SCHEME_BEARER);
    CHECK(span_is(h.secret, h.secret_len, "s3cret-token"));
    CHECK(h.user == NULL);
    CHECK_EQ_INT(header("bearer  a b ", &h), AUTH_SCHEME_BEARER);
    CHECK(span_is(h.secret, h.secret_len, "a b"));
    CHECK_EQ_INT(header("Bearer", &h), AUTH_SCHEME_INVALID);
    CHECK_EQ_INT(header("Bearer   ", &h), AUTH_SCHEME_INVALID);
}

static int b64url_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
}

static void test_secret_generate(void) {
    char a[AUTH_SECRET_LEN + 1], b[AUTH_SECRET_LEN + 1];
    CHECK_EQ_INT(auth_secret_generate(a), LEAF_OK);
    CHECK_EQ_INT(auth_secret_generate(b), LEAF_OK);
    CHECK_EQ_INT(strlen(a), 36);
    CHECK_EQ_INT(AUTH_SECRET_RANDOM * 8 >= 128, 1);
    CHECK(strncmp(a, "lfd_", 4) == 0);
    for (size_t i = 4; i < strlen(a); i++) {
        CHECK(b64url_char(a[i]));
    }
    CHECK(strcmp(a, b) != 0);
    /* a generated secret works as the secret half of a Basic header */
    struct auth_header h;
    CHECK_EQ_INT(header("Basic dTpsZmRfQUJDLV8=", &h), AUTH_SCHEME_BASIC); /* u:lfd_ABC-_ */
    CHECK(span_is(h.secret, h.secret_len, "lfd_ABC-_"));
}

static void test_secret_hash_verify(void) {
    uint8_t hash[AUTH_HASH_LEN];
    char text[AUTH_HASH_TEXT_LEN + 1];
    /* SHA-256("abc"), the FIPS 180-2 example */
    CHECK_EQ_INT(auth_secret_hash("abc", 3, hash), LEAF_OK);
    hash_text(hash, text);
    CHECK_EQ_STR(text, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    /* a record's text form reads back, and writes back, as the same digest */
    struct auth_table *t = one_user("abc", hash);
    const struct auth_user *u = auth_table_find(t, "abc", 3);
    CHECK(u != NULL && memcmp(u->secret_hash, hash, sizeof(hash)) == 0);
    struct sbuf b = SBUF_INIT;
    auth_user_format(u, &b);
    CHECK(!b.failed && strstr(b.data, text) != NULL);
    sbuf_free(&b);
    auth_table_free(t);

    char s[AUTH_SECRET_LEN + 1];
    CHECK_EQ_INT(auth_secret_generate(s), LEAF_OK);
    CHECK_EQ_INT(auth_secret_hash(s, strlen(s), hash), LEAF_OK);
    t = one_user("u", hash);
    CHECK_EQ_INT(auth_secret_authenticate(t, "u", 1, s, strlen(s), &u), LEAF_OK);
    char wrong[AUTH_SECRET_LEN + 1];
    memcpy(wrong, s, sizeof(wrong));
    wrong[10] = wrong[10] == 'A' ? 'B' : 'A';
    CHECK_EQ_INT(auth_secret_authenticate(t, "u", 1, wrong, strlen(wrong), &u), LEAF_EINVAL);
    CHECK_EQ_INT(auth_secret_authenticate(t, "u", 1, s, strlen(s) - 1, &u), LEAF_EINVAL);
    CHECK_EQ_INT(auth_secret_authenticate(t, "u", 1, "", 0, &u), LEAF_EINVAL);
    auth_table_free(t);
    CHECK_EQ_INT(auth_secret_equal("tok", 3, "tok", 3), 1);
    CHECK_EQ_INT(auth_secret_equal("tok", 3, "tok2", 4), 0);
    CHECK_EQ_INT(auth_secret_equal("tok", 3, "tak", 3), 0);
}

/* The whole path: a record with a real hash, a Basic header, the decision. */
static void test_authenticate_and_session(void) {
    char secret[AUTH_SECRET_LEN + 1], rec[512], hash_hex[AUTH_HASH_TEXT_LEN + 1];
    uint8_t hash[AUTH_HASH_LEN];
    CHECK_EQ_INT(auth_secret_generate(secret), LEAF_OK);
    CHECK_EQ_INT(auth_secret_hash(secret, strlen(secret), hash), LEAF_OK);
    hash_text(hash, hash_hex);
    snprintf(rec, sizeof(rec),
             "{\"name\":\"team-a\",\"secret_hash\":\"%s\",\"grants\":[{\"pattern\":"
             "\"segment:orders.*\",\"rights\":[\"ids\"]}]}",
             hash_hex);
    struct auth_record r = {"team-a", rec, strlen(rec)};
    struct auth_table *t = NULL;
    CHECK_EQ_INT(auth_table_build(&r, 1, NULL, NULL, &t), LEAF_OK);
    const struct auth_user *u = NULL;
    CHECK_EQ_INT(auth_secret_authenticate(t, "team-a", 6, secret, strlen(secret), &u), LEAF_OK);
    CHECK(u != NULL);
    struct auth_key eu = key("segment:orders.eu"), other = key("segment:billing");
    CHECK_EQ_INT(auth_decide(AUTH_CRED_OK, u, AUTH_NEED_IDS, &eu), AUTH_ALLOW);
    CHECK_EQ_INT(auth_decide(AUTH_CRED_OK, u, AUTH_NEED_IDS, &other), AUTH_FORBIDDEN);
    CHECK_EQ_INT(auth_secret_authenticate(t, "team-a", 6, "lfd_x", 5, &u), LEAF_EINVAL);
    CHECK(u == NULL);
    CHECK_EQ_INT(auth_secret_authenticate(t, "team-b", 6, secret, strlen(secret), &u),
                 LEAF_ENOTFOUND);
    CHECK_EQ_INT(auth_secret_authenticate(NULL, "team-a", 6, secret, strlen(secret), &u),
                 LEAF_ENOTFOUND);

    /* a RESP session survives a new table with the same user, not a rotation */
    struct auth_session s = {0};
    CHECK(auth_session_user(t, &s) == NULL);
    CHECK_EQ_INT(auth_secret_authenticate(t, "team-a", 6, secret, strlen(secret), &u), LEAF_OK);
    auth_session_set(&s, u);
    struct auth_table *t2 = NULL;
    CHECK_EQ_INT(auth_table_build(&r, 1, NULL, NULL, &t2), LEAF_OK);
    auth_table_free(t);
    CHECK(auth_session_user(t2, &s) != NULL);
    char rotated[512];
    snprintf(rotated, sizeof(rotated), "{\"name\":\"team-a\",\"secret_hash\":\"%s\",\"grants\":[]}",
             HASH_A);
    struct auth_record r2 = {"team-a", rotated, strlen(rotated)};
    struct auth_table *t3 = NULL;
    CHECK_EQ_INT(auth_table_build(&r2, 1, NULL, NULL, &t3), LEAF_OK);
    CHECK(auth_session_user(t3, &s) == NULL);
    CHECK(auth_session_user(NULL, &s) == NULL);
    auth_table_free(t2);
    auth_table_free(t3);
}

/* PATTERN:RIGHTS as leafctl writes grants, and back. */
static void test_grant_spec(void) {
    struct auth_grant g;
    char why[200], out[AUTH_GRANT_SPEC_MAX + 1];
    CHECK_EQ_INT(auth_grant_spec_parse("segment:orders.*:ids,create", 27, 1, &g, why, sizeof(why)),
                 LEAF_OK);
    CHECK(g.rights == (AUTH_RIGHT_IDS | AUTH_RIGHT_CREATE) && g.prefix && g.len == 7);
    auth_grant_spec_format(&g, out);
    CHECK(strcmp(out, "segment:orders.*:ids,create") == 0);
    CHECK_EQ_INT(auth_grant_spec_parse("*:ids", 5, 1, &g, why, sizeof(why)), LEAF_OK);
    CHECK(g.any_mode && g.rights == AUTH_RIGHT_IDS);
    /* A name with colons: the rights follow the last one. */
    CHECK_EQ_INT(auth_grant_spec_parse("sequence:a:b:create", 19, 1, &g, why, sizeof(why)),
                 LEAF_OK);
    CHECK(g.len == 3 && memcmp(g.name, "a:b", 3) == 0 && g.rights == AUTH_RIGHT_CREATE);
    /* Rights required: refused without; optional (revoke): all rights. */
    CHECK_EQ_INT(auth_grant_spec_parse("sequence:pay", 12, 1, &g, why, sizeof(why)), LEAF_EINVAL);
    CHECK(strstr(why, "PATTERN:RIGHTS") != NULL);
    CHECK_EQ_INT(auth_grant_spec_parse("sequence:pay", 12, 0, &g, why, sizeof(why)), LEAF_OK);
    CHECK(g.rights == AUTH_RIGHT_ALL && g.len == 3);
    /* A tag called "ids": the pattern segment alone is no pattern, so it is the name. */
    CHECK_EQ_INT(auth_grant_spec_parse("segment:ids", 11, 0, &g, why, sizeof(why)), LEAF_OK);
    CHECK(g.len == 3 && memcmp(g.name, "ids", 3) == 0 && g.rights == AUTH_RIGHT_ALL);
    CHECK_EQ_INT(auth_grant_spec_parse("segment:ids:ids", 15, 1, &g, why, sizeof(why)), LEAF_OK);
    /* The metrics right (docs/SECURITY.md): named like the others. */
    CHECK_EQ_INT(auth_grant_spec_parse("*:metrics", 9, 1, &g, why, sizeof(why)), LEAF_OK);
    CHECK(g.any_mode && g.rights == AUTH_RIGHT_METRICS);
    CHECK_EQ_INT(auth_grant_spec_parse("segment:a:admin", 15, 1, &g, why, sizeof(why)),
                 LEAF_EINVAL);
    CHECK_EQ_INT(auth_grant_spec_parse("seg*:ids", 8, 1, &g, why, sizeof(why)), LEAF_EINVAL);
    CHECK_EQ_INT(auth_grant_spec_parse("segment:a:ids,", 14, 1, &g, why, sizeof(why)), LEAF_EINVAL);
}

/* Grant merges rights into the same pattern; revoke takes them away and drops empty grants. */
static void test_user_grant_revoke(void) {
    struct auth_user u;
    memset(&u, 0, sizeof(u));
    struct auth_grant g;
    char why[200];
    auth_grant_spec_parse("segment:orders.*:ids", 20, 1, &g, why, sizeof(why));
    CHECK_EQ_INT(auth_user_grant(&u, &g), LEAF_OK);
    auth_grant_spec_parse("segment:orders.*:create", 23, 1, &g, why, sizeof(why));
    CHECK_EQ_INT(auth_user_grant(&u, &g), LEAF_OK);
    CHECK(u.ngrants == 1 && u.grants[0].rights == (AUTH_RIGHT_IDS | AUTH_RIGHT_CREATE));
    auth_grant_spec_parse("*:ids", 5, 1, &g, why, sizeof(why));
    CHECK_EQ_INT(auth_user_grant(&u, &g), LEAF_OK);
    CHECK_EQ_INT(u.ngrants, 2);
    auth_grant_spec_parse("segment:orders.*:ids", 20, 0, &g, why, sizeof(why));
    CHECK(auth_user_revoke(&u, &g));
    CHECK(u.ngrants == 2 && u.grants[0].rights == AUTH_RIGHT_CREATE);
    auth_grant_spec_parse("segment:orders.*", 16, 0, &g, why, sizeof(why));
    CHECK(auth_user_revoke(&u, &g));
    CHECK(u.ngrants == 1 && u.grants[0].any_mode);
    CHECK(!auth_user_revoke(&u, &g)); /* nothing left to take */
    for (int i = 0; i < AUTH_GRANTS_MAX; i++) {
        char spec[64];
        int n = snprintf(spec, sizeof(spec), "segment:t%d:ids", i);
        auth_grant_spec_parse(spec, (size_t)n, 1, &g, why, sizeof(why));
        if (auth_user_grant(&u, &g) != LEAF_OK) {
            CHECK_EQ_INT((int)u.ngrants, AUTH_GRANTS_MAX);
            break;
        }
    }
    CHECK_EQ_INT((int)u.ngrants, AUTH_GRANTS_MAX);
    auth_user_free(&u);
}

/* One line a second per key, whatever the collisions; suppressed lines counted. */
static void test_ratelimit(void) {
    static struct auth_ratelimit r; /* 16 KiB: not on the stack */
    uint64_t sup = 99;
    CHECK(auth_ratelimit_allow(&r, "127.0.0.1", 9, 1000, &sup));
    CHECK_EQ_INT(sup, 0);
    CHECK(!auth_ratelimit_allow(&r, "127.0.0.1", 9, 1500, &sup));
    CHECK(!auth_ratelimit_allow(&r, "127.0.0.1", 9, 1999, &sup));
    CHECK(auth_ratelimit_allow(&r, "127.0.0.1", 9, 2000, &sup));
    CHECK_EQ_INT(sup, 2);
    /* Many keys within one second: each key at most once, whatever slot it shares. */
    int allowed = 0;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 5000; i++) {
            char key[32];
            int n = snprintf(key, sizeof(key), "peer-%d", i);
            allowed += auth_ratelimit_allow(&r, key, (size_t)n, 10000 + round * 10, &sup);
        }
    }
    CHECK(allowed <= AUTH_RATELIMIT_SLOTS);
    CHECK(allowed > AUTH_RATELIMIT_SLOTS / 2);
}

int main(void) {
    TEST(test_ratelimit);
    TEST(test_grant_spec);
    TEST(test_user_grant_revoke);
    TEST(test_patterns);
    TEST(test_bad_patterns);
    TEST(test_keys);
    TEST(test_record_parse);
    TEST(test_record_malformed);
    TEST(test_record_round_trip);
    TEST(test_table_one_bad_record);
    TEST(test_table_large);
    TEST(test_decide);
    TEST(test_header_basic);
    TEST(test_header_bad);
    TEST(test_header_bearer);
    TEST(test_secret_generate);
    TEST(test_secret_hash_verify);
    TEST(test_authenticate_and_session);
    return unit_done();
}
