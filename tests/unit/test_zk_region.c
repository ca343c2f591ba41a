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

int main(void) {
    TEST(test_paths);
    TEST(test_judge);
    TEST(test_name_ok);
    TEST(test_count_record);
    TEST(test_decide);
    TEST(test_cache_text);
    return unit_done();
}
