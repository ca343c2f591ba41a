/*
 * Region claims, the pure part (zk/zk_region.c, docs/regions.md "Region claims"): the paths,
 * whose a claim is, the start decision of claim and cache, and the cache file's text.
 */
#include "unit.h"
#include "zk_region.h"

static void test_paths(void) {
    char buf[64];
    CHECK_EQ_INT(zk_region_path(buf, sizeof(buf), "orders", 3), LEAF_OK);
    CHECK_EQ_STR(buf, "/leafd-regions/orders/3");
    CHECK_EQ_INT(zk_region_dir(buf, sizeof(buf), "orders"), LEAF_OK);
    CHECK_EQ_STR(buf, "/leafd-regions/orders");
    CHECK_EQ_INT(zk_region_path(buf, 10, "orders", 3), LEAF_EINVAL);
}

static void test_judge(void) {
    CHECK_EQ_INT(zk_region_judge("eu", 2, "eu"), ZK_REGION_OURS);
    CHECK_EQ_INT(zk_region_judge("eu\n", 3, "eu"), ZK_REGION_OURS);
    CHECK_EQ_INT(zk_region_judge("eu-west", 7, "eu"), ZK_REGION_OTHER);
    CHECK_EQ_INT(zk_region_judge("e", 1, "eu"), ZK_REGION_OTHER);
    CHECK_EQ_INT(zk_region_judge("", 0, "eu"), ZK_REGION_OTHER);
}

static void test_count_record(void) {
    char buf[32];
    int64_t n = 0;
    size_t len = zk_region_count_format(3, buf, sizeof(buf));
    CHECK_EQ_STR(buf, "count=3");
    CHECK_EQ_INT(zk_region_count_parse(buf, len, &n), LEAF_OK);
    CHECK_EQ_INT(n, 3);
    CHECK_EQ_INT(zk_region_count_parse("count=3\n", 8, &n), LEAF_OK);
    CHECK_EQ_INT(zk_region_count_parse("", 0, &n), LEAF_EINVAL);
    CHECK_EQ_INT(zk_region_count_parse("count=", 6, &n), LEAF_EINVAL);
    CHECK_EQ_INT(zk_region_count_parse("count=0", 7, &n), LEAF_EINVAL);
    CHECK_EQ_INT(zk_region_count_parse("regions=3", 9, &n), LEAF_EINVAL);
}

static void test_name_ok(void) {
    CHECK(zk_region_name_ok("eu-west.1_a", 11));
    CHECK(!zk_region_name_ok("", 0));
    CHECK(!zk_region_name_ok("eu\"west", 7));
    CHECK(!zk_region_name_ok("eu west", 7));
}

static void test_decide(void) {
    struct zk_region_cache mine = {"eu", 1, 2, 1000}, moved = {"eu", 2, 2, 1000},
                           other = {"us", 1, 2, 1}, recounted = {"eu", 1, 3, 1000};
    /* the registry's answer wins over any cache */
    CHECK_EQ_INT(zk_region_decide(ZK_REGION_OURS, NULL, "eu", 1, 2), ZK_REGION_SERVE);
    CHECK_EQ_INT(zk_region_decide(ZK_REGION_OTHER, &mine, "eu", 1, 2), ZK_REGION_REFUSE);
    CHECK_EQ_INT(zk_region_decide(ZK_REGION_OTHER, NULL, "eu", 1, 2), ZK_REGION_REFUSE);
    /* the registry away: a cached claim of this very name and ID serves, nothing else */
    CHECK_EQ_INT(zk_region_decide(ZK_REGION_UNKNOWN, &mine, "eu", 1, 2), ZK_REGION_SERVE);
    CHECK_EQ_INT(zk_region_decide(ZK_REGION_UNKNOWN, NULL, "eu", 1, 2), ZK_REGION_WAIT);
    CHECK_EQ_INT(zk_region_decide(ZK_REGION_UNKNOWN, &moved, "eu", 1, 2), ZK_REGION_WAIT);
    CHECK_EQ_INT(zk_region_decide(ZK_REGION_UNKNOWN, &other, "eu", 1, 2), ZK_REGION_WAIT);
    /* another count: the registry's record refuses, a copy of another count waits */
    CHECK_EQ_INT(zk_region_decide(ZK_REGION_COUNT, &mine, "eu", 1, 2), ZK_REGION_REFUSE);
    CHECK_EQ_INT(zk_region_decide(ZK_REGION_UNKNOWN, &recounted, "eu", 1, 2), ZK_REGION_WAIT);
}

