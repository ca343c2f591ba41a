/* The pure cores of docs/IDENTITY.md: the cache's owner fields, the identity lock,
 * the cluster marker, the ID shape, Leaf's layout, the median + ZooKeeper clock witness, and
 * the data-dir lock (src/base). */
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dirlock.h"
#include "unit.h"
#include "zk_clock.h"
#include "zk_compat.h"
#include "zk_identity.h"
#include "zk_lease.h"
#include "zk_marker.h"
#include "zk_record.h"
#include "zk_shape.h"

/* ----- cache ----- */

static void test_cache_full_round_trip(void) {
    struct zk_cache_data c = {7, 1795335806892LL}, p;
    struct zk_cache_owner o, q;
    memset(&o, 0, sizeof(o));
    snprintf(o.identity, sizeof(o.identity), "127.0.0.5:8080");
    snprintf(o.cluster, sizeof(o.cluster), "orders-eu");
    o.session_id = 0x1000a2b3c4d0005LL;
    snprintf(o.marker, sizeof(o.marker), "9f2c4e1a0b3d5e7f");
    o.generation = 17;
    snprintf(o.layout, sizeof(o.layout), "time:41,worker:10,sequence:12");
    o.epoch = 1288834974657LL;
    o.unit_ms = 1;
    char buf[ZK_CACHE_TEXT_MAX];
    size_t n = zk_record_format_cache_owned(&c, &o, buf, sizeof(buf));
    CHECK(n > 0);
    CHECK(strstr(buf, "identity=127.0.0.5:8080\n") != NULL);
    CHECK(strstr(buf, "session=0x1000a2b3c4d0005\n") != NULL);
    CHECK_EQ_INT(zk_record_parse_cache_owned(buf, n, &p, &q), LEAF_OK);
    CHECK_EQ_INT(p.worker_id, 7);
    CHECK_EQ_INT(p.timestamp, 1795335806892LL);
    CHECK_EQ_STR(q.identity, "127.0.0.5:8080");
    CHECK_EQ_STR(q.cluster, "orders-eu");
    CHECK_EQ_INT(q.session_id, 0x1000a2b3c4d0005LL);
    CHECK_EQ_STR(q.marker, "9f2c4e1a0b3d5e7f");
    CHECK_EQ_INT(q.generation, 17);
    CHECK_EQ_STR(q.layout, "time:41,worker:10,sequence:12");
    CHECK_EQ_INT(q.epoch, 1288834974657LL);
    CHECK_EQ_INT(q.unit_ms, 1);
    CHECK_EQ_INT(memcmp(&o, &q, sizeof(o)), 0);
    /* read without the owner fields (o NULL) */
    CHECK_EQ_INT(zk_record_parse_cache_owned(buf, n, &p, NULL), LEAF_OK);
    CHECK_EQ_INT(p.worker_id, 7);
    /* too small a buffer: 0, never a cut file */
    CHECK_EQ_INT(zk_record_format_cache_owned(&c, &o, buf, 100), 0);
    /* a text field outside its set is never written */
    snprintf(o.identity, sizeof(o.identity), "127.0.0.5:80\nworkerID=1");
    CHECK_EQ_INT(zk_record_format_cache_owned(&c, &o, buf, sizeof(buf)), 0);
    snprintf(o.identity, sizeof(o.identity), "127.0.0.5:80");
    o.unit_ms = 0;
    CHECK_EQ_INT(zk_record_format_cache_owned(&c, &o, buf, sizeof(buf)), 0);
}

