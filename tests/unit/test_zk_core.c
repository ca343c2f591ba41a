/* The pure parts of zk/: layout and worker-ID parsing, znode and cache
 * records, and the start-up and peer clock decisions. */
#include "log.h"
#include "unit.h"
#include "zk_clock.h"
#include "zk_layout.h"
#include "zk_record.h"

static void test_layout_paths(void) {
    struct zk_layout l;
    CHECK_EQ_INT(zk_layout_init(&l, "my-leaf", "192.0.2.5", 8080), LEAF_OK);
    CHECK_EQ_STR(l.identity, "192.0.2.5:8080");
    CHECK_EQ_STR(l.forever, "/snowflake/my-leaf/leaf_forever");
    CHECK_EQ_STR(l.temporary, "/snowflake/my-leaf/leaf_temporary");
    CHECK_EQ_STR(l.ephemeral, "/snowflake/my-leaf/leaf_temporary/192.0.2.5:8080");
    CHECK_EQ_STR(l.forever_prefix, "/snowflake/my-leaf/leaf_forever/192.0.2.5:8080-");
    char longname[600];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    CHECK_EQ_INT(zk_layout_init(&l, longname, "192.0.2.5", 8080), LEAF_EINVAL);
}

/* A named identity (docs/IDENTITY.md, "Named identity"): the name replaces ip:port in the
 * identity's paths; its own leaf_forever child is told from a longer name's. */
static void test_layout_named(void) {
    struct zk_layout l;
    CHECK_EQ_INT(zk_layout_init(&l, "my-leaf", "192.0.2.5", 8080), LEAF_OK);
    CHECK_EQ_INT(zk_layout_name(&l, "leafd-0"), LEAF_OK);
    CHECK_EQ_STR(l.identity, "leafd-0");
    CHECK_EQ_STR(l.ephemeral, "/snowflake/my-leaf/leaf_temporary/leafd-0");
    CHECK_EQ_STR(l.forever_prefix, "/snowflake/my-leaf/leaf_forever/leafd-0-");
    const char *kids[] = {"leafd-0-1-0000000004", "leafd-0-0000000003", "leafd-0000000002"};
    CHECK_EQ_INT(zk_layout_find_own(kids, 3, "leafd-0"), 1);
    CHECK_EQ_INT(zk_layout_find_own(kids, 3, "leafd"), 2);
    char name63[64];
    memset(name63, 'n', sizeof(name63) - 1);
    name63[sizeof(name63) - 1] = '\0';
    CHECK_EQ_INT(zk_layout_name(&l, name63), LEAF_OK);
    CHECK_EQ_STR(l.identity, name63);
}

/* Leaf defect 3: the worker ID comes from the suffix after the LAST '-'. */
static void test_worker_id_parse(void) {
    int64_t id = -1;
    CHECK_EQ_INT(zk_layout_worker_id("/snowflake/a-b-c/leaf_forever/192.0.2.5:80-0000000007", &id),
                 LEAF_OK);
    CHECK_EQ_INT(id, 7);
    CHECK_EQ_INT(zk_layout_worker_id("192.0.2.5:80-0000001024", &id), LEAF_OK);
    CHECK_EQ_INT(id, 1024);
    CHECK_EQ_INT(zk_layout_worker_id("/snowflake/a-b/leaf_forever/x-", &id), LEAF_EINVAL);
    CHECK_EQ_INT(zk_layout_worker_id("192.0.2.5:80-000000001", &id), LEAF_EINVAL);
    CHECK_EQ_INT(zk_layout_worker_id("192.0.2.5:80-00000000012", &id), LEAF_EINVAL);
    CHECK_EQ_INT(zk_layout_worker_id("192.0.2.5:80-00000a0001", &id), LEAF_EINVAL);
    CHECK_EQ_INT(zk_layout_worker_id("-0000000001", &id), LEAF_EINVAL);
    /* a '-' in leaf.name but not in the node name: no suffix */
    CHECK_EQ_INT(zk_layout_worker_id("/snowflake/a-0000000001/leaf_forever/x", &id), LEAF_EINVAL);
}

static void test_find_own(void) {
    const char *kids[] = {"192.0.2.5:8080-0000000003", "192.0.2.5:80-0000000001",
                          "192.0.2.51:8080-0000000002", "192.0.2.5:8080-0000000009",
                          "192.0.2.5:8080-junk"};
    CHECK_EQ_INT(zk_layout_find_own(kids, 5, "192.0.2.5:8080"), 0);
    CHECK_EQ_INT(zk_layout_find_own(kids, 5, "192.0.2.5:80"), 1);
    CHECK_EQ_INT(zk_layout_find_own(kids, 5, "192.0.2.5:808"), -1);
    CHECK_EQ_INT(zk_layout_find_own(kids, 0, "192.0.2.5:8080"), -1);
    CHECK(!zk_layout_is_own_child("192.0.2.5:8080-0000000003x", "192.0.2.5:8080"));
}