static void test_cache_text(void) {
    struct zk_region_cache c = {"ap-south", 5, 8, 1795000000000}, back;
    char buf[128];
    size_t n = zk_region_cache_format(&c, buf, sizeof(buf));
    CHECK(n > 0);
    CHECK_EQ_STR(buf, "region=ap-south\nid=5\ncount=8\nconfirmed=1795000000000\n");
    CHECK_EQ_INT(zk_region_cache_parse(buf, n, &back), LEAF_OK);
    CHECK_EQ_STR(back.name, "ap-south");
    CHECK_EQ_INT(back.id, 5);
    CHECK_EQ_INT(back.count, 8);
    CHECK_EQ_INT(back.confirmed_ms, 1795000000000);
    CHECK_EQ_INT(zk_region_cache_format(&c, buf, 10), 0);
    const char *no_id = "region=eu\ncount=2\nconfirmed=1\n";
    CHECK_EQ_INT(zk_region_cache_parse(no_id, strlen(no_id), &back), LEAF_EINVAL);
    const char *bad = "region=eu\nid=x\ncount=2\nconfirmed=1\n";
    CHECK_EQ_INT(zk_region_cache_parse(bad, strlen(bad), &back), LEAF_EINVAL);
    const char *extra = "# a comment\nregion=eu\nid=0\ncount=2\nconfirmed=1\nworker=3\n";
    const char *no_count = "region=eu\nid=0\nconfirmed=1\n"; /* a copy without a count waits */
    CHECK_EQ_INT(zk_region_cache_parse(no_count, strlen(no_count), &back), LEAF_EINVAL);
    CHECK_EQ_INT(zk_region_cache_parse(extra, strlen(extra), &back), LEAF_EINVAL);
    const char *torn = "region=eu\nid=0\nconf";
    CHECK_EQ_INT(zk_region_cache_parse(torn, strlen(torn), &back), LEAF_EINVAL);
}

/* Homes' znodes (docs/regions.md, "Homes"): kind:name, read back by the first colon. */
static void test_home_paths(void) {
    char buf[300];
    CHECK_EQ_INT(zk_region_homes_dir(buf, sizeof(buf), "orders"), LEAF_OK);
    CHECK_EQ_STR(buf, "/leafd-homes/orders");
    CHECK_EQ_INT(zk_region_homes_dir(buf, 10, "orders"), LEAF_EINVAL);
    CHECK_EQ_INT(zk_region_home_child(buf, sizeof(buf), ZK_REGION_SEQUENCE, "a:b.c", 5), LEAF_OK);
    CHECK_EQ_STR(buf, "sequence:a:b.c");
    enum zk_region_kind k;
    const char *name;
    size_t len;
    CHECK_EQ_INT(zk_region_home_parse(buf, &k, &name, &len), LEAF_OK);
    CHECK_EQ_INT(k, ZK_REGION_SEQUENCE);
    CHECK_EQ_INT((int)len, 5);
    CHECK(memcmp(name, "a:b.c", 5) == 0);
    CHECK_EQ_INT(zk_region_home_child(buf, sizeof(buf), ZK_REGION_KEYED, "users", 5), LEAF_OK);
    CHECK_EQ_INT(zk_region_home_parse(buf, &k, &name, &len), LEAF_OK);
    CHECK_EQ_INT(k, ZK_REGION_KEYED);
    CHECK_EQ_STR(zk_region_kind_name(ZK_REGION_NUMBERING), "numbering");
    CHECK_EQ_INT(zk_region_home_child(buf, sizeof(buf), ZK_REGION_KEYED, "", 0), LEAF_EINVAL);
    CHECK_EQ_INT(zk_region_home_parse("sequence:", &k, &name, &len), LEAF_EINVAL);
    CHECK_EQ_INT(zk_region_home_parse("other:x", &k, &name, &len), LEAF_EINVAL);
    CHECK_EQ_INT(zk_region_home_parse("sequencex", &k, &name, &len), LEAF_EINVAL);
}

/* leafd.region.peers: name=host:port[/resp-host:port], comma-separated. */
static void test_peers(void) {
    struct zk_region_peer p[ZK_REGION_PEERS_MAX];
    int n = -1;
    char err[256];
    CHECK_EQ_INT(zk_region_peers_parse("", "eu", p, &n, err, sizeof(err)), LEAF_OK);
    CHECK_EQ_INT(n, 0);
    CHECK_EQ_INT(zk_region_peers_parse(" us=127.0.2.1:8080/127.0.2.1:6380 , ap=lb.ap:80", "eu", p,
                                       &n, err, sizeof(err)),
                 LEAF_OK);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_STR(p[0].name, "us");
    CHECK_EQ_STR(p[0].http, "127.0.2.1:8080");
    CHECK_EQ_STR(p[0].resp, "127.0.2.1:6380");
    CHECK_EQ_STR(p[1].name, "ap");
    CHECK_EQ_STR(p[1].http, "lb.ap:80");
    CHECK_EQ_STR(p[1].resp, "");
    CHECK_EQ_INT(zk_region_peers_parse("eu=h:1", "eu", p, &n, err, sizeof(err)), LEAF_EINVAL);
    CHECK(strstr(err, "own region eu") != NULL);
    CHECK_EQ_INT(zk_region_peers_parse("us=h:1,us=h:2", "eu", p, &n, err, sizeof(err)),
                 LEAF_EINVAL);
    CHECK(strstr(err, "twice") != NULL);
    const char *bad[] = {"us",      "us=",      "us=h",    "us=h:0",  "us=h:70000",    "=h:1",
                         "us=h:1/", "us=h:1/x", "u s=h:1", "us=h:1,", "us=h:1/h:2/h:3"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (zk_region_peers_parse(bad[i], "eu", p, &n, err, sizeof(err)) != LEAF_EINVAL) {
            fprintf(stderr, "peers \"%s\" was taken\n", bad[i]);
            CHECK(0);
        }
    }
}

int main(void) {
    TEST(test_paths);
    TEST(test_judge);
    TEST(test_name_ok);
    TEST(test_count_record);
    TEST(test_decide);
    TEST(test_cache_text);
    TEST(test_home_paths);
    TEST(test_peers);
    return unit_done();
}