/* No owner field known: the old two-key file, which reads with every owner field unknown. */
static void test_cache_old_format(void) {
    static const struct zk_cache_owner no_owner;
    struct zk_cache_data c = {3, 42}, p;
    struct zk_cache_owner q;
    char buf[ZK_CACHE_TEXT_MAX];
    size_t n = zk_record_format_cache_owned(&c, &no_owner, buf, sizeof(buf));
    CHECK(n > 0);
    CHECK(strstr(buf, "identity") == NULL && strstr(buf, "session") == NULL &&
          strstr(buf, "layout") == NULL);
    CHECK_EQ_INT(zk_record_parse_cache_owned(buf, n, &p, &q), LEAF_OK);
    CHECK_EQ_INT(p.worker_id, 3);
    CHECK_EQ_STR(q.identity, "");
    CHECK_EQ_INT(q.session_id, 0);
    CHECK_EQ_INT(q.generation, 0);
    CHECK_EQ_INT(zk_identity_cache_use(&p, &q, "127.0.0.1:8080", "it"), ZK_CACHE_UNKNOWN);
    const char *bad[] = {"session=12\n",   "session=0x\n",    "session=0x0\n",    "session=0xzz\n",
                         "generation=0\n", "generation=-1\n", "time.unit.ms=0\n", "identity=a b\n",
                         "cluster=a/b\n",  "marker=ABC\n",    "layout=Time:41\n", "epoch=x\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (zk_record_parse_cache_owned(bad[i], strlen(bad[i]), &p, &q) != LEAF_EINVAL ||
            zk_record_parse_cache_owned(bad[i], strlen(bad[i]), &p, NULL) != LEAF_EINVAL) {
            fprintf(stderr, "accepted: %s", bad[i]);
            CHECK(0);
        }
    }
    const char *spaced = "identity : 127.0.0.1:9\r\nsession=0X1F\n";
    CHECK_EQ_INT(zk_record_parse_cache_owned(spaced, strlen(spaced), &p, &q), LEAF_OK);
    CHECK_EQ_STR(q.identity, "127.0.0.1:9");
    CHECK_EQ_INT(q.session_id, 0x1f);
}

static void test_cache_use(void) {
    struct zk_cache_data c = {5, 100};
    struct zk_cache_owner o;
    memset(&o, 0, sizeof(o));
    snprintf(o.identity, sizeof(o.identity), "127.0.0.1:8080");
    snprintf(o.cluster, sizeof(o.cluster), "it");
    CHECK_EQ_INT(zk_identity_cache_use(&c, &o, "127.0.0.1:8080", "it"), ZK_CACHE_OWN);
    CHECK_EQ_INT(zk_identity_cache_use(&c, &o, "127.0.0.2:8080", "it"), ZK_CACHE_FOREIGN);
    CHECK_EQ_INT(zk_identity_cache_use(&c, &o, "127.0.0.1:8080", "other"), ZK_CACHE_FOREIGN);
    char msg[ZK_IDENTITY_MESSAGE_MAX];
    zk_identity_cache_message(&o, "/d/it/8080/workerID.properties", "127.0.0.2:8080", "it", msg,
                              sizeof(msg));
    CHECK(strstr(msg, "belongs to identity 127.0.0.1:8080") != NULL);
    CHECK(strstr(msg, "127.0.0.2:8080") != NULL);
    o.cluster[0] = '\0';
    CHECK_EQ_INT(zk_identity_cache_use(&c, &o, "127.0.0.1:8080", "it"), ZK_CACHE_UNKNOWN);
    CHECK_EQ_INT(zk_identity_cache_use(&c, &o, "127.0.0.2:8080", "it"), ZK_CACHE_FOREIGN);
    c.worker_id = -1;
    CHECK_EQ_INT(zk_identity_cache_use(&c, &o, "127.0.0.1:8080", "it"), ZK_CACHE_NONE);
}

/* ----- identity lock ----- */