static void test_peer_addr(void) {
    char ip[64];
    int port = 0;
    CHECK_EQ_INT(zk_layout_peer_addr("127.0.0.1:8080", ip, sizeof(ip), &port), LEAF_OK);
    CHECK_EQ_STR(ip, "127.0.0.1");
    CHECK_EQ_INT(port, 8080);
    CHECK_EQ_INT(zk_layout_peer_addr("127.0.0.1", ip, sizeof(ip), &port), LEAF_EINVAL);
    CHECK_EQ_INT(zk_layout_peer_addr("127.0.0.1:0", ip, sizeof(ip), &port), LEAF_EINVAL);
    CHECK_EQ_INT(zk_layout_peer_addr("127.0.0.1:99999", ip, sizeof(ip), &port), LEAF_EINVAL);
    CHECK_EQ_INT(zk_layout_peer_addr(":80", ip, sizeof(ip), &port), LEAF_EINVAL);
}

static void test_node_json(void) {
    struct zk_node_data d = {"192.0.2.5", 8080, 1795335806892LL}, p;
    char buf[256];
    size_t n = zk_record_format_node(&d, buf, sizeof(buf));
    CHECK_EQ_STR(buf, "{\"ip\":\"192.0.2.5\",\"port\":\"8080\",\"timestamp\":1795335806892}");
    CHECK_EQ_INT(zk_record_parse_node(buf, n, &p), LEAF_OK);
    CHECK_EQ_STR(p.ip, "192.0.2.5");
    CHECK_EQ_INT(p.port, 8080);
    CHECK_EQ_INT(p.timestamp, 1795335806892LL);
    const char *num = "{\"ip\":\"1.2.3.4\",\"port\":81,\"timestamp\":\"1700000000000\"}";
    CHECK_EQ_INT(zk_record_parse_node(num, strlen(num), &p), LEAF_OK);
    CHECK_EQ_INT(p.port, 81);
    CHECK_EQ_INT(p.timestamp, 1700000000000LL);
    CHECK_EQ_INT(zk_record_parse_node("{\"ip\":\"x\"}", 10, &p), LEAF_OK);
    CHECK_EQ_INT(p.timestamp, -1);
    CHECK_EQ_INT(zk_record_parse_node("", 0, &p), LEAF_EINVAL);
    CHECK_EQ_INT(zk_record_parse_node("[1]", 3, &p), LEAF_EINVAL);
    CHECK_EQ_INT(zk_record_format_node(&d, buf, 10), 0);
}

/* The cache file with no owner field known: the old two-key file, and Leaf's. */
static void test_cache_text(void) {
    static const struct zk_cache_owner no_owner;
    struct zk_cache_data c = {17, 1795335806892LL}, p;
    char buf[512];
    size_t n = zk_record_format_cache_owned(&c, &no_owner, buf, sizeof(buf));
    CHECK(n > 0);
    CHECK_EQ_INT(zk_record_parse_cache_owned(buf, n, &p, NULL), LEAF_OK);
    CHECK_EQ_INT(p.worker_id, 17);
    CHECK_EQ_INT(p.timestamp, 1795335806892LL);
    /* Leaf's own cache: a Java properties file with a date comment, no timestamp. */
    const char *leaf = "#Sun Nov 22 08:00:00 UTC 2026\r\nworkerID=3\r\n";
    CHECK_EQ_INT(zk_record_parse_cache_owned(leaf, strlen(leaf), &p, NULL), LEAF_OK);
    CHECK_EQ_INT(p.worker_id, 3);
    CHECK_EQ_INT(p.timestamp, -1);
    const char *spaced = "  workerID = 5 \n\n timestamp:42\nother=x\n";
    CHECK_EQ_INT(zk_record_parse_cache_owned(spaced, strlen(spaced), &p, NULL), LEAF_OK);
    CHECK_EQ_INT(p.worker_id, 5);
    CHECK_EQ_INT(p.timestamp, 42);
    CHECK_EQ_INT(zk_record_parse_cache_owned("workerID=x\n", 11, &p, NULL), LEAF_EINVAL);
    CHECK_EQ_INT(zk_record_parse_cache_owned("timestamp=-5\n", 13, &p, NULL), LEAF_EINVAL);
    CHECK_EQ_INT(zk_record_parse_cache_owned("", 0, &p, NULL), LEAF_OK);
    CHECK_EQ_INT(p.worker_id, -1);
}

