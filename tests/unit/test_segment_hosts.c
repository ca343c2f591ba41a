/*
 * Unit tests of the database host policy (segment/segment_hosts.c): which
 * host of leaf.jdbc.url to reserve on, when to move on, retry or fail back,
 * and how a Galera node's answers are judged; and the parsing of a URL that
 * lists several hosts (config_value_jdbc_split). No server, injected clock.
 */
#include "config_value.h"
#include "segment_hosts.h"
#include "unit.h"

static void three(struct segment_hosts *h) {
    segment_hosts_init(h);
    CHECK_EQ_INT(segment_hosts_add(h, "127.0.0.1", 3301), 0);
    CHECK_EQ_INT(segment_hosts_add(h, "127.0.0.1", 3302), 0);
    CHECK_EQ_INT(segment_hosts_add(h, "db3", 3303), 0);
}

static void test_first_healthy_in_order(void) {
    struct segment_hosts h;
    three(&h);
    CHECK_EQ_INT(segment_hosts_pick(&h, 0, NULL), 0);
    segment_hosts_up(&h, 0);
    CHECK_EQ_INT(h.current, 0);
    CHECK_EQ_INT(h.moves, 0);
    CHECK_EQ_INT(segment_hosts_failback(&h, 0), -1);
}

static void test_move_on_and_back_off(void) {
    struct segment_hosts h;
    three(&h);
    segment_hosts_up(&h, 0);
    segment_hosts_fail(&h, 0, SEGMENT_HOST_DOWN, 1000);
    CHECK_EQ_INT(h.current, -1);
    CHECK_EQ_INT(h.host[0].state, SEGMENT_HOST_DOWN);
    CHECK_EQ_INT(segment_hosts_pick(&h, 1000, NULL), 1); /* the next host, at once */
    segment_hosts_up(&h, 1);
    CHECK_EQ_INT(h.moves, 1);
    /* host 0 backs off 100 ms, then is worth a fail-back */
    CHECK_EQ_INT(segment_hosts_failback(&h, 1050), -1);
    CHECK_EQ_INT(segment_hosts_failback(&h, 1100), 0);
    /* it fails again: the backoff doubles, up to 5 s */
    segment_hosts_fail(&h, 0, SEGMENT_HOST_DOWN, 1100);
    CHECK_EQ_INT(segment_hosts_failback(&h, 1299), -1);
    CHECK_EQ_INT(segment_hosts_failback(&h, 1300), 0);
    for (int i = 0; i < 20; i++) {
        segment_hosts_fail(&h, 0, SEGMENT_HOST_DOWN, 0);
    }
    CHECK_EQ_INT(h.host[0].retry_at_ms, SEGMENT_HOSTS_BACKOFF_MAX_MS);
    CHECK_EQ_INT(h.current, 1); /* failing another host leaves the one in use alone */
    segment_hosts_up(&h, 0);
    CHECK_EQ_INT(h.moves, 2);
    CHECK_EQ_INT(h.host[0].backoff_ms, SEGMENT_HOSTS_BACKOFF_MIN_MS);
}

static void test_all_down_waits_for_the_soonest(void) {
    struct segment_hosts h;
    three(&h);
    segment_hosts_fail(&h, 0, SEGMENT_HOST_DOWN, 0);   /* 100 */
    segment_hosts_fail(&h, 1, SEGMENT_HOST_DOWN, -50); /* 50 */
    segment_hosts_fail(&h, 2, SEGMENT_HOST_READ_ONLY, 0);
    int64_t wait = -1;
    CHECK_EQ_INT(segment_hosts_pick(&h, 10, &wait), -1);
    CHECK_EQ_INT(wait, 40);
    CHECK_EQ_INT(segment_hosts_pick(&h, 50, NULL), 1);
    CHECK_EQ_INT(segment_hosts_pick(&h, 100, NULL), 0); /* list order, not recency */
    CHECK_EQ_STR(segment_host_state_name(h.host[2].state), "read_only");
}

static void test_classify(void) {
    enum segment_host_state s;
    /* Galera certification failure / deadlock: same host, then give up */
    CHECK_EQ_INT(segment_hosts_classify(1213, 0, 3, &s), SEGMENT_HOSTS_RETRY);
    CHECK_EQ_INT(segment_hosts_classify(1213, SEGMENT_HOSTS_RETRIES, 3, &s), SEGMENT_HOSTS_FAIL);
    /* WSREP has not yet prepared node: same host, then the next */
    CHECK_EQ_INT(segment_hosts_classify(1047, 1, 3, &s), SEGMENT_HOSTS_RETRY);
    CHECK_EQ_INT(segment_hosts_classify(1047, SEGMENT_HOSTS_RETRIES, 3, &s), SEGMENT_HOSTS_MOVE);
    CHECK_EQ_INT(s, SEGMENT_HOST_NOT_PRIMARY);
    CHECK_EQ_INT(segment_hosts_classify(1290, 0, 3, &s), SEGMENT_HOSTS_MOVE);
    CHECK_EQ_INT(s, SEGMENT_HOST_READ_ONLY);
    CHECK_EQ_INT(segment_hosts_classify(1836, 0, 3, &s), SEGMENT_HOSTS_MOVE);
    CHECK_EQ_INT(segment_hosts_classify(2013, 0, 3, &s), SEGMENT_HOSTS_MOVE); /* lost / timeout */
    CHECK_EQ_INT(s, SEGMENT_HOST_DOWN);
    CHECK_EQ_INT(segment_hosts_classify(2006, 0, 1, &s), SEGMENT_HOSTS_MOVE);
    CHECK_EQ_INT(segment_hosts_classify(1053, 0, 1, &s), SEGMENT_HOSTS_MOVE);
    CHECK_EQ_INT(segment_hosts_classify(1969, 0, 3, &s), SEGMENT_HOSTS_MOVE);
    CHECK_EQ_INT(segment_hosts_classify(1969, 0, 1, &s), SEGMENT_HOSTS_FAIL);
    CHECK_EQ_INT(segment_hosts_classify(1062, 0, 3, &s), SEGMENT_HOSTS_FAIL); /* duplicate key */
    CHECK_EQ_INT(segment_hosts_classify(1146, 0, 3, NULL), SEGMENT_HOSTS_FAIL);
}