static void test_identity_lock(void) {
    struct zk_identity_input in = {0, 0, 0x10, 0x05, 1000, -1, 10000, 0, 0, -1, -1, 0};
    struct zk_identity_decision d = zk_identity_decide(&in);
    CHECK_EQ_INT(d.verdict, ZK_IDENTITY_CREATE);
    in.exists = 1;
    in.owner_session = 0x10;
    CHECK_EQ_INT(zk_identity_decide(&in).verdict, ZK_IDENTITY_HELD);
    in.owner_session = 0x05; /* our previous incarnation, killed: no wait */
    CHECK_EQ_INT(zk_identity_decide(&in).verdict, ZK_IDENTITY_TAKEOVER);
    in.owner_session = 0x77; /* a twin */
    d = zk_identity_decide(&in);
    CHECK_EQ_INT(d.verdict, ZK_IDENTITY_WAIT);
    CHECK_EQ_INT(d.deadline_ms, 1000 + 10000 + ZK_IDENTITY_GRACE_MS);
    CHECK_EQ_INT(d.wait_ms, 12000);
    in.wait_started_ms = 1000;
    in.now_ms = 12999;
    d = zk_identity_decide(&in);
    CHECK_EQ_INT(d.verdict, ZK_IDENTITY_WAIT);
    CHECK_EQ_INT(d.wait_ms, 1);
    in.now_ms = 13000;
    CHECK_EQ_INT(zk_identity_decide(&in).verdict, ZK_IDENTITY_REFUSE);
    /* no recorded session: a znode of session 0 (persistent, not ephemeral) is never ours */
    in.recorded_session = 0;
    in.owner_session = 0;
    in.own_session = 0x10;
    CHECK_EQ_INT(zk_identity_decide(&in).verdict, ZK_IDENTITY_REFUSE);
    char msg[ZK_IDENTITY_MESSAGE_MAX];
    zk_identity_message("127.0.0.1:8080", "/snowflake/it/leaf_temporary/127.0.0.1:8080", 0x77,
                        12000, msg, sizeof(msg));
    CHECK(strstr(msg, "identity 127.0.0.1:8080") != NULL);
    CHECK(strstr(msg, "leafd.snowflake.advertise.ip") != NULL);
    CHECK(strstr(msg, "leaf.snowflake.port") != NULL);
    CHECK(strstr(msg, "0x77") != NULL);
}

/*
 * A named identity's wait is longer (max_wait_ms): the holder may be a pod whose container
 * still stops (a force-deleted pod) when the new one first looks, and its session then takes a
 * session timeout more to expire (docs/IDENTITY.md, "Taking a name over").
 */
static void test_identity_lock_named_wait(void) {
    struct zk_identity_input in = {1, 0x77, 0x10, 0, 1000, 1000, 10000, 0, 0, -1, -1, 0};
    in.max_wait_ms = 2 * 10000 + ZK_IDENTITY_GRACE_MS;
    in.now_ms = 13000; /* past the ip:port bound */
    struct zk_identity_decision d = zk_identity_decide(&in);
    CHECK_EQ_INT(d.verdict, ZK_IDENTITY_WAIT);
    CHECK_EQ_INT(d.deadline_ms, 1000 + 22000);
    in.now_ms = 23000;
    CHECK_EQ_INT(zk_identity_decide(&in).verdict, ZK_IDENTITY_REFUSE);
    in.max_wait_ms = 0; /* ip:port: the session timeout + 2 s */
    in.now_ms = 13000;
    CHECK_EQ_INT(zk_identity_decide(&in).verdict, ZK_IDENTITY_REFUSE);
}

/* An older leafd recorded no session: its killed process's znode is told apart from a twin's
 * by the data dir's lock, whose cache it is, and the cache's write after the znode's creation. */