/* Leaf defects 1, 4, 5: one decision over both stored times. */
static void test_startup_clock(void) {
    struct zk_clock_decision d = zk_clock_startup(1000, -1, -1, 500);
    CHECK_EQ_INT(d.verdict, ZK_CLOCK_OK);
    CHECK_EQ_INT(d.floor_ms, -1);
    d = zk_clock_startup(1000, 999, 100, 500);
    CHECK_EQ_INT(d.verdict, ZK_CLOCK_OK);
    CHECK_EQ_INT(d.floor_ms, 999);
    d = zk_clock_startup(1000, 1000, -1, 500); /* equal: IDs at 1000 may exist */
    CHECK_EQ_INT(d.verdict, ZK_CLOCK_WAIT);
    CHECK_EQ_INT(d.wait_ms, 1);
    d = zk_clock_startup(1000, 100, 1400, 500); /* the cache is ahead of ZooKeeper */
    CHECK_EQ_INT(d.verdict, ZK_CLOCK_WAIT);
    CHECK_EQ_INT(d.floor_ms, 1400);
    CHECK_EQ_INT(d.wait_ms, 401);
    d = zk_clock_startup(1000, 1600, 100, 500);
    CHECK_EQ_INT(d.verdict, ZK_CLOCK_REFUSE);
    CHECK_EQ_INT(d.wait_ms, 601);
    d = zk_clock_startup(1000, -1, 1499, 500);
    CHECK_EQ_INT(d.verdict, ZK_CLOCK_WAIT);
    d = zk_clock_startup(1000, -1, 1500, 500);
    CHECK_EQ_INT(d.verdict, ZK_CLOCK_REFUSE);
    d = zk_clock_startup(1000, 1001, -1, 0); /* no waiting allowed */
    CHECK_EQ_INT(d.verdict, ZK_CLOCK_REFUSE);
}

static void test_clock_offset(void) {
    CHECK_EQ_INT(zk_clock_offset(1000, 2050, 1100), 1000);
    CHECK_EQ_INT(zk_clock_offset(1000, 990, 1020), -20);
}

/* The client's own lines during an outage: the first, then a summary per 30 s. */
static void test_quiet(void) {
    struct log_quiet q = {0};
    uint64_t n = 99;
    int64_t t = 1000000;
    CHECK_EQ_INT(log_quiet_line(&q, t, "connect() failed", &n), LOG_QUIET_PASS);
    /* Five lines a second for a day would be 432,000 lines; here: 2 per minute. */
    int logged = 0, summaries = 0;
    uint64_t total = 0;
    for (int i = 1; i <= 5 * 60; i++) { /* one minute */
        enum log_quiet_action a = log_quiet_line(&q, t + (int64_t)i * 200, "failed again\n", &n);
        logged += a != LOG_QUIET_HOLD;
        if (a == LOG_QUIET_SUMMARY) {
            summaries++;
            total += n;
        }
    }
    CHECK_EQ_INT(logged, 2);
    CHECK_EQ_INT(summaries, 2);
    CHECK_EQ_INT(total, 300);
    CHECK_EQ_STR(q.last, "failed again");
    /* Connected again: nothing left over here (the last line made a summary). */
    CHECK_EQ_INT(log_quiet_reset(&q), 0);
    /* The next outage's first line passes again; what it held back is reported at the reset. */
    CHECK_EQ_INT(log_quiet_line(&q, t + 100000, "refused", &n), LOG_QUIET_PASS);
    CHECK_EQ_INT(log_quiet_line(&q, t + 100200, "refused", &n), LOG_QUIET_HOLD);
    CHECK_EQ_INT(log_quiet_line(&q, t + 100400, "refused", &n), LOG_QUIET_HOLD);
    CHECK_EQ_INT(log_quiet_reset(&q), 2);
    /* A clock stepped back restarts the window instead of passing lines. */
    CHECK_EQ_INT(log_quiet_line(&q, t, "x", &n), LOG_QUIET_PASS);
    CHECK_EQ_INT(log_quiet_line(&q, t - 50000, "x", &n), LOG_QUIET_HOLD);
    CHECK_EQ_INT(log_quiet_line(&q, t - 50000 + 29999, "x", &n), LOG_QUIET_HOLD);
    CHECK_EQ_INT(log_quiet_line(&q, t - 50000 + 30000, "x", &n), LOG_QUIET_SUMMARY);
    CHECK_EQ_INT(n, 3);
}

int main(void) {
    TEST(test_layout_paths);
    TEST(test_layout_named);
    TEST(test_worker_id_parse);
    TEST(test_find_own);
    TEST(test_peer_addr);
    TEST(test_node_json);
    TEST(test_cache_text);
    TEST(test_startup_clock);
    TEST(test_clock_offset);
    TEST(test_quiet);
    return unit_done();
}