static void test_judge(void) {
    CHECK_EQ_INT(segment_hosts_judge(0, 0, NULL, NULL, NULL), SEGMENT_HOST_UP);
    CHECK_EQ_INT(segment_hosts_judge(1, 0, NULL, NULL, NULL), SEGMENT_HOST_READ_ONLY);
    CHECK_EQ_INT(segment_hosts_judge(0, 1, "ON", "Primary", "Synced"), SEGMENT_HOST_UP);
    CHECK_EQ_INT(segment_hosts_judge(0, 1, "OFF", "non-Primary", "Initialized"),
                 SEGMENT_HOST_NOT_PRIMARY);
    CHECK_EQ_INT(segment_hosts_judge(0, 1, "ON", "Primary", "Donor/Desynced"), SEGMENT_HOST_UP);
    CHECK_EQ_INT(segment_hosts_judge(0, 1, "ON", "Primary", "Joined"), SEGMENT_HOST_NOT_PRIMARY);
    CHECK_EQ_INT(segment_hosts_judge(0, 1, "OFF", "Primary", "Joiner"), SEGMENT_HOST_NOT_PRIMARY);
    CHECK_EQ_INT(segment_hosts_judge(0, 1, "ON", NULL, NULL), SEGMENT_HOST_NOT_PRIMARY);
    CHECK_EQ_INT(segment_hosts_judge(1, 1, "ON", "Primary", "Synced"), SEGMENT_HOST_READ_ONLY);
}

static void test_add_limits(void) {
    struct segment_hosts h;
    segment_hosts_init(&h);
    for (int i = 0; i < SEGMENT_HOSTS_MAX; i++) {
        CHECK_EQ_INT(segment_hosts_add(&h, "h", 1 + i), 0);
    }
    CHECK_EQ_INT(segment_hosts_add(&h, "h", 99), -1);
}

static void test_url_with_several_hosts(void) {
    struct config_value_jdbc j;
    char why[256];
    CHECK_EQ_INT(config_value_jdbc_split("jdbc:mysql://a:3301,127.0.0.1:3302,c/leaf?x=1", &j, why,
                                         sizeof(why)),
                 LEAF_OK);
    CHECK_EQ_INT(j.nhosts, 3);
    CHECK_EQ_STR(j.hosts[0].host, "a");
    CHECK_EQ_INT(j.hosts[0].port, 3301);
    CHECK_EQ_STR(j.hosts[1].host, "127.0.0.1");
    CHECK_EQ_INT(j.hosts[1].port, 3302);
    CHECK_EQ_STR(j.hosts[2].host, "c");
    CHECK_EQ_INT(j.hosts[2].port, 3306);
    CHECK_EQ_STR(j.host, "a");
    CHECK_EQ_INT(j.port, 3301);
    CHECK_EQ_STR(j.db, "leaf");
    CHECK_EQ_INT(config_value_jdbc_split("jdbc:mysql://db/leaf", &j, why, sizeof(why)), LEAF_OK);
    CHECK_EQ_INT(j.nhosts, 1);
    CHECK_EQ_INT(j.port, 3306);
    CHECK_EQ_INT(config_value_jdbc_split("jdbc:mysql://a:1,/leaf", &j, why, sizeof(why)),
                 LEAF_EINVAL);
    CHECK_EQ_INT(config_value_jdbc_split("jdbc:mysql://a:1,b:0/leaf", &j, why, sizeof(why)),
                 LEAF_EINVAL);
    CHECK_EQ_INT(
        config_value_jdbc_split("jdbc:mysql://a,b,c,d,e,f,g,h,i/leaf", &j, why, sizeof(why)),
        LEAF_EINVAL);
    CHECK(strstr(why, "at most 8 hosts") != NULL);
}

int main(void) {
    TEST(test_first_healthy_in_order);
    TEST(test_move_on_and_back_off);
    TEST(test_all_down_waits_for_the_soonest);
    TEST(test_classify);
    TEST(test_judge);
    TEST(test_add_limits);
    TEST(test_url_with_several_hosts);
    return unit_done();
}