static void test_identity_lock_older_cache(void) {
    struct zk_identity_input in = {1, 0x77, 0x10, 0, 1000, -1, 10000, 0, 0, -1, -1, 0};
    in.dir_locked = 1;
    in.cache_ours = 1;
    in.cache_written_ms = 50000;
    in.owner_created_ms = 40000; /* created, then the cache written 10 s later: ours */
    CHECK_EQ_INT(zk_identity_decide(&in).verdict, ZK_IDENTITY_TAKEOVER);
    in.owner_created_ms = 50000 - ZK_IDENTITY_CREATED_MARGIN_MS; /* within the clock's error */
    CHECK_EQ_INT(zk_identity_decide(&in).verdict, ZK_IDENTITY_WAIT);
    in.owner_created_ms = 50200; /* created after this data dir's last write: a twin */
    CHECK_EQ_INT(zk_identity_decide(&in).verdict, ZK_IDENTITY_WAIT);
    in.owner_created_ms = 40000;
    in.recorded_session = 0x05; /* the cache records another session: a twin */
    CHECK_EQ_INT(zk_identity_decide(&in).verdict, ZK_IDENTITY_WAIT);
    in.recorded_session = 0;
    in.dir_locked = 0;
    CHECK_EQ_INT(zk_identity_decide(&in).verdict, ZK_IDENTITY_WAIT);
    in.dir_locked = 1;
    in.cache_ours = 0; /* no cache of this identity (a fresh data dir, a foreign cache) */
    CHECK_EQ_INT(zk_identity_decide(&in).verdict, ZK_IDENTITY_WAIT);
    in.cache_ours = 1;
    in.owner_created_ms = -1; /* ZooKeeper's clock offset unknown */
    CHECK_EQ_INT(zk_identity_decide(&in).verdict, ZK_IDENTITY_WAIT);
    in.owner_created_ms = 40000;
    in.cache_written_ms = -1;
    CHECK_EQ_INT(zk_identity_decide(&in).verdict, ZK_IDENTITY_WAIT);
    in.cache_written_ms = 50000;
    in.owner_session = 0; /* a persistent znode is never a process's */
    CHECK_EQ_INT(zk_identity_decide(&in).verdict, ZK_IDENTITY_WAIT);
}

/* ----- cluster marker ----- */

static void test_marker_record(void) {
    struct zk_marker m = {"", 0}, p;
    zk_marker_new_id(0x9f2c4e1a0b3d5e7fULL, m.id);
    CHECK_EQ_STR(m.id, "9f2c4e1a0b3d5e7f");
    zk_marker_new_id(1, p.id);
    CHECK_EQ_STR(p.id, "0000000000000001");
    char buf[128];
    CHECK_EQ_INT(zk_marker_format(&m, buf, sizeof(buf)), 0); /* generation 0 is not a marker */
    m.generation = 3;
    size_t n = zk_marker_format(&m, buf, sizeof(buf));
    CHECK_EQ_STR(buf, "{\"id\":\"9f2c4e1a0b3d5e7f\",\"generation\":3}");
    CHECK_EQ_INT(zk_marker_parse(buf, n, &p), LEAF_OK);
    CHECK_EQ_STR(p.id, m.id);
    CHECK_EQ_INT(p.generation, 3);
    const char *bad[] = {"",
                         "{}",
                         "{\"id\":\"XY\",\"generation\":1}",
                         "{\"id\":\"ab\",\"generation\":0}",
                         "{\"id\":\"ab\",\"generation\":1.5}",
                         "{\"id\":\"ab\",\"generation\":\"2\"}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_EQ_INT(zk_marker_parse(bad[i], strlen(bad[i]), &p), LEAF_EINVAL);
    }
}

static void test_marker_decide(void) {
    struct zk_marker zk = {"aa", 5}, local = {"aa", 5}, none = {"", 0}, other = {"bb", 9};
    struct zk_marker_decision d = zk_marker_decide(NULL, &none, "cc");
    CHECK_EQ_INT(d.verdict, ZK_MARKER_CREATE);
    CHECK_EQ_STR(d.write.id, "cc");
    CHECK_EQ_INT(d.write.generation, 1);
    d = zk_marker_decide(NULL, NULL, "cc");
    CHECK_EQ_INT(d.verdict, ZK_MARKER_CREATE);
    d = zk_marker_decide(&zk, &none, "cc");
    CHECK_EQ_INT(d.verdict, ZK_MARKER_ADOPT);
    CHECK_EQ_STR(d.write.id, "aa");
    CHECK_EQ_INT(d.write.generation, 6);
    d = zk_marker_decide(&zk, &local, "cc");
    CHECK_EQ_INT(d.verdict, ZK_MARKER_OK);
    CHECK_EQ_INT(d.write.generation, 6);
    zk.generation = 9; /* other nodes started since: fine */
    CHECK_EQ_INT(zk_marker_decide(&zk, &local, "cc").verdict, ZK_MARKER_OK);
    zk.generation = 4; /* restored from an older snapshot */
    d = zk_marker_decide(&zk, &local, "cc");
    CHECK_EQ_INT(d.verdict, ZK_MARKER_BEHIND);
    CHECK_EQ_INT(d.write.generation, 0);
    d = zk_marker_decide(NULL, &local, "cc"); /* emptied, deleteall */
    CHECK_EQ_INT(d.verdict, ZK_MARKER_LOST);
    d = zk_marker_decide(&other, &local, "cc"); /* emptied, then a new node created a marker */
    CHECK_EQ_INT(d.verdict, ZK_MARKER_LOST);
    char msg[ZK_MARKER_MESSAGE_MAX];
    zk_marker_message(&d, &other, &local, "/snowflake/it/leafd_marker", "/d/it/8080", msg,
                      sizeof(msg));
    CHECK(strstr(msg, "lost the cluster's tree") != NULL);
    CHECK(strstr(msg, "docs/OPERATIONS.md") != NULL);
    CHECK(strstr(msg, "/d/it/8080") != NULL);
    d = zk_marker_decide(&zk, &local, "cc");
    zk_marker_message(&d, &zk, &local, "/snowflake/it/leafd_marker", "/d", msg, sizeof(msg));
    CHECK(strstr(msg, "older state") != NULL);
    CHECK(strstr(msg, "generation 4") != NULL && strstr(msg, "generation 5") != NULL);
}

/* ----- ID shape ----- */

static void test_shape(void) {
    struct zk_shape s = {"time:41,worker:10,sequence:12", 1288834974657LL, 1}, p;
    char buf[256];
    size_t n = zk_shape_format(&s, buf, sizeof(buf));
    CHECK_EQ_STR(buf, "{\"layout\":\"time:41,worker:10,sequence:12\",\"epoch\":1288834974657,"
                      "\"time_unit_ms\":1}");
    CHECK_EQ_INT(zk_shape_parse(buf, n, &p), LEAF_OK);
    CHECK(zk_shape_equal(&s, &p));
    const char *bad[] = {"",
                         "[]",
                         "{\"layout\":\"\",\"epoch\":1,\"time_unit_ms\":1}",
                         "{\"layout\":\"x\",\"epoch\":-1,\"time_unit_ms\":1}",
                         "{\"layout\":\"x\",\"epoch\":1,\"time_unit_ms\":0}",
                         "{\"layout\":\"x\",\"epoch\":1}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        CHECK_EQ_INT(zk_shape_parse(bad[i], strlen(bad[i]), &p), LEAF_EINVAL);
    }
    struct zk_shape mine = s;
    mine.epoch = 1409529600000LL;
    CHECK(!zk_shape_equal(&s, &mine));
    char msg[ZK_SHAPE_MESSAGE_MAX];
    zk_shape_mismatch(&s, &mine, "/snowflake/it/leafd_shape", msg, sizeof(msg));
    CHECK(strstr(msg, "epoch 1288834974657") != NULL);
    CHECK(strstr(msg, "epoch 1409529600000") != NULL);
    CHECK(strstr(msg, "/snowflake/it/leafd_shape") != NULL);
    CHECK(strstr(msg, "configured with epoch 1409529600000;") != NULL); /* only what differs */
    snprintf(mine.layout, sizeof(mine.layout), "time:39,sequence:8,worker:16");
    mine.unit_ms = 10;
    zk_shape_mismatch(&s, &mine, "/p", msg, sizeof(msg));
    CHECK(strstr(msg, "configured with layout time:39,sequence:8,worker:16, epoch 1409529600000, "
                      "time unit 10 ms;") != NULL);
}

/* The stored-time check compares the IDs' time field when the epoch or unit changed. */
static void test_shape_floor(void) {
    struct zk_shape old = {"time:41,worker:10,sequence:12", 1000, 1}, mine = old;
    CHECK_EQ_INT(zk_shape_floor_ms(&old, 5000, &mine), 5000);
    CHECK_EQ_INT(zk_shape_floor_ms(&old, -1, &mine), -1);
    /* epoch moved 3000 ms later: the same tick (4000) is 3000 ms later on the wall clock */
    mine.epoch = 4000;
    CHECK_EQ_INT(zk_shape_floor_ms(&old, 5000, &mine), 8000);
    /* epoch moved earlier: the floor is earlier too (ticks are larger for the same ms) */
    mine.epoch = 0;
    CHECK_EQ_INT(zk_shape_floor_ms(&old, 5000, &mine), 4000);
    /* unit 1 -> 10 ms: tick 4000 (old) -> IDs need tick >= 4001 at 10 ms: ms >= 40010 */
    mine.epoch = 0;
    mine.unit_ms = 10;
    CHECK_EQ_INT(zk_shape_floor_ms(&old, 5000, &mine), 40009);
    /* a stored time before the old epoch: anything from mine's epoch on */
    CHECK_EQ_INT(zk_shape_floor_ms(&old, 10, &mine), -1);
    mine.epoch = 100;
    CHECK_EQ_INT(zk_shape_floor_ms(&old, 10, &mine), 99);
}

/* ----- Leaf's layout ----- */

static void test_compat(void) {
    struct zk_layout l;
    CHECK_EQ_INT(zk_layout_init(&l, "leaf-it", "127.0.0.5", 8080), LEAF_OK);
    CHECK_EQ_INT(zk_compat_layout(&l), LEAF_OK);
    CHECK_EQ_STR(l.forever, "/snowflake/leaf-it/forever");
    CHECK_EQ_STR(l.forever_prefix, "/snowflake/leaf-it/forever/127.0.0.5:8080-");
    CHECK_EQ_STR(l.temporary, "/snowflake/leaf-it/leaf_temporary");
    char ip[64];
    int port = 0;
    int64_t seq = -1;
    CHECK_EQ_INT(zk_compat_parse_child("127.0.0.5:8080-0000000012", ip, sizeof(ip), &port, &seq),
                 LEAF_OK);
    CHECK_EQ_STR(ip, "127.0.0.5");
    CHECK_EQ_INT(port, 8080);
    CHECK_EQ_INT(seq, 12);
    CHECK_EQ_INT(zk_compat_parse_child("127.0.0.5:8080-12", ip, sizeof(ip), &port, &seq),
                 LEAF_EINVAL);
    CHECK_EQ_INT(zk_compat_parse_child("127.0.0.5-0000000001", ip, sizeof(ip), &port, &seq),
                 LEAF_EINVAL);
    CHECK_EQ_INT(zk_compat_parse_child(":8080-0000000001", ip, sizeof(ip), &port, &seq),
                 LEAF_EINVAL);
    const char *kids[] = {"127.0.0.6:8080-0000000000", "127.0.0.5:8080-0000000001"};
    CHECK_EQ_INT(zk_layout_find_own(kids, 2, l.identity), 1);
    CHECK_EQ_INT(zk_compat_decide(0, 0, 0), ZK_COMPAT_NATIVE);
    CHECK_EQ_INT(zk_compat_decide(0, 3, 0), ZK_COMPAT_NATIVE);
    CHECK_EQ_INT(zk_compat_decide(2, 0, 0), ZK_COMPAT_REFUSE_LEAF);
    CHECK_EQ_INT(zk_compat_decide(2, 0, 1), ZK_COMPAT_LEAF);
    CHECK_EQ_INT(zk_compat_decide(0, 0, 1), ZK_COMPAT_LEAF);
    CHECK_EQ_INT(zk_compat_decide(2, 1, 1), ZK_COMPAT_REFUSE_MIXED);
    char msg[ZK_COMPAT_MESSAGE_MAX];
    zk_compat_message(ZK_COMPAT_REFUSE_LEAF, "/snowflake/leaf-it/forever",
                      "/snowflake/leaf-it/leaf_forever", 2, msg, sizeof(msg));
    CHECK(strstr(msg, "/snowflake/leaf-it/forever has 2 node(s)") != NULL);
    CHECK(strstr(msg, "leafd.snowflake.leaf.compat") != NULL);
    CHECK(strstr(msg, "since 0.2.0") != NULL && strstr(msg, "CHANGELOG.md") != NULL);
    zk_compat_message(ZK_COMPAT_REFUSE_MIXED, "/a/forever", "/a/leaf_forever", 2, msg, sizeof(msg));
    CHECK(strstr(msg, "/a/leaf_forever") != NULL && strstr(msg, "/a/forever") != NULL);
    CHECK_EQ_INT(zk_compat_floor_ms(1000), 1000 + ZK_COMPAT_REPORT_MS);
    CHECK_EQ_INT(zk_compat_floor_ms(-1), -1);
}

/* ----- clock witnesses ----- */

static struct zk_clock_witness_decision witness(const int64_t *o, int n, int zk_known, int64_t zk) {
    struct zk_clock_witnesses w = {o, n, zk_known, zk, 5000};
    return zk_clock_witness(&w);
}

static void test_clock_witness(void) {
    const int64_t day = 86400000;
    /* no witness: nothing to compare with */
    CHECK_EQ_INT(witness(NULL, 0, 0, 0).verdict, ZK_CLOCK_OK);
    /* a node a day ahead, alone: ZooKeeper's mtime is the witness */
    struct zk_clock_witness_decision d = witness(NULL, 0, 1, -day);
    CHECK_EQ_INT(d.verdict, ZK_CLOCK_REFUSE);
    CHECK_EQ_INT(d.median_ms, -day);
    CHECK_EQ_INT(d.witnesses, 1);
    /* a correct node, one peer a day ahead: ZooKeeper sides with the node */
    int64_t one_wrong[] = {day};
    CHECK_EQ_INT(witness(one_wrong, 1, 1, 3).verdict, ZK_CLOCK_OK);
    CHECK_EQ_INT(witness(one_wrong, 1, 1, 3).median_ms, 3);
    /* ...but without ZooKeeper's witness the one peer decides (nothing else to go on) */
    CHECK_EQ_INT(witness(one_wrong, 1, 0, 0).verdict, ZK_CLOCK_REFUSE);
    /* two wrong nodes agreeing with each other, ZooKeeper not: refused */
    int64_t twin[] = {0};
    CHECK_EQ_INT(witness(twin, 1, 1, -day).verdict, ZK_CLOCK_REFUSE);
    /* the median, not the average: one peer far off among three does not move it */
    int64_t three[] = {10, -20, 50 * day};
    d = witness(three, 3, 0, 0);
    CHECK_EQ_INT(d.verdict, ZK_CLOCK_OK);
    CHECK_EQ_INT(d.median_ms, 10);
    d = witness(three, 3, 1, 15); /* even: the middle value nearer ZooKeeper's */
    CHECK_EQ_INT(d.median_ms, 15);
    CHECK_EQ_INT(d.witnesses, 4);
    /* the node itself off: every witness says so */
    int64_t behind[] = {day, day + 5, day - 7};
    d = witness(behind, 3, 1, day + 1);
    CHECK_EQ_INT(d.verdict, ZK_CLOCK_REFUSE);
    struct zk_clock_witnesses w = {behind, 3, 1, day + 1, 5000};
    char msg[512];
    zk_clock_witness_message(&d, &w, "/snowflake/it/leaf_temporary", msg, sizeof(msg));
    CHECK(strstr(msg, "refusing to start") != NULL && strstr(msg, "behind") != NULL);
    CHECK(strstr(msg, "median of 4 witness(es)") != NULL);
    CHECK(strstr(msg, "ZooKeeper's clock") != NULL);
    /* exactly at the limit passes */
    int64_t edge[] = {5000};
    CHECK_EQ_INT(witness(edge, 1, 0, 0).verdict, ZK_CLOCK_OK);
    int64_t over[] = {-5001};
    CHECK_EQ_INT(witness(over, 1, 0, 0).verdict, ZK_CLOCK_REFUSE);
}

/* ----- lease pool without other identities' forever worker IDs (finding 9) ----- */

static void test_lease_forever_blocks(void) {
    CHECK_EQ_INT(zk_lease_forever_blocks("127.0.0.1:8080-0000000003", "127.0.0.1:8080"), 0);
    CHECK_EQ_INT(zk_lease_forever_blocks("127.0.0.1:8081-0000000003", "127.0.0.1:8080"), 1);
    CHECK_EQ_INT(zk_lease_forever_blocks("127.0.0.1:808-0000000003", "127.0.0.1:8080"), 1);
    CHECK_EQ_INT(zk_lease_forever_blocks("junk", "127.0.0.1:8080"), 1);
}

/* ----- data-dir lock ----- */

static void test_dirlock(void) {
    char dir[] = "/tmp/leafd-dirlock-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char sub[128];
    snprintf(sub, sizeof(sub), "%s/a/b", dir);
    struct dirlock a, b;
    char err[512] = "";
    CHECK_EQ_INT(dirlock_acquire(&a, sub, err, sizeof(err)), LEAF_OK);
    CHECK(a.fd >= 0);
    /* a second open of the same file conflicts, as a second process would */
    CHECK_EQ_INT(dirlock_acquire(&b, sub, err, sizeof(err)), LEAF_EBUSY);
    CHECK_EQ_INT(b.fd, -1);
    CHECK(strstr(err, sub) != NULL);
    CHECK(strstr(err, "leafd.data.dir") != NULL);
    char pid[32];
    snprintf(pid, sizeof(pid), "pid %ld", (long)getpid());
    CHECK(strstr(err, pid) != NULL);
    /* An in-place upgrade's new process shares the open file and writes its pid into it; the
     * previous process takes it back when the new one ends before the hand-over. */
    char path[200], buf[32];
    snprintf(path, sizeof(path), "%s/%s", sub, DIRLOCK_FILE);
    CHECK(pwrite(a.fd, "99999\n", 6, 0) == 6);
    CHECK_EQ_INT(dirlock_reclaim(&a, sub, err, sizeof(err)), LEAF_OK);
    FILE *pf = fopen(path, "r");
    CHECK(pf != NULL && fgets(buf, sizeof(buf), pf) != NULL);
    CHECK_EQ_INT(strtol(buf, NULL, 10), (long)getpid());
    if (pf != NULL) {
        fclose(pf);
    }
    /* ... unless it was unlocked (through the shared file) and taken by another process */
    int shared = dup(a.fd);
    CHECK(shared >= 0 && flock(shared, LOCK_UN) == 0);
    close(shared);
    CHECK_EQ_INT(dirlock_acquire(&b, sub, err, sizeof(err)), LEAF_OK);
    CHECK_EQ_INT(dirlock_reclaim(&a, sub, err, sizeof(err)), LEAF_EBUSY);
    CHECK(strstr(err, pid) != NULL);
    dirlock_release(&b);
    CHECK_EQ_INT(dirlock_reclaim(&a, sub, err, sizeof(err)), LEAF_OK);
    dirlock_release(&a);
    dirlock_release(&a); /* safe twice */
    CHECK_EQ_INT(dirlock_acquire(&b, sub, err, sizeof(err)), LEAF_OK);
    dirlock_release(&b);
    /* a dir that cannot be made */
    char file[160];
    snprintf(file, sizeof(file), "%s/f", dir);
    FILE *f = fopen(file, "w");
    if (f) {
        fclose(f);
    }
    snprintf(sub, sizeof(sub), "%s/f/x", dir);
    CHECK_EQ_INT(dirlock_acquire(&b, sub, err, sizeof(err)), LEAF_ERR);
    CHECK(strstr(err, sub) != NULL);
    char cmd[200];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    CHECK_EQ_INT(system(cmd), 0);
}

int main(void) {
    TEST(test_cache_full_round_trip);
    TEST(test_cache_old_format);
    TEST(test_cache_use);
    TEST(test_identity_lock);
    TEST(test_identity_lock_named_wait);
    TEST(test_identity_lock_older_cache);
    TEST(test_marker_record);
    TEST(test_marker_decide);
    TEST(test_shape);
    TEST(test_shape_floor);
    TEST(test_compat);
    TEST(test_clock_witness);
    TEST(test_lease_forever_blocks);
    TEST(test_dirlock);
    return unit_done();
}
